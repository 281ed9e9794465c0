"""Synthetic data for the one-layer analysis of Tian (2023), Sec. 3.1, App. B.5 and App. E.1.

* :func:`points_on_circle`, :func:`points_on_sphere` — the 2-D toy data of App. E.1 / Fig. 8 and
  random unit vectors.
* :func:`nearly_orthonormal_basis` — U = [u_1..u_M] with unit columns and ‖UᵀU - I‖₂ = ε exactly
  (ε = 0: orthonormal), the setting of Theorem 3 / Fig. 1 (right).
* :func:`latent_categorical` — x = u_y with y ~ Categorical(p) (Sec. 3.1, Eq. 8).
* :func:`latent_summation` — x = U y with independent standardized Bernoulli y_m of
  P[y_m > 0] = q_m (Sec. 3.1, Eq. 9).
* :func:`rotate_2d`, :func:`rotation_augment` — rotation augmentation x = R(t) x0 acting on the
  first two coordinates (App. B.5, Eq. 106).

Every generator is deterministic for a given seed (``rng`` is an int seed or a
``numpy.random.Generator``) and returns float64 numpy arrays. Explained in
``book/tian-one-layer.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "as_rng",
    "points_on_circle",
    "points_on_sphere",
    "nearly_orthonormal_basis",
    "latent_categorical",
    "latent_summation",
    "latent_summation_support",
    "standardized_bernoulli_values",
    "rotate_2d",
    "rotation_augment",
    "FIG8_ANGLES",
]

#: Angles of the data points of Tian 2023, App. E.1 (Fig. 8).
FIG8_ANGLES: tuple[float, ...] = tuple(
    float(a) * np.pi for a in (-4 / 5, -1 / 2, -2 / 5, -1 / 6, 0.0, 1 / 5, 2 / 5, 3 / 5, 4 / 5)
)


def as_rng(rng: Any) -> np.random.Generator:
    """A numpy Generator from an int seed, a Generator (returned as is) or None (seed 0)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng(0)
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ValueError(f"rng must be a nonnegative int seed or a numpy Generator, got {rng!r}")
    return np.random.default_rng(int(rng))


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def points_on_circle(angles: Any) -> np.ndarray:
    """Unit vectors (cos θ, sin θ) for the given angles θ, shape (n, 2) (Tian 2023, App. E.1)."""
    a = np.asarray(angles, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"angles must be a 1-D sequence, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"angles must be finite, got {a!r}")
    return np.stack([np.cos(a), np.sin(a)], axis=-1)


def points_on_sphere(n: int, d: int, rng: Any = None) -> np.ndarray:
    """n points drawn uniformly on the unit sphere S^{d-1}, shape (n, d)."""
    n, d = _positive_int("n", n), _positive_int("d", d)
    g = as_rng(rng).standard_normal((n, d))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def nearly_orthonormal_basis(d: int, m: int, eps: float = 0.0, rng: Any = None) -> np.ndarray:
    """U ∈ R^{d×m} with unit columns and ‖UᵀU - I‖₂ = ε exactly (Tian 2023, Sec. 3.3, Thm. 3).

    U = Q (I + E)^{1/2} with Q a random orthonormal d×m frame and E a random symmetric matrix
    with zero diagonal scaled to spectral norm ε, so UᵀU = I + E. Requires m ≤ d, 0 ≤ ε < 1
    (and ε = 0 when m = 1).
    """
    d, m = _positive_int("d", d), _positive_int("m", m)
    if m > d:
        raise ValueError(f"m must be <= d for a (nearly) orthonormal basis, got m={m}, d={d}")
    eps = float(eps)
    if not (0.0 <= eps < 1.0):
        raise ValueError(f"eps must lie in [0, 1), got {eps!r}")
    gen = as_rng(rng)
    q, r = np.linalg.qr(gen.standard_normal((d, m)))
    q = q * np.sign(np.diag(r))
    if eps == 0.0:
        return q
    if m == 1:
        raise ValueError("eps > 0 needs m >= 2 (a single unit column is always orthonormal)")
    e = gen.standard_normal((m, m))
    e = e + e.T
    np.fill_diagonal(e, 0.0)
    e *= eps / np.linalg.norm(e, 2)
    vals, vecs = np.linalg.eigh(np.eye(m) + e)
    return q @ (vecs * np.sqrt(vals)) @ vecs.T


def _check_basis(u: Any) -> np.ndarray:
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 2:
        raise ValueError(f"U must be a (d, M) matrix, got shape {u.shape}")
    return u


def latent_categorical(n: int, u: Any, probs: Any = None, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Latent categorical model x = u_y, y ~ Categorical(probs) (Tian 2023, Sec. 3.1, Eq. 8).

    Returns (x of shape (n, d), y of shape (n,)). ``probs`` defaults to uniform over the M columns.
    """
    n = _positive_int("n", n)
    u = _check_basis(u)
    m = u.shape[1]
    p = np.full(m, 1.0 / m) if probs is None else np.asarray(probs, dtype=np.float64)
    if p.shape != (m,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be a probability vector of length M={m}, got {p!r}")
    y = as_rng(rng).choice(m, size=n, p=p)
    return u[:, y].T.copy(), y


def standardized_bernoulli_values(q: Any) -> tuple[np.ndarray, np.ndarray]:
    """(y⁺, y⁻) = (√((1-q)/q), -√(q/(1-q))): the two values of a standardized Bernoulli (Sec. 3.1)."""
    q = np.asarray(q, dtype=np.float64)
    if np.any(~((q > 0) & (q < 1))):
        raise ValueError(f"q must lie in the open interval (0, 1), got {q!r}")
    return np.sqrt((1 - q) / q), -np.sqrt(q / (1 - q))


def latent_summation(n: int, u: Any, q: Any, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Latent summation model x = U y (Tian 2023, Sec. 3.1, Eq. 9).

    y_m are independent, y_m = y⁺_m = √((1-q_m)/q_m) with probability q_m and
    y⁻_m = -√(q_m/(1-q_m)) otherwise, so E[y_m] = 0 and E[y_m²] = 1. ``q`` is a scalar or a
    length-M vector. Returns (x of shape (n, d), y of shape (n, M)).
    """
    n = _positive_int("n", n)
    u = _check_basis(u)
    m = u.shape[1]
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), (m,))
    yp, ym = standardized_bernoulli_values(q)
    pos = as_rng(rng).random((n, m)) < q
    y = np.where(pos, yp, ym)
    return y @ u.T, y


