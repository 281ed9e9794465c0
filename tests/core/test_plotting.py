import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from nlcl.core import plotting  # noqa: E402


def test_setup_and_subplots():
    plotting.setup()
    fig, axes = plotting.subplots(2, 3, width=2, height=1)
    assert axes.shape == (2, 3)
    assert tuple(fig.get_size_inches()) == (6.0, 2.0)
    plotting.mark_vertical(axes[0, 0], [0.0, 1.0])
    assert len(axes[0, 0].lines) == 2
    plt.close(fig)


def test_heatmaps_grid_hides_unused_panels():
    fig, axes = plotting.heatmaps([np.eye(3)] * 5, titles=list("abcde"), cols=3, title="t")
    assert axes.shape == (2, 3)
    assert [ax.get_title() for ax in axes.flat[:5]] == list("abcde")
    assert not axes[1, 2].axison and axes[0, 0].images
    fig1, axes1 = plotting.heatmaps([np.zeros((2, 2))])
    assert axes1.shape == (1, 1)
    with pytest.raises(ValueError, match="maps is empty"):
        plotting.heatmaps([])
    plt.close("all")


def test_training_curves_and_unit_circle():
    data = pd.DataFrame(dict(step=[0, 1, 2, 0, 1, 2], loss=[3, 2, 1, 4, 3, 2], seed=[0, 0, 0, 1, 1, 1]))
    fig, axes = plotting.subplots(1, 2)
    ax = plotting.training_curves(axes[0, 0], data, "loss", units="seed", estimator=None, boundary=1)
    assert ax.get_xlabel() == "step $t$" and ax.get_ylabel() == "loss"
    assert len(ax.lines) == 3  # two seeds and the boundary
    plotting.unit_circle(axes[0, 1])
    x, y = axes[0, 1].lines[0].get_data()
    np.testing.assert_allclose(x**2 + y**2, 1.0)
    assert axes[0, 1].get_aspect() == 1.0
    plt.close(fig)
