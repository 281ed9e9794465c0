"""Figures of ``book/renli-mnist-captions.py`` (Ren & Li 2023, Fig. 2, offline analog).

Each function draws one figure of the chapter on given axes (seaborn style, from
:func:`nlcl.core.plotting.subplots`), labeled in the paper's notation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
import torch

from nlcl.renli.heads import empirical_covariance

__all__ = ["METHOD_ORDER", "comparison_panels", "rich_panels", "spectrum_plot"]

#: The order of the two methods in every figure (and the colours C0, C1).
METHOD_ORDER = ["non-contrastive", "contrastive"]

#: The metrics of the rich-caption figure, with their axis labels.
RICH_PANELS = [
    ("alignment", "alignment score (Def. 4.1)"),
    ("stable_rank", "stable rank (Def. 4.2)"),
    ("class_condition", r"$\sigma_1/\sigma_9$ of class means"),
    ("zero_shot", "zero-shot accuracy"),
]


def comparison_panels(
    axes: Sequence[Any], table: pd.DataFrame, loss: np.ndarray, seeds: Sequence[int]
) -> None:
    """Fig. 2 of Ren & Li 2023 (analog), four panels: zero-shot accuracy (chance dotted), stable rank
    (Def. 4.2) and class-mean condition number per run and method, and the training loss (rolling
    mean over 20 steps) of each run. ``table``: :func:`nlcl.renli.caption_experiments.comparison_table`;
    ``loss``: (R, steps), runs in the table's order."""
    columns = ["zero-shot accuracy", "stable rank", "class-mean condition number"]
    for ax, col in zip(axes[:3], columns):
        sns.stripplot(
            data=table, x="method", y=col, order=METHOD_ORDER, hue="method",
            hue_order=METHOD_ORDER, size=7, ax=ax,
        )  # fmt: skip
        ax.set_xlabel("")
    axes[0].axhline(0.1, color="0.5", ls=":", lw=1)
    axes[0].annotate("chance", (1.4, 0.1), va="bottom", ha="right", fontsize="small")
    axes[1].set_ylabel(r"stable rank $\mathrm{tr}\,\Sigma/\lambda_{\max}(\Sigma)$")
    axes[2].set_ylabel(r"$\sigma_1/\sigma_9$ of class means")
    axes[2].set_yscale("log")
    ax = axes[3]
    for i, m in enumerate(table.method):
        ax.plot(
            pd.Series(loss[i]).rolling(20).mean(),
            color="C0" if m == "non-contrastive" else "C1",
            lw=1,
            label=m if list(seeds).index(table.seed[i]) == 0 else None,
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("training loss (rolling mean)")
    ax.legend(fontsize="small")


def spectrum_plot(ax: Any, img_emb: torch.Tensor, methods: Sequence[str], k_max: int = 16) -> None:
    """The eigenvalues λ_k(Σ)/tr Σ of the image-embedding covariance of each run, descending, median
    over the runs of each method (what the stable rank of Def. 4.2 summarizes), first ``k_max``."""
    eig = torch.linalg.eigvalsh(empirical_covariance(img_emb.double())).flip(-1).cpu().numpy()
    spec = (
        pd.DataFrame(eig / eig.sum(1, keepdims=True))
        .assign(method=list(methods))
        .melt(id_vars="method", var_name="k", value_name="share")
    )
    sns.lineplot(
        data=spec[spec.k < k_max], x="k", y="share", hue="method", hue_order=METHOD_ORDER,
        marker="o", estimator="median", errorbar=None, ax=ax,
    )  # fmt: skip
    ax.set_yscale("log")
    ax.set_xlabel("eigenvalue index $k$ of $\\Sigma$ (descending)")
    ax.set_ylabel(r"$\lambda_k(\Sigma)/\mathrm{tr}\,\Sigma$")


def rich_panels(axes: Any, rich: pd.DataFrame) -> None:
    """The rich-caption experiment over training: alignment (Def. 4.1), stable rank (Def. 4.2, 4.5
    dotted), class-mean condition number and zero-shot accuracy, one line per run; a row of
    ``axes`` per architecture (3-layer, then linear heads). ``rich``: the rows of
    :func:`nlcl.renli.caption_experiments.log_table` for both architectures."""
    for row_i, arch in enumerate(("mlp", "linear")):
        name = "3-layer" if arch == "mlp" else "linear"
        for col, (metric, label) in enumerate(RICH_PANELS):
            ax = axes[row_i, col]
            sns.lineplot(
                data=rich[rich.arch == arch], x="step", y=metric, hue="method",
                hue_order=METHOD_ORDER, units="seed", estimator=None, lw=1, ax=ax,
                legend=(row_i, col) == (0, 0),
            )  # fmt: skip
            ax.set_xlabel("training step")
            ax.set_ylabel(label)
            ax.set_title(f"{name} heads, rich captions", fontsize="small")
            if metric == "class_condition":
                ax.set_yscale("log")
        axes[row_i, 1].axhline(4.5, color="0.5", ls=":", lw=1)
