"""Multimodal contrastive learning with linear learners (Ren & Li 2023): alignment vs balance.

**This module implements a reconstruction.**  The stored copy of Ren & Li (2023) lost every formula;
``shared/papers/ren-li-setup.md`` reconstructs the setup from the paper's prose.  The reconstructed
choices (each listed in the chapter ``book/renli-simulation.py``) are:

* Data model (Ren & Li, Eq. 1): ``x_A = M_A z + H_A ξ_A``, ``x_B = M_B z + H_B ξ_B`` in R^d, with
  ``z ∈ {±1}^r`` shared by a positive pair and independent noises ``ξ_A, ξ_B ∈ {±1}^{r_ξ}``, all
  uniform.  ``M_A = Q_A diag(σ_A)`` with orthonormal ``Q_A``; the signal strengths ``σ_A`` are evenly
  spaced on ``[1, κ]`` (:func:`signal_strengths`); ``σ_B`` is a random permutation of ``σ_A``;
  ``H_A = ν · (orthonormal columns orthogonal to Q_A)``, likewise for B with its own ``Q_B``.
* Learners (Ren & Li, Eq. 2): ``f_A(x) = W_A x / sqrt(mean_batch ||W_A x||²)``, ``W_A ∈ R^{m×d}``
  with i.i.d. ``N(0, 1/d)`` entries at initialization (batch-wise normalization to unit expected
  norm, :func:`normalize_batch`).
* Losses (Ren & Li, Eqs. 3-4): :func:`non_contrastive_loss` and :func:`contrastive_loss` (strength
  ``λ`` of negative pairs, inverse temperature ``β``), trained by plain SGD on fresh batches with a
  two-stage ``β`` schedule (:func:`beta_schedule`).
* Metrics (Ren & Li, Defs. 4.1-4.2 and Lemma 5.1): :func:`alignment_score`,
  :func:`condition_number` of ``U_A = W_A M_A``, :func:`stable_rank` ``= tr Σ / λ_max(Σ)`` of the
  output covariance, and :func:`noise_to_signal` ``= ||W_A H_A||_F / ||W_A M_A||_F``.

Every tensor carries a leading *run* axis: one run is one (seed, κ, λ) configuration, and
:func:`train` advances all runs at once (vectorized over seeds and configurations).  Each run draws
its data model, its initialization and its batches from its own generator seeded with the run's
seed, so a run's trajectory does not depend on which other runs share the batch; in particular a
non-contrastive run (``λ = 0``) and a contrastive run with the same seed and ``κ`` share the data
model, the initialization and every batch.

Explained in the chapters ``book/renli-simulation.py`` (results 1-3) and
``book/renli-mnist-captions.py`` (the real-data analog, which reuses the losses and metrics).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from .validate import ParameterError, nonneg_float, positive_float, positive_int

__all__ = [
    "METRICS",
    "MultimodalData",
    "TrainingHistory",
    "alignment_score",
    "beta_schedule",
    "condition_number",
    "contrastive_loss",
    "init_learners",
    "make_data",
    "non_contrastive_loss",
    "noise_to_signal",
    "normalize_batch",
    "output_covariance",
    "relative_deviation",
    "representations",
    "signal_strengths",
    "stable_rank",
    "train",
    "train_configs",
    "HeadsResult",
    "MLPHeads",
    "class_means",
    "empirical_covariance",
    "fit_pixel_pca",
    "pixel_features",
    "train_heads",
    "zero_shot_accuracy",
]

#: Metrics recorded by :func:`train`, in the order of Ren & Li, Fig. 1.
METRICS = ("alignment", "condition_number", "stable_rank", "noise_to_signal")

#: Small constant that keeps the batch normalization finite for an all-zero batch.
_EPS = 1e-12


# --------------------------------------------------------------------------------------------
# Data model (Ren & Li, Eq. 1)
# --------------------------------------------------------------------------------------------


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
        move = {k: getattr(self, k).to(device) for k in ("M_A", "M_B", "H_A", "H_B", "sigma_A", "sigma_B", "kappa")}
        return MultimodalData(**move, seeds=self.seeds, nu=self.nu, generators=self.generators)

    def sample_latents(self, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Draw ``z`` (R, n, r), ``ξ_A`` and ``ξ_B`` (R, n, r_ξ), uniform on ``{±1}``, on the CPU.

        Each run draws from its own generator (Ren & Li, Eq. 1: a positive pair shares ``z``,
        never ``ξ``).  Deterministic given the runs' seeds and the number of earlier draws.
        """
        n = positive_int("n", n)
        k = self.r + 2 * self.r_xi
        signs = torch.stack(
            [torch.randint(0, 2, (n, k), generator=g, dtype=torch.int8) for g in self.generators]
        ).to(self.M_A.dtype).mul_(2).sub_(1)
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
        raise ParameterError(f"d={d} must be >= r + r_xi = {r + r_xi} (signal and noise directions are orthogonal)")
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
    (:func:`stable_rank`).  Shapes: ``W`` (..., m, d), ``M`` (..., d, r), ``H`` (..., d, r_ξ) →
    (..., m, m).  Chapter ``renli-simulation``.
    """
    U, V = W @ M, W @ H
    return U @ U.transpose(-1, -2) + V @ V.transpose(-1, -2)


# --------------------------------------------------------------------------------------------
# Learners (Ren & Li, Eq. 2)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Losses (Ren & Li, Eqs. 3-4)
# --------------------------------------------------------------------------------------------


def _check_pair(f_a: torch.Tensor, f_b: torch.Tensor) -> None:
    if f_a.shape != f_b.shape or f_a.dim() < 2:
        raise ParameterError(
            f"f_a has shape {tuple(f_a.shape)} and f_b {tuple(f_b.shape)}; expected equal shapes (..., n, m)"
        )


def non_contrastive_loss(f_a: torch.Tensor, f_b: torch.Tensor) -> torch.Tensor:
    """``L_NC = −mean_i ⟨f_A(x_A,i), f_B(x_B,i)⟩`` over the positive pairs of a batch (Ren & Li, Eq. 4).

    ``f_a, f_b`` (..., n, m) → (...,).  Chapters ``renli-simulation``, ``renli-mnist-captions``.
    """
    _check_pair(f_a, f_b)
    return -(f_a * f_b).sum(-1).mean(-1)


def contrastive_loss(
    f_a: torch.Tensor, f_b: torch.Tensor, lam: float | torch.Tensor, beta: float | torch.Tensor
) -> torch.Tensor:
    """The contrastive loss with negative-pair strength ``λ`` and inverse temperature ``β``.

    Ren & Li, Eq. 3 (reconstructed in ``ren-li-setup.md``), with ``S_ij = ⟨f_A(x_A,i), f_B(x_B,j)⟩``::

        L_C = L_NC + (λ/β) · ½ [ mean_i log mean_{j≠i} exp(β S_ij) + mean_j log mean_{i≠j} exp(β S_ij) ]

    For small ``β`` the bracket is ``λ · mean_{i≠j} S_ij + O(λβ)``, which is ``≈ 0`` for zero-mean
    outputs: stage 1 ≈ non-contrastive.  ``λ = 0`` gives exactly :func:`non_contrastive_loss`.
    ``lam`` and ``beta`` are scalars or tensors broadcast against the leading shape of ``f_a`` (one
    value per run).  ``f_a, f_b`` (..., n, m) with ``n ≥ 2`` → (...,).  Chapters ``renli-simulation``,
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If a ``β`` is not positive, a ``λ`` is negative or not finite, shapes differ, or ``n < 2``.
    """
    _check_pair(f_a, f_b)
    beta_t = torch.as_tensor(beta, dtype=f_a.dtype, device=f_a.device)
    if not bool(torch.isfinite(beta_t).all()) or bool((beta_t <= 0).any()):
        raise ParameterError(f"beta={beta!r} must be finite and > 0")
    lam_t = torch.as_tensor(lam, dtype=f_a.dtype, device=f_a.device)
    if not bool(torch.isfinite(lam_t).all()) or bool((lam_t < 0).any()):
        raise ParameterError(f"lam={lam!r} must be finite and >= 0")
    n = f_a.shape[-2]
    if n < 2:
        raise ParameterError(f"the batch has n={n} pairs; the contrastive loss needs n >= 2 (negatives)")
    s = beta_t[..., None, None] * (f_a @ f_b.transpose(-1, -2))
    off = ~torch.eye(n, dtype=torch.bool, device=f_a.device)
    s = s.masked_fill(~off, float("-inf"))
    log_mean = math.log(n - 1)
    rows = (torch.logsumexp(s, dim=-1) - log_mean).mean(-1)
    cols = (torch.logsumexp(s, dim=-2) - log_mean).mean(-1)
    return non_contrastive_loss(f_a, f_b) + lam_t * (rows + cols) / (2.0 * beta_t)


def beta_schedule(step: int, steps_stage1: int, beta1, beta2):
    """The two-stage inverse temperature: ``β1`` for steps ``< steps_stage1``, then ``β2``.

    Ren & Li, Algorithm 3.1 (a small ``β`` for stage 1, ``β = O(1)`` for stage 2).  ``beta1`` and
    ``beta2`` may be numbers or per-run tensors; the one of the current stage is returned as is.
    Chapter ``renli-simulation``.
    """
    return beta1 if step < steps_stage1 else beta2


# --------------------------------------------------------------------------------------------
# Metrics (Ren & Li, Defs. 4.1-4.2, Lemma 5.1)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Training (Ren & Li, Algorithm 3.1), vectorized over runs
# --------------------------------------------------------------------------------------------


@dataclass
class TrainingHistory:
    """Metrics of every run over training, and the weights at the stage boundary and at the end.

    Attributes
    ----------
    steps : (T,) the logged steps (0 = initialization, last = end of training).
    metrics : name → (R, T) array, for each name in :data:`METRICS` plus ``"loss"`` (the training
        loss of the step's batch, ``nan`` at step 0).
    runs : one row per run with its ``seed``, ``kappa``, ``lam``, ``beta1`` and ``beta2``.
    W_A, W_B : dict stage → (R, m, d) tensors (CPU) for stages ``"init"``, ``"stage1"``, ``"final"``.
    steps_stage1 : number of stage-1 steps.

    Chapter ``renli-simulation``.
    """

    steps: np.ndarray
    metrics: dict[str, np.ndarray]
    runs: pd.DataFrame
    W_A: dict[str, torch.Tensor]
    W_B: dict[str, torch.Tensor]
    steps_stage1: int

    def frame(self) -> pd.DataFrame:
        """Long table: one row per (run, logged step) with the run's attributes and every metric."""
        rows = []
        for name, values in self.metrics.items():
            df = pd.DataFrame(values, columns=self.steps)
            df["run"] = np.arange(len(df))
            rows.append(df.melt(id_vars="run", var_name="step", value_name=name).set_index(["run", "step"]))
        out = pd.concat(rows, axis=1).reset_index()
        out["step"] = out["step"].astype(int)
        out["stage"] = np.where(out["step"] <= self.steps_stage1, 1, 2)
        return self.runs.reset_index(names="run").merge(out, on="run")

    def final(self) -> pd.DataFrame:
        """One row per run: its attributes and every metric at the last logged step."""
        df = self.frame()
        return df[df["step"] == self.steps[-1]].reset_index(drop=True)


@torch.no_grad()
def _metrics(data: MultimodalData, W_A, W_B, x_a, x_b) -> dict[str, torch.Tensor]:
    f_a, f_b = representations(W_A, x_a), representations(W_B, x_b)
    U_A, V_A = W_A @ data.M_A, W_A @ data.H_A
    G = torch.cat([U_A, V_A], dim=-1)  # Cov(W_A x) = G Gᵀ; same non-zero spectrum as Gᵀ G
    return {
        "alignment": alignment_score(f_a, f_b),
        "condition_number": condition_number(U_A),
        "stable_rank": stable_rank(G.transpose(-1, -2) @ G),
        "noise_to_signal": noise_to_signal(W_A, data.M_A, data.H_A),
    }


def train(
    data: MultimodalData,
    lam: float | Sequence[float],
    *,
    width: int,
    steps_stage1: int,
    steps_stage2: int,
    beta1: float | Sequence[float] = 0.05,
    beta2: float | Sequence[float] = 2.0,
    lr: float = 2.0,
    batch_size: int = 512,
    eval_size: int = 512,
    log_every: int = 50,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> TrainingHistory:
    """Train linear learners on every run of ``data`` at once with SGD on fresh batches.

    Ren & Li, Algorithm 3.1 (reconstructed): the loss is :func:`contrastive_loss` with the run's
    ``λ`` and the two-stage ``β`` (:func:`beta_schedule`; ``lam``, ``beta1``, ``beta2`` are one
    number or one per run); a run with ``λ = 0`` is the
    non-contrastive method (:func:`non_contrastive_loss`) with the same number of steps.  Each run
    has its own ``W_A, W_B`` (:func:`init_learners`); the summed loss gives each run its own
    gradient.  The metrics (:data:`METRICS`) are measured at step 0, every ``log_every`` steps,
    at the end of stage 1 and at the end, on a fixed evaluation batch of ``eval_size`` pairs per
    run drawn before training.  Training advances the generators of ``data``: build a fresh data
    model (:func:`make_data`) to repeat a run exactly.  Chapter ``renli-simulation``.

    Raises
    ------
    ParameterError
        For a non-positive size or rate, a negative ``λ``, or a ``lam`` list whose length is
        neither 1 nor the number of runs.
    ValueError
        If the loss becomes NaN or infinite (the message names the step, the runs and ``lr``).
    """
    width = positive_int("width", width)
    steps1 = positive_int("steps_stage1", steps_stage1) if steps_stage1 else 0
    steps2 = positive_int("steps_stage2", steps_stage2) if steps_stage2 else 0
    if steps1 + steps2 == 0:
        raise ParameterError("steps_stage1=0 and steps_stage2=0; train for at least one step")
    lr = positive_float("lr", lr)
    batch_size, eval_size = positive_int("batch_size", batch_size), positive_int("eval_size", eval_size)
    if batch_size < 2 or eval_size < 2:
        raise ParameterError(f"batch_size={batch_size} and eval_size={eval_size} must be >= 2 (negative pairs)")
    log_every = positive_int("log_every", log_every)
    lam_list = [nonneg_float("lam", float(v)) for v in _broadcast_runs("lam", lam, data.n_runs)]
    beta1_list = [positive_float("beta1", float(v)) for v in _broadcast_runs("beta1", beta1, data.n_runs)]
    beta2_list = [positive_float("beta2", float(v)) for v in _broadcast_runs("beta2", beta2, data.n_runs)]
    for name in ("M_A", "M_B", "H_A", "H_B"):
        if not bool(torch.isfinite(getattr(data, name)).all()):
            raise ParameterError(f"data.{name} has NaN or infinite entries; build the data with make_data")
    device = torch.device(device)

    W_A, W_B = init_learners(data, width)
    x_eval_a, x_eval_b, _ = data.sample(eval_size)
    data = data.to(device)
    W_A, W_B = W_A.to(device).requires_grad_(), W_B.to(device).requires_grad_()
    x_eval_a, x_eval_b = x_eval_a.to(device), x_eval_b.to(device)
    lam_t = torch.tensor(lam_list, dtype=data.M_A.dtype, device=device)
    beta1_t = torch.tensor(beta1_list, dtype=data.M_A.dtype, device=device)
    beta2_t = torch.tensor(beta2_list, dtype=data.M_A.dtype, device=device)

    total = steps1 + steps2
    logged = sorted({0, total, steps1, *range(0, total + 1, log_every)})
    logged_set = set(logged)
    history: dict[str, list[torch.Tensor]] = {k: [] for k in (*METRICS, "loss")}
    snaps_a, snaps_b = {"init": W_A.detach().cpu().clone()}, {"init": W_B.detach().cpu().clone()}
    last_loss = torch.full((data.n_runs,), float("nan"), device=device)

    def log() -> None:
        for k, v in _metrics(data, W_A.detach(), W_B.detach(), x_eval_a, x_eval_b).items():
            history[k].append(v.detach().cpu())
        history["loss"].append(last_loss.detach().cpu())

    log()
    for step in tqdm(range(total), desc="Ren & Li SGD", disable=not progress, mininterval=2.0):
        beta = beta_schedule(step, steps1, beta1_t, beta2_t)
        x_a, x_b, _ = data.sample(batch_size)
        loss = contrastive_loss(representations(W_A, x_a), representations(W_B, x_b), lam_t, beta)
        if not bool(torch.isfinite(loss).all()):
            bad = torch.nonzero(~torch.isfinite(loss)).flatten().tolist()
            raise ValueError(
                f"training diverged at step {step}: the loss of runs {bad} is NaN or infinite; "
                f"lower lr={lr} (allowed: any lr > 0 small enough for a finite loss)"
            )
        g_a, g_b = torch.autograd.grad(loss.sum(), (W_A, W_B))
        with torch.no_grad():
            W_A -= lr * g_a
            W_B -= lr * g_b
        last_loss = loss.detach()
        if step + 1 == steps1:
            snaps_a["stage1"], snaps_b["stage1"] = W_A.detach().cpu().clone(), W_B.detach().cpu().clone()
        if step + 1 in logged_set:
            log()
    snaps_a["final"], snaps_b["final"] = W_A.detach().cpu().clone(), W_B.detach().cpu().clone()
    if steps1 == 0:
        snaps_a["stage1"], snaps_b["stage1"] = snaps_a["init"], snaps_b["init"]

    runs = pd.DataFrame(
        {"seed": list(data.seeds), "kappa": data.kappa.cpu().numpy(), "lam": lam_list, "beta1": beta1_list, "beta2": beta2_list}
    )
    metrics = {k: torch.stack(v, dim=1).double().numpy() for k, v in history.items()}
    return TrainingHistory(
        steps=np.asarray(logged), metrics=metrics, runs=runs, W_A=snaps_a, W_B=snaps_b, steps_stage1=steps1
    )


def train_configs(
    configs: pd.DataFrame,
    *,
    d: int,
    r: int,
    r_xi: int,
    nu: float = 0.3,
    device: torch.device | str = "cpu",
    **train_kwargs,
) -> TrainingHistory:
    """Train one run per row of ``configs`` (columns ``seed``, ``kappa``, ``lam``, optional ``beta1``,
    ``beta2``), all at once: :func:`make_data` then :func:`train`.

    Extra columns of ``configs`` (e.g. a ``group`` label) are carried into
    :attr:`TrainingHistory.runs`.  ``train_kwargs`` go to :func:`train` (``width``, ``steps_stage1``,
    ...).  Ren & Li, Algorithm 3.1 over a grid of (seed, κ, λ, β); chapter ``renli-simulation``.

    Raises
    ------
    ParameterError
        If a required column is missing or ``configs`` is empty.
    """
    missing = [c for c in ("seed", "kappa", "lam") if c not in configs.columns]
    if missing or len(configs) == 0:
        raise ParameterError(
            f"configs has columns {list(configs.columns)} and {len(configs)} rows; "
            "expected at least one row and the columns 'seed', 'kappa', 'lam'"
        )
    configs = configs.reset_index(drop=True)
    data = make_data(d, r, r_xi, configs["kappa"].tolist(), configs["seed"].astype(int).tolist(), nu=nu)
    for col in ("beta1", "beta2"):
        if col in configs.columns:
            train_kwargs[col] = configs[col].tolist()
    hist = train(data, configs["lam"].tolist(), device=device, **train_kwargs)
    extra = configs.drop(columns=[c for c in hist.runs.columns if c in configs.columns])
    hist.runs = pd.concat([hist.runs, extra], axis=1)
    return hist


# --------------------------------------------------------------------------------------------
# Real-data analog (Ren & Li, Sec. 6 / Fig. 2): fixed encoders, trainable 3-layer heads
# --------------------------------------------------------------------------------------------


def fit_pixel_pca(images: np.ndarray, n_components: int):
    """The fixed image encoder of the real-data analog: PCA of the pixels, fitted once, whitened.

    Stands in for the frozen pre-trained ResNet-101 of Ren & Li (2023), Sec. 6 (nothing pre-trained
    can be downloaded here).  ``images`` (n, ...) are flattened; the PCA (scikit-learn, full SVD:
    deterministic) is fitted on them and returned.  Use :func:`pixel_features` to encode.  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If ``n_components`` is not a positive integer or exceeds ``min(n, pixels)``.
    """
    from sklearn.decomposition import PCA

    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    k = positive_int("n_components", n_components)
    if k > min(x.shape):
        raise ParameterError(f"n_components={k} must be <= min(n_images, n_pixels) = {min(x.shape)}")
    return PCA(n_components=k, whiten=True, svd_solver="full").fit(x)


def pixel_features(pca, images: np.ndarray) -> torch.Tensor:
    """Encode ``images`` (n, ...) with a fitted :func:`fit_pixel_pca`: float32 tensor (n, n_components).

    Chapter ``renli-mnist-captions``.
    """
    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    return torch.from_numpy(pca.transform(x).astype(np.float32))


class MLPHeads(torch.nn.Module):
    """``R`` independent trainable 3-layer fully-connected heads with BatchNorm, vectorized over runs.

    ``Linear(d_in, w) → BatchNorm → ReLU → Linear(w, w) → BatchNorm → ReLU → Linear(w, d_out)``,
    then the output normalization of Ren & Li, Eq. 2 extended to outputs with a mean: centre over the
    batch and divide by ``sqrt(mean_batch ||h − mean h||²)`` (:func:`normalize_batch`).  In
    evaluation mode the BatchNorm layers and the output normalization use running statistics
    (momentum ``momentum``), like ``torch.nn.BatchNorm1d``.  Ren & Li (2023), Sec. 6: "a 3-layer
    fully-connected network with batch norm between layers" on each side.  Run ``i`` initializes
    its weights like ``torch.nn.Linear`` from a generator seeded with ``seeds[i]``.  Inputs
    (R, n, d_in) → outputs (R, n, d_out).  Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For a non-positive size, or ``seeds`` of the wrong length.
    """

    def __init__(self, d_in: int, width: int, d_out: int, seeds: Sequence[int], momentum: float = 0.1) -> None:
        super().__init__()
        d_in, width, d_out = positive_int("d_in", d_in), positive_int("width", width), positive_int("d_out", d_out)
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ParameterError("seeds=[] is not allowed; give one seed per run")
        self.momentum = nonneg_float("momentum", momentum)
        R = len(seeds)
        dims = [(d_in, width), (width, width), (width, d_out)]
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        for layer, (fan_in, fan_out) in enumerate(dims, start=1):
            bound = 1.0 / math.sqrt(fan_in)
            w = torch.stack([(torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * bound for g in gens])
            b = torch.stack([(torch.rand(fan_out, generator=g) * 2 - 1) * bound for g in gens])
            self.register_parameter(f"weight{layer}", torch.nn.Parameter(w))
            self.register_parameter(f"bias{layer}", torch.nn.Parameter(b))
        for layer in (1, 2):
            self.register_parameter(f"bn_gamma{layer}", torch.nn.Parameter(torch.ones(R, width)))
            self.register_parameter(f"bn_beta{layer}", torch.nn.Parameter(torch.zeros(R, width)))
            self.register_buffer(f"running_mean{layer}", torch.zeros(R, width))
            self.register_buffer(f"running_var{layer}", torch.ones(R, width))
        self.register_buffer("out_mean", torch.zeros(R, d_out))
        self.register_buffer("out_scale2", torch.ones(R))

    @property
    def n_runs(self) -> int:
        """Number of independent heads ``R``."""
        return int(self.weight1.shape[0])

    def _bn(self, h: torch.Tensor, layer: int) -> torch.Tensor:
        rm, rv = getattr(self, f"running_mean{layer}"), getattr(self, f"running_var{layer}")
        if self.training:
            mean, var = h.mean(1), h.var(1, unbiased=False)
            with torch.no_grad():
                n = h.shape[1]
                rm.lerp_(mean.detach(), self.momentum)
                rv.lerp_(var.detach() * n / max(n - 1, 1), self.momentum)
        else:
            mean, var = rm, rv
        h = (h - mean[:, None]) / torch.sqrt(var[:, None] + 1e-5)
        return h * getattr(self, f"bn_gamma{layer}")[:, None] + getattr(self, f"bn_beta{layer}")[:, None]

    def forward(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Normalized representations (R, n, d_out) of inputs ``x`` (R, n, d_in).

        With ``index`` (R, n), ``x`` (R, C, d_in) is a table of distinct inputs and sample ``j`` of
        run ``i`` is ``x[i, index[i, j]]``; the first linear layer is then applied to the table
        only (exactly the same result, cheaper when the table is small, e.g. a few captions).
        """
        if x.dim() != 3 or x.shape[0] != self.n_runs or x.shape[2] != self.weight1.shape[1]:
            raise ParameterError(
                f"x has shape {tuple(x.shape)}; expected ({self.n_runs}, n, {self.weight1.shape[1]})"
            )
        h = torch.baddbmm(self.bias1[:, None], x, self.weight1)
        if index is not None:
            if index.dim() != 2 or index.shape[0] != self.n_runs:
                raise ParameterError(f"index has shape {tuple(index.shape)}; expected ({self.n_runs}, n)")
            h = torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1]))
        h = torch.relu(self._bn(h, 1))
        h = torch.relu(self._bn(torch.baddbmm(self.bias2[:, None], h, self.weight2), 2))
        h = torch.baddbmm(self.bias3[:, None], h, self.weight3)
        if self.training:
            mean = h.mean(1)
            centred = h - mean[:, None]
            scale2 = centred.pow(2).sum(-1).mean(-1)
            with torch.no_grad():
                self.out_mean.lerp_(mean.detach(), self.momentum)
                self.out_scale2.lerp_(scale2.detach(), self.momentum)
            return centred / torch.sqrt(scale2 + _EPS)[:, None, None]
        return (h - self.out_mean[:, None]) / torch.sqrt(self.out_scale2 + _EPS)[:, None, None]


@dataclass
class HeadsResult:
    """Trained image and text heads (:class:`MLPHeads`) and the training loss of each run per step.

    Chapter ``renli-mnist-captions``.
    """

    image_heads: MLPHeads
    text_heads: MLPHeads
    loss: np.ndarray  # (R, steps)
    lam: np.ndarray  # (R,)
    seeds: tuple[int, ...]


def train_heads(
    image_features: torch.Tensor,
    text_features: torch.Tensor,
    caption_index: torch.Tensor,
    lam: Sequence[float],
    seeds: Sequence[int],
    *,
    width: int,
    d_out: int,
    steps: int,
    beta: float = 2.0,
    lr: float = 1e-3,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    progress: bool = True,
) -> HeadsResult:
    """Train image and text heads on (image, caption) positive pairs, one run per (λ, seed).

    Real-data analog of Ren & Li (2023), Sec. 6: frozen features ``image_features`` (N, d_img) and
    ``text_features`` (C, d_txt) of the captions, ``caption_index`` (N,) the caption of each image.
    Each step every run draws its own batch of ``batch_size`` images (with replacement, from a
    generator seeded with its seed), and minimizes :func:`contrastive_loss` with its ``λ`` and
    inverse temperature ``β`` (``λ = 0``: :func:`non_contrastive_loss`) with Adam (learning rate
    ``lr``).  Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For bad sizes, mismatched lengths, a caption index out of range or a negative ``λ``.
    ValueError
        If the loss becomes NaN or infinite.
    """
    width, d_out, steps = positive_int("width", width), positive_int("d_out", d_out), positive_int("steps", steps)
    batch_size = positive_int("batch_size", batch_size)
    beta, lr = positive_float("beta", beta), positive_float("lr", lr)
    lam_list = [nonneg_float("lam", float(v)) for v in lam]
    seeds = [int(s) for s in seeds]
    if len(lam_list) != len(seeds) or not seeds:
        raise ParameterError(f"lam has {len(lam_list)} entries and seeds {len(seeds)}; expected equal, >= 1")
    if image_features.dim() != 2 or text_features.dim() != 2:
        raise ParameterError("image_features and text_features must be 2-D (n, dim)")
    if caption_index.shape != (image_features.shape[0],):
        raise ParameterError(
            f"caption_index has shape {tuple(caption_index.shape)}; expected ({image_features.shape[0]},)"
        )
    if int(caption_index.min()) < 0 or int(caption_index.max()) >= text_features.shape[0]:
        raise ParameterError(f"caption_index must lie in [0, {text_features.shape[0]})")
    device = torch.device(device)
    R, N = len(seeds), image_features.shape[0]
    img_heads = MLPHeads(image_features.shape[1], width, d_out, [2 * s for s in seeds]).to(device)
    txt_heads = MLPHeads(text_features.shape[1], width, d_out, [2 * s + 1 for s in seeds]).to(device)
    opt = torch.optim.Adam([*img_heads.parameters(), *txt_heads.parameters()], lr=lr)
    gens = [torch.Generator().manual_seed(10_000 + s) for s in seeds]
    img, txt, cap = image_features.to(device), text_features.to(device), caption_index.to(device)
    lam_t = torch.tensor(lam_list, device=device)
    txt_table = txt.expand(R, -1, -1)
    losses = np.empty((R, steps))
    img_heads.train()
    txt_heads.train()
    for step in tqdm(range(steps), desc="Ren & Li heads", disable=not progress, mininterval=2.0):
        idx = torch.stack([torch.randint(0, N, (batch_size,), generator=g) for g in gens]).to(device)
        f_a = img_heads(img[idx])
        f_b = txt_heads(txt_table, cap[idx])
        loss = contrastive_loss(f_a, f_b, lam_t, beta)
        if not bool(torch.isfinite(loss).all()):
            raise ValueError(f"training diverged at step {step}: non-finite loss; lower lr={lr}")
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        losses[:, step] = loss.detach().cpu().numpy()
    img_heads.eval()
    txt_heads.eval()
    return HeadsResult(img_heads, txt_heads, losses, np.asarray(lam_list), tuple(seeds))


def zero_shot_accuracy(image_emb: torch.Tensor, prompt_emb: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Zero-shot accuracy: predict the prompt with the largest cosine similarity to each image.

    Ren & Li (2023), Sec. 6, after Radford et al. (2021): ``image_emb`` (R, N, k), ``prompt_emb``
    (R, C, k) (one prompt per class, in class order), ``labels`` (N,) → (R,) accuracies.  Chapter
    ``renli-mnist-captions``.
    """
    if image_emb.dim() != 3 or prompt_emb.dim() != 3 or image_emb.shape[-1] != prompt_emb.shape[-1]:
        raise ParameterError(
            f"image_emb {tuple(image_emb.shape)} and prompt_emb {tuple(prompt_emb.shape)} must be (R, N, k), (R, C, k)"
        )
    a = torch.nn.functional.normalize(image_emb, dim=-1)
    b = torch.nn.functional.normalize(prompt_emb, dim=-1)
    pred = (a @ b.transpose(-1, -2)).argmax(-1)
    return (pred == labels.to(pred.device)[None]).double().mean(-1)


def empirical_covariance(features: torch.Tensor) -> torch.Tensor:
    """Covariance over samples, ``(F − mean)ᵀ(F − mean)/n``, of features (..., n, k) → (..., k, k).

    The output covariance whose :func:`stable_rank` is Ren & Li's balance score (Def. 4.2), measured
    on held-out data.  Chapter ``renli-mnist-captions``.
    """
    centred = features - features.mean(-2, keepdim=True)
    return centred.transpose(-1, -2) @ centred / features.shape[-2]


def class_means(features: torch.Tensor, labels: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Class-conditional means, centred over classes: (..., n, k) → (..., n_classes, k).

    With the class as the latent variable, this matrix is the analog of ``U_A`` (latent →
    representation) of the linear model; its effective condition number (:func:`condition_number`
    with ``k = n_classes − 1``; centring removes one dimension) measures balance on real data.
    Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If a class has no sample.
    """
    n_classes = positive_int("n_classes", n_classes)
    onehot = torch.nn.functional.one_hot(labels.long(), n_classes).to(features.dtype).to(features.device)
    counts = onehot.sum(0)
    if bool((counts == 0).any()):
        raise ParameterError(f"labels has no sample of classes {torch.nonzero(counts == 0).flatten().tolist()}")
    means = (onehot.T @ features) / counts[:, None]
    return means - means.mean(-2, keepdim=True)
