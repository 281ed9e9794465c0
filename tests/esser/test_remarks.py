"""Tests for nlcl.esser.remarks: InfoNCE / spectral losses, coupling, projector rate, p/q expectation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.esser.constraints import gradient_descent
from nlcl.esser.losses import loss_matrix, pair_matrix
from nlcl.esser.remarks import (
    expected_pair_matrix,
    gradient_coupling,
    infonce_loss,
    projector_collapse_rate,
    regression_decoupling,
    rowwise_training_gap,
    sample_pair_matrices,
    spectral_loss,
)


def _data(seed=0, n=12, d=2):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    return x, x + 0.3 * torch.randn(n, d, generator=g, dtype=torch.float64), x[torch.randperm(n, generator=g)]


def test_infonce_and_spectral_match_their_definitions():
    x, xp, xn = _data()
    theta = torch.randn(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    for s in range(2):
        u, up, un = x @ theta[s].T, xp @ theta[s].T, xn @ theta[s].T
        ref = np.mean(
            [-(u[i] @ up[i]) + math.log(sum(math.exp(u[i] @ up[j]) for j in range(12))) for i in range(12)]
        )
        assert math.isclose(float(infonce_loss(theta, x, xp)[s]), ref, rel_tol=1e-10)
        ref_s = float((-2 * (u * up).sum(1) + (u * un).sum(1) ** 2).mean())
        assert math.isclose(float(spectral_loss(theta, x, xp, xn)[s]), ref_s, rel_tol=1e-10)
    assert torch.allclose(
        infonce_loss(theta, x, xp, temperature=2.0), infonce_loss(theta / math.sqrt(2), x, xp)
    )


def test_eq1_decouples_spectral_couples():
    x, xp, xn = _data(2)
    C = loss_matrix(x, xp, xn, reduction="mean")
    theta0 = 0.1 * torch.randn(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    gap, joint, rows, seen = rowwise_training_gap(
        lambda t: ((t @ C) * t).sum((-2, -1)),
        theta0,
        lr=0.05,
        steps=30,
        observe=lambda t: t.norm(),
        record_every=10,
    )
    assert gap.max() < 1e-12 and joint.shape == rows.shape == theta0.shape
    assert seen.shape == (4,) and torch.isclose(seen[-1], joint.norm())
    gap_s, _, _, none = rowwise_training_gap(
        lambda t: spectral_loss(t, x, xp, xn), theta0, lr=0.05, steps=300
    )
    assert gap_s.min() > 0.05 and none is None
    assert gradient_coupling(lambda t: ((t @ C) * t).sum((-2, -1)), theta0).max() < 1e-12


def test_infonce_coupling_is_second_order_in_the_output_scale():
    """Remark 2: InfoNCE resembles (1) at small outputs; the coupling is O(‖Θ‖²)."""
    x, xp, _ = _data(4)
    theta = torch.randn(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    c = [gradient_coupling(lambda t: infonce_loss(t, x, xp), e * theta) for e in (1e-2, 1e-3)]
    ratio = (c[1] / c[0]).numpy()
    assert np.all((ratio > 0.005) & (ratio < 0.02))  # 100x predicted: slope 2


def test_projector_rate_predicts_gradient_descent():
    x, xp, xn = _data(6, n=40)
    C = loss_matrix(x, xp, xn, reduction="mean")
    if bool((torch.linalg.eigvalsh(C) >= 0).any()):
        pytest.skip("this draw has a non-negative eigenvalue")
    A = torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(7)) / math.sqrt(5)
    rate = projector_collapse_rate(A, C)
    lr, steps = 0.01, 1500
    assert projector_collapse_rate(A, C, lr=1e-7) == pytest.approx(rate, rel=1e-5)
    assert projector_collapse_rate(A, C, lr=lr) < rate
    traj = gradient_descent(
        lambda th: (((A @ th) @ C) * (A @ th)).sum((-2, -1)),
        (torch.randn(1, 5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(8)),),
        lr=lr,
        steps=steps,
        record_every=10,
        max_norm=1e300,
        observe=lambda th: (
            torch.linalg.svdvals(A @ th)[..., 1] ** 2 / torch.linalg.svdvals(A @ th)[..., 0] ** 2
        ),
    )
    ratio = traj.observed[:, 0].numpy()
    t = traj.steps * lr
    ok = (ratio > 1e-10) & (ratio < 1e-3)
    fitted = -np.polyfit(t[ok], np.log(ratio[ok]), 1)[0]
    assert abs(fitted - rate) / rate < 0.1


def test_projector_rate_bad_inputs():
    with pytest.raises(ParameterError, match="negative"):
        projector_collapse_rate(torch.eye(2), torch.eye(2))
    with pytest.raises(ParameterError, match="symmetric"):
        projector_collapse_rate(torch.eye(2), torch.zeros(3, 3))


@settings(max_examples=10)
@given(p=st.integers(1, 3), q=st.integers(1, 4), seed=st.integers(0, 1000))
def test_expected_pair_matrix_matches_monte_carlo(p, q, seed):
    mu = np.array([1.0, -0.5])

    def sampler(k, rng):
        return mu + rng.standard_normal((k, 2)) * np.array([1.0, 0.5])

    second = np.diag([1.0, 0.25]) + np.outer(mu, mu)
    E = expected_pair_matrix(mu, second, p=p, q=q, n=20)
    S = sample_pair_matrices(sampler, n=20, p=p, q=q, noise_var=0.2, reps=400, seed=seed)
    assert S.shape == (400, 2, 2)
    mean = S.mean(0)
    se = S.std(0) / math.sqrt(400)
    assert bool(((mean - E).abs() <= 5 * se + 1e-9).all())


def test_pair_matrix_with_p_and_q_is_the_trace_form():
    """The paper's C̃ for p positives and q negatives gives Tr(MC̃Mᵀ) = Σ_i u_iᵀ(Σ_j u_ij⁻ − Σ_j u_ij⁺)."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(5, 3, generator=g, dtype=torch.float64)
    pos, neg = (
        torch.randn(5, 2, 3, generator=g, dtype=torch.float64),
        torch.randn(5, 4, 3, generator=g, dtype=torch.float64),
    )
    M = torch.randn(2, 3, generator=g, dtype=torch.float64)
    direct = ((x @ M.T)[:, None] * ((neg @ M.T) - 0)).sum() - ((x @ M.T)[:, None] * (pos @ M.T)).sum()
    assert torch.allclose(torch.trace(M @ pair_matrix(x, pos, neg) @ M.T), direct)
    with pytest.raises(ParameterError, match="mean"):
        expected_pair_matrix([0.0, 1.0], np.eye(3))


