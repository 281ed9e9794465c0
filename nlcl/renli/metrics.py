"""Alignment and balance metrics of Ren & Li (2023), Defs. 4.1-4.2 and Lemma 5.1 (reconstruction).

Explained in the chapters ``book/renli-simulation.py`` and ``book/renli-mnist-captions.py``.
"""

from __future__ import annotations

import torch

from nlcl.core.validate import ParameterError, positive_int
from nlcl.renli.losses import _check_pair

__all__ = [
    "METRICS",
    "alignment_score",
    "condition_number",
    "noise_to_signal",
    "relative_deviation",
    "stable_rank",
]


#: Metrics recorded by :func:`train`, in the order of Ren & Li, Fig. 1.
METRICS = ("alignment", "condition_number", "stable_rank", "noise_to_signal")


#: Small constant that keeps the batch normalization finite for an all-zero batch.


def alignment_score(f_a: torch.Tensor, f_b: torch.Tensor) -> torch.Tensor:
    """Fraction of (positive, negative) pairs with ``||f_A,i − f_B,i|| < ||f_A,i − f_B,j||``, ``j ≠ i``.

    Ren & Li, Def. 4.1 (reconstructed): the accuracy of telling the positive pair from a negative
    one by distance, anchored at modality A.  Identical representations of distinct points score 1;
    a constant representation scores 0 (ties count as failures).  ``f_a, f_b`` (..., n, m), ``n ≥ 2``
    → (...,).  Chapters ``renli-simulation``, ``renli-mnist-captions``.
    """
    _check_pair(f_a, f_b)
    n = f_a.shape[-2]
    if n < 2:
        raise ParameterError(f"the batch has n={n} pairs; the alignment score needs n >= 2")
    dist = torch.cdist(f_a, f_b)  # (..., n, n): dist[i, j] = ||f_A,i − f_B,j||
    pos = torch.diagonal(dist, dim1=-2, dim2=-1).unsqueeze(-1)
    wins = (pos < dist).to(f_a.dtype)
    off = ~torch.eye(n, dtype=torch.bool, device=f_a.device)
    return (wins * off).sum((-1, -2)) / (n * (n - 1))


def condition_number(U: torch.Tensor, k: int | None = None) -> torch.Tensor:
    """``σ_1 / σ_k`` of ``U`` (..., p, q); ``k`` defaults to ``min(p, q)`` (the plain condition number).

    For ``U_A = W_A M_A`` (m × r) this is the condition number tracked by Ren & Li, Lemma 5.1 /
    Fig. 1.  With ``k`` it is the "effective" condition number that skips singular values that
    should vanish (Ren & Li, after Def. 4.2), used for class-mean matrices in the chapter
    ``renli-mnist-captions``.  A rank-deficient ``U`` gives ``inf``.

    Raises
    ------
    ParameterError
        If ``U`` has fewer than two dimensions or ``k`` is outside ``1..min(p, q)``.
    """
    if U.dim() < 2:
        raise ParameterError(f"U has shape {tuple(U.shape)}; expected (..., p, q)")
    kmax = min(U.shape[-2], U.shape[-1])
    k = kmax if k is None else positive_int("k", k)
    if k > kmax:
        raise ParameterError(f"k={k} must be <= min(p, q) = {kmax}")
    s = torch.linalg.svdvals(U)
    return s[..., 0] / s[..., k - 1]


def stable_rank(cov: torch.Tensor) -> torch.Tensor:
    """Stable rank of a covariance matrix: ``srank(Σ) = tr Σ / λ_max(Σ)``.

    Ren & Li, Def. 4.2 (the balance score, reconstructed formula).  For ``Σ = F Fᵀ`` this equals the
    classical stable rank ``||F||_F² / ||F||_2²`` of the factor; it lies in ``[1, rank Σ]`` and equals
    ``k`` for ``k`` equal non-zero eigenvalues.  Because the non-zero spectrum of ``F Fᵀ`` and
    ``Fᵀ F`` coincide, the small Gram matrix may be passed instead of the large covariance.
    ``cov`` (..., p, p) symmetric PSD → (...,).  Chapters ``renli-simulation``,
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If ``cov`` is not square.
    """
    if cov.dim() < 2 or cov.shape[-1] != cov.shape[-2]:
        raise ParameterError(f"cov has shape {tuple(cov.shape)}; expected a square (..., p, p) matrix")
    eig = torch.linalg.eigvalsh(cov)
    return torch.diagonal(cov, dim1=-2, dim2=-1).sum(-1) / eig[..., -1]


def noise_to_signal(W: torch.Tensor, M: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
    """Noise-to-signal ratio ``||W H||_F / ||W M||_F`` of a linear learner (Ren & Li, Lemma 5.1).

    ``W`` (..., m, d), ``M`` (..., d, r), ``H`` (..., d, r_ξ) → (...,).  Chapter ``renli-simulation``.
    """
    return torch.linalg.matrix_norm(W @ H) / torch.linalg.matrix_norm(W @ M)


def relative_deviation(W: torch.Tensor, W_ref: torch.Tensor, W_0: torch.Tensor) -> torch.Tensor:
    """``||W − W_ref||_F / ||W_ref − W_0||_F``: distance between two trajectories from a common start.

    Measures how far a run ``W`` strays from a reference run ``W_ref`` relative to how far the
    reference moved from the shared initialization ``W_0`` (used for "stage 1 ≈ non-contrastive",
    Ren & Li, Sec. 5.3 / Lemma B.9; chapter ``renli-simulation``).  Shapes (..., m, d) → (...,).
    """
    return torch.linalg.matrix_norm(W - W_ref) / torch.linalg.matrix_norm(W_ref - W_0)
