"""SSL losses, their trace form and the models of Esser, Mukherjee & Ghoshdastidar (2024).

The paper studies two self-supervised losses on an embedding u: ℝᵈ → ℝᶻ,

* contrastive (Eq. 1):      L = Σᵢ u(xᵢ)ᵀ (u(xᵢ⁻) − u(xᵢ⁺)),
* non-contrastive (Eq. 2):  L = −Σᵢ u(xᵢ)ᵀ u(xᵢ⁺),

and shows that for a linear embedding u(x) = Mx, M = W₂ᵀW₁, both are the *trace form* (Eq. 7)

    L = Tr(M C̃ Mᵀ) = Tr(M C Mᵀ),   C = (C̃ + C̃ᵀ)/2,

with C̃ = Σᵢ xᵢ(xᵢ⁻ − xᵢ⁺)ᵀ (contrastive; Σᵢ Σⱼ xᵢ(xᵢⱼ⁻)ᵀ − Σᵢ Σⱼ xᵢ(xᵢⱼ⁺)ᵀ with p positives and q
negatives per anchor) and C̃ = −Σᵢ xᵢ(xᵢ⁺)ᵀ (non-contrastive; the paper prints this without the
minus sign, which would flip the loss).

Relation to Tian (2023)'s α-CL energy (``nlcl.contrastive``): with the views stacked as [x; x⁺]
and α the permutation matrix of the negatives (α_iπ(i) = 1 for x⁻ᵢ = x_π(i)), the contrastive C is
exactly −N²·C_α[x] + ½(XᵀX − X⁺ᵀX⁺) (:func:`alpha_cl_loss_matrix`), so minimising Eq. (1) is
maximising Tian's energy E_α = ½ tr C_α[u] up to a norm-difference term.  The chapter
``book/esser-collapse.py`` shows the correspondence numerically.

Models (Section "SSL with (Orthogonality) Constraints"): the two-layer network
u(x) = W₂ᵀ φ(W₁x) with W₁ ∈ ℝʰˣᵈ, W₂ ∈ ℝʰˣᶻ, linear (φ = identity, u = u^𝕀) or nonlinear (tanh,
ReLU, sigmoid, ... from :mod:`nlcl.activations`), the one-layer linear model u(x) = Θx of
Proposition 1, and a kernel model u(x) = Θψ(x) with random Fourier features ψ, ψ(x)ᵀψ(x') ≈
k(x, x') (Proposition 1's "replace xᵀx' by k(x, x')").

Every function is vectorised over leading *initialisation* dimensions: weights may carry a
leading batch shape (S, h, d), and losses are returned per initialisation.  Explained in the
chapter ``book/esser-collapse.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from .activations import get_activation
from .validate import ParameterError, choice, positive_float, positive_int

__all__ = [
    "LOSSES",
    "REDUCTIONS",
    "contrastive_loss",
    "non_contrastive_loss",
    "ssl_loss",
    "pair_matrix",
    "loss_matrix",
    "trace_loss",
    "two_layer_output",
    "linear_output",
    "KernelFeatureMap",
    "init_two_layer",
    "output_covariance_spectrum",
    "collapse_ratio",
    "make_pairs",
    "negatives_alpha",
    "alpha_cl_loss_matrix",
    "linearization_gap",
]

#: Names of the paper's losses: Eq. (1) and Eq. (2).
LOSSES: tuple[str, ...] = ("contrastive", "non_contrastive")
#: How the sum over the n anchors is reduced: the paper's sum, or the mean (a time rescaling by n).
REDUCTIONS: tuple[str, ...] = ("sum", "mean")


def _as_tensor(name: str, x: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        t = x
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=float))
        except (TypeError, ValueError) as err:
            raise ParameterError(f"{name} must be an array of numbers, got {type(x).__name__}: {err}") from None
    if dtype is not None:
        t = t.to(dtype)
    return t


def _reduce(total: torch.Tensor, n: int, reduction: str) -> torch.Tensor:
    choice("reduction", reduction, REDUCTIONS)
    return total / n if reduction == "mean" else total


def _check_same_shape(ref_name: str, ref: torch.Tensor, **others: torch.Tensor | None) -> None:
    for name, t in others.items():
        if t is not None and t.shape != ref.shape:
            raise ParameterError(f"{name} has shape {tuple(t.shape)}; expected {tuple(ref.shape)} like {ref_name}")


def contrastive_loss(u: torch.Tensor, u_pos: torch.Tensor, u_neg: torch.Tensor, *, reduction: str = "sum") -> torch.Tensor:
    """Contrastive loss Σᵢ u(xᵢ)ᵀ(u(xᵢ⁻) − u(xᵢ⁺)) (Esser et al. 2024, Eq. 1).

    Parameters
    ----------
    u, u_pos, u_neg:
        Embeddings of anchors, positives and negatives, shape (..., n, z); leading dimensions
        (e.g. initialisations) are kept.
    reduction:
        ``"sum"`` (the paper) or ``"mean"`` over the n anchors.

    Returns
    -------
    Tensor of shape (...): one loss per leading index. Chapter ``book/esser-collapse.py``.
    """
    u, u_pos, u_neg = (_as_tensor(k, v) for k, v in (("u", u), ("u_pos", u_pos), ("u_neg", u_neg)))
    if u.dim() < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z)")
    _check_same_shape("u", u, u_pos=u_pos, u_neg=u_neg)
    total = (u * (u_neg - u_pos)).sum(dim=(-2, -1))
    return _reduce(total, u.shape[-2], reduction)


def non_contrastive_loss(u: torch.Tensor, u_pos: torch.Tensor, *, reduction: str = "sum") -> torch.Tensor:
    """Non-contrastive loss −Σᵢ u(xᵢ)ᵀu(xᵢ⁺) (Esser et al. 2024, Eq. 2).

    Shapes and ``reduction`` as in :func:`contrastive_loss`. Chapter ``book/esser-collapse.py``.
    """
    u, u_pos = _as_tensor("u", u), _as_tensor("u_pos", u_pos)
    if u.dim() < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z)")
    _check_same_shape("u", u, u_pos=u_pos)
    total = -(u * u_pos).sum(dim=(-2, -1))
    return _reduce(total, u.shape[-2], reduction)


def ssl_loss(
    loss: str, u: torch.Tensor, u_pos: torch.Tensor, u_neg: torch.Tensor | None = None, *, reduction: str = "sum"
) -> torch.Tensor:
    """Dispatch to Eq. (1) (``loss="contrastive"``) or Eq. (2) (``"non_contrastive"``).

    ``u_neg`` is required for the contrastive loss and ignored otherwise.
    """
    choice("loss", loss, LOSSES)
    if loss == "contrastive":
        if u_neg is None:
            raise ParameterError("u_neg=None is not allowed for loss='contrastive'; pass the negatives' embeddings")
        return contrastive_loss(u, u_pos, u_neg, reduction=reduction)
    return non_contrastive_loss(u, u_pos, reduction=reduction)


def pair_matrix(
    x: Any, x_pos: Any, x_neg: Any | None = None, *, loss: str = "contrastive", reduction: str = "sum"
) -> torch.Tensor:
    """The (non-symmetric) data matrix C̃ of the trace form (Esser et al. 2024, Eq. 7).

    * contrastive, one positive and one negative per anchor: C̃ = Σᵢ xᵢ(xᵢ⁻ − xᵢ⁺)ᵀ;
    * contrastive with p positives and q negatives per anchor (``x_pos`` of shape (n, p, d),
      ``x_neg`` of shape (n, q, d)): C̃ = Σᵢ (Σⱼ xᵢ(xᵢⱼ⁻)ᵀ − Σⱼ xᵢ(xᵢⱼ⁺)ᵀ);
    * non-contrastive: C̃ = −Σᵢ xᵢ(xᵢ⁺)ᵀ (x_pos may also be (n, p, d)).

    Parameters
    ----------
    x:
        Anchors, shape (n, d).
    x_pos, x_neg:
        Positives and negatives, shape (n, d) or (n, p, d) / (n, q, d).
    loss, reduction:
        See :data:`LOSSES`, :data:`REDUCTIONS`.

    Returns
    -------
    C̃ of shape (d, d), so that the loss of u(x) = Mx equals Tr(M C̃ Mᵀ). Chapter
    ``book/esser-collapse.py``.
    """
    choice("loss", loss, LOSSES)
    x = _as_tensor("x", x)
    if x.dim() != 2:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected (n, d)")
    n, d = x.shape

    def views(name: str, v: Any) -> torch.Tensor:
        v = _as_tensor(name, v, x.dtype)
        if v.dim() == 2:
            v = v.unsqueeze(1)
        if v.dim() != 3 or v.shape[0] != n or v.shape[2] != d:
            raise ParameterError(f"{name} has shape {tuple(v.shape)}; expected ({n}, {d}) or ({n}, k, {d})")
        return v.sum(dim=1)  # Σ_j x_ij

    pos = views("x_pos", x_pos)
    if loss == "contrastive":
        if x_neg is None:
            raise ParameterError("x_neg=None is not allowed for loss='contrastive'; pass the negatives")
        other = views("x_neg", x_neg) - pos
    else:
        other = -pos
    return _reduce(x.T @ other, n, reduction)


def loss_matrix(
    x: Any, x_pos: Any, x_neg: Any | None = None, *, loss: str = "contrastive", reduction: str = "sum"
) -> torch.Tensor:
    """The symmetric matrix C = (C̃ + C̃ᵀ)/2 of Esser et al. (2024), Eq. 7 (and Definition 1).

    Arguments as in :func:`pair_matrix`. Tr(MCMᵀ) = Tr(MC̃Mᵀ) for every M. Chapter
    ``book/esser-collapse.py``.
    """
    c = pair_matrix(x, x_pos, x_neg, loss=loss, reduction=reduction)
    return (c + c.T) / 2


def trace_loss(W1: torch.Tensor, W2: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """General loss Tr(W₂ᵀW₁ C W₁ᵀW₂) (Esser et al. 2024, Eq. 7 / Definition 1, Eq. 8).

    Parameters
    ----------
    W1:
        Shape (..., h, d).
    W2:
        Shape (..., h, z) (same leading shape as W1).
    C:
        Shape (d, d); need not be symmetric (Tr(MC̃Mᵀ) = Tr(MCMᵀ)).

    Returns
    -------
    Tensor of shape (...). Chapter ``book/esser-collapse.py``.
    """
    W1, W2, C = _as_tensor("W1", W1), _as_tensor("W2", W2), _as_tensor("C", C)
    if W1.dim() < 2 or W2.dim() < 2 or W1.shape[:-1] != W2.shape[:-1]:
        raise ParameterError(
            f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be (..., h, d) and (..., h, z) with the same (..., h)"
        )
    d = W1.shape[-1]
    if C.shape != (d, d):
        raise ParameterError(f"C has shape {tuple(C.shape)}; expected ({d}, {d})")
    M = W2.transpose(-1, -2) @ W1  # (..., z, d)
    return ((M @ C.to(M.dtype)) * M).sum(dim=(-2, -1))


def two_layer_output(x: torch.Tensor, W1: torch.Tensor, W2: torch.Tensor, activation: str = "linear") -> torch.Tensor:
    """Two-layer embedding u(x) = W₂ᵀ φ(W₁x) (Esser et al. 2024, Section "SSL with Constraints").

    ``activation="linear"`` gives u^𝕀(x) = W₂ᵀW₁x; other names come from
    :func:`nlcl.activations.get_activation` (e.g. ``"tanh"``, ``"relu"``, ``"sigmoid"``).

    Parameters
    ----------
    x:
        Inputs, shape (n, d) or (..., n, d) broadcastable against the weights' leading shape.
    W1, W2:
        Shapes (..., h, d) and (..., h, z).

    Returns
    -------
    Outputs of shape (..., n, z). Chapters ``book/esser-collapse.py`` (Theorem 1).
    """
    act = get_activation(activation)
    x, W1, W2 = _as_tensor("x", x), _as_tensor("W1", W1), _as_tensor("W2", W2)
    if W1.dim() < 2 or W2.dim() < 2 or W1.shape[:-1] != W2.shape[:-1]:
        raise ParameterError(
            f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be (..., h, d) and (..., h, z) with the same (..., h)"
        )
    if x.shape[-1] != W1.shape[-1]:
        raise ParameterError(f"x has shape {tuple(x.shape)}; its last dimension must be d={W1.shape[-1]}")
    hidden = x.to(W1.dtype) @ W1.transpose(-1, -2)  # (..., n, h)
    return act(hidden) @ W2


def linear_output(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """One-layer linear embedding u(x) = Θx (Esser et al. 2024, Proposition 1).

    ``theta`` has shape (..., z, d); returns (..., n, z). Chapter ``book/esser-collapse.py``.
    """
    x, theta = _as_tensor("x", x), _as_tensor("theta", theta)
    if theta.dim() < 2 or x.shape[-1] != theta.shape[-1]:
        raise ParameterError(f"x {tuple(x.shape)} and theta {tuple(theta.shape)} must be (..., n, d) and (..., z, d)")
    return x.to(theta.dtype) @ theta.transpose(-1, -2)


@dataclass(frozen=True)
class KernelFeatureMap:
    """Random Fourier features ψ with ψ(x)ᵀψ(x') ≈ exp(−γ‖x − x'‖²) (the RBF kernel k).

    The kernel model of Proposition 1 (Esser et al. 2024) is u(x) = Θψ(x): a linear model in
    feature space, whose gradient-flow dynamics are Proposition 1's with xᵀx' replaced by
    ψ(x)ᵀψ(x') ≈ k(x, x'). The random frequencies are drawn by scikit-learn's
    :class:`~sklearn.kernel_approximation.RBFSampler`. Build it with :meth:`fit`.
    """

    weights: torch.Tensor  # (d, D)
    offset: torch.Tensor  # (D,)
    gamma: float

    @classmethod
    def fit(cls, d: int, n_features: int, gamma: float = 1.0, seed: int = 0) -> KernelFeatureMap:
        """Draw D = ``n_features`` random features for inputs of dimension ``d``."""
        from sklearn.kernel_approximation import RBFSampler

        d = positive_int("d", d)
        n_features = positive_int("n_features", n_features)
        gamma = positive_float("gamma", gamma)
        sampler = RBFSampler(gamma=gamma, n_components=n_features, random_state=seed).fit(np.zeros((1, d)))
        return cls(
            torch.as_tensor(sampler.random_weights_, dtype=torch.float64),
            torch.as_tensor(sampler.random_offset_, dtype=torch.float64),
            gamma,
        )

    @property
    def n_features(self) -> int:
        return int(self.offset.shape[0])

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """ψ(x) = √(2/D) cos(xΩ + b), shape (..., n, D)."""
        x = _as_tensor("x", x, torch.float64)
        if x.shape[-1] != self.weights.shape[0]:
            raise ParameterError(f"x has shape {tuple(x.shape)}; its last dimension must be d={self.weights.shape[0]}")
        return np.sqrt(2.0 / self.n_features) * torch.cos(x @ self.weights + self.offset)

    def kernel(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The exact RBF kernel k(x, y) = exp(−γ‖x − y‖²), shape (n, m)."""
        x, y = _as_tensor("x", x, torch.float64), _as_tensor("y", y, torch.float64)
        return torch.exp(-self.gamma * torch.cdist(x, y) ** 2)


