"""Tests for nlcl.tian.two_view_bn: BatchNorm with two views (Tian 2023, Lemma 6 / Eq. 166, Corollary 3)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.contrastive import infonce_alpha, split_views
from nlcl.tian.two_layer_theory import (
    binary_latent_tokens,
    corollary3_prediction,
    hidden_two_layer,
    theorem5_from_moments,
    theorem5_prediction,
    top_mode_velocity,
)
from nlcl.tian.two_view_bn import (
    bn_moments,
    corollary3_two_view,
    energy_bn,
    lemma6_dynamics,
    two_view_binary_tokens,
    two_view_velocity,
)

D = torch.float64


def _grads(W, V, x, act, alpha, pooled):
    gW, gV = torch.autograd.grad(energy_bn(W, V, x, act, alpha, pooled), [W, V])
    Vd, Wd = lemma6_dynamics(W.detach(), V.detach(), x, act, alpha, pooled)
    return gW, gV, Wd, Vd


@settings(max_examples=12)
@given(
    st.sampled_from(["linear", "relu", "leaky_relu", "quadratic"]),
    st.integers(0, 10**6),
    st.integers(1, 3),
    st.booleans(),
    st.floats(0.5, 3.0),
)
def test_lemma6_pooled_equals_autograd(act, seed, M, infonce, gain):
    """Eq. 166 with moments pooled over the 2N rows is autograd through mean-backprop BatchNorm, any M, α."""
    g = torch.Generator().manual_seed(seed)
    x, _ = two_view_binary_tokens(16, 3, 4, generator=g, gain=gain)
    W = torch.randn(3, M, 4, generator=g, dtype=D, requires_grad=True)
    V = torch.randn(2, 3 * M, generator=g, dtype=D, requires_grad=True)
    alpha = None
    if infonce:
        alpha = infonce_alpha(*split_views(hidden_two_layer(W, x, act) @ V.T), 0.5).detach()
    gW, gV, Wd, Vd = _grads(W, V, x, act, alpha, True)
    assert torch.allclose(gW, Wd, atol=1e-10 * gW.abs().max()) and torch.allclose(gV, Vd, atol=1e-10)


def test_lemma6_per_view_misses_autograd_when_views_differ():
    g = torch.Generator().manual_seed(3)
    x, _ = two_view_binary_tokens(32, 3, 4, generator=g, gain=2.0)
    W = torch.randn(3, 2, 4, generator=g, dtype=D, requires_grad=True)
    V = torch.randn(2, 6, generator=g, dtype=D, requires_grad=True)
    gW, _, Wd, _ = _grads(W, V, x, "relu", None, False)
    assert (gW - Wd).abs().max() > 1e-3 * gW.abs().max()


@settings(max_examples=10)
@given(st.integers(0, 10**6), st.floats(0.2, 5.0))
def test_bn_moments_pooled_and_per_view(seed, gain):
    g = torch.Generator().manual_seed(seed)
    f = torch.rand(20, 3, generator=g, dtype=D)
    mu, var = bn_moments(torch.cat([f, f]), pooled=False, eps=0.0)
    mu_p, var_p = bn_moments(torch.cat([f, f]), pooled=True, eps=0.0)
    assert torch.allclose(mu, mu_p) and torch.allclose(var, var_p)  # identical views: the same moments
    mu2, var2 = bn_moments(torch.cat([f, gain * f]), pooled=False, eps=0.0)
    assert torch.allclose(var2[20:], gain**2 * var2[:20]) and torch.allclose(mu2[20:], gain * mu2[:20])
    with pytest.raises(ParameterError):
        bn_moments(f[:5])


def test_two_view_data_share_class_and_tokens():
    g = torch.Generator().manual_seed(0)
    x, z = two_view_binary_tokens(500, 3, 5, generator=g, gain=2.0, noise=0.0, scales=[1.0, 2.0, 0.5])
    assert x.shape == (1000, 3, 5) and z.shape == (500,)
    assert torch.allclose(x[500:], 2.0 * x[:500])  # without noise the second view is the first times the gain
    with pytest.raises(ParameterError):
        two_view_binary_tokens(10, 2, 3, generator=g, gain=0.0)


def test_two_view_equals_one_view_without_augmentation():
    """Two identical views: corollary3_two_view and two_view_velocity reduce to the one-view functions."""
    g = torch.Generator().manual_seed(1)
    x, z = binary_latent_tokens(4000, 4, 6, generator=g, scales=[0.1, 1.0, 3.0, 10.0])
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=D), dim=-1)
    xx = torch.cat([x, x])
    two, one = (
        corollary3_two_view(W, xx, z, "relu", eps=1e-5),
        corollary3_prediction(W, x, z, "relu", eps=1e-5),
    )
    for k in ("d", "b", "lam", "s", "delta", "wdot"):
        assert torch.allclose(two[k], one[k], rtol=1e-9, atol=1e-12), k
    v2, s2, _ = two_view_velocity(W, xx, "relu", bn="pooled")
    v1, s1 = top_mode_velocity(W, x, "relu", bn=(True, False, 1e-5))
    assert torch.allclose(v2, v1, atol=1e-10) and torch.allclose((s1 @ s2).abs(), torch.tensor(1.0, dtype=D))
    with pytest.raises(ParameterError):
        two_view_velocity(W, xx, "relu", bn="both")
    with pytest.raises(ParameterError):
        corollary3_two_view(W, xx, z[:10], "relu")


def test_theorem5_from_moments_is_theorem5_prediction():
    g = torch.Generator().manual_seed(2)
    x, z = binary_latent_tokens(3000, 3, 5, generator=g)
    W = torch.nn.functional.normalize(torch.randn(3, 1, 5, generator=g, dtype=D), dim=-1)
    pred = theorem5_prediction(W, x, z, "relu")
    again = theorem5_from_moments(W[:, 0], pred["A"], pred["L"], pred["Delta"], pred["p0"], pred["p1"])
    assert torch.allclose(again["wdot"], pred["wdot"])
