"""The figures of the linear simulation chapter ``book/renli-simulation.py`` (Ren & Li 2023).

* :func:`fig1_curves` — alignment, κ(U_A), stable rank and noise-to-signal ratio over training
  (their Fig. 1), and :func:`kappa_curves`, the same for every κ of the sweep;
* :func:`stage1_figure` — stage 1 ≈ non-contrastive (Sec. 5.3 / Lemma B.9);
* :func:`sweep_figure` — the final balance against κ and λ (Thm. 4.3 / Lemma 5.3);
* :func:`lemma_figure` — the explicit Lemmas 4.4 and 4.5 on every state;
* :func:`tracking_figure` and :func:`amplification_figure` — finite width against infinite width
  (Lemmas 5.1-5.3) and the amplification of the initial error (Lemma 5.2).

Built on the shared style of :mod:`nlcl.core.plotting`; each function returns the figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from nlcl.core import plotting
from nlcl.renli.tracking import gram_condition_number, tracking_error

__all__ = [
    "METRIC_LABELS",
    "amplification_figure",
    "fig1_curves",
    "kappa_curves",
    "lemma_figure",
    "stage1_figure",
    "sweep_figure",
    "tracking_figure",
]

#: Axis labels of the four metrics of the simulation (:mod:`nlcl.renli.metrics`).
METRIC_LABELS = {
    "alignment": "alignment score",
    "condition_number": r"condition number $\kappa(U_A)$",
    "stable_rank": r"stable rank $\mathrm{tr}\,\Sigma/\lambda_{\max}(\Sigma)$",
    "noise_to_signal": r"$\|W_AH_A\|_F/\|W_AM_A\|_F$",
}


def fig1_curves(main: pd.DataFrame, *, boundary: int, total: int, r: int, title: str):
    """Fig. 1 layout: the four metrics over training, one thin line per seed and method; a dotted
    line at the switch from β₁ to β₂ (``boundary``), a dashed line at r in the stable-rank panel."""
    fig, axes = plotting.subplots(1, 4, width=3.6, height=3.0)
    for ax, (metric, label) in zip(axes[0], METRIC_LABELS.items()):
        plotting.training_curves(
            ax,
            main,
            metric,
            xlabel="SGD step $t$",
            ylabel=label,
            boundary=boundary,
            hue="method",
            units="seed",
            estimator=None,
            lw=1.2,
            hue_order=["non-contrastive", "contrastive"],
            legend=metric == "alignment",
        )
    axes[0][2].axhline(r, color="0.3", ls="--", lw=0.8)
    axes[0][2].annotate("$r$", (total, r), ha="right", va="bottom")
    axes[0][1].set_yscale("log")
    axes[0][3].set_yscale("log")
    fig.suptitle(title)
    return fig


def kappa_curves(main_k: pd.DataFrame, *, boundary: int):
    """Condition number and stable rank over training for every κ (colour) and method (style)."""
    fig, axes = plotting.subplots(1, 2, width=4.8, height=3.2)
    for ax, metric in zip(axes[0], ("condition_number", "stable_rank")):
        plotting.training_curves(
            ax,
            main_k,
            metric,
            xlabel="SGD step $t$",
            ylabel=METRIC_LABELS[metric],
            boundary=boundary,
            hue="kappa",
            style="method",
            units="seed",
            estimator=None,
            palette="viridis",
            lw=1.1,
            legend=metric == "condition_number",
            style_order=["non-contrastive", "contrastive"],
        )
    axes[0][0].set_yscale("log")
    axes[0][0].legend(fontsize="x-small", ncol=2)
    return fig


def stage1_figure(
    s1: pd.DataFrame, dev: pd.DataFrame, dev_med: pd.Series, beta1s: Sequence[float], beta1: float
):
    """Left: κ(U_A) during stage 1, non-contrastive and contrastive per β₁. Right: δ(β₁) per seed
    with a line ∝ β₁ through the median at ``beta1`` (Sec. 5.3 / Lemma B.9)."""
    fig, axes = plotting.subplots(1, 2, width=4.6, height=3.2)
    ax = axes[0][0]
    curve = np.where(s1.lam == 0, "non-contrastive", "contrastive, β₁=" + s1.beta1.astype(str))
    plotting.training_curves(
        ax,
        s1.assign(curve=curve),
        "condition_number",
        xlabel="SGD step $t$ (stage 1)",
        ylabel=r"condition number $\kappa(U_A)$",
        hue="curve",
        units="seed",
        estimator=None,
        lw=1.1,
    )
    ax.legend(fontsize="small")
    ax = axes[0][1]
    sns.lineplot(data=dev, x="beta1", y="delta", units="seed", estimator=None, marker="o", ax=ax)
    bb = np.array(beta1s)
    ax.plot(bb, dev_med.loc[beta1] * bb / beta1, "k--", lw=0.8, label=r"$\propto\beta_1$")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"stage-1 inverse temperature $\beta_1$")
    ax.set_ylabel(r"relative deviation $\delta(\beta_1)$ at $t_1$")
    ax.legend()
    return fig


def sweep_figure(sweep_k: pd.DataFrame, lam_curves: pd.DataFrame, *, boundary: int, r: int):
    """Final κ(U_A) and stable rank against κ per method, and κ(U_A) over training per λ."""
    fig, axes = plotting.subplots(1, 3, width=3.8, height=3.1)
    for ax, metric in zip(axes[0][:2], ("condition_number", "stable_rank")):
        sns.lineplot(
            data=sweep_k,
            x="kappa",
            y=metric,
            hue="method",
            marker="o",
            errorbar=("pi", 100),
            ax=ax,
            hue_order=["non-contrastive", "contrastive"],
            legend=metric == "condition_number",
        )
        ax.set_xlabel(r"signal condition number $\kappa$")
        ax.set_ylabel("final " + METRIC_LABELS[metric])
    axes[0][1].axhline(r, color="0.3", ls="--", lw=0.8)
    ax = axes[0][2]
    plotting.training_curves(
        ax,
        lam_curves,
        "condition_number",
        xlabel="SGD step $t$",
        ylabel=r"$\kappa(U_A)$ (median over seeds)",
        boundary=boundary,
        hue="lam",
        palette="viridis",
        errorbar=None,
    )
    ax.set_yscale("log")
    ax.legend(title=r"$\lambda$", fontsize="small")
    return fig


def lemma_figure(lemmas: pd.DataFrame, kstar: float, r: int):
    """Left: alignment against κ(U_A)/K* (Lemma 4.4 holds left of 1). Right: stable rank against
    κ(U_A) with Lemma 4.5's bound at η = 0 (it holds left of κ*)."""
    fig, axes = plotting.subplots(1, 2, width=4.6, height=3.4)
    ax = axes[0, 0]
    markers = {"init": "o", "stage1": "s", "final": "D"}
    for (stage, method), g in lemmas.groupby(["stage", "method"]):
        ax.scatter(
            g.kappa / g.kappa_bound,
            g.alignment,
            marker=markers[stage],
            color="C0" if method == "non-contrastive" else "C1",
            s=22,
            label=f"{method}, {stage}",
        )
    ax.axvline(1.0, color="k", ls=":", lw=1)
    ax.axhline(float(lemmas.distinct.mean()), color="0.5", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel(r"$\kappa(U_A)/K^*$ (Lemma 4.4 holds left of 1)")
    ax.set_ylabel("alignment score (Def. 4.1)")
    ax.legend(fontsize="x-small", ncol=2)
    ax = axes[0, 1]
    kk = np.linspace(1.0, max(2.0, float(lemmas.kappa.max())), 200)
    ax.plot(kk, 1 + (r - 1) / kk**2, "k-", lw=1, label=r"bound $1 + (r-1)/\kappa^2$ ($\eta = 0$)")
    for (stage, method), g in lemmas.groupby(["stage", "method"]):
        ax.scatter(
            g.kappa, g.srank, marker=markers[stage], color="C0" if method == "non-contrastive" else "C1", s=22
        )
    ax.axvline(kstar, color="k", ls=":", lw=1)
    ax.axhline(0.85 * r, color="0.5", ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel(r"$\kappa(U_A)$ (Lemma 4.5 holds left of $\kappa^*$)")
    ax.set_ylabel(r"stable rank of $\mathrm{Cov}\,f_A$")
    ax.legend(fontsize="x-small")
    return fig


def _width_norm(widths: Sequence[int]):
    return plt.matplotlib.colors.LogNorm(min(widths), max(widths))


def tracking_figure(
    t_steps: np.ndarray,
    G_all: torch.Tensor,
    kappa_inf: torch.Tensor,
    track: pd.DataFrame,
    widths: Sequence[int],
    *,
    seed: int,
    track_steps: int,
    r: int,
    r_xi: int,
):
    """Left: κ(U_A) over the population-loss steps per width (first seed, ``seed``) and at infinite
    width. Middle: the tracking error per width (mean over seeds). Right: the largest errors against
    the width with an m^(-1/2) line (Lemmas 5.1-5.3)."""
    G_inf = G_all[:, 0]
    fig, axes = plotting.subplots(1, 3, width=3.8, height=3.2)
    ax = axes[0, 0]
    norm_m = _width_norm(widths)
    for j, m in enumerate(widths):
        kap = gram_condition_number(G_all[:, j + 1, 0], r, r_xi)
        ax.plot(t_steps, kap, color=plt.cm.viridis(norm_m(m)), lw=1)
    ax.plot(t_steps, kappa_inf[:, 0], "k--", lw=1.5, label=r"$m=\infty$")
    ax.axvline(track_steps, color="0.5", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("step $t$ (population loss)")
    ax.set_ylabel(rf"$\kappa(U_A)$ (seed {seed})")
    ax.legend(fontsize="small")
    fig.colorbar(plt.cm.ScalarMappable(norm=norm_m, cmap="viridis"), ax=ax, label="width $m$")
    ax = axes[0, 1]
    for j, m in enumerate(widths):
        err = tracking_error(G_all[:, j + 1], G_inf, r, r_xi).mean(1)
        ax.plot(t_steps, err, color=plt.cm.viridis(norm_m(m)), lw=1)
    ax.axvline(track_steps, color="0.5", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("step $t$")
    ax.set_ylabel(r"$\|\hat G_m-\hat G_\infty\|_F/\|\hat G_\infty\|_F$ (mean over seeds)")
    ax = axes[0, 2]
    for key, label in (("stage1", "stage 1"), ("stage2", "stage 2"), ("condition", r"$\kappa(U_A)$")):
        mean_ = track.groupby("m")[key].mean()
        ax.plot(mean_.index, mean_.values, "o-", label=label)
    mm = np.array(widths, dtype=float)
    ax.plot(
        mm,
        track.groupby("m").stage1.mean().iloc[0] * np.sqrt(mm[0] / mm),
        "k:",
        lw=1,
        label=r"$\propto m^{-1/2}$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("width $m$")
    ax.set_ylabel("largest relative error")
    ax.legend(fontsize="small")
    return fig


def amplification_figure(
    t_steps: np.ndarray,
    norm_dG: torch.Tensor,
    norm_e: torch.Tensor,
    remainder: torch.Tensor,
    batch_err: torch.Tensor,
    widths: Sequence[int],
    *,
    seed: int,
    track_steps: int,
    track_batch: int,
):
    """Left: the measured error ‖ΔG_t‖/‖ΔG_0‖ (solid) and the first-order one (dashed) per width,
    first seed (``seed``). Right: the remainder and the finite-batch error against the width
    (Lemma 5.2, Thm. 4.3)."""
    norm_m = _width_norm(widths)
    fig, axes = plotting.subplots(1, 2, width=4.2, height=3.2)
    ax = axes[0, 0]
    for j, m in enumerate(widths):
        col = plt.cm.viridis(norm_m(m))
        ax.plot(t_steps, norm_dG[:, j, 0] / norm_dG[0, j, 0], color=col, lw=1.2)
        ax.plot(t_steps, norm_e[:, j, 0] / norm_e[0, j, 0], color=col, lw=1, ls="--")
    ax.axvline(track_steps, color="0.5", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("step $t$")
    ax.set_ylabel(rf"$\|\Delta G_t\|/\|\Delta G_0\|$ (solid), first order (dashed); seed {seed}")
    ax = axes[0, 1]
    mm = np.array(widths, dtype=float)
    ax.plot(mm, remainder.mean(1), "o-", label="remainder (population)")
    ax.plot(mm, batch_err[1:].mean(1), "s-", label=f"error, batches of {track_batch}")
    ax.axhline(float(batch_err[0].mean()), color="0.4", ls="--", lw=1, label="infinite width, same batches")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("width $m$")
    ax.set_ylabel("relative error (mean over seeds)")
    ax.legend(fontsize="small")
    return fig
