"""Rotation augmentation and the energy landscape of one filter (Tian 2023, App. B.5, Eqs. 105-108).

* :func:`sphere_grid`: unit vectors w on a (polar angle, azimuth) grid of the sphere S² ⊂ R³;
* :func:`rotation_augmented_energy`: 2E_α(w) = V_{x0}[b(w|x0)], b(w|x0) = E_t h(wᵀR(t)x0), with
  uniform α and R(t) the rotation by t in one coordinate plane (Eq. 105), t on a midpoint grid;
* :func:`grid_strict_maxima`: strict local maxima of a function sampled on that grid.

With the full rotation group in the (x₁, x₂) plane the energy depends on the polar angle of w only
(Eqs. 107-108): a w the group moves lies on a circle of equal energy and is not a strict optimum.
Explained in the chapter ``book/tian-one-layer.py``.
"""

from __future__ import annotations

import numpy as np

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError

__all__ = ["grid_strict_maxima", "rotation_augmented_energy", "sphere_grid"]


def _count(name: str, value: int, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ParameterError(f"{name} must be an integer ≥ {low}, got {value!r}")
    return int(value)


def sphere_grid(n_theta: int, n_phi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid of S²: polar angles θ_i = (i + ½)π/n_theta (the poles excluded), azimuths φ_j = 2πj/n_phi.

    Returns (θ (n_theta,), φ (n_phi,), w (n_theta, n_phi, 3)) with w = (sin θ cos φ, sin θ sin φ, cos θ).
    """
    n_theta, n_phi = _count("n_theta", n_theta, 2), _count("n_phi", n_phi, 3)
    th = (np.arange(n_theta) + 0.5) / n_theta * np.pi
    ph = np.arange(n_phi) / n_phi * 2 * np.pi
    w = np.stack(
        [
            np.sin(th)[:, None] * np.cos(ph)[None],
            np.sin(th)[:, None] * np.sin(ph)[None],
            np.cos(th)[:, None] * np.ones(n_phi)[None],
        ],
        -1,
    )
    return th, ph, w


def rotation_augmented_energy(points, w, activation: str, n_t: int = 0, plane: tuple[int, int] = (0, 1)):
    """E_α(w) = ½ V_{x0}[b(w|x0)], b(w|x0) = E_t h(wᵀR(t)x0), uniform α (Tian 2023, Eqs. 105-106).

    ``points`` (n, d) are the un-augmented samples x0, ``w`` (…, d) the filters. R(t) rotates the
    coordinates ``plane`` by t, with t uniform on the full circle, the expectation a midpoint rule
    on ``n_t`` angles t_k = 2π(k + ½)/n_t; ``n_t`` = 0 means no augmentation. A rotation of w in the
    plane by a multiple of 2π/n_t leaves the quadrature value unchanged exactly (Eqs. 107-108).
    Returns (…).
    """
    x = np.asarray(points, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or w.shape[-1:] != x.shape[1:]:
        raise ParameterError(f"points must be (n ≥ 2, d) and w (..., d), got {x.shape} and {w.shape}")
    i, j = plane
    if not (0 <= i < x.shape[1] and 0 <= j < x.shape[1] and i != j):
        raise ParameterError(f"plane must name two distinct coordinates of {x.shape[1]}, got {plane!r}")
    n_t = _count("n_t", n_t, 0)
    h = get_activation(activation)
    if n_t == 0:
        return 0.5 * h(w @ x.T).var(-1)
    t = (np.arange(n_t) + 0.5) / n_t * 2 * np.pi
    xt = np.repeat(x[:, None, :], n_t, axis=1)  # (n, T, d)
    xt[..., i] = np.cos(t) * x[:, None, i] - np.sin(t) * x[:, None, j]
    xt[..., j] = np.sin(t) * x[:, None, i] + np.cos(t) * x[:, None, j]
    flat = w.reshape(-1, w.shape[-1])
    b = np.stack([h(np.einsum("d,ntd->nt", wk, xt)).mean(-1) for wk in flat])  # b(w|x0), (W, n)
    return (0.5 * b.var(-1)).reshape(w.shape[:-1])


def grid_strict_maxima(values, tol: float = 0.0) -> np.ndarray:
    """Strict local maxima of f on a (θ, φ) grid from :func:`sphere_grid`: above all 8 neighbours by > ``tol``.

    φ is periodic; the first and last θ rows have neighbours on one side only (the poles are not on
    the grid). A function that is constant along φ has none. Returns a bool mask of ``values``' shape.
    """
    e = np.asarray(values, dtype=np.float64)
    if e.ndim != 2 or min(e.shape) < 2:
        raise ParameterError(f"values must be a (n_theta, n_phi) grid, got shape {e.shape}")
    pad = np.pad(e, ((1, 1), (0, 0)), constant_values=-np.inf)
    ok = np.ones(e.shape, dtype=bool)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                ok &= e > np.roll(pad, (-di, -dj), axis=(0, 1))[1:-1] + float(tol)
    return ok
