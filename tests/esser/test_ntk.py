"""Tests for nlcl.esser.ntk: the two-layer ReLU NTK, Eq. 5's output dynamics and Lemma 1's sweep."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.func import jacrev

from nlcl.core.blocks import axis_blocks
from nlcl.core.validate import NonFiniteError, ParameterError
from nlcl.esser.ntk import (
    empirical_ntk,
    growth_rate,
    init_ntk_network,
    kernel_output_dynamics,
    lemma1_sweep,
    network_output,
    ntk_block_statistics,
    relu_ntk,
    ssl_quadratic_form,
    train_network_outputs,
)


def _points(seed, n=6, d=3):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), h=st.integers(1, 9), z=st.integers(1, 3))
def test_empirical_ntk_is_the_gradient_inner_product(seed, h, z):
    """Θ_lj(x, x') = ⟨∇u_l(x), ∇u_j(x')⟩ over (W, A), against autograd Jacobians (Eq. 3)."""
    x = _points(seed, 4, 3)
    W, A = init_ntk_network(2, h, 3, z, generator=torch.Generator().manual_seed(seed + 1))
    theta = empirical_ntk(x, x, W, A)
    for s in range(2):
        jw, ja = jacrev(lambda w, a: network_output(x, w[None], a[None])[0], argnums=(0, 1))(W[s], A[s])
        J = torch.cat([jw.reshape(4, z, -1), ja.reshape(4, z, -1)], dim=-1)
        ref = torch.einsum("alp,bjp->ljab", J, J)
        assert torch.allclose(theta[s], ref, atol=1e-10)


def test_relu_ntk_is_the_infinite_width_limit():
    x = _points(0, 5, 3)
    K = relu_ntk(x, x)
    W, A = init_ntk_network(1, 200_000, 3, 1, generator=torch.Generator().manual_seed(1), dtype=torch.float32)
    emp = empirical_ntk(x.float(), x.float(), W, A)[0, 0, 0].double()
    assert torch.linalg.matrix_norm(emp - K) / torch.linalg.matrix_norm(K) < 0.02
    assert torch.allclose(K, K.T)
    assert torch.linalg.eigvalsh(K).min() > -1e-10
    assert torch.allclose(torch.diagonal(K), (x * x).sum(1))  # θ = 0: ‖x‖²/2 + ‖x‖²/2
    assert relu_ntk(torch.zeros(1, 3), x).abs().max() == 0


def test_off_diagonal_blocks_shrink_like_one_over_root_width():
    x = _points(2, 6, 3)
    K = relu_ntk(x, x)
    offs = []
    for h in (400, 6400):
        W, A = init_ntk_network(8, h, 3, 2, generator=torch.Generator().manual_seed(h))
        offs.append(float(ntk_block_statistics(empirical_ntk(x, x, W, A), K)[0].mean()))
    assert 0.1 < offs[1] / offs[0] < 0.5  # 16x the width: 1/4 predicted


def test_ssl_quadratic_form_matches_the_losses():
    perm = torch.tensor([2, 0, 1, 3])
    u = torch.randn(8, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    x, xp = u[:4], u[4:]
    con = (x * (x[perm] - xp)).sum() / 4
    non = -(x * xp).sum()
    B = ssl_quadratic_form(perm)
    assert torch.allclose(torch.einsum("nl,nm,ml->", u, B, u), con)
    B2 = ssl_quadratic_form(perm, loss="non_contrastive", reduction="sum")
    assert torch.allclose(torch.einsum("nl,nm,ml->", u, B2, u), non)
    assert torch.allclose(B, B.T)
    with pytest.raises(ParameterError, match="perm"):
        ssl_quadratic_form([0, 0, 1])


def test_network_step_is_eq5_with_the_empirical_kernel():
    """One small gradient step changes the outputs by −2η Σ_j Θ_lj B u_j (Eq. 5), to O(η²)."""
    P = _points(3, 6, 3)
    B = ssl_quadratic_form(torch.tensor([1, 2, 0]))
    W, A = init_ntk_network(2, 50, 3, 2, generator=torch.Generator().manual_seed(4))
    lr = 1e-6
    _, u = train_network_outputs(P, B, W, A, lr=lr, steps=1)
    theta = empirical_ntk(P, P, W, A)
    pred = -2 * torch.einsum("sljnm,mk,skj->snl", theta, B, u[0])
    assert torch.allclose((u[1] - u[0]) / lr, pred, rtol=1e-4, atol=1e-6)


def test_kernel_dynamics_and_growth_rate():
    P = _points(5, 6, 3)
    B = ssl_quadratic_form(torch.tensor([1, 2, 0]))
    K = relu_ntk(P, P)
    g = growth_rate(K, B)
    ev = torch.linalg.eigvals(-2 * K @ B).real
    assert math.isclose(g, float(ev.max()), rel_tol=1e-8)
    u0 = torch.randn(2, 6, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    t, u = kernel_output_dynamics(K, B, u0, lr=0.01, steps=10, record_every=5)
    assert list(t) == [0, 5, 10]
    step = torch.eye(6, dtype=torch.float64) - 0.02 * K @ B
    assert torch.allclose(u[-1], torch.linalg.matrix_power(step, 10) @ u0)
    with pytest.raises(ParameterError, match="u0"):
        kernel_output_dynamics(K, B, torch.zeros(5, 2), lr=0.1, steps=1)


def test_wide_network_follows_the_kernel_better_than_a_narrow_one():
    P = _points(6, 8, 3)
    B = ssl_quadratic_form(torch.tensor([1, 2, 3, 0]))
    K = relu_ntk(P, P)
    T = 1.0 / growth_rate(K, B)
    kernel, dyn = lemma1_sweep(P, B, widths=[64, 4096], n_init=3, z=2, lr=T / 50, steps=50, record_every=10)
    assert set(kernel.columns) == {"h", "init", "off", "diag"}
    err = dyn.groupby("h").error.max()
    assert err[4096] < err[64] / 3
    assert (dyn[dyn.step == 0].error < 1e-12).all()


def test_bad_inputs():
    with pytest.raises(ParameterError, match="W"):
        network_output(_points(0), torch.zeros(1, 4, 3), torch.zeros(2, 4, 1))
    with pytest.raises(ParameterError, match="widths"):
        lemma1_sweep(_points(0), torch.eye(6), widths=[], n_init=1, z=1, lr=0.1, steps=1)
    with pytest.raises(ParameterError, match="theta"):
        ntk_block_statistics(torch.zeros(2, 2, 2), torch.zeros(2, 2))
    with pytest.raises(NonFiniteError, match="non-finite"):
        P = _points(7, 4, 3)
        B = ssl_quadratic_form(torch.tensor([1, 0]))
        W, A = init_ntk_network(1, 16, 3, 1, generator=torch.Generator().manual_seed(0))
        train_network_outputs(P, B, W, A, lr=1.0, steps=100, record_every=10)


def test_mark_keeps_a_diverged_network_and_leaves_the_others_unchanged():
    P = _points(7, 4, 3)
    B = ssl_quadratic_form(torch.tensor([1, 0]))
    gen = torch.Generator().manual_seed(0)
    W_bad, A_bad = init_ntk_network(1, 16, 3, 1, generator=gen)  # blows up at lr = 1 (test_bad_inputs)
    W_ok, A_ok = W_bad / 100, A_bad / 100  # tiny weights: the outputs stay finite
    W, A = torch.cat([W_ok, W_bad]), torch.cat([A_ok, A_bad])
    t, u, diverged_at = train_network_outputs(
        P, B, W, A, lr=1.0, steps=100, record_every=10, on_nonfinite="mark"
    )
    t_ok, u_ok = train_network_outputs(P, B, W_ok, A_ok, lr=1.0, steps=100, record_every=10)
    assert diverged_at[0] == -1 and 0 < diverged_at[1] <= 100
    assert torch.equal(u[:, 0], u_ok[:, 0]) and (t == t_ok).all()
    after = t >= diverged_at[1]
    assert torch.isinf(u[after, 1]).all() and torch.isfinite(u[~after, 1]).all()
    with pytest.raises(ParameterError, match="on_nonfinite"):
        train_network_outputs(P, B, W, A, lr=1.0, steps=1, on_nonfinite="drop")


def test_sweep_records_a_diverged_network_as_infinitely_far():
    P = _points(7, 4, 3)
    B = ssl_quadratic_form(torch.tensor([1, 0]))
    _, dyn = lemma1_sweep(P, B, widths=[16], n_init=3, z=1, lr=1.0, steps=100, record_every=10)
    assert dyn.diverged.any()  # not dropped: every network keeps its rows
    assert len(dyn) == 3 * 11
    last = dyn[dyn.step == 100].set_index("init")
    assert (last.error[last.diverged] == float("inf")).all()


@pytest.mark.parametrize("block_elements", [1, 24, 100])
def test_blocked_training_equals_the_unblocked_computation(monkeypatch, block_elements):
    """Hidden units in blocks (HIDDEN_BLOCK_ELEMENTS) give the one-block result up to rounding,
    including a network that diverges (marked at the same step) beside one that does not."""
    import nlcl.esser.ntk as ntk_module

    P = _points(7, 4, 3)
    B = ssl_quadratic_form(torch.tensor([1, 0]))
    W_bad, A_bad = init_ntk_network(1, 16, 3, 1, generator=torch.Generator().manual_seed(0))
    W, A = torch.cat([W_bad / 100, W_bad]), torch.cat([A_bad / 100, A_bad])
    kw = dict(lr=1.0, steps=100, record_every=10, on_nonfinite="mark")
    monkeypatch.setattr(ntk_module, "HIDDEN_BLOCK_ELEMENTS", 1 << 30)
    assert len(axis_blocks(16, 2 * 8, ntk_module.HIDDEN_BLOCK_ELEMENTS)) == 1
    t1, u1, d1 = train_network_outputs(P, B, W, A, **kw)
    monkeypatch.setattr(ntk_module, "HIDDEN_BLOCK_ELEMENTS", block_elements)
    assert len(axis_blocks(16, 2 * 8, ntk_module.HIDDEN_BLOCK_ELEMENTS)) > 1
    tb, ub, db = train_network_outputs(P, B, W, A, **kw)
    assert (t1 == tb).all() and (d1 == db).all() and d1[1] > 0
    assert torch.equal(torch.isinf(u1), torch.isinf(ub))
    finite = torch.isfinite(u1)
    assert torch.allclose(u1[finite], ub[finite], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("block_elements", [1 << 30, 40])
def test_training_equals_autograd_gradient_descent(monkeypatch, block_elements):
    """The closed-form step (blocked or not) is gradient descent on L = Σ_l u_lᵀBu_l computed by
    autograd through network_output: float64 outputs agree to 1e-10 over 30 steps."""
    import nlcl.esser.ntk as ntk_module

    monkeypatch.setattr(ntk_module, "HIDDEN_BLOCK_ELEMENTS", block_elements)
    P = _points(3, 8, 3)
    B = ssl_quadratic_form(torch.tensor([2, 0, 3, 1]))
    W, A = init_ntk_network(2, 32, 3, 2, generator=torch.Generator().manual_seed(4))
    t, u = train_network_outputs(P, B, W, A, lr=0.05, steps=30, record_every=10)
    w, a, ref = W.clone(), A.clone(), [network_output(P, W, A)]
    for step in range(1, 31):
        w.requires_grad_(True), a.requires_grad_(True)
        out = network_output(P, w, a)
        gw, ga = torch.autograd.grad(torch.einsum("snl,nm,sml->", out, B, out), (w, a))
        w, a = (w - 0.05 * gw).detach(), (a - 0.05 * ga).detach()
        if step % 10 == 0:
            ref.append(network_output(P, w, a))
    assert list(t) == [0, 10, 20, 30]
    assert torch.allclose(u, torch.stack(ref), rtol=1e-10, atol=1e-12)
