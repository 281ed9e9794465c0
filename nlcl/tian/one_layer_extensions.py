"""The one-layer chapter beyond Theorems 1-2 (Tian 2023, Sec. 3.3, Fig. 1, App. B.5), as functions.

Steps of ``book/tian-one-layer.py`` that the chapter used to write inline, with the chapter's
operations in the chapter's order (the numbers are the same); Sec. 3.1-3.2 are in
:mod:`nlcl.tian.one_layer_study`:

* Theorem 3 (Sec. 3.3, Eqs. 10-11, 103): :func:`power_iteration_near_patterns`,
  :func:`eq11_quadratic`, :func:`theorem3_tanh`, and with ReLU near every pattern
  :func:`theorem3_near_patterns`; its lemmas (App. G, Lemmas 7-11) on those runs:
  :func:`theorem3_lemmas`;
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
    periodic_local_maxima,
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
    noisy_population_gate_matrix,
    perturbation_growth,
)
from nlcl.tian.one_layer_study import gate_fn, gaussian_alpha_fn, population_gate_fn
from nlcl.tian.power_iteration_lemmas import (
    iterated_matrix,
    lemma9_slope,
    lemma11_conclusions,
    trajectory_lemmas,
)

__all__ = [
    "SWEEP_BLOCK_ELEMENTS",
    "cyclic_study",
    "eq11_quadratic",
    "more_nodes",
    "power_iteration_near_patterns",
    "profile_maxima",
    "rotation_sweep",
    "theorem3_lemmas",
    "theorem3_near_patterns",
    "theorem3_tanh",
]


# -- Theorem 3 (Sec. 3.3) ---------------------------------------------------------------------


def _basis_for_eps(d: int, m: int, eps: float, seed: int, k: int) -> np.ndarray:
    """The nearly orthonormal U of the k-th ε (the same U in every Theorem 3 study)."""
    return nearly_orthonormal_basis(d, m, eps, rng=np.random.default_rng(seed + 100 + k))


def _per_eps(d: int, m: int, q: float, eps_values: Sequence[float], seed: int, tag: int):
    """The per-ε setup of the Theorem 3 studies: for the k-th ε, yields ``(ε, U, support, rng)``
    with U of :func:`_basis_for_eps`, the support ``(atoms, probs, latent atoms)`` of
    :func:`latent_summation_support` and the study's generator ``default_rng([seed, tag, k])``."""
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        yield e, u_e, latent_summation_support(u_e, q), np.random.default_rng([seed, tag, k])


def power_iteration_near_patterns(
    d: int,
    m: int,
    q: float,
    activation: str,
    eps_values: Sequence[float],
    seed: int,
    steps: int = 200,
    runs: list | None = None,
) -> tuple[list[float], list[float], list[np.ndarray]]:
    """Power iteration (Eq. PI) from each u_m on the exact latent summation model, for each
    ‖UᵀU − I‖₂ = ε (Theorem 3, Fig. 1 right).

    Returns the largest final step ‖w(t+1) − w(t)‖ per ε, the largest (1 − |cos(w*, u_m)|)/ε per
    ε > 0, and per ε the steps (steps, M). With a list ``runs``, appends per ε a dict with ``h``, ``eps``,
    ``a_fn`` (w ↦ A(w)) and ``traj`` (steps + 1, M, d), for the lemmas of App. G
    (:mod:`nlcl.tian.power_iteration_lemmas`).
    """
    final_step, closeness, steps_per_eps = [], [], []
    for k, e in enumerate(eps_values):
        u_e = _basis_for_eps(d, m, e, seed, k)
        at, ap, _ = latent_summation_support(u_e, q)
        a_fn = population_gate_fn(at, ap, activation)
        traj = power_iteration(a_fn, u_e.T, steps=steps)
        if runs is not None:
            runs.append({"h": activation, "eps": e, "a_fn": a_fn, "traj": traj})
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
    d: int,
    m: int,
    q: float,
    eps_values: Sequence[float],
    seed: int,
    gammas: np.ndarray,
    runs: list | None = None,
) -> np.ndarray:
    """Eq. 11 for h(x) = x² on the exact latent summation model, for each ε and pattern.

    L (256 pairs at 1e-4) and κ (64 pairs within 0.05 rad) estimated with
    ``default_rng([seed, 3, k])``; sup ω over B_γ (Eq. 103, 32 points) for each γ of ``gammas``;
    power iteration for 1000 steps. Returns rows ``(ε, m, L, κ, min_γ(sup ω − γ), final step)``.
    With a list ``runs``, appends per ε a dict with ``eps``, ``a_fn``, ``traj`` (1001, M, d),
    ``lipschitz`` and ``kappa`` (the estimates), for the lemmas of App. G.
    """
    rows = []
    for e, u_e, (at, ap, _), rng_e in _per_eps(d, m, q, eps_values, seed, 3):
        a_quad = population_gate_fn(at, ap, "quadratic")
        l_e, kap_e, traj, step = _eq11_estimates(a_quad, u_e, rng_e)
        if runs is not None:
            runs.append(
                {"h": "quadratic", "eps": e, "a_fn": a_quad, "traj": traj, "lipschitz": l_e, "kappa": kap_e}
            )
        for j in range(m):
            sup_om = eq11_sup_omega(a_quad, u_e[:, j], gammas, l_e, kap_e, n_points=32, rng=rng_e)
            rows.append((e, j, l_e, kap_e, float((sup_om - gammas).min()), step[j]))
    return np.array(rows)


