"""Tests for nlcl.tian.power_iteration_lemmas: Lemmas 7-11 of Tian 2023 (App. G) along power iteration."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian import one_layer_extensions as ext
from nlcl.tian.landscape import power_iteration
from nlcl.tian.power_iteration_lemmas import (
    SHIFT_EPS,
    _first_order,
    iterated_matrix,
    lemma9_remainder,
    lemma9_slope,
    lemma11_conclusions,
    trajectory_lemmas,
)


def _spd(rng, d, spread=1.0):
    """A random SPD matrix with λ₁ = 1 and the rest in [0.1, 0.7]^spread (gap ≥ 0.3)."""
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.r_[1.0, rng.uniform(0.1, 0.7, d - 1) ** spread]
    return (q * lam) @ q.T


def _sym(rng, d):
    e = rng.standard_normal((d, d))
    return e + e.T


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.integers(2, 7))
def test_iterated_matrix_is_pd_with_the_same_eigenvectors(seed, d):
    a = _sym(np.random.default_rng(seed), d)
    ah = iterated_matrix(a)
    lam, lam_h = np.linalg.eigvalsh(a), np.linalg.eigvalsh(ah)
    np.testing.assert_allclose(lam_h, lam - lam[0] + SHIFT_EPS, atol=1e-12)
    np.testing.assert_allclose(ah - a, (ah - a)[0, 0] * np.eye(d), atol=1e-12)  # a multiple of I


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.integers(2, 7))
def test_first_order_term_is_the_eigen_sum_of_eq190(seed, d):
    """The linear solve gives Δφ₁ = Σ_{j>1} φ_jᵀ δA φ₁/(λ₁ − λ_j) φ_j (Tian 2023, Eq. 190)."""
    rng = np.random.default_rng(seed)
    a, da = _sym(rng, d), _sym(rng, d)
    lam, phi = np.linalg.eigh(a)
    p1 = phi[:, -1]
    expected = sum((phi[:, j] @ da @ p1) / (lam[-1] - lam[j]) * phi[:, j] for j in range(d - 1))
    got = _first_order(a, np.float64(lam[-1]), p1, da, np.float64(lam[-1] - lam[-2]))
    np.testing.assert_allclose(got, expected, atol=1e-9 * max(1.0, np.abs(expected).max()))


def test_first_order_term_is_nan_where_the_top_eigenvalue_is_repeated():
    """Eq. 190 divides by λ₁ − λ₂: with λ₁ repeated Δφ₁ is undefined, NaN (not a singular solve),
    and the trajectory's Lemma 9 and 10 quantities are NaN at that step while Lemmas 7 and 8 stand."""
    a = np.diag([2.0, 2.0, 1.0])
    got = _first_order(a, np.float64(2.0), np.array([1.0, 0.0, 0.0]), np.eye(3) * 0.1, np.float64(0.0))
    assert np.isnan(got).all()
    traj = np.array([[1.0, 0.2, 0.1], [1.0, 0.1, 0.05], [1.0, 0.05, 0.02]])
    q = trajectory_lemmas(lambda w: np.broadcast_to(a, (*w.shape[:-1], 3, 3)).copy(), traj)
    assert np.isnan(q["kappa"]).all() and np.isnan(q["ratio10"]).all()


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_lemma9_remainder_is_second_order(seed, d):
    """Eq. 190: the remainder is O(‖δA‖²), slope 2; dropping Δφ₁ leaves a first-order error (slope 1)."""
    rng = np.random.default_rng(seed)
    a, e = _spd(rng, d), _sym(rng, d)
    lam = np.linalg.eigvalsh(a)
    gap = lam[-1] - lam[-2]
    e /= np.linalg.norm(e, 2)
    scales = ext.LEMMA9_SCALES * gap
    assert lemma9_slope(a, e, scales) == pytest.approx(2.0, abs=0.01)
    # the remainder of the zeroth-order expansion alone, φ₁' − φ₁, is first order
    p1 = np.linalg.eigh(a)[1][:, -1]
    first = []
    for s in scales:
        q = np.linalg.eigh(a + s * e)[1][:, -1]
        first.append(np.linalg.norm(q * np.sign(q @ p1) - p1))
    assert np.polyfit(np.log(scales), np.log(first), 1)[0] == pytest.approx(1.0, abs=0.05)
    assert lemma9_remainder(a, a) == pytest.approx(0.0, abs=1e-12)


