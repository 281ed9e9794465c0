"""Smoke tests for nlcl.renli.plots (the figures of book/renli-simulation.py): each layout draws its
panels, labelled, from small synthetic histories."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from nlcl.renli import plots  # noqa: E402
from nlcl.renli.model import make_data  # noqa: E402
from nlcl.renli.tracking import gram_condition_number, gram_trajectory, infinite_width_gram, input_scales  # noqa: E402


def _history():
    rows = []
    for seed in (0, 1):
        for method, lam in (("non-contrastive", 0.0), ("contrastive", 1.0)):
            for kappa in (2.0, 4.0):
                for step in range(0, 40, 10):
                    rows.append(
                        dict(
                            seed=seed,
                            method=method,
                            lam=lam,
                            beta1=0.05,
                            kappa=kappa,
                            step=step,
                            alignment=0.5 + step / 80,
                            condition_number=kappa + step / 10,
                            stable_rank=8 - step / 10,
                            noise_to_signal=0.3 - step / 200,
                        )
                    )
    return pd.DataFrame(rows)


def _labelled(fig, n):
    axes = [ax for ax in fig.axes if ax.get_xlabel()]
    assert len(axes) >= n and all(ax.get_ylabel() for ax in axes)
    plt.close(fig)


def test_training_figures():
    h = _history()
    _labelled(plots.fig1_curves(h[h.kappa == 4.0], boundary=20, total=30, r=8, title="t"), 4)
    _labelled(plots.kappa_curves(h, boundary=20), 2)
    _labelled(plots.sweep_figure(h[h.step == 30], h, boundary=20, r=8), 3)
    dev = pd.DataFrame({"seed": [0, 0, 1, 1], "beta1": [0.01, 0.05] * 2, "delta": [0.1, 0.4, 0.12, 0.5]})
    med = dev.groupby("beta1").delta.median()
    _labelled(plots.stage1_figure(h[h.step <= 20], dev, med, [0.01, 0.05], 0.05), 2)


def test_lemma_figure():
    rng = np.random.default_rng(0)
    lemmas = pd.DataFrame(
        {
            "stage": ["init", "stage1", "final"] * 4,
            "method": ["contrastive"] * 6 + ["non-contrastive"] * 6,
            "kappa": rng.uniform(1, 5, 12),
            "kappa_bound": rng.uniform(1, 5, 12),
            "alignment": rng.uniform(0.4, 1, 12),
            "distinct": np.full(12, 0.99),
            "srank": rng.uniform(1, 8, 12),
        }
    )
    _labelled(plots.lemma_figure(lemmas, 1.1, 8), 2)


def test_tracking_figures():
    data = make_data(8, 2, 2, 4.0, [0], nu=0.3, dtype=torch.float64)
    G0 = infinite_width_gram(data)
    starts = torch.cat([G0, G0 * 1.01, G0 * 1.001])
    kw = dict(r=2, r_xi=2, lam=1.0, steps_stage1=4, steps_stage2=4, lr=0.5, record_every=2)
    t, G = gram_trajectory(starts, input_scales(data).repeat(3, 1), **kw)
    G = G.reshape(len(t), 3, 1, 8, 8)
    kappa_inf = gram_condition_number(G[:, 0], 2, 2)
    track = pd.DataFrame(
        {"m": [16, 64], "seed": [0, 0], "stage1": [0.1, 0.05], "stage2": [0.1, 0.05], "condition": [0.2, 0.1]}
    )
    fig = plots.tracking_figure(t, G, kappa_inf, track, [16, 64], seed=0, track_steps=4, r=2, r_xi=2)
    _labelled(fig, 3)
    norm = torch.rand(len(t), 2, 1) + 0.5
    fig = plots.amplification_figure(
        t, norm, norm, torch.rand(2, 1), torch.rand(3, 1), [16, 64], seed=0, track_steps=4, track_batch=8
    )
    _labelled(fig, 2)
