"""The claims registry: every reproduced result of the book is a *claim* with a declared check.

A claim names its source in the paper ("Tian 2023, Fig. 8"), states the result in one line, and
carries a *check* (a tolerance or predicate) that is declared before the measurement is looked at::

    c = run.expect("fig8-relu-maxima", source="Tian 2023, App. E.1 / Fig. 8",
                   statement="With ReLU, E_α(θ) has at least 8 local maxima.", check=at_least(8))
    ...                      # the experiment
    c.measure(n_maxima)      # records JSON, glues the value, shows the verdict

Each measurement appends one JSON object to ``_build/claims/<chapter>.json`` with the fields
:data:`RECORD_FIELDS`. A failed *required* claim makes the chapter fail when ``run.finish()`` is
called, after every claim has been recorded. A claim that fails may be recorded as
``not-reproduced`` only together with an explanation (``not_reproduced="..."``), which the chapter
and the reproducibility report show.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = [
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

STATUSES = ("pass", "fail", "not-reproduced")
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
)


class ClaimsFailed(AssertionError):
    """Raised by ``run.finish()`` when at least one required claim failed."""


# --------------------------------------------------------------------------------------------
# Checks: the tolerance or predicate of a claim, declared before the measurement.
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
    is the tolerance column ("≥ 8", "= 2", "0.382 ± 0.01").
    """

    description: str
    expected: Any
    predicate: Callable[[Any], bool] = field(repr=False, compare=False)

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
    return Check(f"≥ {v:g}", v, lambda m: m >= v)


def at_most(value: float) -> Check:
    """measured <= value."""
    v = _number("value", value)
    return Check(f"≤ {v:g}", v, lambda m: m <= v)


def greater_than(value: float) -> Check:
    """measured > value."""
    v = _number("value", value)
    return Check(f"> {v:g}", v, lambda m: m > v)


def less_than(value: float) -> Check:
    """measured < value."""
    v = _number("value", value)
    return Check(f"< {v:g}", v, lambda m: m < v)


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
    return Check(f"{v:g} {' + '.join(parts)}", v, lambda m: abs(m - v) <= atol + rtol * abs(v))


def between(low: float, high: float) -> Check:
    """low <= measured <= high."""
    lo, hi = _number("low", low), _number("high", high)
    if lo > hi:
        raise ParameterError(f"between(low={lo}, high={hi}): low must be <= high")
    return Check(f"∈ [{lo:g}, {hi:g}]", (lo + hi) / 2, lambda m: lo <= m <= hi)


def is_true() -> Check:
    """measured is True (a predicate claim)."""
    return Check("true", True, lambda m: m is True)


# --------------------------------------------------------------------------------------------
# The registry of one chapter run.
# --------------------------------------------------------------------------------------------


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and len(value) > 6:
        return "[" + ", ".join(_format(v) for v in value[:6]) + ", …]"
    return str(value)


class ClaimRegistry:
    """Records the claims of one chapter run into ``<directory>/<chapter>.json``.

    The file is rewritten (atomically) after every claim, so a chapter that crashes half-way still
    leaves the claims it measured. Creating a registry clears the chapter's previous file.
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
    ) -> None:
        self.chapter = chapter
        self.profile = profile
        self.device = device
        self.commit = commit
        self.directory = Path(directory)
        self.glue_values = glue
        self.display_values = display
        self.records: list[dict[str, Any]] = []
        self._declared: set[str] = set()
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
        profiles: Sequence[str] = ("ci", "full"),
        not_reproduced: str | None = None,
    ) -> Claim:
        """Declare a claim before measuring it; returns a :class:`Claim` to ``.measure()`` later."""
        if not isinstance(id, str) or not id or any(c.isspace() for c in id):
            raise ParameterError(f"claim id={id!r} must be a non-empty string without spaces")
        if id in self._declared:
            raise ParameterError(f"claim id={id!r} is declared twice in chapter {self.chapter!r}")
        if not isinstance(check, Check):
            raise ParameterError(
                f"check={check!r} must be an nlcl.harness.claims check (at_least, approx, exactly, ...)"
            )
        for name, text in (("source", source), ("statement", statement)):
            if not isinstance(text, str) or not text.strip():
                raise ParameterError(f"claim {id!r}: {name} must be a non-empty string")
        if not_reproduced is not None and (not isinstance(not_reproduced, str) or not not_reproduced.strip()):
            raise ParameterError(f"claim {id!r}: not_reproduced must be an explanation (non-empty string)")
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
        )

    def record(self, claim: Claim, measured: Any) -> dict[str, Any]:
        measured = to_plain(measured)
        passed = claim.check(measured)
        if passed:
            status = "pass"
        elif claim.not_reproduced:
            status = "not-reproduced"
        else:
            status = "fail"
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
            "note": claim.not_reproduced,
        }
        self.records.append(rec)
        self._write()
        if self.glue_values:
            _glue(claim.id, measured)
        if self.display_values:
            _show(rec)
        return rec

    def failed_required(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["status"] == "fail" and r["required"]]

    def unmeasured(self) -> list[str]:
        measured = {r["id"] for r in self.records}
        return sorted(self._declared - measured)

    def table_markdown(self) -> str:
        """The chapter's claims as a markdown table."""
        if not self.records:
            return "_This chapter records no claims._"
        rows = ["| claim | source | check | measured | status |", "| --- | --- | --- | --- | --- |"]
        for r in self.records:
            status = status_badge(r["status"], r["required"])
            rows.append(
                f"| `{r['id']}` | {r['source']} | {r['tolerance']} | {_format(r['measured'])} | {status} |"
            )
        return "\n".join(rows)


def status_badge(status: str, required: bool = True) -> str:
    """A short status label for tables: ✅ pass, ❌ fail, ⚠️ not reproduced (+ 'info' if optional)."""
    label = {"pass": "✅ pass", "fail": "❌ fail", "not-reproduced": "⚠️ not reproduced"}[status]
    return label if required else f"{label} (info)"


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
    not_reproduced: str | None
    record: dict[str, Any] | None = field(default=None, repr=False)

    def measure(self, measured: Any) -> dict[str, Any]:
        """Record the measured value: writes JSON, glues it under the claim id, shows the verdict."""
        if self.record is not None:
            raise ParameterError(f"claim {self.id!r} was already measured")
        self.record = _Record(self.registry.record(self, measured))
        return self.record

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


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _show(rec: dict[str, Any]) -> None:
    text = (
        f"{status_badge(rec['status'], rec['required'])} — **{rec['id']}** ({rec['source']}): "
        f"{rec['statement']} Check: {rec['tolerance']}; measured: {_format(rec['measured'])}."
    )
    if rec["status"] != "pass" and rec["note"]:
        text += f"\n\n> **Not reproduced.** {rec['note']}"
    # The anchor the reproducibility page links to (the claim's place in its chapter).
    anchor = f'<span id="claim-{rec["id"]}"></span>' if _in_notebook() else ""
    show_markdown(anchor + text)


def show_markdown(text: str) -> None:
    """Display markdown as rich output in a notebook, as plain text elsewhere."""
    if _in_notebook():
        from IPython.display import Markdown, display

        display(Markdown(text))
    else:
        print(text)


def load_records(directory: str | os.PathLike) -> list[dict[str, Any]]:
    """Read every ``<chapter>.json`` in ``directory`` into one list of claim records."""
    out: list[dict[str, Any]] = []
    for path in sorted(Path(directory).glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of claim records")
        out.extend(data)
    return out
