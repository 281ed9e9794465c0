"""The reconstructed data model and linear learners of Ren & Li (2023), Eqs. 1-2.

See :mod:`nlcl.renli.simulation` for the list of reconstructed choices (``ren-li-setup.md``).
Every tensor carries a leading *run* axis. Explained in the chapter ``book/renli-simulation.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from nlcl.core.validate import ParameterError, nonneg_float, positive_float, positive_int

_EPS = 1e-12

__all__ = [
    "MultimodalData",
    "init_learners",
    "make_data",
    "normalize_batch",
    "output_covariance",
    "representations",
    "signal_strengths",
]


def signal_strengths(r: int, kappa: float) -> torch.Tensor:
    """The inhomogeneous signal strengths ``σ_1..σ_r``, evenly spaced on ``[1, κ]`` (float64).

    Reconstructed choice for the diagonal of ``M_A = Q_A diag(σ_A)`` in Ren & Li, Eq. 1, whose
    condition number ``σ_max/σ_min`` is ``κ`` (chapter ``renli-simulation``).  ``r = 1`` gives
    ``[1]`` and requires ``κ = 1``.

    Raises
    ------
    ParameterError
        If ``r`` is not a positive integer, ``κ < 1``, or ``r = 1`` with ``κ ≠ 1``.
    """
    r = positive_int("r", r)
    kappa = positive_float("kappa", kappa)
    if kappa < 1.0:
        raise ParameterError(f"kappa={kappa!r} must be >= 1 (it is the condition number σ_max/σ_min)")
    if r == 1 and kappa != 1.0:
        raise ParameterError(f"kappa={kappa!r} must be 1 when r=1 (a single strength)")
    return torch.linspace(1.0, kappa, r, dtype=torch.float64)


@dataclass(frozen=True)
class MultimodalData:
    """A batch of ``R`` independent two-modality linear data models (Ren & Li, Eq. 1).

    Attributes
    ----------
    M_A, M_B : (R, d, r) signal maps ``Q diag(σ)``.
    H_A, H_B : (R, d, r_ξ) noise maps ``ν · (orthonormal columns ⟂ Q)``.
    sigma_A, sigma_B : (R, r) signal strengths (``σ_B`` a permutation of ``σ_A``).
    kappa : (R,) condition number of the signal of each run.
    seeds : (R,) seed of each run (its data model, initialization and batches).
    nu : noise scale ``ν``.

    Build it with :func:`make_data`; draw positive pairs with :meth:`sample`.  Chapter
    ``renli-simulation``.
    """

    M_A: torch.Tensor
    M_B: torch.Tensor
    H_A: torch.Tensor
    H_B: torch.Tensor
    sigma_A: torch.Tensor
    sigma_B: torch.Tensor
    kappa: torch.Tensor
    seeds: tuple[int, ...]
    nu: float
    generators: tuple[torch.Generator, ...] = field(repr=False, compare=False)

    @property
    def n_runs(self) -> int:
        """Number of runs ``R`` (independent data models)."""
        return int(self.M_A.shape[0])

    @property
    def d(self) -> int:
        """Input dimension ``d``."""
        return int(self.M_A.shape[1])

    @property
    def r(self) -> int:
        """Latent signal dimension ``r``."""
        return int(self.M_A.shape[2])

    @property
    def r_xi(self) -> int:
        """Latent noise dimension ``r_ξ``."""
        return int(self.H_A.shape[2])

    def to(self, device: torch.device | str) -> MultimodalData:
        """A copy with every tensor on ``device`` (the generators stay on the CPU)."""
        move = {
            k: getattr(self, k).to(device)
            for k in ("M_A", "M_B", "H_A", "H_B", "sigma_A", "sigma_B", "kappa")
        }
        return MultimodalData(**move, seeds=self.seeds, nu=self.nu, generators=self.generators)

    def sample_latents(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Draw ``z`` (R, n, r), ``ξ_A`` and ``ξ_B`` (R, n, r_ξ), uniform on ``{±1}``, on the CPU.

        Each run draws from its own generator (Ren & Li, Eq. 1: a positive pair shares ``z``,
        never ``ξ``).  Deterministic given the runs' seeds and the number of earlier draws.
        """
        n = positive_int("n", n)
        k = self.r + 2 * self.r_xi
        signs = (
            torch.stack([torch.randint(0, 2, (n, k), generator=g, dtype=torch.int8) for g in self.generators])
            .to(self.M_A.dtype)
            .mul_(2)
            .sub_(1)
        )
        return signs[..., : self.r], signs[..., self.r : self.r + self.r_xi], signs[..., self.r + self.r_xi :]

    def sample(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Draw ``n`` positive pairs per run: ``x_A, x_B`` (R, n, d) and their shared ``z`` (R, n, r).

        ``x_A = M_A z + H_A ξ_A`` and ``x_B = M_B z + H_B ξ_B`` (Ren & Li, Eq. 1), on the device
        of the data model.  Chapter ``renli-simulation``.
        """
        z, xi_a, xi_b = (t.to(self.M_A.device) for t in self.sample_latents(n))
        x_a = z @ self.M_A.transpose(1, 2) + xi_a @ self.H_A.transpose(1, 2)
        x_b = z @ self.M_B.transpose(1, 2) + xi_b @ self.H_B.transpose(1, 2)
        return x_a, x_b, z


def _broadcast_runs(name: str, values: float | Sequence[float], n: int) -> list:
    values = list(values) if isinstance(values, (list, tuple, np.ndarray, torch.Tensor)) else [values]
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise ParameterError(f"{name} has {len(values)} entries; expected 1 or {n} (one per run)")
    return values


def make_data(
    d: int,
    r: int,
    r_xi: int,
    kappa: float | Sequence[float],
    seeds: int | Sequence[int],
    *,
    nu: float = 0.3,
    dtype: torch.dtype = torch.float32,
) -> MultimodalData:
    """Build one data model per run (Ren & Li, Eq. 1, reconstructed; chapter ``renli-simulation``).

    ``seeds`` and ``kappa`` are broadcast against each other (one entry, or one per run).  Run ``i``
    seeds a generator with ``seeds[i]`` and draws, in this order: ``[Q_A, H_A-directions]`` as the
    Q factor of a Gaussian ``d × (r + r_ξ)`` matrix, the same for B, the permutation taking ``σ_A``
    to ``σ_B``.  The same generator later draws the initialization (:func:`init_learners`) and the
    batches (:meth:`MultimodalData.sample`).

    Raises
    ------
    ParameterError
        If a size is not a positive integer, ``d < r + r_ξ`` (no room for orthogonal noise
        directions), ``κ < 1``, ``ν < 0``, or ``kappa`` and ``seeds`` have incompatible lengths.
    """
    d, r, r_xi = positive_int("d", d), positive_int("r", r), positive_int("r_xi", r_xi)
    nu = nonneg_float("nu", nu)
    if d < r + r_xi:
        raise ParameterError(
            f"d={d} must be >= r + r_xi = {r + r_xi} (signal and noise directions are orthogonal)"
        )
    seed_list = list(seeds) if isinstance(seeds, (list, tuple, np.ndarray, range)) else [seeds]
    kappa_list = list(kappa) if isinstance(kappa, (list, tuple, np.ndarray)) else [kappa]
    n = max(len(seed_list), len(kappa_list))
    seed_list = [int(s) for s in _broadcast_runs("seeds", seed_list, n)]
    kappa_list = [float(k) for k in _broadcast_runs("kappa", kappa_list, n)]
    parts: dict[str, list[torch.Tensor]] = {k: [] for k in ("M_A", "M_B", "H_A", "H_B", "sigma_A", "sigma_B")}
    generators = []
    for seed, kap in zip(seed_list, kappa_list):
        if seed < 0:
            raise ParameterError(f"seeds contains {seed}; seeds must be integers >= 0")
        sigma_a = signal_strengths(r, kap)
        g = torch.Generator().manual_seed(seed)
        q_a, _ = torch.linalg.qr(torch.randn(d, r + r_xi, generator=g, dtype=torch.float64))
        q_b, _ = torch.linalg.qr(torch.randn(d, r + r_xi, generator=g, dtype=torch.float64))
        sigma_b = sigma_a[torch.randperm(r, generator=g)]
        parts["M_A"].append(q_a[:, :r] * sigma_a)
        parts["M_B"].append(q_b[:, :r] * sigma_b)
        parts["H_A"].append(nu * q_a[:, r:])
        parts["H_B"].append(nu * q_b[:, r:])
        parts["sigma_A"].append(sigma_a)
        parts["sigma_B"].append(sigma_b)
        generators.append(g)
    stacked = {k: torch.stack(v).to(dtype) for k, v in parts.items()}
    return MultimodalData(
        **stacked,
        kappa=torch.tensor(kappa_list, dtype=dtype),
        seeds=tuple(seed_list),
        nu=nu,
        generators=tuple(generators),
    )


def output_covariance(W: torch.Tensor, M: torch.Tensor, H: torch.Tensor) -> torch.Tensor:
    """Population covariance of the un-normalized outputs ``W x``: ``W (M Mᵀ + H Hᵀ) Wᵀ``.

    ``z`` and ``ξ`` are uniform on ``{±1}`` with identity covariance (Ren & Li, Eq. 1), so
    ``Cov(W x) = U Uᵀ + V Vᵀ`` with ``U = W M``, ``V = W H``.  The batch normalization divides
    ``W x`` by a scalar, which does not change any scale-free metric of this matrix
    (:func:`~nlcl.renli.metrics.stable_rank`).  Shapes: ``W`` (..., m, d), ``M`` (..., d, r), ``H`` (..., d, r_ξ) →
    (..., m, m).  Chapter ``renli-simulation``.
    """
    U, V = W @ M, W @ H
    return U @ U.transpose(-1, -2) + V @ V.transpose(-1, -2)


def init_learners(data: MultimodalData, width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Initial ``W_A, W_B`` (R, m, d) with i.i.d. ``N(0, 1/d)`` entries (Ren & Li, Sec. 3).

    Drawn from each run's generator (after its data model), on the data model's device.  Chapter
    ``renli-simulation``.
    """
    m = positive_int("width", width)
    d = data.d
    ws = [torch.randn(2, m, d, generator=g, dtype=torch.float64) / math.sqrt(d) for g in data.generators]
    w = torch.stack(ws).to(dtype=data.M_A.dtype, device=data.M_A.device)
    return w[:, 0].contiguous(), w[:, 1].contiguous()


def normalize_batch(h: torch.Tensor) -> torch.Tensor:
    """Batch-wise normalization to unit expected norm: ``h / sqrt(mean_batch ||h_i||²)``.

    ``h`` has shape (..., n, m) (n samples of width m); the scale is one scalar per leading index,
    shared by the whole batch, so ``mean_i ||out_i||² = 1`` (Ren & Li, Eq. 2, reconstructed: a
    batch-norm style normalization, not a per-sample one).  Chapter ``renli-simulation``.

    Raises
    ------
    ParameterError
        If ``h`` has fewer than two dimensions.
    """
    if h.dim() < 2:
        raise ParameterError(f"h has shape {tuple(h.shape)}; expected (..., n, m)")
    scale = h.pow(2).sum(-1).mean(-1, keepdim=True).add(_EPS).sqrt()
    return h / scale.unsqueeze(-1)


def representations(W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The normalized linear representations ``f(x) = W x / sqrt(mean_batch ||W x||²)``.

    ``W`` (R, m, d), ``x`` (R, n, d) → (R, n, m).  Ren & Li, Eq. 2; chapter ``renli-simulation``.
    """
    return normalize_batch(x @ W.transpose(-1, -2))
