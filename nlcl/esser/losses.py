"""The SSL losses of Esser, Mukherjee & Ghoshdastidar (2024), Eqs. 1-2, and their trace form (Eq. 7).

Contrastive (Eq. 1) L = Σᵢ u(xᵢ)ᵀ (u(xᵢ⁻) − u(xᵢ⁺)); non-contrastive (Eq. 2) L = −Σᵢ u(xᵢ)ᵀ u(xᵢ⁺).
For a linear embedding u(x) = Mx, M = W₂ᵀW₁, both are L = Tr(M C̃ Mᵀ) = Tr(M C Mᵀ), C = (C̃ + C̃ᵀ)/2,
with C̃ = Σᵢ xᵢ(xᵢ⁻ − xᵢ⁺)ᵀ (contrastive; p positives and q negatives per anchor) and
C̃ = −Σᵢ xᵢ(xᵢ⁺)ᵀ (non-contrastive; the paper prints this without the minus sign, which would flip
the loss). :func:`alpha_cl_loss_matrix` relates the contrastive C to Tian (2023)'s α-CL energy.
Losses are returned per initialisation (leading batch dimensions). Explained in the chapter
``book/esser-collapse.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from nlcl.core.tensors import REDUCTIONS, as_tensor, reduce_samples
from nlcl.core.validate import ParameterError, choice

__all__ = [
    "LOSSES",
    "REDUCTIONS",
    "alpha_cl_loss_matrix",
    "contrastive_loss",
    "loss_matrix",
    "make_pairs",
    "negatives_alpha",
    "non_contrastive_loss",
    "pair_matrix",
    "ssl_loss",
    "trace_loss",
]


#: Names of the paper's losses: Eq. (1) and Eq. (2).
LOSSES: tuple[str, ...] = ("contrastive", "non_contrastive")


def _check_same_shape(ref_name: str, ref: torch.Tensor, **others: torch.Tensor | None) -> None:
    for name, t in others.items():
        if t is not None and t.shape != ref.shape:
            raise ParameterError(
                f"{name} has shape {tuple(t.shape)}; expected {tuple(ref.shape)} like {ref_name}"
            )


def contrastive_loss(
    u: torch.Tensor, u_pos: torch.Tensor, u_neg: torch.Tensor, *, reduction: str = "sum"
) -> torch.Tensor:
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
    u, u_pos, u_neg = (as_tensor(k, v) for k, v in (("u", u), ("u_pos", u_pos), ("u_neg", u_neg)))
    if u.dim() < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z)")
    _check_same_shape("u", u, u_pos=u_pos, u_neg=u_neg)
    total = (u * (u_neg - u_pos)).sum(dim=(-2, -1))
    return reduce_samples(total, u.shape[-2], reduction)


def non_contrastive_loss(u: torch.Tensor, u_pos: torch.Tensor, *, reduction: str = "sum") -> torch.Tensor:
    """Non-contrastive loss −Σᵢ u(xᵢ)ᵀu(xᵢ⁺) (Esser et al. 2024, Eq. 2).

    Shapes and ``reduction`` as in :func:`contrastive_loss`. Chapter ``book/esser-collapse.py``.
    """
    u, u_pos = as_tensor("u", u), as_tensor("u_pos", u_pos)
    if u.dim() < 2:
        raise ParameterError(f"u has shape {tuple(u.shape)}; expected (..., n, z)")
    _check_same_shape("u", u, u_pos=u_pos)
    total = -(u * u_pos).sum(dim=(-2, -1))
    return reduce_samples(total, u.shape[-2], reduction)


def ssl_loss(
    loss: str,
    u: torch.Tensor,
    u_pos: torch.Tensor,
    u_neg: torch.Tensor | None = None,
    *,
    reduction: str = "sum",
) -> torch.Tensor:
    """Dispatch to Eq. (1) (``loss="contrastive"``) or Eq. (2) (``"non_contrastive"``).

    ``u_neg`` is required for the contrastive loss and ignored otherwise.
    """
    choice("loss", loss, LOSSES)
    if loss == "contrastive":
        if u_neg is None:
            raise ParameterError(
                "u_neg=None is not allowed for loss='contrastive'; pass the negatives' embeddings"
            )
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
    x = as_tensor("x", x)
    if x.dim() != 2:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected (n, d)")
    n, d = x.shape

    def views(name: str, v: Any) -> torch.Tensor:
        v = as_tensor(name, v, x.dtype)
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
    return reduce_samples(x.T @ other, n, reduction)


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
    W1, W2, C = as_tensor("W1", W1), as_tensor("W2", W2), as_tensor("C", C)
    if W1.dim() < 2 or W2.dim() < 2 or W1.shape[:-1] != W2.shape[:-1]:
        raise ParameterError(
            f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be (..., h, d) and (..., h, z) with the same (..., h)"
        )
    d = W1.shape[-1]
    if C.shape != (d, d):
        raise ParameterError(f"C has shape {tuple(C.shape)}; expected ({d}, {d})")
    M = W2.transpose(-1, -2) @ W1  # (..., z, d)
    return ((M @ C.to(M.dtype)) * M).sum(dim=(-2, -1))


def make_pairs(
    x: Any, *, noise_var: float = 0.1, generator: torch.Generator | None = None, return_perm: bool = False
) -> tuple[torch.Tensor, ...]:
    """Anchors, positives and negatives as in Esser et al. (2024), Example 1.

    x⁺ = x + ε with ε ∼ N(0, ``noise_var``·𝕀) and x⁻ an independent sample of the data set (a
    random permutation π of the anchors, x⁻ᵢ = x_π(i)). Returns (x, x⁺, x⁻) as float64 tensors of
    shape (n, d), and π as well when ``return_perm`` is true.
    Chapters ``book/esser-collapse.py`` and ``book/esser-grassmann.py``.
    """
    x = as_tensor("x", x, torch.float64)
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
    contrastive covariance C_α (``nlcl.tian.contrastive.contrastive_covariance``).
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
    ``nlcl.tian.contrastive``; shown numerically in ``book/esser-collapse.py``.
    """
    from nlcl.tian.contrastive import contrastive_covariance, stack_views

    x = as_tensor("x", x, torch.float64)
    x_pos = as_tensor("x_pos", x_pos, torch.float64)
    _check_same_shape("x", x, x_pos=x_pos)
    n = x.shape[0]
    c_alpha = contrastive_covariance(stack_views(x, x_pos), alpha=negatives_alpha(perm))
    return -(n**2) * c_alpha + 0.5 * (x.T @ x - x_pos.T @ x_pos)