def init_two_layer(
    n_init: int,
    h: int,
    d: int,
    z: int,
    *,
    kind: str = "orthogonal",
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Initial weights (W₁, W₂) of shapes (S, h, d) and (S, h, z) for S = ``n_init`` networks.

    ``kind="orthogonal"``: uniformly random semi-orthogonal matrices (W₁ᵀW₁ = 𝕀_d, W₂ᵀW₂ = 𝕀_z;
    Theorem 1's initialisation, needs h ≥ d and h ≥ z). ``kind="gaussian"``: i.i.d. N(0, 1/h)
    entries. Chapters ``book/esser-collapse.py`` and ``book/esser-grassmann.py``.
    """
    from .constraints import random_semi_orthogonal

    n_init, h, d, z = (positive_int(k, v) for k, v in (("n_init", n_init), ("h", h), ("d", d), ("z", z)))
    choice("kind", kind, ("orthogonal", "gaussian"))
    if kind == "orthogonal":
        return (
            random_semi_orthogonal((n_init, h, d), generator=generator, dtype=dtype),
            random_semi_orthogonal((n_init, h, z), generator=generator, dtype=dtype),
        )
    scale = 1.0 / np.sqrt(h)
    W1 = torch.randn((n_init, h, d), generator=generator, dtype=dtype) * scale
    W2 = torch.randn((n_init, h, z), generator=generator, dtype=dtype) * scale
    return W1, W2


def output_covariance_spectrum(u: torch.Tensor) -> torch.Tensor:
    """Eigenvalues (descending) of the output covariance Cov[u(x)] over the n points.

    ``u`` has shape (..., n, z); returns (..., z). Used to measure dimension collapse
    (Proposition 1). Chapter ``book/esser-collapse.py``.
    """
    u = _as_tensor("u", u)
    if u.dim() < 2 or u.shape[-2] < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z) with n >= 2")
    centred = u - u.mean(dim=-2, keepdim=True)
    cov = centred.transpose(-1, -2) @ centred / (u.shape[-2] - 1)
    return torch.linalg.eigvalsh(cov).flip(-1)


def collapse_ratio(u: torch.Tensor) -> torch.Tensor:
    """λ₂/λ₁ of the output covariance: 0 means the output is one-dimensional (Proposition 1).

    ``u`` has shape (..., n, z) with z >= 2; returns (...). A zero covariance gives NaN.
    """
    u = _as_tensor("u", u)
    if u.shape[-1] < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; collapse_ratio needs z >= 2 output dimensions")
    ev = output_covariance_spectrum(u)
    return ev[..., 1] / ev[..., 0]


def make_pairs(
    x: Any, *, noise_var: float = 0.1, generator: torch.Generator | None = None, return_perm: bool = False
) -> tuple[torch.Tensor, ...]:
    """Anchors, positives and negatives as in Esser et al. (2024), Example 1.

    x⁺ = x + ε with ε ∼ N(0, ``noise_var``·𝕀) and x⁻ an independent sample of the data set (a
    random permutation π of the anchors, x⁻ᵢ = x_π(i)). Returns (x, x⁺, x⁻) as float64 tensors of
    shape (n, d), and π as well when ``return_perm`` is true.
    Chapters ``book/esser-collapse.py`` and ``book/esser-grassmann.py``.
    """
    x = _as_tensor("x", x, torch.float64)
    if x.dim() != 2 or x.shape[0] < 2:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected (n, d) with n >= 2")
    noise_var = float(noise_var)
    if not np.isfinite(noise_var) or noise_var < 0:
        raise ParameterError(f"noise_var={noise_var!r} must be a finite number >= 0")
    eps = torch.randn(x.shape, generator=generator, dtype=x.dtype) * np.sqrt(noise_var)
    perm = torch.randperm(x.shape[0], generator=generator)
    return (x, x + eps, x[perm], perm) if return_perm else (x, x + eps, x[perm])


def negatives_alpha(perm: Any) -> torch.Tensor:
    """Tian (2023)'s pairwise importance α (N×N) of the negatives x⁻ᵢ = x_π(i): α_iπ(i) = 1.

    Used by :func:`alpha_cl_loss_matrix` to write Esser et al.'s contrastive loss (1) with Tian's
    contrastive covariance C_α (``nlcl.contrastive.contrastive_covariance``).
    """
    perm = torch.as_tensor(perm)
    n = perm.shape[0] if perm.dim() == 1 else -1
    if perm.dim() != 1 or not torch.equal(torch.sort(perm).values, torch.arange(n)):
        raise ParameterError(f"perm must be a permutation of 0..N-1, got {perm.tolist()!r}"[:200])
    alpha = torch.zeros(n, n, dtype=torch.float64)
    alpha[torch.arange(n), perm] = 1.0
    return alpha


def alpha_cl_loss_matrix(x: Any, x_pos: Any, perm: Any) -> torch.Tensor:
    """Esser et al.'s C (Eq. 7, contrastive, ``reduction="sum"``) from Tian's α-CL covariance.

    With the views stacked as [x; x⁺], α = :func:`negatives_alpha` (π) and
    D = ½(XᵀX − X⁺ᵀX⁺), the identity

        C = −N² C_α[x] + D

    holds exactly, i.e. for a linear embedding u = Mx the loss (1) is
    L = −2N² E_α[u] + ½Σᵢ(‖u(xᵢ)‖² − ‖u(xᵢ⁺)‖²): minimising Esser et al.'s contrastive loss is
    maximising Tian's energy E_α (Tian 2023, Eq. 2–3) up to the norm-difference term, which
    vanishes in expectation when x and x⁺ have the same second moment. Uses
    ``nlcl.contrastive``; shown numerically in ``book/esser-collapse.py``.
    """
    from .contrastive import contrastive_covariance, stack_views

    x = _as_tensor("x", x, torch.float64)
    x_pos = _as_tensor("x_pos", x_pos, torch.float64)
    _check_same_shape("x", x, x_pos=x_pos)
    n = x.shape[0]
    c_alpha = contrastive_covariance(stack_views(x, x_pos), alpha=negatives_alpha(perm))
    return -(n**2) * c_alpha + 0.5 * (x.T @ x - x_pos.T @ x_pos)


def linearization_gap(
    x: Any,
    x_pos: Any,
    x_neg: Any,
    *,
    widths: Sequence[int],
    activations: Sequence[str],
    n_init: int,
    steps: int,
    lr: float = 0.01,
    z: int = 1,
    loss: str = "contrastive",
    reduction: str = "mean",
    record_every: int = 50,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> pd.DataFrame:
    """‖u^φ − u^𝕀‖ during orthogonally constrained training (Esser et al. 2024, Theorem 1, Fig. 2).

    For every width h in ``widths``, ``n_init`` pairs of Haar-random semi-orthogonal weights
    (W₁ ∈ ℝʰˣᵈ, W₂ ∈ ℝʰˣᶻ) are drawn; from each, the linear network u^𝕀 and every nonlinear
    u^φ (φ in ``activations``) are trained by projected gradient descent (orthogonality
    constraint, Eq. 11) on ``loss`` with learning rate ``lr`` for ``steps`` epochs (full batch).
    The gap is the mean over anchors of ‖u^φ(xᵢ) − u^𝕀(xᵢ)‖₂, recorded every ``record_every``
    epochs (epoch 0 is Theorem 1's initialisation). ``dtype=torch.float32`` halves the cost of
    wide sweeps.

    Returns
    -------
    A tidy DataFrame with columns ``activation, h, init, epoch, gap``. Chapter
    ``book/esser-collapse.py``.
    """
    from .constraints import projected_gradient_descent

    x = _as_tensor("x", x, dtype)
    x_pos = _as_tensor("x_pos", x_pos, dtype)
    x_neg = _as_tensor("x_neg", x_neg, dtype)
    _check_same_shape("x", x, x_pos=x_pos, x_neg=x_neg)
    widths = [positive_int("widths[i]", int(h)) for h in widths]
    if not widths:
        raise ParameterError("widths=[] is not allowed; give at least one hidden width")
    for a in activations:
        get_activation(a)
    choice("loss", loss, LOSSES)
    d = x.shape[1]
    rows = []
    gen = torch.Generator().manual_seed(int(seed))
    for h in widths:
        if h < max(d, z):
            raise ParameterError(f"widths contains h={h}; orthogonality needs h >= max(d, z) = {max(d, z)}")
        W1, W2 = init_two_layer(n_init, h, d, z, kind="orthogonal", generator=gen, dtype=dtype)
        outputs = {}
        for act in ("linear", *activations):
            def loss_fn(a: torch.Tensor, b: torch.Tensor, act: str = act) -> torch.Tensor:
                return ssl_loss(
                    loss,
                    two_layer_output(x, a, b, act),
                    two_layer_output(x_pos, a, b, act),
                    two_layer_output(x_neg, a, b, act),
                    reduction=reduction,
                )

            traj = projected_gradient_descent(
                loss_fn, W1, W2, constraint="orthogonal", lr=lr, steps=steps, record_every=record_every,
                observe=lambda a, b, act=act: two_layer_output(x, a, b, act),
            )
            outputs[act] = (traj.steps, traj.observed)  # (T, S, n, z)
        steps_rec, lin = outputs["linear"]
        epoch_grid, init_grid = np.meshgrid(np.asarray(steps_rec, dtype=int), np.arange(n_init), indexing="ij")
        for act in activations:
            gap = torch.linalg.vector_norm(outputs[act][1] - lin, dim=-1).mean(dim=-1)  # (T, S)
            rows.append(pd.DataFrame({
                "activation": act, "h": h, "init": init_grid.ravel(), "epoch": epoch_grid.ravel(),
                "gap": gap.double().numpy().ravel(),
            }))
    return pd.concat(rows, ignore_index=True)
