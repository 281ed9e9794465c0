"""Contrastive losses on a batch of representations: InfoNCE, quadratic, and the α-CL form.

Tian (2023), Sec. 2. For the representations f1 = f(x[i]) and f2 = f(x[i']) of N samples
(shape (…, N, d), any leading batch dimensions, e.g. many independent runs trained at once),
with d²_ij = ½‖f1[i] - f1[j]‖² and d²_i = ½‖f1[i] - f2[i]‖²:

* :func:`info_nce` — Eq. 1, L = -τ Σ_i log( e^{-d²_i/τ} / (ε e^{-d²_i/τ} + Σ_{j≠i} e^{-d²_ij/τ}) )
  = τ Σ_i log(ε + Σ_{j≠i} exp((d²_i - d²_ij)/τ));
* :func:`alpha_cl_loss` — the α-CL form -Σ_i Σ_j α_ij (d²_ij - d²_i) = -N² tr C_α[f] = -2N² E_α
  (Eq. 2-3; with α from :func:`nlcl.tian.contrastive.infonce_alpha` held fixed its gradient equals
  the InfoNCE gradient);
* :func:`quadratic_loss` — the α-CL loss with uniform α_ij = 1 for j ≠ i:
  Σ_i Σ_{j≠i} (d²_i - d²_ij);
* :func:`contrastive_loss` — the same two losses (``"infonce"``, ``"quadratic"``) in the
  normalization of the paper's released code, for unit-norm outputs of many runs at once with a
  per-run τ (the trainer's loss, Sec. 5; chapter ``book/tian-tokens.py``). It is the one
  implementation the trainers use; its equality with Eq. 1 (ε = 1) and with
  :func:`quadratic_loss` is unit-tested, and the closed-form gradients of
  :mod:`nlcl.tian.tokens.tables` are tested against its autograd gradients.

Reduction: the sum over the N samples of Eq. 1 (``reduction="sum"``, the paper's convention) or
its mean, divided by N (``reduction="mean"``). Leading batch dimensions are never reduced: the
result has shape (…); sum or average it yourself when training many runs at once (summing keeps
each run's gradient independent of the others). Losses are torch functions (numpy inputs are
converted, and a numpy value is returned). Explained in ``book/tian-alpha-cl.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from nlcl.core.tensors import REDUCTIONS, reduce_samples
from nlcl.core.validate import ParameterError, choice
from nlcl.tian.contrastive import energy, half_sq_dists, stack_views

__all__ = [
    "LOSSES",
    "REDUCTIONS",
    "info_nce",
    "alpha_cl_loss",
    "quadratic_loss",
    "get_loss",
    "contrastive_loss",
]

#: Loss names accepted by :func:`get_loss` and :func:`contrastive_loss`.
LOSSES: tuple[str, ...] = ("infonce", "quadratic")


def _pair(f1: Any, f2: Any) -> tuple[torch.Tensor, torch.Tensor, bool]:
    numpy_in = not isinstance(f1, torch.Tensor)
    t1 = torch.as_tensor(np.asarray(f1, dtype=np.float64)) if numpy_in else f1
    t2 = torch.as_tensor(f2, dtype=t1.dtype, device=t1.device) if not isinstance(f2, torch.Tensor) else f2
    if t1.ndim < 2 or tuple(t1.shape) != tuple(t2.shape):
        raise ValueError(
            f"f1 and f2 must both have shape (..., N, d), got {tuple(t1.shape)} and {tuple(t2.shape)}"
        )
    if t1.shape[-2] < 2:
        raise ValueError(f"a contrastive loss needs N >= 2 samples, got N={t1.shape[-2]}")
    return t1, t2, numpy_in


def _out(x: torch.Tensor, numpy_in: bool) -> Any:
    return x.detach().numpy() if numpy_in else x


def _check_finite(loss: torch.Tensor, name: str) -> None:
    if not bool(torch.isfinite(loss.detach()).all()):
        raise ValueError(f"{name}: the loss is not finite (NaN/inf); check the representations and tau")


def info_nce(f1: Any, f2: Any, tau: float, eps: float = 0.0, reduction: str = "sum") -> Any:
    """InfoNCE of Tian 2023, Eq. 1, with ε, on representations f1, f2 of shape (…, N, d) → (…).

    L = τ Σ_i log(ε + Σ_{j≠i} exp((d²_i - d²_ij)/τ)), evaluated with log-sum-exp. Negatives are the
    other samples' first views f1[j]. Its gradient equals -∇ Σ_i Σ_{j≠i} α_ij (d²_ij - d²_i) with
    the stop-gradient α of :func:`nlcl.tian.contrastive.infonce_alpha` (chapter ``tian-alpha-cl``).
    ``reduction``: "sum" over the N samples (Eq. 1) or "mean" (÷ N); leading dims are kept.
    """
    tau = float(tau)
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be a positive finite float, got {tau!r}")
    eps = float(eps)
    if not (eps >= 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be a nonnegative finite float, got {eps!r}")
    t1, t2, numpy_in = _pair(f1, f2)
    n = t1.shape[-2]
    d_ij = half_sq_dists(t1)
    d_i = 0.5 * ((t1 - t2) ** 2).sum(-1)
    eye = torch.eye(n, dtype=torch.bool, device=t1.device)
    s = ((d_i[..., :, None] - d_ij) / tau).masked_fill(eye, float("-inf"))
    if eps > 0:
        s = torch.cat([s, torch.full_like(s[..., :1], math.log(eps))], dim=-1)
    loss = reduce_samples(tau * torch.logsumexp(s, dim=-1).sum(-1), n, reduction)
    _check_finite(loss, "info_nce")
    return _out(loss, numpy_in)


def alpha_cl_loss(f1: Any, f2: Any, alpha: Any, reduction: str = "sum") -> Any:
    """α-CL loss -Σ_i Σ_j α_ij (d²_ij - d²_i) = -N² tr C_α[f] = -2N² E_α (Tian 2023, Eqs. 2-3).

    ``alpha`` (…, N, N) is treated as a constant (pass a detached tensor for the stop-gradient
    of Eq. 2); the sum runs over all (i, j) as in Eq. 3 (a zero diagonal gives Σ_{j≠i}).
    Minimizing it is gradient ascent on E_α. ``reduction``: "sum" (over i) or "mean" (÷ N).
    """
    t1, t2, numpy_in = _pair(f1, f2)
    n = t1.shape[-2]
    a = torch.as_tensor(
        np.asarray(alpha) if not isinstance(alpha, torch.Tensor) else alpha, dtype=t1.dtype, device=t1.device
    )
    loss = reduce_samples(-2.0 * n * n * energy(stack_views(t1, t2), a), n, reduction)
    _check_finite(loss, "alpha_cl_loss")
    return _out(loss, numpy_in)


def quadratic_loss(f1: Any, f2: Any, reduction: str = "sum") -> Any:
    """Quadratic contrastive loss Σ_i Σ_{j≠i} (d²_i - d²_ij): α-CL with uniform α (Tian 2023, Sec. 2).

    Equal to :func:`alpha_cl_loss` with α = 1 - I. ``reduction``: "sum" (over i) or "mean" (÷ N).
    """
    t1, t2, numpy_in = _pair(f1, f2)
    n = t1.shape[-2]
    alpha = 1.0 - torch.eye(n, dtype=t1.dtype, device=t1.device)
    return _out(alpha_cl_loss(t1, t2, alpha, reduction), numpy_in)


def get_loss(name: str):
    """The loss function called ``name`` (one of :data:`LOSSES`); ValueError otherwise."""
    table = {"infonce": info_nce, "quadratic": quadratic_loss}
    if name not in table:
        raise ValueError(f"unknown loss {name!r}; allowed: {', '.join(LOSSES)}")
    return table[name]


def contrastive_loss(
    f1: torch.Tensor, f2: torch.Tensor, loss: str, tau: float | torch.Tensor
) -> torch.Tensor:
    """Per-run contrastive loss of views f1, f2 (R, N, d) → (R,) (Tian 2023, Eq. 1; Sec. 2).

    ``"infonce"``: mean over i of −log[exp(s_ii'/τ) / (exp(s_ii'/τ) + Σ_{j≠i} exp(s_ij/τ))] with
    s_ii' = f1[i]ᵀf2[i] and s_ij = f1[i]ᵀf1[j]; for unit-norm f this equals
    ``info_nce(f1, f2, τ, eps=1, reduction="mean") / τ`` (Eq. 1 with ε = 1, ÷ τN).
    ``"quadratic"`` (uniform α, the released code's form): [−(1/N)Σ_i s_ii' + (1/N²)Σ_{i≠j} s_ij]/τ
    = [``quadratic_loss(f1, f2)`` − Σ_i s_ii'] / (N²τ); the extra −Σ_i s_ii' is the released
    code's (1 + 1/N) factor on the positive term.  Both identities are unit-tested; this batched
    form is 2-7× faster than :func:`info_nce` / :func:`quadratic_loss` and takes a per-run τ (R,).
    ``tau`` is a float or a per-run tensor (R,).  The loss of :func:`nlcl.tian.tokens.training.train_batched`
    and :mod:`nlcl.tian.tokens.tables` (chapter ``book/tian-tokens.py``).
    """
    choice("loss", loss, LOSSES)
    if f1.shape != f2.shape or f1.ndim < 2:
        raise ParameterError(f"f1 {tuple(f1.shape)} and f2 {tuple(f2.shape)} must share a shape (..., N, d)")
    N = f1.shape[-2]
    tau_t = torch.as_tensor(tau, dtype=f1.dtype, device=f1.device)
    if bool((tau_t <= 0).any()):
        raise ParameterError(f"tau={tau!r} must be > 0")
    if loss == "infonce":
        return _info_nce_mean(f1, f2, tau_t)
    pos = (f1 * f2).sum(-1).mean(-1)
    g = f1.sum(-2)
    off = ((g * g).sum(-1) - (f1 * f1).sum((-1, -2))) / N**2
    return (-pos + off) / tau_t


def _info_nce_mean(f1: torch.Tensor, f2: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """InfoNCE as in the released code: cross-entropy with the positive on the diagonal."""
    t = tau if tau.ndim == 0 else tau.reshape(-1, *([1] * (f1.ndim - 1)))
    sim = torch.matmul(f1, f1.transpose(-1, -2))
    pos = (f1 * f2).sum(-1)
    logits = torch.diagonal_scatter(sim, pos, dim1=-2, dim2=-1) / t
    diag = torch.diagonal(logits, dim1=-2, dim2=-1)
    return (torch.logsumexp(logits, dim=-1) - diag).mean(-1)
