"""The experiments of the one-layer chapter (Tian 2023, Sec. 3, App. B.1, B.3-B.5), as functions.

Each function is one step of ``book/tian-one-layer.py`` that the chapter used to write inline;
the operations and their order are those of the chapter, so the numbers are the same:

* Eqs. 8-9 and the LME threshold (Sec. 3.1): :func:`relative_frobenius_error`,
  :func:`lme_margin`, :func:`lme_threshold`;
* A(w) as a function of w for the dynamics of Lemma 3 (Eq. 6-7): :func:`gate_fn`,
  :func:`population_gate_fn`, :func:`gaussian_alpha_fn` (the α_g of Corollary 2), :func:`z0`;
* Theorem 1 and Corollary 2 (Sec. 3.2): :func:`noisy_latent_summation`,
  :func:`perturbation_distances`, :func:`stable_optima`, :func:`scale_free_ratio`,
  :func:`raw_ratio`, :func:`theorem2_study` (Theorem 2, Eqs. 93-99), :func:`gaussian_cp_tau_scan`
  (the Gaussian-α critical points over τ), :func:`no_lme_tau_max`, :func:`critical_point_near`,
  :func:`theorem1_two_sided`, :func:`two_sided_counts`;

Theorem 3, more nodes and rotation augmentation are in :mod:`nlcl.tian.one_layer_extensions`.

Explained in the chapter ``book/tian-one-layer.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import optimize

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError
from nlcl.tian.contrastive import stack_views
from nlcl.tian.landscape import (
    FeatureAlpha,
    distinct_directions,
    eigengap,
    filter_energy,
    is_lme,
    local_roughness,
    population_gate_matrix,
    power_iteration,
    train_filters,
)
from nlcl.tian.latent_data import (
    latent_summation,
    latent_summation_support,
    nearly_orthonormal_basis,
)
from nlcl.tian.local_theory import (
    critical_point_diagnostics,
    feature_gaussian_alpha,
    gaussian_alpha_roughness,
    mixture_plane_density_max,
    perturbation_growth,
    roughness_jacobian,
    theorem2_bound,
)
from nlcl.tian.one_layer_gate import same_view_gate_fn

__all__ = [
    "critical_point_near",
    "gate_fn",
    "gaussian_alpha_fn",
    "gaussian_cp_tau_scan",
    "no_lme_tau_max",
    "lme_margin",
    "lme_threshold",
    "noisy_latent_summation",
    "perturbation_distances",
    "population_gate_fn",
    "raw_ratio",
    "relative_frobenius_error",
    "scale_free_ratio",
    "stable_optima",
    "theorem1_two_sided",
    "theorem2_study",
    "two_sided_counts",
    "z0",
]

AFn = Callable[[np.ndarray], np.ndarray]


# -- Eqs. 8-9 and the LME threshold (Sec. 3.1) ------------------------------------------------


def relative_frobenius_error(a: Any, b: Any) -> np.ndarray:
    """‖a − b‖_F / ‖b‖_F over the last two axes: a Monte Carlo A(u_m) against Eq. 8 or Eq. 9."""
    return np.linalg.norm(a - b, axis=(-1, -2)) / np.linalg.norm(b, axis=(-1, -2))


def lme_margin(u: np.ndarray, q: float, activation: str) -> float:
    """u₁'s Rayleigh quotient minus the largest eigenvalue of A(u₁) on u₁'s orthogonal complement.

    Exact A (all 2^M latent states of the latent summation model with P[y_m > 0] = q, Eq. 9);
    positive exactly when u₁ is a locally maximal eigenvector (Def. 3), i.e. for ReLU when
    (1 − q)² > q (Sec. 3.1).
    """
    at, ap, _ = latent_summation_support(u, q)
    a1 = population_gate_matrix(at, ap, u[:, 0], activation)
    perp = np.eye(u.shape[0]) - np.outer(u[:, 0], u[:, 0])
    return u[:, 0] @ a1 @ u[:, 0] - np.linalg.eigvalsh(perp @ a1 @ perp)[-1]


def lme_threshold(
    u: np.ndarray, activation: str, q_grid: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, float]:
    """Def. 3 on a grid of q, the LME margin there, and the largest q where u₁ is an LME.

    Returns ``(is_lme flags, margins, q*)``: ``q*`` is the root of :func:`lme_margin` (Brent, to
    1e-12) in the first grid interval where the margin changes sign, NaN if it never does. For
    ReLU Eq. 9 gives q* = (3 − √5)/2.
    """
    flags = np.array(
        [
            bool(
                is_lme(
                    lambda w, qv=qv: population_gate_matrix(
                        *latent_summation_support(u, qv)[:2], w, activation
                    ),
                    u[:, 0],
                    tol=1e-9,
                )
            )
            for qv in q_grid
        ]
    )
    margins = np.array([lme_margin(u, qv, activation) for qv in q_grid])
    sign_change = np.nonzero(np.diff(np.sign(margins)))[0]
    q_star = (
        float(
            optimize.brentq(
                lambda qv: lme_margin(u, qv, activation),
                q_grid[sign_change[0]],
                q_grid[sign_change[0] + 1],
                xtol=1e-12,
            )
        )
        if sign_change.size
        else float("nan")
    )
    return flags, margins, q_star


# -- A(w) as a function of w (Lemma 3, Eqs. 6-7) ----------------------------------------------


def gate_fn(views: np.ndarray, activation: str, alpha: Any = None) -> AFn:
    """w ↦ A(w) = C_α[x̃ʷ] (Lemma 3) on the stacked views of Eq. 3, with a fixed or w-dependent α:
    :func:`nlcl.tian.landscape.gate_matrix`, through :func:`nlcl.tian.one_layer_gate.same_view_gate_fn`
    (the same numbers, half the work when both views are the same samples)."""
    return same_view_gate_fn(views, activation, alpha)


def population_gate_fn(atoms: np.ndarray, probs: np.ndarray, activation: str) -> AFn:
    """w ↦ A(w) = V[x̃ʷ] of a discrete x (Cor. 1, Eqs. 8-9), e.g. the 2^M latent summation atoms."""
    return lambda w: population_gate_matrix(atoms, probs, w, activation)


def gaussian_alpha_fn(x: np.ndarray, activation: str, tau: float) -> Callable[[Any], Any]:
    """The Gaussian α of Corollary 2 at filter(s) w: α_g with g = h(wᵀx) on the samples ``x``."""
    h = get_activation(activation)
    return FeatureAlpha(lambda w: h(w @ x.T), lambda g: feature_gaussian_alpha(g, tau))


def z0(w: np.ndarray, x: np.ndarray, activation: str, tau: float) -> np.ndarray:
    """Corollary 2's z₀(α_g) = E[exp(−h²(wᵀx)/2τ)] over the samples ``x``, per filter w."""
    return np.exp(-(get_activation(activation)(w @ x.T) ** 2) / (2 * tau)).mean(-1)


