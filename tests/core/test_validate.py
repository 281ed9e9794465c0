import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core import validate
from nlcl.core.validate import ParameterError


def test_choice_names_parameter_value_and_allowed():
    assert validate.choice("act", "relu", ["relu", "linear"]) == "relu"
    with pytest.raises(ParameterError, match=r"act='foo' is not allowed; choose one of: 'relu', 'linear'"):
        validate.choice("act", "foo", ["relu", "linear"])


@given(st.integers(min_value=1, max_value=10**9))
def test_positive_int_accepts_positive(n):
    assert validate.positive_int("n", n) == n
    assert validate.nonneg_int("n", n - 1) == n - 1


@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "3", None])
def test_positive_int_rejects(bad):
    with pytest.raises(ParameterError, match=r"^n=.* must be an integer >= 1"):
        validate.positive_int("n", bad)


def test_nonneg_int_rejects_negative():
    with pytest.raises(ParameterError, match="n=-1 must be an integer >= 0"):
        validate.nonneg_int("n", -1)


@pytest.mark.parametrize(
    "fn,bad,msg",
    [
        (validate.positive_float, 0.0, "> 0"),
        (validate.positive_float, math.inf, "finite"),
        (validate.nonneg_float, -1e-9, ">= 0"),
        (validate.probability, 1.5, r"\[0, 1\]"),
        (validate.positive_float, "x", "real number"),
    ],
)
def test_float_checks(fn, bad, msg):
    with pytest.raises(ParameterError, match=msg):
        fn("lr", bad)


def test_float_checks_accept():
    assert validate.positive_float("lr", 3) == 3.0
    assert validate.nonneg_float("wd", 0) == 0.0
    assert validate.probability("q", 0.5, open_interval=True) == 0.5
    with pytest.raises(ParameterError, match=r"\(0, 1\)"):
        validate.probability("q", 0.0, open_interval=True)


def test_finite_numpy_and_torch():
    validate.finite("x", np.ones(3))
    validate.finite("x", torch.ones(3))
    with pytest.raises(FloatingPointError, match="loss has 1 non-finite"):
        validate.finite("loss", torch.tensor([1.0, float("nan")]))
    with pytest.raises(FloatingPointError, match="x has 2 non-finite"):
        validate.finite("x", np.array([np.inf, np.nan, 0.0]))


def test_shape():
    validate.shape("x", np.zeros((4, 2)), (None, 2))
    validate.shape("x", np.zeros((4, 2)), ("N", "d"))
    with pytest.raises(ParameterError, match=r"x has shape \(4, 3\); expected \(\?, 2\)"):
        validate.shape("x", np.zeros((4, 3)), (None, 2))
    with pytest.raises(ParameterError, match="expected"):
        validate.shape("x", np.zeros(4), (None, 2))
