"""The fast training step of the captions chapter's heads against its former formulation (the oracle).

``train_heads`` now evaluates Eq. 3 with :func:`nlcl.renli.head_loss.fused_contrastive_loss`, runs
the hidden layers of :class:`MLPHeads` transposed with one fused BatchNorm call, gathers the inputs
first when the caption table is larger than the batch, and uses torch's fused Adam.  All of these are
the same mathematics; the tests below keep the former step (reference loss, two-pass BatchNorm on
the (R, n, w) layout, first layer on the whole table, the for-loop Adam) as the oracle.

Tolerances.  In float64 every quantity is a sum of O(10²-10³) rounded terms, so agreement to 1e-9
relative leaves six orders of magnitude above rounding (2e-16) while any change of the method (a
missing factor, a wrong stabilizer, another random draw) shows up at O(1).  In float32 (the
chapter's dtype) the losses of a few Adam steps are compared to 1e-5 absolute (observed: at most
2.4e-7, two float32 ulps of a loss of order 1; the per-operation rounding is 6e-8).  The float32
parameters and evaluation outputs are not compared: Adam divides each coordinate's update by its
running gradient scale, so a coordinate whose gradient is at rounding level (the biases in front
of a BatchNorm or of the output centring, whose exact gradient is 0) takes steps of up to ``lr`` in
directions set by rounding, in the former formulation as in the new one.  The next normalization
cancels them in training, so the losses agree to rounding, but the running means that evaluation
uses carry them; in float64 those gradients are ~1e-17, far below Adam's ``eps``, and everything is
compared.
"""

from __future__ import annotations

import math

import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.head_loss import fused_contrastive_loss
from nlcl.renli.losses import contrastive_loss


def _pair(seed, R=4, n=32, m=8, scale=1.0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(R, n, m, generator=g, dtype=dtype) * scale / math.sqrt(m)
    b = a + 0.5 * torch.randn(R, n, m, generator=g, dtype=dtype) * scale / math.sqrt(m)
    return a, b


def _loss_and_grads(loss_fn, a0, b0, lam, beta, upstream):
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    loss = loss_fn(a, b, lam, beta)
    (loss * upstream).sum().backward()
    return loss.detach(), a.grad, b.grad


@pytest.mark.parametrize("dtype, rtol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
@pytest.mark.parametrize("beta", [0.5, 2.0, torch.tensor([0.3, 1.0, 2.0, 5.0])])
def test_fused_loss_equals_reference_loss_and_gradient(dtype, rtol, beta):
    a, b = _pair(0, dtype=dtype)
    lam = torch.tensor([0.0, 0.5, 1.0, 3.0], dtype=dtype)
    upstream = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=dtype)  # a general upstream gradient
    got = _loss_and_grads(fused_contrastive_loss, a, b, lam, beta, upstream)
    ref = _loss_and_grads(contrastive_loss, a, b, lam, beta, upstream)
    for x, y in zip(got, ref):
        torch.testing.assert_close(x, y, rtol=rtol, atol=rtol * float(y.abs().max()))


def test_fused_loss_falls_back_to_the_reference_when_the_shared_stabilizer_underflows():
    """A row whose similarities all lie ~200 below the largest would underflow: the reference runs."""
    a, b = _pair(1, scale=30.0)
    lam = torch.ones(4, dtype=torch.float64)
    got = _loss_and_grads(fused_contrastive_loss, a, b, lam, 2.0, torch.ones(4, dtype=torch.float64))
    ref = _loss_and_grads(contrastive_loss, a, b, lam, 2.0, torch.ones(4, dtype=torch.float64))
    for x, y in zip(got, ref):
        assert torch.equal(x, y)


def test_fused_loss_errors():
    a, b = _pair(2)
    lam = torch.ones(4, dtype=torch.float64)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b[:, :-1], lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a[:, :1], b[:, :1], lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, lam[:2], 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, -lam, 2.0)
    with pytest.raises(ParameterError):
        fused_contrastive_loss(a, b, lam, 0.0)
