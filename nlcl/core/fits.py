"""Fits that several chapters read a scaling law from.

:func:`loglog_slope` is the exponent p of a power law y ∝ x^p, fitted by least squares on
log y against log x: the gap-vs-width rates of Esser et al. 2024, Theorem 1 / Fig. 2 (chapter
``book/esser-collapse.py``) and the cost-vs-width rates of their Fig. 4 (chapter
``book/esser-grassmann.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nlcl.core.validate import ParameterError

__all__ = ["loglog_slope"]


def loglog_slope(x: Any, y: Any) -> float:
    """Least-squares slope of log y against log x (the exponent p of y ∝ x^p).

    ``x`` and ``y`` are positive, of equal length ≥ 2; a :class:`ParameterError` names a bad one.
    """
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.ndim != 1 or xa.shape != ya.shape or xa.size < 2:
        raise ParameterError(
            f"x and y must be 1-D of equal length >= 2, got shapes {xa.shape} and {ya.shape}"
        )
    if not (np.all(xa > 0) and np.all(ya > 0)):
        raise ParameterError("x and y must be positive to fit a power law on log scales")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])
