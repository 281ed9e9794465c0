"""Tests for nlcl.tian.two_layer_study: the experiments of the chapter tian-two-layer-theory
(Tian 2023, Theorem 4, Eqs. 146-150, Corollary 3 with one and two views, Eqs. 156-157)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.basin_probability import eq156_lower_bound
from nlcl.tian.two_layer_study import (
    TWO_VIEW_COLUMNS,
    bn_scale_gap,
    corollary3_seed,
    critical_path_norms,
    eq146_runs,
    eq156_157_violations,
    eq156_test_eps,
    fails_at_smallest_gaps,
    filter_gradient,
    nearest_critical_point,
    per_view_closer,
    same_rf_pair_cos,
    speed_ratio,
    top_direction,
    two_view_parts,
    two_view_seed,
    winner_rule_agreement,
)
from nlcl.tian.two_layer_theory import binary_latent_tokens, hidden_two_layer


@pytest.fixture(autouse=True)
def _float64():
    """The chapter computes in float64 (torch.set_default_dtype); so do these tests."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _one_hot_views(n: int, K: int, d: int, seed: int) -> torch.Tensor:
    """Stacked views (2n, K, d) of one-hot tokens, as in the token task (each x_k sums to 1)."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(d, (2 * n, K), generator=g)
    return torch.nn.functional.one_hot(tokens, d).to(torch.float64)


@settings(max_examples=10)
@given(st.integers(0, 10**6))
def test_linear_filter_gradients_are_colinear_within_an_rf(seed):
    """Theorem 4 (1), Eq. 14: with V = sᵀ and linear h, ẇ_km = s_km b_k, for any s."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(16, 3, 5, generator=g)
    W = torch.randn(3, 4, 5, generator=g)
    s = torch.randn(12, generator=g)
    cos = same_rf_pair_cos(filter_gradient(W, x, "linear", s))
    assert cos.shape == (3 * 6,)
    assert torch.allclose(cos, torch.ones_like(cos), atol=1e-9)


def test_relu_filter_gradients_are_not_all_colinear():
    x = torch.randn(64, 3, 5, generator=torch.Generator().manual_seed(1))
    W = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(2))
    cos = same_rf_pair_cos(filter_gradient(W, x, "relu", top_direction(W, x, "relu")))
    assert cos.median() < 0.99


def test_top_direction_is_a_unit_eigenvector():
    x = torch.randn(32, 2, 4, generator=torch.Generator().manual_seed(3))
    W = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(4))
    s = top_direction(W, x, "relu")
    assert s.shape == (6,) and torch.isclose(s.norm(), torch.tensor(1.0))


def test_same_rf_pair_cos_refuses_one_filter():
    with pytest.raises(ParameterError, match="M ≥ 2"):
        same_rf_pair_cos(torch.randn(3, 1, 4))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_critical_point_is_critical_with_mean_output_one(seed):
    """Theorem 4 (2): on one-hot tokens critical points with mean output 1 exist; the least-squares
    point is one of them (gradient ≈ 0 relative to a random point's) and its path to identical
    filters stays critical."""
    K, d = 3, 4
    x = _one_hot_views(64, K, d, seed)
    g = torch.Generator().manual_seed(100 + seed)
    s = torch.repeat_interleave(torch.rand(K, generator=g) + 0.5, 2)
    s = s / s.norm()
    W_init = torch.randn(K, 2, d, generator=g)
    W_star = nearest_critical_point(W_init, s, x)
    out = hidden_two_layer(W_star, x, "linear") @ s
    assert torch.isclose(out.mean(), torch.tensor(1.0), atol=1e-8)
    ref = filter_gradient(torch.randn(K, 2, d, generator=g), x, "linear", s).norm()
    W_same = W_star.mean(1, keepdim=True).expand(-1, 2, -1)
    cs = torch.linspace(0, 1, 5)
    path = critical_path_norms(W_star, W_same, x, "linear", s, cs, ref)
    assert path.shape == (5,) and float(path.max()) < 1e-8
    assert torch.equal(path[-1], filter_gradient(W_star, x, "linear", s).norm() / ref)


