"""Tables and the figure of the linear-probe comparison of the Tian 2023 poster (MNIST analog).

The poster of Tian (2023) compares the quadratic loss (α-CL with uniform α, Sec. 2) with InfoNCE
(Eq. 1) by accuracy on CIFAR-10 and STL-10 (encoder, training and evaluation protocol not
stated on the poster). The chapter ``book/tian-poster-probe.py``
repeats the comparison on MNIST with :mod:`nlcl.tian.simclr_probe`; this module holds its tables:

* :data:`POSTER_TABLE` — the poster's accuracies (shown for context, not re-run);
* :func:`probe_table` — one row per run and baseline (raw pixels, random-init encoder, trained
  encoders) with its linear-probe accuracy;
* :func:`accuracy_summary` — mean and standard deviation over seeds per method (in %), beside the
  poster's numbers;
* :func:`plot_training_and_probes` — the training losses per loss and the probe accuracies.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from nlcl.core.validate import ParameterError

__all__ = ["POSTER_TABLE", "probe_table", "accuracy_summary", "plot_training_and_probes"]

#: Accuracy (%) of the Tian 2023 poster's table (mean ± std; the poster states no encoder, training
#: or evaluation protocol).
POSTER_TABLE = pd.DataFrame(
    {
        "CIFAR-10 (poster)": ["—", "—", "87.86 ± 0.12", "73.58 ± 0.82"],
        "STL-10 (poster)": ["—", "—", "83.70 ± 0.12", "67.28 ± 1.21"],
    },
    index=["raw pixels", "random-init encoder", "infonce encoder", "quadratic encoder"],
)


def probe_table(
    seeds: Sequence[int],
    losses: Sequence[str],
    acc: Sequence[float],
    acc_init: Sequence[float],
    acc_pixels: float,
) -> pd.DataFrame:
    """One row per (method, seed) with its linear-probe accuracy (a fraction).

    ``seeds``, ``losses`` and ``acc`` have one entry per trained run (2S: the S seeds once per
    loss); ``acc_init`` one per seed (the random-init encoder of runs 0..S−1); ``acc_pixels`` is
    the probe on raw pixels, the same for every seed. Rows: raw pixels, random-init encoder, then
    "<loss> encoder" per run, in that order.
    """
    n_seeds = len(acc_init)
    if not (len(seeds) == len(losses) == len(acc)) or len(seeds) < n_seeds:
        raise ParameterError(
            f"one seed, loss and accuracy per run: {len(seeds)} seeds, {len(losses)} losses, "
            f"{len(acc)} accuracies; acc_init has {n_seeds} (one per seed)"
        )
    rows = [dict(method="raw pixels", seed=s, accuracy=acc_pixels) for s in seeds[:n_seeds]]
    rows += [
        dict(method="random-init encoder", seed=s, accuracy=a) for s, a in zip(seeds[:n_seeds], acc_init)
    ]
    rows += [dict(method=f"{loss} encoder", seed=s, accuracy=a) for s, loss, a in zip(seeds, losses, acc)]
    return pd.DataFrame(rows)


def accuracy_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of each method's accuracy, in %, rounded to 0.01,
    joined with :data:`POSTER_TABLE` (the poster's numbers, not re-run)."""
    summary = table.groupby("method", sort=False)["accuracy"].agg(["mean", "std"]).mul(100).round(2)
    summary.columns = ["accuracy mean (%)", "std over seeds (%)"]
    return summary.join(POSTER_TABLE).rename_axis("MNIST analog (this run); poster numbers not re-run")


def plot_training_and_probes(history: np.ndarray, losses: Sequence[str], table: pd.DataFrame):
    """Left and middle: the training loss per step of every InfoNCE and every quadratic run
    (``history`` (steps, runs); the two losses have different scales). Right: the linear-probe
    accuracy of every row of :func:`probe_table`. Returns the figure."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    steps_axis = np.arange(1, history.shape[0] + 1)
    for ax, name, color in zip(axes[:2], ("infonce", "quadratic"), sns.color_palette()[:2]):
        for r in range(len(losses)):
            if losses[r] == name:
                ax.plot(steps_axis, history[:, r], lw=1, color=color)
        ax.set_xlabel("minibatch $t$")
        ax.set_title(name)
    axes[0].set_ylabel(r"$\mathcal{L}_{nce}(t)$ (Eq. 1, ÷ N)")
    axes[1].set_ylabel(r"$\mathcal{L}_{quad}(t)$ (÷ N)")
    sns.stripplot(table, x="accuracy", y="method", ax=axes[2], size=7)
    axes[2].set_xlabel("linear-probe accuracy on held-out images")
    axes[2].set_ylabel("")
    return fig
