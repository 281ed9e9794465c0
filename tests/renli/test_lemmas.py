"""Tests for nlcl.renli.lemmas: the explicit sufficient conditions of Lemmas 4.4 and 4.5."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.renli.lemmas import (
    alignment_condition,
    balance_condition,
    balance_kappa_threshold,
    binary_code_maps,
    maps_stable_rank,
    normalized_maps,
    population_alignment,
    rotated_maps,
)
from nlcl.renli.model import init_learners, make_data


def _maps(seed, m=24, r=4, r_xi=3, spread=1.0, noise=0.05, misalign=0.0):
    """Normalised maps with U_A ≈ U_B: orthogonal columns with strengths in [1, spread], small noise."""
    g = torch.Generator().manual_seed(seed)
    Q = torch.linalg.qr(torch.randn(m, r + 2 * r_xi, generator=g, dtype=torch.float64)).Q
    U = Q[:, :r] * torch.linspace(1.0, spread, r, dtype=torch.float64)
    U_b = U + misalign * torch.randn(m, r, generator=g, dtype=torch.float64) / math.sqrt(m)
    V_a = noise * torch.randn(m, r_xi, generator=g, dtype=torch.float64)
    V_b = noise * torch.randn(m, r_xi, generator=g, dtype=torch.float64)
    s_a = (U.pow(2).sum() + V_a.pow(2).sum()).sqrt()
    s_b = (U_b.pow(2).sum() + V_b.pow(2).sum()).sqrt()
    return U / s_a, V_a / s_a, U_b / s_b, V_b / s_b


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    spread=st.floats(1.0, 6.0),
    noise=st.floats(0.0, 0.3),
    misalign=st.floats(0.0, 0.5),
)
def test_lemma_4_4_explicit_condition_implies_alignment(seed, spread, noise, misalign):
    """κ(U_A) < K* ⇒ every pair with z_i ≠ z_j is ranked correctly (score ≥ fraction of such pairs)."""
    maps = _maps(seed, spread=spread, noise=noise, misalign=misalign)
    cond = alignment_condition(*maps)
    # without its noise terms the bound can only be larger (δ ≤ δ + ε_A + ε_B)
    assert float(cond["kappa_bound_noise_free"]) >= float(cond["kappa_bound"]) * (1 - 1e-12)
    if bool(cond["holds"]):
        assert float(cond["margin"]) > 0
        score, distinct = population_alignment(*maps, n=256, generator=torch.Generator().manual_seed(seed))
        assert float(score) >= float(distinct) - 1e-12


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), spread=st.floats(1.0, 6.0), noise=st.floats(0.0, 0.5))
def test_lemma_4_5_explicit_bound_holds(seed, spread, noise):
    U, V, _, _ = _maps(seed, spread=spread, noise=noise)
    out = balance_condition(U, V, eps=0.15)
    assert float(out["srank"]) >= float(out["srank_bound"]) - 1e-9
    if bool(out["holds"]):
        assert float(out["srank"]) >= 0.85 * U.shape[-1] - 1e-9


def test_balance_kappa_threshold():
    assert float(balance_kappa_threshold(8, 0.15)) == pytest.approx(math.sqrt(7 / 5.8))
    assert math.isinf(float(balance_kappa_threshold(2, 0.6)))  # (1 − ε) r ≤ 1: any κ
    assert float(balance_kappa_threshold(4, 0.0, 0.5)) == 0.0  # r(1 + η) − 1 > r − 1 with ε = 0: none
    with pytest.raises(ParameterError, match="eps"):
        balance_kappa_threshold(4, 1.5)


def test_normalized_maps_and_stable_rank():
    data = make_data(16, 3, 2, 2.0, [0, 1], nu=0.3, dtype=torch.float64)
    W_a, W_b = init_learners(data, 32)
    U_a, V_a, U_b, V_b = normalized_maps(W_a, W_b, data)
    total = U_a.pow(2).sum((-2, -1)) + V_a.pow(2).sum((-2, -1))
    assert torch.allclose(total, torch.ones(2, dtype=torch.float64))
    G = torch.cat([U_a, V_a], -1)
    cov = G @ G.transpose(-1, -2)
    assert torch.allclose(
        maps_stable_rank(U_a, V_a),
        torch.diagonal(cov, dim1=-2, dim2=-1).sum(-1) / torch.linalg.eigvalsh(cov)[..., -1],
    )
    with pytest.raises(ParameterError, match="W_A"):
        normalized_maps(W_a[:1], W_b, data)


def test_paper_example_is_aligned_but_unbalanced():
    maps = binary_code_maps(6, 3, 16)
    score, distinct = population_alignment(*maps, n=512, generator=torch.Generator().manual_seed(0))
    assert float(score) == pytest.approx(float(distinct))
    assert float(maps_stable_rank(maps[0], maps[1])) == pytest.approx(1.0)
    assert not bool(alignment_condition(*maps)["holds"])  # κ = ∞
    noisy = binary_code_maps(6, 3, 16, nu=0.2)
    assert float(noisy[0].pow(2).sum() + noisy[1].pow(2).sum()) == pytest.approx(1.0)
    with pytest.raises(ParameterError, match="m="):
        binary_code_maps(6, 3, 4)


def test_anti_aligned_and_rotated_maps_lose_alignment():
    U, V, Ub, Vb = _maps(1, noise=0.02)
    assert bool(alignment_condition(U, V, Ub, Vb)["holds"])
    score, _ = population_alignment(U, V, -Ub, Vb, n=256, generator=torch.Generator().manual_seed(1))
    assert float(score) < 0.05
    assert not bool(alignment_condition(U, V, -Ub, Vb)["holds"])
    rot = rotated_maps(U, V, Ub, Vb, generator=torch.Generator().manual_seed(2))
    assert torch.allclose(torch.linalg.svdvals(rot[2]), torch.linalg.svdvals(Ub))
    assert not bool(alignment_condition(*rot)["holds"])
