"""Tests for nlcl.tian.circle_landscape (Tian 2023, App. E.1, Fig. 8)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.tian.circle_landscape import angular_distance, plot_circle_landscape
from nlcl.tian.landscape import energy_on_circle, periodic_local_maxima
from nlcl.tian.latent_data import points_on_circle

angle = st.floats(-20.0, 20.0, allow_nan=False)


@settings(max_examples=200)
@given(angle, angle, st.integers(-3, 3))
def test_angular_distance_is_the_angle_between_the_directions(a, b, k):
    d = float(angular_distance(a, b))
    assert 0.0 <= d <= np.pi + 1e-12
    # the angle between the unit vectors (cos a, sin a) and (cos b, sin b)
    cos = np.clip(np.cos(a) * np.cos(b) + np.sin(a) * np.sin(b), -1.0, 1.0)
    assert abs(d - np.arccos(cos)) < 1e-6
    # symmetric and independent of the 2π representative
    assert abs(d - float(angular_distance(b, a))) < 1e-9
    assert abs(d - float(angular_distance(a + 2 * np.pi * k, b))) < 1e-9


def test_angular_distance_broadcasts():
    d = angular_distance(np.array([0.0, np.pi / 2]), np.array([[0.0], [np.pi]]))
    assert d.shape == (2, 2)
    np.testing.assert_allclose(d, [[0.0, np.pi / 2], [np.pi, np.pi / 2]])


def test_plot_circle_landscape_draws_both_panels():
    angles = np.array([0.0, 1.0, 2.5, -2.0])
    x = points_on_circle(angles)
    thetas = np.linspace(-np.pi, np.pi, 360, endpoint=False)
    energies = {a: energy_on_circle(x, thetas, a) for a in ("relu", "linear")}
    maxima = {a: thetas[periodic_local_maxima(e)] for a, e in energies.items()}
    fig = plot_circle_landscape(energies, maxima, thetas, x, angles)
    ax, ax2 = fig.axes
    assert ax.get_xlabel() and ax.get_ylabel() and ax2.get_xlabel() and ax2.get_ylabel()
    labels = set(ax2.get_legend_handles_labels()[1])
    assert labels == {"maxima, relu", "maxima, linear", "data $\\mathbf{x}_i$"}
    plt.close(fig)
