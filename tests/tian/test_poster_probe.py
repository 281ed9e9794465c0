"""Tests for nlcl.tian.poster_probe (Tian 2023 poster, linear-evaluation table; MNIST analog)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from nlcl.core.validate import ParameterError
from nlcl.tian.poster_probe import POSTER_TABLE, accuracy_summary, plot_training_and_probes, probe_table

SEEDS = [0, 1, 0, 1]
LOSSES = ["infonce", "infonce", "quadratic", "quadratic"]


def _table():
    return probe_table(SEEDS, LOSSES, [0.9, 0.92, 0.85, 0.86], [0.7, 0.72], 0.88)


def test_probe_table_rows():
    table = _table()
    assert (
        list(table.method)
        == ["raw pixels"] * 2
        + ["random-init encoder"] * 2
        + ["infonce encoder"] * 2
        + ["quadratic encoder"] * 2
    )
    assert list(table.seed) == [0, 1, 0, 1, 0, 1, 0, 1]
    assert table.accuracy.iloc[3] == 0.72 and table.accuracy.iloc[6] == 0.85
    with pytest.raises(ParameterError, match="one seed, loss and accuracy per run"):
        probe_table(SEEDS, LOSSES[:3], [0.9] * 4, [0.7, 0.7], 0.88)


def test_accuracy_summary_in_percent_beside_the_poster():
    summary = accuracy_summary(_table())
    assert list(summary.index) == list(POSTER_TABLE.index)
    assert summary.loc["infonce encoder", "accuracy mean (%)"] == pytest.approx(91.0)
    assert summary.loc["quadratic encoder", "std over seeds (%)"] == pytest.approx(
        round(100 * np.std([0.85, 0.86], ddof=1), 2)
    )
    assert summary.loc["quadratic encoder", "CIFAR-10 (poster)"] == "73.58 ± 0.82"


def test_plot_training_and_probes_is_labeled():
    history = np.abs(np.random.default_rng(0).standard_normal((10, 4)))
    fig = plot_training_and_probes(history, LOSSES, _table())
    assert [ax.get_title() for ax in fig.axes[:2]] == ["infonce", "quadratic"]
    for ax in fig.axes[:2]:
        assert ax.get_xlabel() and ax.get_ylabel() and len(ax.lines) == 2
    assert fig.axes[2].get_xlabel()
    plt.close(fig)
