"""Tests for nlcl.tian.rf_network (Tian 2023, Sec. 4 two-layer RF network; App. D / E.2 BatchNorm)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.tian.rf_network import (
    BN_BACKPROP,
    BN_POOLED,
    BN_VARIANTS,
    TwoLayerRF,
    batch_norm,
    rf_preactivation,
    segments,
)
from nlcl.tian.tokens.world import TokenBatch, make_token_worlds, sample_views


@settings(max_examples=15)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.integers(0, 1000))
def test_token_gather_equals_dense_matmul_and_its_gradient(R, K, M, seed):
    g = torch.Generator().manual_seed(seed)
    n = 6
    idx = torch.randint(0, n, (R, 7, K), generator=g)
    E = torch.randn(R, n, n, generator=g, dtype=torch.float64)
    x = TokenBatch(idx, E)
    W = torch.randn(R, K, M, n, generator=g, dtype=torch.float64, requires_grad=True)
    y_sparse, y_dense = rf_preactivation(W, x), rf_preactivation(W, x.dense())
    assert y_sparse.shape == (R, 7, K, M)
    assert torch.allclose(y_sparse, y_dense)
    c = torch.randn(y_sparse.shape, generator=g, dtype=torch.float64)
    (g1,) = torch.autograd.grad((y_sparse * c).sum(), W)
    (g2,) = torch.autograd.grad((y_dense * c).sum(), W)
    assert torch.allclose(g1, g2)


def test_preactivation_shape_errors():
    W = torch.zeros(2, 3, 4, 5)
    with pytest.raises(ValueError, match="x has shape"):
        rf_preactivation(W, torch.zeros(2, 8, 3, 6))
    with pytest.raises(ValueError, match="W has shape"):
        rf_preactivation(torch.zeros(3, 4, 5), torch.zeros(2, 8, 3, 5))


def test_batch_norm_forward_is_standardization_for_every_variant():
    h = torch.randn(3, 64, 5, dtype=torch.float64) * 3 + 1
    outs = [batch_norm(h, m, v) for m, v in [(True, True), (True, False), (False, True), (False, False)]]
    for o in outs:
        assert torch.allclose(o, outs[0])
    assert torch.allclose(outs[0].mean(-2), torch.zeros(3, 5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(outs[0].var(-2, unbiased=False), torch.ones(3, 5, dtype=torch.float64), atol=1e-4)


def test_vanilla_batch_norm_matches_torch_and_detached_scales_the_gradient():
    h = (torch.randn(64, 5, dtype=torch.float64) * 2).requires_grad_()
    c = torch.randn(64, 5, dtype=torch.float64)
    (g_ours,) = torch.autograd.grad((batch_norm(h) * c).sum(), h)
    ref = torch.nn.functional.batch_norm(h, None, None, training=True, eps=1e-5)
    (g_ref,) = torch.autograd.grad((ref * c).sum(), h)
    assert torch.allclose(g_ours, g_ref)
    (g_det,) = torch.autograd.grad((batch_norm(h, False, False) * c).sum(), h)
    sigma = torch.sqrt(h.detach().var(0, unbiased=False) + 1e-5)
    assert torch.allclose(g_det, c / sigma)
    # mean-backprop (Def. 5): gradient is the centred upstream gradient divided by σ
    (g_mean,) = torch.autograd.grad((batch_norm(h, True, False) * c).sum(), h)
    assert torch.allclose(g_mean, (c - c.mean(0)) / sigma)


def test_model_output_is_unit_norm_and_shapes():
    m = TwoLayerRF(
        3, K=4, d=6, M=2, out_dim=5, activation=["relu", "linear", "sigmoid"], bn=["none", "mean", "vanilla"]
    )
    # seeded: with global-RNG inputs a ReLU run without BN can have all hidden units off (f = 0)
    x = torch.randn(3, 10, 4, 6, generator=torch.Generator().manual_seed(0))
    out = m.forward_all(x, views=2)
    assert out.f.shape == (3, 10, 5) and out.hidden.shape == (3, 10, 8) and out.pre.shape == (3, 10, 4, 2)
    assert torch.allclose(out.f.norm(dim=-1), torch.ones(3, 10), atol=1e-5)
    assert torch.allclose(out.hidden[1], out.pre[1].reshape(10, 8))  # linear
    assert m.filters().shape == (3, 4, 2, 6) and set(m.state()) == {"W", "V"}


def test_stacked_runs_equal_single_runs():
    acts, bns, seeds = ["relu", "quadratic", "leaky_relu"], ["none", "var", "detached"], [4, 5, 6]
    stack = TwoLayerRF(3, 4, 6, 3, 5, activation=acts, bn=bns, seeds=seeds, dtype=torch.float64)
    x = torch.randn(3, 8, 4, 6, dtype=torch.float64)
    f = stack(x, views=2)
    for r in range(3):
        single = TwoLayerRF(
            1, 4, 6, 3, 5, activation=acts[r], bn=bns[r], seeds=[seeds[r]], dtype=torch.float64
        )
        assert torch.equal(single.W[0], stack.W[r])
        assert torch.allclose(single(x[r : r + 1], views=2)[0], f[r])


def test_initialization_scale():
    m = TwoLayerRF(2, 10, 20, 50, 20, seeds=[0, 1])
    assert m.W.abs().max() <= 1 / 20**0.5 and m.V.abs().max() <= 1 / 500**0.5
    assert not torch.equal(m.W[0], m.W[1])


def test_segments():
    assert segments(["a", "a", "b", "a"]) == [(slice(0, 2), "a"), (slice(2, 3), "b"), (slice(3, 4), "a")]
    assert BN_VARIANTS == tuple(BN_BACKPROP)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(activation="swish"), "activation"),
        (dict(bn="layer"), "bn"),
        (dict(M=0), "M"),
        (dict(seeds=[1]), "seeds"),
        (dict(activation=["relu"]), "activation"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    base = dict(n_runs=2, K=2, d=3, M=2)
    with pytest.raises(ValueError, match=match):
        TwoLayerRF(**{**base, **kwargs})


@pytest.mark.parametrize("bn", ["vanilla", "mean", "var", "detached"])
def test_pooled_batchnorm_takes_the_moments_of_both_views(bn):
    """App. D, Eqs. 164-165: the pooled variants normalize the 2N samples of x and x' together."""
    x = torch.randn(1, 12, 2, 3, dtype=torch.float64)
    per_view = TwoLayerRF(1, 2, 3, 2, bn=bn, dtype=torch.float64)
    pooled = TwoLayerRF(1, 2, 3, 2, bn=f"pooled-{bn}", dtype=torch.float64)
    assert BN_BACKPROP[f"pooled-{bn}"] == BN_BACKPROP[bn] and f"pooled-{bn}" in BN_POOLED
    h = per_view.forward_all(x).hidden
    expected = batch_norm(h, eps=per_view.bn_eps)  # one group: every sample of both views
    assert torch.allclose(pooled.forward_all(x, views=2).normalized, expected)
    assert torch.allclose(per_view.forward_all(x, views=1).normalized, expected)
    assert not torch.allclose(per_view.forward_all(x, views=2).normalized, expected)


