"""Tables and the summary figure of the MNIST filter experiment (Tian 2023, App. E.3, Figs. 12-13).

Around the measurements of :mod:`nlcl.tian.mnist_filters` (high-frequency fraction η, pairwise
|cos|), the chapter ``book/tian-mnist-filters.py`` needs:

* :func:`cos_to_init` — the cosine between each trained filter w_km and its initial value (how far
  training moved it; Fig. 12's filters "capture parts of the digits" only if it moved);
* :func:`filter_table` — one row per run and RF: η, mean pairwise |cos| and cosine to the
  initialization, averaged over the RF's filters;
* :func:`weight_table` — the filters of chosen runs, one row per filter (the committed artifact);
* :func:`filters_from_weight_table` — the (K, M, D) filters of one setting back from that table;
* :func:`plot_smoothness_diversity` — η and the mean pairwise |cos| per RF, with and without
  augmentation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from nlcl.core.validate import ParameterError

__all__ = [
    "cos_to_init",
    "filter_table",
    "weight_columns",
    "weight_table",
    "filters_from_weight_table",
    "plot_smoothness_diversity",
]


def cos_to_init(w: Any, w_init: Any) -> np.ndarray:
    """cos(w_km, w_km at init) for filters ``w`` and ``w_init`` of shape (..., D) (torch or numpy).

    The cosine over the last dimension (the 196 pixels of an RF, Tian 2023, App. E.3): 1 while a
    filter is still its initialization, near 0 once training replaced it.
    """
    w, w_init = np.asarray(w), np.asarray(w_init)
    if w.shape != w_init.shape:
        raise ParameterError(f"w has shape {w.shape} but w_init {w_init.shape}; give the same filters")
    return np.sum(w * w_init, -1) / (np.linalg.norm(w, axis=-1) * np.linalg.norm(w_init, axis=-1))


def filter_table(
    eta: np.ndarray,
    abs_cos: np.ndarray,
    moved: np.ndarray,
    augmented: Sequence[bool],
    seeds: Sequence[int],
) -> pd.DataFrame:
    """One row per run r and RF k: augmentation ("with"/"without"), seed, RF, η (mean over the
    RF's filters), the mean pairwise |cos| and the mean cosine to the initialization.

    ``eta`` and ``moved`` are (runs, K, M), ``abs_cos`` (runs, K); ``augmented`` and ``seeds`` have
    one entry per run.
    """
    runs, n_rf = abs_cos.shape
    if len(augmented) != runs or len(seeds) != runs or eta.shape[:2] != (runs, n_rf):
        raise ParameterError(
            f"one run per row: eta {eta.shape}, abs_cos {abs_cos.shape}, "
            f"{len(augmented)} augmented flags and {len(seeds)} seeds"
        )
    rows = []
    for r in range(runs):
        for k in range(n_rf):
            rows.append(
                dict(
                    augmentation="with" if augmented[r] else "without",
                    seed=seeds[r],
                    RF=k,
                    eta=eta[r, k].mean(),
                    abs_cos=abs_cos[r, k],
                    cos_to_init=moved[r, k].mean(),
                )
            )
    return pd.DataFrame(rows)


def weight_columns(d: int) -> list[str]:
    """The columns of :func:`weight_table`: augmentation, RF, m, then one per pixel p0..p{d-1}."""
    return ["augmentation", "RF", "m"] + [f"p{i}" for i in range(d)]


def weight_table(w: Any, runs: Sequence[int], augmented: Sequence[bool]) -> pd.DataFrame:
    """The filters of ``runs`` (rows of ``w``, shape (runs, K, M, D)), one row per filter, rounded
    to 5 decimals: augmentation ("with"/"without" from ``augmented[r]``), RF k, filter m, pixels."""
    w = np.asarray(w)
    _, n_rf, m_filters, d = w.shape
    rows = [
        [("with" if augmented[r] else "without"), k, m, *np.round(w[r, k, m], 5)]
        for r in runs
        for k in range(n_rf)
        for m in range(m_filters)
    ]
    return pd.DataFrame(rows, columns=weight_columns(d))


def filters_from_weight_table(table: pd.DataFrame, setting: str, n_rf: int) -> np.ndarray:
    """The filters of one ``setting`` ("with" or "without") of a :func:`weight_table`, (K, M, D)."""
    sub = table[table.augmentation == setting].sort_values(["RF", "m"])
    if sub.empty:
        raise ParameterError(f"setting={setting!r}: the table has no rows; one of 'with', 'without'")
    d = len(table.columns) - 3
    return sub[table.columns[3:]].to_numpy().reshape(n_rf, -1, d)


def plot_smoothness_diversity(table: pd.DataFrame, eta_init: float):
    """Left: η per RF (mean ± sd over seeds), with and without augmentation, and the random
    initialization's η dashed. Right: the mean pairwise |cos| per RF. Returns the figure."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
    sns.pointplot(table, x="RF", y="eta", hue="augmentation", errorbar="sd", dodge=0.2, ax=axes[0])
    axes[0].axhline(eta_init, color="0.5", ls="--", label="random init")
    axes[0].set_xlabel("receptive field $k$")
    axes[0].set_ylabel(r"high-frequency fraction $\eta$")
    axes[0].legend(fontsize="small")
    sns.pointplot(table, x="RF", y="abs_cos", hue="augmentation", errorbar="sd", dodge=0.2, ax=axes[1])
    axes[1].set_xlabel("receptive field $k$")
    axes[1].set_ylabel(r"mean pairwise $|\cos(\mathbf{w}_{km}, \mathbf{w}_{km'})|$")
    axes[1].set_ylim(0, 1)
    return fig
