"""Tests for nlcl.tian.latent_data (Tian 2023, Sec. 3.1, Thm. 3, App. B.5, App. E.1)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.tian.latent_data import (
    FIG8_ANGLES,
    as_rng,
    latent_categorical,
    latent_summation,
    latent_summation_support,
    nearly_orthonormal_basis,
    points_on_circle,
    points_on_sphere,
    rotate_2d,
    rotation_augment,
    standardized_bernoulli_values,
)


def test_points_on_circle():
    p = points_on_circle(FIG8_ANGLES)
    assert p.shape == (9, 2) and p.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1)
    np.testing.assert_allclose(p[4], [1, 0])
    with pytest.raises(ValueError, match="1-D"):
        points_on_circle(np.zeros((2, 2)))


def test_points_on_sphere():
    p = points_on_sphere(50, 3, rng=0)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1)
    np.testing.assert_array_equal(p, points_on_sphere(50, 3, rng=0))
    with pytest.raises(ValueError, match="n must be a positive integer"):
        points_on_sphere(-1, 3)


@given(st.integers(2, 8), st.floats(0, 0.9), st.integers(0, 1000))
@settings(max_examples=30)
def test_nearly_orthonormal(m, eps, seed):
    u = nearly_orthonormal_basis(m + 2, m, eps, rng=seed)
    np.testing.assert_allclose(np.linalg.norm(u, axis=0), 1, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(u.T @ u - np.eye(m), 2), eps, atol=1e-10)


def test_nearly_orthonormal_errors():
    with pytest.raises(ValueError, match="m must be <= d"):
        nearly_orthonormal_basis(2, 3)
    with pytest.raises(ValueError, match="eps must lie"):
        nearly_orthonormal_basis(3, 2, eps=1.0)


def test_latent_models():
    u = nearly_orthonormal_basis(5, 3, rng=0)
    x, y = latent_categorical(1000, u, probs=[0.5, 0.3, 0.2], rng=1)
    np.testing.assert_allclose(x, u[:, y].T)
    assert abs(np.mean(y == 0) - 0.5) < 0.05
    x, y = latent_summation(20000, u, [0.2, 0.3, 0.5], rng=2)
    np.testing.assert_allclose(x, y @ u.T)
    np.testing.assert_allclose(y.mean(0), 0, atol=0.03)
    np.testing.assert_allclose((y**2).mean(0), 1, atol=0.05)
    np.testing.assert_allclose((y > 0).mean(0), [0.2, 0.3, 0.5], atol=0.02)
    atoms, probs, ys = latent_summation_support(u, [0.2, 0.3, 0.5])
    assert atoms.shape == (8, 5) and np.isclose(probs.sum(), 1)
    np.testing.assert_allclose(probs @ ys, 0, atol=1e-12)
    np.testing.assert_allclose(probs @ ys**2, 1, atol=1e-12)
    yp, ym = standardized_bernoulli_values(0.2)
    np.testing.assert_allclose(0.2 * yp + 0.8 * ym, 0, atol=1e-12)
    with pytest.raises(ValueError, match="open interval"):
        latent_summation(10, u, 1.0)
    with pytest.raises(ValueError, match="probability vector"):
        latent_categorical(10, u, probs=[0.5, 0.5])


def test_rotation():
    x = np.array([[1.0, 0.0, 2.0]])
    np.testing.assert_allclose(rotate_2d(x, np.pi / 2), [[0, 1, 2]], atol=1e-12)
    r = rotation_augment(np.repeat(x, 100, 0), rng=0)
    np.testing.assert_allclose(np.linalg.norm(r[:, :2], axis=1), 1)
    np.testing.assert_allclose(r[:, 2], 2)
    np.testing.assert_array_equal(r, rotation_augment(np.repeat(x, 100, 0), rng=0))
    with pytest.raises(ValueError, match="max_angle"):
        rotation_augment(x, max_angle=4.0)
    with pytest.raises(ValueError, match="rng must be"):
        rotation_augment(x, rng=-3)


def test_as_rng():
    g = np.random.default_rng(3)
    assert as_rng(g) is g
    assert as_rng(7).random() == np.random.default_rng(7).random()
    assert as_rng(None).random() == np.random.default_rng(0).random()
    with pytest.raises(ValueError, match="rng must be a nonnegative int seed"):
        as_rng(1.5)