# -- Theorem 1 and Corollary 2 (Sec. 3.2) -----------------------------------------------------


def noisy_latent_summation(
    n: int, u: np.ndarray, q: float, noise: float, rng: np.random.Generator
) -> np.ndarray:
    """``n`` latent summation samples x = Uy (Sec. 3.1) plus isotropic Gaussian noise of std ``noise``
    (drawn after the latent states, from the same generator)."""
    x, _ = latent_summation(n, u, q, rng=rng)
    return x + noise * rng.standard_normal(x.shape)


def perturbation_distances(
    a_fn: AFn,
    w_star: np.ndarray,
    n_pert: int,
    angle: float,
    steps: int,
    rng: np.random.Generator,
    lr: float = 0.5,
) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 1's stability test: rotate each row of ``w_star`` by ``angle`` along ``n_pert``
    random tangent directions, run the dynamics of Eq. 7 for ``steps`` steps, and return the
    distances to ``w_star`` before and after, each of shape (n_pert, M)."""
    tangent = rng.standard_normal((n_pert,) + w_star.shape)
    tangent -= (tangent * w_star).sum(-1, keepdims=True) * w_star
    tangent /= np.linalg.norm(tangent, axis=-1, keepdims=True)
    w_pert = np.cos(angle) * w_star + np.sin(angle) * tangent  # (n_pert, M, d)
    w_back = train_filters(a_fn, w_pert, lr=lr, steps=steps)
    dist0 = np.linalg.norm(w_pert - w_star, axis=-1)
    dist1 = np.linalg.norm(w_back - w_star, axis=-1)
    return dist0, dist1


def stable_optima(
    a_fn: AFn, w_init: np.ndarray, views: np.ndarray, activation: str, steps: int
) -> tuple[int, np.ndarray]:
    """Distinct stable optima reached from ``w_init`` (Sec. 3.2, after Corollary 2).

    Scale-free dynamics (Eq. 7, step 0.5/λ₁) for ``steps`` steps; a filter counts when it is
    alive (energy > 1e-8 on ``views``) and moves less than 0.01 in 50 further steps; distinct
    optima are clusters at cosine 0.99. Returns ``(count, the kept filters)``.
    """
    w_fin = train_filters(a_fn, w_init, lr=0.5, steps=steps, scale_free=True)
    w_more = train_filters(a_fn, w_fin, lr=0.5, steps=50, scale_free=True)
    settled = np.linalg.norm(w_more - w_fin, axis=-1) < 0.01  # stays put for 50 more steps
    alive = filter_energy(views, w_fin, activation) > 1e-8  # all data on the inactive side: dead
    keep = alive & settled
    return distinct_directions(w_fin[keep], cos_tol=0.99)[0], w_fin[keep]


def scale_free_ratio(g: dict[str, np.ndarray]) -> float:
    """Mean ρ/λ₁ with Gaussian α over the same with uniform α, at the settled Gaussian-α critical
    points of :func:`nlcl.tian.local_theory.gaussian_alpha_roughness` (Corollary 2); NaN if none."""
    ok = g["settled"]
    if not ok.any():
        return float("nan")
    return float(np.mean((g["rho_g"] / g["lam1_g"])[ok]) / np.mean((g["rho_u"] / g["lam1_u"])[ok]))


def raw_ratio(g: dict[str, np.ndarray]) -> float:
    """Mean ρ with Gaussian α over mean ρ with uniform α at the settled critical points: the ratio
    that Corollary 2's r(α_g) = z₀ r(α_u) scales (Eq. 99)."""
    ok = g["settled"]
    return float(np.mean(g["rho_g"][ok]) / np.mean(g["rho_u"][ok]))


