"""The contrastive loss of Ren & Li (2023), Eq. 3, evaluated in one pass for the heads of the captions chapter.

:func:`nlcl.renli.losses.contrastive_loss` (the reference, shared with ``book/renli-simulation.py``)
runs two ``logsumexp`` over the similarity matrix and lets autograd differentiate them: about twenty
passes over the ``(R, n, n)`` matrix per step.  :func:`fused_contrastive_loss` computes the same loss
with one exponential, its row and column sums, and the gradient in closed form.  Used by
:func:`nlcl.renli.heads.train_heads`; chapter ``book/renli-mnist-captions.py``.
"""

from __future__ import annotations

import math

import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.losses import contrastive_loss

__all__ = ["fused_contrastive_loss"]

#: Smallest row or column sum of ``exp(β S − max β S)`` accepted by the shared stabilizer; below it
#: the largest term of that row or column is under ``e^-50 / n`` and the reference is used instead.
_MIN_SUM = math.exp(-50.0)


class _FusedLoss(torch.autograd.Function):
    """Assemble the loss from the precomputed exponentials; backward is the closed form of
    :func:`fused_contrastive_loss`'s docstring."""

    @staticmethod
    def forward(ctx, f_a, f_b, lam, beta, diag, e, rows, cols, shift):
        n = f_a.shape[-2]
        ctx.save_for_backward(f_a, f_b, lam, e, rows, cols)
        log_mean = math.log(n - 1)
        lse = (rows.log().mean(-1) + cols.log().mean(-1)) + 2.0 * (shift - log_mean)
        return -diag.mean(-1) + lam * lse / (2.0 * beta)

    @staticmethod
    def backward(ctx, grad):
        f_a, f_b, lam, e, rows, cols = ctx.saved_tensors
        n = f_a.shape[-2]
        coef = grad * lam / (2.0 * n)
        g = torch.add((coef[:, None] / rows)[..., None], (coef[:, None] / cols)[..., None, :])
        g.mul_(e)
        g.diagonal(0, -2, -1).copy_((-grad / n)[:, None].expand(-1, n))
        grad_a = torch.bmm(g, f_b)
        grad_b = torch.bmm(g.transpose(-1, -2), f_a)
        return grad_a, grad_b, None, None, None, None, None, None, None


def fused_contrastive_loss(
    f_a: torch.Tensor, f_b: torch.Tensor, lam: torch.Tensor, beta: float | torch.Tensor
) -> torch.Tensor:
    """:func:`~nlcl.renli.losses.contrastive_loss` (Ren & Li, Eq. 3) of ``R`` runs, ``f_a, f_b`` (R, n, m) → (R,).

    With ``P = f_a f_bᵀ``, ``S = βP`` and one stabilizer per run ``M = max_{i≠j} S_ij``, the
    exponentials ``E_ij = exp(S_ij − M)`` (``E_ii = 0``) give both log-sums of Eq. 3 at once,
    ``log Σ_{j≠i} exp S_ij = log r_i + M`` with ``r = E 1`` and ``log Σ_{i≠j} exp S_ij = log c_j + M``
    with ``c = Eᵀ1``, so ``L = −mean_i P_ii + (λ/2β)[mean_i log r_i + mean_j log c_j + 2M − 2 log(n−1)]``.
    Its gradient is ``∂L/∂P = G`` with ``G_ij = (λ/2n) E_ij (1/r_i + 1/c_j)`` off the diagonal and
    ``G_ii = −1/n``, hence ``∇_{f_a} = G f_b`` and ``∇_{f_b} = Gᵀ f_a``.  Equal to the reference up
    to float rounding while every row and column keeps a term within ``e^-50`` of ``e^M``; otherwise
    (and for non-finite inputs) the reference :func:`~nlcl.renli.losses.contrastive_loss` is
    evaluated instead.  ``lam`` (R,), ``beta`` positive scalar or (R,).  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If the shapes differ or are not (R, n, m), ``n < 2``, ``lam`` is not (R,) or negative, or
        ``beta`` is not positive.
    """
    if f_a.shape != f_b.shape or f_a.dim() != 3:
        raise ParameterError(f"f_a {tuple(f_a.shape)} and f_b {tuple(f_b.shape)} must be equal (R, n, m)")
    R, n = f_a.shape[0], f_a.shape[1]
    if n < 2:
        raise ParameterError(f"the batch has n={n} pairs; the contrastive loss needs n >= 2 (negatives)")
    lam = torch.as_tensor(lam, dtype=f_a.dtype, device=f_a.device)
    if lam.shape != (R,):
        raise ParameterError(f"lam has shape {tuple(lam.shape)}; expected ({R},)")
    if not bool(torch.isfinite(lam).all()) or bool((lam < 0).any()):
        raise ParameterError(f"lam={lam.tolist()} must be finite and >= 0")
    beta_t = torch.as_tensor(beta, dtype=f_a.dtype, device=f_a.device).expand(R)
    if not bool(torch.isfinite(beta_t).all()) or bool((beta_t <= 0).any()):
        raise ParameterError(f"beta={beta!r} must be finite and > 0")
    with torch.no_grad():
        p = torch.bmm(f_a, f_b.transpose(-1, -2))
        diag = p.diagonal(0, -2, -1).clone()
        p.diagonal(0, -2, -1).fill_(-math.inf)
        shift = beta_t * p.amax((-2, -1))
        e = torch.addcmul(-shift[:, None, None], p, beta_t[:, None, None]).exp_()
        rows, cols = e.sum(-1), e.sum(-2)
        ok = bool((torch.minimum(rows.amin(-1), cols.amin(-1)) > _MIN_SUM).all())
    if not ok:
        return contrastive_loss(f_a, f_b, lam, beta_t)
    return _FusedLoss.apply(f_a, f_b, lam, beta_t, diag, e, rows, cols, shift)