def test_nearest_critical_point_needs_two_filters_per_rf():
    with pytest.raises(ParameterError, match=r"\(K, 2, d\)"):
        nearest_critical_point(torch.randn(3, 3, 4), torch.ones(9), torch.randn(8, 3, 4))


def test_eq146_runs_match_the_closed_form():
    """Eq. 150: the blow-up time t* = ln(1 + b/y(0))/b; Fig. 7: y → −b from y(0) < 0."""
    err, neg, curves = eq146_runs([0.5, 1.5], [0.2, 1.0], [-0.5, -2.0])
    assert len(err) == 4 and max(err) < 1e-3
    assert len(neg) == 4 and max(neg) < 1e-6
    assert sorted(curves) == [-2.0, -0.5, 0.2, 1.0]


@pytest.mark.parametrize("bad", [dict(b_grid=[0.0]), dict(y_pos=[-0.1]), dict(y_neg=[0.1])])
def test_eq146_runs_refuses_bad_grids(bad):
    args = dict(b_grid=[1.0], y_pos=[0.5], y_neg=[-0.5]) | bad
    with pytest.raises(ParameterError, match="eq146_runs"):
        eq146_runs(**args)


def test_winner_rule_agreement_counts_and_ratios():
    frac, miss, hit = winner_rule_agreement(20, seed=7)
    assert 0.0 <= frac <= 1.0
    assert all(r >= 1.0 for r in miss + hit)
    assert len(miss) + len(hit) <= 3 * 20
    assert winner_rule_agreement(20, seed=7) == (frac, miss, hit)


@settings(max_examples=50)
@given(st.lists(st.tuples(st.floats(-1, 1), st.booleans()), min_size=1, max_size=8))
def test_fails_at_smallest_gaps_is_its_definition(pairs):
    gaps, ok = [g for g, _ in pairs], [o for _, o in pairs]
    bad = [g for g, o in pairs if not o]
    good = [g for g, o in pairs if o]
    expected = len(bad) > 0 and all(b < g for b in bad for g in good)
    assert fails_at_smallest_gaps(gaps, ok) is expected


def test_fails_at_smallest_gaps_examples_and_errors():
    assert fails_at_smallest_gaps([0.01, 0.2, 0.3], [False, True, True]) is True
    assert fails_at_smallest_gaps([0.3, 0.2, 0.01], [False, True, True]) is False
    assert fails_at_smallest_gaps([0.1, 0.2], [True, True]) is False
    with pytest.raises(ParameterError, match="one per seed"):
        fails_at_smallest_gaps([0.1, 0.2], [True])


def test_corollary3_seed_part1_is_nonnegative_and_bn_is_scale_free():
    """Corollary 3 (1): λ^bn ≥ max_k d_k^bn for any sample moments; BatchNorm makes the speeds
    scale-free up to its ε (Tian 2023, App. D)."""
    g = torch.Generator().manual_seed(5)
    scales = [0.1, 1.0, 3.0, 10.0]
    x, z = binary_latent_tokens(4000, 4, 6, generator=g, scales=scales)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g), dim=-1)
    p1, p2, p3 = corollary3_seed(x, z, W, "relu")
    assert p1 >= 0 and 0 <= p2 <= 1 + 1e-12 and p3 >= 0
    x_unit = x / torch.as_tensor(scales)[None, :, None]
    assert bn_scale_gap(W, x, x_unit, "relu", 1e-12) < 1e-5 < bn_scale_gap(W, x, x_unit, "relu", 1e-3)