def _theorem2_seed(
    u: np.ndarray,
    q: float,
    activation: str,
    tau: float,
    n_train: int,
    rng_s: np.random.Generator,
    atoms: np.ndarray,
    atom_p: np.ndarray,
    noise: float,
    offset_z0: float,
    tau_z0: float,
) -> dict[str, Any]:
    """One data seed of :func:`theorem2_study`."""
    act = activation
    d = u.shape[0]
    xb, _ = latent_summation(n_train, u, q, rng=rng_s)
    xb = xb + noise * rng_s.standard_normal(xb.shape)
    vb = stack_views(xb, xb)
    a_b = gate_fn(vb, act)
    wb = power_iteration(a_b, u.T, steps=100)[-1]
    lme_b = is_lme(a_b, wb, tol=1e-6)
    ab = feature_gaussian_alpha(get_activation(act)(wb @ xb.T), tau)  # α_g held at w*
    rho_bu = local_roughness(a_b, wb, radius=0.02, rng=rng_s)
    rho_bg = local_roughness(gate_fn(vb, act, ab), wb, radius=0.02, rng=rng_s)
    c0 = float(np.linalg.norm(xb, axis=1).max())
    r_u = np.array([mixture_plane_density_max(atoms, atom_p, noise, w)[0] for w in wb])
    z0_b = np.exp(-(get_activation(act)(wb @ xb.T) ** 2) / (2 * tau)).mean(-1)
    bound_u = np.array([theorem2_bound(c0, d, r) for r in r_u])
    bound_g = z0_b * bound_u
    sel = lme_b if lme_b.any() else np.ones_like(lme_b)
    out: dict[str, Any] = {"c0": c0}
    out["uniform"] = float((rho_bu / bound_u)[sel].max())
    out["gaussian"] = float((rho_bg / bound_g)[sel].max())
    # how far the uniform-α LMEs are from being critical points of the Gaussian α
    out["uni_top_cos"] = list(
        critical_point_diagnostics(
            gate_fn(vb, act, gaussian_alpha_fn(xb, act, tau)),
            wb[sel],
        )["top_cos"]
    )
    gb = gaussian_alpha_roughness(xb, act, tau, wb, rng=rng_s)  # at Gaussian-α critical points
    settled = float(gb["settled"].mean())
    out["scale_free"] = scale_free_ratio(gb)
    out["raw"] = float(np.mean(gb["rho_g"][gb["settled"]]) / np.mean(gb["rho_u"][gb["settled"]]))
    out["cp_rank"] = list(gb["rank"][gb["settled"]])
    out["cp_eig_cos"] = list(gb["eig_cos"][gb["settled"]])
    out["cp_top_cos"] = list(gb["top_cos"][gb["settled"]])
    # the z₀ ≪ 1 setting: the same kind of data shifted along Σ u_m, a small τ
    xz, _ = latent_summation(n_train, u, q, rng=rng_s)
    xz = xz + offset_z0 * u.sum(1) + noise * rng_s.standard_normal(xz.shape)
    gz = gaussian_alpha_roughness(xz, act, tau_z0, u.T, steps=600, rng=rng_s)  # from each u_m
    out["small"] = scale_free_ratio(gz)
    out["settled"] = min(settled, float(gz["settled"].mean()))
    out["small_z0"] = float(gz["z0"][gz["settled"]].mean()) if gz["settled"].any() else float("nan")
    out["slack"] = float((bound_u / np.maximum(rho_bu, 1e-300))[sel].min())
    out["z0"] = float(gb["z0"][gb["settled"]].mean()) if gb["settled"].any() else float("nan")
    return out


