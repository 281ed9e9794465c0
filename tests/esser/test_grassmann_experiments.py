"""Tests for nlcl.esser.grassmann_experiments and nlcl.esser.grassmann_plots: the experiments of
book/esser-grassmann.py (Esser et al. 2024, Fig. 3, Theorem 3, Fig. 4)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from nlcl.core import plotting  # noqa: E402
from nlcl.esser.collapse import init_two_layer  # noqa: E402
from nlcl.esser.constraints import projected_gradient_descent  # noqa: E402
from nlcl.esser.grassmann import (  # noqa: E402
    discretized_dynamics,
    eigendecompose,
    integrate_output_ode,
    output_loss,
    outputs_on_eigenvectors,
)
from nlcl.esser.grassmann_experiments import (  # noqa: E402
    compare_flows,
    eta_limit,
    gd_step_timer,
    ode_step_timer,
    svm_accuracy,
    theorem3_diagnostics,
    theorem3_spectra,
    train_fig4_width,
)
from nlcl.esser.grassmann_plots import (  # noqa: E402
    fig3_panels,
    lemma2_panel,
    loglog_axes,
    theorem3_panels,
    timing_panel,
)
from nlcl.esser.losses import loss_matrix, make_pairs, trace_loss  # noqa: E402


@pytest.fixture(autouse=True)
def float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _problem(seed: int, n: int = 40, d: int = 2):
    gen = torch.Generator().manual_seed(seed)
    X = np.random.RandomState(seed).normal(size=(n, d))
    x, x_pos, x_neg = make_pairs(X, noise_var=0.1, generator=gen)
    C = loss_matrix(x, x_pos, x_neg, reduction="mean")
    lam, V = eigendecompose(C)
    return gen, x, C, lam, V


def test_compare_flows_is_the_chapters_computation():
    gen, _, C, lam, V = _problem(0)
    state = gen.get_state()
    out = compare_flows(6, C, lam, V, n_init=2, z=1, lr=0.01, steps=40, record_every=4, generator=gen)
    gen.set_state(state)
    W1, W2 = init_two_layer(2, 6, 2, 1, generator=gen)
    q0 = outputs_on_eigenvectors(W1, W2, V)
    t, q_ode = discretized_dynamics(q0, lam, lr=0.01, steps=40, record_every=4)
    _, q_fine = discretized_dynamics(q0, lam, lr=0.001, steps=400, record_every=40)
    gd = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C),
        W1,
        W2,
        constraint="orthogonal",
        lr=0.01,
        steps=40,
        record_every=4,
        observe=lambda a, b: outputs_on_eigenvectors(a, b, V),
    )
    assert np.array_equal(out["t"], t)
    assert torch.equal(out["q_ode"], q_ode)
    assert torch.equal(out["gd"].observed, gd.observed)
    gaps = out["gaps"]
    assert gaps["traj_gap"] == float(torch.linalg.matrix_norm(gd.observed - q_ode).max())
    assert gaps["richardson"] == float(torch.linalg.matrix_norm(q_ode - q_fine).max()) * 10 / 9
    assert gaps["final_gap"] == float(torch.linalg.matrix_norm(gd.observed[-1] - q_ode[-1]).max())
    assert set(gaps) == {
        "loss_gap", "traj_gap", "final_gap", "stiefel_gap", "variant_gap", "flows_gap",
        "solver_gap", "fine_gap", "richardson",
    }  # fmt: skip
    assert all(np.isfinite(v) and v >= 0 for v in gaps.values())
    assert torch.equal(out["init"][0], W1) and torch.equal(out["init"][1], W2)


def test_eta_limit_is_eq11_and_eq12_at_a_tenth_of_the_step():
    """eta_limit runs Eqs. 11-12 and the Stiefel Euler iteration with η/10 for 10× the steps from
    the given weights, recorded at the same times (Esser et al. 2024, Fig. 3 as η → 0)."""
    gen, _, C, lam, V = _problem(1)
    W1, W2 = init_two_layer(2, 5, 2, 1, generator=gen)
    out = eta_limit(W1, W2, C, lam, V, lr=0.02, steps=30, record_every=5)
    q0 = outputs_on_eigenvectors(W1, W2, V)
    _, q_ode = discretized_dynamics(q0, lam, lr=0.002, steps=300, record_every=50)
    _, q_stf = discretized_dynamics(q0, lam, lr=0.002, steps=300, record_every=50, metric="stiefel")
    gd = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C), W1, W2, constraint="orthogonal", lr=0.002, steps=300,
        record_every=50, observe=lambda a, b: outputs_on_eigenvectors(a, b, V),
    )  # fmt: skip
    assert out["gd_gap"] == float(torch.linalg.matrix_norm(gd.observed - q_ode).max())
    assert out["flows_gap"] == float(torch.linalg.matrix_norm(q_stf - q_ode).max())


def test_polar_gd_approaches_the_stiefel_flow_not_eq9_as_eta_shrinks():
    """With η/10, polar-projected GD is much closer to the Stiefel flow than the Stiefel flow is
    to Eq. 12 (the distance to Eq. 12 does not shrink with η): the chapter's derivation."""
    gen, _, C, lam, V = _problem(2)
    W1, W2 = init_two_layer(3, 6, 2, 1, generator=gen)
    coarse = eta_limit(W1, W2, C, lam, V, lr=0.01, steps=200, record_every=20)
    fine = eta_limit(W1, W2, C, lam, V, lr=0.001, steps=2000, record_every=200)
    assert abs(fine["gd_gap"] - fine["flows_gap"]) <= 0.2 * abs(coarse["gd_gap"] - coarse["flows_gap"]) + 1e-6
    assert fine["gd_gap"] >= 0.9 * coarse["gd_gap"] > 0.1  # the distance to Eq. 12 does not shrink


