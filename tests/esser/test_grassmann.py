"""Tests for nlcl.esser.grassmann: Theorem 2's output ODE (Eq. 9), its discretisation (Eq. 12), Theorem 3."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.esser.collapse import init_two_layer
from nlcl.esser.constraints import projected_gradient_descent
from nlcl.esser.grassmann import (
    METRICS,
    alignment,
    discretized_dynamics,
    eigendecompose,
    embed,
    integrate_output_ode,
    output_loss,
    output_ode_rhs,
    outputs_on_eigenvectors,
    theorem3_bounds,
)
from nlcl.esser.grassmann_experiments import check_euler_step, euler_step_limit
from nlcl.esser.losses import trace_loss


def _sym(seed, d):
    A = torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    return (A + A.T) / 2


def _sym_part(A):
    return (A + A.transpose(-1, -2)) / 2


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(1, 5),
    extra=st.integers(0, 5),
    z=st.integers(1, 3),
    metric=st.sampled_from(METRICS),
)
def test_rhs_matches_autograd_flow(seed, d, extra, z, metric):
    """Eq. 9 equals the output velocity of the weight flow Ẇ = −P(∇L) computed with autograd.

    grassmann: P(∇) = (𝕀 − WWᵀ)∇ (the paper's proof); stiefel: P(∇) = ∇ − W sym(Wᵀ∇).
    """
    h = max(d, z) + extra
    C = _sym(seed, d)
    lam, V = eigendecompose(C)
    W1, W2 = init_two_layer(2, h, d, z, generator=torch.Generator().manual_seed(seed + 1))
    W1r, W2r = W1.clone().requires_grad_(True), W2.clone().requires_grad_(True)
    g1, g2 = torch.autograd.grad(trace_loss(W1r, W2r, C).sum(), (W1r, W2r))

    def flow(W, g):
        if metric == "grassmann":
            return -(g - W @ (W.transpose(-1, -2) @ g))
        return -(g - W @ _sym_part(W.transpose(-1, -2) @ g))

    d1, d2 = flow(W1, g1), flow(W2, g2)
    qdot = V.T @ (d1.transpose(-1, -2) @ W2 + W1.transpose(-1, -2) @ d2)
    q = outputs_on_eigenvectors(W1, W2, V)
    assert torch.allclose(output_ode_rhs(q, lam, metric=metric), qdot, atol=1e-10)
    assert torch.allclose(output_loss(q, lam), trace_loss(W1, W2, C), atol=1e-10)


def test_theorem3_z1_form():
    """Eq. 10: for z = 1, q̊/2 = −(1 − qᵀq)Λq − (𝕀 − qqᵀ)Λq."""
    g = torch.Generator().manual_seed(0)
    lam = torch.randn(4, generator=g, dtype=torch.float64)
    q = torch.randn(4, 1, generator=g, dtype=torch.float64) * 0.4
    L = torch.diag(lam)
    expected = 2 * (-(1 - (q.T @ q)) * (L @ q) - (torch.eye(4, dtype=torch.float64) - q @ q.T) @ L @ q)
    assert torch.allclose(output_ode_rhs(q, lam), expected)


def test_discretisation_is_euler_and_converges_to_solver():
    C = _sym(4, 4)
    lam, V = eigendecompose(C)
    W1, W2 = init_two_layer(3, 9, 4, 2, generator=torch.Generator().manual_seed(2))
    q0 = outputs_on_eigenvectors(W1, W2, V)
    t, traj = discretized_dynamics(q0, lam, lr=1e-3, steps=2000, record_every=500)
    assert list(t) == [0, 500, 1000, 1500, 2000]
    assert torch.allclose(traj[1 - 1], q0)
    ode = integrate_output_ode(q0, lam, t * 1e-3)
    assert ode.shape == traj.shape
    assert torch.allclose(ode, traj, atol=5e-3)
    one = discretized_dynamics(q0, lam, lr=0.1, steps=1)[1][-1]
    assert torch.allclose(one, q0 + 0.1 * output_ode_rhs(q0, lam))


def test_projected_gd_follows_ode_for_small_steps():
    """GD + projection (Eq. 11) tracks Eq. 9 (grassmann gradient) / the stiefel ODE (Euclidean gradient)."""
    C = _sym(5, 3)
    lam, V = eigendecompose(C)
    W1, W2 = init_two_layer(2, 6, 3, 1, generator=torch.Generator().manual_seed(3))
    q0 = outputs_on_eigenvectors(W1, W2, V)
    lr, steps = 1e-3, 1000
    obs = lambda a, b: outputs_on_eigenvectors(a, b, V)  # noqa: E731
    for gradient, metric in (("grassmann", "grassmann"), ("euclidean", "stiefel")):
        traj = projected_gradient_descent(
            lambda a, b: trace_loss(a, b, C),
            W1,
            W2,
            constraint="orthogonal",
            lr=lr,
            steps=steps,
            gradient=gradient,
            observe=obs,
            record_every=steps,
        )
        ode = integrate_output_ode(q0, lam, [lr * steps], metric=metric)[-1]
        assert torch.allclose(traj.observed[-1], ode, atol=5e-3), (
            gradient,
            (traj.observed[-1] - ode).abs().max(),
        )


def test_theorem3_cases():
    g = torch.Generator().manual_seed(0)
    q0 = torch.randn(5, 3, 1, generator=g, dtype=torch.float64)
    q0 = 0.9 * q0 / torch.linalg.vector_norm(q0, dim=(-2, -1), keepdim=True)
    pos = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    end = integrate_output_ode(q0, pos, [0.0, 20.0])[-1]
    assert torch.all(torch.linalg.vector_norm(end, dim=(-2, -1)) < 1e-3)
    neg = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
    end = integrate_output_ode(q0, neg, [0.0, 20.0])[-1]
    assert torch.all(alignment(end, torch.tensor([1.0, 0, 0], dtype=torch.float64)) > 0.999)


@settings(max_examples=20)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 5),
    t=st.floats(0.1, 30.0),
    gap=st.floats(0.005, 1.0),
)
def test_theorem3_bounds_hold_along_the_flow(seed, d, t, gap):
    """Our derivation from Eq. 9 (z = 1): the solver's |cos(q(t), e₁)| lies between the bounds
    and |q(t)| below its bound, for spectra with a negative λ₁ (small gaps included)."""
    g = torch.Generator().manual_seed(seed)
    rest = torch.sort(torch.randn(d - 1, generator=g, dtype=torch.float64)).values
    lam1 = -0.05 - torch.rand(1, generator=g, dtype=torch.float64)
    lam = torch.cat([lam1, lam1 + gap + (rest - rest[0])])
    q0 = torch.randn(3, d, 1, generator=g, dtype=torch.float64)
    q0 = (
        q0
        / torch.linalg.matrix_norm(q0, keepdim=True)
        * torch.rand(3, 1, 1, generator=g, dtype=torch.float64)
    )
    end = integrate_output_ode(q0, lam, [0.0, t], rtol=1e-10, atol=1e-12)[-1]
    b = theorem3_bounds(q0, lam, t)
    e1 = torch.zeros(d, dtype=torch.float64)
    e1[0] = 1.0
    cos = alignment(end, e1)
    assert torch.all(b["cos_lower"] <= cos + 1e-6) and torch.all(cos <= b["cos_upper"] + 1e-6)
    assert torch.all(torch.linalg.matrix_norm(end) <= b["norm_upper"] + 1e-6)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 6), r=st.floats(0.05, 1.0))
def test_radial_and_rotation_parts_of_the_two_flows(seed, d, r):
    """z = 1: Eq. 9 and the Stiefel flow share the radial part −4(1 − |q|²) q qᵀΛq/|q|²; their
    rotations are −(4 − 2|q|²)PΛq and −(4 − |q|²)PΛq, P = 𝕀 − qqᵀ/|q|² (the book's Fig. 3 text)."""
    g = torch.Generator().manual_seed(seed)
    lam = torch.randn(d, generator=g, dtype=torch.float64)
    q = torch.randn(d, 1, generator=g, dtype=torch.float64)
    q = r * q / torch.linalg.matrix_norm(q)
    n2, qlq = float(q.T @ q), float(q.T @ torch.diag(lam) @ q)
    P = torch.eye(d, dtype=torch.float64) - q @ q.T / n2
    for metric, c in (("grassmann", 4 - 2 * n2), ("stiefel", 4 - n2)):
        v = output_ode_rhs(q, lam, metric=metric)
        assert torch.allclose(P @ v, -c * P @ (lam[:, None] * q), atol=1e-12)
        assert torch.allclose(v - P @ v, -4 * (1 - n2) * q * qlq / n2, atol=1e-12)


def test_theorem3_bounds_exact_cases():
    lam = torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64)
    on_e1 = torch.tensor([[0.3, 0.0, 0.0]], dtype=torch.float64)
    b = theorem3_bounds(on_e1, lam, 2.0)
    assert torch.allclose(b["cos_lower"], torch.ones(1, dtype=torch.float64))
    # on e₁ the norm follows the logistic law exactly: (|q|²)˙ = 8|λ₁| |q|²(1 − |q|²)
    exact = integrate_output_ode(on_e1[..., None], lam, [0.0, 2.0], rtol=1e-11, atol=1e-13)[-1, 0, 0, 0]
    assert float(b["norm_upper"][0]) == pytest.approx(float(exact), rel=1e-7)
    no_e1 = torch.tensor([0.0, 0.6, 0.0], dtype=torch.float64)
    assert float(theorem3_bounds(no_e1, lam, 5.0)["cos_upper"]) == 0.0
    with pytest.raises(ValueError, match="ascending"):
        theorem3_bounds(on_e1, torch.tensor([1.0, 0.0, 2.0]), 1.0)
    with pytest.raises(ValueError, match="<= 1"):
        theorem3_bounds(torch.ones(3), lam, 1.0)
    with pytest.raises(ValueError, match="t=-1"):
        theorem3_bounds(on_e1, lam, -1.0)


def test_embed_new_point():
    C = _sym(6, 3)
    lam, V = eigendecompose(C)
    W1, W2 = init_two_layer(1, 5, 3, 2, generator=torch.Generator().manual_seed(1))
    q = outputs_on_eigenvectors(W1, W2, V)
    x = torch.randn(4, 3, dtype=torch.float64)
    assert torch.allclose(embed(x, q, V), x @ (W2.transpose(-1, -2) @ W1).transpose(-1, -2))


def test_errors():
    with pytest.raises(ValueError, match="not symmetric"):
        eigendecompose(torch.tensor([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="lam has shape"):
        output_ode_rhs(torch.zeros(3, 1), torch.zeros(2))
    with pytest.raises(ValueError, match="metric='riemann'"):
        output_ode_rhs(torch.zeros(3, 1), torch.zeros(3), metric="riemann")
    with pytest.raises(ValueError, match="lr=0"):
        discretized_dynamics(torch.zeros(3, 1), torch.zeros(3), lr=0, steps=1)
    with pytest.raises(ValueError, match="non-finite at step"):
        discretized_dynamics(torch.ones(2, 1) * 10, torch.tensor([-100.0, 1.0]), lr=1.0, steps=50)
    with pytest.raises(ValueError, match="t_eval"):
        integrate_output_ode(torch.zeros(3, 1), torch.zeros(3), [1.0, 0.5])


@pytest.mark.parametrize(
    "lam, z",
    [
        ([-0.76, -0.15], 1),
        ([-5.8, -4.1, -3.3, -2.2, -0.3], 2),
        ([-1.0, -0.5, 0.2, 3.0], 1),
        ([0.5, 1.0, 2.0], 1),
    ],
)
def test_euler_step_limit_is_sharp(lam, z):
    """Eq. 12 converges to its limit just below euler_step_limit and does not just above it (the
    linearisation of Eq. 9 at its limit, Esser et al. 2024, Eqs. 9, 12)."""
    lam = torch.tensor(lam, dtype=torch.float64)
    bound = euler_step_limit(lam, z)
    d = lam.numel()
    q0 = torch.zeros(d, z, dtype=torch.float64)
    if lam[0] < 0:
        q0[:z, :z] = torch.eye(z)
    q0 += 0.01 * torch.randn(d, z, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    _, below = discretized_dynamics(q0, lam, lr=0.9 * bound, steps=3000)
    _, above = discretized_dynamics(q0, lam, lr=1.1 * bound, steps=3000)
    assert float(torch.linalg.matrix_norm(below[-1] - below[-2])) < 1e-10
    assert float(torch.linalg.matrix_norm(above[-1] - above[-2])) > 1e-2


def test_euler_step_limit_values_and_the_stop():
    lam = torch.tensor([-2.0, -1.0, 0.5])
    assert euler_step_limit(lam, 1) == pytest.approx(min(1 / 8, 1 / 2.5))
    assert euler_step_limit(torch.tensor([1.0, 4.0]), 1) == pytest.approx(1 / 8)
    assert euler_step_limit(torch.tensor([-1.0, -1.0]), 2) == pytest.approx(1 / 4)
    assert check_euler_step(0.1, lam, 1, data="C") == pytest.approx(1 / 8)
    with pytest.raises(ValueError, match=r"lr=0\.2 is too large for Eq\. 12 on the test C"):
        check_euler_step(0.2, lam, 1, data="the test C")
