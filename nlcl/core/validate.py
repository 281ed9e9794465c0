"""Argument validation with errors that name the parameter, the bad value and what is allowed.

Every user-facing function and every chapter validates its parameters through these helpers, so that
a user mistake ends in one readable line instead of a deep traceback or a silent NaN.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from numbers import Integral, Real
from typing import Any

__all__ = [
    "ParameterError",
    "NonFiniteError",
    "choice",
    "positive_int",
    "nonneg_int",
    "positive_float",
    "nonneg_float",
    "probability",
    "finite",
    "shape",
    "cuda_unavailable",
]


class ParameterError(ValueError):
    """A parameter has a value that is not allowed. The message names both and what is allowed."""


class NonFiniteError(ValueError):
    """A computation produced NaN or inf (e.g. training diverged); the message names the step and
    the quantity. The chapter run fails (exit 1); it is not a usage error."""


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def choice(name: str, value: Any, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``; else raise :class:`ParameterError`."""
    allowed = list(allowed)
    if value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ParameterError(f"{name}={_fmt(value)} is not allowed; choose one of: {listed}")
    return value


def _integer(name: str, value: Any, minimum: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParameterError(f"{name}={_fmt(value)} must be an integer {what}")
    if value < minimum:
        raise ParameterError(f"{name}={_fmt(value)} must be an integer {what}")
    return int(value)


def positive_int(name: str, value: Any) -> int:
    """Return ``value`` as ``int`` if it is an integer >= 1."""
    return _integer(name, value, 1, ">= 1")


def nonneg_int(name: str, value: Any) -> int:
    """Return ``value`` as ``int`` if it is an integer >= 0."""
    return _integer(name, value, 0, ">= 0")


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParameterError(f"{name}={_fmt(value)} must be a real number")
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(f"{name}={_fmt(value)} must be finite")
    return value


def positive_float(name: str, value: Any) -> float:
    """Return ``value`` as ``float`` if it is a finite number > 0."""
    v = _real(name, value)
    if v <= 0:
        raise ParameterError(f"{name}={_fmt(value)} must be > 0")
    return v


def nonneg_float(name: str, value: Any) -> float:
    """Return ``value`` as ``float`` if it is a finite number >= 0."""
    v = _real(name, value)
    if v < 0:
        raise ParameterError(f"{name}={_fmt(value)} must be >= 0")
    return v


def probability(name: str, value: Any, *, open_interval: bool = False) -> float:
    """Return ``value`` as ``float`` if it lies in [0, 1] (or (0, 1) with ``open_interval``)."""
    v = _real(name, value)
    bad = (v <= 0 or v >= 1) if open_interval else (v < 0 or v > 1)
    if bad:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise ParameterError(f"{name}={_fmt(value)} must lie in {interval}")
    return v


def finite(name: str, array: Any) -> Any:
    """Raise if ``array`` (numpy array or torch tensor) holds a NaN or an infinity; return it."""
    try:
        import torch

        if isinstance(array, torch.Tensor):
            if not bool(torch.isfinite(array).all()):
                bad = int((~torch.isfinite(array)).sum())
                raise FloatingPointError(f"{name} has {bad} non-finite entries (NaN or inf)")
            return array
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    import numpy as np

    arr = np.asarray(array)
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise FloatingPointError(f"{name} has {bad} non-finite entries (NaN or inf)")
    return array


def shape(name: str, array: Any, expected: Sequence[int | None | str]) -> Any:
    """Check ``array.shape`` against ``expected`` (``None`` or a letter matches any size)."""
    got = tuple(getattr(array, "shape", ()))
    ok = len(got) == len(expected) and all(not isinstance(e, int) or e == g for e, g in zip(expected, got))
    if not ok:
        want = "(" + ", ".join("?" if e is None else str(e) for e in expected) + ")"
        raise ParameterError(f"{name} has shape {got}; expected {want}")
    return array


def cuda_unavailable() -> str | None:
    """Why CUDA cannot work here, found without importing torch (a usage error answers at once);
    None where it may (then :func:`nlcl.core.device.get_device` decides)."""
    import importlib.metadata
    import sys
    from pathlib import Path

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return "torch is not installed"
    if "+cpu" in version:
        return f"torch {version} is a CPU-only build"
    if sys.platform == "darwin":
        return "macOS has no CUDA"
    devices = [*Path("/dev").glob("nvidia[0-9]*"), Path("/proc/driver/nvidia"), Path("/dev/dxg")]
    if sys.platform.startswith("linux") and not any(p.exists() for p in devices):
        return "no NVIDIA device: no /dev/nvidia* and no driver in /proc/driver/nvidia"
    return None
