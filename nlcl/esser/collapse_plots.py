"""Figures of the chapter ``book/esser-collapse.py`` (Esser, Mukherjee & Ghoshdastidar 2024).

One function per figure, each drawing what the chapter used to draw inline (seaborn style of
:mod:`nlcl.core.plotting`, the paper's notation); the width sweeps of Lemma 1 and Remark 1 share
:func:`width_sweep` (one grey curve per initialisation, the centre in colour, an h^(−1/2) guide).
Every function returns the figure; the chapter shows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from nlcl.core import plotting

__all__ = [
    "fig1_constraints",
    "fig2_gaps",
    "half_power_guide",
    "initial_gaps",
    "lemma1_panels",
    "pq_eigenvalues",
    "prop1_collapse",
    "prop3_losses",
    "remark1_panels",
    "remark2_panels",
    "remark3_projectors",
    "width_axes",
    "width_sweep",
]


def half_power_guide(ax: Any, hs: Sequence[float], y0: float) -> None:
    """A dotted guide ∝ h^(−1/2) through ``y0`` at the first width."""
    hs = np.asarray(hs, dtype=float)
    ax.plot(hs, y0 * np.sqrt(hs[0] / hs), "k:", lw=1, label=r"$\propto h^{-1/2}$")


def width_axes(ax: Any, widths: Sequence[int], ylabel: str) -> None:
    """Log-log axes against the width h, ticked at ``widths``."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(widths, [str(h) for h in widths], rotation=45)
    ax.minorticks_off()
    ax.set_xlabel("width $h$")
    ax.set_ylabel(ylabel)


def width_sweep(ax: Any, table: pd.DataFrame, centre: pd.Series, label: str, color: str = "C3") -> None:
    """One grey curve per column of ``table`` (index: width; infinite values left out), ``centre``
    in colour with markers, and the h^(−1/2) guide through its first value."""
    for s in table.columns:
        ax.plot(table.index, table[s].replace(np.inf, np.nan), color="0.7", lw=1)
    ax.plot(centre.index, centre.values, "o-", color=color, label=label)
    half_power_guide(ax, centre.index, centre.iloc[0])


def prop1_collapse(p1: pd.DataFrame) -> Any:
    """Proposition 1: λ₂/λ₁ of the output covariance along training, linear and kernel models."""
    fig, axes = plotting.subplots(1, 2, width=4.4)
    for ax, model in zip(axes[0], ("linear", "kernel")):
        sns.lineplot(
            p1[p1.model == model], x="step", y="ratio", hue="loss", units="init", estimator=None, ax=ax, lw=1
        )
        ax.set_yscale("log")
        ax.set_xlabel("gradient step $t$")
        ax.set_ylabel(r"$\lambda_2/\lambda_1$ of $\mathrm{Cov}[u(x)]$")
        ax.set_title(r"$u(x) = \Theta x$" if model == "linear" else r"$u(x) = \Theta\psi(x)$ (kernel)")
    return fig


def prop3_losses(p3: pd.DataFrame, optimum: float, d: int, z: int) -> Any:
    """Proposition 3: the loss of each formulation along training, and the optimum."""
    fig, axes = plotting.subplots(1, 1, width=6)
    ax = axes[0, 0]
    sns.lineplot(p3, x="step", y="loss", hue="formulation", units="init", estimator=None, ax=ax, lw=1)
    ax.axhline(optimum, color="k", ls=":", label=r"$\sum_{i\leq \min(z,l)}\lambda_i$")
    ax.set_xlabel("gradient step $t$")
    ax.set_ylabel(r"$\mathcal{L}$ (scaled loss for (1))")
    ax.set_title(f"Proposition 3: random symmetric $C$, $d={d}$, $z={z}$")
    ax.legend(fontsize="small")
    return fig


