"""Tests for nlcl.esser.two_layer_loss: the closed-form gradient of Eqs. 1-2 for u = W₂ᵀφ(W₁x).

The oracle is the formulation it replaces in ``linearization_gap``: ``ssl_loss`` of
``two_layer_output`` on x, x⁺ and x⁻ separately, differentiated by autograd.
"""

from __future__ import annotations

import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.esser.collapse import init_two_layer, two_layer_output
from nlcl.esser.constraints import projected_gradient_descent
from nlcl.esser.losses import make_pairs, ssl_loss
from nlcl.esser.two_layer_loss import TwoLayerSSLLoss

ACTS = ["linear", "tanh", "relu", "sigmoid", "leaky_relu", "quadratic"]
EPS32 = torch.finfo(torch.float32).eps


def _setup(dtype, h=40, z=2, n=30, seed=0):
    x, xp, xn = make_pairs(
        torch.randn(n, 2, generator=torch.Generator().manual_seed(seed)).double(),
        generator=torch.Generator().manual_seed(seed + 1),
    )
    W1, W2 = init_two_layer(3, h, 2, z, generator=torch.Generator().manual_seed(seed + 2), dtype=dtype)
    return (x.to(dtype), xp.to(dtype), xn.to(dtype)), W1, W2


def _oracle(views, W1, W2, act, loss, reduction):
    """The loss and its gradient by autograd through three separate forward passes."""
    a, b = W1.clone().requires_grad_(), W2.clone().requires_grad_()
    value = ssl_loss(loss, *(two_layer_output(v, a, b, act) for v in views), reduction=reduction)
    return (value.detach(), *torch.autograd.grad(value.sum(), (a, b)))


def _closed_form(views, W1, W2, act, loss, reduction):
    a, b = W1.clone().requires_grad_(), W2.clone().requires_grad_()
    value = TwoLayerSSLLoss(*views, activation=act, loss=loss, reduction=reduction)(a, b)
    return (value.detach(), *torch.autograd.grad(value.sum(), (a, b)))


def _err(p, q):
    return float((p - q).abs().max() / q.abs().max())


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("loss", ["contrastive", "non_contrastive"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_loss_and_gradient_equal_autograd_in_float64(act, loss, reduction):
    """float64: the same numbers up to a few ulps of the largest entry (sums taken in another order;
    the sigmoid's contrastive gradients cancel O(1) terms, hence 1e-12 and not 1e-15)."""
    views, W1, W2 = _setup(torch.float64)
    for new, ref in zip(
        _closed_form(views, W1, W2, act, loss, reduction), _oracle(views, W1, W2, act, loss, reduction)
    ):
        assert _err(new, ref) < 1e-12


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("loss", ["contrastive", "non_contrastive"])
def test_float32_is_as_close_to_float64_as_the_autograd_path(act, loss):
    """float32: both formulations round; the closed form's distance to the float64 result is at most
    4x the autograd path's plus 8 ulps of the largest entry (a different order of the same sums)."""
    views, W1, W2 = _setup(torch.float32)
    exact = _oracle(tuple(v.double() for v in views), W1.double(), W2.double(), act, loss, "mean")
    new = _closed_form(views, W1, W2, act, loss, "mean")
    old = _oracle(views, W1, W2, act, loss, "mean")
    for n, o, e in zip(new, old, exact):
        assert _err(n.double(), e) <= 4 * _err(o.double(), e) + 8 * EPS32


def test_negatives_that_are_anchors_are_evaluated_once():
    (x, xp, xn), W1, W2 = _setup(torch.float64)
    f = TwoLayerSSLLoss(x, xp, xn, activation="tanh", loss="contrastive")
    assert f.points.shape == (2 * x.shape[0], 2)  # x⁻ is a permutation of x
    assert all(torch.equal(f.points[i], v) for i, v in zip(f.index, (x, xp, xn)))
    g = TwoLayerSSLLoss(x, xp, None, activation="tanh", loss="non_contrastive")
    assert len(g.index) == 2 and g.points.shape[0] == 2 * x.shape[0]


def test_bad_arguments():
    (x, xp, xn), W1, W2 = _setup(torch.float64)
    with pytest.raises(ParameterError, match="x_neg=None"):
        TwoLayerSSLLoss(x, xp, None, loss="contrastive")
    with pytest.raises(ParameterError, match="x_pos"):
        TwoLayerSSLLoss(x, xp[:-1], xn)
    with pytest.raises(ParameterError, match="expected"):
        TwoLayerSSLLoss(x[0], xp[0], xn[0])
    with pytest.raises(ParameterError, match="loss"):
        TwoLayerSSLLoss(x, xp, xn, loss="triplet")
    f = TwoLayerSSLLoss(x, xp, xn, activation="relu")
    with pytest.raises(ParameterError, match="must be"):
        f(W1, W2[:, :-1])
    with pytest.raises(ParameterError, match="d=2"):
        f(torch.randn(3, 40, 3, dtype=torch.float64), W2)


@pytest.mark.parametrize("act", ["linear", "tanh", "relu", "sigmoid"])
def test_short_training_run_equals_the_autograd_formulation(act):
    """20 steps of orthogonally constrained gradient descent (linearization_gap's training) from the
    same weights: float64 trajectories agree to 1e-10 (rounding does not grow over a short run)."""
    (x, xp, xn), W1, W2 = _setup(torch.float64, h=50, z=1)
    kw = dict(
        constraint="orthogonal",
        lr=0.05,
        steps=20,
        record_every=5,
        observe=lambda a, b: two_layer_output(x, a, b, act),
    )

    def old_loss(a, b):
        return ssl_loss(
            "contrastive", *(two_layer_output(v, a, b, act) for v in (x, xp, xn)), reduction="mean"
        )

    new = projected_gradient_descent(
        TwoLayerSSLLoss(x, xp, xn, activation=act, reduction="mean"), W1, W2, **kw
    )
    old = projected_gradient_descent(old_loss, W1, W2, **kw)
    assert (new.steps == old.steps).all()
    assert _err(new.observed, old.observed) < 1e-10
    assert abs(new.loss - old.loss).max() < 1e-10 * abs(old.loss).max()


@pytest.mark.parametrize("loss", ["contrastive", "non_contrastive"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_output_gradient_is_the_gradient_of_loss_of_outputs(loss, reduction):
    (x, xp, xn), _, _ = _setup(torch.float64)
    f = TwoLayerSSLLoss(x, xp, xn, loss=loss, reduction=reduction)
    U = torch.randn(3, f.points.shape[0], 2, dtype=torch.float64, requires_grad=True)
    (ref,) = torch.autograd.grad(f.loss_of_outputs(U).sum(), U)
    assert torch.allclose(f.output_gradient(U.detach()), ref, rtol=1e-14, atol=1e-15)
