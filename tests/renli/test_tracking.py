"""Tests for nlcl.renli.tracking: population loss, exact Gram recursion, finite vs infinite width."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import NonFiniteError, ParameterError
from nlcl.renli.losses import contrastive_loss, non_contrastive_loss
from nlcl.renli.model import make_data
from nlcl.renli.tracking import (
    gram_condition_number,
    gram_noise_to_signal,
    gram_step,
    gram_trajectory,
    infinite_width_gram,
    initial_gram,
    input_scales,
    normalized_gram,
    population_loss,
    sign_table,
    tracking_error,
    train_population,
)


def _data(seeds=(0,), r=2, r_xi=2, d=8, kappa=3.0):
    return make_data(d, r, r_xi, kappa, list(seeds), nu=0.3, dtype=torch.float64)


def test_sign_table():
    t = sign_table(3)
    assert t.shape == (8, 3) and set(t.unique().tolist()) == {-1.0, 1.0}
    assert len({tuple(row) for row in t.tolist()}) == 8
    with pytest.raises(ParameterError, match="k=15"):
        sign_table(15)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 1000), lam=st.sampled_from([0.0, 0.5]), beta=st.sampled_from([0.3, 2.0]))
def test_population_loss_is_the_large_batch_limit(seed, lam, beta):
    """The exact population loss equals the average of the batch loss over the whole latent space.

    With the batch = every (z, ξ_A, ξ_B) combination once, the batch normalisation equals the
    population one and mean_{j} over the batch is the expectation over x_B' (up to the j ≠ i term,
    whose weight is 1/n): compare on a latent space small enough to enumerate.
    """
    data = _data([seed], r=1, r_xi=1, d=4, kappa=1.0)
    G, (W_a, W_b) = initial_gram(data, 6)
    signs = sign_table(3)  # (z, ξ_A, ξ_B)
    z, xa, xb = signs[:, :1], signs[:, 1:2], signs[:, 2:3]
    x_a = z @ data.M_A[0].T + xa @ data.H_A[0].T
    x_b = z @ data.M_B[0].T + xb @ data.H_B[0].T
    h_a, h_b = x_a @ W_a[0].T, x_b @ W_b[0].T
    f_a = h_a / h_a.pow(2).sum(1).mean().sqrt()
    f_b = h_b / h_b.pow(2).sum(1).mean().sqrt()
    pop = float(population_loss(G, 1, 1, lam, beta)[0])
    if lam == 0:
        assert math.isclose(pop, float(non_contrastive_loss(f_a, f_b)), rel_tol=1e-9)
    else:
        s = beta * f_a @ f_b.T
        full = (torch.logsumexp(s, 1) - math.log(8)).mean() + (torch.logsumexp(s, 0) - math.log(8)).mean()
        ref = float(non_contrastive_loss(f_a, f_b)) + lam / beta * 0.5 * float(full)
        assert math.isclose(pop, ref, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isfinite(float(contrastive_loss(f_a, f_b, lam, beta)))


def test_gram_recursion_is_the_finite_width_learner():
    data = _data([0, 1])
    G0, (W_a, W_b) = initial_gram(data, 16)
    D = input_scales(data)
    kw = dict(lam=1.0, steps_stage1=6, steps_stage2=6, lr=1.0, record_every=3)
    t1, G_rec = gram_trajectory(G0, D, r=2, r_xi=2, **kw)
    t2, G_w, (W_a2, _) = train_population(W_a, W_b, data, **kw)
    assert list(t1) == list(t2) == [0, 3, 6, 9, 12]
    assert torch.allclose(G_rec, G_w, atol=1e-11)
    assert W_a2.shape == W_a.shape


def test_infinite_width_gram_is_the_limit_of_initial_gram():
    data = _data([3])
    G_inf = infinite_width_gram(data)
    assert torch.allclose(G_inf[0], torch.diag(input_scales(data)[0]) / data.d)
    errs = [float(tracking_error(initial_gram(data, m)[0], G_inf, 2, 2)) for m in (100, 10_000)]
    assert errs[1] < errs[0] / 4  # 1/sqrt(m): a factor 10 predicted


def test_infinite_width_dynamics_align_then_balance():
    data = _data([0], r=3, r_xi=2, kappa=4.0)
    D = input_scales(data)
    t, G = gram_trajectory(
        infinite_width_gram(data),
        D,
        r=3,
        r_xi=2,
        lam=1.0,
        steps_stage1=200,
        steps_stage2=200,
        lr=2.0,
        record_every=50,
    )
    Gn = normalized_gram(G, 3, 2)
    K = 5
    cos = (
        torch.diagonal(Gn[:, 0, :3, K : K + 3], dim1=-2, dim2=-1)
        / (
            torch.diagonal(Gn[:, 0, :3, :3], dim1=-2, dim2=-1)
            * torch.diagonal(Gn[:, 0, K : K + 3, K : K + 3], dim1=-2, dim2=-1)
        ).sqrt()
    )
    assert cos[list(t).index(200)].min() > 0.99
    cond = gram_condition_number(G, 3, 2)[:, 0]
    assert cond[0] == pytest.approx(4.0) and cond[-1] < 1.05
    nsr = gram_noise_to_signal(G, 3, 2)[:, 0]
    assert nsr[-1] < nsr[0]


def test_gram_step_and_bad_inputs():
    data = _data()
    G0, _ = initial_gram(data, 8)
    G1, loss = gram_step(G0, input_scales(data), 2, 2, 0.0, 1.0, 0.5)
    assert G1.shape == G0.shape and torch.allclose(G1, G1.transpose(-1, -2))
    assert loss.shape == (1,)
    with pytest.raises(ParameterError, match="G has shape"):
        population_loss(torch.zeros(3, 3), 2, 2, 0.0, 1.0)
    with pytest.raises(ParameterError, match="D has shape"):
        gram_trajectory(G0, torch.ones(3), r=2, r_xi=2, lam=0.0, steps_stage1=1, steps_stage2=0, lr=0.1)
    with pytest.raises(ParameterError, match="W_a"):
        train_population(
            torch.zeros(1, 4, 3), torch.zeros(1, 4, 3), data, lam=0.0, steps_stage1=1, steps_stage2=0, lr=0.1
        )
    with pytest.raises(NonFiniteError, match="non-finite"):
        gram_trajectory(
            G0 * float("nan"),
            input_scales(data),
            r=2,
            r_xi=2,
            lam=0.0,
            steps_stage1=1,
            steps_stage2=0,
            lr=0.1,
        )