def theorem2_study(
    u: np.ndarray,
    q: float,
    activation: str,
    tau: float,
    n_train: int,
    n_seeds: int,
    seed: int,
    noise: float = 0.2,
    offset_z0: float = 1.0,
    tau_z0: float = 0.02,
) -> dict[str, Any]:
    """Theorem 2's bound (Eq. 93: ρ ≤ C₀³ vol(C₀)/π · r(w*, α); Eq. 95 for uniform α, Eq. 99 for
    the Gaussian α) and Corollary 2 at critical points of the Gaussian-α dynamics, over
    ``n_seeds`` data sets drawn from ``default_rng([seed, 2, s])``.

    Data: latent summation plus noise of std ``noise``; LMEs by power iteration from each u_m. Per
    seed: ρ/bound for both α (largest over the LMEs), the bound's slack, the scale-free and raw
    roughness ratios (:func:`scale_free_ratio`, :func:`raw_ratio`) at the Gaussian-α critical
    points, their z₀, and the same ratio in the z₀ ≪ 1 setting (data shifted by ``offset_z0``·Σ u_m,
    τ = ``tau_z0``, 600 steps from each u_m); ``settled`` is the smaller fraction of Gaussian-α runs
    ending at a critical point of the two settings. Returns lists per seed under ``uniform``,
    ``gaussian``, ``scale_free``, ``raw``, ``slack``, ``z0``, ``settled``, ``small``, ``small_z0``;
    the critical points' eigenvalue ranks, |cos| with their eigenvector and with φ₁
    (``cp_rank``, ``cp_eig_cos``, ``cp_top_cos``, arrays over all seeds); ``uni_top_cos`` (the
    uniform-α LMEs' |cos| with φ₁(A_g)) and ``c0`` of the last seed. Over all critical points:
    ``cp_lme_fraction``, the fraction that are LMEs of A_g (|cos(w*, φ₁)| ≥ 1 − 1e-6, Def. 3),
    ``cp_eig_cos_min`` and ``cp_rank_min`` (NaN and −1 when there is none).
    """
    atoms, atom_p, _ = latent_summation_support(u, q)
    keys = ("uniform", "gaussian", "scale_free", "raw", "slack", "z0", "settled", "small", "small_z0")
    out: dict[str, Any] = {k: [] for k in keys}
    lists: dict[str, list] = {k: [] for k in ("cp_rank", "cp_eig_cos", "cp_top_cos", "uni_top_cos")}
    c0 = float("nan")
    for s_ in range(n_seeds):
        rng_s = np.random.default_rng([seed, 2, s_])
        row = _theorem2_seed(u, q, activation, tau, n_train, rng_s, atoms, atom_p, noise, offset_z0, tau_z0)
        for k in keys:
            out[k].append(row[k])
        for k in lists:
            lists[k] += row[k]
        c0 = row["c0"]
    out["cp_rank"] = np.array(lists["cp_rank"])
    out["cp_eig_cos"] = np.array(lists["cp_eig_cos"])
    out["cp_top_cos"] = np.array(lists["cp_top_cos"])
    out["uni_top_cos"] = lists["uni_top_cos"]
    out["c0"] = c0
    cp = out["cp_top_cos"]
    out["cp_lme_fraction"] = float((cp >= 1 - 1e-6).mean()) if cp.size else float("nan")
    out["cp_eig_cos_min"] = float(out["cp_eig_cos"].min()) if cp.size else float("nan")
    out["cp_rank_min"] = int(out["cp_rank"].min()) if cp.size else -1
    return out


