"""Tests for nlcl.tian.one_layer_study: the one-layer chapter's experiments (Tian 2023, Sec. 3, App. B.5)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError
from nlcl.tian import one_layer_extensions as ext
from nlcl.tian import one_layer_study as study
from nlcl.tian.contrastive import gaussian_alpha, stack_views
from nlcl.tian.landscape import gate_matrix, population_gate_matrix
from nlcl.tian.latent_data import (
    FIG8_ANGLES,
    latent_summation,
    latent_summation_support,
    nearly_orthonormal_basis,
    points_on_circle,
)

Q_STAR = (3 - np.sqrt(5)) / 2


@given(st.integers(0, 10_000), st.floats(0.1, 100.0))
@settings(max_examples=25)
def test_relative_error_zero_on_equal_and_scale_free(seed, scale):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((2, 3, 4, 4))
    assert np.all(study.relative_frobenius_error(b, b) == 0)
    err = study.relative_frobenius_error(a, b)
    np.testing.assert_allclose(study.relative_frobenius_error(scale * a, scale * b), err, rtol=1e-12)
    manual = [np.linalg.norm(a[i] - b[i]) / np.linalg.norm(b[i]) for i in range(3)]
    np.testing.assert_allclose(err, manual, rtol=1e-12)


@given(st.floats(0.02, 0.9), st.integers(3, 5), st.integers(0, 2))
@settings(max_examples=25)
def test_lme_margin_is_eq9(q, m, extra):
    """Eq. 9 with orthonormal U and ReLU: the margin is (1 − q)² − q (the top eigenvalue off u₁ is q)."""
    u = nearly_orthonormal_basis(m + extra, m, rng=np.random.default_rng(m))
    assert study.lme_margin(u, q, "relu") == pytest.approx((1 - q) ** 2 - q, abs=1e-10)


def test_lme_threshold_finds_three_minus_root_five_over_two():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    q_grid = np.linspace(0.02, 0.9, 23)
    flags, margins, q_star = study.lme_threshold(u, "relu", q_grid)
    assert q_star == pytest.approx(Q_STAR, abs=1e-9)
    assert np.array_equal(flags, margins > 0)
    _, _, none = study.lme_threshold(u, "relu", np.linspace(0.5, 0.9, 5))  # no sign change
    assert np.isnan(none)


def test_closures_match_the_functions_they_wrap():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 3))
    views = stack_views(x, x)
    w = rng.standard_normal((2, 3))
    np.testing.assert_array_equal(study.gate_fn(views, "relu")(w), gate_matrix(views, w, "relu"))
    alpha = study.gaussian_alpha_fn(x, "relu", 0.5)
    expected = gaussian_alpha(get_activation("relu")(w @ x.T)[..., None], 0.5)
    np.testing.assert_allclose(alpha(w), expected, rtol=0, atol=1e-12)  # Lemma 1's α, to rounding
    np.testing.assert_array_equal(
        study.gate_fn(views, "relu", alpha)(w), gate_matrix(views, w, "relu", alpha)
    )
    atoms, probs, _ = latent_summation_support(np.eye(3), 0.3)
    np.testing.assert_array_equal(
        study.population_gate_fn(atoms, probs, "quadratic")(w),
        population_gate_matrix(atoms, probs, w, "quadratic"),
    )


@given(st.integers(0, 10_000), st.floats(0.01, 10.0))
@settings(max_examples=25)
def test_z0_is_at_most_one(seed, tau):
    """Corollary 2: z₀(α_g) = E[exp(−h²/2τ)] ∈ (0, 1], = 1 when every sample is on the inactive side."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((30, 3))
    w = rng.standard_normal((4, 3))
    z = study.z0(w, x, "relu", tau)
    assert np.all((z > 0) & (z <= 1))
    assert study.z0(np.array([1.0, 0, 0]), -np.abs(x), "relu", tau) == 1.0


