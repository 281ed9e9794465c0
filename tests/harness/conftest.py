"""Fixtures shared by the harness tests."""

from __future__ import annotations

import pytest


def _held_out_set(
    seeds,
    statuses,
    *,
    claim="a",
    sha="c1",
    mods="m1",
    date="2026-12-08T00:00:00Z",
    profile=None,
    **row,
):
    """A sweep record over ``seeds``: one row of claim ``claim`` per seed with the status at the
    same position (``None``: the seed left no row, as a run that died), at chapter hash ``sha``
    and modules hash ``mods``; ``profile`` is written when given (``"full"``: results/held-out-full)."""
    rows = [
        {
            "seed": s,
            "claim": claim,
            "kind": "reproduction",
            "required": True,
            "status": st,
            "measured": 1.0,
            **row,
        }
        for s, st in zip(seeds, statuses)
        if st is not None
    ]
    record = {
        "seeds": list(seeds),
        "commit": "abc",
        "date": date,
        "chapter_sha256": sha,
        "modules_sha256": mods,
        "errors": {},
        "rows": rows,
    }
    if profile is not None:
        record["profile"] = profile
    return record


@pytest.fixture()
def held_out_set():
    """A held-out set as ``held_out run`` appends it: the factory :func:`_held_out_set`, shared by the
    tests of the held-out record (test_held_out.py) and of the report's paper-scale column
    (test_report.py)."""
    return _held_out_set
