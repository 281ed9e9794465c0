"""Minibatch tracking and the linear response of the Gram recursion (Ren & Li 2023, Sec. 5.2, Lemma 5.2).

Split from :mod:`nlcl.renli.tracking` (whose docstring derives the closed Gram recursion): the same
recursion on minibatches (:func:`gram_batch_trajectory`, with the latent signs of
:func:`sample_signs` and the batch loss :func:`batch_loss`), and the first-order propagation of an
initial perturbation along a trajectory (:func:`linear_response`), whose growth a Gronwall argument
such as Ren & Li's Lemma 5.2 bounds. Explained in ``book/renli-simulation.py``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from nlcl.core.validate import (
    ParameterError,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
)
from nlcl.renli.tracking import check_gram, gram_trajectory, gram_update, iterate_gram, stage_schedule

__all__ = ["sample_signs", "batch_loss", "gram_batch_trajectory", "linear_response"]


def sample_signs(
    n_runs: int, n: int, r: int, r_xi: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Latent signs of a batch of n positive pairs per run: w_A = (z, ξ_A), w_B = (z, ξ_B), each (R, n, K).

    Ren & Li, Eq. 1 (a positive pair shares z, never ξ), uniform signs.  Chapter ``book/renli-simulation.py``.
    """
    n_runs, n = positive_int("n_runs", n_runs), positive_int("n", n)
    r, r_xi = positive_int("r", r), positive_int("r_xi", r_xi)
    sign = lambda *shape: torch.randint(0, 2, shape, generator=generator).to(torch.float64) * 2 - 1  # noqa: E731
    z = sign(n_runs, n, r)
    return torch.cat([z, sign(n_runs, n, r_xi)], -1), torch.cat([z, sign(n_runs, n, r_xi)], -1)


def batch_loss(
    G: torch.Tensor, w_a: torch.Tensor, w_b: torch.Tensor, r: int, r_xi: int, lam: float, beta: float
) -> torch.Tensor:
    """The minibatch loss of :mod:`nlcl.renli.losses` as a function of G and the batch's latent signs.

    With X = [W_A P_A, W_B P_B]/√m, ⟨W_A x_A,i, W_B x_B,j⟩/m = w_A,iᵀ G_AB w_B,j and the batch
    normalisation s_A² = mean_i w_A,iᵀ G_AA w_A,i (Ren & Li, Eq. 2), so S_ij = w_A,iᵀ G_AB w_B,j/(s_A s_B)
    and the loss is :func:`nlcl.renli.losses.contrastive_loss` (λ > 0) or ``non_contrastive_loss``
    (λ = 0) of those similarities (tested against them).  G (..., 2K, 2K), w_a, w_b (..., n, K) → (...,).
    Chapter ``book/renli-simulation.py``.
    """
    K = check_gram(G, r, r_xi)
    lam = nonneg_float("lam", lam)
    if w_a.shape[-1] != K or w_b.shape != w_a.shape or w_a.shape[-2] < 2:
        raise ParameterError(
            f"w_a {tuple(w_a.shape)} and w_b {tuple(w_b.shape)} must be equal (..., n, {K}) with n >= 2"
        )
    quad = lambda w, B: ((w @ B) * w).sum(-1).mean(-1)  # noqa: E731
    s_a, s_b = quad(w_a, G[..., :K, :K]).sqrt(), quad(w_b, G[..., K:, K:]).sqrt()
    S = (w_a @ G[..., :K, K:] @ w_b.transpose(-1, -2)) / (s_a * s_b)[..., None, None]
    loss = -torch.diagonal(S, dim1=-2, dim2=-1).mean(-1)
    if lam == 0:
        return loss
    beta = positive_float("beta", beta)
    n = S.shape[-1]
    masked = (beta * S).masked_fill(torch.eye(n, dtype=torch.bool), float("-inf"))
    rows = (torch.logsumexp(masked, -1) - math.log(n - 1)).mean(-1)
    cols = (torch.logsumexp(masked, -2) - math.log(n - 1)).mean(-1)
    return loss + lam * (rows + cols) / (2.0 * beta)


