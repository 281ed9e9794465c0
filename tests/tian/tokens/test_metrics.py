"""Tests for nlcl.tian.tokens.metrics (Tian 2023, Eqs. 16 and 181; Table 1)."""

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.tokens.metrics import (
    NORMALISERS,
    PAPER_TABLE1,
    candidates_captured,
    filter_token_cosines,
    matching_scores,
    paper_table1,
    summarize,
)
from nlcl.tian.tokens.world import make_token_worlds


def _perfect_filters(world, M):
    """One filter per relevant token (e_a), the rest zero: χ̄+ = 1, χ̄− = 0."""
    R, K, n = world.n_runs, world.K, world.n_tokens
    W = torch.zeros(R, K, M, n, dtype=torch.float64)
    for r in range(R):
        for k in range(K):
            toks = torch.nonzero(world.relevant[r, k]).flatten()
            W[r, k, torch.arange(len(toks)), toks] = 1.0
    return W


def test_perfect_filters_score_one_and_zero():
    w = make_token_worlds([0, 1], [3, 5], [1.0, 10.0])
    W = _perfect_filters(w, 5)
    cp, cm = matching_scores(W, w)
    assert torch.allclose(cp, torch.ones(2, dtype=torch.float64))
    assert torch.allclose(cm, torch.zeros(2, dtype=torch.float64))


def test_linear_uses_absolute_cosine():
    w = make_token_worlds([0], 3)
    W = -_perfect_filters(w, 3)
    assert matching_scores(W, w, linear=False)[0].item() == pytest.approx(0.0, abs=1e-12)
    assert matching_scores(W, w, linear=True)[0].item() == pytest.approx(1.0)


@settings(max_examples=20)
@given(st.integers(0, 1000), st.floats(0.1, 10.0), st.floats(0.2, 5.0))
def test_scores_are_scale_invariant_and_bounded(seed, scale, zeta):
    w = make_token_worlds([seed], 3, zeta)
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(1, 10, 4, 20, generator=g, dtype=torch.float64)
    cp, cm = matching_scores(W, w)
    cp2, cm2 = matching_scores(W * scale, w)
    assert torch.allclose(cp, cp2) and torch.allclose(cm, cm2)
    assert -1 <= cp.item() <= 1 and -1 <= cm.item() <= 1


def test_cosines_shape_and_zero_filter():
    W = torch.zeros(2, 3, 4, 5)
    W[0, 0, 0, 1] = 2.0
    c = filter_token_cosines(W, torch.eye(5))
    assert c.shape == (2, 3, 4, 5)
    assert c[0, 0, 0, 1] == pytest.approx(1.0) and c[1].abs().max() == 0


