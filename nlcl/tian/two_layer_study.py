"""The experiments of the chapter ``book/tian-two-layer-theory.py`` (Tian 2023, Sec. 4, App. C-D).

What the chapter measures, one function per step, on top of the closed forms of
:mod:`nlcl.tian.two_layer_theory`, :mod:`nlcl.tian.two_view_bn` and
:mod:`nlcl.tian.basin_probability`: filter gradients with a fixed top layer (Theorem 4, Eq. 14),
the critical point of Theorem 4 (2) found by least squares, the blow-up of Eq. 146 integrated
numerically (Eqs. 147-150, Fig. 7), the argmin-t* rule of Theorem 6's proof, Corollary 3 per data
seed with one view and with two (Eqs. 164-179, Lemma 6), and the Monte Carlo test of Eqs. 156-157.
Only this chapter imports it; each function computes exactly what the chapter computed inline
before it moved here (same operations, same order, so the same numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from nlcl.core.validate import ParameterError
from nlcl.tian.basin_probability import basin_event_mc, eq156_lower_bound, eq157_upper_bound
from nlcl.tian.contrastive import contrastive_covariance
from nlcl.tian.rf_network import batch_norm
from nlcl.tian.two_layer_theory import (
    blowup_time,
    blowup_winners,
    corollary3_prediction,
    energy_two_layer,
    hidden_two_layer,
    top_mode_velocity,
)
from nlcl.tian.two_view_bn import (
    TwoViewPass,
    _corollary3_two_view,
    bn_moments,
    two_view_binary_tokens,
    two_view_velocity,
)

__all__ = [
    "BLOWUP_STOP",
    "TWO_VIEW_COLUMNS",
    "bn_scale_gap",
    "corollary3_seed",
    "critical_path_norms",
    "eq146_runs",
    "eq156_157_violations",
    "eq156_test_eps",
    "fails_at_smallest_gaps",
    "filter_gradient",
    "nearest_critical_point",
    "per_view_closer",
    "same_rf_pair_cos",
    "speed_ratio",
    "top_direction",
    "two_view_parts",
    "two_view_seed",
    "winner_rule_agreement",
]

#: Where the numerical blow-up of Eq. 146 is stopped (the solution reaches ∞ at t*).
BLOWUP_STOP = 1e8
#: The per-seed columns of the two-view experiment (:func:`two_view_seed`), in the table's order.
TWO_VIEW_COLUMNS = (
    "p1",
    "p2",
    "p3",
    "view_p2",
    "view_p3",
    "view_share",
    "exch_p1",
    "exch_p2",
    "exch_p3",
    "speed",
    "scale_effect",
)


# -- Theorem 4 ----------------------------------------------------------------------------------


def filter_gradient(W: torch.Tensor, x: torch.Tensor, activation: str, s: torch.Tensor) -> torch.Tensor:
    """∂E/∂W of the two-layer energy with the top layer V = sᵀ (d_out = 1) and uniform α
    (Tian 2023, Lemma 4 / Eq. 12 before the projection; Theorem 4's ẇ_km = s_km b_k, Eq. 14).

    ``W`` (K, M, d), ``x`` (2N, K, d) stacked views, ``s`` (K·M,). Returns a tensor like ``W``.
    """
    W = W.clone().requires_grad_()
    (g,) = torch.autograd.grad(energy_two_layer(W, s[None, :], x, activation), W)
    return g


def top_direction(W: torch.Tensor, x: torch.Tensor, activation: str) -> torch.Tensor:
    """s, the top eigenvector of C_α[f_1] (uniform α): the converged top layer of Theorem 4
    (S = s sᵀ, Tian 2023, Sec. 4.1)."""
    C = contrastive_covariance(hidden_two_layer(W, x, activation))
    return torch.linalg.eigh(C)[1][:, -1]


def same_rf_pair_cos(g: torch.Tensor) -> torch.Tensor:
    """|cos| between the gradients of every pair of filters of the same RF (Theorem 4 (1), Eq. 14:
    1 for a linear network). ``g`` (K, M, d); returns the K·M(M−1)/2 values, RF by RF."""
    if g.ndim != 3 or g.shape[1] < 2:
        raise ParameterError(f"g must have shape (K, M, d) with M ≥ 2, got {tuple(g.shape)}")
    gn = torch.nn.functional.normalize(g, dim=-1)
    cosm = (gn @ gn.transpose(1, 2)).abs()
    iu = torch.triu_indices(g.shape[1], g.shape[1], 1)
    return cosm[:, iu[0], iu[1]].flatten()


def nearest_critical_point(W_init: torch.Tensor, s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """A critical point of the linear two-layer energy, for Theorem 4 (2) (Tian 2023).

    With V = sᵀ fixed the linear energy is quadratic in W, so ∇_W E = H W (H its Hessian) and the
    mean network output over the batch is c·W. Returns the W* nearest to ``W_init`` (K, 2, d) among
    the minimisers of ‖H W‖² + (c·W − 1)² (a pseudo-inverse, relative cut-off 1e-10): a critical
    point with mean output 1 when one exists; the chapter checks it is critical along its path.
    """
    if W_init.ndim != 3 or W_init.shape[1] != 2:
        raise ParameterError(f"W_init must have shape (K, 2, d), got {tuple(W_init.shape)}")
    K, _, d = W_init.shape

    def energy_flat(W_flat):
        return energy_two_layer(W_flat.reshape(K, 2, d), s[None, :].to(W_flat), x, "linear")

    H = torch.autograd.functional.hessian(energy_flat, W_init.reshape(-1))
    c_mean = (s.reshape(K, 2, 1) * x.mean(0)[:, None, :]).reshape(1, -1)  # mean output = c_mean · W
    B = torch.cat([H, c_mean])
    rhs = torch.cat([torch.zeros(len(H)), torch.ones(1)])
    step = torch.linalg.pinv(B, rtol=1e-10) @ (rhs - B @ W_init.reshape(-1))
    return (W_init.reshape(-1) + step).reshape(K, 2, d)


def critical_path_norms(
    W_star: torch.Tensor,
    W_same: torch.Tensor,
    x: torch.Tensor,
    activation: str,
    s: torch.Tensor,
    cs: torch.Tensor,
    ref: torch.Tensor,
) -> torch.Tensor:
    """‖∇_W E‖ / ``ref`` along the path c W* + (1 − c) W_same, c in ``cs`` (Theorem 4 (2), Tian 2023:
    a path of critical points to identical filters for a linear network)."""
    return torch.stack(
        [filter_gradient(c * W_star + (1 - c) * W_same, x, activation, s).norm() / ref for c in cs]
    )


# -- Eq. 146, Fig. 7 and the winner of Theorem 6 ----------------------------------------------------


def _blow(t, y):
    """Event: y reaches BLOWUP_STOP (the blow-up, stopped at a finite value)."""
    return y[0] - BLOWUP_STOP


_blow.terminal = True


def eq146_runs(
    b_grid: Sequence[float], y_pos: Sequence[float], y_neg: Sequence[float], *, show_b: float = 1.5
) -> tuple[list[float], list[float], dict]:
    """Integrate ẏ = (y + b) y (Tian 2023, Eq. 146) with ``solve_ivp`` (RK45, rtol 1e-10, atol 1e-12).

    From each y(0) in ``y_pos`` the run stops at y = 1e8; its time is compared with t* of Eq. 150
    (relative error). From each y(0) in ``y_neg`` it runs to T = 40; the distance |y(T) + b| to the
    stable point is recorded. Returns (relative errors, distances, the solutions at b = ``show_b``
    by y(0), for Fig. 7).
    """
    from scipy.integrate import solve_ivp

    if any(not b > 0 for b in b_grid) or any(not y > 0 for y in y_pos) or any(not y < 0 for y in y_neg):
        raise ParameterError(
            f"eq146_runs: b_grid={list(b_grid)} must be > 0, y_pos={list(y_pos)} > 0, y_neg={list(y_neg)} < 0"
        )
    err146, neg146, curves146 = [], [], {}
    for b in b_grid:
        for y0 in y_pos:
            sol = solve_ivp(
                lambda t, y, b=b: (y + b) * y,
                (0, 100),
                [y0],
                events=_blow,
                rtol=1e-10,
                atol=1e-12,
                dense_output=True,
            )
            t_num = float(sol.t_events[0][0])
            err146.append(abs(t_num - float(blowup_time(y0, b))) / float(blowup_time(y0, b)))
            if b == show_b:
                curves146[y0] = sol
        for y0 in y_neg:
            sol = solve_ivp(
                lambda t, y, b=b: (y + b) * y, (0, 40), [y0], rtol=1e-10, atol=1e-12, dense_output=True
            )
            neg146.append(abs(sol.y[0, -1] + b))
            if b == show_b:
                curves146[y0] = sol
    return err146, neg146, curves146


def winner_rule_agreement(
    n_init: int, seed: int, cs: Sequence[float] = (0.0, 0.5, 1.0), *, d: int = 8, b: float = 1.5
) -> tuple[float, list[float], list[float]]:
    """How often l* = argmin_l t_l* (Tian 2023, Theorem 6 proof, Eqs. 148-150) names the limit of the
    normalized dynamics (:func:`~nlcl.tian.two_layer_theory.blowup_winners`), over the modulations
    ``cs``, each from the same ``n_init`` initializations (seed ``seed``).

    Returns (fraction of converged runs named correctly, t* ratios second-smallest / smallest of the
    runs it misses, the same of the runs it names correctly).
    """
    agree, total = 0, 0
    miss_close, hit_close = [], []
    for cc in cs:
        pred_w, act_w = blowup_winners(d, cc, b=b, n_init=n_init, seed=seed)
        ok = act_w >= 0
        agree += int((pred_w[ok] == act_w[ok]).sum())
        total += int(ok.sum())
        # how close were the two smallest t* in the runs the rule missed? (the same initializations)
        w0_ = np.random.default_rng(seed).standard_normal((n_init, d))
        w0_ /= np.linalg.norm(w0_, axis=1, keepdims=True)
        bl_ = np.full(d, b)
        bl_[0] += cc
        ts_ = np.sort(blowup_time(w0_, bl_[None, :]), axis=1)
        miss = ok & (pred_w != act_w)
        miss_close += list(ts_[miss, 1] / ts_[miss, 0])
        hit_close += list(ts_[ok & ~miss, 1] / ts_[ok & ~miss, 0])
    return agree / total, miss_close, hit_close


# -- Corollary 3, one view ---------------------------------------------------------------------------


def bn_scale_gap(
    W: torch.Tensor, x_scaled: torch.Tensor, x_unit: torch.Tensor, activation: str, eps: float
) -> float:
    """max_k relative difference of the BatchNorm speeds ‖ẇ_k‖ (mean-backprop, BatchNorm ε = ``eps``)
    between scaled and unit-scale inputs: 0 at ε = 0 by Corollary 3's scale invariance (Tian 2023,
    App. D, d_k^bn = d_k/σ_k²)."""

    def bn_speeds(x):
        return top_mode_velocity(W, x, activation, bn=(True, False, eps))[0].norm(dim=-1)

    return float(((bn_speeds(x_scaled) - bn_speeds(x_unit)).abs() / bn_speeds(x_unit)).max())


def corollary3_seed(
    x: torch.Tensor, z: torch.Tensor, W: torch.Tensor, activation: str, eps: float = 1e-5
) -> tuple[float, float, float]:
    """Corollary 3 (1)-(3) (Tian 2023, Eqs. 175-179) on one data seed, closed form against experiment.

    Returns (λ^bn of the sample V[f_1^bn] − max_k d_k^bn, |cos| between s^bn and the sample top
    eigenvector, ‖ẇ(Eq. 178) − ẇ(autograd)‖ / ‖ẇ(autograd)‖), BatchNorm mean-backprop with ε = ``eps``.
    """
    cf = corollary3_prediction(W, x, z, activation, eps=eps)
    fbn = batch_norm(hidden_two_layer(W, x, activation), True, False, eps)
    lam_s, vec_s = torch.linalg.eigh(torch.cov(fbn.T, correction=0))
    auto3, _ = top_mode_velocity(W, x, activation, bn=(True, False, eps))
    return (
        float(lam_s[-1] - cf["d"].max()),
        float((cf["s"] @ vec_s[:, -1]).abs()),
        float((cf["wdot"] - auto3).norm() / auto3.norm()),
    )


def fails_at_smallest_gaps(gaps: Sequence[float], ok: Sequence[bool]) -> bool:
    """The explanation of Corollary 3 (2)-(3) failing in ci (Tian 2023, Eq. 178 divides by
    λ^bn − d_k^bn): some seed fails, and every seed that fails has a smaller eigengap (part 1)
    than every seed that passes (a parameter-free prediction that can fail)."""
    if len(gaps) != len(ok):
        raise ParameterError(f"gaps ({len(gaps)} values) and ok ({len(ok)} values) must have one per seed")
    bad = [g for g, o in zip(gaps, ok) if not o]
    good = [g for g, o in zip(gaps, ok) if o]
    return bool(bad) and (not good or max(bad) < min(good))


# -- Corollary 3, two views (Eqs. 164-165, Lemma 6) ------------------------------------------------


def two_view_parts(
    x: torch.Tensor,
    z: torch.Tensor,
    W: torch.Tensor,
    activation: str,
    pooled: bool,
    velocity: tuple | None = None,
    hidden: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> dict:
    """Parts (1)-(3) of Corollary 3 on two views (Tian 2023, Eqs. 164-165, 175-179, C_α in place of V):
    eigengap ``p1``, |cos| ``p2``, relative error ``p3``, and ``share``, the view term
    ½E_z[m mᵀ] over the off-diagonal of C_α[f^bn] (Frobenius norms), with moments pooled over 2N
    (``pooled``) or per view. ``velocity``: the result of
    :func:`~nlcl.tian.two_view_bn.two_view_velocity` on (W, x) with these moments, and ``hidden``, (f_1, x̃)
    of (W, x) (:meth:`~nlcl.tian.two_view_bn.TwoViewPass.hidden_and_gated`), if already at hand."""
    cf, f, mu = _corollary3_two_view(W, x, z, activation, pooled, 1e-5, hidden)
    if velocity is None:
        velocity = two_view_velocity(W, x, activation, bn="pooled" if pooled else "view")
    auto, s_top, C = velocity
    fbn = (f - mu) * torch.rsqrt(cf["sigma2"])
    n = len(z)
    dv = fbn[:n] - fbn[n:]
    m_z = torch.stack([dv[z].mean(0), dv[~z].mean(0)])  # m_k(z) for z = 1, 0
    view_term = 0.5 * (cf["p1"] * torch.outer(m_z[0], m_z[0]) + cf["p0"] * torch.outer(m_z[1], m_z[1]))
    off = 1 - torch.eye(len(s_top))
    return {
        "p1": float(torch.linalg.eigvalsh(C)[-1] - cf["d"].max()),
        "p2": float((cf["s"] @ s_top).abs()),
        "p3": float((cf["wdot"] - auto).norm() / auto.norm()),
        "share": float((view_term * off).norm() / (C * off).norm()),
    }


def speed_ratio(x: torch.Tensor, W: torch.Tensor, activation: str, bn: str | None) -> float:
    """Slowest over fastest RF speed ‖ẇ_k‖ with two views (Tian 2023, App. D: BatchNorm "won't lead
    to slowness"); ``bn`` as in :func:`~nlcl.tian.two_view_bn.two_view_velocity`."""
    return _slow_over_fast(two_view_velocity(W, x, activation, bn=bn)[0].norm(dim=-1))


def _slow_over_fast(v: torch.Tensor) -> float:
    return float(v.min() / v.max())


def two_view_seed(
    generator: torch.Generator, n_samples: int, scales: Sequence[float], activation: str
) -> tuple[dict, float, float]:
    """One data seed of the two-view experiment of Tian 2023, App. D (Eqs. 164-165, Corollary 3).

    Draws (from ``generator``, in this order) ``n_samples`` two-view samples with gain 2, the unit
    filters W (4, 1, 6), and the same number with gain 1 (exchangeable views, as Lemma 2's Eqs. 35-37
    and Assumption 2 take them). Returns (the row of :data:`TWO_VIEW_COLUMNS`: parts (1)-(3) pooled
    with gain 2, (2)-(3) per view, the view term's share, (1)-(3) pooled with exchangeable views
    (``exch_p1``-``exch_p3``), the speed ratio of pooled BN on scaled inputs over no BN on unit-scale
    ones, and min_k BN speed scaled / unit-scale; the same min without BN; max_k |σ_k²(pooled) /
    σ_k²(first view) − 1|).
    """
    # x stored RF-major (the same values): the products with W and their gradients read it in order
    x7, z7 = two_view_binary_tokens(
        n_samples, 4, 6, generator=generator, scales=scales, gain=2.0, rf_major=True
    )
    W7 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=generator), dim=-1)
    x7u = x7 / torch.as_tensor(scales)[None, :, None]
    # one forward pass per input, each velocity once (deterministic: the same numbers as recomputing
    # them where they are used)
    p7, p7u = TwoViewPass(W7, x7, activation), TwoViewPass(W7, x7u, activation)
    vel = {
        (bn, u): pp.velocity(bn, retain=bn is not None or not u)  # p7's graph serves "view" below
        for bn in ("pooled", None)
        for u, pp in ((False, p7), (True, p7u))
    }
    del p7u, x7u
    h7 = p7.hidden_and_gated()
    pooled_r = two_view_parts(x7, z7, W7, activation, True, velocity=vel["pooled", False], hidden=h7)
    view_r = two_view_parts(x7, z7, W7, activation, False, p7.velocity("view", retain=False), h7)
    del p7
    row = {k: pooled_r[k] for k in ("p1", "p2", "p3")}
    row["view_p2"], row["view_p3"], row["view_share"] = view_r["p2"], view_r["p3"], pooled_r["share"]
    x7e, z7e = two_view_binary_tokens(
        n_samples, 4, 6, generator=generator, scales=scales, gain=1.0, rf_major=True
    )
    pe = TwoViewPass(W7, x7e, activation)
    exch = two_view_parts(
        x7e, z7e, W7, activation, True, pe.velocity("pooled", retain=False), pe.hidden_and_gated()
    )
    del pe, x7e
    row["exch_p1"], row["exch_p2"], row["exch_p3"] = exch["p1"], exch["p2"], exch["p3"]
    v_rf = {key: v[0].norm(dim=-1) for key, v in vel.items()}
    row["speed"] = _slow_over_fast(v_rf["pooled", False]) / _slow_over_fast(v_rf[None, True])
    row["scale_effect"] = float((v_rf["pooled", False] / v_rf["pooled", True]).min())
    scale_no_bn = float((v_rf[None, False] / v_rf[None, True]).min())
    f7 = h7[0]  # hidden_two_layer(W7, x7, activation)
    sig_ratio = float((bn_moments(f7, True)[1][0] / bn_moments(f7, False)[1][0] - 1).abs().max())
    return row, scale_no_bn, sig_ratio


