"""What a not-reproduced explanation predicts, and the rule that it predicts something.

An explanation of a *required* claim's failure (:class:`~nlcl.harness.claims.verdicts.NotReproduced`)
must carry a prediction that the run could contradict and that is strictly narrower than "the
check failed" (issue 26, item 2; issue 52, item 2). A prediction is a conjunction of conditions:

- **a band of the measured value** (``expected`` without diagnostics, or ``band`` beside them):
  it must be false on strictly more than :data:`MIN_EXCLUDED` of the points :func:`failure_samples`
  draws from the check's failure region. Those points are log-spaced relative to the bound,
  ``b·(1 ± 10^k)`` for k in :data:`EXPONENTS`, extended over the decades up to the quantity's
  declared range when the bound is small beside it, and never outside that range (a |cos| in
  [0, 1], a rate ≥ 0). ``m < 1e-3`` against ``≤ 1e-10`` holds on every point and is refused; so is
  the failure condition itself. The band is tested whether or not diagnostics are named too.
- **diagnostics**: quantities the chapter measures (``run.diagnostic(name, value)`` before the
  claim is measured) that the prediction tests; the record stores their values. Each declares its
  source (:data:`SOURCES`): ``run`` (measured in this run, independently of the claim's value),
  ``artifact`` (read from a committed file) or ``derived`` (computed from the claim's own measured
  value). Only a ``run`` diagnostic, or a band that passes the test above, can carry a
  prediction: one whose conditions are all ``artifact``/``derived`` diagnostics is refused. A
  diagnostic that is the same at every held-out seed predicts nothing either;
  :func:`diagnostic_spread` measures that over held-out rows.

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
    "EXPONENTS",
    "MIN_EXCLUDED",
    "MissingDiagnostic",
    "SOURCES",
    "constant_predictions",
    "diagnostic_spread",
    "excluded_fraction",
    "failure_samples",
    "prediction_record",
    "validate_explanation",
    "walk_records",
]

#: A band must be false on strictly more than this fraction of the sampled failure region.
MIN_EXCLUDED = 0.75
#: Exponents k of the relative offsets 10^k from a bound at which its failure region is sampled
#: (two per decade, 10^-3 … 10^3).
EXPONENTS = tuple(k / 2 for k in range(-6, 7))
#: Where a diagnostic comes from: measured in the run, read from a committed artifact, or computed
#: from the claim's own measured value. Only ``run`` can carry a prediction.
SOURCES = ("run", "artifact", "derived")
_UNBOUNDED = (-math.inf, math.inf)


class MissingDiagnostic(LookupError):
    """An explanation's prediction tests a diagnostic the chapter did not provide before measuring."""


def _offsets(bound: float, room: float) -> list[float]:
    """Distances from ``bound`` into its failure side, log-spaced, none beyond ``room`` (the distance
    to the range's edge on that side, ``inf`` when unbounded)."""
    if room <= 0:
        return []
    below_edge = [room * 10 ** (k - EXPONENTS[-1]) for k in EXPONENTS]  # six decades up to the edge
    if bound == 0:  # no scale of its own: the decades below the range's edge, or unit magnitudes
        return below_edge if math.isfinite(room) else [10**k for k in EXPONENTS]
    scale, exps = abs(bound), list(EXPONENTS)
    if math.isfinite(room):
        while scale * 10 ** (exps[-1] + 0.5) <= room:  # a bound small beside the range: up to it
            exps.append(exps[-1] + 0.5)
    out = [scale * 10**k for k in exps if scale * 10**k < room]
    if len(out) < len(EXPONENTS) // 2:  # the range leaves a sliver beyond the bound
        return below_edge
    return out + ([room] if math.isfinite(room) else [])


def failure_samples(check: Any, value_range: tuple[float, float] = _UNBOUNDED) -> list[Any]:
    """Points of the failure region of ``check`` inside ``value_range``.

    On each failing side of a bound b: ``b ± |b|·10^k`` for k in :data:`EXPONENTS` (continued by
    half decades up to the range's edge when that lies further out, and including the edge); for
    b = 0, magnitudes spanning six decades below the range's edge (``10^k`` when unbounded); where
    the range leaves less than three decades of relative offsets, six decades below its edge.
    Integers stay integers for ``exactly(n)`` (``n ± round(max(|n|, 1)·10^k)``); ``[False]`` for
    a predicate check; ``[]`` when the region cannot be sampled (a string check)."""
    lo_r, hi_r = (float(v) for v in value_range)
    bounds = tuple(float(b) for b in getattr(check, "bounds", ()) or ())
    expected = check.expected
    if check.description == "true":
        return [False]
    inside = lambda x: lo_r <= x <= hi_r  # noqa: E731
    if not bounds:
        if isinstance(expected, bool) or not isinstance(expected, (int, float)):
            return []
        if isinstance(expected, int):  # exactly(n): the other integers around n
            steps = sorted({max(1, round(max(abs(expected), 1) * 10**k)) for k in EXPONENTS})
            cands = [expected + s for s in steps] + [expected - s for s in steps]
            return [x for x in cands if inside(x) and not check(x)]
        bounds = (float(expected), float(expected))
    lo, hi = min(bounds), max(bounds)
    candidates = [hi + d for d in _offsets(hi, hi_r - hi)] + [lo - d for d in _offsets(lo, lo - lo_r)]
    return [x for x in candidates if inside(x) and not check(x)]


