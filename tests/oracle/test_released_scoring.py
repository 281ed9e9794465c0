"""The literal re-implementation of the released ``check_result`` / ``compute_score`` (Tian 2023, Sec. 5)."""

import math

import pytest
import torch
from released_scoring import check_result, compute_score, symbol_freq


def test_symbol_freq_counts_tokens_per_location():
    counts = symbol_freq([[0, -1, 2], [0, 1, -1], [3, -1, 2]])
    assert counts[0] == {0: 2, 3: 1}
    assert counts[1] == {-1: 2, 1: 1}
    assert counts[2] == {2: 2, -1: 1}


def test_compute_score_is_the_top1_energy_ratio_with_the_released_denominator():
    w = torch.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    eps = max(4.0 / 1000, 1e-6)  # max |w| over the whole location, / 1000
    # token 0: filter 0 gives 3 / (5 + eps), filter 1 gives 0; token 2: 2 / (2 + eps)
    assert compute_score([0], w, False) == pytest.approx(3 / (5 + eps), rel=1e-6)
    assert compute_score([0, 2, -1], w, False) == pytest.approx((3 / (5 + eps) + 2 / (2 + eps)) / 2, rel=1e-6)


def test_compute_score_linear_takes_the_absolute_value():
    w = torch.tensor([[-1.0, 0.0], [0.2, 1.0]])
    assert compute_score([0], w, False) < 0.2
    assert compute_score([0], w, True) == pytest.approx(1 / (1 + 1e-3), rel=1e-6)


def test_a_decayed_filter_scores_far_below_its_cosine():
    # A filter whose norm is comparable to max|w| / 1000 has cosine 1 with token 1 but scores ~1/2.
    w = torch.tensor([[1.0, 0.0], [0.0, 1e-3]])
    assert compute_score([1], w, False) == pytest.approx(1e-3 / (1e-3 + 1e-3), rel=1e-5)


def test_check_result_scores_candidates_and_the_other_tokens():
    torch.manual_seed(0)
    d, K, M = 6, 3, 4
    weights = {f"w1.{k}.weight": torch.randn(M, d) for k in range(K)}
    dist = [[0, -1, 2], [1, 3, -1], [0, 3, 5]]
    res = check_result(weights, dist, d, is_linear=False)
    cands = {0: [0, 1], 1: [3], 2: [2, 5]}
    for k in range(K):
        w = weights[f"w1.{k}.weight"]
        cos = w / w.norm(dim=1, keepdim=True)
        others = [a for a in range(d) if a not in cands[k]]
        # Filters of comparable norm: the released score is the max cosine to within ~1e-3.
        assert res[f"loc{k}"] == pytest.approx(float(cos[:, cands[k]].max(0).values.mean()), abs=2e-3)
        assert res[f"loc_other{k}"] == pytest.approx(float(cos[:, others].max(0).values.mean()), abs=2e-3)
    assert res["loc_all"] == pytest.approx(sum(res[f"loc{k}"] for k in range(K)) / K, rel=1e-6)
    assert res["loc_other_all"] == pytest.approx(sum(res[f"loc_other{k}"] for k in range(K)) / K, rel=1e-6)
    assert all(math.isfinite(v) for v in res.values())


@pytest.mark.parametrize("linear", [False, True])
def test_nlcl_released_normaliser_equals_the_oracle(linear):
    """nlcl's ``matching_scores(..., normaliser="released")`` is the released check_result, here on
    filters with norms spread over four decades (some decayed to ~1e-3 of the largest)."""
    from nlcl.tian.tokens.metrics import matching_scores
    from nlcl.tian.tokens.world import make_token_worlds

    world = make_token_worlds([0, 1], [3, 5])
    g = torch.Generator().manual_seed(1)
    W = torch.randn(2, 10, 6, 20, generator=g, dtype=torch.float64)
    W = W * 10 ** (-4 * torch.rand(2, 10, 6, 1, generator=g, dtype=torch.float64))
    cp, cm = matching_scores(W, world, linear=linear, normaliser="released")
    for r in range(2):
        pats = [[int(a) for a in row] for row in world.generators[r].tolist()]
        res = check_result({f"w1.{k}.weight": W[r, k] for k in range(10)}, pats, 20, is_linear=linear)
        assert cp[r].item() == pytest.approx(res["loc_all"], abs=1e-6)
        assert cm[r].item() == pytest.approx(res["loc_other_all"], abs=1e-6)
