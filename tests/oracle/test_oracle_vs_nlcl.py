"""nlcl's token trainer against the oracle (issue 18): the same data and initialization give the same run.

The oracle (``released_trainer``) is trained on nlcl's generators, batches and initial weights, in
float64; after a few dozen SGD steps both trainers must hold the same weights.  This isolates the
model, the loss and the update (Tian 2023, Sec. 5; released ``bn_gen.py``) from the data, the
augmentation and the scoring, which the distributional comparison covers.
"""

import pytest
import torch
from released_trainer import OracleConfig, train

from nlcl.tian.rf_network import TwoLayerRF
from nlcl.tian.token_training import train_batched
from nlcl.tian.tokens import make_token_worlds, sample_views

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
