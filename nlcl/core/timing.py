"""Timings that survive a busy machine: interleaved repeats, compared within a repeat, medians.

A claim about running time compares timings *taken in the same run*: each repeat times every
candidate once, in a fresh random order, so a burst of load from another process hits all
candidates of that repeat alike; a statement is then checked on a per-repeat quantity (a ratio, a
log-log slope) and the median over repeats decides.  Used for the width scaling of Esser et al.
(2024), Fig. 4 (chapter ``book/esser-grassmann.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from nlcl.core.fits import loglog_slope
from nlcl.core.validate import ParameterError, nonneg_int, positive_int

__all__ = ["interleaved_timings", "per_repeat_slopes"]


def interleaved_timings(
    fns: Mapping[Hashable, Callable[[], Any]],
    *,
    repeats: int,
    number: int = 1,
    warmup: int = 1,
    seed: int = 0,
) -> pd.DataFrame:
    """Time every callable ``repeats`` times, interleaved: one call batch of each per repeat, random order.

    ``number`` calls make one measurement (seconds per call = elapsed / ``number``); ``warmup``
    untimed calls of each callable come first.  Returns a table with columns ``repeat``, ``key``,
    ``seconds``.  Chapter ``book/esser-grassmann.py``.

    Raises
    ------
    ParameterError
        If ``fns`` is empty or a count is not a positive integer.
    """
    if not fns:
        raise ParameterError("fns={} is not allowed; give at least one callable to time")
    repeats, number, warmup = (
        positive_int("repeats", repeats),
        positive_int("number", number),
        nonneg_int("warmup", warmup),
    )
    keys = list(fns)
    for key in keys:
        for _ in range(warmup):
            fns[key]()
    rng = np.random.default_rng(seed)
    rows = []
    for rep in range(repeats):
        for i in rng.permutation(len(keys)):
            fn = fns[keys[i]]
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            rows.append(dict(repeat=rep, key=keys[i], seconds=(time.perf_counter() - t0) / number))
    return pd.DataFrame(rows)


def per_repeat_slopes(timings: pd.DataFrame, size_of: Callable[[Hashable], float] | None = None) -> pd.Series:
    """Log-log slope (:func:`nlcl.core.fits.loglog_slope`) of seconds against size within each repeat of
    :func:`interleaved_timings`.

    ``size_of(key)`` gives the size of a key (default: the key itself).  Returns one slope per
    repeat; its median is the robust estimate.  Chapter ``book/esser-grassmann.py``.
    """
    size_of = size_of or (lambda k: float(k))
    missing = {"repeat", "key", "seconds"} - set(timings.columns)
    if missing:
        raise ParameterError(
            f"timings lacks columns {sorted(missing)}; pass the table of interleaved_timings"
        )
    return timings.groupby("repeat").apply(
        lambda g: loglog_slope([size_of(k) for k in g["key"]], g["seconds"]), include_groups=False
    )
