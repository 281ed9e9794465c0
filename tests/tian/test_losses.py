"""Tests for nlcl.tian.losses (Tian 2023, Eq. 1 and the α-CL form, Eqs. 2-3)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.tian import losses
from nlcl.tian.contrastive import energy, half_sq_dists, infonce_alpha, stack_views
from nlcl.tian.losses import LOSSES, alpha_cl_loss, contrastive_loss, get_loss, info_nce, quadratic_loss


def reference_info_nce(f1, f2, tau, eps):
    """Eq. 1 literally: -τ Σ_i log(e^{-d_i²/τ} / (ε e^{-d_i²/τ} + Σ_{j≠i} e^{-d_ij²/τ}))."""
    n = f1.shape[0]
    total = 0.0
    for i in range(n):
        di = 0.5 * np.sum((f1[i] - f2[i]) ** 2)
        den = eps * np.exp(-di / tau) + sum(
            np.exp(-0.5 * np.sum((f1[i] - f1[j]) ** 2) / tau) for j in range(n) if j != i
        )
        total += -tau * np.log(np.exp(-di / tau) / den)
    return total


@given(
    st.integers(2, 6),
    st.integers(1, 4),
    st.floats(0.1, 3),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.integers(0, 10**6),
)
@settings(max_examples=40)
def test_info_nce_matches_eq1(n, d, tau, eps, seed):
    f1, f2 = np.random.default_rng(seed).standard_normal((2, n, d))
    np.testing.assert_allclose(
        info_nce(f1, f2, tau, eps), reference_info_nce(f1, f2, tau, eps), rtol=1e-9, atol=1e-9
    )
    np.testing.assert_allclose(
        info_nce(f1, f2, tau, eps, reduction="mean"),
        reference_info_nce(f1, f2, tau, eps) / n,
        rtol=1e-9,
        atol=1e-9,
    )


@given(st.integers(2, 8), st.floats(0.1, 2), st.sampled_from([0.0, 0.3, 1.0]), st.integers(0, 10**6))
@settings(max_examples=25)
def test_info_nce_gradient_identity(n, tau, eps, seed):
    """Sec. 2: with α = sg(α_infonce), ∇_θ InfoNCE = -∇_θ Σ_i Σ_{j≠i} α_ij (d²_ij - d²_i), for a random net."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3)).double()
    x = torch.randn(2, n, 5, dtype=torch.float64)
    f1, f2 = net(x[0]), net(x[1])
    g1 = torch.autograd.grad(info_nce(f1, f2, tau, eps), list(net.parameters()), retain_graph=True)
    alpha = infonce_alpha(f1, f2, tau, eps)  # detached: stop-gradient
    d_ij, d_i = half_sq_dists(f1), 0.5 * ((f1 - f2) ** 2).sum(-1)
    surrogate = -(alpha * (d_ij - d_i[:, None])).sum()
    g2 = torch.autograd.grad(surrogate, list(net.parameters()), retain_graph=True)
    g3 = torch.autograd.grad(alpha_cl_loss(f1, f2, alpha), list(net.parameters()))
    for a, b, c in zip(g1, g2, g3):
        torch.testing.assert_close(a, b, rtol=1e-9, atol=1e-11)
        torch.testing.assert_close(a, c, rtol=1e-9, atol=1e-11)


def test_alpha_cl_loss_is_minus_2n2_energy():
    rng = np.random.default_rng(0)
    f1, f2 = rng.standard_normal((2, 5, 3))
    alpha = rng.random((5, 5))
    np.testing.assert_allclose(alpha_cl_loss(f1, f2, alpha), -2 * 25 * energy(stack_views(f1, f2), alpha))
    np.testing.assert_allclose(quadratic_loss(f1, f2), alpha_cl_loss(f1, f2, 1 - np.eye(5)), rtol=1e-12)
    d_ij, d_i = half_sq_dists(f1), 0.5 * ((f1 - f2) ** 2).sum(-1)
    ref = sum(d_i[i] - d_ij[i, j] for i in range(5) for j in range(5) if j != i)
    np.testing.assert_allclose(quadratic_loss(f1, f2), ref, rtol=1e-12)


def test_leading_batch_dims():
    rng = np.random.default_rng(1)
    f1, f2 = torch.tensor(rng.standard_normal((2, 3, 4, 6, 2)))
    out = info_nce(f1, f2, 0.5, 0.1)
    assert out.shape == (3, 4)
    torch.testing.assert_close(out[2, 1], info_nce(f1[2, 1], f2[2, 1], 0.5, 0.1))
    q = quadratic_loss(f1, f2, reduction="mean")
    assert q.shape == (3, 4)
    torch.testing.assert_close(q[0, 3], quadratic_loss(f1[0, 3], f2[0, 3]) / 6)


def test_bad_input():
    f = np.zeros((4, 2))
    with pytest.raises(ValueError, match="tau must be"):
        info_nce(f, f, 0.0)
    with pytest.raises(ValueError, match="eps must be"):
        info_nce(f, f, 1.0, eps=-0.1)
    with pytest.raises(ValueError, match="reduction='max' is not allowed; choose one of: 'sum', 'mean'"):
        info_nce(f, f, 1.0, reduction="max")
    with pytest.raises(ValueError, match="same|shape"):
        info_nce(f, np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="N >= 2"):
        quadratic_loss(np.zeros((1, 2)), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="not finite"):
        info_nce(np.full((3, 2), np.nan), np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="unknown loss 'foo'; allowed: infonce, quadratic"):
        get_loss("foo")
    assert LOSSES == ("infonce", "quadratic") and get_loss("infonce") is info_nce


# contrastive_loss: the batched released-code form, equal to Eq. 1 (ε = 1) and the quadratic loss


def _unit(R, N, d, g):
    return torch.nn.functional.normalize(torch.randn(R, N, d, generator=g, dtype=torch.float64), dim=-1)


@settings(max_examples=20)
@given(st.integers(1, 3), st.integers(2, 12), st.integers(1, 6), st.floats(0.05, 2.0), st.integers(0, 10**6))
def test_infonce_equals_eq1_with_eps_one(R, N, d, tau, seed):
    g = torch.Generator().manual_seed(seed)
    f1, f2 = _unit(R, N, d, g), _unit(R, N, d, g)
    ours = contrastive_loss(f1, f2, "infonce", tau)
    ref = losses.info_nce(f1, f2, tau, eps=1.0, reduction="mean") / tau
    assert torch.allclose(ours, ref, atol=1e-10)


@settings(max_examples=20)
@given(st.integers(1, 3), st.integers(2, 12), st.integers(1, 6), st.floats(0.05, 2.0), st.integers(0, 10**6))
def test_quadratic_equals_uniform_alpha_loss(R, N, d, tau, seed):
    g = torch.Generator().manual_seed(seed)
    f1, f2 = _unit(R, N, d, g), _unit(R, N, d, g)
    ours = contrastive_loss(f1, f2, "quadratic", tau)
    pos = (f1 * f2).sum((-1, -2))
    ref = (losses.quadratic_loss(f1, f2) - pos) / (N * N * tau)
    assert torch.allclose(ours, ref, atol=1e-10)


def test_per_run_tau():
    g = torch.Generator().manual_seed(0)
    f1, f2 = _unit(2, 5, 3, g), _unit(2, 5, 3, g)
    both = contrastive_loss(f1, f2, "infonce", torch.tensor([0.1, 0.5], dtype=torch.float64))
    assert torch.allclose(both[1], contrastive_loss(f1[1:], f2[1:], "infonce", 0.5)[0])
