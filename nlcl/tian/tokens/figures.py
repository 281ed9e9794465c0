"""The figures of the chapter ``book/tian-tokens.py`` (Tian 2023, Sec. 5, App. D and E.2).

* :func:`beta_curves` — Figs. 9 and 10 (Fig. 4): χ̄+ and χ̄− (Eqs. 16, 181) against β, one
  panel per activation;
* :func:`fig11_curves` — Fig. 11: the same with one panel per (ζ, BatchNorm);
* :func:`training_curves` — the training loss and χ̄± of the Fig. 5 runs against the minibatch;
* :func:`oracle_bars` — χ̄− of issue 18's five cells, oracle against nlcl under both scorings;
* :func:`pooled_table1_diff` — Table 1 with pooled (App. D, Eqs. 164-165) minus per-view
  BatchNorm moments.

Each returns the figure; the chapter shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from nlcl.tian.plots import plot_beta_curves
from nlcl.tian.rf_network import ACTIVATIONS_2LAYER
from nlcl.tian.tokens.chapter import VARIANT
from nlcl.tian.tokens.metrics import summarize

__all__ = ["beta_curves", "fig11_curves", "oracle_bars", "pooled_table1_diff", "training_curves"]


def beta_curves(
    table: pd.DataFrame, fig: str, panel: str, label: Callable[[Any], str] | None, title: str
) -> plt.Figure:
    """Figs. 9/10 (Fig. 4): χ̄± against β per ``panel`` value (activations in the paper's
    order), mean ± std over seeds, for the runs of ``fig``."""
    sub = table[table.figure == fig] if "figure" in table else table
    s = summarize(sub, [panel, "beta", "P"])
    order = {v: i for i, v in enumerate(ACTIVATIONS_2LAYER + ("none", "vanilla"))}
    s = s.sort_values([panel, "beta", "P"], key=lambda c: c.map(order) if c.name == panel else c)
    return plot_beta_curves(s, panel, title=title.replace(" — ", "\n"), panel_label=label)


def fig11_curves(table: pd.DataFrame, title: str) -> plt.Figure:
    """Fig. 11: χ̄± against β, one panel per (ζ, BatchNorm or not), ReLU, InfoNCE."""
    t = table[table.figure == "fig11"].copy() if "figure" in table else table.copy()
    t["setting"] = [f"ζ = {z:g}, " + ("BN" if b == "vanilla" else "no BN") for z, b in zip(t.zeta, t.bn)]
    t = t.sort_values(["zeta", "bn"], ascending=[True, False])
    s = summarize(t, ["setting", "beta", "P"])
    s["key"] = s.setting.map({v: i for i, v in enumerate(dict.fromkeys(t.setting))})
    return plot_beta_curves(
        s.sort_values(["key", "beta", "P"]).drop(columns="key"),
        "setting",
        title=title.replace(" — ", "\n"),
    )


def training_curves(curves: pd.DataFrame) -> plt.Figure:
    """The training loss, χ̄+ and χ̄− against the minibatch, per η and activation (mean ± std
    over seeds), with χ̄+ of the untrained network as a dashed line."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    labels = ("training loss (InfoNCE)", r"$\bar\chi_+$", r"$\bar\chi_-$")
    for ax, col, label in zip(axes, ("loss", "chi_plus", "chi_minus"), labels):
        sns.lineplot(
            data=curves,
            x="step",
            y=col,
            hue="η",
            style="activation",
            errorbar="sd",
            ax=ax,
            legend=ax is axes[0],
        )
        ax.set_xlabel("minibatch")
        ax.set_ylabel(label)
    init_plus = float(curves[curves.step == 0].chi_plus.mean())
    axes[1].axhline(init_plus, color="0.5", ls="--", lw=1)
    axes[1].annotate(
        "untrained",
        (0, init_plus),
        xytext=(3, 3),
        textcoords="offset points",
        fontsize=7,
        color="0.4",
    )
    return fig


def oracle_bars(bold: pd.DataFrame) -> plt.Figure:
    """χ̄− (± 2 s.e.) of issue 18's five quadratic-loss cells: the oracle, nlcl with the book's
    cosine and nlcl with the released normaliser."""
    fig, ax = plt.subplots(figsize=(8, 3.2))
    x = np.arange(len(bold))
    bars = [
        ("oracle_chi_minus", "oracle (released trainer, released scoring)"),
        ("nlcl_cosine_chi_minus", "nlcl, book's cosine"),
        ("nlcl_released_chi_minus", "nlcl, released scoring"),
    ]
    for j, (col, label) in enumerate(bars):
        yerr = 2 * bold[col + "_se"].fillna(0)
        ax.bar(x + (j - 1) * 0.27, bold[col], 0.27, yerr=yerr, capsize=3, label=label)
    ticks = [f"{c}\n({n} oracle seed{'s' if n > 1 else ''})" for c, n in zip(bold.cell, bold.n_oracle)]
    ax.set_xticks(x, ticks, fontsize=7)
    ax.set_ylabel(r"$\bar\chi_-$ (± 2 s.e.)")
    ax.set_title("Issue 18's five quadratic-loss cells: the gap is the scoring", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def pooled_table1_diff(pooled_t1: Mapping[float, tuple[pd.DataFrame, pd.DataFrame]]) -> plt.Figure:
    """Table 1 cell by cell, per η: mean χ̄+ with pooled moments minus that with per-view moments
    (``pooled_t1[η]`` = (per-view, pooled) long tables of :func:`nlcl.tian.tokens.chapter.table1`)."""
    fig, axes = plt.subplots(
        1,
        len(pooled_t1),
        figsize=(6 * len(pooled_t1), 4),
        squeeze=False,
        layout="constrained",
    )
    for ax, (lr_value, (tv, tp)) in zip(axes[0], pooled_t1.items()):
        m = tv.merge(tp, on=["beta", "P", "bn"], suffixes=("_view", "_pooled"))
        pooled = m.pivot(index=["beta", "P"], columns="bn", values="chi_plus_mean_pooled")
        view = m.pivot(index=["beta", "P"], columns="bn", values="chi_plus_mean_view")
        diff = pooled.sub(view)[list(VARIANT)].rename(columns=VARIANT)
        sns.heatmap(diff, annot=True, fmt="+.2f", center=0, cmap="vlag", ax=ax, cbar=False)
        ax.set_title(f"Table 1, η = {lr_value:g}: χ̄+ pooled − per view")
        ax.set_xlabel("backprop through")
        ax.set_ylabel(r"$(\beta, P)$")
    return fig