def test_noisy_latent_summation_draws_states_then_noise():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    got = study.noisy_latent_summation(50, u, 0.2, 0.2, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    x, _ = latent_summation(50, u, 0.2, rng=rng)
    np.testing.assert_array_equal(got, x + 0.2 * rng.standard_normal(x.shape))


@given(st.floats(0.01, 1.0), st.integers(0, 1000))
@settings(max_examples=20)
def test_perturbations_start_at_the_chord_of_their_angle(angle, seed):
    """Each perturbed filter is at distance 2 sin(angle/2) from its unit w* (a rotation by angle)."""
    u = nearly_orthonormal_basis(4, 2, rng=np.random.default_rng(0))
    atoms, probs, _ = latent_summation_support(u, 0.2)
    a_fn = study.population_gate_fn(atoms, probs, "relu")
    dist0, dist1 = study.perturbation_distances(a_fn, u.T, 3, angle, 2, np.random.default_rng(seed))
    assert dist0.shape == dist1.shape == (3, 2)
    np.testing.assert_allclose(dist0, 2 * np.sin(angle / 2), rtol=1e-10)


def test_perturbations_of_an_lme_decay():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    atoms, probs, _ = latent_summation_support(u, 0.2)
    a_fn = study.population_gate_fn(atoms, probs, "relu")
    dist0, dist1 = study.perturbation_distances(a_fn, u.T, 4, 0.1, 200, np.random.default_rng(0))
    assert np.all(dist1 < 0.5 * dist0)


def test_stable_optima_counts_distinct_settled_filters():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    rng = np.random.default_rng(2)
    x, _ = latent_summation(200, u, 0.2, rng=rng)
    views = stack_views(x, x)
    count, kept = study.stable_optima(
        study.gate_fn(views, "relu"), rng.standard_normal((12, 4)), views, "relu", 100
    )
    assert 1 <= count <= len(kept) <= 12
    np.testing.assert_allclose(np.linalg.norm(kept, axis=-1), 1.0, rtol=1e-9)


def test_ratios_at_settled_points():
    g = {
        "settled": np.array([True, True, False]),
        "rho_g": np.array([1.0, 3.0, 100.0]),
        "rho_u": np.array([2.0, 2.0, 1.0]),
        "lam1_g": np.array([1.0, 1.0, 1.0]),
        "lam1_u": np.array([2.0, 2.0, 1.0]),
    }
    assert study.raw_ratio(g) == pytest.approx(1.0)
    assert study.scale_free_ratio(g) == pytest.approx(2.0)
    assert np.isnan(study.scale_free_ratio({**g, "settled": np.zeros(3, bool)}))


def test_theorem2_study_small():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    b2 = study.theorem2_study(u, 0.2, "relu", 0.5, 60, 2, seed=0)
    for key in ("uniform", "gaussian", "scale_free", "raw", "slack", "z0", "settled", "small", "small_z0"):
        assert len(b2[key]) == 2, key
    assert max(b2["uniform"]) <= 1 and max(b2["gaussian"]) <= 1  # the bound's slack is huge here
    assert all(0 <= s <= 1 for s in b2["settled"])
    assert b2["c0"] > 0 and len(b2["cp_rank"]) == len(b2["cp_eig_cos"]) == len(b2["cp_top_cos"])
    if len(b2["cp_top_cos"]):
        assert b2["cp_rank_min"] == int(np.min(b2["cp_rank"]))
        assert 0 <= b2["cp_lme_fraction"] <= 1


def test_gaussian_cp_tau_scan_shapes_and_consistency():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    taus = [0.05, 2.0]
    scan = study.gaussian_cp_tau_scan(u, 0.2, "relu", taus, 60, 2, seed=0, steps=60)
    for key in ("settled", "rank", "top_cos", "pattern_cos"):
        assert scan[key].shape == (2, 2, 3), key
    assert np.array_equal(scan["tau"], taus)
    assert np.all((scan["pattern_cos"] >= 0) & (scan["pattern_cos"] <= 1 + 1e-12))
    for t in range(2):
        ok = scan["settled"][t]
        assert scan["n_settled"][t] == ok.sum()
        if ok.any():
            lme = scan["top_cos"][t][ok] >= 1 - 1e-6
            assert scan["lme_fraction"][t] == pytest.approx(lme.mean())
            assert scan["pattern_cos_max"][t] == pytest.approx(scan["pattern_cos"][t][ok].max())


def test_gaussian_cp_tau_scan_matches_one_tau_at_a_time():
    """Vectorizing over τ (features divided by √τ) gives the dynamics of each τ alone."""
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(1))
    both = study.gaussian_cp_tau_scan(u, 0.2, "relu", [0.1, 1.0], 50, 1, seed=3, steps=40)
    for i, tau in enumerate((0.1, 1.0)):
        one = study.gaussian_cp_tau_scan(u, 0.2, "relu", [tau], 50, 1, seed=3, steps=40)
        assert np.allclose(one["pattern_cos"][0], both["pattern_cos"][i], rtol=0, atol=1e-9)
        assert np.array_equal(one["rank"][0], both["rank"][i])