def test_lemma9_refuses_bad_input():
    with pytest.raises(ParameterError, match="square"):
        lemma9_remainder(np.eye(3), np.eye(2))
    with pytest.raises(ParameterError, match="scales"):
        lemma9_slope(np.eye(2), np.eye(2), [1e-3])


@settings(max_examples=25)
@given(st.integers(0, 10_000), st.integers(2, 6), st.floats(0.5, 4.0))
def test_lemmas_7_8_hold_for_a_constant_pd_matrix(seed, d, spread):
    """Constant A: δA = 0, so d_t = c_{t+1} (Lemma 10 is 0 ≤ 0) and Lemmas 7-8 bound every step."""
    rng = np.random.default_rng(seed)
    a = _spd(rng, d, spread)
    traj = power_iteration(
        lambda w: np.broadcast_to(a, w.shape + (d,)), rng.standard_normal((3, d)), steps=30
    )
    q = trajectory_lemmas(lambda w: np.broadcast_to(a, w.shape + (d,)), traj)
    assert q["ratio7"].shape == (30, 3)
    assert np.nanmax(q["ratio7"], initial=0) <= 1 + 1e-6
    assert np.nanmax(q["ratio8"], initial=0) <= 1 + 1e-6
    assert np.all(np.isnan(q["ratio10"])) and np.all(q["dA"] == 0) and np.all(q["d_minus_c"] < 1e-15)
    assert np.all(np.diff(q["one_minus_c"], axis=0) <= 1e-15)  # power iteration on a constant A


def test_lemma7_is_tight_when_the_residual_lies_on_phi2():
    """With w in span(φ₁, φ₂) and 1 − c small, 1 − d_t → μ_t(1 − c_t) (Eqs. 184-186 become equalities)."""
    a = np.diag([1.0, 0.5, 0.1])
    w0 = np.array([np.cos(1e-3), np.sin(1e-3), 0.0])
    traj = power_iteration(lambda w: np.broadcast_to(a, w.shape + (3,)), w0, steps=1)
    q = trajectory_lemmas(lambda w: np.broadcast_to(a, w.shape + (3,)), traj)
    assert q["ratio7"][0] == pytest.approx(1.0, abs=1e-5)
    assert q["ratio7"][0] <= 1 + 1e-9


def test_lemma7_needs_more_than_a_positive_top_eigenvalue():
    """Lemma 7 states c_t > 0, λ₁ > 0; its proof (Eq. 184) needs |λ_i| ≤ λ₂ for i > 1 (true when A is PD).

    With λ = (1, 0.1, −5) the unshifted iteration breaks the bound; the PD Â of Eq. 104 (what
    :func:`trajectory_lemmas` and the runs use) meets it.
    """
    a = np.diag([1.0, 0.1, -5.0])
    w = np.array([0.9, 0.1, 0.3])
    w /= np.linalg.norm(w)
    w_next = a @ w / np.linalg.norm(a @ w)
    c, d = w[0], w_next[0]
    mu = (1 + c) / (2 * c**2) * 0.1**2
    assert 1 - d > mu * (1 - c)  # the bound fails without PD
    traj = np.stack([w, iterated_matrix(a) @ w / np.linalg.norm(iterated_matrix(a) @ w)])
    q = trajectory_lemmas(lambda v: np.broadcast_to(a, v.shape + (3,)), traj)
    assert q["ratio7"][0] <= 1 + 1e-9


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.floats(0.05, 0.5))
def test_lemma10_holds_with_the_pairs_own_constants(seed, strength):
    """A(w) = B + s·(wwᵀ ⊙ C) varies with w; |d_t − c_{t+1}| ≤ ν_t(1 − c_t) with the pair's L and κ."""
    rng = np.random.default_rng(seed)
    d = 4
    b, cm = _spd(rng, d, 2.0), _sym(rng, d) / 4

    def a_fn(w):
        return b + strength * (w[..., :, None] * w[..., None, :]) * cm

    traj = power_iteration(a_fn, rng.standard_normal((2, d)), steps=40)
    q = trajectory_lemmas(a_fn, traj)
    assert np.nanmax(q["ratio10"], initial=0) <= 1 + 1e-6
    assert np.nanmax(q["ratio7"], initial=0) <= 1 + 1e-6
    assert np.nanmax(q["ratio8"], initial=0) <= 1 + 1e-6


