"""The one-layer chapter beyond Theorems 1-2 (Tian 2023, Sec. 3.3, Fig. 1, App. B.5), as functions.

Steps of ``book/tian-one-layer.py`` that the chapter used to write inline, with the chapter's
operations in the chapter's order (the numbers are the same); Sec. 3.1-3.2 are in
:mod:`nlcl.tian.one_layer_study`:

* Theorem 3 (Sec. 3.3, Eqs. 10-11, 103): :func:`power_iteration_near_patterns`,
  :func:`eq11_quadratic`, :func:`theorem3_tanh`, and with ReLU near every pattern
  :func:`theorem3_near_patterns`;
* more nodes, more patterns (Sec. 3, Fig. 1): :func:`more_nodes`;
* rotation augmentation (App. B.5, Eqs. 105-108): :func:`rotation_sweep`, :func:`cyclic_study`,
  :func:`profile_maxima`.

Explained in the chapter ``book/tian-one-layer.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlcl.core.activations import get_activation
from nlcl.core.blocks import axis_blocks
from nlcl.tian.contrastive import stack_views
from nlcl.tian.landscape import (
    gate_matrix,
    noisy_population_gate_matrix,
    periodic_local_maxima,
    population_gate_matrix,
    power_iteration,
    train_filters,
)
from nlcl.tian.latent_data import (
    latent_summation_support,
    nearly_orthonormal_basis,
    rotate_2d,
)
from nlcl.tian.local_theory import (
    critical_point_diagnostics,
    eq11_radius,
    eq11_sup_omega,
    eq11_sup_omega_on_cap,
    kappa_estimate,
    lipschitz_estimate,
    perturbation_growth,
)
from nlcl.tian.one_layer_study import gate_fn, gaussian_alpha_fn, population_gate_fn

__all__ = [
    "SWEEP_BLOCK_ELEMENTS",
    "cyclic_study",
    "eq11_quadratic",
    "more_nodes",
    "power_iteration_near_patterns",
    "profile_maxima",
    "rotation_sweep",
    "theorem3_near_patterns",
    "theorem3_tanh",
]


# -- Theorem 3 (Sec. 3.3) ---------------------------------------------------------------------


def _basis_for_eps(d: int, m: int, eps: float, seed: int, k: int) -> np.ndarray:
    """The nearly orthonormal U of the k-th ε (the same U in every Theorem 3 study)."""
    return nearly_orthonormal_basis(d, m, eps, rng=np.random.default_rng(seed + 100 + k))


def power_iteration_near_patterns(
    d: int,
    m: int,
    q: float,
    activation: str,
    eps_values: Sequence[float],
    seed: int,
    steps: int = 200,
) -> tuple[list[float], list[float], list[np.ndarray]]:
    """Power iteration (Eq. PI) from each u_m on the exact latent summation model, for each
    ‖UᵀU − I‖₂ = ε (Theorem 3, Fig. 1 right).

    Returns the largest final step ‖w(t+1) − w(t)‖ per ε, the largest (1 − |cos(w*, u_m)|)/ε per
    ε > 0, and per ε the steps (steps, M).
    """
    final_step, closeness, steps_per_eps = [], [], []
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        at, ap, _ = latent_summation_support(u_e, q)
        traj = power_iteration(lambda w: population_gate_matrix(at, ap, w, activation), u_e.T, steps=steps)
        step = np.linalg.norm(np.diff(traj, axis=0), axis=-1)  # (steps, M)
        final_step.append(step[-1].max())
        cos_m = np.abs((traj[-1] * u_e.T).sum(-1))
        if e > 0:
            closeness.append(((1 - cos_m) / e).max())
        steps_per_eps.append(step)
    return final_step, closeness, steps_per_eps


def _eq11_estimates(a_fn, u_e: np.ndarray, rng: np.random.Generator):
    """The global constants of Eq. 11 and power iteration from the patterns (Theorem 3).

    L (256 pairs at distance 1e-4) and κ (64 pairs within 0.05 rad of the columns of ``u_e``),
    both drawn from ``rng`` in that order; then power iteration from u_m for 1000 steps.  Returns
    ``(L, κ, trajectory, last step length per pattern)``.
    """
    d = u_e.shape[0]
    l_e = lipschitz_estimate(a_fn, n_points=256, dim=d, radius=1e-4, rng=rng)
    kap_e = kappa_estimate(a_fn, u_e.T, radius=0.05, n_pairs=64, rng=rng)
    traj = power_iteration(a_fn, u_e.T, steps=1000)
    return l_e, kap_e, traj, np.linalg.norm(traj[-1] - traj[-2], axis=-1)


def eq11_quadratic(
    d: int, m: int, q: float, eps_values: Sequence[float], seed: int, gammas: np.ndarray
) -> np.ndarray:
    """Eq. 11 for h(x) = x² on the exact latent summation model, for each ε and pattern.

    L (256 pairs at 1e-4) and κ (64 pairs within 0.05 rad) estimated with
    ``default_rng([seed, 3, k])``; sup ω over B_γ (Eq. 103, 32 points) for each γ of ``gammas``;
    power iteration for 1000 steps. Returns rows ``(ε, m, L, κ, min_γ(sup ω − γ), final step)``.
    """
    rows = []
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        at, ap, _ = latent_summation_support(u_e, q)
        a_quad = population_gate_fn(at, ap, "quadratic")
        rng_e = np.random.default_rng([seed, 3, k])
        l_e, kap_e, traj, step = _eq11_estimates(a_quad, u_e, rng_e)
        for j in range(m):
            sup_om = eq11_sup_omega(a_quad, u_e[:, j], gammas, l_e, kap_e, n_points=32, rng=rng_e)
            rows.append((e, j, l_e, kap_e, float((sup_om - gammas).min()), step[j]))
    return np.array(rows)


def theorem3_tanh(
    d: int, m: int, q: float, eps_values: Sequence[float], seed: int, gammas: np.ndarray
) -> np.ndarray:
    """Theorem 3 where Eq. 11 holds: tanh on small inputs, x = 0.3 U diag(1, 0.2, …, 0.2) y.

    For each ε (the U of :func:`power_iteration_near_patterns`) and pattern: whether the sampled
    sup ω ≤ γ for some γ of ``gammas`` (L, κ with ``default_rng([seed, 4, k])``), and whether power
    iteration from u_m (1000 steps) converges (final step ≤ 1e-10) to a critical point
    (‖P⊥A w‖ ≤ 1e-8 λ₁) inside B_γ of the smallest such γ (Eq. 103, to round-off 1e-12). Returns
    rows ``(ε, m, Eq. 11 holds, converged into B_γ)``.
    """
    strength3 = 0.3 * np.r_[1.0, np.full(m - 1, 0.2)]
    rows = []
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        _, ap, y_at = latent_summation_support(u_e, q)
        at3 = (y_at * strength3) @ u_e.T
        a_tanh = population_gate_fn(at3, ap, "tanh")
        rng_e = np.random.default_rng([seed, 4, k])
        l_e, kap_e, traj, step = _eq11_estimates(a_tanh, u_e, rng_e)
        diag_end = critical_point_diagnostics(a_tanh, traj[-1])
        c0_e = critical_point_diagnostics(a_tanh, u_e.T)["top_cos"]
        for j in range(m):
            sup_om = eq11_sup_omega(a_tanh, u_e[:, j], gammas, l_e, kap_e, n_points=32, rng=rng_e)
            ok_g = gammas[sup_om <= gammas]
            dist = np.linalg.norm(traj[-1, j] - u_e[:, j])  # B_γ of Eq. 103 (at ε = 0: {u_m})
            inside = bool(ok_g.size) and dist <= eq11_radius(ok_g[0], c0_e[j]) + 1e-12
            conv = step[j] <= 1e-10 and diag_end["residual"][j] <= 1e-8
            rows.append((e, j, bool(ok_g.size), bool(inside and conv)))
    return np.array(rows, dtype=float)


def theorem3_near_patterns(
    d: int,
    m: int,
    q: float,
    eps_values: Sequence[float],
    seed: int,
    gammas: np.ndarray,
    *,
    activation: str = "relu",
    sigma: float = 0.15,
    weakest: float = 0.95,
    n_starts: int = 3,
    tilt: float = 0.01,
    steps: int = 300,
) -> pd.DataFrame:
    """Theorem 3 near every pattern: ReLU on a smooth A(w) with patterns of similar strength (Sec. 3.3).

    Data: the latent summation model with strengths s_m from 1 down to ``weakest``,
    x = U diag(s) y + σz, z ~ N(0, I), U nearly orthonormal (‖UᵀU − I‖₂ = ε, the U of
    :func:`power_iteration_near_patterns` for the k-th ε); A(w) = V[x̃ʷ] exactly
    (:func:`nlcl.tian.landscape.noisy_population_gate_matrix`, Lipschitz because of the noise). For
    each ε and pattern, ``n_starts`` starts w(0) tilted by ``tilt`` rad from u_m in random directions
    (``default_rng([seed, 5, k])``):

    * Eq. 11 (:func:`nlcl.tian.local_theory.eq11_sup_omega_on_cap`, L and κ on B_γ, 32 points): the
      smallest γ of ``gammas`` with sup ω ≤ γ (``gamma``, NaN if none; ``eq11``), and the same with
      the global L of the paper's statement (:func:`lipschitz_estimate`, 256 points on the sphere at
      1e-4; ``eq11_global``);
    * power iteration (Eq. PI on Â, Eq. 104) for ``steps`` steps: ``converged`` (last step ≤ 1e-10),
      ``critical`` (‖P⊥A w‖ ≤ 1e-8 max|λ|), ``inside`` (‖w* − w(0)‖ ≤ the radius of B_γ, Eq. 103),
      ``lme`` (|cos(w*, φ₁(A(w*)))| ≥ 1 − 1e-10, Lemma 11: the maximal eigenvector) and ``monotone``
      (c_t = |cos(w(t), φ₁(w(t)))| never decreases by more than 1e-12, Lemma 11);
    * ``stable``: every one of 8 perturbations of w* by 0.01 rad ends below half its size under the
      dynamics of Eq. 7 (:func:`nlcl.tian.local_theory.perturbation_growth`, 400 scale-free steps
      of 0.5); ``cos_um`` = |cos(w*, u_m)|; ``spread`` the largest distance between the limits of
      the starts of the same (ε, m).

    Returns one row per (ε, m, start) with also ``c0``, ``L``, ``kappa`` and ``nu`` (the largest
    ν = ω − μ, the part of ω due to A varying; on B_γ of ``gamma``) and ``L_global``.
    """
    strengths = np.linspace(1.0, weakest, m)
    rows = []
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        _, ap, y_at = latent_summation_support(u_e, q)
        atoms = (y_at * strengths) @ u_e.T

        def a_fn(w, atoms=atoms, ap=ap):
            return noisy_population_gate_matrix(atoms, ap, sigma, w, activation)

        rng_e = np.random.default_rng([seed, 5, k])
        l_glob = lipschitz_estimate(a_fn, n_points=256, dim=d, radius=1e-4, rng=rng_e)
        tang = rng_e.standard_normal((m, n_starts, d))
        tang -= (tang * u_e.T[:, None]).sum(-1, keepdims=True) * u_e.T[:, None]
        tang /= np.linalg.norm(tang, axis=-1, keepdims=True)
        w0 = np.cos(tilt) * u_e.T[:, None] + np.sin(tilt) * tang  # (m, starts, d)
        traj = power_iteration(a_fn, w0, steps=steps)  # (steps + 1, m, starts, d)
        c_t = critical_point_diagnostics(a_fn, traj)["top_cos"]  # (steps + 1, m, starts)
        w_end = traj[-1]
        end = critical_point_diagnostics(a_fn, w_end)
        growth = perturbation_growth(a_fn, w_end, angle=0.01, n_dirs=8, lr=0.5, steps=400, rng=rng_e)
        step = np.linalg.norm(traj[-1] - traj[-2], axis=-1)
        for j in range(m):
            spread = max(
                np.linalg.norm(w_end[j, a] - w_end[j, b]) for a in range(n_starts) for b in range(n_starts)
            )
            for i in range(n_starts):
                cap = eq11_sup_omega_on_cap(
                    a_fn, w0[j, i], gammas, n_points=32, global_lipschitz=l_glob, rng=rng_e
                )
                ok = np.flatnonzero(cap["sup_omega"] <= gammas)
                g = ok[0] if ok.size else int(np.argmin(cap["sup_omega"] - gammas))
                rows.append(
                    dict(
                        eps=e,
                        m=j,
                        start=i,
                        c0=float(c_t[0, j, i]),
                        gamma=float(gammas[g]) if ok.size else np.nan,
                        L=float(cap["lipschitz"][g]),
                        kappa=float(cap["kappa"][g]),
                        nu=float(cap["sup_nu"][g]),
                        L_global=l_glob,
                        eq11=bool(ok.size),
                        eq11_global=bool((cap["sup_omega_global"] <= gammas).any()),
                        converged=bool(step[j, i] <= 1e-10),
                        critical=bool(end["residual"][j, i] <= 1e-8),
                        inside=bool(np.linalg.norm(w_end[j, i] - w0[j, i]) <= cap["radius"][g] + 1e-12),
                        lme=bool(end["top_cos"][j, i] >= 1 - 1e-10),
                        monotone=bool((np.diff(c_t[:, j, i]) >= -1e-12).all()),
                        stable=bool((growth[:, j, i] < 0.5).all()),
                        cos_um=float(abs(w_end[j, i] @ u_e[:, j])),
                        spread=float(spread),
                    )
                )
    return pd.DataFrame(rows)


# -- More nodes, more patterns (Sec. 3, Fig. 1) -----------------------------------------------


def more_nodes(
    x: np.ndarray,
    w0: np.ndarray,
    u: np.ndarray,
    activation: str,
    alpha: str,
    tau: float,
    ks: np.ndarray,
    steps: int,
) -> dict[str, Any]:
    """Train K filters from ``w0`` (seeds, K, d) with ``activation`` and with linear h (Eq. 7,
    uniform or Gaussian α), and count the patterns u_m recovered (|cos| ≥ 0.95) by the first K
    filters, K in ``ks``.

    Returns ``recovered`` ({h: (seeds, len(ks))}) and, for linear h, the top principal direction
    ``v1`` of the sample (top eigenvector of the constant C_α[x] of uniform α), each filter's
    ``lin_cos`` = |cos(w, v₁)|, ``lin_top2`` (fraction of a filter in span(v₁, v₂)), ``lam`` (the
    eigenvalues) and ``lin_decay`` = exp(−η(λ₁ − λ₂)·steps), the predicted shrinking of the angle
    to v₁ over the run (η = 0.5).
    """
    views = stack_views(x, x)
    out: dict[str, Any] = {"recovered": {}}
    for h in (activation, "linear"):
        if alpha == "gaussian":
            fn = gate_fn(views, h, gaussian_alpha_fn(x, h, tau))
        else:
            fn = gate_fn(views, h)
        w_fin = train_filters(fn, w0, lr=0.5, steps=steps)
        if h == "linear":
            # uniform α: A(w) = C_α[x], any w
            lam, vec = np.linalg.eigh(gate_matrix(views, w0[0, 0], "linear"))
            v1 = vec[:, -1]
            nrm = np.linalg.norm(w_fin, axis=-1)
            out["v1"] = v1
            out["lam"] = lam
            out["lin_cos"] = np.abs(w_fin @ v1) / nrm  # (seeds, K)
            # near span(v₁, v₂) the angle to v₁ shrinks like exp(−η(λ₁−λ₂)t)
            out["lin_top2"] = np.linalg.norm(w_fin @ vec[:, -2:], axis=-1) / nrm
            out["lin_decay"] = float(np.exp(-0.5 * (lam[-1] - lam[-2]) * steps))
        hit = np.abs(w_fin @ u) >= 0.95  # (seeds, K, M)
        out["recovered"][h] = np.stack([hit[:, :k].any(1).sum(-1) for k in ks], axis=1)
    return out


# -- Rotation augmentation (App. B.5) ---------------------------------------------------------


#: float64 elements of h(wᵀR(t)x0) formed at once in :func:`rotation_sweep` (a cache-sized block)
SWEEP_BLOCK_ELEMENTS = 2**17


def rotation_sweep(
    x: np.ndarray, w: np.ndarray, activation: str, betas: Sequence[float], n_t: int = 2048
) -> dict[float, np.ndarray]:
    """E_α(w) with rotation augmentation t ~ U[−β, β] for each β (Eq. 105, uniform α):
    ½ V_{x0}[b(w|x0)], b(w|x0) = E_t h(wᵀR(t)x0) by an ``n_t``-point midpoint rule. ``x`` (n, 2)
    points, ``w`` (G, 2) filters; returns {β: (G,)}. b is formed a block of filters at a time
    (:data:`SWEEP_BLOCK_ELEMENTS`; the same numbers as all at once)."""
    h = get_activation(activation)
    curves = {}
    for beta in betas:
        t = (np.arange(n_t) + 0.5) / n_t * 2 * beta - beta  # midpoint rule on [-β, β]
        xt = rotate_2d(x[:, None, :], t[None, :])  # (n, T, 2)
        blocks = axis_blocks(max(len(w), 1), xt.shape[0] * xt.shape[1], SWEEP_BLOCK_ELEMENTS)
        b = np.concatenate(
            [h(np.einsum("gd,ntd->gnt", w[c], xt)).mean(-1) for c in blocks]
        )  # b(w|x0), (G, n)
        curves[beta] = 0.5 * b.var(-1)  # Eq. 105, uniform α
    return curves


def cyclic_study(
    x: np.ndarray,
    w: np.ndarray,
    activation: str,
    e_scale: float,
    n_grid: int,
    orders: Sequence[int] = (2, 3, 4, 6),
) -> dict[int, dict[str, float]]:
    """Eq. 105 with t uniform on the cyclic group C_n, for each n of ``orders``, on the periodic
    θ grid of ``n_grid`` filters ``w``: orbits of local maxima (prominence 1e-6·``e_scale``,
    divided by n), the invariance error max|E(θ + 2π/n) − E(θ)|/``e_scale`` (NaN when n does not
    divide ``n_grid``: Eqs. 107-108) and the range/``e_scale``."""
    h = get_activation(activation)
    out = {}
    for n_rot in orders:
        xt = rotate_2d(x[:, None, :], 2 * np.pi * np.arange(n_rot)[None, :] / n_rot)
        e_n = 0.5 * h(np.einsum("gd,ntd->gnt", w, xt)).mean(-1).var(-1)
        shift = n_grid // n_rot  # 2π/n in grid steps (exact when n divides n_grid)
        n_peaks = len(periodic_local_maxima(e_n, prominence=1e-6 * e_scale))
        out[n_rot] = dict(
            orbits=n_peaks / n_rot,
            invariance=float(np.abs(np.roll(e_n, -shift) - e_n).max() / e_scale)
            if n_grid % n_rot == 0
            else np.nan,
            range=float((e_n.max() - e_n.min()) / e_scale),
        )
    return out


def profile_maxima(profile: Sequence[float]) -> int:
    """Local maxima of a profile over the polar angle (not periodic): an interior point above both
    neighbours, an end point above its one neighbour (the first and last rows are next to the
    invariant poles ±e₃; App. B.5 orbits under SO(2))."""
    prof = np.asarray(profile)
    return int(
        sum(
            (i == 0 or prof[i] > prof[i - 1]) and (i == len(prof) - 1 or prof[i] > prof[i + 1])
            for i in range(len(prof))
        )
    )
