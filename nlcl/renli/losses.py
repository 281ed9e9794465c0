"""The losses of the reconstructed Ren & Li (2023) model, Eqs. 3-4, and the two-stage β schedule.

Explained in the chapter ``book/renli-simulation.py``.
"""

from __future__ import annotations

import math

import torch

from nlcl.core.validate import ParameterError

__all__ = ["beta_schedule", "contrastive_loss", "non_contrastive_loss"]


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
