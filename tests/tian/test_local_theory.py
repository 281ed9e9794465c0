"""Tests for nlcl.tian.local_theory: Theorem 2 bound, Theorem 1 roughness, Theorem 3 irregularity (Tian 2023)."""

from math import pi

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError
from nlcl.tian.landscape import population_gate_matrix
from nlcl.tian.latent_data import latent_summation_support
from nlcl.tian.local_theory import (
    ball_volume,
    critical_point_diagnostics,
    eq11_radius,
    eq11_sup_omega,
    eq11_sup_omega_on_cap,
    feature_gaussian_alpha,
    gaussian_alpha_roughness,
    irregularity,
    kappa_estimate,
    lipschitz_estimate,
    mixture_plane_density_max,
    noisy_population_gate_matrix,
    perturbation_growth,
    roughness_jacobian,
    theorem2_bound,
)


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.integers(1, 30), st.floats(0.05, 20.0))
def test_feature_gaussian_alpha_is_lemma1_alpha_of_a_scalar_feature(seed, n, tau):
    from nlcl.tian.contrastive import gaussian_alpha

    g = np.random.default_rng(seed).standard_normal((3, n)) * 2
    a = feature_gaussian_alpha(g, tau)
    assert a.shape == (3, n, n)
    np.testing.assert_allclose(a, gaussian_alpha(g[..., None], tau), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a, np.swapaxes(a, -1, -2))  # symmetric, exactly
    np.testing.assert_array_equal(np.diagonal(a, axis1=-2, axis2=-1), 1.0)  # unit diagonal, exactly


def test_feature_gaussian_alpha_refuses_bad_input():
    with pytest.raises(ParameterError, match="tau"):
        feature_gaussian_alpha(np.ones(3), 0.0)
    with pytest.raises(ParameterError, match="g must"):
        feature_gaussian_alpha(1.0, 0.5)


def test_ball_volume_known_values():
    assert ball_volume(2, 1.0) == pytest.approx(pi)
    assert ball_volume(3, 2.0) == pytest.approx(4 / 3 * pi * 8)
    with pytest.raises(ParameterError, match="dim"):
        ball_volume(0, 1.0)
    with pytest.raises(ParameterError, match="radius"):
        ball_volume(2, -1.0)


@settings(max_examples=20)
@given(st.integers(1, 10), st.floats(0.1, 5.0), st.floats(0.0, 10.0))
def test_theorem2_bound_is_the_printed_product(d, c0, r):
    assert theorem2_bound(c0, d, r) == pytest.approx(c0**3 * ball_volume(d, c0) / pi * r)


def test_theorem2_bound_rejects_bad_input():
    with pytest.raises(ParameterError, match="r must"):
        theorem2_bound(1.0, 2, -1.0)
    with pytest.raises(ParameterError, match="c0"):
        theorem2_bound(0.0, 2, 1.0)


@settings(max_examples=15)
@given(st.integers(0, 10**6))
def test_plane_density_max_beats_grid(seed):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((3, 2))
    weights = rng.dirichlet(np.ones(3))
    w = np.array([1.0, 0.0])  # plane x_1 = 0: the line (0, t)
    best, loc = mixture_plane_density_max(centers, weights, 0.4, w)
    assert abs(loc[0]) < 1e-12
    t = np.linspace(-6, 6, 4001)
    grid = np.stack([np.zeros_like(t), t], 1)
    sq = ((grid[:, None] - centers[None]) ** 2).sum(-1)
    dens = (weights * np.exp(-sq / (2 * 0.16))).sum(-1) / (2 * pi * 0.16)
    assert best >= dens.max() * (1 - 1e-3)


def test_plane_density_rejects_bad_weights():
    with pytest.raises(ParameterError, match="weights"):
        mixture_plane_density_max(np.zeros((2, 2)), np.array([0.5, 0.6]), 0.1, np.array([1.0, 0.0]))


def _quad_a(q, d=4, m=3):
    u = np.eye(d)[:, :m]
    at, ap, _ = latent_summation_support(u, q)
    return lambda w: population_gate_matrix(at, ap, w, "quadratic"), u


