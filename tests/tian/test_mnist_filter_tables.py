"""Tests for nlcl.tian.mnist_filter_tables (Tian 2023, App. E.3, Figs. 12-13)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.mnist_filter_tables import (
    cos_to_init,
    filter_table,
    filters_from_weight_table,
    plot_smoothness_diversity,
    weight_columns,
    weight_table,
)


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.floats(0.01, 100.0))
def test_cos_to_init_is_a_scale_free_cosine(seed, scale):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((3, 4, 5)).astype(np.float32)
    w = rng.standard_normal((3, 4, 5)).astype(np.float32)
    c = cos_to_init(w, w0)
    assert c.shape == (3, 4) and np.all(np.abs(c) <= 1 + 1e-6)
    np.testing.assert_allclose(cos_to_init(w0, w0), 1.0, rtol=1e-6)
    # float32: scaling w rounds each product to about 1e-7 of |w||w0|, so a cosine near 0 keeps an
    # absolute, not a relative, error (seed 3246, scale 15: -6.8832e-5 against -6.8849e-5)
    np.testing.assert_allclose(cos_to_init(scale * w, w0), c, rtol=1e-4, atol=1e-6)
    # the same numbers from torch tensors
    np.testing.assert_array_equal(cos_to_init(torch.from_numpy(w), torch.from_numpy(w0)), c)
    with pytest.raises(ParameterError, match="shape"):
        cos_to_init(w, w0[:2])


def test_filter_table_rows_and_means():
    rng = np.random.default_rng(0)
    eta, moved = rng.random((4, 2, 3)), rng.random((4, 2, 3))
    abs_cos = rng.random((4, 2))
    table = filter_table(eta, abs_cos, moved, [False, False, True, True], [0, 1, 0, 1])
    assert len(table) == 8
    row = table.iloc[5]  # run 2, RF 1
    assert row.augmentation == "with" and row.seed == 0 and row.RF == 1
    assert row.eta == pytest.approx(eta[2, 1].mean()) and row.abs_cos == abs_cos[2, 1]
    assert row.cos_to_init == pytest.approx(moved[2, 1].mean())
    with pytest.raises(ParameterError, match="one run per row"):
        filter_table(eta, abs_cos, moved, [False], [0])


def test_weight_table_round_trip():
    w = torch.randn(4, 2, 3, 6)
    table = weight_table(w, (0, 2), [False, False, True, True])
    assert list(table.columns) == weight_columns(6) and len(table) == 2 * 2 * 3
    np.testing.assert_allclose(filters_from_weight_table(table, "without", 2), w[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(filters_from_weight_table(table, "with", 2), w[2].numpy(), atol=1e-5)
    with pytest.raises(ParameterError, match="setting"):
        filters_from_weight_table(table, "sometimes", 2)


def test_plot_smoothness_diversity_is_labeled():
    rng = np.random.default_rng(0)
    table = filter_table(
        rng.random((4, 2, 3)), rng.random((4, 2)), rng.random((4, 2, 3)), [0, 0, 1, 1], [0, 1, 0, 1]
    )
    fig = plot_smoothness_diversity(table, 0.8)
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(fig)
