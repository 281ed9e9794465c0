"""InfoNCE of a linear model with its gradient in closed form (Esser et al. 2024, Remark 2).

For u = Θx, u⁺ = Θx⁺ and s_ij = u_i·u⁺_j/τ, InfoNCE is L = mean_i [log Σ_j e^{s_ij} − s_ii]
(van den Oord et al. 2018).  With the softmax P_ij = e^{s_ij}/Σ_k e^{s_ik},

    ∂L/∂s = (P − 𝕀)/n,   ∂L/∂u = (∂L/∂s) u⁺/τ,   ∂L/∂u⁺ = (∂L/∂s)ᵀ u/τ,
    ∂L/∂Θ = (∂L/∂u)ᵀ x + (∂L/∂u⁺)ᵀ x⁺.

:class:`InfoNCE` is a :class:`torch.autograd.Function` with this backward.  The forward pass
computes log Σ_j e^{s_ij} as :func:`torch.logsumexp` does (shift by the row maximum, sum the
exponentials, log, add the shift back), so the loss values are those of ``torch.logsumexp``; the
backward reuses the shifted exponentials E_ij = e^{s_ij − m_i} of the forward pass, P = E/Σ_j E_ij,
instead of autograd's second exponential e^{s_ij − lse_i}: one pass of exponentials over the n × n
similarities instead of two.  The gradient differs from autograd's in the last bits (the autograd
formulation is the oracle in ``tests/esser/test_infonce_grad.py``).  Used by
:func:`nlcl.esser.remarks.infonce_loss`; chapter ``book/esser-collapse.py`` (section "Remark 2").
"""

from __future__ import annotations

import math

import torch
from torch.autograd.function import once_differentiable

__all__ = ["InfoNCE"]


class InfoNCE(torch.autograd.Function):
    """L(Θ) = mean_i [logsumexp_j s_ij − s_ii] per leading index; Θ (..., z, d), x and x⁺ (n, d)."""

    @staticmethod
    def forward(ctx, theta: torch.Tensor, x: torch.Tensor, x_pos: torch.Tensor, tau: float) -> torch.Tensor:
        x, x_pos = x.to(theta.dtype), x_pos.to(theta.dtype)
        u, up = x @ theta.transpose(-1, -2), x_pos @ theta.transpose(-1, -2)
        s = (u @ up.transpose(-1, -2)).div_(tau)  # (..., n, n), the one n × n buffer
        diag = torch.diagonal(s, dim1=-2, dim2=-1).clone()
        # torch.logsumexp: shift by the row maximum (0 where it is infinite), sum, log, shift back
        m = s.amax(-1, keepdim=True)
        m.masked_fill_(m.abs() == math.inf, 0)
        E = s.sub_(m).exp_()  # in place: s is not needed past its diagonal
        Z = E.sum(-1)
        lse = Z.log().add_(m.squeeze(-1))
        ctx.save_for_backward(x, x_pos, u, up, E, Z)
        ctx.tau = tau
        return (lse - diag).mean(-1)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad: torch.Tensor):
        x, x_pos, u, up, E, Z = ctx.saved_tensors
        n, tau = x.shape[0], ctx.tau
        # (P − 𝕀)/n, scaled by the incoming gradient and 1/τ: one row weight w_i = g/(n τ Z_i)
        w = (grad[..., None] / (n * tau)) / Z  # (..., n)
        g_u = (E @ up) * w[..., None] - up * (grad[..., None, None] / (n * tau))
        g_up = E.transpose(-1, -2) @ (u * w[..., None]) - u * (grad[..., None, None] / (n * tau))
        g_theta = g_u.transpose(-1, -2) @ x + g_up.transpose(-1, -2) @ x_pos
        return g_theta, None, None, None
