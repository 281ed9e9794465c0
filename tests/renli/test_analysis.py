"""Tests for nlcl.renli.analysis (the read-outs of book/renli-simulation.py) and for the Gram step
and trajectory loop that nlcl.renli.tracking and nlcl.renli.minibatch share."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import NonFiniteError, ParameterError
from nlcl.renli import analysis
from nlcl.renli.lemmas import binary_code_maps
from nlcl.renli.minibatch import gram_batch_trajectory, sample_signs
from nlcl.renli.model import make_data
from nlcl.renli.tracking import (
    gram_condition_number,
    gram_step,
    gram_trajectory,
    gram_update,
    infinite_width_gram,
    initial_gram,
    input_scales,
    iterate_gram,
    normalized_gram,
    stage_schedule,
)


def _history(cond, align, start=0):
    steps = np.arange(start, start + len(cond))
    return pd.DataFrame({"step": steps, "condition_number": cond, "alignment": align})


def test_ratio_after_alignment_and_steps_to_balance():
    g = _history([3.0, 2.0, 4.0, 5.0], [0.5, 0.96, 0.97, 0.99])
    assert analysis.ratio_after_alignment(g) == pytest.approx(5.0 / 2.0)
    assert math.isnan(analysis.ratio_after_alignment(_history([1.0, 2.0], [0.1, 0.2])))
    g2 = _history([3.0, 2.0, 1.4, 1.2], [1, 1, 1, 1], start=10)
    assert analysis.steps_to_balance(g2, 10) == 2.0
    assert analysis.steps_to_balance(g2, 10, threshold=1.0) == math.inf


@given(st.lists(st.floats(0, 10) | st.just(math.inf), min_size=1, max_size=6))
def test_non_increasing_is_the_order_with_ties_at_infinity(v):
    expected = all(b <= a for a, b in zip(v, v[1:]))
    assert analysis.non_increasing(v) is expected


def test_non_increasing_two_infinities_tie():
    assert analysis.non_increasing([math.inf, math.inf, 3.0])
    assert not analysis.non_increasing([2.0, math.inf])


def test_fraction_and_seed_values():
    assert analysis.fraction([]) == 1.0
    assert analysis.fraction(pd.Series([True, False, True, True])) == 0.75
    t = pd.DataFrame({"seed": [2, 0, 1], "x": [20.0, 0.0, 10.0]})
    assert analysis.seed_values(t, "x") == [0.0, 10.0, 20.0]


def test_simulation_configs_pairs_every_contrastive_run_with_a_non_contrastive_one():
    c = analysis.simulation_configs(
        [0, 1], [2.0, 4.0], [0.5, 1.0], [0.01, 0.05], kappa=4.0, lam=1.0, beta1=0.05, beta2=2.0
    )
    main = c[c.group == "main"]
    assert len(main) == 2 * 2 * 2 and set(main.lam) == {0.0, 1.0}
    assert list(c[c.group == "lambda"].lam) == [0.5, 0.5]
    assert list(c[c.group == "beta"].beta1) == [0.01, 0.01]
    assert (c.beta2 == 2.0).all()
    first = c.iloc[:2]
    assert list(first.method) == ["non-contrastive", "contrastive"] and first.kappa.nunique() == 1


def test_signal_cosines_are_one_for_identical_modalities():
    r, r_xi = 3, 2
    K = r + r_xi
    X = torch.randn(7, K, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    X = torch.cat([X, X], dim=1)  # B's columns equal A's
    cos = analysis.signal_cosines(normalized_gram(X.T @ X, r, r_xi), r, r_xi)
    assert cos.shape == (r,) and torch.allclose(cos, torch.ones(r, dtype=torch.float64))
    Xf = torch.cat([X[:, :K], -X[:, K:]], dim=1)
    assert torch.allclose(analysis.signal_cosines(normalized_gram(Xf.T @ Xf, r, r_xi), r, r_xi), -cos)


def test_loglog_slopes_and_spread():
    m = np.array([64.0, 256.0, 1024.0])
    table = pd.DataFrame({0: m**-0.5, 1: 3 * m**-0.25}, index=m)
    slopes = analysis.loglog_slopes(table)
    assert slopes == pytest.approx([-0.5, -0.25])
    assert analysis.slope_spread(slopes) == (
        "per seed: mean -0.38, range [-0.50, -0.25], 1/2 in [−0.7, −0.3]"
    )


def test_batch_stream_repeats_the_same_batch_for_every_copy():
    stream = analysis.batch_stream(5, 4, 3, n_seeds=2, r=2, r_xi=1)
    w_a, w_b = stream(0)
    assert w_a.shape == (6, 4, 3) and torch.equal(w_a[:2], w_a[2:4])
    again = sample_signs(2, 4, 2, 1, torch.Generator().manual_seed(5))
    assert torch.equal(w_a[:2], again[0]) and torch.equal(w_b[4:], again[1])


def test_example_state_is_aligned_and_unbalanced():
    maps = binary_code_maps(4, 2, 16)
    row, score, bal = analysis.example_state(maps, n=256, generator=torch.Generator().manual_seed(0))
    assert len(row) == 1 and row.stage.iloc[0] == "example"
    assert float(score) >= 0.9 and float(bal["srank"]) == pytest.approx(1.0, abs=0.01)


def _data():
    return make_data(8, 2, 2, 4.0, [0], nu=0.3, dtype=torch.float64)


def test_gram_update_is_the_gram_matrix_of_the_preconditioned_step():
    """TᵀGT with T = I − η(S + Sᵀ)D is the Gram matrix of X − ηX(S + Sᵀ)D."""
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(5, 4, dtype=torch.float64, generator=gen)
    S = torch.randn(4, 4, dtype=torch.float64, generator=gen)
    D = torch.rand(4, dtype=torch.float64, generator=gen)
    X1 = X - 0.1 * X @ (S + S.T) * D
    assert torch.allclose(gram_update(X.T @ X, D, S, 0.1), X1.T @ X1)


def test_gram_trajectory_is_the_iterated_gram_step():
    data = _data()
    G0, D = initial_gram(data, 16)[0], input_scales(data)
    beta_at = stage_schedule(3, 2, 0.05, 2.0)
    G, manual = G0, [G0]
    for t in range(5):
        G = gram_step(G, D, 2, 2, 1.0, beta_at(t), 0.5)[0]
        manual.append(G)
    steps, traj = gram_trajectory(
        G0, D, r=2, r_xi=2, lam=1.0, steps_stage1=3, steps_stage2=2, lr=0.5, record_every=1
    )
    assert list(steps) == [0, 1, 2, 3, 4, 5] and torch.equal(traj, torch.stack(manual))


def test_iterate_gram_records_the_boundaries_and_names_a_non_finite_step():
    G0 = torch.eye(2, dtype=torch.float64)
    steps, G = iterate_gram(G0, lambda G, t: G * 2, steps1=3, steps2=4, lr=0.1, record_every=5)
    assert list(steps) == [0, 3, 5, 7] and G[-1, 0, 0] == 2.0**7
    with pytest.raises(NonFiniteError, match="step 2 at lr=0.1"):
        iterate_gram(
            G0, lambda G, t: G * math.inf if t == 1 else G, steps1=2, steps2=0, lr=0.1, record_every=1
        )
    with pytest.raises(NonFiniteError, match="^kappa=16: the Gram recursion became non-finite at step 1"):
        iterate_gram(
            G0, lambda G, t: G * math.inf, steps1=2, steps2=0, lr=0.1, record_every=1, setting="kappa=16"
        )


@settings(max_examples=5)
@given(st.integers(0, 100))
def test_one_batch_of_every_latent_is_the_population_step(seed):
    """With lam = 0 the minibatch loss over every (z, ξ_A, ξ_B), each once, is the population loss:
    gram_batch_trajectory and gram_trajectory take the same steps through the shared loop."""
    data = make_data(8, 2, 2, 4.0, [seed], nu=0.3, dtype=torch.float64)
    G0, D = infinite_width_gram(data), input_scales(data)
    signs = torch.tensor(list(itertools.product([-1.0, 1.0], repeat=6)), dtype=torch.float64)
    z, xi_a, xi_b = signs[:, :2], signs[:, 2:4], signs[:, 4:]
    w_a, w_b = torch.cat([z, xi_a], 1)[None], torch.cat([z, xi_b], 1)[None]
    kw = dict(r=2, r_xi=2, lam=0.0, steps_stage1=3, steps_stage2=0, lr=0.5)
    _, Gb = gram_batch_trajectory(G0, D, lambda t: (w_a, w_b), **kw)
    _, Gp = gram_trajectory(G0, D, **kw)
    assert torch.allclose(Gb, Gp, rtol=1e-10, atol=1e-12)


def _stage1_frame():
    rows = []
    for seed in (0, 1):
        for step in (0, 10, 20):
            align = 0.5 if step == 0 else (0.97 if seed == 0 or step == 20 else 0.5)
            rows.append(
                dict(seed=seed, step=step, lam=0.0, beta1=0.01, alignment=align, condition_number=2.0)
            )
            rows.append(
                dict(seed=seed, step=step, lam=1.0, beta1=0.01, alignment=align, condition_number=3.0)
            )
    return pd.DataFrame(rows)


def test_condition_gap_table_and_alignment_gaps():
    s1 = _stage1_frame()
    piv = analysis.condition_gap_table(s1)
    assert list(piv.columns) == [(0.0, 0.01), (1.0, 0.01)] and piv.loc[(0, 10), (1.0, 0.01)] == 3.0
    at_align, at_end = analysis.alignment_gaps(s1, piv, lam=1.0, beta1=0.01, end=20)
    assert at_align == {0: 0.5, 1: 0.5} and at_end == {0: 0.5, 1: 0.5}


def test_stage2_times_counts_steps_to_the_threshold_and_infinity_when_never():
    rows = [
        dict(group="main", method="contrastive", seed=s, kappa=2.0, step=t, condition_number=c)
        for s, cs in ((0, [3.0, 2.0, 1.2, 1.1]), (1, [3.0, 2.0, 1.5, 1.4]))
        for t, c in zip((0, 10, 20, 30), cs)
    ]
    rows.append(dict(group="main", method="non-contrastive", seed=0, kappa=2.0, step=0, condition_number=9.0))
    out = analysis.stage2_times(pd.DataFrame(rows), start=10)
    assert list(out.steps_to_1_25) == [10.0, np.inf] and list(out.kappa_end_stage1) == [2.0, 2.0]
    assert list(out.kappa_final) == [1.1, 1.4]


def test_stage1_deviations_is_zero_against_itself_and_scales_with_the_gap():
    from types import SimpleNamespace

    runs = pd.DataFrame(
        [
            dict(seed=0, kappa=2.0, lam=0.0, method="non-contrastive", group="main", beta1=0.01),
            dict(seed=0, kappa=2.0, lam=1.0, method="contrastive", group="main", beta1=0.01),
            dict(seed=0, kappa=2.0, lam=1.0, method="contrastive", group="beta", beta1=0.05),
        ]
    )
    w0 = torch.zeros(3, 2, 2, dtype=torch.float64)
    w1 = torch.ones(3, 2, 2, dtype=torch.float64)
    w1[2] += 0.5
    hist = SimpleNamespace(runs=runs, W_A={"init": w0, "stage1": w1}, W_B={"init": w0, "stage1": w1})
    out = analysis.stage1_deviations(hist, kappa=2.0, lam=1.0)
    assert list(out.beta1) == [0.01, 0.05] and out.delta.iloc[0] == 0.0 and out.delta.iloc[1] == 0.5


def test_tracking_table_is_zero_where_a_width_equals_the_infinite_run():
    data = _data()
    G0 = infinite_width_gram(data)  # (1, 2K, 2K)
    T = 4
    G_all = G0.expand(T, 2, 1, *G0.shape[-2:]).clone()  # (T, 1 + one width, seeds, 2K, 2K)
    kappa_inf = gram_condition_number(G_all[:, 0], 2, 2)
    mask = torch.tensor([True, True, False, False])
    out = analysis.tracking_table(G_all, kappa_inf, [64], [0], mask, ~mask, 2, 2)
    assert out.to_dict("records") == [dict(m=64, seed=0, stage1=0.0, stage2=0.0, condition=0.0)]


def test_lemma_states_has_one_row_per_stage_and_run():
    data = _data()
    gen = torch.Generator().manual_seed(0)
    W = {
        k: torch.randn(1, 6, data.d, dtype=torch.float64, generator=gen) for k in ("init", "stage1", "final")
    }
    runs = pd.DataFrame([dict(method="contrastive", kappa=4.0, seed=0)])
    out = analysis.lemma_states(W, W, torch.tensor([0]), runs, data, n=64, generator=gen)
    assert list(out.stage) == ["init", "stage1", "final"] and out.kappa.ge(1.0).all()
    assert out.alignment.between(-1.0, 1.0).all() and out.holds_44.dtype == bool


def test_stage2_convergence_of_a_geometric_approach_is_linear():
    t = np.arange(80)
    kappa = np.stack([1 + 3 * 0.9**t, 1 + 5 * 0.8**t], axis=1)
    conv = analysis.stage2_convergence(kappa)
    assert conv.rate.tolist() == pytest.approx([-math.log(0.9), -math.log(0.8)])
    assert conv.r2.tolist() == pytest.approx([1.0, 1.0])
    assert conv.rate_ratio.tolist() == pytest.approx([1.0, 1.0])
    assert conv.max_factor.tolist() == pytest.approx([0.9, 0.8])
    # the window ends at the first step with κ − 1 below the floor
    assert conv.steps.tolist() == [int(np.argmax(3 * 0.9**t < 0.01)), int(np.argmax(5 * 0.8**t < 0.01))]


def test_stage2_convergence_tells_a_sublinear_approach():
    t = np.arange(400)
    conv = analysis.stage2_convergence((1 + 3 / (1 + 0.5 * t))[:, None], floor=0.02)
    assert conv.rate_ratio.iloc[0] < 0.2 and conv.max_factor.iloc[0] < 1
    assert conv.r2.iloc[0] < 0.95


def test_stage2_convergence_refuses_a_window_too_short_and_names_the_setting():
    with pytest.raises(ParameterError, match=r"^kappa=1: run 0 has κ\(U_A\) − 1 ≥ 0.01 for 0 steps"):
        analysis.stage2_convergence(np.ones((10, 1)), setting="kappa=1")
    with pytest.raises(ParameterError, match="expected"):
        analysis.stage2_convergence(np.ones(10))


def test_stage2_efold_fits_the_reached_runs_and_names_the_setting_when_none_did():
    table = pd.DataFrame(
        {
            "kappa_end_stage1": [2.0, 4.0, 8.0, 16.0],
            "steps_to_1_25": [10 + 30 * math.log(2), 10 + 30 * math.log(4), 10 + 30 * math.log(8), np.inf],
        }
    )
    cost, offset = analysis.stage2_efold(table)
    assert (cost, offset) == (pytest.approx(30.0), pytest.approx(10.0))
    table["steps_to_1_25"] = np.inf
    with pytest.raises(ParameterError, match=r"^lr=1e\+06: 0 of 4 contrastive main runs reached"):
        analysis.stage2_efold(table, setting="lr=1e+06")
