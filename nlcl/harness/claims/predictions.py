"""What a not-reproduced explanation predicts, and the rule that it predicts something.

An explanation of a *required* claim's failure (:class:`~nlcl.harness.claims.verdicts.NotReproduced`)
must carry a prediction that the run could contradict and that is strictly narrower than "the
check failed" (issue 26, item 2). Two forms count:

- **diagnostics**: the explanation names quantities the chapter measures
  (``diagnostics=("nodes-linear-top2",)``, provided with ``run.diagnostic(name, value)`` before
  the claim is measured) and its ``expected`` predicate tests them. The record stores their
  values, so a reader sees what the explanation bet on.
- **a band of the measured value**: without diagnostics, ``expected(measured)`` must be false on
  at least :data:`MIN_EXCLUDED` of the points :func:`failure_samples` draws from the check's
  failure region. ``m < 0.1`` against ``≤ 1e-3`` is true on most of that region and is refused;
  so is any predicate that is just the failure condition.

Refused outright for a required claim: a bare string, a ``{profile: why}`` mapping, and
``expected=None``. :func:`validate_explanation` applies the rule when a claim is declared;
:func:`walk_records` re-checks what the records of a build say (``python -m
nlcl.harness.claims.predictions check _build/claims``, run by ``.ci/run book``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = [
    "MIN_EXCLUDED",
    "MissingDiagnostic",
    "OFFSETS",
    "excluded_fraction",
    "failure_samples",
    "prediction_record",
    "validate_explanation",
    "walk_records",
]

#: A band prediction must be false on at least this fraction of the sampled failure region.
MIN_EXCLUDED = 0.5
#: Offsets from a bound, in units of the check's scale, at which the failure region is sampled.
OFFSETS = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0)


class MissingDiagnostic(LookupError):
    """An explanation's prediction tests a diagnostic the chapter did not provide before measuring."""


def _scale(check: Any) -> float:
    bounds = [float(b) for b in getattr(check, "bounds", ()) or ()]
    if not bounds and isinstance(check.expected, (int, float)) and not isinstance(check.expected, bool):
        bounds = [float(check.expected)]
    width = max(bounds) - min(bounds) if bounds else 0.0
    return max([abs(b) for b in bounds] + [width, 1e-3])


def failure_samples(check: Any) -> list[Any]:
    """Points of the failure region of ``check``: the bound ± scale·:data:`OFFSETS` on the failing
    side(s), scale = max(|bound|, interval width, 1e-3); integers stay integers for ``exactly(n)``;
    ``[False]`` for a predicate check; ``[]`` when the region cannot be sampled (a string check)."""
    bounds = tuple(float(b) for b in getattr(check, "bounds", ()) or ())
    expected = check.expected
    if check.description == "true":
        return [False]
    scale = _scale(check)
    if not bounds:
        if isinstance(expected, bool) or not isinstance(expected, (int, float)):
            return []
        if isinstance(expected, int):  # exactly(n): the other integers around n
            steps = sorted({max(1, round(scale * o)) for o in OFFSETS})
            return [expected + s for s in steps] + [expected - s for s in steps]
        bounds = (float(expected), float(expected))
    lo, hi = min(bounds), max(bounds)
    candidates = [hi + scale * o for o in OFFSETS] + [lo - scale * o for o in OFFSETS]
    return [x for x in candidates if not check(x)]


def excluded_fraction(check: Any, expected: Any) -> float | None:
    """The fraction of :func:`failure_samples` on which ``expected`` is false (an exception
    counts as false: the prediction does not hold there); ``None`` when there is nothing to sample."""
    samples = failure_samples(check)
    if not samples:
        return None
    excluded = 0
    for x in samples:
        try:
            holds = bool(expected(x))
        except Exception:  # noqa: BLE001 - a predicate that cannot read x does not predict x
            holds = False
        excluded += not holds
    return excluded / len(samples)


