"""The claims registry: every reproduced result of the book is a *claim* with a declared check.

A claim names its source in the paper ("Tian 2023, Fig. 8"), states the result in one line, and
carries a *check* (a tolerance or predicate) that is declared before the measurement is looked at::

    c = run.expect("fig8-relu-maxima", source="Tian 2023, App. E.1 / Fig. 8",
                   statement="With ReLU, E_α(θ) has at least 8 local maxima.", check=at_least(8))
    ...                      # the experiment
    c.measure(n_maxima)      # records JSON, glues the value, shows the verdict

Each measurement appends one JSON object to ``<directory>/<chapter>.json`` (a run folder's
``claims/``, or ``_build/claims/`` in a book build) with the fields :data:`RECORD_FIELDS`. A failed *required* claim makes the chapter fail when ``run.finish()`` is
called, after every claim has been recorded. A claim that fails may be recorded as
``not-reproduced`` only together with an explanation that applies where it failed
(:class:`~nlcl.harness.claims.verdicts.NotReproduced`: profiles, parameter setting, expected failure);
a NaN/inf measurement is ``invalid``; a timing claim (``timing=True``) measured beside other
chapters is ``not-gated`` (shown with its outcome, never failing the run). Claims are of kind ``reproduction`` or ``check``; a
reproduction states its basis (``exact``, ``dynamical`` or ``statistical``, the record's ``basis``; ``None`` for a check); stochastic
claims are measured over seeds with :meth:`Claim.measure_seeds`. The rules are in
:mod:`nlcl.harness.claims.verdicts`.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import predictions as _predictions
from nlcl.harness.claims import verdicts as _v
from nlcl.harness.claims.checks import (
    Check,
    approx,
    at_least,
    at_most,
    between,
    exactly,
    greater_than,
    is_true,
    less_than,
    to_plain,
)
from nlcl.harness.claims.display import records_table_markdown, show_claim, show_markdown, status_badge
from nlcl.harness.claims.verdicts import (
    NotReproduced,
    Revision,
    check_on_mean,
    check_on_pooled,
    holds_on_fraction,
    mean_minus_2se_above,
    mean_plus_2se_below,
)
from nlcl.harness.run.spec import PROFILES

__all__ = [
    "NotReproduced",
    "Revision",
    "holds_on_fraction",
    "check_on_mean",
    "check_on_pooled",
    "mean_minus_2se_above",
    "mean_plus_2se_below",
    "OPTIONAL_FIELDS",
    "Check",
    "Claim",
    "ClaimRegistry",
    "ClaimsFailed",
    "RECORD_FIELDS",
    "STATUSES",
    "at_least",
    "at_most",
    "greater_than",
    "less_than",
    "exactly",
    "approx",
    "between",
    "is_true",
    "to_plain",
    "load_records",
    "show_markdown",
    "status_badge",
]

STATUSES = ("pass", "fail", "not-reproduced", "invalid", _v.NOT_GATED)
RECORD_FIELDS = (
    "id",
    "chapter",
    "source",
    "statement",
    "expected",
    "measured",
    "tolerance",
    "status",
    "required",
    "profiles",
    "profile",
    "device",
    "commit",
    "time",
    "note",
    "kind",
    "revised",
    "note_scope",
    "note_stale",
    "computed",
    "basis",
)
# present when measured over seeds / merged with a full run / a timing claim (outcome and
# gate_note when it was not gated) / a run / an explanation of a required claim
OPTIONAL_FIELDS = ("seeds", "full", "timing", "outcome", "gate_note", "run_id", "parameters")
OPTIONAL_FIELDS += ("note_prediction",)  # what a required claim's explanation bet on
# a required claim that failed where its ledger declares ``fails:`` (no prediction explains it):
# the reason, counted as a failure everywhere, but the chapter does not stop on it
OPTIONAL_FIELDS += ("declared_failure",)


class ClaimsFailed(AssertionError):
    """Raised by ``run.finish()`` when at least one required claim failed."""


# --------------------------------------------------------------------------------------------
# The registry of one chapter run.
# --------------------------------------------------------------------------------------------


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class ClaimRegistry:
    """Records the claims of one chapter run into ``<directory>/<chapter>.json``.

    The file is rewritten (atomically) after every claim, so a chapter that crashes half-way still
    leaves the claims it measured. Creating a registry clears the chapter's previous file.
    ``concurrent`` (default: from the environment, :func:`nlcl.harness.claims.verdicts.concurrent_run`):
    other chapters run at the same time, so timing claims are shown but not gated.
    """

    def __init__(
        self,
        chapter: str,
        *,
        profile: str,
        device: str,
        commit: str,
        directory: str | os.PathLike,
        glue: bool = True,
        display: bool = True,
        concurrent: bool | None = None,
    ) -> None:
        self.chapter = chapter
        self.concurrent = _v.concurrent_run() if concurrent is None else bool(concurrent)
        self.profile = profile
        self.device = device
        self.commit = commit
        self.directory = Path(directory)
        self.glue_values = glue
        self.display_values = display
        self.records: list[dict[str, Any]] = []
        self.settings: dict[str, Any] = {}  # the run's parameters, matched by NotReproduced.setting
        self.run_id: str | None = None  # the run folder's id: a record names the run it came from
        self._declared: set[str] = set()
        self.ledger: str | None = (
            None  # the ledger that declared this chapter's claims (nlcl.harness.claims.ledger)
        )
        self.diagnostics: dict[str, Any] = {}  # run.diagnostic(name, value): what explanations predict
        self.directory.mkdir(parents=True, exist_ok=True)
        self._write()

    @property
    def path(self) -> Path:
        return self.directory / f"{self.chapter}.json"

    def _write(self) -> None:
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.records, indent=2, ensure_ascii=False, default=str) + "\n")
        tmp.replace(self.path)

    def declare(
        self,
        id: str,
        *,
        source: str,
        statement: str,
        check: Check,
        paper: Any = None,
        required: bool = True,
        profiles: Sequence[str] = PROFILES,
        not_reproduced: str | _v.NotReproduced | Mapping[str, str] | None = None,
        kind: str = "reproduction",
        revised: Sequence[_v.Revision] = (),
        decide: _v.SeedRule | None = None,
        timing: bool = False,
        basis: str | None = None,
        fails: str | None = None,
    ) -> Claim:
        """Declare a claim before measuring it; returns a :class:`Claim` to ``.measure()`` later.

        ``fails`` (a required reproduction's, never with ``not_reproduced``): the declared failure,
        why the claim fails and why no explanation can predict it. Its failure is recorded as a
        failure (status ``fail``, the reason in ``declared_failure``) and counted as one by the
        report and the held-out record, but ``run.finish()`` does not stop the chapter on it: the
        book publishes the finding instead of refusing to build. An undeclared failure still stops it.

        ``basis`` (a reproduction's; one of :data:`~nlcl.harness.claims.verdicts.BASES`): ``exact``,
        ``dynamical`` or ``statistical``. A ledger requires it; declared inline it may be left out,
        and the report then counts the claim as unclassified.

        ``timing=True`` marks a verdict on measured wall-clock time: in a run beside other chapters
        it is recorded as ``not-gated`` (see :mod:`nlcl.harness.claims.verdicts`).
        """
        if not isinstance(id, str) or not id or any(c.isspace() for c in id):
            raise ParameterError(f"claim id={id!r} must be a non-empty string without spaces")
        if self.ledger is not None:
            raise ParameterError(
                f"claim {id!r}: chapter {self.chapter!r} declares its claims in {self.ledger}, not inline; "
                f"declare it there and measure it with run.claim({id!r})"
            )
        if id in self._declared:
            raise ParameterError(f"claim id={id!r} is declared twice in chapter {self.chapter!r}")
        if not isinstance(check, Check):
            raise ParameterError(
                f"check={check!r} must be an nlcl.harness.claims.registry check (at_least, approx, exactly, ...)"
            )
        for name, text in (("source", source), ("statement", statement)):
            if not isinstance(text, str) or not text.strip():
                raise ParameterError(f"claim {id!r}: {name} must be a non-empty string")
        if required and self.profile in tuple(profiles) and not_reproduced is not None:  # it must predict
            _predictions.validate_explanation(id, not_reproduced, check)
        try:
            not_reproduced = _v.normalize_not_reproduced(not_reproduced)
            revisions = _v.normalize_revisions(revised)
        except ParameterError as exc:
            raise ParameterError(f"claim {id!r}: {exc}") from None
        if kind not in _v.KINDS:
            raise ParameterError(f"claim {id!r}: kind={kind!r}; allowed: {_v.KINDS}")
        if basis is not None and basis not in _v.BASES:
            raise ParameterError(f"claim {id!r}: basis={basis!r}; allowed: {_v.BASES} (or None)")
        if basis is not None and kind == "check":
            raise ParameterError(f"claim {id!r}: a check has no basis (basis={basis!r}); only reproductions")
        if fails is not None:
            if not isinstance(fails, str) or not fails.strip():
                raise ParameterError(f"claim {id!r}: fails={fails!r} must be a non-empty reason")
            if kind != "reproduction" or not_reproduced is not None:
                raise ParameterError(
                    f"claim {id!r}: fails (a declared failure) is for a reproduction without a "
                    f"not_reproduced explanation (kind={kind!r}, "
                    f"not_reproduced={'given' if not_reproduced is not None else None})"
                )
        self._declared.add(id)
        return Claim(
            registry=self,
            id=id,
            source=source,
            statement=statement,
            check=check,
            paper=paper,
            required=bool(required) and self.profile in tuple(profiles),
            profiles=tuple(profiles),
            not_reproduced=not_reproduced,
            kind=kind,
            revised=revisions,
            decide=decide,
            timing=bool(timing),
            basis=basis,
            fails=fails,
        )

    def record(
        self,
        claim: Claim,
        measured: Any,
        seeds: dict[str, Any] | None = None,
        read_from: str | Sequence[str] | None = None,
        joined_with: str | Sequence[str] | None = None,
    ) -> dict[str, Any]:
        measured = to_plain(measured)
        nr = claim.not_reproduced
        prediction = None
        if nr is not None and claim.required:  # what the explanation bet on (MissingDiagnostic if absent)
            prediction = _predictions.prediction_record(nr, claim.check, self.diagnostics)
        applies = nr is not None and nr.applies(self.profile, self.settings, measured)
        verdicts = seeds.pop("_verdicts", None) if seeds is not None else None
        if not _v.is_finite(measured) or (seeds is not None and not _v.is_finite(seeds["values"])):
            passed, status = False, "invalid"
        else:
            if seeds is None or claim.decide.on_mean:
                passed = claim.check(measured)
            else:
                passed = claim.decide.decide(seeds["values"], verdicts)
            status = "pass" if passed else ("not-reproduced" if applies else "fail")
        expected = claim.paper if claim.paper is not None else claim.check.description
        rec = {
            "id": claim.id,
            "chapter": self.chapter,
            "source": claim.source,
            "statement": claim.statement,
            "expected": to_plain(expected),
            "measured": measured,
            "tolerance": claim.check.description,
            "status": status,
            "required": claim.required,
            "profiles": list(claim.profiles),
            "profile": self.profile,
            "device": self.device,
            "commit": self.commit,
            "time": _now(),
            "note": nr.why if nr else None,
            "kind": claim.kind,
            "revised": claim.revised,
            "note_scope": (nr.scope() + (f"; evidence: {nr.evidence}" if nr.evidence else ""))
            if nr
            else None,
            "note_stale": bool(passed and nr is not None and nr.in_scope(self.profile, self.settings)),
            "computed": _v.computed_label(read_from, joined_with),
            "basis": claim.basis,
        }
        if prediction is not None:
            rec["note_prediction"] = prediction
        if claim.fails is not None and status == "fail" and claim.required:
            rec["declared_failure"] = claim.fails
        if self.run_id is not None:  # provenance that binds: which run, with which parameters
            rec["run_id"] = self.run_id
            rec["parameters"] = to_plain(self.settings)
        if seeds is not None:
            rec["seeds"] = seeds
        if claim.timing:
            rec["timing"] = True
            if self.concurrent and status != "invalid":  # a NaN time is a bug wherever it runs
                rec["outcome"], rec["status"] = status, _v.NOT_GATED
                rec["gate_note"] = _v.not_gated_note(status)
        self.records.append(rec)
        self._write()
        if self.glue_values:
            _glue(claim.id, measured)
        if self.display_values:
            show_claim(rec)
        return rec

    def failed_required(self) -> list[dict[str, Any]]:
        """The required claims that stop the chapter: failed (unless the failure is declared,
        ``declared_failure``) or invalid."""
        return [
            r
            for r in self.records
            if r["required"]
            and (r["status"] == "invalid" or (r["status"] == "fail" and not r.get("declared_failure")))
        ]

    def declared_failures(self) -> list[dict[str, Any]]:
        """The required claims that failed where their ledger declares ``fails:``."""
        return [r for r in self.records if r.get("declared_failure")]

    def unmeasured(self) -> list[str]:
        measured = {r["id"] for r in self.records}
        return sorted(self._declared - measured)

    def table_markdown(self) -> str:
        """The chapter's claims as markdown: a table of reproductions, then a table of checks."""
        return records_table_markdown(self.records)


@dataclass
class Claim:
    """A declared claim, waiting for its measurement (see :meth:`ClaimRegistry.declare`)."""

    registry: ClaimRegistry = field(repr=False)
    id: str
    source: str
    statement: str
    check: Check
    paper: Any
    required: bool
    profiles: tuple[str, ...]
    not_reproduced: _v.NotReproduced | None
    kind: str = "reproduction"
    revised: list[dict[str, str]] = field(default_factory=list)
    decide: _v.SeedRule | None = None
    timing: bool = False
    basis: str | None = None
    fails: str | None = None
    record: dict[str, Any] | None = field(default=None, repr=False)

    def measure(
        self,
        measured: Any,
        per_seed: Sequence[Any] | None = None,
        *,
        read_from: str | Sequence[str] | None = None,
        joined_with: str | Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Record the measured value: writes JSON, glues it under the claim id, shows the verdict.

        ``per_seed`` (optional, ≥ 2 values): the same quantity computed from each seed alone, for
        a claim decided on data pooled over seeds (:func:`check_on_pooled`, e.g. a grid whose cells
        average the seeds). The verdict still comes from ``measured``; the record's ``seeds`` shows
        the spread, the fraction of seeds on which the check holds and whether the margin to the
        threshold is smaller than the spread. ``read_from``: the committed artifact file(s) the
        value was read from, when it was not computed in this run (the record says so);
        ``joined_with``: the committed artifact file(s) whose seeds were pooled with this run's own
        (the record says "this run, joined with seeds read from ...").
        """
        if self.record is not None:
            raise ParameterError(f"claim {self.id!r} was already measured")
        seeds = None
        if per_seed is not None:
            values = self._seed_values(per_seed, "per_seed needs ≥ 2 values")
            if self.decide is not None and not self.decide.on_mean:
                raise ParameterError(
                    f"claim {self.id!r}: per_seed= is for claims decided on pooled data; this claim "
                    f"declares the seed rule {self.decide.description!r}: use measure_seeds"
                )
            self.decide = self.decide or _v.check_on_pooled()
            numeric = isinstance(measured, (int, float)) and not isinstance(measured, bool)
            seeds = self._seed_summary(values, center=measured if numeric else None)
            seeds["pooled"] = True
        self.record = _Record(
            self.registry.record(self, measured, seeds=seeds, read_from=read_from, joined_with=joined_with)
        )
        return self.record

    def measure_seeds(
        self,
        values: Sequence[Any],
        decide: _v.SeedRule | None = None,
        *,
        read_from: str | Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Record one value per seed: the check is applied per seed, the seed rule decides
        (declared with ``decide=`` in ``expect``, else given here; default: holds on ≥ 80% of seeds).
        The glued and shown value is the mean over seeds; the record's ``seeds`` has the spread.
        """
        if self.record is not None:
            raise ParameterError(f"claim {self.id!r} was already measured")
        values = self._seed_values(values, "measure_seeds needs ≥ 2 seeds")
        if not all(isinstance(v, (int, float)) for v in values):
            raise ParameterError(
                f"claim {self.id!r}: measure_seeds needs numbers (it reports their mean), got {values!r}; "
                "decide a non-numeric quantity on pooled data with measure(value, per_seed=...)"
            )
        if self.decide is None:
            self.decide = decide or _v.holds_on_fraction(0.8)
        seeds = self._seed_summary(values)
        mean = seeds["mean"] if seeds["mean"] is not None else float("nan")
        self.record = _Record(self.registry.record(self, mean, seeds=seeds, read_from=read_from))
        return self.record

    def _seed_values(self, values: Sequence[Any], need: str) -> list[Any]:
        values = to_plain(list(values))
        if len(values) < 2:
            raise ParameterError(f"claim {self.id!r}: {need}, got {len(values)}")
        return values

    def _seed_summary(self, values: list[Any], center: float | None = None) -> dict[str, Any]:
        """The record's ``seeds`` (with the per-seed verdicts the registry pops): the check applied
        to each seed's value; no statistics when a value is NaN/inf (the record is then invalid)."""
        finite = _v.is_finite(values)
        verdicts = [finite and self.check(v) for v in values]
        if finite:
            # the margin is measured to the check's bounds (the nearest one of an interval)
            threshold = self.check.bounds or self.check.expected
            seeds = _v.seed_summary(values, verdicts, self.decide, threshold, center=center)
        else:
            seeds = {"n": len(values), "mean": None, "std": None, "holds_fraction": None, "values": values}
            seeds["rule"] = self.decide.description
        seeds["_verdicts"] = verdicts
        return seeds

    @property
    def passed(self) -> bool:
        return self.record is not None and self.record["status"] == "pass"


class _Record(dict):
    """A claim record that shows nothing as a cell's result: its verdict was displayed when measured."""

    def _ipython_display_(self) -> None:
        pass


def _glue(name: str, value: Any) -> None:
    try:
        from myst_nb import glue
    except ImportError:  # pragma: no cover - myst-nb is a dependency
        return
    glue(name, value, display=False)


def load_records(directory: str | os.PathLike) -> list[dict[str, Any]]:
    """Read every ``<chapter>.json`` in ``directory`` into one list of claim records."""
    out: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of claim records")
        out.extend(data)
    return out
