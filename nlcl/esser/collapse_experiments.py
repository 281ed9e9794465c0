"""The experiments of the chapter ``book/esser-collapse.py`` (Esser, Mukherjee & Ghoshdastidar 2024),
as functions the chapter calls, each one the computation the chapter used to write inline.

* :func:`trace_form` — the unconstrained trace loss Tr(ΘCΘᵀ) of a one-layer linear model (Eq. 7),
  batched over initialisations; :func:`collapse_run` — Proposition 1's experiment for one model and
  one loss (joint training, the identity-initialised map, and the run to the collapse horizon).
* :func:`eigen_outputs` — the outputs q = [u(v₁), u(v₂)] on the eigenvectors of C (Fig. 1), of the
  weights or of the weights normalised to unit spectral norm (the scaled loss).
* :func:`pooled_slope`, :func:`replicate_slopes`, :func:`mean_curve_slope` — log-log slopes of the
  Theorem 1 / Fig. 2 gap against the width h.
* :func:`ctilde_monte_carlo`, :func:`frobenius_ratio` — the Monte-Carlo mean of C̃ = Σᵢ xᵢ(xᵢ⁻ − xᵢ⁺)ᵀ over fresh half-moon
  samples (the expectation argument after Eq. 7); :func:`pq_summary` — the same for p positives and
  q negatives per anchor, drawn i.i.d. from a point pool (:func:`pool_sampler`).
* :func:`measure_or_nan` — a per-initialisation claim measured on its values, or as NaN when its
  experiment did not run (an activation or a constraint left out of the parameters).
* :func:`projector_observables`, :func:`decay_rates` — Remark 3's collapse ratios of AΘ and the
  rates fitted to them.

The numbers are bit-identical to the chapter's former inline code (same operations, same order);
tested in ``tests/esser/test_collapse_experiments.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.datasets import make_moons

from nlcl.core.fits import loglog_slope
from nlcl.core.validate import ParameterError
from nlcl.esser.collapse import collapse_horizon, collapse_ratio, linear_output
from nlcl.esser.constraints import gradient_descent
from nlcl.esser.grassmann import outputs_on_eigenvectors
from nlcl.esser.losses import loss_matrix
from nlcl.esser.remarks import sample_pair_matrices

__all__ = [
    "collapse_run",
    "ctilde_monte_carlo",
    "decay_rates",
    "eigen_outputs",
    "frobenius_ratio",
    "mean_curve_slope",
    "measure_or_nan",
    "pool_sampler",
    "pooled_slope",
    "pq_summary",
    "projector_observables",
    "replicate_slopes",
    "trace_form",
]


def trace_form(theta: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Tr(ΘCΘᵀ) for each Θ of a batch ``(..., z, d)``: the trace form of Eq. 7 for u(x) = Θx."""
    return ((theta @ C) * theta).sum(dim=(-2, -1))


