"""Tests for nlcl.tian.augmentation: rotation augmentation of one filter's energy (Tian 2023, App. B.5)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.augmentation import grid_strict_maxima, rotation_augmented_energy, sphere_grid


def test_sphere_grid_is_on_the_unit_sphere():
    th, ph, w = sphere_grid(5, 8)
    assert w.shape == (5, 8, 3) and th.shape == (5,) and ph.shape == (8,)
    np.testing.assert_allclose(np.linalg.norm(w, axis=-1), 1.0)
    assert 0 < th.min() and th.max() < np.pi  # poles excluded
    with pytest.raises(ParameterError, match="n_phi"):
        sphere_grid(5, 2)


@settings(max_examples=15)
@given(st.integers(0, 10**6), st.integers(0, 15), st.sampled_from(["relu", "quadratic", "tanh"]))
def test_energy_is_invariant_under_the_group(seed, k, act):
    """Eqs. 107-108: rotating w in the plane by a multiple of the quadrature step changes nothing."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((7, 3))
    w = rng.standard_normal((4, 3))
    n_t = 16
    a = 2 * np.pi * k / n_t
    rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    e = rotation_augmented_energy(x, w, act, n_t=n_t)
    np.testing.assert_allclose(
        rotation_augmented_energy(x, w @ rot.T, act, n_t=n_t), e, rtol=1e-10, atol=1e-14
    )
    assert np.all(e >= 0)


def test_no_augmentation_is_half_the_variance_and_bad_input():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, 3)), rng.standard_normal(3)
    assert rotation_augmented_energy(x, w, "relu") == pytest.approx(0.5 * np.maximum(x @ w, 0).var())
    with pytest.raises(ParameterError, match="points must be"):
        rotation_augmented_energy(x[:, :2], w, "relu", n_t=4)
    with pytest.raises(ParameterError, match="plane"):
        rotation_augmented_energy(x, w, "relu", n_t=4, plane=(1, 1))
    with pytest.raises(ParameterError, match="n_t"):
        rotation_augmented_energy(x, w, "relu", n_t=-1)


def test_grid_strict_maxima():
    th, ph, w = sphere_grid(20, 40)
    f = w @ np.array([1.0, 0.2, 0.1])  # one maximum, near (1, 0.2, 0.1)/‖·‖
    mask = grid_strict_maxima(f)
    assert mask.sum() == 1
    assert np.dot(w[mask][0], [1.0, 0.2, 0.1]) / np.linalg.norm([1.0, 0.2, 0.1]) > 0.98
    assert grid_strict_maxima(np.cos(th)[:, None] * np.ones(40)[None]).sum() == 0  # constant along φ: none
    with pytest.raises(ParameterError, match="grid"):
        grid_strict_maxima(np.ones(5))