def test_views_must_divide_batch():
    m = TwoLayerRF(1, 2, 3, 2)
    with pytest.raises(ValueError, match="views"):
        m(torch.randn(1, 5, 2, 3), views=2)


def test_token_batch_forward():
    w = make_token_worlds([0, 1], 3)
    x1, x2, _ = sample_views(w, 0, 8)
    m = TwoLayerRF(2, 10, 20, 6)
    assert m(x1).shape == (2, 8, 20)


def test_split_receptive_fields_mnist_layout():
    from nlcl.tian.rf_network import split_receptive_fields

    img = torch.arange(28 * 28, dtype=torch.float64).reshape(1, 28, 28)
    x = split_receptive_fields(img)
    assert x.shape == (1, 4, 196)
    assert torch.equal(x[0, 0], img[0, :14, :14].reshape(-1))  # upper left
    assert torch.equal(x[0, 1], img[0, :14, 14:].reshape(-1))  # upper right
    assert torch.equal(x[0, 2], img[0, 14:, :14].reshape(-1))  # bottom left
    assert torch.equal(x[0, 3], img[0, 14:, 14:].reshape(-1))  # bottom right
    with pytest.raises(ValueError, match="divisible"):
        split_receptive_fields(torch.zeros(27, 28))
    m = TwoLayerRF(1, K=4, d=196, M=3)
    assert m(x[None].float().expand(1, 8, 4, 196).contiguous()).shape == (1, 8, 20)
