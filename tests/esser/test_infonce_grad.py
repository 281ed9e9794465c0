"""nlcl.esser.infonce_grad: the closed-form InfoNCE gradient against autograd on the original formula."""

from __future__ import annotations

import pytest
import torch

from nlcl.esser.infonce_grad import InfoNCE
from nlcl.esser.remarks import infonce_loss


def _autograd_infonce(theta, x, x_pos, tau=1.0):
    """InfoNCE as first written in nlcl.esser.remarks (autograd differentiates it): the oracle."""
    u, up = x @ theta.transpose(-1, -2), x_pos @ theta.transpose(-1, -2)
    s = u @ up.transpose(-1, -2) / tau
    return (torch.logsumexp(s, dim=-1) - torch.diagonal(s, dim1=-2, dim2=-1)).mean(-1)


def _grad(f, theta):
    leaf = theta.clone().requires_grad_(True)
    return torch.autograd.grad(f(leaf).sum(), leaf)[0]


def _data(seed, n=40, d=2):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    return g, x, x + 0.3 * torch.randn(n, d, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("scale", [1e-3, 1e-1, 1.0, 5.0])
@pytest.mark.parametrize(("shape", "tau"), [((4, 3, 2), 1.0), ((2, 3, 1, 2), 0.5), ((3, 2), 2.0)])
def test_loss_is_bitwise_and_gradient_matches_autograd(scale, shape, tau):
    g, x, xp = _data(7)
    theta = scale * torch.randn(shape, generator=g, dtype=torch.float64)
    assert torch.equal(InfoNCE.apply(theta, x, xp, tau), _autograd_infonce(theta, x, xp, tau))
    assert torch.equal(infonce_loss(theta, x, xp, temperature=tau), _autograd_infonce(theta, x, xp, tau))
    new = _grad(lambda t: InfoNCE.apply(t, x, xp, tau), theta)
    ref = _grad(lambda t: _autograd_infonce(t, x, xp, tau), theta)
    # one softmax normalisation in another order: a few ulps of the gradient's largest entry
    assert float((new - ref).abs().max()) <= 1e-13 * float(ref.abs().max())


def test_gradcheck_and_weighted_upstream_gradient():
    g, x, xp = _data(3, n=9)
    theta = torch.randn(2, 3, 2, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: InfoNCE.apply(t, x, xp, 0.7), (theta,))
    w = torch.tensor([0.3, -2.0], dtype=torch.float64)
    new = torch.autograd.grad((InfoNCE.apply(theta, x, xp, 0.7) * w).sum(), theta)[0]
    ref = torch.autograd.grad((_autograd_infonce(theta, x, xp, 0.7) * w).sum(), theta)[0]
    torch.testing.assert_close(new, ref, rtol=1e-12, atol=1e-15)


def test_gradient_descent_follows_the_autograd_trajectory():
    """The chapter's use (Remark 2): 400 steps, lr 0.1, from a small Θ₀, to the outputs of order one.

    Rounding differences of 1e-16 per step do not grow along this convergent descent: ≤ 1e-10 relative.
    """
    g, x, xp = _data(11, n=60)
    theta0 = 1e-2 * torch.randn(3, 3, 2, generator=g, dtype=torch.float64)
    runs = []
    for f in (lambda t: InfoNCE.apply(t, x, xp, 1.0), lambda t: _autograd_infonce(t, x, xp)):
        theta = theta0.clone()
        for _ in range(400):
            theta = theta - 0.1 * _grad(f, theta)
        runs.append(theta)
    rel = torch.linalg.matrix_norm(runs[0] - runs[1]) / torch.linalg.matrix_norm(runs[1])
    assert float(rel.max()) <= 1e-10
    assert float(torch.linalg.matrix_norm(runs[1] - theta0).min()) > 0.1  # training moved Θ