def test_gaussian_cp_tau_scan_rejects_bad_input():
    u = nearly_orthonormal_basis(4, 3, rng=np.random.default_rng(0))
    for taus in ([], [0.5, -1.0], [float("nan")]):
        with pytest.raises(ParameterError, match="taus"):
            study.gaussian_cp_tau_scan(u, 0.2, "relu", taus, 60, 1, seed=0)
    with pytest.raises(ParameterError, match="n_seeds"):
        study.gaussian_cp_tau_scan(u, 0.2, "relu", [0.5], 60, 0, seed=0)


def test_no_lme_tau_max():
    scan = {"tau": np.array([2.0, 0.05, 0.5, 1.0]), "lme_fraction": np.array([0.9, 0.0, 0.0, 0.1])}
    assert study.no_lme_tau_max(scan) == 0.5
    assert np.isnan(study.no_lme_tau_max({**scan, "lme_fraction": np.array([0.9, 0.2, 0.0, 0.0])}))
    assert np.isnan(study.no_lme_tau_max({**scan, "lme_fraction": np.array([0.0, np.nan, 0.0, 0.0])}))
    assert study.no_lme_tau_max({**scan, "lme_fraction": np.zeros(4)}) == 2.0


def test_critical_point_near_is_critical_and_unit():
    u = nearly_orthonormal_basis(5, 3, 0.1, rng=np.random.default_rng(3))
    atoms, probs, _ = latent_summation_support(u, np.array([0.1, 0.15, 0.2]))
    a_fn = study.population_gate_fn(atoms, probs, "quadratic")
    w = study.critical_point_near(a_fn, u[:, 0])
    aw = a_fn(w) @ w
    assert np.linalg.norm(w) == pytest.approx(1.0, abs=1e-12)
    assert np.linalg.norm(aw - (aw @ w) * w) < 1e-9
    assert abs(w @ u[:, 0]) > 0.9


def test_theorem1_two_sided_rows_and_counts():
    t1 = study.theorem1_two_sided(0, 2)
    assert t1.shape == (8, 7)
    counts = study.two_sided_counts(t1)
    assert sum(counts.values()) == int((t1[:, 3] > 0).sum())


def test_power_iteration_near_orthonormal_patterns_converges():
    final, closeness, steps = ext.power_iteration_near_patterns(5, 3, 0.2, "relu", [0.0, 0.05], 0, steps=50)
    assert len(final) == 2 and len(closeness) == 1 and steps[0].shape == (50, 3)
    assert final[0] < 1e-12  # at ε = 0 every u_m is a fixed point (Eq. 9)


def test_eq11_and_theorem3_tables_have_one_row_per_case():
    gammas = np.linspace(0.1, 0.9, 3)
    rows = ext.eq11_quadratic(4, 2, 0.2, [0.0], 0, gammas)
    assert rows.shape == (2, 6)
    t3 = ext.theorem3_tanh(4, 2, 0.2, [0.0, 0.1], 0, gammas)
    assert t3.shape == (4, 4)
    assert set(np.unique(t3[:, 2:])) <= {0.0, 1.0}