def excluded_fraction(
    check: Any, expected: Any, value_range: tuple[float, float] = _UNBOUNDED
) -> float | None:
    """The fraction of :func:`failure_samples` on which ``expected`` is false (an exception
    counts as false: the prediction does not hold there); ``None`` when there is nothing to sample."""
    samples = failure_samples(check, value_range)
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


def _band(not_reproduced: Any) -> Any:
    """The part of a prediction on the measured value: ``band``, or ``expected`` without diagnostics."""
    if getattr(not_reproduced, "band", None) is not None:
        return not_reproduced.band
    return None if not_reproduced.diagnostics else not_reproduced.expected


def _sources(not_reproduced: Any) -> dict[str, str]:
    given = dict(getattr(not_reproduced, "sources", {}) or {})
    return {name: given.get(name, "run") for name in not_reproduced.diagnostics}


def validate_explanation(claim_id: str, not_reproduced: Any, check: Any) -> float | None:
    """Refuse an explanation of a required claim that predicts nothing narrower than the failure.

    Returns the excluded fraction of the prediction's band (``None`` when it has none that can be
    sampled); raises :class:`~nlcl.core.validate.ParameterError` naming the claim, the form and
    what is allowed.
    """
    from nlcl.harness.claims.verdicts import NotReproduced

    allowed = (
        "NotReproduced(why, ..., expected=<predicate>) with diagnostics=(names the chapter measures in "
        f"the run with run.diagnostic) or a band of the measured value that excludes more than "
        f"{MIN_EXCLUDED:.0%} of the failure region"
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
    sources = _sources(not_reproduced)
    unknown = {n: s for n, s in sources.items() if s not in SOURCES}
    if unknown:
        raise ParameterError(f"claim {claim_id!r}: diagnostic sources {unknown}; each is one of {SOURCES}")
    band = _band(not_reproduced)
    fraction = None
    if band is not None:
        value_range = not_reproduced.value_range
        fraction = excluded_fraction(check, band, value_range)
        if fraction is None and not not_reproduced.diagnostics:
            raise ParameterError(
                f"claim {claim_id!r} is required and its check ({check.description}) has no numeric failure "
                "region: its explanation must name diagnostics=(...) that its prediction tests"
            )
        if fraction is not None and not fraction > MIN_EXCLUDED:
            samples = ", ".join(
                f"{x:.4g}" if isinstance(x, float) else repr(x) for x in failure_samples(check, value_range)
            )
            raise ParameterError(
                f"claim {claim_id!r} is required: its explanation's band of the measured value holds on "
                f"{1 - fraction:.0%} of the failure region of '{check.description}' (sampled at {samples}); "
                f"it must exclude more than {MIN_EXCLUDED:.0%}"
                + (
                    ", also beside diagnostics"
                    if not_reproduced.diagnostics
                    else ", or name diagnostics=(...)"
                )
            )
    if fraction is None and not any(s == "run" for s in sources.values()):
        raise ParameterError(
            f"claim {claim_id!r} is required: its explanation's only conditions are diagnostics "
            f"{sources} that the run does not measure (read from an artifact, or derived from the "
            "claim's own value); it needs a diagnostic with source run, or a band that excludes more "
            f"than {MIN_EXCLUDED:.0%} of the failure region"
        )
    return fraction


def prediction_record(not_reproduced: Any, check: Any, diagnostics: Mapping[str, Any]) -> dict[str, Any]:
    """The record's ``note_prediction``: the diagnostics with their values and sources (and the
    excluded fraction of a band beside them, ``band_excluded``), or the band's excluded fraction of
    the failure region. Raises :class:`MissingDiagnostic` for a named diagnostic not provided."""
    names = tuple(getattr(not_reproduced, "diagnostics", ()) or ())
    for name in names:
        if name not in diagnostics:
            raise MissingDiagnostic(
                f"a not-reproduced prediction tests the diagnostic {name!r}: provide it with "
                f"run.diagnostic({name!r}, value) before measuring the claim"
            )
    band = _band(not_reproduced) if not_reproduced.expected else None
    value_range = getattr(not_reproduced, "value_range", _UNBOUNDED)
    fraction = excluded_fraction(check, band, value_range) if band is not None else None
    if names:
        rec = {
            "kind": "diagnostics",
            "diagnostics": {n: diagnostics[n] for n in names},
            "sources": _sources(not_reproduced),
        }
        if band is not None:
            rec["band_excluded"] = fraction
        return rec
    return {"kind": "band", "excluded": fraction}


def walk_records(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """Problems of the explanations in claim records: every required claim with an explanation must
    record a prediction that :func:`validate_explanation` would accept (a band excluding more than
    :data:`MIN_EXCLUDED`, also beside diagnostics; a diagnostic with source ``run`` unless the band
    carries the prediction)."""
    problems = []
    for r in records:
        if not r.get("required") or not r.get("note"):
            continue
        where = f"{r.get('chapter')}/{r.get('id')}"
        pred = r.get("note_prediction")
        if not isinstance(pred, Mapping):
            problems.append(f"{where}: required claim with an explanation that records no prediction")
            continue
        kind = pred.get("kind")
        if kind not in ("diagnostics", "band"):
            problems.append(f"{where}: unknown prediction kind {kind!r}")
            continue
        excluded = pred.get("excluded") if kind == "band" else pred.get("band_excluded")
        band_ok = isinstance(excluded, (int, float)) and math.isfinite(excluded) and excluded > MIN_EXCLUDED
        if kind == "band" or excluded is not None:
            if not (isinstance(excluded, (int, float)) and math.isfinite(excluded)):
                problems.append(f"{where}: a band prediction with no excluded fraction")
            elif not band_ok:
                problems.append(
                    f"{where}: its band excludes only {excluded:.0%} of the failure region "
                    f"(more than {MIN_EXCLUDED:.0%} required)"
                )
        if kind == "band":
            continue
        values = pred.get("diagnostics")
        if not values:
            problems.append(f"{where}: a diagnostics prediction with no diagnostics")
            continue
        sources = pred.get("sources")
        if not isinstance(sources, Mapping) or set(sources) != set(values):
            problems.append(f"{where}: its diagnostics record no sources (run, artifact or derived)")
            continue
        if not band_ok and not any(s == "run" for s in sources.values()):
            problems.append(
                f"{where}: its only conditions are diagnostics not measured in the run {dict(sources)}"
            )
    return problems


def diagnostic_spread(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The spread of each diagnostic over held-out rows: ``(chapter, claim, name)`` → ``{"n", "min",
    "max", "constant"}`` for the rows that store it (``note_prediction.diagnostics``, or
    ``diagnostics``). ``constant`` when at least two rows agree to 1e-9 relative (booleans and
    strings: all equal): such a diagnostic is the same at every held-out seed and predicts nothing
    on its own."""
    seen: dict[tuple[str, str, str], list[Any]] = {}
    for r in rows:
        pred = r.get("note_prediction")
        values = pred.get("diagnostics") if isinstance(pred, Mapping) else r.get("diagnostics")
        for name, v in (values or {}).items():
            seen.setdefault((str(r.get("chapter", "")), str(r.get("claim", r.get("id"))), name), []).append(v)
    out = {}
    for key, vals in seen.items():
        nums = [float(v) for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(nums) == len(vals) and nums:
            lo, hi = min(nums), max(nums)
            constant = len(nums) >= 2 and (hi - lo) <= 1e-9 * max(abs(lo), abs(hi), 1e-300)
            out[key] = {"n": len(vals), "min": lo, "max": hi, "constant": constant}
        else:
            out[key] = {
                "n": len(vals),
                "min": None,
                "max": None,
                "constant": len(vals) >= 2 and all(v == vals[0] for v in vals),
            }
    return out


def constant_predictions(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Required explanations, over held-out rows, whose diagnostics are all the same at every seed
    and that no band carries: ``chapter/claim`` for each. A row stores the diagnostics in its
    ``note_prediction`` (a claim record) or as ``diagnostics`` (a held-out row)."""
    rows = list(rows)
    spread = diagnostic_spread(rows)
    out = set()
    for r in rows:
        pred = r.get("note_prediction")
        if isinstance(pred, Mapping):
            names, excluded = pred.get("diagnostics") or {}, pred.get("band_excluded")
        else:
            names, excluded = r.get("diagnostics") or {}, None
        if not r.get("required") or not names:
            continue
        if isinstance(excluded, (int, float)) and excluded > MIN_EXCLUDED:
            continue
        chapter, claim = str(r.get("chapter", "")), str(r.get("claim", r.get("id")))
        if all(spread[(chapter, claim, n)]["constant"] for n in names):
            out.add(f"{chapter}/{claim}")
    return sorted(out)


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