@settings(max_examples=10)
@given(seed=st.integers(0, 10_000))
def test_compare_flows_small_steps_track_each_other(seed):
    """With a small η, Eq. 12 and solve_ivp on Eq. 9 agree closely (Euler is first order), and
    Richardson's estimate is close to the solver distance (Esser et al. 2024, Eqs. 9, 12)."""
    gen, _, C, lam, V = _problem(seed)
    out = compare_flows(4, C, lam, V, n_init=2, z=1, lr=0.001, steps=200, record_every=20, generator=gen)
    g = out["gaps"]
    assert g["solver_gap"] <= 0.01
    assert g["fine_gap"] <= g["solver_gap"] + 1e-7
    assert abs(g["richardson"] - g["solver_gap"]) <= 0.2 * g["solver_gap"] + 1e-6


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 6))
def test_theorem3_spectra_signs_and_draws(seed, d):
    gen = torch.Generator().manual_seed(seed)
    spectra = theorem3_spectra(d, gen)
    a, b = spectra["A: Λ ≻ 0"], spectra["B: λ₁ < 0"]
    assert torch.all(a >= 0.5) and torch.all(a <= 2.0) and torch.all(a[1:] >= a[:-1])
    assert b[0] < 0 and torch.all(b[1:] >= b[:-1])
    ref = torch.Generator().manual_seed(seed)
    torch.rand(d, generator=ref)
    raw = torch.sort(torch.randn(d, generator=ref)).values
    assert torch.equal(b, raw if raw[0] < 0 else raw - raw[0] - 0.5)


@settings(max_examples=10)
@given(seed=st.integers(0, 10_000))
def test_theorem3_bound_is_an_upper_bound(seed):
    """The value that Eq. 9 reaches at t never exceeds the bound (Theorem 3, our derivation)."""
    gen = torch.Generator().manual_seed(seed)
    lam = theorem3_spectra(4, gen)["B: λ₁ < 0"]
    Wa, Wb = init_two_layer(5, 8, 4, 1, generator=gen)
    q0 = Wa.transpose(-1, -2) @ Wb
    t_end = 3.0
    diag = theorem3_diagnostics(q0, lam, t_end)
    end = integrate_output_ode(q0, lam, [0.0, t_end])[-1]
    e1 = torch.zeros(4)
    e1[0] = 1.0
    cos = (end[..., 0] @ e1).abs() / torch.linalg.vector_norm(end[..., 0], dim=-1)
    value = torch.minimum(cos, torch.linalg.matrix_norm(end)).min()
    assert float(value) <= diag["bound"] + 1e-6
    assert 0.0 <= diag["long"] <= 1.0 + 1e-9