def test_two_view_seed_row_and_draw_order():
    """One data seed of the two-view experiment: the table's columns; views of gain 2 make the
    pooled variance differ from the first view's; the same generator state gives the same row."""
    scales = [0.1, 1.0, 3.0, 10.0]
    row, no_bn, sig = two_view_seed(torch.Generator().manual_seed(9), 3000, scales, "relu")
    assert tuple(row) == TWO_VIEW_COLUMNS
    assert all(np.isfinite(v) for v in row.values()) and np.isfinite(no_bn)
    assert sig > 0.5
    again, _, _ = two_view_seed(torch.Generator().manual_seed(9), 3000, scales, "relu")
    assert again == row


def test_two_view_parts_keys():
    from nlcl.tian.two_view_bn import two_view_binary_tokens

    g = torch.Generator().manual_seed(11)
    x, z = two_view_binary_tokens(2000, 4, 6, generator=g, scales=[1.0, 1.0, 2.0, 0.5], gain=2.0)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g), dim=-1)
    for pooled in (True, False):
        parts = two_view_parts(x, z, W, "relu", pooled)
        assert set(parts) == {"p1", "p2", "p3", "share"} and parts["share"] >= 0


def test_two_view_parts_exchangeable_views_have_no_view_term():
    """With exchangeable views (gain 1, Lemma 2's Eqs. 35-37) pooled moments leave no view-dependent
    mean, so the view term's share is sampling noise; with gain 2 it is not."""
    from nlcl.tian.two_view_bn import two_view_binary_tokens

    share = {}
    for gain in (1.0, 2.0):
        g = torch.Generator().manual_seed(13)
        x, z = two_view_binary_tokens(4000, 4, 6, generator=g, scales=[1.0, 1.0, 2.0, 0.5], gain=gain)
        W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g), dim=-1)
        share[gain] = two_view_parts(x, z, W, "relu", True)["share"]
    assert share[1.0] < 0.1 * share[2.0]


def test_per_view_closer_examples():
    assert per_view_closer([0.9, 0.8], [0.3, 0.4], [0.99, 0.95], [0.1, 0.2]) is True
    assert per_view_closer([0.9, 0.8], [0.3, 0.4], [0.99, 0.7], [0.1, 0.2]) is False
    assert per_view_closer([0.9], [0.3], [0.99], [0.3]) is False


@settings(max_examples=20)
@given(st.integers(0, 10**6))
def test_eq156_test_eps_has_the_designed_top_gaps(seed):
    gaps = (0.1, 0.6, 1.8)
    eps = eq156_test_eps(np.random.default_rng(seed), gaps)
    assert eps.shape == (23, 8)
    top = np.sort(eps[20:], axis=1)
    np.testing.assert_allclose(top[:, -1] - top[:, -2], gaps, atol=1e-12)
    np.testing.assert_allclose(2 * eq156_lower_bound(eps[20:]), gaps, atol=1e-12)


def test_eq156_157_violations_capped_bound_holds():
    """Eq. 157 and the capped form min(gap, 1)/2 of Eq. 156 hold within Monte Carlo noise; Eq. 156
    itself fails for a top gap above 1 (the finding of the chapter)."""
    rng = np.random.default_rng(3)
    out = eq156_157_violations(eq156_test_eps(rng), 20_000, rng)
    assert set(out) == {"eq156", "eq157", "worst_small_gap", "worst_capped"}
    assert out["eq157"] <= 5 and out["worst_capped"] <= 5 and out["worst_small_gap"] <= 5
    assert out["eq156"] > 5


def test_speed_ratio_is_slowest_over_fastest():
    from nlcl.tian.two_view_bn import two_view_binary_tokens, two_view_velocity

    gen = torch.Generator().manual_seed(0)
    x, _ = two_view_binary_tokens(64, 4, 6, generator=gen, scales=[1.0, 2.0, 3.0, 4.0], gain=2.0)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=gen, dtype=x.dtype), dim=-1)
    for bn in (None, "pooled", "view"):
        r = speed_ratio(x, W, "relu", bn)
        speeds = two_view_velocity(W, x, "relu", bn=bn)[0].norm(dim=-1)
        assert 0.0 < r <= 1.0 and r == pytest.approx(float(speeds.min() / speeds.max()), rel=1e-12)
