"""nlcl's token trainer against the oracle (issue 18): the same data and initialization give the same run.

The oracle (``released_trainer``) is trained on nlcl's generators, batches and initial weights, in
float64; after a few dozen SGD steps both trainers must hold the same weights.  This isolates the
model, the loss and the update (Tian 2023, Sec. 5; released ``bn_gen.py``) from the data, the
augmentation and the scoring, which the distributional comparison covers.
"""

import numpy as np
import pytest
import torch
from released_trainer import Distribution, Generator, Model, OracleConfig, train

from nlcl.tian.rf_network import TwoLayerRF
from nlcl.tian.tokens.training import train_batched
from nlcl.tian.tokens.world import make_token_worlds, sample_views

STEPS, N, K, D, P, BETA, OUT = 12, 32, 10, 20, 3, 2, 20


@pytest.mark.parametrize(
    "activation,loss,bn",
    [
        ("relu", "infonce", "none"),
        ("relu", "quadratic", "none"),
        ("linear", "quadratic", "none"),
        ("leaky_relu", "quadratic", "none"),
        ("quadratic", "quadratic", "mean"),
        ("sigmoid", "infonce", "mean"),
        ("relu", "infonce", "vanilla"),
        ("relu", "infonce", "detached"),
    ],
)
def test_same_data_and_initialization_give_the_same_weights(activation, loss, bn):
    seed, M = 3, BETA * P
    world = make_token_worlds([seed], P)
    model = TwoLayerRF(1, K, D, M, OUT, activation=activation, bn=bn, seeds=[seed], dtype=torch.float64)
    init = {f"w1.{k}.weight": model.W[0, k].detach().clone() for k in range(K)}
    init["w2.weight"] = model.V[0].detach().clone()
    batches = [sample_views(world, t, N, dtype=torch.float64) for t in range(STEPS)]
    train_batched(model, lambda t: batches[t][:2], STEPS, loss=loss, tau=0.1, lr=0.02)
    cfg = OracleConfig(
        activation=activation,
        loss=loss,
        bn=bn,
        seed=seed,
        num_tokens_per_pos=P,
        beta=BETA,
        output_d=OUT,
        batchsize=N,
        niter=STEPS,
    )
    oracle, *_ = train(
        cfg,
        patterns=world.generators[0].tolist(),
        batches=lambda t: (batches[t][0].index[0].numpy(), batches[t][1].index[0].numpy()),
        init=init,
        dtype=torch.float64,
    )
    W = torch.stack([oracle.w1[k].weight.detach() for k in range(K)])
    moved = (W - torch.stack([init[f"w1.{k}.weight"] for k in range(K)])).abs().max()
    assert moved > 1e-3, "the weights did not move: the comparison would be vacuous"
    assert torch.allclose(model.W[0].detach(), W, atol=1e-9, rtol=1e-7)
    assert torch.allclose(model.V[0].detach(), oracle.w2.weight.detach(), atol=1e-9, rtol=1e-7)


def _view_statistics(g1, g2, tokens):
    """Agreement of the two views at wildcards and at fixed positions, and the wildcard-token histogram."""
    wild = tokens == -1
    return (
        float((g1 == g2)[wild].mean()),
        float((g1 == g2)[~wild].mean()),
        float(wild.mean()),
        np.bincount(g1[wild], minlength=D) / wild.sum(),
    )


def test_the_data_and_augmentation_follow_the_same_rules():
    """nlcl's ``sample_views`` and the oracle's generator draw views with the same statistics."""
    P_, seeds, n = 5, list(range(8)), 256
    world = make_token_worlds(seeds, P_)
    stats_nlcl, stats_oracle = [], []
    for r, s in enumerate(seeds):
        gens = world.generators[r].numpy()
        # each generator fixes n_fixed = 5 RFs, each to one of that RF's candidates
        assert ((gens >= 0).sum(1) == 5).all()
        for t in range(4):
            x1, x2, g = sample_views(world.select([r]), t, n)
            tokens = gens[g[0].numpy()]
            stats_nlcl.append(_view_statistics(x1.index[0].numpy(), x2.index[0].numpy(), tokens))
        rng = np.random.default_rng(s)
        dist = Distribution(rng, K, D, P_, 40, 5)
        gen = Generator(dist, n)
        for _ in range(4):
            stats_oracle.append(_view_statistics(*gen.tokens(rng)))
    a, b = np.array([s[:3] for s in stats_nlcl]), np.array([s[:3] for s in stats_oracle])
    # wildcards re-drawn independently (agree with probability 1/d), fixed tokens always shared, half wild
    assert np.allclose(a.mean(0), [1 / D, 1.0, 0.5], atol=0.01)
    assert np.allclose(b.mean(0), [1 / D, 1.0, 0.5], atol=0.01)
    ha = np.mean([s[3] for s in stats_nlcl], 0)
    hb = np.mean([s[3] for s in stats_oracle], 0)
    assert np.abs(ha - 1 / D).max() < 0.01 and np.abs(hb - 1 / D).max() < 0.01


def test_the_initializations_have_the_same_law():
    """nlcl's W ~ U(±1/√d), V ~ U(±1/√(KM)) is torch's ``nn.Linear`` default used by the released Model."""
    M = 25
    nlcl_model = TwoLayerRF(4, K, D, M, 50, seeds=[0, 1, 2, 3])
    torch.manual_seed(0)
    oracle = Model(D, K, output_d=50, multi=M)
    W_o = torch.stack([m.weight.detach() for m in oracle.w1])
    for a, b, bound in (
        (nlcl_model.W.detach(), W_o, 1 / D**0.5),
        (nlcl_model.V.detach(), oracle.w2.weight.detach(), 1 / (K * M) ** 0.5),
    ):
        for x in (a, b):
            assert float(x.abs().max()) <= bound
            assert float(x.std()) == pytest.approx(bound / 3**0.5, rel=0.05)
