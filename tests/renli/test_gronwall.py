"""Tests for nlcl.renli.gronwall: Lemma 5.2's comparative Gronwall bound in its reconstructed form."""

from __future__ import annotations

import math

import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.gronwall import PROGRESS_FLOOR, comparative_gronwall, progress
from nlcl.renli.model import make_data
from nlcl.renli.tracking import gram_trajectory, infinite_width_gram, input_scales


def _lemma_processes(alpha, beta, X, B0=0.1):
    """The lemma's equality case: dA = −αXA dt, dB = βXB dt, so B = B0 (A0/A)^(β/α) exactly."""
    cum = torch.cumsum(torch.cat([torch.zeros(1, X.shape[1], dtype=torch.float64), X[:-1]]), 0)
    return torch.exp(-alpha * cum), B0 * torch.exp(beta * cum)


def test_the_equality_case_meets_the_bound_with_the_exponent_beta_over_alpha():
    X = torch.rand(30, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) + 0.1
    A, B = _lemma_processes(0.5, torch.tensor([0.25, 1.0, 2.0], dtype=torch.float64), X)
    out = comparative_gronwall(A, B, stage1_end=20)
    assert out.exponent.tolist() == pytest.approx([0.5, 2.0, 4.0])
    assert out.stage1_ratio.tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert out.stage2_growth.tolist() == pytest.approx((B[-1] / B[20]).tolist())


def test_an_error_that_outgrows_the_progress_exceeds_the_bound():
    """An error growing at a fixed rate while the progress stalls (the lemma's hypothesis fails)."""
    t = torch.arange(30, dtype=torch.float64)[:, None]
    A = torch.where(t < 2, torch.exp(-t), math.exp(-2.0) * torch.ones_like(t))
    B = 0.1 * torch.exp(0.3 * t)
    out = comparative_gronwall(A, B, stage1_end=20)
    assert out.stage1_ratio.iloc[0] > 1.5


def test_comparative_gronwall_refuses_bad_shapes_and_a_stalled_first_interval():
    A = torch.ones(10, 2, dtype=torch.float64)
    with pytest.raises(ParameterError, match="must both be"):
        comparative_gronwall(A, torch.ones(10, 3), stage1_end=5)
    with pytest.raises(ParameterError, match="stage1_end=10"):
        comparative_gronwall(A, A, stage1_end=10)
    with pytest.raises(ParameterError, match=r"runs \[0, 1\] make no progress"):
        comparative_gronwall(A, A, stage1_end=5)
    with pytest.raises(ParameterError, match=r"^track_batch=2: runs \[0, 1\] make no progress"):
        comparative_gronwall(A, A, stage1_end=5, setting="track_batch=2")


def test_progress_is_one_at_the_infinite_width_start_and_falls_in_stage_1():
    data = make_data(8, 2, 2, 3.0, [0, 1], nu=0.3, dtype=torch.float64)
    G0, D = infinite_width_gram(data), input_scales(data)
    assert progress(G0, 2, 2).tolist() == pytest.approx([1.0, 1.0])  # orthogonal columns: cos = 0
    _, G = gram_trajectory(
        G0, D, r=2, r_xi=2, lam=1.0, steps_stage1=40, steps_stage2=0, lr=2.0, record_every=40
    )
    A = progress(G, 2, 2)
    assert A.shape == (2, 2) and bool((A[-1] < 0.1).all()) and bool((A >= PROGRESS_FLOOR).all())
