"""Figure style shared by all chapters: seaborn theme, labeled axes, the papers' notation."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import seaborn as sns

__all__ = ["setup", "subplots", "mark_vertical"]


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
