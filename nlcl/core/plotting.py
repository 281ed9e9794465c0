"""Figure style and the figures that repeat across chapters: seaborn theme, labeled axes, the papers' notation.

:func:`setup` and :func:`subplots` give every chapter the same look; :func:`heatmaps` draws grids
of filters (Tian 2023, Figs. 5 and 12-13), :func:`training_curves` a metric over training steps
(Ren & Li 2023, Fig. 1), :func:`unit_circle` the reference circle of 2-D weight or output plots
(Tian 2023, Fig. 8; Esser et al. 2024, Figs. 1 and 3). Paper-specific layouts build on these
(:mod:`nlcl.tian.plots`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns

__all__ = ["setup", "subplots", "mark_vertical", "heatmaps", "training_curves", "unit_circle"]


def setup(context: str = "notebook") -> None:
    """Apply the book's figure style (seaborn ``whitegrid``, colorblind palette, 110 dpi)."""
    sns.set_theme(context=context, style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "axes.titlesize": "medium",
            "figure.constrained_layout.use": True,
        }
    )


def subplots(nrows: int = 1, ncols: int = 1, *, width: float = 4.2, height: float = 3.2, **kwargs):
    """``plt.subplots`` with a per-panel size (inches) instead of a total size."""
    kwargs.setdefault("squeeze", False)
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), **kwargs)


def mark_vertical(ax, xs, **kwargs) -> None:
    """Dotted vertical lines at ``xs`` (e.g. the data points of Tian 2023, Fig. 8)."""
    style = {"color": "0.6", "linestyle": ":", "linewidth": 1.0, "zorder": 0}
    style.update(kwargs)
    for x in xs:
        ax.axvline(x, **style)


def heatmaps(
    maps: Sequence[Any],
    *,
    titles: Sequence[str] | None = None,
    cols: int | None = None,
    width: float = 2.3,
    height: float = 2.3,
    cmap: str = "RdBu_r",
    vmin: float = -1.0,
    vmax: float = 1.0,
    aspect: str = "equal",
    title_size: str = "medium",
    title: str = "",
):
    """One heat map per 2-D array of ``maps``, ``cols`` panels a row (default: all in one row).

    For filters scaled to [-1, 1] (red positive, blue negative; Tian 2023, Figs. 5 and 12-13).
    Ticks and grid are off and panels past the last map hidden; ``titles`` label the panels,
    ``title`` the figure. Returns ``(fig, axes)`` with ``axes`` of shape (rows, cols).
    """
    maps = list(maps)
    if not maps:
        raise ValueError("maps is empty; pass at least one 2-D array")
    n = len(maps)
    cols = n if cols is None else max(1, min(int(cols), n))
    rows = (n + cols - 1) // cols
    fig, axes = subplots(rows, cols, width=width, height=height)
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        ax.imshow(
            np.asarray(maps[k]), cmap=cmap, vmin=vmin, vmax=vmax, aspect=aspect, interpolation="nearest"
        )
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if titles is not None:
            ax.set_title(titles[k], fontsize=title_size)
    if title:
        fig.suptitle(title)
    return fig, axes


def training_curves(
    ax,
    data,
    y: str,
    *,
    x: str = "step",
    xlabel: str = "step $t$",
    ylabel: str | None = None,
    boundary: float | None = None,
    **lineplot_kwargs: Any,
):
    """A metric over training: ``seaborn.lineplot`` of column ``y`` against ``x`` of ``data`` on ``ax``.

    ``boundary`` draws a dotted vertical line (e.g. the switch between the two stages of Ren &
    Li 2023, Algorithm 3.1, Fig. 1); other keywords go to ``seaborn.lineplot`` (``hue``, ``units``,
    ``estimator``, ...). Returns ``ax``.
    """
    sns.lineplot(data=data, x=x, y=y, ax=ax, **lineplot_kwargs)
    if boundary is not None:
        ax.axvline(boundary, color="0.5", ls=":", lw=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(y if ylabel is None else ylabel)
    return ax


def unit_circle(ax, **kwargs: Any) -> None:
    """Draw the unit circle (light grey) on ``ax`` and make its aspect equal (2-D weights or outputs)."""
    style = {"color": "0.8", "lw": 1}
    style.update(kwargs)
    circle = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(circle), np.sin(circle), **style)
    ax.set_aspect("equal")
