"""Tests for nlcl.esser.semi_orthonormal: the largest entry of a random semi-orthonormal matrix (Lemma 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.esser.constraints import random_semi_orthogonal
from nlcl.esser.semi_orthonormal import (
    gaussian_max_median,
    lemma2_scale,
    loglog_slope,
    max_abs_entries,
    semi_orthonormal_cholqr,
)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 6), factor=st.integers(4, 12), n=st.integers(1, 3))
def test_cholqr_is_the_positive_diagonal_qr(seed, d, factor, n):
    """Same Q as the sign-fixed Householder QR of random_semi_orthogonal for the same Gaussian G."""
    h = factor * d
    G = torch.randn((n, h, d), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    Q = semi_orthonormal_cholqr(G)
    ref = random_semi_orthogonal((n, h, d), generator=torch.Generator().manual_seed(seed))
    assert torch.allclose(Q, ref, atol=1e-12)
    assert torch.allclose(Q.transpose(-1, -2) @ Q, torch.eye(d, dtype=torch.float64), atol=1e-12)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), d=st.integers(1, 5), h=st.integers(20, 300))
def test_max_entry_between_unit_column_bounds(seed, d, h):
    """Every column has unit norm, so 1/√h ≤ max |Q_ij| ≤ 1."""
    m, worst = max_abs_entries(
        [h], d, 7, generator=torch.Generator().manual_seed(seed), with_orthonormality=True
    )
    assert m.shape == (1, 7)
    assert np.all(m >= 1 / np.sqrt(h) - 1e-12) and np.all(m <= 1 + 1e-12)
    assert worst < 1e-12


def test_haar_first_entry_is_centred_with_variance_one_over_h():
    """Uniform columns: E Q_11 = 0 and E Q_11² = 1/h (the sign fix matters for the mean)."""
    G = torch.randn((4000, 8, 2), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    q = semi_orthonormal_cholqr(G)[:, 0, 0].numpy()
    assert abs(q.mean()) < 4 * q.std() / np.sqrt(len(q))
    assert abs((q**2).mean() * 8 - 1) < 0.05


def test_median_max_matches_gaussian_reference_at_large_h():
    """√h Q_ij ≈ N(0, 1): the median of max |Q_ij| is the median of the max of hd |N(0,1)|/√h."""
    m = max_abs_entries([2048], 4, 300, generator=torch.Generator().manual_seed(1))
    ref = gaussian_max_median([2048], 4)
    assert abs(np.median(m) / ref[0] - 1) < 0.05


def test_reference_and_scale_values():
    assert np.allclose(lemma2_scale([np.e**2]), 2 / np.e)
    # hd = 1: the median of |N(0,1)| is Φ⁻¹(3/4) = 0.6745
    assert np.allclose(gaussian_max_median([1], 1), 0.6744897501960817)
    assert loglog_slope([1, 10, 100], [3, 30, 300]) == pytest.approx(1.0)
    assert loglog_slope([4, 16, 64], [1 / 2, 1 / 4, 1 / 8]) == pytest.approx(-0.5)


def test_deterministic_given_generator():
    a = max_abs_entries([64, 128], 3, 5, generator=torch.Generator().manual_seed(5))
    b = max_abs_entries([64, 128], 3, 5, generator=torch.Generator().manual_seed(5))
    assert np.array_equal(a, b)


def test_errors():
    with pytest.raises(ParameterError, match="widths"):
        max_abs_entries([], 2, 3)
    with pytest.raises(ParameterError, match="4d"):
        max_abs_entries([10], 4, 3)
    with pytest.raises(ParameterError, match="draws"):
        max_abs_entries([64], 4, 0)
    with pytest.raises(ParameterError, match="h >= d"):
        semi_orthonormal_cholqr(torch.zeros(3, 5))
    with pytest.raises(ParameterError, match="dependent columns"):
        semi_orthonormal_cholqr(torch.zeros(8, 2, dtype=torch.float64))
    with pytest.raises(ParameterError, match=">= 2"):
        lemma2_scale([1])
    with pytest.raises(ParameterError, match="positive"):
        loglog_slope([1, 2], [1, -1])