@pytest.mark.parametrize("q", [0.1, 0.2, 0.25])
def test_roughness_and_stability_closed_form(q):
    """x² on orthonormal latent summation: ρ(u_m) = 1, λ_gap = V[y²] − 1; stable iff λ_gap > ρ."""
    a_fn, u = _quad_a(q)
    ey4 = ((1 - q) ** 3 + q**3) / (q * (1 - q))
    rho = roughness_jacobian(a_fn, u[:, 0])
    assert rho == pytest.approx(1.0, rel=1e-6)
    growth = perturbation_growth(a_fn, u[:, 0], angle=0.01, n_dirs=4, lr=0.5, steps=300, rng=0)
    gap = ey4 - 2
    assert (growth.max() < 1) == (gap > 1)


def test_irregularity_formula_and_limits():
    mu = 0.5 * (1 + 0.9) / 0.9**2 * (1 - 0.5 / 2.0) ** 2
    expect = mu + 2 * 0.1 * 4 * (1 + mu * 0.9) + 2 * 2 / 0.5 * np.sqrt(mu * (1 + mu * 0.9))
    assert irregularity(0.9, 2.0, 0.5, 2.0, 0.1) == pytest.approx(expect)
    assert irregularity(1.0, 1.0, 1.0, 0.0, 0.0) == 0.0  # rank one A at its eigenvector, A constant
    assert np.isinf(irregularity(0.0, 1.0, 0.5, 1.0, 1.0))
    with pytest.raises(ParameterError, match="lipschitz"):
        irregularity(1.0, 1.0, 0.5, -1.0, 0.0)


@settings(max_examples=20)
@given(st.floats(0.01, 0.99), st.floats(0.0, 0.999))
def test_eq11_radius_matches_cap_form(gamma, c0):
    """Eq. 103: ‖w − w(0)‖ ≤ radius ⇔ wᵀw(0) ≥ (c₀ − c_γ)/(1 − c_γ), c_γ = 2√γ/(1+γ)."""
    r = eq11_radius(gamma, c0)
    cg = 2 * np.sqrt(gamma) / (1 + gamma)
    assert 1 - r**2 / 2 == pytest.approx((c0 - cg) / (1 - cg), rel=1e-9, abs=1e-9)


def test_lipschitz_and_kappa_estimates():
    eye = np.eye(3)
    const = lambda w: np.broadcast_to(eye, np.shape(w)[:-1] + (3, 3)).copy()  # noqa: E731
    assert lipschitz_estimate(const, n_points=16, dim=3, rng=0) == 0.0
    lin = lambda w: np.einsum("...i,...j->...ij", w, w)  # noqa: E731  A(w) = wwᵀ: ‖uwᵀ + wuᵀ‖₂ = 1, L = 1
    assert lipschitz_estimate(lin, n_points=64, dim=3, radius=1e-5, rng=0) == pytest.approx(1.0, abs=1e-4)
    assert kappa_estimate(lin, np.eye(3), rng=0) >= 0
    with pytest.raises(ParameterError, match="dim"):
        lipschitz_estimate(lin)


def test_eq11_sup_omega_shapes_and_failure_for_quadratic():
    a_fn, u = _quad_a(0.2)
    gam = np.array([0.2, 0.5, 0.9])
    sup = eq11_sup_omega(a_fn, u[:, 0], gam, lipschitz=2.0, kappa=0.3, n_points=8, rng=0)
    assert sup.shape == (3,) and np.all(sup > gam)  # Eq. 11 fails with these constants
    sup0 = eq11_sup_omega(a_fn, u[:, 0], gam, lipschitz=0.0, kappa=0.0, n_points=8, rng=0)
    assert np.all(sup0 < 1)  # with L = 0 only μ remains, small at an exact LME


