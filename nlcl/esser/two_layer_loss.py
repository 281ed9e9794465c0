"""The SSL losses of a two-layer network with their gradient in closed form (Esser et al. 2024).

For the network u(x) = W₂ᵀ φ(W₁x) (:func:`nlcl.esser.collapse.two_layer_output`) and the
contrastive (Eq. 1) or non-contrastive (Eq. 2) loss of :mod:`nlcl.esser.losses`, the chain rule
through the network is written out by hand instead of recorded by autograd. On the points
P = (pᵣ) with hidden pre-activations Hᵣₖ = w₁ₖ·pᵣ, activations Aᵣₖ = φ(Hᵣₖ), outputs U = A W₂ and
∂L/∂U = G (the loss depends on the outputs only through inner products):

    ∂L/∂W₂ = Aᵀ G,       ∂L/∂W₁[k, :] = Σₗ W₂[k, l] Σᵣ φ'(Hᵣₖ) Gᵣₗ pᵣ,                       (∗)

and for φ = identity (u^𝕀(x) = W₂ᵀW₁x, M = W₁ᵀW₂): U = P M, ∂L/∂W₁ = W₂ (PᵀG)ᵀ, ∂L/∂W₂ = W₁ PᵀG.
The second sum of (∗) is the (zd, h) product (G ⊙ P)ᵀ φ'(H): no (n, h) tensor of hidden
gradients is formed. φ' is taken from the activations in place (tanh: 1 − A², sigmoid: A − A²,
ReLU: sign A); other activations keep H and use :meth:`~nlcl.core.activations.Activation.derivative`.

The negatives of Example 1 are anchors (a permutation of them), so φ(W₁x⁻ᵢ) is some φ(W₁xⱼ):
the network is evaluated once on the *distinct* points among [x; x⁺; x⁻] and the losses gather
their outputs from there; G sums the contributions of every occurrence of a point.

The same function as ``ssl_loss(loss, u(x), u(x⁺), u(x⁻))`` through autograd, up to float32/float64
rounding (the order of the sums differs, and tanh is NumPy's vectorised one on the CPU, within an
ulp of torch's and several times faster); ``tests/esser/test_two_layer_loss.py`` compares the two.
Used by :func:`nlcl.esser.collapse.linearization_gap` (chapter ``book/esser-collapse.py``, Fig. 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from nlcl.core.activations import get_activation
from nlcl.core.tensors import as_tensor
from nlcl.core.validate import ParameterError, choice
from nlcl.esser.losses import LOSSES, _check_same_shape, ssl_loss

__all__ = ["TwoLayerSSLLoss"]

#: Activations computed in place, with φ' from φ (the others keep H for their derivative).
_IN_PLACE = ("tanh", "sigmoid", "relu")


def _activate_(H: torch.Tensor, name: str) -> torch.Tensor:
    """φ(H) written over H (tanh, sigmoid, ReLU)."""
    if name == "tanh":
        if H.device.type == "cpu" and H.is_contiguous():
            np.tanh(H.numpy(), out=H.numpy())  # vectorised; torch's float32 tanh is ~7x slower here
            return H
        return H.tanh_()
    return H.sigmoid_() if name == "sigmoid" else H.relu_()


def _derivative_(A: torch.Tensor, name: str) -> torch.Tensor:
    """φ'(H) from A = φ(H), written over A: 1 − A² (tanh), A − A² (sigmoid), sign A (ReLU)."""
    if name == "tanh":
        return A.mul_(A).neg_().add_(1.0)
    return A.addcmul_(A, A, value=-1.0) if name == "sigmoid" else A.sign_()


class _Loss(torch.autograd.Function):
    """The S losses as an autograd node whose backward is Eq. (∗) of the module docstring."""

    @staticmethod
    def forward(ctx: Any, W1: torch.Tensor, W2: torch.Tensor, spec: TwoLayerSSLLoss) -> torch.Tensor:
        P = spec.points.to(W1.dtype)
        if spec.activation.name == "linear":
            U, saved = P @ (W1.mT @ W2), None  # (S, m, z)
        else:
            H = P @ W1.mT  # (S, m, h)
            if spec.activation.name in _IN_PLACE:
                saved = A = _activate_(H, spec.activation.name)  # H is overwritten
            else:
                A = spec.activation(H)
                saved = (H, A)
            U = (W2.mT @ A.mT).mT  # (S, z, h) @ (S, h, m): the fast orientation of this product
        ctx.spec, ctx.saved, ctx.U = spec, saved, U
        ctx.W = (W1, W2)
        return spec.loss_of_outputs(U)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        spec, (W1, W2) = ctx.spec, ctx.W
        P = spec.points.to(W1.dtype)
        G = spec.output_gradient(ctx.U) * grad[:, None, None]  # (S, m, z)
        if ctx.saved is None:  # linear: M = W₁ᵀW₂, ∂L/∂M = PᵀG
            gM = P.mT @ G  # (S, d, z)
            return W2 @ gM.mT, W1 @ gM, None
        if isinstance(ctx.saved, tuple):
            H, A = ctx.saved
            gW2 = (G.mT @ A).mT
            D = spec.activation.derivative(H)
        else:
            A = ctx.saved
            gW2 = (G.mT @ A).mT  # (S, h, z)
            D = _derivative_(A, spec.activation.name)
        S, m, z = G.shape
        d = P.shape[1]
        Y = (G[..., :, None] * P[:, None, :]).reshape(S, m, z * d)  # Gᵣₗ pᵣ
        inner = (Y.mT @ D).view(S, z, d, -1)  # Σᵣ φ'(Hᵣₖ) Gᵣₗ pᵣ, (S, z, d, h)
        gW1 = (inner * W2.mT[:, :, None, :]).sum(dim=1).mT  # Σₗ W₂[k, l] (...)
        return gW1.contiguous(), gW2.contiguous(), None


