"""The figures of book/tian-tokens.py (nlcl.tian.tokens.figures): Figs. 9-11 (Fig. 4), the
training curves, the oracle cells and Table 1 with pooled BatchNorm moments (App. D)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from nlcl.tian.tokens import chapter, figures  # noqa: E402
from nlcl.tian.tokens.metrics import paper_table1  # noqa: E402


def _grid(figure, **extra):
    return pd.DataFrame(
        [
            dict(figure=figure, beta=b, P=p, seed=s, chi_plus=0.5 + 0.1 * b, chi_minus=0.1, **extra)
            for b in (1, 2)
            for p in (1, 3)
            for s in (0, 1)
        ]
    )


def test_beta_curves_one_panel_column_per_activation_in_the_papers_order():
    t = pd.concat([_grid("fig9", activation=a) for a in ("relu", "linear")])
    fig = figures.beta_curves(t, "fig9", "activation", chapter.ACT_LABEL.get, "Fig. 9 — live")
    assert [ax.get_title() for ax in fig.axes[:2]] == ["linear", "ReLU"]
    assert fig._suptitle.get_text() == "Fig. 9\nlive"
    plt.close("all")


def test_fig11_curves_one_column_per_zeta_and_bn():
    t = pd.concat([_grid("fig11", zeta=z, bn=b) for z in (1.0, 10.0) for b in ("none", "vanilla")])
    fig = figures.fig11_curves(t, "Fig. 11")
    titles = [ax.get_title() for ax in fig.axes[:4]]
    assert titles == ["ζ = 1, BN", "ζ = 1, no BN", "ζ = 10, BN", "ζ = 10, no BN"]  # BN first
    plt.close("all")


def test_training_curves_are_labeled():
    curves = pd.DataFrame(
        dict(step=s, loss=1.0 / (1 + s), chi_plus=0.3, chi_minus=0.1, **{"η": e}, activation=a)
        for s in (0, 10)
        for e in ("0.002", "0.01")
        for a in ("ReLU", "linear")
    )
    fig = figures.training_curves(curves)
    assert [ax.get_xlabel() for ax in fig.axes] == ["minibatch"] * 3
    assert fig.axes[0].get_ylabel() == "training loss (InfoNCE)"
    plt.close("all")


def test_oracle_bars_and_pooled_table1_diff():
    cols = ("oracle_chi_minus", "nlcl_cosine_chi_minus", "nlcl_released_chi_minus")
    bold = pd.DataFrame(
        {"cell": ["a", "b"], "n_oracle": [1, 5]}
        | {c: [0.1, 0.2] for c in cols}
        | {c + "_se": [None, 0.01] for c in cols}
    )
    fig = figures.oracle_bars(bold)
    assert fig.axes[0].get_ylabel().startswith(r"$\bar\chi_-$")
    paper = paper_table1()
    long = paper[["beta", "P", "bn"]].assign(chi_plus_mean=paper.paper_mean)
    fig2 = figures.pooled_table1_diff({0.01: (long, long.assign(chi_plus_mean=long.chi_plus_mean + 1))})
    assert fig2.axes[0].get_title() == "Table 1, η = 0.01: χ̄+ pooled − per view"
    plt.close("all")
