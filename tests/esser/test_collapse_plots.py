"""nlcl.esser.collapse_plots: every figure of the esser-collapse chapter draws labeled axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from nlcl.esser import collapse_plots as plots  # noqa: E402


def _labeled(fig):
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert axes and all(ax.get_xlabel() and ax.get_ylabel() for ax in axes)
    plt.close(fig)


def test_width_sweeps():
    widths = [128, 256, 512]
    table = pd.DataFrame({0: [1.0, 0.7, 0.5], 1: [1.2, np.inf, 0.4]}, index=widths)
    kernel = {"off": table.replace(np.inf, 0.6), "diag": table.replace(np.inf, 0.6)}
    dyn = pd.DataFrame(
        [(h, s, step, 0.1 * step / h) for h in widths for s in (0, 1) for step in (0, 5, 10)],
        columns=["h", "init", "step", "error"],
    )
    _labeled(plots.lemma1_panels(kernel, dyn, table, widths, 0.1))
    r1 = pd.DataFrame(
        [(h, s, 1.0 / h**0.3, 0.0) for h in widths for s in (0, 1)],
        columns=["h", "init", "network", "kernel"],
    )
    y = torch.randn(8, 3)
    _labeled(plots.remark1_panels(r1, 0.0, y[None], y[None], y, widths))


def test_training_figures():
    p1 = pd.DataFrame(
        [(m, "contrastive", t, 0, 10.0**-t) for m in ("linear", "kernel") for t in range(5)],
        columns=["model", "loss", "step", "init", "ratio"],
    )
    _labeled(plots.prop1_collapse(p1))
    p3 = pd.DataFrame(
        [("(4)", t, 0, -1.0 - 1 / (t + 1)) for t in range(5)], columns=["formulation", "step", "init", "loss"]
    )
    _labeled(plots.prop3_losses(p3, -2.0, 6, 3))
    t = np.linspace(0, 5, 20)
    r3 = {"G": dict(t=t, ratio=np.exp(-np.outer(t, [1.0, 2.0])), predicted=1.0)}
    _labeled(plots.remark3_projectors(r3))
    r2 = {"spectral": dict(ratio=np.full((11, 2), 0.5), steps=100)}
    eps = np.array([1e-1, 1e-2, 1e-3])
    _labeled(plots.remark2_panels(r2, eps, np.outer(eps**2, [1.0, 2.0])))
    _labeled(plots.pq_eigenvalues(np.array([0.5, 0.25]), np.eye(2), [dict(p=1, q=1, top_eig_mc=-0.2)]))


def test_constraint_and_gap_figures():
    from types import SimpleNamespace

    steps = np.arange(6)
    tr = SimpleNamespace(
        steps=steps,
        diverged_at=np.array([-1, 3]),
        loss=np.outer(-np.arange(6.0), [1.0, 2.0]),
        observed=torch.randn(6, 2, 2),
    )
    _labeled(plots.fig1_constraints({"none": tr, "orthogonal": tr}, 2, -1.0))
    widths = [16, 64]
    gaps = pd.DataFrame(
        [
            (a, e, h, s, 1.0 / (h * (e + 1)))
            for a in ("tanh", "relu")
            for e in (0, 5)
            for h in widths
            for s in (0, 1)
        ],
        columns=["activation", "epoch", "h", "init", "gap"],
    )
    _labeled(plots.fig2_gaps(gaps, ["tanh", "relu"], widths, 5))
    _labeled(plots.initial_gaps(gaps[gaps.epoch == 0], 2))


def test_width_helpers_draw_a_half_power_guide_on_log_axes():
    fig, ax = plt.subplots()
    widths = [16, 64, 256]
    table = pd.DataFrame({0: [1.0, 0.5, 0.25], 1: [1.0, np.inf, 0.3]}, index=widths)
    plots.width_sweep(ax, table, table[0], "mean")
    plots.width_axes(ax, widths, "error")
    guide = [line for line in ax.lines if line.get_label() == r"$\propto h^{-1/2}$"]
    assert len(guide) == 1 and np.allclose(guide[0].get_ydata(), [1.0, 0.5, 0.25])
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_ylabel() == "error"
    plots.half_power_guide(ax, [4.0, 16.0], 2.0)
    assert np.allclose(ax.lines[-1].get_ydata(), [2.0, 1.0])
    plt.close(fig)
