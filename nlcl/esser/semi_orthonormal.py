"""The largest entry of a random semi-orthonormal matrix (Esser et al. 2024, appendix, Lemma 2).

Lemma 2: let Q be a uniformly random h×d semi-orthonormal matrix (the first d columns of a Haar
random h×h orthogonal matrix). There are a constant L and a sequence ε_h → 0 (h → ∞) with

    P( max_{i,j} |Q_ij| ≥ L log h / √h ) ≤ ε_h.

The paper uses it to show that a wide network with orthonormal first layer stays close to its
linearisation (every pre-activation is O(log h/√h)). Each column of Q is uniform on the unit
sphere, so √h Q_ij is close to N(0, 1) and max_{i,j} |Q_ij| is close to the maximum of hd
independent |N(0, 1)|/√h, about √(2 log(hd))/√h: below L log h/√h for large h, by a factor that
shrinks like 1/√(log h). :func:`gaussian_max_median` gives that reference exactly (the median of the
maximum of hd independent |N(0, 1)|).

Chapter ``book/esser-grassmann.py`` (section "Lemma 2").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from scipy.stats import norm

from nlcl.core.validate import ParameterError, positive_int

__all__ = [
    "semi_orthonormal_cholqr",
    "max_abs_entries",
    "lemma2_scale",
    "gaussian_max_median",
    "loglog_slope",
]

#: Entries drawn at once (a chunk of draws is at most this many numbers: 32 MiB in float64).
CHUNK_ELEMENTS = 1 << 22


def _widths(widths: Sequence[int], d: int) -> list[int]:
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence) or not widths:
        raise ParameterError(f"widths={widths!r} must be a non-empty list of integers h >= d = {d}")
    out = [positive_int("widths[i]", h) for h in widths]
    bad = [h for h in out if h < max(d, 2)]
    if bad:
        raise ParameterError(
            f"widths={list(widths)!r}: every h must be >= max(d, 2) = {max(d, 2)}, got {bad}"
        )
    return out


def semi_orthonormal_cholqr(G: torch.Tensor) -> torch.Tensor:
    """The Q factor of G = QR with R's diagonal positive, by Cholesky QR: R = chol(GᵀG)ᵀ, Q = GR⁻¹.

    For Gaussian G (..., h, d) this is a uniformly random semi-orthonormal matrix, the same Q as
    :func:`nlcl.esser.constraints.random_semi_orthogonal` gives for the same G (the QR factorisation
    with a positive diagonal is unique), at O(hd²) cost per matrix instead of a batched
    Householder QR (about 100× faster for tall matrices on CPU). Gaussian G with h ≥ 4d is well
    conditioned, so one pass is accurate to ~1e-14 (``max_abs_entries`` reports QᵀQ − 𝕀).
    """
    if not isinstance(G, torch.Tensor) or G.dim() < 2 or G.shape[-2] < G.shape[-1]:
        raise ParameterError(f"G must be a tensor (..., h, d) with h >= d, got {getattr(G, 'shape', G)!r}")
    gram = G.transpose(-1, -2) @ G
    L, info = torch.linalg.cholesky_ex(gram)
    if bool((info != 0).any()):
        raise ParameterError("G has (numerically) dependent columns: Cholesky QR needs full column rank")
    return torch.linalg.solve_triangular(L, G.transpose(-1, -2), upper=False).transpose(-1, -2)


def max_abs_entries(
    widths: Sequence[int],
    d: int,
    draws: int,
    *,
    generator: torch.Generator | None = None,
    with_orthonormality: bool = False,
) -> np.ndarray | tuple[np.ndarray, float]:
    """max_{i,j} |Q_ij| of ``draws`` independent uniformly random h×d semi-orthonormal matrices, per h.

    The matrices are the QR factors (R's diagonal positive) of Gaussian matrices, by
    :func:`semi_orthonormal_cholqr`, drawn in batches of at most
    :data:`CHUNK_ELEMENTS` numbers. Lemma 2 of Esser et al. (2024) bounds this maximum by
    L log h/√h with probability → 1.

    Returns an array of shape (len(widths), draws); with ``with_orthonormality=True`` also the
    largest max_{k,l} |(QᵀQ − 𝕀)_kl| over all draws (a check of the sampler).
    """
    d = positive_int("d", d)
    draws = positive_int("draws", draws)
    hs = _widths(widths, d)
    if any(h < 4 * d for h in hs):
        raise ParameterError(
            f"widths={hs!r}: every h must be >= 4d = {4 * d} (Cholesky QR is accurate for tall G)"
        )
    out = np.empty((len(hs), draws))
    worst = 0.0
    eye = torch.eye(d, dtype=torch.float64)
    for k, h in enumerate(hs):
        per = max(1, CHUNK_ELEMENTS // (h * d))
        for start in range(0, draws, per):
            n = min(per, draws - start)
            Q = semi_orthonormal_cholqr(torch.randn((n, h, d), generator=generator, dtype=torch.float64))
            out[k, start : start + n] = Q.abs().amax(dim=(-2, -1)).numpy()
            if with_orthonormality:
                worst = max(worst, float((Q.transpose(-1, -2) @ Q - eye).abs().max()))
    return (out, worst) if with_orthonormality else out


def lemma2_scale(h: Any) -> np.ndarray:
    """log h/√h, the scale of Lemma 2's bound (natural log; h ≥ 2)."""
    h = np.asarray(h, dtype=float)
    if np.any(~np.isfinite(h)) or np.any(h < 2):
        raise ParameterError(f"h={h.tolist()!r} must be finite widths >= 2 (log h/√h is 0 at h = 1)")
    return np.log(h) / np.sqrt(h)


def gaussian_max_median(h: Any, d: int) -> np.ndarray:
    """Median of max of h·d independent |N(0, 1)|/√h: the reference for max |Q_ij| (√h Q_ij ≈ N(0, 1)).

    P(max ≤ x) = (2Φ(x) − 1)^{hd} = ½ gives x = Φ⁻¹(1 − (1 − 2^{−1/(hd)})/2); returns x/√h.
    """
    d = positive_int("d", d)
    h = np.asarray(h, dtype=float)
    if np.any(~np.isfinite(h)) or np.any(h < 1):
        raise ParameterError(f"h={h.tolist()!r} must be finite widths >= 1")
    tail = -np.expm1(-math.log(2.0) / (h * d)) / 2.0
    return norm.isf(tail) / np.sqrt(h)


def loglog_slope(x: Any, y: Any) -> float:
    """Least-squares slope of log y against log x (both positive, at least two distinct x)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or len(np.unique(x)) < 2:
        raise ParameterError(f"x {x.shape} and y {y.shape} must be equal 1-d arrays with >= 2 distinct x")
    if np.any(~(x > 0)) or np.any(~(y > 0)) or np.any(~np.isfinite(x)) or np.any(~np.isfinite(y)):
        raise ParameterError("x and y must be positive and finite for a log-log slope")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