@settings(max_examples=20)
@given(st.integers(0, 10**6), st.integers(2, 6))
def test_critical_point_diagnostics_names_each_eigenvector(seed, d):
    """For a constant A every eigenvector φ_j is a critical point of rank j - 1; only φ₁ is an LME."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    lam = np.sort(rng.uniform(0.5, 3.0, d))[::-1] + np.arange(d)[::-1]  # distinct, descending
    a = q @ np.diag(lam) @ q.T

    def a_fn(w):
        return np.broadcast_to(a, w.shape + (d,))

    out = critical_point_diagnostics(a_fn, q.T * rng.choice([-1.0, 1.0], d)[:, None])
    np.testing.assert_allclose(out["residual"], 0.0, atol=1e-10)
    np.testing.assert_array_equal(out["rank"], np.arange(d))
    np.testing.assert_allclose(out["eig_cos"], 1.0, atol=1e-10)
    np.testing.assert_allclose(out["lam1"], lam[0])
    assert out["top_cos"][0] == pytest.approx(1.0) and np.all(out["top_cos"][1:] < 1e-8)
    w = rng.standard_normal(d)  # a generic point is not critical
    assert critical_point_diagnostics(a_fn, w)["residual"] > 1e-6


def test_critical_point_diagnostics_rejects_bad_input():
    with pytest.raises(ParameterError, match="a_fn must map"):
        critical_point_diagnostics(lambda w: np.eye(3), np.ones((2, 3)))
    with pytest.raises(ParameterError, match="non-zero"):
        critical_point_diagnostics(lambda w: np.eye(3), np.zeros(3))


def test_gaussian_alpha_roughness_tends_to_uniform_for_large_tau():
    """τ → ∞ makes α_g ≡ 1 (Cor. 2): same critical points as uniform α, same ρ and λ₁, z₀ = 1."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 4)) + np.array([0.5, 0.0, 0.0, 0.0])
    out = gaussian_alpha_roughness(x, "relu", 1e9, np.eye(4)[:2], steps=50, rng=1)
    np.testing.assert_allclose(out["z0"], 1.0, atol=1e-8)
    np.testing.assert_allclose(out["rho_g"], out["rho_u"], rtol=1e-6)
    np.testing.assert_allclose(out["lam1_g"], out["lam1_u"], rtol=1e-6)
    assert out["settled"].dtype == bool and out["w"].shape == (2, 4)


def test_gaussian_alpha_roughness_small_tau_shrinks_z0_and_rejects_bad_input():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((40, 3)) + np.array([3.0, 0.0, 0.0])  # data on the positive side of e_1
    out = gaussian_alpha_roughness(x, "relu", 0.01, np.eye(3)[:1], steps=20, rng=0)
    assert out["z0"][0] < 0.05 and np.all(out["rho_g"] >= 0)
    with pytest.raises(ParameterError, match="x must be"):
        gaussian_alpha_roughness(np.ones(3), "relu", 1.0, np.eye(3)[:1])
    with pytest.raises(ParameterError, match="tau"):
        gaussian_alpha_roughness(x, "relu", 0.0, np.eye(3)[:1])
    with pytest.raises(ParameterError, match="w0 must be"):
        gaussian_alpha_roughness(x, "relu", 1.0, np.ones(3))
    with pytest.raises(ParameterError, match="min_crossing"):
        gaussian_alpha_roughness(x, "relu", 1.0, np.eye(3)[:1], min_crossing=0)
    assert np.all(out["radius"] >= 0.02)  # at least the given radius, wider where no sample is near the plane


