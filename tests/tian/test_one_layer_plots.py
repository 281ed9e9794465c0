"""Tests for nlcl.tian.one_layer_plots: each figure draws labeled axes from small inputs."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from nlcl.tian import one_layer_plots as plots  # noqa: E402


def _labeled(fig):
    axes = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    assert axes
    for ax in axes:
        assert ax.get_ylabel() and ax.get_title()
        assert ax.get_xlabel() or ax.get_xticklabels()  # a bar chart names its categories
    plt.close(fig)


@pytest.fixture()
def rng():
    return np.random.default_rng(0)


def test_figures_are_labeled(rng):
    q = np.linspace(0.02, 0.9, 10)
    _labeled(plots.plot_eq9_threshold(q, (1 - q) ** 2 - q, 0.38, rng.random(3), rng.random(3), "relu", 100))
    rho, gap = rng.random(3), rng.random(3)
    _labeled(
        plots.plot_theorem1(
            rho, gap, gap > rho, rng.random((4, 3)), rng.random((4, 3)), {"uniform": 2, "gaussian": 3}, 10, 8
        )
    )
    b2 = {
        k: list(rng.random(3) + 0.1) for k in ("uniform", "gaussian", "scale_free", "z0", "small", "small_z0")
    }
    _labeled(plots.plot_theorem2(b2))
    scan = {
        "tau": np.array([0.05, 0.5, 2.0]),
        "lme_fraction": np.array([0.0, 0.0, 0.8]),
        "settled": rng.random((3, 2, 4)) > 0.2,
        "pattern_cos": rng.random((3, 2, 4)),
    }
    _labeled(plots.plot_tau_scan(scan, 0.5))
    t1 = np.c_[np.zeros((6, 3)), rng.integers(0, 2, 6), rng.random((6, 2)), rng.random(6) * 2]
    _labeled(plots.plot_two_sided(t1, 2, 3))
    _labeled(plots.plot_power_iteration([0.0, 0.1], [rng.random((5, 3))] * 2, 0.2))
    _labeled(
        plots.plot_more_nodes(
            [1, 2], {"relu": rng.random((3, 2)), "linear": rng.random((3, 2))}, "relu", 5, "t"
        )
    )
    th = np.linspace(-np.pi, np.pi, 20, endpoint=False)
    curves = {b: rng.random(20) for b in np.linspace(0, np.pi, 4)}
    _labeled(plots.plot_rotation_sweep(th, curves, list(curves)[:2], [3, 2, 1, 0], "relu"))
    e = rng.random((4, 8))
    _labeled(plots.plot_sphere_energy(np.linspace(0.3, 2.8, 4), np.linspace(0, 6, 8), e, e, 1.0, e > 0.9))