def fig1_constraints(fig1: dict[str, Any], n_init: int, lam1: float) -> Any:
    """Fig. 1: loss curves and output trajectories q = [u(v₁), u(v₂)] per constraint."""
    fig, axes = plotting.subplots(1, 2, width=5.0, height=3.8)
    ax_l, ax_q = axes[0]
    for i, (constraint, tr) in enumerate(fig1.items()):
        for s in range(n_init):
            ok = tr.steps < (tr.diverged_at[s] if tr.diverged_at[s] >= 0 else np.inf)
            ax_l.plot(tr.steps[ok], tr.loss[ok, s], color=f"C{i}", lw=1, label=constraint if s == 0 else None)
            q = tr.observed[ok, s].numpy()
            ax_q.plot(q[:, 0], q[:, 1], color=f"C{i}", lw=1, alpha=0.8)
            ax_q.plot(q[-1, 0], q[-1, 1], "o", color=f"C{i}", ms=3)
    ax_l.set_yscale("symlog", linthresh=1.0)
    ax_l.axhline(lam1, color="k", ls=":", lw=1)
    ax_l.set_xlabel("gradient step $t$")
    ax_l.set_ylabel(r"$\mathcal{L} = \mathrm{Tr}(W_2^\top W_1 C W_1^\top W_2)$")
    ax_l.set_title(r"loss (diverged runs end at weights $> 10^6$)")
    ax_l.legend(fontsize="small")
    plotting.unit_circle(ax_q)
    ax_q.set_xlim(-2.5, 2.5)
    ax_q.set_ylim(-2.5, 2.5)
    ax_q.set_xlabel(r"$q_1 = u(v_1)$")
    ax_q.set_ylabel(r"$q_2 = u(v_2)$")
    ax_q.set_title("output trajectories (window clipped)")
    return fig


def fig2_gaps(gaps: pd.DataFrame, acts: Sequence[str], widths: Sequence[int], last: int) -> Any:
    """Fig. 2: the mean gap along training per width (top) and against h at initialisation and
    after ``last`` epochs (bottom), one column per activation."""
    mean_gap = gaps.groupby(["activation", "epoch", "h"]).gap.mean()
    fig, axes = plotting.subplots(2, len(acts), width=3.6, height=3.0)
    norm = plt.matplotlib.colors.LogNorm(min(widths), max(widths))
    for j, act in enumerate(acts):
        ax = axes[0, j]
        for h in widths:
            s = mean_gap.loc[act].xs(h, level="h")
            ax.plot(s.index, s.values, color=plt.cm.viridis(norm(h)))
        ax.set_yscale("log")
        ax.set_xlabel("epoch")
        ax.set_ylabel(r"$\|u^\phi - u^{\mathbb{I}}\|$")
        ax.set_title(f"$\\phi$ = {act}")
        ax = axes[1, j]
        sub = gaps[(gaps.activation == act) & gaps.epoch.isin([0, last])]
        sub = sub.assign(when=sub.epoch.map({0: "initialisation", last: f"epoch {last}"}))
        sns.lineplot(sub, x="h", y="gap", hue="when", marker="o", ax=ax, errorbar="sd")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("hidden width $h$")
        ax.set_ylabel(r"$\|u^\phi - u^{\mathbb{I}}\|$")
    fig.colorbar(plt.cm.ScalarMappable(norm=norm, cmap="viridis"), ax=axes[0, -1], label="$h$")
    return fig


def initial_gaps(gap0: pd.DataFrame, n_init_gap: int) -> Any:
    """Theorem 1 at initialisation: the mean gap against h per activation, with its standard error."""
    fig, axes = plotting.subplots(1, 1, width=5, height=3.4)
    ax = axes[0, 0]
    sns.lineplot(gap0, x="h", y="gap", hue="activation", marker="o", errorbar="se", ax=ax)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("hidden width $h$")
    ax.set_ylabel(r"mean $\|u^\phi_{(0)} - u^{\mathbb{I}}_{(0)}\|$")
    ax.set_title(f"Theorem 1 at initialisation, {n_init_gap} initialisations per width")
    return fig


