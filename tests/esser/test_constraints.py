"""Tests for nlcl.esser.constraints: projections, scaled loss (Prop. 3) and projected gradient descent."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.esser.collapse import init_two_layer
from nlcl.esser.constraints import (
    CONSTRAINTS,
    Trajectory,
    gradient_descent,
    grassmann_gradient,
    project,
    project_frobenius,
    project_operator,
    project_orthogonal,
    project_product_operator,
    projected_gradient_descent,
    random_semi_orthogonal,
    scaled_loss,
)
from nlcl.esser.losses import trace_loss

dims = st.tuples(st.integers(1, 4), st.integers(1, 12), st.integers(1, 5)).filter(lambda t: t[1] >= t[2])


def _randn(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@settings(max_examples=30)
@given(shape=dims, seed=st.integers(0, 10_000))
def test_orthogonality_after_a_step(shape, seed):
    """After a gradient step and the projection, WᵀW = 𝕀 to 1e-6 (the issue's requirement)."""
    W = random_semi_orthogonal(shape, generator=torch.Generator().manual_seed(seed))
    k = shape[-1]
    step = W - 0.3 * _randn(shape, seed + 1)
    P = project_orthogonal(step)
    assert torch.allclose(
        P.transpose(-1, -2) @ P, torch.eye(k, dtype=torch.float64).expand(shape[0], k, k), atol=1e-6
    )
    # the polar factor is the nearest orthonormal-column matrix: closer than the random start
    assert torch.all(torch.linalg.matrix_norm(P - step) <= torch.linalg.matrix_norm(W - step) + 1e-9)


@settings(max_examples=30)
@given(shape=dims, seed=st.integers(0, 10_000), c=st.floats(0.1, 3.0))
def test_norm_projections(shape, seed, c):
    W = 2 * _randn(shape, seed)
    F = project_frobenius(W, c)
    assert torch.all(torch.linalg.matrix_norm(F) <= c * (1 + 1e-12))
    O = project_operator(W, c)
    assert torch.all(torch.linalg.matrix_norm(O, ord=2) <= c * (1 + 1e-12))
    # idempotent, and feasible points are left alone
    assert torch.allclose(project_frobenius(F, c), F)
    assert torch.allclose(project_operator(O, c), O, atol=1e-10)


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), h=st.integers(1, 8), d=st.integers(1, 4), z=st.integers(1, 4))
def test_product_operator_projection(seed, h, d, z):
    W1, W2 = 2 * _randn((3, h, d), seed), 2 * _randn((3, h, z), seed + 1)
    P1, P2 = project_product_operator(W1, W2, 1.0)
    M = P2.transpose(-1, -2) @ P1
    assert torch.all(torch.linalg.matrix_norm(M, ord=2) <= 1 + 1e-9)
    # singular values ≤ 1 of the original product are kept
    s_old = torch.linalg.svdvals(W2.transpose(-1, -2) @ W1)
    s_new = torch.linalg.svdvals(M)
    assert torch.allclose(s_new, torch.clamp(s_old, max=1.0), atol=1e-9)


def test_project_dispatch_and_errors():
    W1, W2 = _randn((2, 6, 3), 0), _randn((2, 6, 2), 1)
    for c in CONSTRAINTS:
        a, b = project(W1, W2, c)
        assert a.shape == W1.shape and b.shape == W2.shape
    with pytest.raises(ValueError, match="constraint='spectral'"):
        project(W1, W2, "spectral")
    with pytest.raises(ValueError, match="c=-1"):
        project_frobenius(W1, -1)
    with pytest.raises(ValueError, match="rows >= columns"):
        project_orthogonal(_randn((2, 3), 0))
    with pytest.raises(ValueError, match="h >= k"):
        random_semi_orthogonal((2, 5))


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), a=st.floats(0.1, 10), b=st.floats(0.1, 10))
def test_scaled_loss_is_scale_invariant(seed, a, b):
    W1, W2 = _randn((2, 5, 3), seed), _randn((2, 5, 2), seed + 1)
    C = _randn((3, 3), seed + 2)
    assert torch.allclose(scaled_loss(a * W1, b * W2, C), scaled_loss(W1, W2, C))
    # on operator-norm-one weights the scaled loss is the loss
    n1 = torch.linalg.matrix_norm(W1, ord=2)[:, None, None]
    n2 = torch.linalg.matrix_norm(W2, ord=2)[:, None, None]
    assert torch.allclose(scaled_loss(W1, W2, C), trace_loss(W1 / n1, W2 / n2, C))


def test_grassmann_gradient_is_horizontal():
    W = random_semi_orthogonal((2, 7, 3), generator=torch.Generator().manual_seed(0))
    G = grassmann_gradient(W, _randn((2, 7, 3), 1))
    assert torch.allclose(W.transpose(-1, -2) @ G, torch.zeros(2, 3, 3, dtype=torch.float64), atol=1e-12)


def _sym(seed, d, shift=0.0):
    A = _randn((d, d), seed)
    return (A + A.T) / 2 + shift * torch.eye(d, dtype=torch.float64)