def gram_batch_trajectory(
    G0: torch.Tensor,
    D: torch.Tensor,
    batches,
    *,
    r: int,
    r_xi: int,
    lam: float,
    steps_stage1: int,
    steps_stage2: int,
    lr: float,
    beta1: float = 0.05,
    beta2: float = 2.0,
    record_every: int = 1,
    setting: str = "",
) -> tuple[np.ndarray, torch.Tensor]:
    """:func:`gram_trajectory` on minibatches: step t uses ``batches(t) = (w_a, w_b)`` of :func:`sample_signs`
    (shapes broadcast against G0's leading shape, so runs may share a batch) and :func:`batch_loss`.

    Exactly gradient descent on W (step η·m) for the minibatch loss (module docstring; tested).
    Ren & Li, Algorithm 3.1 with "polynomially many samples at each step" (Thm. 4.3).  Returns the
    recorded steps and G (T, ..., 2K, 2K).  Raises ParameterError on bad arguments and NonFiniteError
    on a non-finite G (its message starts with ``setting`` when given).  Chapter ``book/renli-simulation.py``.
    """
    steps1, steps2 = nonneg_int("steps_stage1", steps_stage1), nonneg_int("steps_stage2", steps_stage2)
    lr, record_every = positive_float("lr", lr), positive_int("record_every", record_every)
    check_gram(G0, r, r_xi)
    if D.shape != G0.shape[:-1]:
        raise ParameterError(f"D has shape {tuple(D.shape)}; expected {tuple(G0.shape[:-1])}")
    beta_at = stage_schedule(steps1, steps2, beta1, beta2)

    def step(G: torch.Tensor, t: int) -> torch.Tensor:
        w_a, w_b = batches(t)
        leaf = G.requires_grad_(True)
        (S,) = torch.autograd.grad(batch_loss(leaf, w_a, w_b, r, r_xi, lam, beta_at(t)).sum(), leaf)
        return gram_update(G.detach(), D, S, lr)

    return iterate_gram(
        G0, step, steps1=steps1, steps2=steps2, lr=lr, record_every=record_every, setting=setting
    )


def linear_response(
    G_ref0: torch.Tensor,
    dG0: torch.Tensor,
    D: torch.Tensor,
    *,
    h: float = 1e-4,
    **trajectory_kwargs,
) -> tuple[np.ndarray, torch.Tensor]:
    """First-order propagation of initial perturbations dG0 along the trajectory from G_ref0.

    e_t = J_{t−1}···J_0 dG0 with J_s the Jacobian of the step map at the reference trajectory (the
    Taylor expansion around the infinite-width trajectory of Ren & Li, Sec. 5.2, whose growth a
    Gronwall argument such as their Lemma 5.2 bounds), computed as the central difference
    (Φ^t(G_ref0 + h dG0) − Φ^t(G_ref0 − h dG0))/(2h): error O(h²‖dG0‖²), no Jacobian formed.
    G_ref0, dG0 (R, 2K, 2K), D (R, 2K); ``trajectory_kwargs`` go to :func:`gram_trajectory`.
    Returns the recorded steps and e (T, R, 2K, 2K).  Chapter ``book/renli-simulation.py``.
    """
    h = positive_float("h", h)
    if dG0.shape != G_ref0.shape:
        raise ParameterError(f"dG0 has shape {tuple(dG0.shape)}; expected {tuple(G_ref0.shape)}")
    steps, G = gram_trajectory(
        torch.cat([G_ref0 + h * dG0, G_ref0 - h * dG0]), torch.cat([D, D]), **trajectory_kwargs
    )
    R = G_ref0.shape[0]
    return steps, (G[:, :R] - G[:, R:]) / (2 * h)
