"""The energy landscape on the unit circle (Tian 2023, App. E.1, Fig. 8): angles and the figure.

A unit-norm filter in 2-D is ``w = (cos θ, sin θ)ᵀ``; its energy E_α(θ) (Eq. 5) is evaluated by
:func:`nlcl.tian.landscape.energy_on_circle`. This module holds what the chapter
``book/tian-fig8-landscape.py`` needs around it:

* :func:`angular_distance` — the distance of two angles on the circle, |((a − b + π) mod 2π) − π|,
  used to compare the linear maxima with ±φ₁ (the top principal direction);
* :func:`plot_circle_landscape` — Fig. 8's layout: E_α(θ) / max E_α per activation with its
  maxima and the data angles (left), the maxima as directions in the plane (right).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from nlcl.core.plotting import mark_vertical, unit_circle

__all__ = ["angular_distance", "plot_circle_landscape"]


def angular_distance(a: Any, b: Any) -> np.ndarray:
    """Distance on the circle between angles ``a`` and ``b`` (radians, broadcast), in [0, π].

    ``|((a − b + π) mod 2π) − π|``: the angle between the directions (cos a, sin a) and
    (cos b, sin b) of Tian (2023), App. E.1 (Fig. 8), independent of the 2π representative.
    """
    return np.abs((np.asarray(a) - np.asarray(b) + np.pi) % (2 * np.pi) - np.pi)


_STYLES = {"linear": {"ls": "--", "color": "C0"}}
_OTHER = {"color": "C3"}


def plot_circle_landscape(
    energies: Mapping[str, np.ndarray],
    maxima: Mapping[str, np.ndarray],
    thetas: np.ndarray,
    points: np.ndarray,
    data_angles: np.ndarray,
):
    """Tian (2023), Fig. 8: E_α(θ) on the unit circle and its local maxima, per activation.

    Left: each ``energies[act]`` (over the grid ``thetas``) scaled to maximum 1 as in the paper,
    its ``maxima[act]`` (angles) as dots, dotted vertical lines at ``data_angles``. Right: the
    data ``points`` (N, 2) on the unit circle and the maxima as directions. The linear curve is
    dashed blue, the others solid red. Returns the figure.
    """
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [2.2, 1]})
    for act, e in energies.items():
        style = _STYLES.get(act, _OTHER)
        ax.plot(thetas, e / e.max(), label=f"h = {act}", lw=1.8, **style)
        ax.plot(maxima[act], np.interp(maxima[act], thetas, e / e.max()), "o", ms=5, color=style["color"])
    mark_vertical(ax, data_angles)
    ax.set_xlabel(r"$\theta$ (radians), $\mathbf{w} = [\cos\theta, \sin\theta]^\top$")
    ax.set_ylabel(r"$\mathcal{E}_\alpha(\theta)\ /\ \max_\theta \mathcal{E}_\alpha$")
    ax.set_title(r"Energy on the unit circle, uniform $\alpha$, no augmentation")
    ax.set_xlim(-np.pi, np.pi)
    ax.legend(loc="lower left")

    unit_circle(ax2)
    ax2.scatter(points[:, 0], points[:, 1], color="k", s=18, zorder=3, label="data $\\mathbf{x}_i$")
    for act, ms in maxima.items():
        style = _STYLES.get(act, _OTHER)
        for k, m in enumerate(ms):
            ax2.plot(
                [0, np.cos(m)],
                [0, np.sin(m)],
                color=style["color"],
                lw=1.4,
                ls=style.get("ls", "-"),
                label=f"maxima, {act}" if k == 0 else None,
            )
    ax2.set_xlabel("$w_1$")
    ax2.set_ylabel("$w_2$")
    ax2.set_title("Local maxima as directions")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small")
    return fig
