"""Tests for nlcl.tian.simclr_probe: the stacked SimCLR-style encoder, its training and the linear probe."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian import simclr_probe as encoders
from nlcl.tian.losses import info_nce, quadratic_loss
from nlcl.tian.simclr_probe import EnsembleEncoder, linear_probe, probe_accuracies, train_simclr


def _images(n=64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 28, 28)).astype(np.float32)


def test_shapes_and_normalization():
    enc = EnsembleEncoder(3, hidden=16, rep_dim=8, proj_dim=4)
    x = torch.as_tensor(_images(10))
    h = enc.represent(x)
    z = enc(x)
    assert h.shape == (3, 10, 8) and (h >= 0).all()
    assert z.shape == (3, 10, 4)
    torch.testing.assert_close(z.norm(dim=-1), torch.ones(3, 10))
    assert enc.features(_images(5), chunk=2).shape == (3, 5, 8)


def test_runs_with_equal_seeds_start_equal_and_are_independent():
    enc = EnsembleEncoder(3, hidden=16, rep_dim=8, proj_dim=4, seeds=[5, 5, 6])
    W1 = enc.parameters()[0]
    assert torch.equal(W1[0], W1[1]) and not torch.equal(W1[0], W1[2])
    # a run's init depends only on its own seed
    alone = EnsembleEncoder(1, hidden=16, rep_dim=8, proj_dim=4, seeds=[6])
    for a, b in zip(alone.parameters(), enc.parameters()):
        assert torch.equal(a[0], b[2])


@settings(max_examples=15)
@given(st.integers(1, 4), st.integers(0, 1000))
def test_stacked_forward_equals_separate_forwards(R, seed):
    # the run axis is a batch of independent networks: run r of the stack = a lone network
    seeds = list(range(seed, seed + R))
    stack = EnsembleEncoder(R, hidden=8, rep_dim=6, proj_dim=3, seeds=seeds, dtype=torch.float64)
    x = torch.as_tensor(np.random.default_rng(seed).random((R, 5, 784)))
    z = stack(x)
    for r, s in enumerate(seeds):
        lone = EnsembleEncoder(1, hidden=8, rep_dim=6, proj_dim=3, seeds=[s], dtype=torch.float64)
        torch.testing.assert_close(z[r], lone(x[r : r + 1])[0])


def test_training_is_deterministic_and_runs_are_independent():
    imgs = _images(64)
    kw = dict(hidden=16, rep_dim=8, proj_dim=4)

    def train(R, seeds, losses):
        enc = EnsembleEncoder(R, seeds=seeds, **kw)
        hist = train_simclr(enc, imgs, 6, loss=losses, batch_size=16, lr=1e-2)
        return enc, hist

    a, ha = train(2, [0, 0], ["infonce", "quadratic"])
    b, hb = train(2, [0, 0], ["infonce", "quadratic"])
    np.testing.assert_array_equal(ha, hb)
    for p, q in zip(a.parameters(), b.parameters()):
        assert torch.equal(p, q)
    assert ha.shape == (6, 2) and np.isfinite(ha).all()
    # the InfoNCE run of the stack equals an InfoNCE run trained alone (same seed, same crops)
    c, hc = train(1, [0], ["infonce"])
    np.testing.assert_allclose(hc[:, 0], ha[:, 0], rtol=1e-5, atol=1e-6)


def test_fused_adam_follows_the_per_tensor_rule(monkeypatch):
    """train_simclr uses torch's fused Adam; the per-tensor (foreach) Adam it replaced is the oracle:
    the same element-wise rule, rounded in another order. Weights and losses agree to within a
    thousandth of a step (atol 1e-5 = lr / 1000 after 6 steps: Adam divides by √v + ε, so where a
    gradient entry is near 0 a rounding difference becomes a visible fraction of that entry's step,
    and the losses are evaluated at those weights). Measured under MKL_CBWR unset, AVX2, SSE4_2 and
    COMPATIBLE: at most 6.5e-6 (weights) and 1.8e-6 (losses); a wrong rule moves them much more
    (β₂ = 0.99, ε = 1e-6 or lr × 1.01 instead: weights ≥ 0.028, losses ≥ 1.2e-4)."""
    imgs, kw = _images(64), dict(hidden=16, rep_dim=8, proj_dim=4)
    fused = EnsembleEncoder(2, seeds=[0, 0], **kw)
    h_fused = train_simclr(fused, imgs, 6, loss=["infonce", "quadratic"], batch_size=16, lr=1e-2)
    adam = torch.optim.Adam

    def foreach_adam(params, lr, fused):
        assert fused is True
        return adam(params, lr=lr, foreach=True)

    monkeypatch.setattr(torch.optim, "Adam", foreach_adam)
    ref = EnsembleEncoder(2, seeds=[0, 0], **kw)
    h_ref = train_simclr(ref, imgs, 6, loss=["infonce", "quadratic"], batch_size=16, lr=1e-2)
    np.testing.assert_allclose(h_fused, h_ref, rtol=0, atol=1e-5)
    for p, q in zip(fused.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=1e-5)


def test_training_lowers_the_loss():
    imgs = _images(128)
    enc = EnsembleEncoder(2, hidden=32, rep_dim=16, proj_dim=8, seeds=[1, 1])
    hist = train_simclr(enc, imgs, 40, loss=["infonce", "quadratic"], batch_size=32, lr=3e-3)
    assert (hist[-5:].mean(0) < hist[:5].mean(0)).all()


def test_training_uses_the_losses_of_nlcl_losses():
    # step-0 loss equals nlcl.tian.losses on the same views (same crop generator, same permutation)
    imgs = _images(32)
    enc = EnsembleEncoder(2, hidden=8, rep_dim=6, proj_dim=3, seeds=[0, 0], dtype=torch.float64)
    params0 = [p.detach().clone() for p in enc.parameters()]
    hist = train_simclr(enc, imgs, 1, loss=["infonce", "quadratic"], tau=0.3, eps=1.0, batch_size=8)
    from nlcl.datasets.augment import PAPER_RRC

    perm = torch.randperm(32, generator=torch.Generator().manual_seed(0 + 104_729))[:8]
    x = torch.as_tensor(imgs, dtype=torch.float64)[perm]
    views = PAPER_RRC(torch.stack([x, x]).reshape(-1, 28, 28), torch.Generator().manual_seed(0))
    fresh = EnsembleEncoder(1, hidden=8, rep_dim=6, proj_dim=3, seeds=[0], dtype=torch.float64)
    for p, q in zip(fresh.parameters(), params0):
        assert torch.equal(p.detach(), q[:1])
    with torch.no_grad():
        z = fresh(views.reshape(1, 16, 784))[0]
    assert hist[0, 0] == pytest.approx(float(info_nce(z[:8], z[8:], 0.3, 1.0, reduction="mean")), rel=1e-9)
    assert hist[0, 1] == pytest.approx(float(quadratic_loss(z[:8], z[8:], reduction="mean")), rel=1e-9)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(loss="hinge"), "loss"),
        (dict(loss=["infonce"] * 3), "loss has 3 entries"),
        (dict(tau=0.0), "tau"),
        (dict(lr=-1.0), "lr"),
        (dict(batch_size=1000), "batch_size"),
        (dict(data_seeds=[0]), "data_seeds"),
    ],
)
def test_train_bad_arguments(kwargs, match):
    enc = EnsembleEncoder(2, hidden=8, rep_dim=4, proj_dim=2)
    with pytest.raises(ParameterError, match=match):
        train_simclr(enc, _images(32), 1, **{"batch_size": 8, **kwargs})


def test_nan_during_training_raises(monkeypatch):
    enc = EnsembleEncoder(1, hidden=8, rep_dim=4, proj_dim=2)
    imgs = _images(32)
    imgs[:] = np.nan
    with pytest.raises(ValueError, match="not finite|NaN"):
        train_simclr(enc, imgs, 2, batch_size=8)


def test_encoder_bad_arguments():
    with pytest.raises(ParameterError, match="n_runs"):
        EnsembleEncoder(0)
    with pytest.raises(ParameterError, match="hidden"):
        EnsembleEncoder(1, hidden=-3)
    with pytest.raises(ParameterError, match="seeds has 1 entries"):
        EnsembleEncoder(2, seeds=[0])
    with pytest.raises(ParameterError, match="x has shape"):
        EnsembleEncoder(1).represent(torch.zeros(4, 10))


def test_linear_probe_separable_and_chance():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    X = np.eye(3)[y] * 5 + rng.normal(size=(300, 3)) * 0.1
    assert linear_probe(X[:200], y[:200], X[200:], y[200:]) == 1.0
    noise = rng.normal(size=(300, 5))
    assert linear_probe(noise[:200], y[:200], noise[200:], y[200:]) < 0.6


def test_linear_probe_bad_input():
    X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(ParameterError, match="must be"):
        linear_probe(X, y, np.zeros((4, 3)), y)
    with pytest.raises(ParameterError, match="disagree"):
        linear_probe(X, y[:3], X, y)
    with pytest.raises(ParameterError, match="non-finite"):
        linear_probe(np.full((4, 2), np.nan), y, X, y)
    with pytest.raises(ParameterError, match="C"):
        linear_probe(X, y, X, y, C=0)


def test_probe_accuracies_per_run():
    class Data:
        def __init__(self, n, seed):
            rng = np.random.default_rng(seed)
            self.labels = rng.integers(0, 2, n)
            self.images = (self.labels[:, None, None] * np.ones((n, 28, 28))).astype(np.float32)

    enc = EnsembleEncoder(2, hidden=16, rep_dim=8, proj_dim=4)
    acc = probe_accuracies(enc, Data(60, 0), Data(40, 1))
    assert acc.shape == (2,) and (acc > 0.9).all()
    assert encoders.__all__


def test_probe_accuracies_of_chosen_runs_equal_those_of_all_runs():
    from types import SimpleNamespace

    rng = np.random.default_rng(3)
    train = SimpleNamespace(images=_images(60, 1), labels=rng.integers(0, 3, 60))
    test = SimpleNamespace(images=_images(30, 2), labels=rng.integers(0, 3, 30))
    enc = EnsembleEncoder(4, hidden=16, rep_dim=8, proj_dim=4, seeds=[0, 1, 0, 1])
    every = probe_accuracies(enc, train, test)
    np.testing.assert_array_equal(probe_accuracies(enc, train, test, runs=[2, 0]), every[[2, 0]])
    with pytest.raises(ParameterError, match="runs"):
        probe_accuracies(enc, train, test, runs=[4])
