"""Checks: the tolerance or predicate of a claim, declared before the measurement.

Re-exported by :mod:`nlcl.harness.claims.registry` (``from nlcl.harness.claims.registry import at_least``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = [
    "Check",
    "at_least",
    "at_most",
    "greater_than",
    "less_than",
    "exactly",
    "approx",
    "between",
    "is_true",
    "to_plain",
]


# --------------------------------------------------------------------------------------------


def to_plain(value: Any) -> Any:
    """Convert numpy/torch scalars and arrays to plain Python values (JSON-serialisable)."""
    if hasattr(value, "detach"):  # torch tensor
        value = value.detach().cpu().numpy()
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Check:
    """A predicate on the measured value with a human-readable description.

    ``expected`` is the reference value shown as the paper's value in the report; ``description``
    is the tolerance column ("≥ 8", "= 2", "0.382 ± 0.01"). ``bounds`` are the thresholds of a
    numeric check: one for a one-sided check (``at_least(8)``: ``(8,)``), the two ends of the
    interval for a two-sided one (``between``, ``approx``), none otherwise; the margin of a claim
    measured over seeds is its distance to the nearest bound
    (:func:`nlcl.harness.claims.verdicts.seed_summary`).
    """

    description: str
    expected: Any
    predicate: Callable[[Any], bool] = field(repr=False, compare=False)
    bounds: tuple[float, ...] = ()

    def __call__(self, measured: Any) -> bool:
        if isinstance(measured, float) and math.isnan(measured):
            return False
        try:
            return bool(self.predicate(measured))
        except TypeError as exc:
            raise ParameterError(
                f"measured={measured!r} cannot be compared by check '{self.description}': {exc}"
            ) from None


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ParameterError(f"{name}={value!r} must be a number for this check")
    return value


def at_least(value: float) -> Check:
    """measured >= value."""
    v = _number("value", value)
    return Check(f"≥ {v:g}", v, lambda m: m >= v, (v,))


def at_most(value: float) -> Check:
    """measured <= value."""
    v = _number("value", value)
    return Check(f"≤ {v:g}", v, lambda m: m <= v, (v,))


def greater_than(value: float) -> Check:
    """measured > value."""
    v = _number("value", value)
    return Check(f"> {v:g}", v, lambda m: m > v, (v,))


def less_than(value: float) -> Check:
    """measured < value."""
    v = _number("value", value)
    return Check(f"< {v:g}", v, lambda m: m < v, (v,))


def exactly(value: Any) -> Check:
    """measured == value (integers, strings, booleans)."""
    return Check(f"= {value!r}" if isinstance(value, str) else f"= {value}", value, lambda m: m == value)


def approx(value: float, *, rtol: float = 0.0, atol: float = 0.0) -> Check:
    """|measured − value| <= atol + rtol·|value| (at least one of rtol, atol must be > 0)."""
    v = _number("value", value)
    rtol, atol = _number("rtol", rtol), _number("atol", atol)
    if rtol < 0 or atol < 0 or (rtol == 0 and atol == 0):
        raise ParameterError(f"approx(rtol={rtol}, atol={atol}): give a tolerance > 0 (both must be >= 0)")
    parts = []
    if atol:
        parts.append(f"± {atol:g}")
    if rtol:
        parts.append(f"± {100 * rtol:g}%")
    tol = atol + rtol * abs(v)
    return Check(f"{v:g} {' + '.join(parts)}", v, lambda m: abs(m - v) <= tol, (v - tol, v + tol))


def between(low: float, high: float) -> Check:
    """low <= measured <= high."""
    lo, hi = _number("low", low), _number("high", high)
    if lo > hi:
        raise ParameterError(f"between(low={lo}, high={hi}): low must be <= high")
    return Check(f"∈ [{lo:g}, {hi:g}]", (lo + hi) / 2, lambda m: lo <= m <= hi, (lo, hi))


def is_true() -> Check:
    """measured is True (a predicate claim)."""
    return Check("true", True, lambda m: m is True)