class TwoLayerSSLLoss:
    """``loss`` of the network u(x) = W₂ᵀφ(W₁x) on fixed (x, x⁺, x⁻), one value per initialisation.

    ``TwoLayerSSLLoss(x, x_pos, x_neg, activation=..., loss=..., reduction=...)(W1, W2)`` equals
    ``ssl_loss(loss, u(x), u(x⁺), u(x⁻), reduction=reduction)`` with u = ``two_layer_output(·, W1,
    W2, activation)`` (Esser et al. 2024, Eqs. 1-2), W₁ (S, h, d), W₂ (S, h, z), up to rounding; its
    gradient is the closed form (∗) of the module docstring. x, x⁺, x⁻ have shape (n, d) (``x_neg``
    is ignored by ``loss="non_contrastive"``). Chapter ``book/esser-collapse.py`` (Fig. 2).
    """

    def __init__(
        self,
        x: Any,
        x_pos: Any,
        x_neg: Any | None = None,
        *,
        activation: str = "linear",
        loss: str = "contrastive",
        reduction: str = "sum",
    ) -> None:
        self.activation = get_activation(activation)
        self.loss = choice("loss", loss, LOSSES)
        self.reduction = choice("reduction", reduction, ("sum", "mean"))
        x = as_tensor("x", x)
        if x.dim() != 2:
            raise ParameterError(f"x has shape {tuple(x.shape)}; expected (n, d)")
        views = [x, as_tensor("x_pos", x_pos, x.dtype)]
        if loss == "contrastive":
            if x_neg is None:
                raise ParameterError("x_neg=None is not allowed for loss='contrastive'; pass the negatives")
            views.append(as_tensor("x_neg", x_neg, x.dtype))
        _check_same_shape("x", x, **dict(zip(("x_pos", "x_neg"), views[1:])))
        self.n = x.shape[0]
        #: The distinct points among the views (m, d), and where each view's rows are in them.
        self.points, inverse = torch.unique(torch.cat(views), dim=0, return_inverse=True)
        self.index = inverse.split(self.n)

    def _check(self, W1: torch.Tensor, W2: torch.Tensor) -> None:
        if W1.dim() != 3 or W2.dim() != 3 or W1.shape[:2] != W2.shape[:2]:
            raise ParameterError(
                f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be (S, h, d) and (S, h, z)"
            )
        if W1.shape[2] != self.points.shape[1]:
            raise ParameterError(
                f"W1 has shape {tuple(W1.shape)}; its last dimension must be d={self.points.shape[1]}"
            )

    def __call__(self, W1: torch.Tensor, W2: torch.Tensor) -> torch.Tensor:
        """The S losses (S,), differentiable in W1 and W2 through the closed-form gradient."""
        W1, W2 = as_tensor("W1", W1), as_tensor("W2", W2)
        self._check(W1, W2)
        return _Loss.apply(W1, W2.to(W1.dtype), self)

    def loss_of_outputs(self, U: torch.Tensor) -> torch.Tensor:
        """The losses (S,) from the outputs U (S, m, z) on ``points`` (Eqs. 1-2)."""
        views = [U[:, i] for i in self.index]
        return ssl_loss(self.loss, *views, reduction=self.reduction)

    def output_gradient(self, U: torch.Tensor) -> torch.Tensor:
        """∂L/∂U (S, m, z) of the summed losses: Eq. 1 gives xᵢ: u(xᵢ⁻) − u(xᵢ⁺), xᵢ⁺: −u(xᵢ),
        xᵢ⁻: u(xᵢ); Eq. 2 gives xᵢ: −u(xᵢ⁺), xᵢ⁺: −u(xᵢ); each ÷ n for the mean, summed per point."""
        scale = 1.0 / self.n if self.reduction == "mean" else 1.0
        u, up = U[:, self.index[0]], U[:, self.index[1]]
        if self.loss == "contrastive":
            parts = (U[:, self.index[2]] - up, -u, u)
        else:
            parts = (-up, -u)
        G = torch.zeros_like(U)
        for i, g in zip(self.index, parts):
            G.index_add_(1, i, g * scale)
        return G
