"""Tests for nlcl.core.timing: interleaved repeated timings and per-repeat log-log slopes."""

from __future__ import annotations

import pandas as pd
import pytest

from nlcl.core.timing import interleaved_timings, per_repeat_slopes
from nlcl.core.validate import ParameterError


def test_interleaved_timings_calls_everything_in_every_repeat():
    calls = []
    fns = {k: (lambda k=k: calls.append(k)) for k in (1, 2, 4)}
    table = interleaved_timings(fns, repeats=3, number=2, warmup=1, seed=0)
    assert len(table) == 9 and set(table.columns) == {"repeat", "key", "seconds"}
    assert sorted(table.groupby("repeat").key.apply(sorted).tolist()) == [[1, 2, 4]] * 3
    assert len(calls) == 3 * (1 + 3 * 2)
    assert (table.seconds >= 0).all()
    with pytest.raises(ParameterError, match="fns"):
        interleaved_timings({}, repeats=1)


def test_per_repeat_slopes():
    table = pd.DataFrame(
        {"repeat": [0, 0, 1, 1], "key": ["a", "b", "a", "b"], "seconds": [1.0, 4.0, 2.0, 4.0]}
    )
    slopes = per_repeat_slopes(table, size_of={"a": 1.0, "b": 2.0}.get)
    assert slopes.tolist() == pytest.approx([2.0, 1.0])
    with pytest.raises(ParameterError, match="columns"):
        per_repeat_slopes(table.drop(columns="seconds"))
