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
