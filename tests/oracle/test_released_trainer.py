"""The oracle trainer, a literal re-implementation of the released ``bn_gen.py`` (Tian 2023, Sec. 5)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from released_trainer import (
    BatchNormExt,
    Distribution,
    Generator,
    Model,
    OracleConfig,
    _loss_func,
    train,
    train_and_score,
)


def _gen(aug_degree=5, mag_split=1.0, seed=0):
    rng = np.random.default_rng(seed)
    dist = Distribution(rng, num_loc=10, num_tokens=20, num_tokens_per_pos=5, pattern_cnt=40, pattern_len=5)
    return rng, dist, Generator(dist, 256, mag_split=mag_split, aug_degree=aug_degree)


def test_distribution_follows_the_released_rules():
    _, dist, _ = _gen()
    assert len(dist.distributions) == 40
    for pattern in dist.distributions:
        fixed = [k for k, a in enumerate(pattern) if a != -1]
        assert len(fixed) == 5
        assert all(pattern[k] in dist.tokens_per_loc[k] for k in fixed)
    assert all(len(set(t)) == 5 for t in dist.tokens_per_loc)


def test_views_share_the_fixed_tokens_and_redraw_the_wildcards():
    rng, _, gen = _gen()
    g1, g2, tokens = gen.tokens(rng)
    fixed = tokens != -1
    assert (g1[fixed] == tokens[fixed]).all() and (g2[fixed] == tokens[fixed]).all()
    # aug_degree = 5 = the number of wildcards: every wildcard of view 2 is an independent draw.
    same = (g1 == g2)[~fixed].mean()
    assert abs(same - 1 / 20) < 0.03
    rng, _, gen0 = _gen(aug_degree=0)
    g1, g2, _ = gen0.tokens(rng)
    assert (g1 == g2).all()


def test_embedding_is_a_scaled_one_hot():
    rng, _, gen = _gen(mag_split=10.0)
    g1, _, _ = gen.tokens(rng)
    x = gen.embed(g1)
    assert x.shape == (256, 10, 20)
    a = torch.as_tensor(g1)
    assert torch.equal(x.argmax(-1), a)
    expect = torch.where(a < 10, torch.tensor(0.1), torch.tensor(10.0))
    assert torch.allclose(x.sum(-1), expect)


@pytest.mark.parametrize("backprop_mean,backprop_var", [(True, True), (True, False), (False, False)])
def test_batchnorm_forward_and_selective_backprop(backprop_mean, backprop_var):
    torch.manual_seed(0)
    x = torch.randn(16, 5, requires_grad=True)
    g = torch.randn(16, 5)
    y = BatchNormExt(5, backprop_mean=backprop_mean, backprop_var=backprop_var)(x)
    ref = F.batch_norm(x, None, None, training=True, eps=1e-5)
    assert torch.allclose(y, ref, atol=1e-5)
    (y * g).sum().backward()
    mu, var = x.mean(0), x.var(0, unbiased=False)
    x2 = x.detach().clone().requires_grad_(True)
    m2 = x2.mean(0) if backprop_mean else mu.detach()
    v2 = x2.var(0, unbiased=False) if backprop_var else var.detach()
    ((x2 - m2) / (v2 + 1e-5).sqrt() * g).sum().backward()
    assert torch.allclose(x.grad, x2.grad, atol=1e-5)


def test_model_has_one_linear_per_receptive_field():
    torch.manual_seed(0)
    model = Model(d=20, K=10, output_d=50, activation="relu", multi=25)
    assert len(model.w1) == 10 and model.w1[0].weight.shape == (25, 20) and model.w1[0].bias is None
    assert model.w2.weight.shape == (50, 250)
    x = torch.randn(4, 10, 20)
    _, y = model(x)
    x2 = x.clone()
    x2[:, 3] += 1.0
    _, y2 = model(x2)
    changed = (y2 - y).abs().reshape(4, 10, 25).sum((0, 2)) > 0
    assert changed.tolist() == [k == 3 for k in range(10)]


def test_the_released_losses():
    torch.manual_seed(0)
    N, T = 8, 0.1
    z1 = F.normalize(torch.randn(N, 5), dim=1)
    z2 = F.normalize(torch.randn(N, 5), dim=1)
    M = z1 @ z1.t()
    label = torch.arange(N)
    M[label, label] = (z1 * z2).sum(1)
    pos = (z1 * z2).sum(1)
    off = (z1 @ z1.t()).masked_fill(torch.eye(N, dtype=torch.bool), 0.0)
    quad = _loss_func("quadratic")(M / T, label)
    assert float(quad) == pytest.approx(float((-pos.mean() + off.sum() / N**2) / T), rel=1e-5)
    nce = _loss_func("infonce")(M / T, label)
    assert float(nce) == pytest.approx(float((torch.logsumexp(M / T, 1) - pos / T).mean()), rel=1e-5)


def test_training_is_deterministic_and_learns():
    cfg = OracleConfig(
        activation="relu", loss="infonce", niter=40, beta=1, num_tokens_per_pos=3, batchsize=64
    )
    m1, _, _, l1 = train(cfg)
    m2, _, _, l2 = train(cfg)
    assert l1 == l2
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(), m2.state_dict().values()))
    assert np.mean(l1[-10:]) < np.mean(l1[:10])


def test_train_and_score_reports_the_released_scores():
    cfg = OracleConfig(
        activation="quadratic",
        loss="quadratic",
        bn="mean",
        niter=10,
        beta=1,
        num_tokens_per_pos=3,
        batchsize=32,
    )
    out = train_and_score(cfg)
    assert set(out) == {"chi_plus", "chi_minus", "final_loss"}
    assert all(math.isfinite(v) for v in out.values())
    assert -1 <= out["chi_minus"] <= 1 and -1 <= out["chi_plus"] <= 1
