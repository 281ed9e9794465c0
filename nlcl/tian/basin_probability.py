"""The basin probability model of Tian (2023), App. C.3 (Remark after Theorem 6, Eqs. 152-157).

Y_l ~ U[−1, 1] independent (l = 1..d) model the initial coordinates y_l(0); a modulation factor ε_l
shifts coordinate l, and the event E_l ("w → u_l") is Y_l ≥ 0 and Y_l + ε_l ≥ max_{l'≠l} (Y_l' + ε_l').
Chapter ``book/tian-two-layer-theory.py``.
"""

from __future__ import annotations

import numpy as np

from nlcl.core.validate import ParameterError, positive_int

__all__ = ["basin_event_mc", "eq155_probability", "eq156_lower_bound", "eq157_upper_bound"]


def eq155_probability(eps, d: int) -> np.ndarray:
    """P[E_l] of Eq. 155 when only ε_l ≠ 0: the integral ∫_0^1 F^{d−1}(y + ε) dF(y), F the U[−1, 1] CDF.

    (1/d)[1 − ((1+ε)/2)^d] + ε/2 for 0 ≤ ε ≤ 1, (1/d)[(1 + ε/2)^d − ((1+ε)/2)^d] for −1 < ε < 0, and
    P[Y_l ≥ 0] = 1/2 for ε > 1 (the printed first case reads "ε_l > 1"; the integral gives 1/2).
    """
    d = positive_int("d", d)
    eps = np.asarray(eps, dtype=np.float64)
    if np.any(eps <= -1):
        raise ParameterError("Eq. 155 is stated for ε > −1")
    pos = (1 - ((1 + np.clip(eps, 0, 1)) / 2) ** d) / d + np.clip(eps, 0, 1) / 2
    neg = ((1 + np.minimum(eps, 0) / 2) ** d - ((1 + np.minimum(eps, 0)) / 2) ** d) / d
    return np.where(eps > 1, 0.5, np.where(eps >= 0, pos, neg))


def basin_event_mc(eps, n: int, *, rng: np.random.Generator, chunk: int = 100_000) -> np.ndarray:
    """Monte Carlo P[E_l] for every l, with Y ~ U[−1, 1]^d and modulation factors ``eps`` (..., d).

    E_l: Y_l ≥ 0 and Y_l + ε_l is the largest of the Y_l' + ε_l' (Eqs. 152-153 and the general case).
    Returns the fractions over ``n`` draws, shape of ``eps``.
    """
    n = positive_int("n", n)
    eps = np.asarray(eps, dtype=np.float64)
    count = np.zeros(eps.shape)
    done = 0
    while done < n:
        m = min(chunk, n - done)
        Y = rng.uniform(-1, 1, size=(m,) + eps.shape)
        S = Y + eps
        win = (S == S.max(-1, keepdims=True)) & (Y >= 0)
        count += win.sum(0)
        done += m
    return count / n


def eq156_lower_bound(eps) -> np.ndarray:
    """Eq. 156: P[E_c(1)] ≥ (ε_c(1) − ε_c(2))/2 for the largest ε (``eps`` (..., d)); returns the bound."""
    e = np.sort(np.asarray(eps, dtype=np.float64), axis=-1)
    return (e[..., -1] - e[..., -2]) / 2


def eq157_upper_bound(eps) -> np.ndarray:
    """Eq. 157: P[E_c(r)] ≤ min_{r'<r} (1/(r'+1)) (1 − (ε_c(r') − ε_c(r))/2)^{r'+1}, for every rank r ≥ 2.

    ``eps`` (..., d); returns (..., d) with the bound at each coordinate's position (∞ for the largest).
    """
    eps = np.asarray(eps, dtype=np.float64)
    order = np.argsort(-eps, axis=-1)
    e = np.take_along_axis(eps, order, -1)  # descending: e[..., r-1] = ε_c(r)
    d = eps.shape[-1]
    out_sorted = np.full(eps.shape, np.inf)
    for r in range(2, d + 1):
        rp = np.arange(1, r)
        gap = e[..., rp - 1] - e[..., r - 1 : r]
        out_sorted[..., r - 1] = (np.clip(1 - gap / 2, 0, None) ** (rp + 1) / (rp + 1)).min(-1)
    out = np.empty_like(out_sorted)
    np.put_along_axis(out, order, out_sorted, -1)
    return out
