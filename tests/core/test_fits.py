"""Tests for nlcl.core.fits: power-law exponents from a log-log least-squares fit."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.fits import loglog_slope
from nlcl.core.validate import ParameterError


@given(st.floats(-3, 3), st.floats(0.1, 10))
def test_loglog_slope_recovers_power_law(p, c):
    x = np.array([1.0, 2.0, 5.0, 10.0, 50.0])
    assert loglog_slope(x, c * x**p) == pytest.approx(p, abs=1e-9)


def test_loglog_slope_takes_series_and_rejects_bad_input():
    s = pd.Series([4.0, 1.0], index=[1.0, 2.0])
    assert loglog_slope(s.index.values, s.values) == pytest.approx(-2.0)
    with pytest.raises(ParameterError, match="positive"):
        loglog_slope([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ParameterError, match="equal length"):
        loglog_slope([1.0, 2.0], [1.0])