def gaussian_cp_tau_scan(
    u: np.ndarray,
    q: float,
    activation: str,
    taus: Sequence[float],
    n_train: int,
    n_seeds: int,
    seed: int,
    noise: float = 0.2,
    steps: int = 300,
    lr: float = 0.5,
    tol: float = 1e-3,
) -> dict[str, np.ndarray]:
    """The critical points of the Gaussian-α dynamics (Tian 2023, Corollary 2's α_g) over the
    temperature τ: are they LMEs of A_g (Def. 3), and how close are they to the patterns u_m?

    On each of ``n_seeds`` data sets drawn from ``default_rng([seed, 7, s])`` (``n_train`` latent
    summation samples, Sec. 3.1, plus noise of std ``noise``, as :func:`theorem2_study` draws them),
    the uniform-α LMEs w_b are found by power iteration from each u_m (100 steps), and the
    Gaussian-α dynamics ẇ = P⊥_w A_g(w) w (Lemma 3, α_g(w) = exp(−(h(wᵀx_i) − h(wᵀx_j))²/2τ)
    re-evaluated at every step, stop-gradient; ``steps`` scale-free Euler steps of size ``lr``)
    runs from every w_b at every τ at once: the features are divided by √τ, one row of filters per τ.
    An end point is a critical point when the residual of
    :func:`nlcl.tian.local_theory.critical_point_diagnostics` is at most ``tol``.

    Returns arrays over (τ, seed, m): ``tau`` (the scanned τ), ``settled``, ``rank`` (0: the top
    eigenvector of A_g(w*), an LME), ``top_cos`` = |cos(w*, φ₁(A_g(w*)))|, ``pattern_cos`` =
    max_m' |cos(w*, u_m')|; and per τ, over the settled points of all seeds: ``lme_fraction`` (rank 0,
    |cos(w*, φ₁)| ≥ 1 − 1e-6, as :func:`theorem2_study` counts them; NaN without a settled point),
    ``n_settled``, ``pattern_cos_min`` and ``pattern_cos_max`` (NaN without a settled point).
    """
    taus_a = np.asarray(taus, dtype=np.float64)
    if taus_a.ndim != 1 or taus_a.size == 0 or not np.all(np.isfinite(taus_a) & (taus_a > 0)):
        raise ParameterError(f"taus must be a non-empty list of positive finite temperatures, got {taus!r}")
    for name, v in (("n_train", n_train), ("n_seeds", n_seeds)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ParameterError(f"{name} must be a positive integer, got {v!r}")
    h = get_activation(activation)
    scale = np.sqrt(taus_a)[:, None, None]  # (T, 1, 1): α_g at τ is α_g at 1 of h/√τ
    u_n = u / np.linalg.norm(u, axis=0)
    keys = ("settled", "rank", "top_cos", "pattern_cos")
    rows: dict[str, list] = {k: [] for k in keys}
    for s_ in range(n_seeds):
        rng_s = np.random.default_rng([seed, 7, s_])
        x, _ = latent_summation(n_train, u, q, rng=rng_s)
        x = x + noise * rng_s.standard_normal(x.shape)
        v = stack_views(x, x)
        wb = power_iteration(gate_fn(v, activation), u.T, steps=100)[-1]  # (M, d)
        alpha = FeatureAlpha(lambda w: h(w @ x.T) / scale, lambda g: feature_gaussian_alpha(g, 1.0))
        a_g = gate_fn(v, activation, alpha)
        w = train_filters(
            a_g, np.broadcast_to(wb, (len(taus_a),) + wb.shape), lr=lr, steps=steps, scale_free=True
        )
        diag = critical_point_diagnostics(a_g, w)  # (T, M)
        rows["settled"].append(diag["residual"] <= tol)
        rows["rank"].append(diag["rank"])
        rows["top_cos"].append(diag["top_cos"])
        rows["pattern_cos"].append(np.abs(w @ u_n).max(-1))
    out: dict[str, np.ndarray] = {k: np.stack(rows[k], axis=1) for k in keys}  # (T, seeds, M)
    out["tau"] = taus_a
    ok = out["settled"].reshape(len(taus_a), -1)
    lme = (out["top_cos"] >= 1 - 1e-6).reshape(len(taus_a), -1)
    pc = out["pattern_cos"].reshape(len(taus_a), -1)
    out["n_settled"] = ok.sum(-1)
    with np.errstate(invalid="ignore"):
        out["lme_fraction"] = np.where(ok.any(-1), (lme & ok).sum(-1) / np.maximum(ok.sum(-1), 1), np.nan)
    out["pattern_cos_min"] = np.array(
        [pc[t][ok[t]].min() if ok[t].any() else np.nan for t in range(len(taus_a))]
    )
    out["pattern_cos_max"] = np.array(
        [pc[t][ok[t]].max() if ok[t].any() else np.nan for t in range(len(taus_a))]
    )
    return out


def no_lme_tau_max(scan: dict[str, np.ndarray]) -> float:
    """The range of τ where no Gaussian-α critical point is an LME (Def. 3), from
    :func:`gaussian_cp_tau_scan`: the largest scanned τ such that, at it and at every smaller scanned
    τ, there are settled critical points and none is an LME. NaN when the smallest τ already fails."""
    order = np.argsort(scan["tau"])
    best = float("nan")
    for t in order:
        frac = scan["lme_fraction"][t]
        if not (np.isfinite(frac) and frac == 0):
            break
        best = float(scan["tau"][t])
    return best


def critical_point_near(a_fn: AFn, w0: np.ndarray) -> np.ndarray:
    """A critical point of Eq. 7 on the sphere near ``w0``: the root of P⊥_w A(w) w (Lemma 3),
    found by ``scipy.optimize.root`` (tol 1e-13) with the norm pinned by (‖w‖ − 1)·w."""

    def resid(w):
        nrm = np.linalg.norm(w)
        u = w / nrm
        aw = a_fn(u) @ u
        return aw - (aw @ u) * u + (nrm - 1) * u

    sol = optimize.root(resid, w0, tol=1e-13)
    return sol.x / np.linalg.norm(sol.x)


def theorem1_two_sided(seed: int, n_cases: int, n_patterns: int = 4, dim: int = 6) -> np.ndarray:
    """Theorem 1 on both sides of λ_gap = ρ: h(x) = x² on the exact latent summation model.

    Each case draws from ``default_rng([seed, 1, case])`` per-pattern q_m ~ U[0.1, 0.27] and a
    nearly orthonormal U (‖UᵀU − I‖₂ = 0.1, ``dim`` × ``n_patterns``); the critical point near each
    u_m (:func:`critical_point_near`) is tested for Def. 3, its λ_gap and ρ (central differences)
    and the largest growth of 4 perturbations of 0.01 rad over 300 steps. Returns rows
    ``(case, m, q_m, is LME, λ_gap, ρ, largest growth)``.
    """
    rows = []
    for case in range(n_cases):
        rng_c = np.random.default_rng([seed, 1, case])
        q_c = rng_c.uniform(0.1, 0.27, n_patterns)
        u_c = nearly_orthonormal_basis(dim, n_patterns, 0.1, rng=rng_c)
        at_c, ap_c, _ = latent_summation_support(u_c, q_c)
        a_c = population_gate_fn(at_c, ap_c, "quadratic")
        w_c = np.array([critical_point_near(a_c, u_c[:, m]) for m in range(n_patterns)])
        lme_c = is_lme(a_c, w_c, tol=1e-6)
        gap_c = eigengap(a_c(w_c))[1]
        rho_c = roughness_jacobian(a_c, w_c)
        growth = perturbation_growth(a_c, w_c, angle=0.01, n_dirs=4, lr=0.5, steps=300, rng=rng_c).max(0)
        rows += [(case, m, q_c[m], bool(lme_c[m]), gap_c[m], rho_c[m], growth[m]) for m in range(n_patterns)]
    return np.array(rows, dtype=float)


def two_sided_counts(t1: np.ndarray) -> dict[tuple[bool, bool], int]:
    """Counts of LMEs by (λ_gap > ρ, stable) from the rows of :func:`theorem1_two_sided`."""
    is_l, above, stable = t1[:, 3] > 0, t1[:, 4] > t1[:, 5], t1[:, 6] < 1
    return {
        (a, s): int((is_l & (above == a) & (stable == s)).sum()) for a in (True, False) for s in (True, False)
    }