def validate_explanation(claim_id: str, not_reproduced: Any, check: Any) -> float | None:
    """Refuse an explanation of a required claim that predicts nothing narrower than the failure.

    Returns the excluded fraction of a band prediction (``None`` for a diagnostics prediction);
    raises :class:`~nlcl.core.validate.ParameterError` naming the claim, the form and what is allowed.
    """
    from nlcl.harness.claims.verdicts import NotReproduced

    allowed = (
        "NotReproduced(why, ..., expected=<predicate>) with diagnostics=(names the chapter provides with "
        "run.diagnostic) or a band of the measured value that excludes most of the failure region"
    )
    if isinstance(not_reproduced, str):
        raise ParameterError(
            f"claim {claim_id!r} is required: a bare explanation string predicts nothing; use {allowed}"
        )
    if isinstance(not_reproduced, Mapping):
        raise ParameterError(
            f"claim {claim_id!r} is required: a {{profile: why}} explanation predicts nothing; use {allowed}"
        )
    if not isinstance(not_reproduced, NotReproduced):
        raise ParameterError(f"claim {claim_id!r}: not_reproduced={not_reproduced!r}; use {allowed}")
    if not_reproduced.expected is None:
        raise ParameterError(
            f"claim {claim_id!r} is required: its explanation has expected=None, so it would cover any "
            f"failure; use {allowed}"
        )
    if not_reproduced.diagnostics:
        return None
    fraction = excluded_fraction(check, not_reproduced.expected)
    if fraction is None:
        raise ParameterError(
            f"claim {claim_id!r} is required and its check ({check.description}) has no numeric failure "
            "region: its explanation must name diagnostics=(...) that its prediction tests"
        )
    if fraction < MIN_EXCLUDED:
        samples = ", ".join(f"{x:.4g}" if isinstance(x, float) else repr(x) for x in failure_samples(check))
        raise ParameterError(
            f"claim {claim_id!r} is required: its explanation's prediction holds on "
            f"{1 - fraction:.0%} of the failure region of '{check.description}' (sampled at {samples}); "
            f"it must exclude at least {MIN_EXCLUDED:.0%}, or name diagnostics=(...) that it tests"
        )
    return fraction


def prediction_record(not_reproduced: Any, check: Any, diagnostics: Mapping[str, Any]) -> dict[str, Any]:
    """The record's ``note_prediction``: the diagnostics and their values, or the band's excluded
    fraction of the failure region. Raises :class:`MissingDiagnostic` for a named diagnostic not provided."""
    names = tuple(getattr(not_reproduced, "diagnostics", ()) or ())
    for name in names:
        if name not in diagnostics:
            raise MissingDiagnostic(
                f"a not-reproduced prediction tests the diagnostic {name!r}: provide it with "
                f"run.diagnostic({name!r}, value) before measuring the claim"
            )
    if names:
        return {"kind": "diagnostics", "diagnostics": {n: diagnostics[n] for n in names}}
    fraction = excluded_fraction(check, not_reproduced.expected) if not_reproduced.expected else None
    return {"kind": "band", "excluded": fraction}


def walk_records(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Problems of the explanations in claim records: every required claim with an explanation
    must record a prediction (diagnostics with values, or a band excluding ≥ :data:`MIN_EXCLUDED`)."""
    problems = []
    for r in records:
        if not r.get("required") or not r.get("note"):
            continue
        where = f"{r.get('chapter')}/{r.get('id')}"
        pred = r.get("note_prediction")
        if not isinstance(pred, Mapping):
            problems.append(f"{where}: required claim with an explanation that records no prediction")
        elif pred.get("kind") == "diagnostics":
            if not pred.get("diagnostics"):
                problems.append(f"{where}: a diagnostics prediction with no diagnostics")
        elif pred.get("kind") == "band":
            excluded = pred.get("excluded")
            if excluded is None or not (isinstance(excluded, (int, float)) and math.isfinite(excluded)):
                problems.append(f"{where}: a band prediction with no excluded fraction")
            elif excluded < MIN_EXCLUDED:
                problems.append(f"{where}: its band excludes only {excluded:.0%} of the failure region")
        else:
            problems.append(f"{where}: unknown prediction kind {pred.get('kind')!r}")
    return problems


def _load(path: Path) -> list[dict[str, Any]]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    out: list[dict[str, Any]] = []
    for f in files:
        data = json.loads(f.read_text())
        if isinstance(data, dict):  # a paper-scale record: {"chapter": ..., "claims": [...]}
            data = data.get("claims", [])
        out.extend(data if isinstance(data, list) else [])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nlcl.harness.claims.predictions",
        description="Check that every required claim's not-reproduced explanation recorded a prediction.",
    )
    parser.add_argument("command", choices=["check"])
    parser.add_argument(
        "paths", nargs="+", help="claim-record folders or files (_build/claims, results/claims-full)"
    )
    args = parser.parse_args(argv)
    records = [r for p in args.paths for r in _load(Path(p))]
    problems = walk_records(records)
    for p in problems:
        print(p, file=sys.stderr)
    explained = sum(1 for r in records if r.get("required") and r.get("note"))
    print(f"{len(records)} claim records, {explained} required with an explanation, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