def test_trajectory_lemmas_refuses_a_single_point():
    with pytest.raises(ParameterError, match="traj"):
        trajectory_lemmas(lambda w: np.eye(2), np.ones((1, 2)))


def _constant_run(gap_ratio=0.1, c0=0.99, steps=40):
    a = np.diag([1.0, gap_ratio, gap_ratio / 2])
    w0 = np.array([c0, np.sqrt(1 - c0**2), 0.0])
    fn = lambda w: np.broadcast_to(a, w.shape + (3,))  # noqa: E731
    traj = power_iteration(fn, w0, steps=steps)
    return traj, trajectory_lemmas(fn, traj)["one_minus_c"]


def test_lemma11_conclusions_hold_where_eq11_holds_and_fail_for_too_small_a_gamma():
    """Constant A (L = 0): ω = μ ≤ 0.02 on B_γ for γ = 0.5, so every conclusion holds; at γ = 10⁻⁴,
    below the contraction (λ₂/λ₁)² = 0.01 of 1 − c_t, the rate of Eq. 216 fails."""
    traj, omc = _constant_run()
    assert lemma11_conclusions(traj, omc, 0.5) == {"monotone": True, "rate": True, "path": True, "ball": True}
    assert lemma11_conclusions(traj, omc, 1e-4)["rate"] is False
    with pytest.raises(ParameterError, match="gamma"):
        lemma11_conclusions(traj, omc, 1.0)
    with pytest.raises(ParameterError, match="traj"):
        lemma11_conclusions(traj, omc[:-1], 0.5)


def test_theorem3_lemmas_on_small_runs():
    gammas = np.linspace(0.05, 0.95, 19)
    runs: list = []
    ext.power_iteration_near_patterns(5, 3, 0.2, "relu", [0.0, 0.1], 0, steps=30, runs=runs)
    ext.eq11_quadratic(5, 3, 0.2, [0.1], 0, gammas, runs=runs)
    ext.theorem3_tanh(5, 3, 0.2, [0.0, 0.1], 0, gammas, runs=runs)
    assert [r["h"] for r in runs] == ["relu", "relu", "quadratic", "tanh", "tanh"]
    assert runs[0]["traj"].shape == (31, 3, 5) and runs[2]["traj"].shape == (1001, 3, 5)
    summary, table = ext.theorem3_lemmas(runs, gammas, 0)
    assert len(table) == 5
    assert summary["ratio7"] <= 1 + 1e-6 and summary["ratio8"] <= 1 + 1e-6 and summary["ratio10"] <= 1 + 1e-6
    assert summary["slope9"] < 0.01
    assert summary["n_steps7"] > 0
    assert 0 <= summary["eq11_kept"] <= 1


def test_runs_do_not_change_the_theorem3_tables():
    gammas = np.linspace(0.1, 0.9, 3)
    runs: list = []
    np.testing.assert_array_equal(
        ext.theorem3_tanh(4, 2, 0.2, [0.0, 0.1], 0, gammas, runs=runs),
        ext.theorem3_tanh(4, 2, 0.2, [0.0, 0.1], 0, gammas),
    )
    assert runs[0]["gamma"].shape == (2,)
