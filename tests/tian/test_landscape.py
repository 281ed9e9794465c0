"""Tests for nlcl.tian.landscape (Tian 2023, Sec. 3, Lemma 3, Eq. PI, Def. 3, Thm. 1, App. E.1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nlcl.core.activations import get_activation
from nlcl.tian import landscape
from nlcl.tian.contrastive import contrastive_covariance, stack_views
from nlcl.tian.landscape import (
    FeatureAlpha,
    distinct_directions,
    eigengap,
    energy_on_circle,
    filter_energy,
    gate_matrix,
    gated_input,
    is_lme,
    local_roughness,
    one_layer_velocity,
    periodic_local_maxima,
    population_gate_matrix,
    power_iteration,
    riemannian_gradient,
    train_filters,
)
from nlcl.tian.latent_data import (
    FIG8_ANGLES,
    latent_categorical,
    latent_summation,
    latent_summation_support,
    nearly_orthonormal_basis,
    points_on_circle,
)

HOMOGENEOUS = ["linear", "relu", "leaky_relu", "quadratic", get_activation("monomial", p=3)]


def test_energy_on_circle_matches_loop():
    rng = np.random.default_rng(0)
    x = points_on_circle(rng.uniform(-np.pi, np.pi, 7))
    thetas = np.linspace(0, 2 * np.pi, 13)
    alpha = rng.random((7, 7))
    out = energy_on_circle(x, thetas, "relu", alpha)
    assert out.shape == (13,) and out.dtype == np.float64
    for g, th in enumerate(thetas):
        f = np.maximum(x @ [np.cos(th), np.sin(th)], 0)[:, None]
        ref = 0.5 * contrastive_covariance(stack_views(f, f), alpha=alpha)[0, 0]
        np.testing.assert_allclose(out[g], ref, atol=1e-12)


def test_fig8_counts():
    """App. E.1: ReLU gives >= 8 local maxima on the circle, linear exactly 2 (±φ_1)."""
    x = points_on_circle(FIG8_ANGLES)
    thetas = np.linspace(-np.pi, np.pi, 3600, endpoint=False)
    assert len(periodic_local_maxima(energy_on_circle(x, thetas, "relu"))) >= 8
    assert len(periodic_local_maxima(energy_on_circle(x, thetas, "linear"))) == 2


def test_periodic_local_maxima():
    assert periodic_local_maxima(np.ones(10)).size == 0
    np.testing.assert_array_equal(periodic_local_maxima([3, 1, 0, 1, 2]), [0])  # wrap-around peak
    np.testing.assert_array_equal(periodic_local_maxima([0, 2, 2, 2, 0, 1, 0]), [2, 5])  # plateau once
    seam = periodic_local_maxima([2, 0, 0, 0, 2])  # plateau across the seam counts once
    assert seam.size == 1 and seam[0] in (0, 4)
    t = np.linspace(0, 2 * np.pi, 360, endpoint=False)
    assert len(periodic_local_maxima(np.cos(3 * t))) == 3
    ripple = 1.0 + 1e-13 * np.cos(7 * t)
    assert (
        len(periodic_local_maxima(ripple)) == 7 and len(periodic_local_maxima(ripple, prominence=1e-9)) == 0
    )
    with pytest.raises(ValueError, match="1-D"):
        periodic_local_maxima(np.zeros((2, 2)))


@st.composite
def views_and_w(draw):
    n = draw(st.integers(2, 8))
    d = draw(st.integers(2, 4))
    v = draw(arrays(np.float64, (2 * n, d), elements=st.floats(-2, 2)))
    w = draw(arrays(np.float64, (3, d), elements=st.floats(-1, 1)))
    alpha = draw(arrays(np.float64, (n, n), elements=st.floats(0, 1)))
    return v, w, alpha


@given(views_and_w())
@settings(max_examples=30)
def test_lemma3_homogeneous(data):
    """Lemma 3: the Riemannian gradient of E_α equals k·P⊥_w A(w) w, and E_α = ½ wᵀA(w)w."""
    v, w, alpha = data
    if np.any(np.linalg.norm(w, axis=-1) < 1e-3):
        return
    wn = w / np.linalg.norm(w, axis=-1, keepdims=True)
    if np.min(np.abs(v @ wn.T)) < 1e-6:  # ReLU kink exactly on a sample: gradient not defined
        return
    for act in HOMOGENEOUS:
        a = gate_matrix(v, w, act, alpha)
        np.testing.assert_allclose(
            filter_energy(v, wn, act, alpha), 0.5 * np.einsum("gi,gij,gj->g", wn, a, wn), atol=1e-9
        )
        np.testing.assert_allclose(
            riemannian_gradient(v, w, act, alpha), one_layer_velocity(v, w, act, alpha), atol=1e-8
        )


def test_lemma3_fails_for_tanh():
    rng = np.random.default_rng(0)
    v, w = rng.standard_normal((20, 3)), rng.standard_normal((4, 3))
    diff = riemannian_gradient(v, w, "tanh") - one_layer_velocity(v, w, "tanh")
    assert np.max(np.abs(diff)) > 1e-3


def test_gated_input_shapes():
    x = np.random.default_rng(0).standard_normal((6, 3))
    w = np.random.default_rng(1).standard_normal((5, 2, 3))
    g = gated_input(x, w, "relu")
    assert g.shape == (5, 2, 6, 3)
    np.testing.assert_allclose(
        (g @ w[..., None])[..., 0], np.maximum((x @ w[..., None])[..., 0], 0), atol=1e-12
    )


def test_latent_categorical_lme_and_power_iteration():
    """Eq. 8: A(u_m) ∝ u_m u_mᵀ, so u_m is an LME; PI from near u_m returns to it."""
    u = nearly_orthonormal_basis(6, 4, rng=0)
    x, _ = latent_categorical(400, u, rng=1)
    v = stack_views(x, x)
    a_fn = lambda w: gate_matrix(v, w, "relu")  # noqa: E731
    assert np.all(is_lme(a_fn, u.T))
    rng = np.random.default_rng(2)
    w0 = u.T + 0.1 * rng.standard_normal(u.T.shape)
    traj = power_iteration(a_fn, w0, steps=20)
    assert traj.shape == (21, 4, 6)
    np.testing.assert_allclose(np.abs((traj[-1] * u.T).sum(-1)), 1.0, atol=1e-8)


def test_latent_summation_eq9_and_roughness():
    u = nearly_orthonormal_basis(5, 5, rng=0)
    q = 0.2
    x, _ = latent_summation(20000, u, q, rng=1)
    v = stack_views(x, x)
    a = gate_matrix(v, u[:, 0], "relu")
    ref = (1 - q) ** 2 * np.outer(u[:, 0], u[:, 0]) + q * (np.eye(5) - np.outer(u[:, 0], u[:, 0]))
    assert np.linalg.norm(a - ref) < 0.05
    lam1, gap, phi = eigengap(a)
    assert gap > 0.3 and abs(phi @ u[:, 0]) > 0.99
    assert local_roughness(lambda w: gate_matrix(v, w, "linear"), u[:, 0], rng=0) < 1e-8  # A constant
    # discrete y_m are bounded away from 0: no sample crosses the plane under a small perturbation
    assert local_roughness(lambda w: gate_matrix(v, w, "relu"), u[:, 0], radius=1e-3, rng=0) < 1e-8
    g = stack_views(*(2 * [np.random.default_rng(3).standard_normal((2000, 5))]))
    assert local_roughness(lambda w: gate_matrix(g, w, "relu"), u[:, 0], rng=0) > 0.01  # density at the plane
    atoms, probs, _ = latent_summation_support(u, q)
    exact = population_gate_matrix(atoms, probs, u.T, "relu")
    for m in range(5):
        ref_m = (1 - q) ** 2 * np.outer(u[:, m], u[:, m]) + q * (np.eye(5) - np.outer(u[:, m], u[:, m]))
        np.testing.assert_allclose(exact[m], ref_m, atol=1e-12)  # Eq. 9 exactly


def test_train_filters_linear_collapses_to_pca():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4)) * np.array([3.0, 1.0, 0.5, 0.2])
    v = stack_views(x, x)
    a_fn = lambda w: gate_matrix(v, w, "linear")  # noqa: E731
    w = train_filters(a_fn, rng.standard_normal((10, 4)), lr=0.1, steps=300)
    top = np.linalg.eigh(np.cov(x.T))[1][:, -1]
    np.testing.assert_allclose(np.abs(w @ top), 1.0, atol=1e-6)
    assert distinct_directions(np.abs(w * np.sign(w @ top)[:, None]))[0] == 1
    w_sf = train_filters(
        lambda w: 1e-3 * a_fn(w), rng.standard_normal((10, 4)), lr=0.1, steps=300, scale_free=True
    )
    np.testing.assert_allclose(np.abs(w_sf @ top), 1.0, atol=1e-6)  # invariant to the overall scale of A
    with pytest.raises(ValueError, match="lr must be"):
        train_filters(a_fn, w, lr=-1)
    with pytest.raises(ValueError, match="non-finite"):
        train_filters(a_fn, w, lr=1e308, steps=3)


def test_alpha_callable_and_errors():
    rng = np.random.default_rng(0)
    v = rng.standard_normal((10, 3))
    w = rng.standard_normal((2, 3))
    alpha = lambda w_: np.ones(w_.shape[:-1] + (5, 5))  # noqa: E731
    np.testing.assert_allclose(gate_matrix(v, w, "relu", alpha), gate_matrix(v, w, "relu"))
    with pytest.raises(ValueError, match="stacked batch"):
        gate_matrix(rng.standard_normal((5, 3)), w, "relu")
    with pytest.raises(ValueError, match="d=3"):
        gate_matrix(v, np.ones(2), "relu")
    with pytest.raises(ValueError, match="unknown activation"):
        gate_matrix(v, w, "foo")
    n, labels = distinct_directions(np.array([[1.0, 0], [0.999, 0.01], [0, 1]]))
    assert n == 2 and labels[0] == labels[1]


def _bits(a):
    return np.asarray(a).tobytes()


@pytest.mark.parametrize("chunk", [1, 2**12, 2**40])
@pytest.mark.parametrize("act", ["relu", "leaky_relu", "quadratic", "linear", "tanh"])
def test_gate_matrix_in_chunks_is_bitwise_the_one_batch_formulation(monkeypatch, chunk, act):
    # a chunk of filters at a time (down to one) gives the numbers of all filters in one batch
    from nlcl.tian.local_theory import feature_gaussian_alpha

    monkeypatch.setattr(landscape, "GATE_CHUNK_ELEMENTS", chunk)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 4))
    v = stack_views(x, x + 0.1 * rng.standard_normal(x.shape))
    for lead in [(7,), (3, 5), (1,)]:
        w = rng.standard_normal(lead + (4,))
        wu = w / np.linalg.norm(w, axis=-1, keepdims=True)
        h = get_activation(act)
        alphas = [
            None,
            rng.random((60, 60)),  # one α for every filter
            rng.random(lead + (60, 60)),  # one α per filter
            rng.random(lead[-1:] + (60, 60)),  # broadcast against w's leading dimensions
            FeatureAlpha(lambda u: h(u @ x.T), lambda g: feature_gaussian_alpha(g, 0.5)),  # by chunks
        ]
        for alpha in alphas:
            a_w = alpha(wu) if callable(alpha) else alpha
            ref = contrastive_covariance(gated_input(v, wu, act), alpha=a_w)  # the previous formulation
            assert _bits(gate_matrix(v, w, act, alpha)) == _bits(ref)
        fa = FeatureAlpha(lambda u: h(u @ x.T), lambda g: feature_gaussian_alpha(g, 0.5))
        assert _bits(fa(wu)) == _bits(feature_gaussian_alpha(h(wu @ x.T), 0.5))


def test_gated_input_with_given_norms():
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((20, 3)), rng.standard_normal((4, 3))
    x[0] = np.cross(w[1], w[2])  # a sample on (up to rounding) the plane of w[1]
    got = gated_input(x, w, "relu", x_norm=np.linalg.norm(x, axis=-1))
    assert _bits(got) == _bits(gated_input(x, w, "relu"))
