"""Figures of ``book/esser-grassmann.py`` (Esser et al. 2024, Fig. 3, Theorem 3, Fig. 4, Lemma 2).

Each function draws one figure of the chapter on axes from :func:`nlcl.core.plotting.subplots`
(seaborn style), labeled in the paper's notation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from nlcl.core import plotting
from nlcl.esser.grassmann import alignment

__all__ = ["fig3_panels", "loglog_axes", "timing_panel", "lemma2_panel", "theorem3_panels"]


def loglog_axes(ax: Any, xlabel: str, ylabel: str, *, y_log: bool = True) -> None:
    """Log (or log-log) axes with labels and a small legend: the layout of every run-time plot."""
    ax.set_xscale("log")
    if y_log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def fig3_panels(axes: Sequence[Any], runs: Mapping[int, Mapping[str, Any]], n_init: int, lam1: float) -> None:
    """Fig. 3 (Esser et al. 2024): loss of projected GD (Eq. 11, solid) and of Eq. 12 (dashed) per
    step (left, λ₁ dotted), and the outputs (q₁, q₂) from the same q₀ (right, dots).

    ``runs[h]``: the output of :func:`nlcl.esser.grassmann_experiments.compare_flows` at width h.
    """
    ax_l, ax_q = axes
    for i, (h, f) in enumerate(runs.items()):
        for s in range(n_init):
            first = s == 0
            ax_l.plot(
                f["t"], f["gd"].loss[:, s], color=f"C{i}", lw=1,
                label=f"GD (11), h = {h}" if first else None,
            )  # fmt: skip
            ax_l.plot(
                f["t"], f["loss_ode"][:, s], color=f"C{i}", lw=1, ls="--",
                label=f"ODE (12), h = {h}" if first else None,
            )  # fmt: skip
            qg, qo = f["gd"].observed[:, s, :, 0].numpy(), f["q_ode"][:, s, :, 0].numpy()
            ax_q.plot(qg[:, 0], qg[:, 1], color=f"C{i}", lw=1)
            ax_q.plot(qo[:, 0], qo[:, 1], color=f"C{i}", lw=1, ls="--")
            ax_q.plot(qg[0, 0], qg[0, 1], "o", color=f"C{i}", ms=3)
    ax_l.axhline(lam1, color="k", ls=":", lw=1)
    ax_l.set_xlabel("step $t$")
    ax_l.set_ylabel(r"$\mathcal{L} = \mathrm{Tr}(q^\top\Lambda q)$")
    ax_l.set_title("loss: projected GD (solid) vs Eq. 12 (dashed)")
    ax_l.legend(fontsize="x-small", ncol=2)
    plotting.unit_circle(ax_q)
    ax_q.set_xlabel(r"$q_1 = u(v_1)$")
    ax_q.set_ylabel(r"$q_2 = u(v_2)$")
    ax_q.set_title("outputs from the same $q_0$ (dots)")


def theorem3_panels(
    axes: Sequence[Any], paths: Mapping[str, torch.Tensor], t: np.ndarray, e1: torch.Tensor
) -> None:
    """Theorem 3 (Esser et al. 2024): ‖q(t)‖ and |cos(q(t), e₁)| for every initialisation, one
    panel per spectrum (``paths[name]`` of shape (T, n, d, 1)), symlog time axis."""
    for ax, (name, qs) in zip(axes, paths.items()):
        for s in range(qs.shape[1]):
            norm = torch.linalg.matrix_norm(qs[:, s]).numpy()
            cos = alignment(qs[:, s], e1).numpy()
            ax.plot(t, norm, color="C0", lw=1, label=r"$\|q\|$" if s == 0 else None)
            ax.plot(
                t, cos, color="C3", lw=1, ls="--",
                label=r"$|\cos(q, e_1)|$" if s == 0 else None,
            )  # fmt: skip
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlabel("time $t$")
        ax.set_ylabel("value")
        ax.set_title(name)
        ax.legend(fontsize="small")


def timing_panel(ax: Any, timings: pd.DataFrame, fig4: pd.DataFrame, widths: Sequence[int]) -> pd.Series:
    """Time per projected-GD step (Eq. 11) against h at large widths: every interleaved repeat
    (grey), their median, the Fig. 4 widths and a line ∝ h through the widest. Returns the median
    time per width (seconds)."""
    for rep, g in timings.groupby("repeat"):
        g = g.sort_values("key")
        label = "one repeat" if rep == 0 else None
        ax.plot(g.key, g.seconds * 1e3, color="0.75", lw=1, label=label)
    t_median = timings.groupby("key").seconds.median()
    ax.plot(t_median.index, t_median.values * 1e3, "o-", color="C0", label="median, large widths")
    ax.plot(fig4.h, fig4.gd_time * 1e3, "s--", color="C1", label="Fig. 4 widths (overhead-bound)")
    hh = np.array(widths, dtype=float)
    ax.plot(hh, 1e3 * t_median.values[-1] * hh / hh[-1], "k:", lw=1, label=r"$\propto h$")
    loglog_axes(ax, "hidden width $h$", "time per projected-GD step (ms)")
    return t_median


def lemma2_panel(
    ax: Any, h: np.ndarray, scaled: np.ndarray, reference: np.ndarray, scale: np.ndarray
) -> None:
    """Lemma 2 (Esser et al. 2024, appendix): max|Q_ij|·√h/log h per draw (5–95% band, median,
    largest) and the Gaussian reference, against the height h; L = 1 dotted."""
    lo, hi = np.quantile(scaled, [0.05, 0.95], axis=1)
    ax.fill_between(h, lo, hi, color="C0", alpha=0.2, label="5–95% of draws")
    ax.plot(h, np.median(scaled, axis=1), "o-", color="C0", label="median over draws")
    ax.plot(h, scaled.max(axis=1), "v", color="C0", ms=4, label="largest draw")
    ax.plot(h, reference / scale, "k--", lw=1, label="Gaussian reference (median)")
    ax.axhline(1.0, color="C3", ls=":", lw=1, label="$L = 1$")
    ax.set_xscale("log")
    ax.set_xlabel("height $h$ of $Q$")
    ax.set_ylabel(r"$\max_{ij}|Q_{ij}|\cdot\sqrt{h}/\log h$")
    ax.legend(fontsize="small", loc="lower left")