def test_orthogonal_training_reaches_optimum_and_keeps_constraint():
    """Prop. 3 (4): the optimum is the sum of the z most negative eigenvalues of C."""
    C = _sym(3, 5)
    lam = torch.linalg.eigvalsh(C)
    W1, W2 = init_two_layer(4, 8, 5, 2, generator=torch.Generator().manual_seed(0))
    traj = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C),
        W1,
        W2,
        constraint="orthogonal",
        lr=0.05,
        steps=3000,
        record_every=500,
    )
    assert isinstance(traj, Trajectory) and not traj.diverged.any()
    a, b = traj.params
    eye = torch.eye(5, dtype=torch.float64)
    assert torch.allclose(a.transpose(-1, -2) @ a, eye.expand(4, 5, 5), atol=1e-6)
    expected = float(lam[:2].clip(max=0).sum())
    assert np.allclose(traj.loss[-1], expected, atol=1e-6)
    assert traj.loss.shape == (len(traj.steps), 4)


def test_unconstrained_training_diverges_and_is_frozen():
    C = -torch.eye(2, dtype=torch.float64)
    W1, W2 = init_two_layer(3, 4, 2, 1, kind="gaussian", generator=torch.Generator().manual_seed(0))
    traj = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C), W1, W2, constraint="none", lr=0.1, steps=500, max_norm=1e3
    )
    assert traj.diverged.all()
    assert np.all(np.isfinite(traj.loss))


def test_nan_raises():
    W = torch.ones(2, 3, dtype=torch.float64)

    def loss(w):
        return (w * float("nan")).sum(dim=1)

    with pytest.raises(ValueError, match="loss became nan at step 0"):
        gradient_descent(loss, (W,), lr=0.1, steps=3)


def test_training_arguments_validated():
    W1, W2 = init_two_layer(1, 4, 2, 1)
    f = lambda a, b: trace_loss(a, b, torch.eye(2, dtype=torch.float64))  # noqa: E731
    with pytest.raises(ValueError, match="lr=-0.1"):
        projected_gradient_descent(f, W1, W2, constraint="none", lr=-0.1, steps=1)
    with pytest.raises(ValueError, match="gradient='grassmann' needs"):
        projected_gradient_descent(f, W1, W2, constraint="none", lr=0.1, steps=1, gradient="grassmann")
    with pytest.raises(ValueError, match="h >= d"):
        projected_gradient_descent(
            f,
            torch.zeros(1, 1, 2, dtype=torch.float64),
            torch.zeros(1, 1, 1, dtype=torch.float64),
            constraint="orthogonal",
            lr=0.1,
            steps=1,
        )
    with pytest.raises(ValueError, match="one loss per initialisation"):
        gradient_descent(lambda w: w.sum(), (torch.ones(2, 3),), lr=0.1, steps=1)


def test_deterministic():
    C = _sym(1, 3)
    runs = []
    for _ in range(2):
        W1, W2 = init_two_layer(2, 6, 3, 2, generator=torch.Generator().manual_seed(7))
        runs.append(
            projected_gradient_descent(
                lambda a, b: trace_loss(a, b, C), W1, W2, constraint="operator", lr=0.05, steps=50
            ).loss
        )
    assert np.array_equal(runs[0], runs[1])


def test_observe_records():
    C = _sym(1, 3)
    W1, W2 = init_two_layer(2, 6, 3, 1, generator=torch.Generator().manual_seed(7))
    traj = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C),
        W1,
        W2,
        constraint="orthogonal",
        lr=0.05,
        steps=10,
        record_every=5,
        observe=lambda a, b: b.transpose(-1, -2) @ a,
    )
    assert list(traj.steps) == [0, 5, 10]
    assert traj.observed.shape == (3, 2, 1, 3)


@pytest.mark.parametrize("constraint", ["operator", "product_operator", "frobenius"])
def test_norm_constrained_training_reaches_optimum(constraint):
    """Prop. 3 (2)-(3) reach Σ of the z most negative eigenvalues; Prop. 2 (Frobenius, c=1) reaches λ_min."""
    C = _sym(3, 5)
    lam = torch.linalg.eigvalsh(C)
    W1, W2 = init_two_layer(3, 8, 5, 2, generator=torch.Generator().manual_seed(0))
    traj = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C),
        W1,
        W2,
        constraint=constraint,
        lr=0.05,
        steps=3000,
        record_every=3000,
    )
    expected = float(lam[0]) if constraint == "frobenius" else float(lam[:2].clip(max=0).sum())
    assert np.allclose(traj.loss[-1], expected, rtol=1e-4)


def test_scaled_training_stays_above_optimum_and_descends():
    C = _sym(3, 5)
    lam = torch.linalg.eigvalsh(C)
    W1, W2 = init_two_layer(3, 8, 5, 2, generator=torch.Generator().manual_seed(0))
    traj = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C), W1, W2, constraint="scaled", lr=0.05, steps=500, record_every=50
    )
    optimum = float(lam[:2].clip(max=0).sum())
    assert traj.loss.min() >= optimum - 1e-9
    assert np.all(traj.loss[-1] < traj.loss[0])