def test_eq11_on_a_cap_of_a_constant_matrix_is_mu():
    """A constant A(w): L and κ on B_γ vanish, ν = 0 and sup ω is the largest μ over the sampled
    cap (Tian 2023, Eqs. 10-11); the paper's global L can only raise it."""
    a0 = np.diag([3.0, 1.0, 0.5, 0.2])

    def a_fn(w):
        return np.broadcast_to(a0, np.shape(w)[:-1] + (4, 4)).copy()

    w0 = np.array([1.0, 0.05, 0.0, 0.0])
    gammas = np.array([0.2, 0.5])
    out = eq11_sup_omega_on_cap(a_fn, w0, gammas, n_points=16, global_lipschitz=1.0, rng=0)
    assert np.all(out["lipschitz"] == 0) and np.all(out["kappa"] == 0) and np.all(out["sup_nu"] == 0)
    lam = np.linalg.eigvalsh(a0) - 0.2 + 1e-12
    mu_top = 0.5 * (1 + 1) * (lam[-2] / lam[-1]) ** 2  # μ at c = 1
    assert np.all(out["sup_omega"] >= mu_top - 1e-12)
    assert np.all(out["sup_omega_global"] >= out["sup_omega"])
    assert np.allclose(out["radius"], [eq11_radius(g, float(w0[0] / np.linalg.norm(w0))) for g in gammas])


def test_eq11_on_a_cap_estimates_the_local_lipschitz_constant():
    """A(w) = B + s·wwᵀ changes at rate s along the sphere (‖δw wᵀ + w δwᵀ‖₂ = ‖δw‖ for δw ⊥ w):
    L on B_γ is s to the first order in the pair distance."""
    b = np.diag([2.0, 1.0, 0.5])
    s = 0.3

    def a_fn(w):
        w = np.asarray(w, dtype=float)
        return b + s * w[..., :, None] * w[..., None, :]

    out = eq11_sup_omega_on_cap(a_fn, np.array([1.0, 0.1, 0.0]), [0.5], n_points=8, rng=1)
    assert out["lipschitz"][0] == pytest.approx(s, rel=1e-3)
    assert out["sup_nu"][0] > 0 and "sup_omega_global" not in out


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
def test_noisy_population_gate_matrix_is_the_covariance_of_the_gated_noisy_input(activation):
    """A(w) = V[x̃ʷ] for x = a + σz in closed form (Tian 2023, Eqs. 6-7) against Monte Carlo,
    within 5 standard errors of each entry."""
    rng = np.random.default_rng(3)
    atoms, probs, sigma = rng.standard_normal((5, 3)), rng.dirichlet(np.ones(5)), 0.4
    w = rng.standard_normal(3)
    n = 200_000
    x = atoms[rng.choice(5, n, p=probs)] + sigma * rng.standard_normal((n, 3))
    xt = x * get_activation(activation).gate(x @ w)[:, None]
    xc = xt - xt.mean(0)
    prod = xc[:, :, None] * xc[:, None, :]
    se = prod.std(0) / np.sqrt(n)
    a = noisy_population_gate_matrix(atoms, probs, sigma, w / np.linalg.norm(w) * 2.0, activation)
    assert np.all(np.abs(a - prod.mean(0)) <= 5 * se + 1e-12)


def test_noisy_population_gate_matrix_limits():
    """σ → 0 gives the atoms' matrix (population_gate_matrix); a LeakyReLU of slope 1 is linear, so
    A is the constant covariance Σ p aaᵀ − mmᵀ + σ²I; leading dimensions broadcast."""
    rng = np.random.default_rng(4)
    atoms, probs = rng.standard_normal((6, 4)), rng.dirichlet(np.ones(6))
    w = rng.standard_normal((2, 3, 4))
    exact = population_gate_matrix(atoms, probs, w, "relu")
    assert np.allclose(noisy_population_gate_matrix(atoms, probs, 1e-9, w), exact, atol=1e-12)
    m = probs @ atoms
    cov = (
        (probs[:, None, None] * atoms[:, :, None] * atoms[:, None, :]).sum(0)
        - np.outer(m, m)
        + 0.09 * np.eye(4)
    )
    linear = noisy_population_gate_matrix(atoms, probs, 0.3, w, get_activation("leaky_relu", slope=1.0))
    assert linear.shape == (2, 3, 4, 4) and np.allclose(linear, cov, atol=1e-12)
    with pytest.raises(ValueError, match="relu or leaky_relu"):
        noisy_population_gate_matrix(atoms, probs, 0.3, w, "tanh")
    with pytest.raises(ValueError, match="sigma"):
        noisy_population_gate_matrix(atoms, probs, 0.0, w)