def collapse_run(
    fx: torch.Tensor,
    fp: torch.Tensor,
    fn: torch.Tensor,
    *,
    loss: str,
    n_init: int,
    steps: int,
    generator: torch.Generator,
    lr: float = 0.05,
    z: int = 3,
) -> dict[str, Any]:
    """Proposition 1 for one model (features ``fx``, ``fp``, ``fn`` of anchors, positives, negatives)
    and one loss: train ``n_init`` random Θ₀ (z × D, entries N(0, 1/D)) on Tr(ΘCΘᵀ) without
    constraint for ``steps`` steps, and Θ from the identity; then continue each Θ to the horizon T
    of :func:`~nlcl.esser.collapse.collapse_horizon` (separation 1e-6, ``steps`` ≤ T ≤ 20·``steps``)
    with Θ rescaled to unit Frobenius norm after every step (λ₂/λ₁ is scale-free).

    Returns ``traj`` (the first run, observing λ₂/λ₁ of the output covariance), ``same_error``
    (largest relative error of Θ_t = Θ₀·Θ_t^(I)), ``horizon``, ``separation`` and ``final_ratios``
    (λ₂/λ₁ at the horizon, per initialisation).
    """
    if loss not in ("contrastive", "non_contrastive"):
        raise ParameterError(f"loss={loss!r}: one of 'contrastive', 'non_contrastive'")
    D = fx.shape[1]
    CC = loss_matrix(fx, fp, fn if loss == "contrastive" else None, loss=loss, reduction="mean")

    def loss_fn(theta: torch.Tensor) -> torch.Tensor:
        return trace_form(theta, CC)

    theta0 = torch.randn(n_init, z, D, generator=generator) / np.sqrt(D)
    kw = dict(lr=lr, steps=steps, max_norm=1e150, record_every=max(steps // 50, 1))
    traj = gradient_descent(
        loss_fn, (theta0,), observe=lambda th: collapse_ratio(linear_output(fx, th)), **kw
    )
    ident = gradient_descent(loss_fn, (torch.eye(D)[None],), **kw)
    pred = theta0 @ ident.params[0]
    same = float((traj.params[0] - pred).abs().max() / traj.params[0].abs().max())
    horizon, separation = collapse_horizon(CC, lr=lr, target=1e-6, min_steps=steps, max_steps=20 * steps)
    more = gradient_descent(
        loss_fn,
        (traj.params[0] / torch.linalg.matrix_norm(traj.params[0])[:, None, None],),
        lr=lr,
        steps=horizon - steps,
        project_fn=lambda th: (th / torch.linalg.matrix_norm(th)[:, None, None],),
        observe=lambda th: collapse_ratio(linear_output(fx, th)),
        record_every=max(horizon - steps, 1),
    )
    return dict(
        traj=traj,
        same_error=same,
        horizon=horizon,
        separation=separation,
        final_ratios=more.observed[-1].tolist(),
    )


def eigen_outputs(a: torch.Tensor, b: torch.Tensor, V: torch.Tensor, normalise: bool) -> torch.Tensor:
    """q = [u(v₁), u(v₂)] of a two-layer linear model with z = 1 (Fig. 1; Theorem 2's coordinates),
    of the weights ``a``, ``b`` or, with ``normalise``, of W_i/‖W_i‖₂ (the scaled loss's outputs)."""
    if normalise:
        a = a / torch.linalg.matrix_norm(a, ord=2)[:, None, None]
        b = b / torch.linalg.matrix_norm(b, ord=2)[:, None, None]
    return outputs_on_eigenvectors(a, b, V)[..., 0]


def pooled_slope(gaps: pd.DataFrame, act: str, epoch: int, column: str = "gap") -> float:
    """Log-log slope against h of the mean over initialisations of ``column`` (Theorem 1 / Fig. 2)."""
    s = gaps.groupby(["activation", "epoch", "h"])[column].mean().loc[act, epoch]
    return loglog_slope(s.index.values, s.values)


def replicate_slopes(gaps: pd.DataFrame, act: str, epoch: int, column: str = "gap") -> np.ndarray:
    """One log-log slope per replicate (initialisation index), in init order, of ``column`` (gap or
    gap_aligned) against h."""
    t = gaps[(gaps.activation == act) & (gaps.epoch == epoch)].pivot(index="h", columns="init", values=column)
    return np.array([loglog_slope(t.index.values, t[s].values) for s in sorted(t.columns)])


def mean_curve_slope(df: pd.DataFrame) -> float:
    """Log-log slope against h of the mean gap (column ``gap``) at each width."""
    m = df.groupby("h").gap.mean()
    return loglog_slope(m.index.values, m.values)


def ctilde_monte_carlo(*, n: int, reps: int, noise_var: float, seed: int) -> torch.Tensor:
    """Mean of C̃ = xᵀ(x⁻ − x⁺) over ``reps`` fresh samples of ``n`` half-moon anchors (noise 0.05),
    independent half-moon negatives and positives x + ε, ε ~ N(0, noise_var·I); numpy's and torch's
    streams seeded with ``seed``. Its expectation is −n·Cov(x) (the argument after Eq. 7)."""
    rs = np.random.RandomState(seed)
    mc_gen = torch.Generator().manual_seed(seed)
    mc = []
    for _ in range(reps):
        xa = torch.as_tensor(make_moons(n, noise=0.05, random_state=rs)[0])
        xb = torch.as_tensor(make_moons(n, noise=0.05, random_state=rs)[0])
        mc.append(xa.T @ (xb - (xa + np.sqrt(noise_var) * torch.randn(xa.shape, generator=mc_gen))))
    return torch.stack(mc).mean(0)


def frobenius_ratio(a: torch.Tensor, b: torch.Tensor) -> float:
    """‖a‖_F / ‖b‖_F: with a = C̄ + n·Cov(x) and b = n·Cov(x), the relative error of a Monte-Carlo
    mean C̄ of C̃ to its expectation −n·Cov(x) (the argument after Eq. 7)."""
    return float(torch.linalg.matrix_norm(a) / torch.linalg.matrix_norm(b))


def pool_sampler(pool: np.ndarray, mu: np.ndarray, centre: bool = False) -> Callable:
    """``sampler(k, rng)``: ``k`` i.i.d. draws from the rows of ``pool`` (minus ``mu`` if ``centre``)."""

    def sample(k: int, rng: np.random.RandomState) -> np.ndarray:
        pts = pool[rng.randint(0, len(pool), k)]
        return pts - mu if centre else pts

    return sample


def pq_summary(
    pool: np.ndarray,
    mu: np.ndarray,
    *,
    p: int,
    q: int,
    noise_var: float,
    reps: int,
    seed: int,
    centre: bool = False,
    n: int = 50,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Monte-Carlo mean of C = (C̃ + C̃ᵀ)/2 with ``p`` positives and ``q`` negatives per anchor over
    ``reps`` samples of ``n`` anchors drawn i.i.d. from ``pool`` (:func:`pool_sampler`), and its
    standard error (``sample_pair_matrices``; its expectation is n(qμμᵀ − pE[xxᵀ]))."""
    S = sample_pair_matrices(
        pool_sampler(pool, mu, centre), n=n, p=p, q=q, noise_var=noise_var, reps=reps, seed=seed
    )
    S = (S + S.transpose(-1, -2)) / 2
    return S.mean(0), S.std(0) / np.sqrt(reps)


def projector_observables(theta: torch.Tensor, A: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Remark 3: λ₂/λ₁ of Cov[AΘx] and (σ₂/σ₁)² of the singular values of AΘ, stacked."""
    sv = torch.linalg.svdvals(A @ theta)
    return torch.stack([collapse_ratio(linear_output(x, A @ theta)), (sv[..., 1] / sv[..., 0]) ** 2])


def decay_rates(ratio: np.ndarray, t: np.ndarray, low: float, high: float) -> list[float]:
    """Per column s of ``ratio`` (time × initialisation): minus the slope of log(ratio) against ``t``
    fitted where ``low < ratio < high`` (NaN with fewer than three points there)."""
    out = []
    for s in range(ratio.shape[1]):
        window = (ratio[:, s] > low) & (ratio[:, s] < high)
        out.append(-np.polyfit(t[window], np.log(ratio[window, s]), 1)[0] if window.sum() >= 3 else np.nan)
    return out


def measure_or_nan(claim: Any, values: Any) -> Any:
    """``claim.measure_seeds(values)`` (as a list of floats), or ``claim.measure(nan)`` when ``values``
    is ``None``: the experiment did not run with these parameters."""
    if values is None:
        return claim.measure(float("nan"))
    return claim.measure_seeds(np.asarray(values, dtype=float).tolist())
