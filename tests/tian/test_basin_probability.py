"""Tests for nlcl.tian.basin_probability: the basin model of Tian 2023, App. C.3 (Eqs. 152-157)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad

from nlcl.core.validate import ParameterError
from nlcl.tian.basin_probability import (
    basin_event_mc,
    eq155_probability,
    eq156_lower_bound,
    eq157_upper_bound,
)


@settings(max_examples=25)
@given(st.floats(-0.99, 1.5), st.integers(2, 20))
def test_eq155_is_the_integral_of_eq154(eps, d):
    """Eq. 155 equals ∫_0^1 F^{d−1}(y + ε) dF(y) with F the CDF of U[−1, 1] (Eq. 154)."""
    F = lambda x: min(max((x + 1) / 2, 0.0), 1.0)  # noqa: E731
    val, _ = quad(lambda y: F(y + eps) ** (d - 1) / 2, 0, 1, points=[max(0.0, min(1.0, 1 - eps))])
    assert eq155_probability(eps, d) == pytest.approx(val, abs=1e-9)


def test_eq155_special_values_and_mc():
    assert eq155_probability(0.0, 8) == pytest.approx((1 - 0.5**8) / 8)
    assert eq155_probability(1.0, 5) == pytest.approx(0.5) and eq155_probability(3.0, 5) == 0.5
    eps = np.zeros((2, 6))
    eps[1, 2] = 0.4
    p = basin_event_mc(eps, 200_000, rng=np.random.default_rng(0), chunk=30_000)
    assert p[0] == pytest.approx(np.full(6, eq155_probability(0.0, 6)), abs=0.004)
    assert p[1, 2] == pytest.approx(eq155_probability(0.4, 6), abs=0.004)
    with pytest.raises(ParameterError):
        eq155_probability(-1.0, 4)


def test_bounds_of_eqs_156_157():
    rng = np.random.default_rng(1)
    eps = rng.uniform(-1, 1, size=(5, 6))
    p = basin_event_mc(eps, 100_000, rng=rng)
    top = eps.argmax(1)
    assert np.all(p[np.arange(5), top] >= eq156_lower_bound(eps) - 0.01)
    ub = eq157_upper_bound(eps)
    assert np.all(np.isinf(ub[np.arange(5), top])) and np.all(p <= ub + 0.01)
    # a coordinate ranked second, gap g to the first: the bound is (1 − g/2)²/2
    assert eq157_upper_bound(np.array([0.5, 0.1, -1.0]))[1] == pytest.approx((1 - 0.2) ** 2 / 2)
