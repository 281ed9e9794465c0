"""Tests for nlcl.tian.contrastive (Tian 2023, Eq. 3, Lemma 1, Lemma 2)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nlcl.tian.contrastive import (
    ALPHA_FAMILIES,
    contrastive_covariance,
    energy,
    gaussian_alpha,
    gaussian_feature_map,
    half_sq_dists,
    infonce_alpha,
    make_alpha,
    population_contrastive_covariance,
    split_views,
    stack_views,
    uniform_alpha,
)

elems = st.floats(-3, 3, allow_nan=False, allow_infinity=False)


@st.composite
def batch(draw, d=None):
    n = draw(st.integers(1, 6))
    d = d or draw(st.integers(1, 4))
    a = draw(arrays(np.float64, (2 * n, d), elements=elems))
    alpha = draw(arrays(np.float64, (n, n), elements=st.floats(0, 2)))
    return a, alpha


def brute_force(a, b, alpha):
    """Eq. 3 as a literal double loop."""
    n = a.shape[0] // 2
    out = np.zeros((a.shape[1], b.shape[1]))
    for i in range(n):
        for j in range(n):
            out += alpha[i, j] * (
                np.outer(a[i] - a[j], b[i] - b[j]) - np.outer(a[i] - a[n + i], b[i] - b[n + i])
            )
    return out / (2 * n * n)


@given(batch(), st.data())
@settings(max_examples=50)
def test_matches_literal_eq3(ab, data):
    a, alpha = ab
    b = data.draw(arrays(np.float64, (a.shape[0], 2), elements=elems))
    np.testing.assert_allclose(contrastive_covariance(a, b, alpha), brute_force(a, b, alpha), atol=1e-10)
    np.testing.assert_allclose(
        contrastive_covariance(a, b), brute_force(a, b, np.ones_like(alpha)), atol=1e-10
    )
    np.testing.assert_allclose(contrastive_covariance(a, alpha=alpha), brute_force(a, a, alpha), atol=1e-10)


@given(batch(d=3), st.data())
@settings(max_examples=50)
def test_bilinear_symmetric_and_projection(ab, data):
    a, alpha = ab
    b = data.draw(arrays(np.float64, a.shape, elements=elems))
    c = data.draw(arrays(np.float64, a.shape, elements=elems))
    s, t = data.draw(elems), data.draw(elems)
    C = lambda x, y: contrastive_covariance(x, y, alpha)  # noqa: E731
    np.testing.assert_allclose(C(s * a + t * c, b), s * C(a, b) + t * C(c, b), atol=1e-9)
    np.testing.assert_allclose(C(a, s * b + t * c), s * C(a, b) + t * C(a, c), atol=1e-9)
    np.testing.assert_allclose(C(a, b).T, C(b, a), atol=1e-10)
    np.testing.assert_allclose(C(a, a), C(a, a).T, atol=1e-10)
    u, v = data.draw(arrays(np.float64, 3, elements=elems)), data.draw(arrays(np.float64, 3, elements=elems))
    np.testing.assert_allclose(u @ C(a, b) @ v, C((a @ u)[:, None], (b @ v)[:, None])[0, 0], atol=1e-9)


@given(batch())
@settings(max_examples=40)
def test_energy_is_half_trace_and_pairwise_form(ab):
    a, alpha = ab
    n = a.shape[0] // 2
    np.testing.assert_allclose(
        energy(a, alpha), 0.5 * np.trace(contrastive_covariance(a, alpha=alpha)), atol=1e-9
    )
    np.testing.assert_allclose(energy(a), 0.5 * np.trace(contrastive_covariance(a)), atol=1e-9)
    f1, f2 = split_views(a)
    dij = half_sq_dists(f1)
    di = 0.5 * ((f1 - f2) ** 2).sum(-1)
    np.testing.assert_allclose(2 * n * n * energy(a, alpha), (alpha * (dij - di[:, None])).sum(), atol=1e-8)


def test_torch_and_batch_dims():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 8, 2))
    alpha = rng.random((5, 4, 4))
    out = contrastive_covariance(a, alpha=alpha)
    assert out.shape == (3, 5, 2, 2)
    np.testing.assert_allclose(out[1, 2], brute_force(a[1, 2], a[1, 2], alpha[2]), atol=1e-12)
    t = contrastive_covariance(torch.tensor(a), alpha=torch.tensor(alpha))
    assert isinstance(t, torch.Tensor)
    np.testing.assert_allclose(t.numpy(), out, atol=1e-12)
    e = energy(torch.tensor(a), alpha)
    assert isinstance(e, torch.Tensor) and e.shape == (3, 5)
    np.testing.assert_allclose(e.numpy(), energy(a, alpha), atol=1e-12)
    np.testing.assert_allclose(stack_views(a[..., :4, :], a[..., 4:, :]), a)


@pytest.mark.parametrize(
    "args, match",
    [
        ((np.zeros(4),), "shape"),
        ((np.zeros((3, 2)),), "even number"),
        ((np.zeros((4, 2)), None, np.ones((3, 3))), "alpha must have shape"),
    ],
)
def test_bad_shapes(args, match):
    with pytest.raises(ValueError, match=match):
        contrastive_covariance(*args)


def test_no_augmentation_uniform_is_variance():
    """Corollary 1 at finite N: x[i'] = x[i] and α ≡ 1 give the (biased) sample covariance."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((50, 3))
    np.testing.assert_allclose(contrastive_covariance(stack_views(x, x)), np.cov(x.T, bias=True), atol=1e-12)


@st.composite
def finite_model(draw):
    """x0 with K atoms (integer weights) and V equiprobable augmented feature values per atom."""
    k = draw(st.integers(1, 3))
    v = draw(st.integers(1, 3))
    d = draw(st.integers(1, 2))
    counts = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    g = draw(arrays(np.float64, (k, v, d), elements=elems))
    return counts, g


@given(finite_model())
@settings(max_examples=50)
def test_lemma2_uniform_law_of_total_variance(model):
    """Lemma 2, uniform α: on a batch that enumerates the population exactly, C_α[g] = V[E[g|x0]].

    Each atom k appears counts[k]·V² times, once per ordered pair of augmentation values, so the
    empirical joint law of (x0, x, x') is the population one; Eq. 3 with all (i, j) then gives
    V[g] - E[V[g|x0]] = V[E[g|x0]] (law of total variance) exactly.
    """
    counts, g = model
    k, v, d = g.shape
    first, second = [], []
    for kk in range(k):
        for _ in range(counts[kk]):
            for a in range(v):
                for b in range(v):
                    first.append(g[kk, a])
                    second.append(g[kk, b])
    c = contrastive_covariance(stack_views(np.array(first), np.array(second)))
    p = np.array(counts, dtype=float) / sum(counts)
    means = g.mean(1)
    mu = p @ means
    between = np.einsum("k,ki,kj->ij", p, means - mu, means - mu)
    np.testing.assert_allclose(c, between, atol=1e-9)
    covs = np.einsum("kvi,kvj->kij", g - means[:, None], g - means[:, None]) / v
    np.testing.assert_allclose(population_contrastive_covariance(p, means, covs), between, atol=1e-9)


def test_population_limit_matches_large_batch_with_kernel():
    """Lemma 2 with a Gaussian kernel on x0: a large batch approaches the closed-form limit."""
    rng = np.random.default_rng(2)
    centers = np.array([[0.0, 0.0], [1.0, 0.5], [-0.5, 1.0]])
    probs = np.array([0.5, 0.3, 0.2])
    sigma, tau, n = 0.3, 0.5, 4000
    kernel = gaussian_alpha(centers, tau)
    limit = population_contrastive_covariance(
        probs, centers, np.repeat(sigma**2 * np.eye(2)[None], 3, 0), kernel
    )
    y = rng.choice(3, size=n, p=probs)
    x0 = centers[y]
    views = stack_views(
        x0 + sigma * rng.standard_normal(x0.shape), x0 + sigma * rng.standard_normal(x0.shape)
    )
    est = contrastive_covariance(views, alpha=gaussian_alpha(x0, tau))
    assert np.linalg.norm(est - limit) / np.linalg.norm(limit) < 0.1


@given(arrays(np.float64, (6, 2), elements=st.floats(-2, 2)), st.floats(0.2, 5))
@settings(max_examples=30)
def test_gaussian_alpha_psd(g0, tau):
    """Lemma 1: α is symmetric PSD with unit diagonal."""
    alpha = gaussian_alpha(g0, tau)
    np.testing.assert_allclose(alpha, alpha.T)
    np.testing.assert_allclose(np.diag(alpha), 1.0)
    assert np.linalg.eigvalsh(alpha).min() > -1e-9


@given(arrays(np.float64, 6, elements=st.floats(-1, 1)), st.floats(0.2, 5))
@settings(max_examples=30)
def test_gaussian_feature_map_reproduces_alpha(g0, tau):
    """Lemma 1 (Eqs. 20-22): φ ≥ 0 and φ(x_i)ᵀφ(x_j) → α_ij from below (here y_iy_j/τ ≤ 20)."""
    alpha = gaussian_alpha(g0, tau)
    phi = gaussian_feature_map(g0, tau, order=60)
    assert np.all(phi >= 0)
    np.testing.assert_allclose(phi @ phi.T, alpha, atol=1e-8)
    low = gaussian_feature_map(g0, tau, order=2)
    assert np.all(low @ low.T <= alpha + 1e-12)  # truncation approaches from below


def test_gaussian_feature_map_dims_and_errors():
    g0 = np.random.default_rng(0).random((4, 3))
    assert gaussian_feature_map(g0, 1.0, order=2).shape == (4, 1 + 3 + 9)
    with pytest.raises(ValueError, match="feature dimension"):
        gaussian_feature_map(g0, 1.0, order=30)
    assert isinstance(gaussian_feature_map(torch.tensor(g0), 1.0, order=1), torch.Tensor)
    with pytest.raises(ValueError, match="lower bound"):
        gaussian_feature_map(g0, 1.0, order=1, shift=np.ones(3))
    with pytest.raises(ValueError, match="tau must be"):
        gaussian_alpha(g0, -1.0)
    with pytest.raises(ValueError, match="order must be"):
        gaussian_feature_map(g0, 1.0, order=-1)


def test_infonce_alpha_rows_and_eps():
    rng = np.random.default_rng(3)
    f1, f2 = rng.standard_normal((2, 5, 3))
    a = infonce_alpha(f1, f2, tau=0.5)
    np.testing.assert_allclose(np.diag(a), 0)
    np.testing.assert_allclose(a.sum(-1), 1.0)
    a_eps = infonce_alpha(f1, f2, tau=0.5, eps=1.0)
    assert np.all(a_eps.sum(-1) < 1)
    d = half_sq_dists(f1)
    di = 0.5 * ((f1 - f2) ** 2).sum(-1)
    num = np.exp(-d / 0.5)
    np.fill_diagonal(num, 0)
    np.testing.assert_allclose(a_eps, num / (np.exp(-di / 0.5) + num.sum(-1))[:, None], rtol=1e-10)
    t = infonce_alpha(torch.tensor(f1, requires_grad=True), torch.tensor(f2), tau=0.5)
    assert not t.requires_grad
    with pytest.raises(ValueError, match="eps must be"):
        infonce_alpha(f1, f2, 0.5, eps=-1)


def test_make_alpha_and_uniform():
    assert ALPHA_FAMILIES == ("uniform", "gaussian", "infonce")
    np.testing.assert_array_equal(make_alpha("uniform", 3), np.ones((3, 3)))
    g0 = np.arange(4.0)
    np.testing.assert_allclose(make_alpha("gaussian", 4, g0=g0, tau=2.0), gaussian_alpha(g0, 2.0))
    f = np.random.default_rng(0).standard_normal((2, 4, 2))
    np.testing.assert_allclose(
        make_alpha("infonce", 4, f1=f[0], f2=f[1], tau=1.0), infonce_alpha(f[0], f[1], 1.0)
    )
    with pytest.raises(ValueError, match="unknown alpha family 'x'; allowed: uniform, gaussian, infonce"):
        make_alpha("x", 3)
    with pytest.raises(ValueError, match="positive integer"):
        uniform_alpha(0)
