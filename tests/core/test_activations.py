"""Tests for nlcl.core.activations (Tian 2023, Assumption 1 and Eq. 6)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from nlcl.core.activations import ACTIVATIONS, Activation, get_activation

HOMOGENEOUS = ("linear", "relu", "leaky_relu", "quadratic", "monomial")
finite = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
vectors = arrays(np.float64, st.integers(1, 20), elements=finite)


def all_acts():
    return [get_activation(n) for n in ACTIVATIONS] + [
        get_activation("monomial", p=3),
        get_activation("monomial", p=1),
        get_activation("leaky_relu", slope=0.3),
    ]


def test_names_and_flags():
    assert ACTIVATIONS == ("linear", "relu", "leaky_relu", "quadratic", "monomial", "sigmoid", "tanh")
    for name in ACTIVATIONS:
        act = get_activation(name)
        assert isinstance(act, Activation) and act.name == name
        assert act.homogeneous == (name in HOMOGENEOUS)
    assert get_activation("leaky_relu").slope == 0.05
    assert get_activation("monomial").p == 2 and get_activation("quadratic").p == 2
    assert get_activation("monomial", p=3).degree == 3 and get_activation("relu").degree == 1


def test_frozen_and_passthrough():
    act = get_activation("relu")
    with pytest.raises(Exception):
        act.name = "linear"  # type: ignore[misc]
    assert get_activation(act) is act


@pytest.mark.parametrize(
    "name, kwargs, match",
    [
        ("foo", {}, "unknown activation 'foo'; allowed: linear, relu"),
        ("relu", {"slope": 0.1}, "takes no keyword"),
        ("monomial", {"p": 0}, "p must be an integer >= 1"),
        ("monomial", {"p": 1.5}, "p must be an integer >= 1"),
        ("leaky_relu", {"slope": float("nan")}, "slope must be a finite float"),
    ],
)
def test_bad_input(name, kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_activation(name, **kwargs)


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match="unknown activation 'foo'"):
        Activation("foo")
    with pytest.raises(ValueError, match="p must be an integer"):
        Activation("monomial", p=0)


def test_known_values():
    x = np.array([-2.0, -0.5, 0.0, 1.5])
    np.testing.assert_allclose(get_activation("relu")(x), [0, 0, 0, 1.5])
    np.testing.assert_allclose(get_activation("leaky_relu", slope=0.1)(x), [-0.2, -0.05, 0, 1.5])
    np.testing.assert_allclose(get_activation("quadratic")(x), x**2)
    np.testing.assert_allclose(get_activation("monomial", p=3)(x), x**3)
    np.testing.assert_allclose(get_activation("sigmoid")(x), 1 / (1 + np.exp(-x)))
    np.testing.assert_allclose(get_activation("relu").derivative(x), [0, 0, 0, 1])  # h'(0) = 0, App. B.1


@given(vectors)
@settings(max_examples=40)
def test_homogeneity_identity(x):
    """Assumption 1: h(x) = gate(x) x exactly for homogeneous h, gate = h'/degree."""
    for act in all_acts():
        lhs, rhs = act(x), act.gate(x) * x
        if act.homogeneous:
            np.testing.assert_allclose(lhs, rhs, atol=1e-12)
            np.testing.assert_allclose(act.derivative(x) * x, act.degree * lhs, atol=1e-9)


def test_non_homogeneous_controls_fail_identity():
    x = np.linspace(-3, 3, 11)
    for name in ("sigmoid", "tanh"):
        act = get_activation(name)
        assert np.max(np.abs(act(x) - act.gate(x) * x)) > 0.1


@given(vectors)
@settings(max_examples=30)
def test_numpy_torch_agree_and_autograd_derivative(x):
    x = x[np.abs(x) > 1e-6]  # the kink of ReLU/LeakyReLU
    for act in all_acts():
        t = torch.tensor(x, requires_grad=True)
        y = act(t)
        assert isinstance(y, torch.Tensor) and isinstance(act(x), np.ndarray)
        np.testing.assert_allclose(y.detach().numpy(), act(x), rtol=1e-12, atol=1e-12)
        if x.size:
            (g,) = torch.autograd.grad(y.sum(), t)
            np.testing.assert_allclose(g.numpy(), act.derivative(x), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(
                act.derivative(t).detach().numpy(), act.derivative(x), rtol=1e-12, atol=1e-12
            )
