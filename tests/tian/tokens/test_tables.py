"""Tests for nlcl.tian.tokens.tables: the token-table training step equals autograd on the per-sample network."""

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nlcl.core.device import keep_freed_memory
from nlcl.core.validate import ParameterError
from nlcl.tian.losses import LOSSES, contrastive_loss
from nlcl.tian.rf_network import ACTIVATIONS_2LAYER, BN_VARIANTS, TwoLayerRF, segments
from nlcl.tian.tokens.tables import token_counts, token_step
from nlcl.tian.tokens.training import train_batched
from nlcl.tian.tokens.world import TokenBatch, make_token_worlds, sample_views


def _autograd(model, x, losses, tau):
    """Reference: the per-sample network on dense inputs, differentiated by autograd."""
    f = model(x.dense(), views=2)
    N = f.shape[1] // 2
    per_run = torch.cat(
        [contrastive_loss(f[sl, :N], f[sl, N:], name, tau[sl]) for sl, name in segments(losses)]
    )
    gW, gV = torch.autograd.grad(per_run.sum(), [model.W, model.V])
    return per_run.detach(), gW, gV


def _token_batch(R, N, K, T, seed, diagonal=True):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, T, (R, 2 * N, K), generator=g)
    if diagonal:
        E = torch.diag_embed(0.5 + torch.rand(R, T, generator=g, dtype=torch.float64))
    else:
        E = torch.randn(R, T, T, generator=g, dtype=torch.float64)
    return TokenBatch(idx, E)


def _all_settings():
    """Every (activation, BN variant, loss) of the token experiments, one run each."""
    return [(a, b, l) for a in ACTIVATIONS_2LAYER for b in BN_VARIANTS for l in LOSSES]


@pytest.mark.parametrize("diagonal", [True, False])
def test_token_step_equals_autograd_for_every_setting(diagonal):
    combos = _all_settings()
    R = len(combos)
    model = TwoLayerRF(
        R,
        4,
        6,
        3,
        5,
        activation=[c[0] for c in combos],
        bn=[c[1] for c in combos],
        seeds=range(R),
        dtype=torch.float64,
    )
    x = _token_batch(R, 16, 4, 6, seed=0, diagonal=diagonal)
    losses = [c[2] for c in combos]
    tau = torch.linspace(0.05, 0.5, R, dtype=torch.float64)
    ref = _autograd(model, x, losses, tau)
    ours = token_step(model, x, losses, tau)
    for a, b in zip(ours, ref):
        assert torch.allclose(a, b, atol=1e-10, rtol=1e-9)


@settings(max_examples=15)
@given(
    st.integers(1, 3),
    st.integers(2, 10),
    st.integers(1, 4),
    st.integers(2, 8),
    st.integers(1, 5),
    st.sampled_from(ACTIVATIONS_2LAYER),
    st.sampled_from(BN_VARIANTS),
    st.sampled_from(LOSSES),
    st.integers(0, 10**6),
)
def test_token_step_equals_autograd_property(R, N, K, T, M, act, bn, loss, seed):
    model = TwoLayerRF(
        R, K, T, M, 3, activation=act, bn=bn, seeds=[seed + r for r in range(R)], dtype=torch.float64
    )
    x = _token_batch(R, N, K, T, seed)
    # A view in which every sample has the same token in some RF gives BatchNorm a constant input
    # (variance 0) and a zero output, where autograd's gradient is amplified rounding
    # (test_token_step_constant_batchnorm_input_gives_the_stable_gradient).
    assume(bn == "none" or not _has_constant_view(x, N))
    tau = torch.full((R,), 0.2, dtype=torch.float64)
    ref = _autograd(model, x, [loss] * R, tau)
    ours = token_step(model, x, loss, 0.2)
    for a, b in zip(ours, ref):
        assert torch.allclose(a, b, atol=1e-9, rtol=1e-8)


def test_token_step_without_output_normalization():
    model = TwoLayerRF(
        2, 3, 5, 2, 4, activation="relu", bn="mean", normalize_output=False, dtype=torch.float64
    )
    x = _token_batch(2, 8, 3, 5, seed=3)
    tau = torch.full((2,), 0.5, dtype=torch.float64)
    ref = _autograd(model, x, ["quadratic"] * 2, tau)
    ours = token_step(model, x, "quadratic", tau)
    for a, b in zip(ours, ref):
        assert torch.allclose(a, b, atol=1e-10)


def test_token_step_does_not_modify_parameters():
    model = TwoLayerRF(2, 3, 5, 2, 4, dtype=torch.float64)
    W0, V0 = model.W.detach().clone(), model.V.detach().clone()
    token_step(model, _token_batch(2, 8, 3, 5, seed=1), "infonce", 0.1)
    assert torch.equal(model.W.detach(), W0) and torch.equal(model.V.detach(), V0)