def theorem3_tanh(
    d: int,
    m: int,
    q: float,
    eps_values: Sequence[float],
    seed: int,
    gammas: np.ndarray,
    runs: list | None = None,
) -> np.ndarray:
    """Theorem 3 where Eq. 11 holds: tanh on small inputs, x = 0.3 U diag(1, 0.2, …, 0.2) y.

    For each ε (the U of :func:`power_iteration_near_patterns`) and pattern: whether the sampled
    sup ω ≤ γ for some γ of ``gammas`` (L, κ with ``default_rng([seed, 4, k])``), and whether power
    iteration from u_m (1000 steps) converges (final step ≤ 1e-10) to a critical point
    (‖P⊥A w‖ ≤ 1e-8 λ₁) inside B_γ of the smallest such γ (Eq. 103, to round-off 1e-12). Returns
    rows ``(ε, m, Eq. 11 holds, converged into B_γ)``. With a list ``runs``, appends per ε a dict
    with ``eps``, ``a_fn``, ``traj`` (1001, M, d), ``lipschitz``, ``kappa`` and ``gamma`` (M,): the
    smallest γ of ``gammas`` with sup ω ≤ γ, NaN where none (for the lemmas of App. G).
    """
    strength3 = 0.3 * np.r_[1.0, np.full(m - 1, 0.2)]
    rows = []
    for e, u_e, (_, ap, y_at), rng_e in _per_eps(d, m, q, eps_values, seed, 4):
        at3 = (y_at * strength3) @ u_e.T
        a_tanh = population_gate_fn(at3, ap, "tanh")
        l_e, kap_e, traj, step = _eq11_estimates(a_tanh, u_e, rng_e)
        diag_end = critical_point_diagnostics(a_tanh, traj[-1])
        c0_e = critical_point_diagnostics(a_tanh, u_e.T)["top_cos"]
        gamma_e = np.full(m, np.nan)
        for j in range(m):
            sup_om = eq11_sup_omega(a_tanh, u_e[:, j], gammas, l_e, kap_e, n_points=32, rng=rng_e)
            ok_g = gammas[sup_om <= gammas]
            if ok_g.size:
                gamma_e[j] = ok_g[0]
            dist = np.linalg.norm(traj[-1, j] - u_e[:, j])  # B_γ of Eq. 103 (at ε = 0: {u_m})
            inside = bool(ok_g.size) and dist <= eq11_radius(ok_g[0], c0_e[j]) + 1e-12
            conv = step[j] <= 1e-10 and diag_end["residual"][j] <= 1e-8
            rows.append((e, j, bool(ok_g.size), bool(inside and conv)))
        if runs is not None:
            runs.append(
                {
                    "h": "tanh",
                    "eps": e,
                    "a_fn": a_tanh,
                    "traj": traj,
                    "lipschitz": l_e,
                    "kappa": kap_e,
                    "gamma": gamma_e,
                }
            )
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
    (:func:`nlcl.tian.local_theory.noisy_population_gate_matrix`, Lipschitz because of the noise). For
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
    for e, u_e, (_, ap, y_at), rng_e in _per_eps(d, m, q, eps_values, seed, 5):
        atoms = (y_at * strengths) @ u_e.T

        def a_fn(w, atoms=atoms, ap=ap):
            return noisy_population_gate_matrix(atoms, ap, sigma, w, activation)

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


#: Perturbation sizes ‖sE‖₂ of the Lemma 9 slope, as fractions of λ_gap: the next order (relative
#: O(‖sE‖/λ_gap) ≤ 10⁻³) and round-off (relative ~10⁻¹⁶ (λ₁/λ_gap)/(‖sE‖/λ_gap)² ≤ 10⁻⁶ λ₁/λ_gap)
#: both stay far below the slope's distance from 1, the slope of a wrong first-order term.
LEMMA9_SCALES = np.logspace(-5, -3, 5)


def _nanmax(a) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.nanmax(a)) if np.isfinite(a).any() else float("nan")