def test_theorem3_near_patterns_rows_and_conclusions_at_exact_patterns():
    """One row per (ε, m, start); at ε = 0 the iteration from next to u_m converges to a stable
    LME inside B_γ wherever Eq. 11 holds (Tian 2023, Theorem 3 / Lemma 11)."""
    gammas = np.linspace(0.1, 0.9, 5)
    df = ext.theorem3_near_patterns(4, 2, 0.2, [0.0, 0.02], 0, gammas, n_starts=2, steps=100)
    assert len(df) == 2 * 2 * 2
    assert set(df.columns) >= {
        "eq11",
        "eq11_global",
        "converged",
        "critical",
        "inside",
        "lme",
        "monotone",
        "stable",
    }
    held = df[(df.eps == 0.0) & df.eq11]
    assert len(held) > 0
    assert held[["converged", "critical", "inside", "lme", "monotone", "stable"]].all().all()
    assert (held.cos_um > 0.99).all() and (df.spread < 1e-8).all()


def test_more_nodes_linear_filters_end_on_the_top_principal_direction():
    rng = np.random.default_rng(0)
    u = nearly_orthonormal_basis(4, 3, rng=rng)
    y = latent_summation(200, np.eye(3), 0.2, rng=rng)[1]
    x = (y * np.linspace(1.0, 0.6, 3)) @ u.T
    w0 = rng.standard_normal((2, 4, 4))
    ks = np.array([1, 2, 4])
    out = ext.more_nodes(x, w0, u, "relu", "uniform", 0.5, ks, 300)
    assert out["recovered"]["relu"].shape == out["recovered"]["linear"].shape == (2, 3)
    assert out["lin_cos"].min() > 0.99
    assert np.all(np.diff(out["recovered"]["relu"], axis=1) >= 0)  # more filters, never fewer patterns


def test_rotation_sweep_full_group_is_flat_and_none_is_variance():
    x = points_on_circle(FIG8_ANGLES)
    th = np.linspace(-np.pi, np.pi, 90, endpoint=False)
    w = np.stack([np.cos(th), np.sin(th)], -1)
    curves = ext.rotation_sweep(x, w, "relu", [0.0, np.pi], n_t=512)
    np.testing.assert_allclose(curves[0.0], 0.5 * get_activation("relu")(w @ x.T).var(-1), rtol=1e-12)
    e = curves[np.pi]
    assert e.max() - e.min() <= 1e-6 * curves[0.0].max()


def test_cyclic_study_is_invariant_under_its_group():
    x = points_on_circle(FIG8_ANGLES)
    th = np.linspace(-np.pi, np.pi, 120, endpoint=False)
    w = np.stack([np.cos(th), np.sin(th)], -1)
    out = ext.cyclic_study(x, w, "relu", 1.0, 120)
    assert set(out) == {2, 3, 4, 6}
    assert all(c["invariance"] <= 1e-12 for c in out.values())
    assert np.isnan(ext.cyclic_study(x, w[:-2], "relu", 1.0, 118)[4]["invariance"])


@given(st.lists(st.floats(-10, 10), min_size=1, max_size=30))
@settings(max_examples=50)
def test_profile_maxima_counts_strict_local_maxima(values):
    n = ext.profile_maxima(values)
    assert 0 <= n <= (len(values) + 1) // 2
    if len(values) >= 2:
        assert ext.profile_maxima(np.sort(values)[::-1] + np.arange(len(values))[::-1] * 1e-3) == 1
    assert ext.profile_maxima([1.0] * len(values)) == (1 if len(values) == 1 else 0)


def test_rotation_sweep_in_blocks_is_bitwise_all_filters_at_once(monkeypatch):
    x = points_on_circle(FIG8_ANGLES)
    th = np.linspace(-np.pi, np.pi, 37, endpoint=False)
    w = np.stack([np.cos(th), np.sin(th)], -1)
    betas = [0.0, 0.4, np.pi]
    monkeypatch.setattr(ext, "SWEEP_BLOCK_ELEMENTS", 2**40)  # one block: the previous formulation
    whole = ext.rotation_sweep(x, w, "relu", betas, n_t=64)
    for block in (1, 9 * 64 * 5):
        monkeypatch.setattr(ext, "SWEEP_BLOCK_ELEMENTS", block)
        got = ext.rotation_sweep(x, w, "relu", betas, n_t=64)
        assert all(got[b].tobytes() == whole[b].tobytes() for b in betas)
    assert ext.rotation_sweep(x, w[:0], "relu", betas, n_t=64)[0.0].shape == (0,)
