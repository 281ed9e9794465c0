"""Tests for nlcl.tian.plots (Tian 2023, Figs. 4/9/10/11, Fig. 5, Figs. 12-13 layouts)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from nlcl.core.validate import ParameterError  # noqa: E402
from nlcl.tian.plots import plot_beta_curves, plot_filters, plot_mnist_filters  # noqa: E402
from nlcl.tian.tokens.metrics import summarize  # noqa: E402
from nlcl.tian.tokens.world import make_token_worlds  # noqa: E402


def test_plot_beta_curves_and_filters():
    rows = [
        dict(activation=a, beta=b, P=p, chi_plus=0.5 + 0.1 * b, chi_minus=0.1)
        for a in ("relu", "linear")
        for b in (1, 2)
        for p in (1, 3)
    ]
    s = summarize(pd.DataFrame(rows), ["activation", "beta", "P"])
    fig = plot_beta_curves(s, "activation", title="t")
    assert len(fig.axes) >= 4
    with pytest.raises(ValueError, match="lacks column"):
        plot_beta_curves(s.drop(columns=["chi_plus_mean"]), "activation")
    world = make_token_worlds([0], [3], [1.0])
    relevant = torch.zeros(world.K, world.n_tokens, dtype=torch.bool)
    relevant[0, 2] = True
    fig2 = plot_filters(torch.randn(world.K, 4, world.n_tokens), relevant, title="f")
    assert len(fig2.axes) >= world.K
    assert [t.get_text() for t in fig2.axes[0].get_xticklabels()] == ["2"]
    plt.close("all")


def test_plot_mnist_filters():
    w = np.random.default_rng(0).normal(size=(2, 4, 9))
    fig = plot_mnist_filters(w, 3, ["a", "b"], title="Fig. 12")
    assert [ax.get_title() for ax in fig.axes] == ["RF 0 (a)", "RF 1 (b)"]
    with pytest.raises(ParameterError, match="one name per RF"):
        plot_mnist_filters(w, 3, ["a"])
    plt.close("all")
