"""The models of Esser, Mukherjee & Ghoshdastidar (2024) and their collapse diagnostics; the SSL
losses and their trace form are in :mod:`nlcl.esser.losses`.

The paper studies two self-supervised losses on an embedding u: ℝᵈ → ℝᶻ,

* contrastive (Eq. 1):      L = Σᵢ u(xᵢ)ᵀ (u(xᵢ⁻) − u(xᵢ⁺)),
* non-contrastive (Eq. 2):  L = −Σᵢ u(xᵢ)ᵀ u(xᵢ⁺),

and shows that for a linear embedding u(x) = Mx, M = W₂ᵀW₁, both are the *trace form* (Eq. 7)

    L = Tr(M C̃ Mᵀ) = Tr(M C Mᵀ),   C = (C̃ + C̃ᵀ)/2,

with C̃ = Σᵢ xᵢ(xᵢ⁻ − xᵢ⁺)ᵀ (contrastive; Σᵢ Σⱼ xᵢ(xᵢⱼ⁻)ᵀ − Σᵢ Σⱼ xᵢ(xᵢⱼ⁺)ᵀ with p positives and q
negatives per anchor) and C̃ = −Σᵢ xᵢ(xᵢ⁺)ᵀ (non-contrastive; the paper prints this without the
minus sign, which would flip the loss).

Relation to Tian (2023)'s α-CL energy (``nlcl.tian.contrastive``): with the views stacked as [x; x⁺]
and α the permutation matrix of the negatives (α_iπ(i) = 1 for x⁻ᵢ = x_π(i)), the contrastive C is
exactly −N²·C_α[x] + ½(XᵀX − X⁺ᵀX⁺) (:func:`~nlcl.esser.losses.alpha_cl_loss_matrix`), so minimising Eq. (1) is
maximising Tian's energy E_α = ½ tr C_α[u] up to a norm-difference term.  The chapter
``book/esser-collapse.py`` shows the correspondence numerically.

Models (Section "SSL with (Orthogonality) Constraints"): the two-layer network
u(x) = W₂ᵀ φ(W₁x) with W₁ ∈ ℝʰˣᵈ, W₂ ∈ ℝʰˣᶻ, linear (φ = identity, u = u^𝕀) or nonlinear (tanh,
ReLU, sigmoid, ... from :mod:`nlcl.core.activations`), the one-layer linear model u(x) = Θx of
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

from nlcl.core.activations import get_activation
from nlcl.core.blocks import axis_blocks
from nlcl.core.tensors import as_tensor
from nlcl.core.validate import ParameterError, choice, positive_float, positive_int
from nlcl.esser.constraints import projected_gradient_descent, random_semi_orthogonal
from nlcl.esser.losses import LOSSES, _check_same_shape
from nlcl.esser.two_layer_loss import TwoLayerSSLLoss

__all__ = [
    "two_layer_output",
    "linear_output",
    "KernelFeatureMap",
    "init_two_layer",
    "output_covariance_spectrum",
    "collapse_ratio",
    "linearization_gap",
    "initial_linearization_gap",
    "procrustes_rotation",
    "collapse_horizon",
]


def two_layer_output(
    x: torch.Tensor, W1: torch.Tensor, W2: torch.Tensor, activation: str = "linear"
) -> torch.Tensor:
    """Two-layer embedding u(x) = W₂ᵀ φ(W₁x) (Esser et al. 2024, Section "SSL with Constraints").

    ``activation="linear"`` gives u^𝕀(x) = W₂ᵀW₁x; other names come from
    :func:`nlcl.core.activations.get_activation` (e.g. ``"tanh"``, ``"relu"``, ``"sigmoid"``).

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
    x, W1, W2 = as_tensor("x", x), as_tensor("W1", W1), as_tensor("W2", W2)
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
    x, theta = as_tensor("x", x), as_tensor("theta", theta)
    if theta.dim() < 2 or x.shape[-1] != theta.shape[-1]:
        raise ParameterError(
            f"x {tuple(x.shape)} and theta {tuple(theta.shape)} must be (..., n, d) and (..., z, d)"
        )
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
        x = as_tensor("x", x, torch.float64)
        if x.shape[-1] != self.weights.shape[0]:
            raise ParameterError(
                f"x has shape {tuple(x.shape)}; its last dimension must be d={self.weights.shape[0]}"
            )
        return np.sqrt(2.0 / self.n_features) * torch.cos(x @ self.weights + self.offset)

    def kernel(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The exact RBF kernel k(x, y) = exp(−γ‖x − y‖²), shape (n, m)."""
        x, y = as_tensor("x", x, torch.float64), as_tensor("y", y, torch.float64)
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
    u = as_tensor("u", u)
    if u.dim() < 2 or u.shape[-2] < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z) with n >= 2")
    centred = u - u.mean(dim=-2, keepdim=True)
    cov = centred.transpose(-1, -2) @ centred / (u.shape[-2] - 1)
    return torch.linalg.eigvalsh(cov).flip(-1)


def collapse_ratio(u: torch.Tensor) -> torch.Tensor:
    """λ₂/λ₁ of the output covariance: 0 means the output is one-dimensional (Proposition 1).

    ``u`` has shape (..., n, z) with z >= 2; returns (...). A zero covariance gives NaN.
    """
    u = as_tensor("u", u)
    if u.shape[-1] < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; collapse_ratio needs z >= 2 output dimensions")
    ev = output_covariance_spectrum(u)
    return ev[..., 1] / ev[..., 0]


def collapse_horizon(
    C: Any, *, lr: float, target: float = 1e-6, min_steps: int = 1, max_steps: int | None = None
) -> tuple[int, float]:
    """Gradient steps after which the two leading modes of Θ ← Θ(𝕀 − 2ηC) have separated by ``target``.

    Proposition 1 of Esser et al. (2024): under Tr(ΘCΘᵀ) every row of Θ follows θ ← (𝕀 − 2ηC)θ, so
    the component along the eigenvector of the most negative eigenvalue λ₁ of C grows by
    g₁ = 1 − 2ηλ₁ per step and the next one by g₂ = 1 − 2ηλ₂; λ₂/λ₁ of the output covariance
    decays like (g₂/g₁)^{2t} times a factor set by the initialisation.  Returns (T, (g₂/g₁)^{2T})
    with T the smallest number of steps ≥ ``min_steps`` at which (g₂/g₁)^{2T} ≤ ``target``, capped
    at ``max_steps`` (then the separation reached is larger than ``target``).  The collapse is a
    statement about t → ∞, and a fixed step count instead measures the seed's eigen-gap
    λ₂ − λ₁: the chapter ``book/esser-collapse.py`` measures it at this horizon.

    Raises
    ------
    ParameterError
        If C is not square symmetric with d ≥ 2, or ``lr``, ``target`` (in (0, 1)), ``min_steps``,
        ``max_steps`` (≥ ``min_steps``) are invalid, or 1 − 2ηλ₂ ≤ 0 (the step is too large for C).
    """
    C = as_tensor("C", C, torch.float64)
    if C.dim() != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 2 or not torch.allclose(C, C.T):
        raise ParameterError(f"C must be a symmetric d x d matrix with d >= 2; got shape {tuple(C.shape)}")
    lr = positive_float("lr", lr)
    target = positive_float("target", target)
    if target >= 1:
        raise ParameterError(f"target={target!r} must be in (0, 1): the separation factor to reach")
    min_steps = positive_int("min_steps", min_steps)
    if max_steps is not None:
        max_steps = positive_int("max_steps", max_steps)
        if max_steps < min_steps:
            raise ParameterError(f"max_steps={max_steps} must be >= min_steps={min_steps}")
    lam = torch.linalg.eigvalsh(C)
    g1, g2 = 1 - 2 * lr * float(lam[0]), 1 - 2 * lr * float(lam[1])
    if g2 <= 0:
        raise ParameterError(f"lr={lr} is too large for C (1 - 2·lr·λ₂ = {g2:.3g} <= 0)")
    per_step = 2 * (np.log(g2) - np.log(g1))  # log of the separation per step (≤ 0)
    if per_step < 0:
        steps = max(min_steps, int(np.ceil(np.log(target) / per_step)))
    else:
        steps = max_steps if max_steps is not None else min_steps
    if max_steps is not None:
        steps = min(steps, max_steps)
    return steps, float(np.exp(per_step * steps))


def procrustes_rotation(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """argmin over R ∈ O(z) of ‖a R − b‖_F for a, b of shape (…, n, z): the orthogonal Procrustes
    solution U Vᵀ from the SVD aᵀb = U Σ Vᵀ (Schönemann 1966), batched over leading indices."""
    u, _, vh = torch.linalg.svd(a.transpose(-1, -2) @ b)
    return u @ vh


#: The most elements of one (initialisations, n, h) activation tensor in :func:`linearization_gap`
#: and :func:`initial_linearization_gap`: wider sweeps are computed in blocks of initialisations, so
#: that a step's few passes over its activations run in cache instead of main memory. Every
#: initialisation is computed on its own and a batched product gives each member the same bits
#: whatever the batch, but a batch of *one* takes another kernel: so at least 2 per block.
INIT_BLOCK_ELEMENTS = 1 << 20


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
    wide sweeps; wide ones are trained in blocks of initialisations (:data:`INIT_BLOCK_ELEMENTS`),
    with the same numbers as one batch. The loss and its gradient are
    :class:`~nlcl.esser.two_layer_loss.TwoLayerSSLLoss`: the chain rule through the network in
    closed form, on the distinct points of [x; x⁺; x⁻] (the same values as autograd through three
    forward passes, up to rounding).

    The losses depend on the outputs only through inner products, so they are invariant under an
    orthogonal map R ∈ O(z) of the output space (for z = 1: u ↦ −u), and two networks trained
    from the same weights can settle on optima related by such an R. ``gap_aligned`` is the gap
    after the best such R (:func:`procrustes_rotation`): the distance to the nearest equivalent
    linear solution. It is at most ``gap``.

    Returns
    -------
    A tidy DataFrame with columns ``activation, h, init, epoch, gap, gap_aligned``. Chapter
    ``book/esser-collapse.py``.
    """

    x = as_tensor("x", x, dtype)
    x_pos = as_tensor("x_pos", x_pos, dtype)
    x_neg = as_tensor("x_neg", x_neg, dtype)
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
            loss_fn = TwoLayerSSLLoss(x, x_pos, x_neg, activation=act, loss=loss, reduction=reduction)
            trajs = [
                projected_gradient_descent(
                    loss_fn,
                    W1[block],
                    W2[block],
                    constraint="orthogonal",
                    lr=lr,
                    steps=steps,
                    record_every=record_every,
                    observe=lambda a, b, act=act: two_layer_output(x, a, b, act),
                )
                for block in axis_blocks(n_init, x.shape[0] * h, INIT_BLOCK_ELEMENTS, min_size=2)
            ]
            outputs[act] = (trajs[0].steps, torch.cat([t.observed for t in trajs], dim=1))  # (T, S, n, z)
        steps_rec, lin = outputs["linear"]
        epoch_grid, init_grid = np.meshgrid(
            np.asarray(steps_rec, dtype=int), np.arange(n_init), indexing="ij"
        )
        for act in activations:
            gap = torch.linalg.vector_norm(outputs[act][1] - lin, dim=-1).mean(dim=-1)  # (T, S)
            aligned = torch.linalg.vector_norm(
                outputs[act][1] - lin @ procrustes_rotation(lin, outputs[act][1]), dim=-1
            ).mean(dim=-1)
            rows.append(
                pd.DataFrame(
                    {
                        "activation": act,
                        "h": h,
                        "init": init_grid.ravel(),
                        "epoch": epoch_grid.ravel(),
                        "gap": gap.double().numpy().ravel(),
                        "gap_aligned": aligned.double().numpy().ravel(),
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)


def initial_linearization_gap(
    x: Any,
    *,
    widths: Sequence[int],
    activations: Sequence[str],
    n_init: int,
    z: int = 1,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> pd.DataFrame:
    """‖u^φ − u^𝕀‖ at initialisation only (Esser et al. 2024, Theorem 1): a forward pass, no training.

    The same draws as :func:`linearization_gap` (for every width h in ``widths``, ``n_init``
    Haar-random semi-orthogonal pairs W₁ ∈ ℝʰˣᵈ, W₂ ∈ ℝʰˣᶻ from a generator seeded with ``seed``),
    so its rows equal that function's epoch-0 rows for the same arguments; without the training it
    costs a forward pass per width, which lets Theorem 1's statement at initialisation be measured
    over hundreds of initialisations. The gap is the mean over anchors of ‖u^φ(xᵢ) − u^𝕀(xᵢ)‖₂.

    Returns
    -------
    A tidy DataFrame with columns ``activation, h, init, gap``. Chapter ``book/esser-collapse.py``.
    """
    x = as_tensor("x", x, dtype)
    if x.ndim != 2:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected (n, d)")
    widths = [positive_int("widths[i]", int(h)) for h in widths]
    if not widths:
        raise ParameterError("widths=[] is not allowed; give at least one hidden width")
    positive_int("n_init", n_init)
    positive_int("z", z)
    for a in activations:
        get_activation(a)
    d = x.shape[1]
    gen = torch.Generator().manual_seed(int(seed))
    rows = []
    for h in widths:
        if h < max(d, z):
            raise ParameterError(f"widths contains h={h}; orthogonality needs h >= max(d, z) = {max(d, z)}")
        W1, W2 = init_two_layer(n_init, h, d, z, kind="orthogonal", generator=gen, dtype=dtype)
        gaps: dict[str, list[torch.Tensor]] = {act: [] for act in activations}
        for block in axis_blocks(n_init, x.shape[0] * h, INIT_BLOCK_ELEMENTS, min_size=2):
            lin = two_layer_output(x, W1[block], W2[block], "linear")
            for act in activations:
                out = two_layer_output(x, W1[block], W2[block], act)
                gaps[act].append(torch.linalg.vector_norm(out - lin, dim=-1).mean(dim=-1))
        for act in activations:
            gap = torch.cat(gaps[act])
            rows.append(
                pd.DataFrame(
                    {"activation": act, "h": h, "init": np.arange(n_init), "gap": gap.double().numpy()}
                )
            )
    return pd.concat(rows, ignore_index=True)