def lemma1_panels(
    kernel: dict[str, pd.DataFrame],
    dyn_tab: pd.DataFrame,
    l1_max: pd.DataFrame,
    widths: Sequence[int],
    time_per_step: float,
) -> Any:
    """Lemma 1: the tangent-kernel blocks against h; the network's distance to the decoupled
    kernel dynamics over time; its largest value against h."""
    fig, axes = plotting.subplots(1, 3, width=3.8, height=3.2)
    ax = axes[0, 0]
    for key, label in (
        ("off", r"$\|\Theta_{lj}\|/\|\Theta_{ll}\|,\ l\neq j$"),
        ("diag", r"$\|\Theta_{ll}-K\|/\|K\|$"),
    ):
        ax.plot(kernel[key].index, kernel[key].mean(axis=1), "o-", label=label)
    half_power_guide(ax, widths, kernel["diag"].mean(axis=1).iloc[0])
    width_axes(ax, widths, "relative size at initialisation")
    ax.set_title("Lemma 1: tangent-kernel blocks")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    norm_h = plt.matplotlib.colors.LogNorm(min(widths), max(widths))
    curves = dyn_tab.groupby(["h", "step"]).error.median()  # median: overflowed networks are at +inf
    for h in widths:
        c_ = curves.loc[h]
        ax.plot(c_.index * time_per_step, c_.values, color=plt.cm.viridis(norm_h(h)))
    ax.set_yscale("log")
    ax.set_xlabel("time $t$ (= step × η)")
    ax.set_ylabel(r"$\|u^{\mathrm{net}}_t-u^{\mathrm{ker}}_t\|_F/\|u^{\mathrm{ker}}_t\|_F$")
    ax.set_title("network vs decoupled kernel dynamics")
    fig.colorbar(plt.cm.ScalarMappable(norm=norm_h, cmap="viridis"), ax=ax, label="$h$")
    ax = axes[0, 2]
    width_sweep(ax, l1_max, l1_max.median(axis=1), "median over initialisations")
    width_axes(ax, widths, "largest relative distance over the horizon")
    ax.legend(fontsize="small")
    return fig


def remark1_panels(
    r1: pd.DataFrame,
    kernel_gap: float,
    joint: torch.Tensor,
    separate: torch.Tensor,
    y: torch.Tensor,
    widths: Sequence[int],
) -> Any:
    """Remark 1: the joint/separate regression gap against h; joint against separate outputs at
    the largest width (first initialisation)."""
    fig, axes = plotting.subplots(1, 2, width=4.4, height=3.4)
    ax = axes[0, 0]
    table = r1.pivot(index="h", columns="init", values="network")
    width_sweep(ax, table, r1.groupby("h").network.mean(), "both layers trained (mean)", color="C0")
    ax.text(0.03, 0.04, f"output layer only: largest gap {kernel_gap:.1e}", transform=ax.transAxes)
    width_axes(ax, widths, r"$\|U_{\mathrm{joint}}-U_{\mathrm{sep}}\|_F/\|U_{\mathrm{joint}}-U_0\|_F$")
    ax.set_title("Remark 1: joint vs univariate regressions")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    for l_ in range(joint.shape[-1]):
        ax.plot(separate[0, :, l_], joint[0, :, l_], "o", ms=3, label=f"output {l_ + 1}", color=f"C{l_}")
    lims = [float(y.min()) - 0.2, float(y.max()) + 0.2]
    ax.plot(lims, lims, "k:", lw=1)
    ax.set_xlabel(r"$u_l(x_i)$, output trained alone")
    ax.set_ylabel(r"$u_l(x_i)$, outputs trained jointly")
    ax.set_title(f"largest width $h = {max(widths)}$, one initialisation")
    ax.legend(fontsize="small")
    return fig