def per_view_closer(
    p2: Sequence[float], p3: Sequence[float], view_p2: Sequence[float], view_p3: Sequence[float]
) -> bool:
    """The first condition of the two-view explanation (Tian 2023, Corollary 3 with Eqs. 164-165):
    on every seed, per-view moments bring both parts closer than pooled ones (|cos| nearer 1, smaller
    relative error)."""
    return all(1 - vc < 1 - c and ve < e for c, e, vc, ve in zip(p2, p3, view_p2, view_p3))


# -- Eqs. 156-157 -------------------------------------------------------------------------------------


def eq156_test_eps(
    rng: np.random.Generator, gaps: Sequence[float] = (0.1, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8)
) -> np.ndarray:
    """The modulation vectors ε (d = 8) on which Eqs. 156-157 are tested (Tian 2023, App. C.3): 20
    drawn from U[−1, 1]^8, then one per designed top gap ε_c(1) − ε_c(2) in ``gaps`` (on both sides of
    1), drawn the same way with their first coordinate raised to the largest other plus the gap."""
    eps = rng.uniform(-1, 1, size=(20 + len(gaps), 8))
    for j, gap in enumerate(gaps):
        eps[20 + j, 0] = eps[20 + j, 1:].max() + gap
    return eps


def eq156_157_violations(eps: np.ndarray, n_mc: int, rng: np.random.Generator) -> dict:
    """Monte Carlo of the basin events (:func:`~nlcl.tian.basin_probability.basin_event_mc`) against the
    bounds of Tian 2023, Eq. 156 (lower, on the most modulated coordinate) and Eq. 157 (upper, the
    others), in standard errors (positive: violated).

    Returns ``eq156`` and ``eq157`` (the largest violations), ``worst_small_gap`` (the largest Eq. 156
    violation among ε with top gap ≤ 1) and ``worst_capped`` (the largest violation of the capped
    bound min(gap, 1)/2).
    """
    p_rand = basin_event_mc(eps, n_mc, rng=rng)
    se_r = np.sqrt(np.maximum(p_rand * (1 - p_rand), 1 / n_mc) / n_mc)
    rows, top = np.arange(len(eps)), eps.argmax(1)
    p_top, se_top, lb156 = p_rand[rows, top], se_r[rows, top], eq156_lower_bound(eps)
    viol156 = (lb156 - p_top) / se_top
    gaps = 2 * lb156
    ub157 = eq157_upper_bound(eps)
    viol157 = np.where(np.isfinite(ub157), (p_rand - ub157) / se_r, -np.inf)
    return {
        "eq156": float(viol156.max()),
        "eq157": float(viol157.max()),
        "worst_small_gap": float(viol156[gaps <= 1].max()),
        "worst_capped": float(((np.minimum(gaps, 1) / 2 - p_top) / se_top).max()),
    }