def test_released_normaliser_drops_decayed_filters():
    """The released compute_score divides by ‖w‖ + max|w|/1000: a filter ~1000× smaller than the
    RF's largest weight scores about half its cosine (bn_gen.py, check_result)."""
    assert NORMALISERS == ("cosine", "released")
    W = torch.zeros(1, 1, 2, 3, dtype=torch.float64)
    W[0, 0, 0, 0] = 1.0
    W[0, 0, 1, 2] = 1e-3
    cos = filter_token_cosines(W, torch.eye(3))
    rel = filter_token_cosines(W, torch.eye(3), normaliser="released")
    assert cos[0, 0, 1, 2] == pytest.approx(1.0)
    assert rel[0, 0, 1, 2] == pytest.approx(0.5)
    assert rel[0, 0, 0, 0] == pytest.approx(1 / 1.001)
    # filters of comparable norms: the two normalisers agree to ~1e-3, and both ignore ζ
    w = make_token_worlds([0], 3, 5.0)
    W = torch.randn(1, 10, 4, 20, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    a, b = matching_scores(W, w), matching_scores(W, w, normaliser="released")
    assert torch.allclose(a[0], b[0], atol=3e-3) and torch.allclose(a[1], b[1], atol=3e-3)
    with pytest.raises(ValueError, match="normaliser"):
        filter_token_cosines(W[0], torch.eye(20), normaliser="l1")


def test_shape_errors():
    w = make_token_worlds([0], 3)
    with pytest.raises(ValueError, match="W has shape"):
        matching_scores(torch.zeros(2, 10, 3, 20), w)
    with pytest.raises(ValueError, match="embedding"):
        filter_token_cosines(torch.zeros(1, 2, 3, 4), torch.zeros(1, 5, 5))


def test_paper_table1_and_summarize():
    t = paper_table1()
    assert len(t) == 64 and set(t.bn) == {"detached", "var", "mean", "vanilla"}
    assert PAPER_TABLE1[(10, 5)]["detached"] == (0.98, 0.02)
    s = summarize(t.rename(columns={"paper_mean": "chi_plus", "paper_std": "chi_minus"}), ["bn"])
    assert set(s.columns) >= {"bn", "chi_plus_mean", "chi_plus_std", "n"} and (s.n == 16).all()
    with pytest.raises(ValueError, match="column"):
        summarize(t, ["nope"])


def _grid_table(values, **fixed):
    """Rows (beta, P, seed) with chi_plus from values[(beta, P)] (and chi_minus = 0.1)."""
    rows = []
    for (b, p), v in values.items():
        for s in (0, 1):
            rows.append(dict(beta=b, P=p, seed=s, chi_plus=v, chi_minus=0.1, **fixed))
    return pd.DataFrame(rows)


def test_grid_predicates_on_a_constructed_grid():
    from nlcl.tian.tokens.metrics import grid_predicates

    cells = [(1, 1), (1, 3), (5, 1), (5, 3)]
    relu = {(1, 1): 0.5, (1, 3): 0.4, (5, 1): 0.6, (5, 3): 0.9}
    lin = {(1, 1): 0.7, (1, 3): 0.5, (5, 1): 0.7, (5, 3): 0.45}
    fig9 = pd.concat([_grid_table(relu, activation="relu"), _grid_table(lin, activation="linear")])
    fig9.loc[fig9.activation == "linear", "chi_minus"] = 0.3
    fig10 = _grid_table({c: v - 0.1 for c, v in relu.items()}, activation="relu")
    fig11 = pd.concat(
        [
            _grid_table({c: 0.5 for c in cells}, bn="none", zeta=10.0),
            _grid_table({c: 0.7 for c in cells}, bn="vanilla", zeta=10.0),
        ]
    )
    table1 = pd.concat(
        [
            _grid_table({c: v for c in cells}, bn=bn, zeta=10.0)
            for bn, v in (("detached", 0.8), ("var", 0.6), ("mean", 0.5), ("vanilla", 0.5))
        ]
    )
    out = grid_predicates(fig9, fig10, fig11, table1)
    assert out["p1_linear_minus_relu"] == pytest.approx(0.2)
    assert out["relu_beats_linear"] == 1.0  # the one cell with β ≥ 2, P > 1
    assert out["relu_beta_span"] == pytest.approx(0.5) and out["linear_beta_span"] == pytest.approx(0.05)
    assert out["linear_beta_span_signed"] == pytest.approx(-0.05)  # 0.5 at β = 1, 0.45 at β = 5
    assert out["infonce_minus_quadratic"] == pytest.approx(0.1)
    assert out["lowest_chi_minus"] == "relu" and out["relu_chi_minus_rank"] == 1  # 0.1 against 0.3
    assert out["bn_minus_none_zeta10"] == pytest.approx(0.2)
    assert out["no_var_backprop_wins"] == 1.0  # 0.8 ≥ 0.6 and 0.5 ≥ 0.5
    paper = paper_table1().set_index(["beta", "P", "bn"]).paper_mean
    want = np.mean(
        [
            abs({"detached": 0.8, "var": 0.6, "mean": 0.5, "vanilla": 0.5}[bn] - paper[(b, p, bn)])
            for b, p in cells
            for bn in ("detached", "var", "mean", "vanilla")
        ]
    )
    assert out["table1_vs_paper"] == pytest.approx(want)
    signed = np.mean(
        [
            {"detached": 0.8, "var": 0.6, "mean": 0.5, "vanilla": 0.5}[bn] - paper[(b, p, bn)]
            for b, p in cells
            for bn in ("detached", "var", "mean", "vanilla")
        ]
    )
    assert out["table1_minus_paper"] == pytest.approx(signed)


def test_grid_predicates_missing_cells_give_nan():
    from nlcl.tian.tokens.metrics import grid_predicates

    fig9 = _grid_table({(1, 1): 0.5}, activation="relu")
    empty = fig9.iloc[:0].assign(bn="none", zeta=10.0)
    out = grid_predicates(fig9, fig9, empty, empty)
    assert np.isnan(out["p1_linear_minus_relu"]) and np.isnan(out["bn_minus_none_zeta10"])
    assert np.isnan(out["no_var_backprop_wins"]) and np.isnan(out["table1_vs_paper"])
    assert np.isnan(out["table1_minus_paper"]) and np.isnan(out["linear_beta_span_signed"])
    assert out["relu_chi_minus_rank"] == 1  # the only activation present


def test_relu_chi_minus_rank_counts_from_the_lowest():
    from nlcl.tian.tokens.metrics import grid_predicates

    fig9 = pd.concat(
        [
            _grid_table({(1, 1): 0.5}, activation=a).assign(chi_minus=cm)
            for a, cm in (("relu", 0.2), ("leaky_relu", 0.1), ("linear", 0.3))
        ]
    )
    empty = fig9.iloc[:0].assign(bn="none", zeta=10.0)
    out = grid_predicates(fig9, fig9, empty, empty)
    assert out["lowest_chi_minus"] == "leaky_relu" and out["relu_chi_minus_rank"] == 2
    out = grid_predicates(*(fig9[fig9.activation != "relu"],) * 2, empty, empty)
    assert out["relu_chi_minus_rank"] == 0


def test_grid_predicates_per_seed_is_grid_predicates_of_each_seed():
    from nlcl.tian.tokens.metrics import grid_predicates, grid_predicates_per_seed

    rng = np.random.default_rng(0)
    cells = [(1, 1), (1, 3), (5, 1), (5, 3)]

    def table(**fixed):
        t = _grid_table({c: 0.5 for c in cells}, **fixed)
        t["chi_plus"] = rng.uniform(0, 1, len(t))
        t["chi_minus"] = rng.uniform(0, 0.5, len(t))
        return t

    fig9 = pd.concat([table(activation=a) for a in ("relu", "linear", "leaky_relu")])
    fig10 = table(activation="relu")
    fig11 = pd.concat([table(bn=b, zeta=10.0) for b in ("none", "vanilla")])
    table1 = pd.concat([table(bn=b, zeta=10.0) for b in ("detached", "var", "mean", "vanilla")])
    per = grid_predicates_per_seed(fig9, fig10, fig11, table1)
    assert per.index.tolist() == [0, 1] and per.index.name == "seed"
    for s in (0, 1):
        want = grid_predicates(*(t[t.seed == s] for t in (fig9, fig10, fig11, table1)))
        got = per.loc[s].to_dict()
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == v or (isinstance(v, float) and np.isnan(v) and np.isnan(got[k]))
    # Seeds present in every non-empty table only; an empty table stays empty.
    empty = fig11.iloc[:0]
    per = grid_predicates_per_seed(fig9, fig10[fig10.seed == 1], empty, empty)
    assert per.index.tolist() == [1] and np.isnan(per.loc[1, "bn_minus_none_zeta10"])
    assert grid_predicates_per_seed(fig9.iloc[:0], empty, empty, empty).empty


@settings(max_examples=20)
@given(st.integers(0, 1000), st.sampled_from([1, 3, 5, 10]))
def test_printed_prefactor_is_the_sum_over_p(seed, P):
    """prefactor='1/P' (Eqs. 16 and 181 as printed): the per-RF sum over the set divided by P, i.e.
    the mean times |set| / P in every RF."""
    w = make_token_worlds([seed], P)
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(1, 10, 2 * P, 20, generator=g, dtype=torch.float64)
    best = filter_token_cosines(W, w.embedding(dtype=torch.float64)).max(dim=2).values[0]  # (K, n)
    rel = w.relevant[0]
    plus = torch.stack([best[k][rel[k]].sum() / P for k in range(10)]).mean()
    minus = torch.stack([best[k][~rel[k]].sum() / P for k in range(10)]).mean()
    cp, cm = matching_scores(W, w, prefactor="1/P")
    assert cp.item() == pytest.approx(plus.item()) and cm.item() == pytest.approx(minus.item())
    with pytest.raises(ParameterError, match="prefactor='sum'"):
        matching_scores(W, w, prefactor="sum")


def test_candidates_captured_reads_fig5():
    """One filter per candidate: every candidate captured (share 1, weakest match 1); one filter
    spread equally over an RF's candidates captures none (cos = 1/√|R_k^g| ≤ 1/√2), though each is
    its top token; a negated filter is captured only with |cos| (linear)."""
    w = make_token_worlds([0, 1], 3)
    W = _perfect_filters(w, 4)
    share, weakest = candidates_captured(W, w)
    assert share.tolist() == [1.0, 1.0] and torch.allclose(weakest, torch.ones(2, dtype=torch.float64))
    spread = torch.zeros_like(W)
    spread[:, :, 0] = w.relevant.double() / w.relevant.double().sum(-1, keepdim=True).sqrt()
    share_s, weakest_s = candidates_captured(spread, w)
    assert share_s.tolist() == [0.0, 0.0]
    assert torch.all(weakest_s <= 2**-0.5 + 1e-12)
    assert candidates_captured(-W, w)[0].tolist() == [0.0, 0.0]
    assert candidates_captured(-W, w, linear=True)[0].tolist() == [1.0, 1.0]
    with pytest.raises(ParameterError, match="W has shape"):
        candidates_captured(W[:, :5], w)


def test_candidates_captured_counts_each_pair_once():
    """A second filter on the same candidate adds nothing; dropping one candidate's filter removes
    exactly that pair from the share."""
    w = make_token_worlds([3], 3)
    W = _perfect_filters(w, 6)
    n = int(w.relevant.sum())
    W2 = W.clone()
    W2[:, :, 3:6] = W[:, :, 0:3]
    assert candidates_captured(W2, w)[0].item() == pytest.approx(1.0)
    W3 = W.clone()
    W3[0, 0, 0] = 0.0
    assert candidates_captured(W3, w)[0].item() == pytest.approx((n - 1) / n)