def theorem3_lemmas(
    runs: Sequence[dict[str, Any]], gammas: np.ndarray, seed: int
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Lemmas 7-11 (Tian 2023, App. G) on the power-iteration runs of Theorem 3.

    ``runs``: the dicts that :func:`power_iteration_near_patterns`, :func:`eq11_quadratic` and
    :func:`theorem3_tanh` append (``a_fn``, ``traj``; the last two also the estimates ``lipschitz``,
    ``kappa``; tanh also ``gamma``, the smallest γ of ``gammas`` meeting Eq. 11 per pattern).
    Every quantity is recomputed from ``a_fn`` and the trajectory
    (:func:`nlcl.tian.power_iteration_lemmas.trajectory_lemmas`). Returns a summary and one row
    per run (ε, informative steps, largest ratios):

    * ``ratio7``/``ratio8``/``ratio10``: the largest ratio of each side of Lemmas 7, 8 and 10 to
      its bound over every informative step of every run (Lemma 10 at each pair's own L and κ);
      ``n_steps7``, ``n_steps10``: the steps where they are informative (above round-off);
    * ``slope9``: the largest |slope − 2| of the Lemma 9 remainder against ‖δA‖₂ at Â(u_m) of every
      run and pattern, one random symmetric direction each (``default_rng([seed, 6])``, sizes
      :data:`LEMMA9_SCALES` · λ_gap);
    * ``kappa_ratio``: the largest κ_t/κ̂ over the pairs (w(t), w(t+1)) of the tanh cases where
      Eq. 11 holds with ‖δA‖₂ ≥ 10⁻⁵ λ₁ (κ_t the pair's Lemma 9 ratio, κ̂ the run's estimate);
      ``eq11_kept``: the fraction of those cases where Eq. 11 still holds (sampled sup ω ≤ γ for
      some γ of ``gammas``, ``default_rng([seed, 5, k, m])``) with L and κ raised to cover the
      trajectory's own pairs (max of the estimate and the pairs' quotients with ‖δw‖ ≥ 10⁻⁶);
    * ``lemma11``: the fraction of those cases with 1 − c₀ ≥ 10⁻¹² whose trajectory meets every
      conclusion of Lemma 11 at its γ (:func:`~nlcl.tian.power_iteration_lemmas.lemma11_conclusions`);
      ``n_lemma11``: their number.
    """
    rng9 = np.random.default_rng([seed, 6])
    r7, r8, r10, slopes, n7, n10 = [], [], [], [], 0, 0
    kap_ratio, kept, l11 = [], [], []
    table = []
    for k, r in enumerate(runs):
        q = trajectory_lemmas(r["a_fn"], r["traj"])
        r7.append(_nanmax(q["ratio7"]))
        r8.append(_nanmax(q["ratio8"]))
        r10.append(_nanmax(q["ratio10"]))
        n7 += int(np.isfinite(q["ratio7"]).sum())
        n10 += int(np.isfinite(q["ratio10"]).sum())
        a0 = iterated_matrix(r["a_fn"](r["traj"][0]))  # Â(u_m), (M, d, d)
        for a in a0:
            lam = np.linalg.eigvalsh(a)
            e = rng9.standard_normal(a.shape)
            e = (e + e.T) / np.linalg.norm(e + e.T, 2)
            slopes.append(abs(lemma9_slope(a, e, LEMMA9_SCALES * (lam[-1] - lam[-2])) - 2))
        table.append(
            {
                "h": r["h"],
                "ε": r["eps"],
                "informative steps": int(np.isfinite(q["ratio7"]).sum()),
                "Lemma 7": r7[-1],
                "Lemma 8": r8[-1],
                "Lemma 10": r10[-1],
            }
        )
        for j in np.flatnonzero(np.isfinite(r.get("gamma", np.full(r["traj"].shape[1], np.nan)))):
            big = q["dA"][:, j] >= 1e-5 * q["lam1"][:, j]
            kap_t = _nanmax(np.where(big, q["kappa"][:, j], np.nan))
            lip_t = _nanmax(np.where(q["dw"][:, j] >= 1e-6, q["lip"][:, j], np.nan))
            if np.isfinite(kap_t):
                kap_ratio.append(kap_t / r["kappa"])
            lip2 = max(r["lipschitz"], lip_t) if np.isfinite(lip_t) else r["lipschitz"]
            kap2 = max(r["kappa"], kap_t) if np.isfinite(kap_t) else r["kappa"]
            sup_om = eq11_sup_omega(
                r["a_fn"],
                r["traj"][0, j],
                gammas,
                lip2,
                kap2,
                n_points=32,
                rng=np.random.default_rng([seed, 5, k, j]),
            )
            kept.append(bool(np.any(sup_om <= gammas)))
            omc = q["one_minus_c"][:, j]
            if omc[0] >= 1e-12:
                l11.append(all(lemma11_conclusions(r["traj"][:, j], omc, float(r["gamma"][j])).values()))
    summary = {
        "ratio7": _nanmax(r7),
        "ratio8": _nanmax(r8),
        "ratio10": _nanmax(r10),
        "n_steps7": n7,
        "n_steps10": n10,
        "slope9": float(max(slopes)),
        "kappa_ratio": _nanmax(kap_ratio),
        "eq11_kept": float(np.mean(kept)) if kept else float("nan"),
        "lemma11": float(np.mean(l11)) if l11 else float("nan"),
        "n_lemma11": len(l11),
    }
    return summary, table


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
