"""Tests for nlcl.tian.tokens.world (Tian 2023, Sec. 5 / Fig. 3, App. E.2)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.tian.tokens.world import (
    TokenBatch,
    hash_uniform_int,
    make_token_worlds,
    sample_views,
    token_embeddings,
)


def test_world_structure_matches_the_paper():
    w = make_token_worlds([0, 1, 2], [1, 3, 10], [1.0, 2.0, 10.0])
    assert w.generators.shape == (3, 40, 10)
    assert w.candidates.shape == (3, 10, 20)
    # P candidates per RF, 5 fixed RFs per generator
    assert w.candidates.sum(-1).tolist() == [[1] * 10, [3] * 10, [10] * 10]
    assert ((w.generators >= 0).sum(-1) == 5).all()
    # fixed tokens are candidates of their RF; relevant ⊆ candidates
    r, g, k = torch.nonzero(w.generators >= 0, as_tuple=True)
    assert w.candidates[r, k, w.generators[r, g, k]].all()
    assert not (w.relevant & ~w.candidates).any()
    assert w.n_runs == 3 and w.K == 10 and w.n_tokens == 20


def test_embedding_norms_follow_zeta():
    n = token_embeddings(torch.tensor([1.0, 10.0]), 20)
    assert torch.allclose(n[0], torch.ones(20, dtype=torch.float64))
    assert torch.allclose(n[1, :10], torch.full((10,), 0.1, dtype=torch.float64))
    assert torch.allclose(n[1, 10:], torch.full((10,), 10.0, dtype=torch.float64))
    w = make_token_worlds([0], 3, 5.0)
    E = w.embedding(dtype=torch.float64)[0]
    # orthogonal embeddings with the prescribed norms
    assert torch.allclose(E @ E.T, torch.diag(w.norms[0] ** 2))


def test_views_share_generator_and_fixed_tokens():
    w = make_token_worlds([3, 4], [3, 5])
    x1, x2, g = sample_views(w, step=7, batch_size=64)
    assert x1.index.shape == (2, 64, 10) and g.shape == (2, 64)
    pat = torch.gather(w.generators, 1, g[:, :, None].expand(2, 64, 10))
    fixed = pat >= 0
    assert torch.equal(x1.index[fixed], pat[fixed]) and torch.equal(x2.index[fixed], pat[fixed])
    # wildcards are re-sampled independently: they differ somewhere
    assert (x1.index[~fixed] != x2.index[~fixed]).any()
    assert isinstance(x1, TokenBatch) and x1.dense().shape == (2, 64, 10, 20)


def test_wildcards_are_uniform_over_all_tokens():
    w = make_token_worlds([0], 1)
    counts = torch.zeros(20)
    for step in range(20):
        x1, _, g = sample_views(w, step, 128)
        pat = torch.gather(w.generators, 1, g[:, :, None].expand(1, 128, 10))
        counts += torch.bincount(x1.index[pat < 0], minlength=20).float()
    p = counts / counts.sum()
    assert (p - 1 / 20).abs().max() < 0.015


def test_a_run_draws_the_same_data_alone_or_stacked():
    both = make_token_worlds([5, 9], [3, 10], [1.0, 2.0])
    alone = make_token_worlds([9], [10], [2.0])
    assert torch.equal(both.generators[1], alone.generators[0])
    a, _, _ = sample_views(both, 11, 32)
    b, _, _ = sample_views(alone, 11, 32)
    assert torch.equal(a.index[1], b.index[0])
    assert torch.equal(both.select([1]).generators, alone.generators)


def test_seeded_and_deterministic():
    a = make_token_worlds([1], 3)
    b = make_token_worlds([1], 3)
    assert torch.equal(a.generators, b.generators)
    assert not torch.equal(a.generators, make_token_worlds([2], 3).generators)
    assert not torch.equal(sample_views(a, 0, 16)[0].index, sample_views(a, 1, 16)[0].index)


@settings(max_examples=30)
@given(st.integers(0, 2**31 - 1), st.integers(0, 10_000), st.integers(1, 1000))
def test_hash_uniform_int_range_and_determinism(seed, step, high):
    s = torch.tensor([seed])
    u = hash_uniform_int(s, step, 3, (50,), high)
    assert u.shape == (1, 50) and u.min() >= 0 and u.max() < high
    assert torch.equal(u, hash_uniform_int(s, step, 3, (50,), high))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(seeds=[0], P=0),
        dict(seeds=[0], P=21),
        dict(seeds=[0], P=3, zeta=0.0),
        dict(seeds=[0], P=3, zeta=float("nan")),
        dict(seeds=[-1], P=3),
        dict(seeds=[0, 1], P=[1, 2, 3]),
        dict(seeds=[0], P=3, n_fixed=11),
        dict(seeds=[0], P=3, K=-1),
    ],
)
def test_bad_input_raises(kwargs):
    with pytest.raises(ValueError):
        make_token_worlds(**kwargs)


def test_bad_batch_size_raises():
    w = make_token_worlds([0], 3)
    with pytest.raises(ValueError, match="batch_size"):
        sample_views(w, 0, 0)


def test_relevant_is_the_set_of_fixed_tokens_per_rf():
    """Brute-force check of TokenWorld.relevant (wildcards must not erase a fixed token)."""
    w = make_token_worlds(list(range(6)), [1, 3, 5, 10, 20, 2])
    for r in range(w.n_runs):
        for k in range(w.K):
            fixed = {int(a) for a in w.generators[r, :, k] if a >= 0}
            assert set(torch.nonzero(w.relevant[r, k]).flatten().tolist()) == fixed
