"""Tian (2023)'s figure layouts: β-curves of the matching scores, filter heat maps.

* :func:`plot_beta_curves` — χ̄+ and χ̄− (Eqs. 16 and 181) against the over-parameterization β,
  one line per P (Figs. 4, 9, 10, 11; chapter ``book/tian-tokens.py``);
* :func:`plot_filters` — the learned filters of the token task, one heat map per RF (Fig. 5);
* :func:`plot_mnist_filters` — the MNIST filters tiled per RF (Figs. 12-13, App. E.3; chapter
  ``book/tian-mnist-filters.py``).

Built on the shared style of :mod:`nlcl.core.plotting`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import torch

from nlcl.core.plotting import heatmaps
from nlcl.core.validate import ParameterError
from nlcl.tian.mnist_filters import filter_mosaic

__all__ = ["plot_beta_curves", "plot_filters", "plot_mnist_filters"]


def plot_beta_curves(summary: pd.DataFrame, panel: str, *, title: str = "", panel_label=None):
    """Figs. 4/9/10/11 layout: χ̄+ (top row) and χ̄− (bottom row) vs β, one line per P, mean ± std.

    ``summary`` comes from :func:`~nlcl.tian.tokens.metrics.summarize` grouped by [``panel``, "beta", "P"]; one column of
    panels per value of ``panel`` (e.g. activation, or BN setting).  Returns the figure.
    """
    for col in (panel, "beta", "P", "chi_plus_mean", "chi_minus_mean"):
        if col not in summary.columns:
            raise ParameterError(
                f"summary lacks column {col!r}; build it with summarize(table, [{panel!r}, 'beta', 'P'])"
            )
    values = list(dict.fromkeys(summary[panel]))
    fig, axes = plt.subplots(
        2, len(values), figsize=(2.9 * len(values) + 0.6, 5.4), squeeze=False, sharex=True
    )
    for j, v in enumerate(values):
        sub = summary[summary[panel] == v]
        for i, (metric, label) in enumerate([("chi_plus", r"$\bar\chi_+$"), ("chi_minus", r"$\bar\chi_-$")]):
            ax = axes[i, j]
            for P, g in sub.groupby("P"):
                std = g[f"{metric}_std"].fillna(0.0) if f"{metric}_std" in g else None
                ax.errorbar(
                    g["beta"], g[f"{metric}_mean"], yerr=std, marker="o", ms=3, capsize=2, label=f"P = {P}"
                )
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_xticks(sorted(sub["beta"].unique()))
            ax.set_xticklabels([str(b) for b in sorted(sub["beta"].unique())])
            ax.set_ylim(-0.15, 1.05)
            if i == 0:
                ax.set_title(panel_label(v) if panel_label else f"{v}")
            if i == 1:
                ax.set_xlabel(r"over-parameterization $\beta$")
            if j == 0:
                ax.set_ylabel(label)
    axes[0, -1].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    if title:
        fig.suptitle(title)
    return fig


def plot_filters(W: torch.Tensor, relevant: torch.Tensor, *, title: str = ""):
    """Fig. 5 layout: one heat map per RF of the learned filters w_km (rows m, columns tokens a).

    ``W`` (K, M, d) for one run, ``relevant`` (K, d) the tokens of R_k^g (marked under each map).
    Each filter is scaled to unit max-abs so patterns of different norms are visible.
    Chapter ``book/tian-tokens.py``.
    """
    K, M, d = W.shape
    Wn = W / W.abs().amax(-1, keepdim=True).clamp(min=1e-12)
    fig, axes = heatmaps(
        [w.numpy() for w in Wn],
        titles=[f"$R_{{{k}}}$" for k in range(K)],
        cols=5,
        width=2.3,
        height=0.14 * M + 1.3,
        aspect="auto",
        title_size="small",
        title=title,
    )
    for k, ax in enumerate(axes.flat[:K]):
        toks = torch.nonzero(relevant[k]).flatten().tolist()
        ax.set_xticks(toks)
        ax.set_xticklabels([str(a) for a in toks], fontsize=6)
    fig.supxlabel("token a (ticks: $R_k^g$)", fontsize="small")
    fig.supylabel("filter m", fontsize="small")
    return fig


def plot_mnist_filters(weights: Any, rf: int, names: Sequence[str], *, title: str = ""):
    """Figs. 12-13 layout: the filters w_km of each RF k tiled into one image per RF (Tian 2023, App. E.3).

    ``weights`` (K, M, rf·rf) for one run; each filter is scaled by its own max |w|
    (:func:`nlcl.tian.mnist_filters.filter_mosaic`), red positive, blue negative; ``names`` label the
    RFs. Chapter ``book/tian-mnist-filters.py``. Returns the figure.
    """
    if len(weights) != len(names):
        raise ParameterError(
            f"weights has {len(weights)} RFs but names has {len(names)}; give one name per RF"
        )
    fig, axes = heatmaps(
        [filter_mosaic(w, rf) for w in weights],
        titles=[f"RF {k} ({name})" for k, name in enumerate(names)],
        width=3.0,
        height=3.3,
        title=title,
    )
    for ax in axes.flat:
        ax.set_xlabel(r"filters $\mathbf{w}_{km}$, $m = 1..M$")
    return fig