def test_token_counts():
    idx = torch.tensor([[[0, 1], [0, 2], [1, 1], [2, 2]]])  # R=1, 2 views x N=2, K=2
    c = token_counts(idx, 3, 2)
    assert c.shape == (1, 2, 2, 3)
    assert c[0, 0, 0].tolist() == [2, 0, 0] and c[0, 1, 0].tolist() == [0, 1, 1]
    assert c[0, 0, 1].tolist() == [0, 1, 1] and c[0, 1, 1].tolist() == [0, 1, 1]
    assert torch.equal(c.sum(-1), torch.full((1, 2, 2), 2.0))


def test_token_step_errors():
    model = TwoLayerRF(2, 3, 5, 2, 4)
    x = TokenBatch(torch.zeros(2, 8, 3, dtype=torch.int64), torch.eye(5).expand(2, 5, 5))
    with pytest.raises(ParameterError, match="views"):
        token_step(model, x, "infonce", 0.1, views=1)
    with pytest.raises(ParameterError, match="hinge"):
        token_step(model, x, "hinge", 0.1)
    with pytest.raises(ParameterError, match="entries"):
        token_step(model, x, ["infonce"] * 3, 0.1)
    with pytest.raises(ParameterError, match="do not match"):
        token_step(model, TokenBatch(torch.zeros(2, 8, 4, dtype=torch.int64), x.embedding), "infonce", 0.1)
    with pytest.raises(ParameterError, match="2N"):
        token_step(model, TokenBatch(torch.zeros(2, 7, 3, dtype=torch.int64), x.embedding), "infonce", 0.1)
    with pytest.raises(ParameterError, match="views"):
        token_counts(torch.zeros(2, 7, 3, dtype=torch.int64), 5, 2)


def test_train_batched_engines_agree():
    world = make_token_worlds([0, 1, 2], [3, 1, 5], [1.0, 10.0, 2.0])
    emb = world.embedding(dtype=torch.float64)

    def data(step):
        x1, x2, _ = sample_views(world, step, 16, embedding=emb)
        return x1, x2

    out = {}
    for engine in ("tables", "autograd"):
        m = TwoLayerRF(
            3,
            10,
            20,
            4,
            20,
            activation=["relu", "linear", "sigmoid"],
            bn=["vanilla", "none", "mean"],
            dtype=torch.float64,
        )
        last = train_batched(m, data, 5, loss=["infonce", "quadratic", "infonce"], lr=1e-2, engine=engine)
        out[engine] = (last, m.W.detach(), m.V.detach())
    for a, b in zip(out["tables"], out["autograd"]):
        assert torch.allclose(a, b, atol=1e-10)


def test_train_batched_engine_errors():
    m = TwoLayerRF(1, 2, 3, 1, 2)
    x = torch.randn(1, 4, 2, 3)
    with pytest.raises(ParameterError, match="engine"):
        train_batched(m, lambda s: (x, x), 1, engine="fast")
    with pytest.raises(ParameterError, match="TokenBatch"):
        train_batched(m, lambda s: (x, x), 1, engine="tables")


def test_keep_freed_memory_is_idempotent():
    first = keep_freed_memory()
    assert isinstance(first, bool) and keep_freed_memory() == first


def _has_constant_view(x, N):
    views = x.index.reshape(x.index.shape[0], 2, N, -1)  # (R, 2, N, K)
    return bool((views == views[:, :, :1]).all(2).any())


def test_token_step_constant_batchnorm_input_gives_the_stable_gradient():
    """A view whose samples share one token in an RF has BatchNorm input variance 0, so its output is
    exactly 0, where F.normalize's gradient is 1/eps = 1e12 and BatchNorm's scale 1/sqrt(eps_bn) ≈ 316.
    The exact gradient of W here is 0 (the InfoNCE gradients of the two anchors cancel, and they share
    one token); autograd on the dense network returned 0.125 (found by hypothesis: linear, bn=var,
    InfoNCE, N=2, K=1, T=2), rounding amplified about 3e14 times. The table engine sums per token
    before scaling and gets the exact value; autograd agrees with it as soon as W moves by 1e-15."""
    import copy

    R, N, K, T, M, seed = 2, 2, 1, 2, 1, 3
    model = TwoLayerRF(R, K, T, M, 3, activation="linear", bn="var", seeds=[3, 4], dtype=torch.float64)
    x = _token_batch(R, N, K, T, seed)
    assert _has_constant_view(x, N)
    tau = torch.full((R,), 0.2, dtype=torch.float64)
    ours = token_step(model, x, "infonce", 0.2)
    at_exact_weights = _autograd(model, x, ["infonce"] * R, tau)
    assert not torch.allclose(ours[1], at_exact_weights[1], atol=1e-3)  # autograd's amplified rounding
    for delta in (1e-15, 1e-13, 1e-11):
        moved = copy.deepcopy(model)
        with torch.no_grad():
            moved.W.add_(delta)
        ref, table = _autograd(moved, x, ["infonce"] * R, tau), token_step(moved, x, "infonce", 0.2)
        for a, b in zip(table, ref):
            assert torch.allclose(a, b, atol=1e-9, rtol=1e-8)
        assert torch.allclose(table[1], ours[1], atol=1e-9)  # the table engine's gradient is stable