def test_svm_accuracy_separable_and_random():
    rs = np.random.RandomState(0)
    labels = np.repeat([0, 1], 30)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    sep = torch.as_tensor(np.c_[labels * 10.0 + rs.normal(size=60), rs.normal(size=60)])
    assert svm_accuracy(sep, labels, cv) == 1.0
    assert 0.0 <= svm_accuracy(torch.as_tensor(rs.normal(size=(60, 2))), labels, cv) <= 1.0


def test_step_timers_run_the_same_steps():
    gen, _, C, lam, V = _problem(1, d=4)
    W1, W2 = init_two_layer(1, 8, 4, 2, generator=gen)
    q0 = outputs_on_eigenvectors(W1, W2, V)
    gd = gd_step_timer(W1, W2, C, lr=0.01, steps=3)()
    ref = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C), W1, W2, constraint="orthogonal", lr=0.01, steps=3,
        record_every=3,
    )  # fmt: skip
    assert np.array_equal(gd.loss, ref.loss)
    t, q = ode_step_timer(q0, lam, lr=0.01, steps=3)()
    t_ref, q_ref = discretized_dynamics(q0, lam, lr=0.01, steps=3, record_every=3)
    assert np.array_equal(t, t_ref) and torch.equal(q, q_ref)


def test_train_fig4_width():
    gen, x, C, lam, V = _problem(2, n=60, d=4)
    labels = np.repeat([0, 1], 30)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    row, timers = train_fig4_width(8, C, lam, V, x, labels, cv, d=4, z=2, lr=0.01, steps=50, generator=gen)
    assert set(row) == {"h", "acc_gd", "acc_ode", "loss_gd", "loss_ode"} and row["h"] == 8
    assert 0.0 <= row["acc_gd"] <= 1.0 and 0.0 <= row["acc_ode"] <= 1.0
    assert row["loss_ode"] >= float(lam[:2].sum()) - 1e-9  # the optimum of Tr(qᵀΛq), z = 2
    assert row["loss_gd"] >= float(lam[:2].sum()) - 1e-9
    assert set(timers) == {"gd", "ode"} and callable(timers["gd"])
    _, q = timers["ode"]()
    assert q.shape[-2:] == (4, 2)
    assert float(output_loss(q[-1, 0], lam)) >= float(lam[:2].sum()) - 1e-9


def test_plots_draw_labeled_axes():
    gen, _, C, lam, V = _problem(3)
    runs = {
        h: compare_flows(h, C, lam, V, n_init=2, z=1, lr=0.01, steps=20, record_every=5, generator=gen)
        for h in (4, 8)
    }
    fig, axes = plotting.subplots(1, 2)
    fig3_panels(axes[0], runs, 2, float(lam[0]))
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in axes[0])
    spectra = theorem3_spectra(3, gen)
    Wa, Wb = init_two_layer(2, 6, 3, 1, generator=gen)
    t = np.linspace(0, 1, 5)
    paths = {k: integrate_output_ode(Wa.transpose(-1, -2) @ Wb, v, t) for k, v in spectra.items()}
    fig, axes = plotting.subplots(1, 2)
    theorem3_panels(axes[0], paths, t, torch.eye(3)[0])
    assert all(ax.get_title() for ax in axes[0])
    fig, axes = plotting.subplots(1, 1)
    timings = pd.DataFrame({"repeat": [0, 0, 1, 1], "key": [64, 128] * 2, "seconds": [1.0, 2.0, 1.1, 2.1]})
    fig4 = pd.DataFrame({"h": [8, 16], "gd_time": [0.1, 0.2]})
    med = timing_panel(axes[0, 0], timings, fig4, [64, 128])
    assert list(med.index) == [64, 128] and axes[0, 0].get_xscale() == "log"
    fig, axes = plotting.subplots(1, 1)
    h = np.array([32.0, 128.0])
    lemma2_panel(axes[0, 0], h, np.ones((2, 5)), np.ones(2), np.ones(2))
    loglog_axes(axes[0, 0], "x", "y", y_log=False)
    assert axes[0, 0].get_yscale() == "linear" and axes[0, 0].get_xlabel() == "x"
    plt.close("all")