def _regression(seed=0, n=10, h=16, z=3, S=2):
    g = torch.Generator().manual_seed(seed)
    x = torch.cat(
        [torch.randn(n, 2, generator=g, dtype=torch.float64), torch.ones(n, 1, dtype=torch.float64)], 1
    )
    y = torch.randn(n, z, generator=g, dtype=torch.float64)
    W = torch.randn(S, h, 3, generator=g, dtype=torch.float64)
    A = torch.randn(S, h, z, generator=g, dtype=torch.float64)
    return x, y, W, A


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), h=st.integers(2, 40), z=st.integers(1, 4))
def test_regression_output_layer_only_decouples_exactly(seed, h, z):
    # Remark 1 / Lemma 1, kernel case: with the features fixed, each column of A has its own dynamics
    x, y, W, A = _regression(seed, h=h, z=z)
    gap, joint, sep = regression_decoupling(x, y, W, A, lr=0.3, steps=30, train_hidden=False)
    assert float(gap.max()) <= 1e-12
    assert torch.allclose(joint, sep, rtol=0, atol=1e-12)


def test_regression_gap_is_zero_for_an_initialisation_with_all_features_dead():
    # seed 512, h=2: the second initialisation's ReLU features are all zero on x, so training
    # changes nothing; its gap was 0/0 = NaN (found by hypothesis), now 0
    x, y, W, A = _regression(512, h=2, z=1)
    assert float(torch.relu(x @ W[1].T).abs().max()) == 0.0
    gap, joint, sep = regression_decoupling(x, y, W, A, lr=0.3, steps=30, train_hidden=False)
    assert torch.isfinite(gap).all() and float(gap[1]) == 0.0


def test_regression_joint_run_is_gradient_descent_on_the_squared_loss():
    x, y, W, A = _regression(1)
    _, joint, _ = regression_decoupling(x, y, W, A, lr=0.2, steps=15)
    w, a = W.clone().requires_grad_(True), A.clone().requires_grad_(True)
    for _ in range(15):
        u = torch.relu(x @ w.transpose(-1, -2)) @ a / math.sqrt(W.shape[1])
        gw, ga = torch.autograd.grad(0.5 * ((u - y) ** 2).sum() / x.shape[0], (w, a))
        w, a = (w - 0.2 * gw).detach().requires_grad_(True), (a - 0.2 * ga).detach().requires_grad_(True)
    ref = torch.relu(x @ w.transpose(-1, -2)) @ a / math.sqrt(W.shape[1])
    assert torch.allclose(joint, ref.detach(), rtol=1e-10, atol=1e-12)


def test_regression_separate_runs_are_univariate_problems_and_couple_at_small_width():
    x, y, W, A = _regression(2, h=4)
    gap, joint, sep = regression_decoupling(x, y, W, A, lr=0.2, steps=20)
    for l in range(3):  # separate output l = the joint run of the one-output problem
        _, alone, _ = regression_decoupling(x, y[:, l : l + 1], W, A[:, :, l : l + 1], lr=0.2, steps=20)
        assert torch.allclose(sep[:, :, l], alone[:, :, 0], rtol=1e-12, atol=1e-12)
    assert float(gap.min()) > 1e-3  # a narrow network with a trained hidden layer couples its outputs


def test_regression_decoupling_bad_input():
    x, y, W, A = _regression()
    with pytest.raises(ParameterError, match="columns"):
        regression_decoupling(x, y[:, :2], W, A, lr=0.1, steps=1)
    with pytest.raises(ParameterError, match="W"):
        regression_decoupling(x, y, W[:, :, :2], A, lr=0.1, steps=1)
    with pytest.raises(ParameterError, match="lr"):
        regression_decoupling(x, y, W, A, lr=-1.0, steps=1)