def remark2_panels(r2: dict[str, dict], eps_grid: np.ndarray, coupling: np.ndarray) -> Any:
    """Remark 2: λ₂/λ₁ along training per loss; InfoNCE's gradient coupling against the scale ε."""
    fig, axes = plotting.subplots(1, 2, width=4.4, height=3.2)
    ax = axes[0, 0]
    for i, (name, v) in enumerate(r2.items()):
        steps_axis = np.linspace(0, v["steps"], len(v["ratio"]))
        for s in range(v["ratio"].shape[1]):
            ax.plot(
                steps_axis, v["ratio"][:, s].clip(1e-17), color=f"C{i}", lw=1, label=name if s == 0 else None
            )
    ax.set_yscale("log")
    ax.set_xlabel("gradient step")
    ax.set_ylabel(r"$\lambda_2/\lambda_1$ of $\mathrm{Cov}[\Theta x]$")
    ax.set_title(r"linear model $u = \Theta x$, $z = 3$")
    ax.legend(fontsize="small")
    ax = axes[0, 1]
    for s in range(coupling.shape[1]):
        ax.plot(eps_grid, coupling[:, s], "o-", color="C1", lw=1, ms=3)
    ax.plot(
        eps_grid,
        coupling.mean(1)[0] * (eps_grid / eps_grid[0]) ** 2,
        "k:",
        lw=1,
        label=r"$\propto\epsilon^2$",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"output scale $\epsilon$ ($\Theta = \epsilon\Theta_1$)")
    ax.set_ylabel("row coupling of the InfoNCE gradient")
    ax.legend(fontsize="small")
    return fig


def remark3_projectors(r3: dict[str, dict]) -> Any:
    """Remark 3: λ₂/λ₁ of Cov[AΘx] over time per projector, with the predicted rate (dotted)."""
    fig, axes = plotting.subplots(1, 1, width=5.2, height=3.4)
    ax = axes[0, 0]
    for i, (name, v) in enumerate(r3.items()):
        for s in range(v["ratio"].shape[1]):
            ax.plot(v["t"], v["ratio"][:, s].clip(1e-18), color=f"C{i}", lw=1, label=name if s == 0 else None)
        t0_ = v["t"][np.argmax(v["ratio"][:, 0] < 1e-3)]
        ax.plot(v["t"], 1e-3 * np.exp(-v["predicted"] * (v["t"] - t0_)), color=f"C{i}", ls=":", lw=1)
    ax.set_yscale("log")
    ax.set_ylim(1e-18, 2)
    ax.set_xlabel("time $t$ (= step × η)")
    ax.set_ylabel(r"$\lambda_2/\lambda_1$ of $\mathrm{Cov}[A\Theta x]$")
    ax.set_title("Remark 3: fixed projector (dotted: predicted rate)")
    ax.legend(fontsize="small")
    return fig


def pq_eigenvalues(mu: np.ndarray, second: np.ndarray, rows: Sequence[dict]) -> Any:
    """p/q construction: the largest eigenvalue of E[C]/(np) against q/p, formula and Monte Carlo."""
    fig, axes = plotting.subplots(1, 1, width=4.8, height=3.2)
    ax = axes[0, 0]
    q_grid = np.linspace(0, 6, 61)
    formula = [
        float(torch.linalg.eigvalsh(torch.as_tensor(k * np.outer(mu, mu) - second))[-1]) for k in q_grid
    ]
    ax.plot(q_grid, formula, "k-", lw=1, label=r"formula $q/p\,\mu\mu^\top - \mathbb{E}[xx^\top]$")
    for r_ in rows:
        ax.plot(
            r_["q"] / r_["p"],
            r_["top_eig_mc"] / r_["p"],
            "o",
            color="C3",
            label="Monte Carlo" if r_ is rows[0] else None,
        )
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_xlabel("negatives per positive $q/p$")
    ax.set_ylabel(r"largest eigenvalue of $\mathbb{E}[C]/(np)$")
    ax.set_title("raw half moons: many negatives make $\\mathbb{E}[C]$ indefinite")
    ax.legend(fontsize="small")
    return fig