def latent_summation_support(u: Any, q: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact law of the latent summation model (Tian 2023, Sec. 3.1): all 2^M atoms x = U y.

    Returns (atoms (2^M, d), probabilities (2^M,), y (2^M, M)), enumerating every sign pattern of
    the independent standardized Bernoulli y_m (M ≤ 16). Lets A(w) of Eq. 9 be computed without
    sampling (:func:`nlcl.tian.landscape.population_gate_matrix`).
    """
    u = _check_basis(u)
    m = u.shape[1]
    if m > 16:
        raise ValueError(f"latent_summation_support enumerates 2^M atoms; M={m} > 16 is too many")
    q = np.broadcast_to(np.asarray(q, dtype=np.float64), (m,))
    yp, ym = standardized_bernoulli_values(q)
    pos = ((np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
    y = np.where(pos, yp, ym)
    probs = np.prod(np.where(pos, q, 1 - q), axis=1)
    return y @ u.T, probs, y


def rotate_2d(x: Any, angles: Any) -> np.ndarray:
    """Rotate the first two coordinates of x (…, d) by ``angles`` (broadcast over …) (App. B.5).

    R(t) acts as the 2×2 rotation by t on (x_1, x_2) and as the identity on the other
    coordinates, a one-parameter rotation group as in Eq. 106.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.shape[-1] < 2:
        raise ValueError(f"x must have at least 2 coordinates on its last axis, got shape {x.shape}")
    t = np.asarray(angles, dtype=np.float64)
    c, s = np.cos(t), np.sin(t)
    x1, x2 = x[..., 0], x[..., 1]
    out = np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, t.shape + (x.shape[-1],))), copy=True)
    out[..., 0] = c * x1 - s * x2
    out[..., 1] = s * x1 + c * x2
    return out


def rotation_augment(x0: Any, max_angle: float = np.pi, rng: Any = None) -> np.ndarray:
    """One augmented view x = R(t) x0 per row, t ~ Uniform[-max_angle, max_angle] (App. B.5, Eq. 106).

    ``max_angle = π`` is the full rotation group of the (x_1, x_2) plane.
    """
    x0 = np.asarray(x0, dtype=np.float64)
    max_angle = float(max_angle)
    if not (0.0 <= max_angle <= np.pi):
        raise ValueError(f"max_angle must lie in [0, π], got {max_angle!r}")
    t = as_rng(rng).uniform(-max_angle, max_angle, size=x0.shape[:-1])
    return rotate_2d(x0, t)
