"""A chapter's claims ledger: pre-registration as data, ``book/claims/<chapter>.yaml``.

The static part of every claim of a chapter (id, source, statement, the paper's value, kind, a
reproduction's basis, required, the check, the seed rule, revisions, not-reproduced explanations and what they predict)
lives in one YAML file beside the chapter, validated against :data:`~nlcl.harness.claims.ledger_schema.SCHEMA`.
The chapter declares the whole ledger once, before it measures anything, and then only measures::

    run.show_ledger(two_grid_steps=2 * grid_step)   # declares every claim, shows the ledger table
    ...                                             # the experiment
    run.diagnostic("narrow_slope", slope)           # a value an explanation's prediction tests
    run.claim("fig8-relu-maxima").measure(n_maxima)

A declared claim is exactly what ``run.expect(...)`` with the same fields gives (same record);
checks map onto :mod:`nlcl.harness.claims.checks` (``{at_least: 8}``, ``{between: [0.75, 1.25]}``,
``{approx: {value: 1.0, rtol: 0.05}}``), seed rules onto :mod:`nlcl.harness.claims.verdicts`. A chapter
with a ledger declares nothing inline (:class:`~nlcl.harness.claims.registry.ClaimRegistry` refuses it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import checks as _checks
from nlcl.harness.claims import verdicts as _v
from nlcl.harness.claims.display import show_markdown
from nlcl.harness.claims.ledger_schema import CHECK_KINDS, SCHEMA
from nlcl.harness.claims.ledger_view import claim_calls, ledger_markdown
from nlcl.harness.claims.predictions import MissingDiagnostic
from nlcl.harness.run.spec import PROFILES

__all__ = [
    "Ledger",
    "LedgerError",
    "declare_ledger",
    "ledger_claim",
    "MissingDiagnostic",
    "claim_calls",
    "ledger_markdown",
    "ledger_path",
    "make_check",
    "make_rule",
    "ledger_dir",
    "read_ledger",
    "timing_chapters",
]


class LedgerError(ParameterError):
    """A ledger that is not valid, or not used as declared; the message names file, claim and field."""


@dataclass(frozen=True)
class Ledger:
    """A validated ledger: its claims (with the ledger's ``defaults`` filled in), in file order."""

    path: Path
    chapter: str
    claims: list[dict[str, Any]]
    values: dict[str, str] = field(default_factory=dict)
    diagnostics: dict[str, str] = field(default_factory=dict)
    #: where each diagnostic comes from (``run``, ``artifact``, ``derived``; ``run`` for a plain description)
    diagnostic_sources: dict[str, str] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [c["id"] for c in self.claims]

    @property
    def label(self) -> str:
        """The path as messages show it: ``book/claims/<chapter>.yaml`` inside the book."""
        parts = self.path.parts
        return (
            "/".join(parts[-3:]) if len(parts) >= 3 and parts[-3:-1] == ("book", "claims") else str(self.path)
        )


def ledger_dir(root: str | Path | None = None) -> Path:
    """The folder of the chapters' ledgers: ``<book root>/book/claims``."""
    from nlcl.harness.records import provenance

    return provenance.repo_root(root) / "book" / "claims"


def ledger_path(chapter: str, root: str | Path | None = None) -> Path:
    """Where the ledger of ``chapter`` lives: ``<book root>/book/claims/<chapter>.yaml``."""
    return ledger_dir(root) / f"{chapter}.yaml"


# -- reading and validating ---------------------------------------------------------------------


def _load_yaml(path: Path) -> Any:
    """YAML with dates kept as strings, ``1e-3`` read as a number, and duplicate keys refused."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        k: [r for r in v if r[0] != "tag:yaml.org,2002:timestamp"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
        list("-+0123456789."),
    )

    def mapping(loader: Any, node: Any) -> dict:
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise LedgerError(f"{path}: line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            seen.add(key)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=True)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=Loader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        raise LedgerError(f"{path}: not valid YAML: {exc}") from None


def _where(label: str, doc: Any, path: Sequence[Any]) -> str:
    """``FILE: claim 'ID': field check.at_least`` for an error at ``path`` inside the document."""
    parts = list(path)
    head = label
    if len(parts) >= 2 and parts[0] == "claims" and isinstance(parts[1], int):
        entry = doc["claims"][parts[1]]
        cid = entry.get("id") if isinstance(entry, dict) else None
        head += f": claim {cid!r}" if isinstance(cid, str) else f": claims[{parts[1]}]"
        parts = parts[2:]
    return head + (": field " + ".".join(str(p) for p in parts) if parts else "")


def _schema_errors(label: str, doc: Any) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(SCHEMA)
    out = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path]):
        best = jsonschema.exceptions.best_match(err.context) if err.context else err
        message = best.message
        if "check" in [str(p) for p in best.absolute_path][-2:] or best.validator == "maxProperties":
            message += f" (a check is one mapping of: {', '.join(CHECK_KINDS)})"
        out.append(f"{_where(label, doc, best.absolute_path)}: {message}")
    return out


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        if set(node) == {"ref"}:
            return {node["ref"]}
        return set().union(*(_refs(v) for v in node.values())) if node else set()
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node)) if node else set()
    return set()


def _conditions(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    nr = entry.get("not_reproduced")
    expected = nr.get("expected") if isinstance(nr, dict) else None
    return [] if expected is None else (expected if isinstance(expected, list) else [expected])


def read_ledger(path: str | Path, chapter: str | None = None) -> Ledger:
    """Read and validate a ledger; raise :class:`LedgerError` naming the file, claim and field."""
    path = Path(path)
    if not path.is_file():
        raise LedgerError(f"{path}: no such ledger (book/claims/<chapter>.yaml)")
    doc = _load_yaml(path)
    label = Ledger(path, "", []).label
    errors = _schema_errors(label, doc)
    if errors:
        raise LedgerError(f"{len(errors)} problem(s) in the claims ledger:\n  " + "\n  ".join(errors))
    if doc["chapter"] != (chapter or path.stem):
        errors.append(
            f"{label}: field chapter: {doc['chapter']!r} is not the chapter {chapter or path.stem!r}"
        )
    values, diagnostics = doc.get("values", {}), doc.get("diagnostics", {})
    seen: set[str] = set()
    used_values: set[str] = set()
    used_diags: set[str] = set()
    for i, entry in enumerate(doc["claims"]):
        where = lambda *f: _where(label, doc, ["claims", i, *f])  # noqa: E731
        if entry["id"] in seen:
            errors.append(f"{where()}: the id is declared twice")
        seen.add(entry["id"])
        used_values |= _refs(entry) | _refs(doc.get("defaults", {}))
        used_values |= {n for n in values if re.search(r"\{" + n + r"[}:!]", entry["statement"])}
        for j, cond in enumerate(_conditions(entry)):
            kinds = [k for k in cond if k != "diagnostic"]
            if len(kinds) != 1:
                errors.append(
                    f"{where('not_reproduced', 'expected', j)}: give exactly one check "
                    f"({', '.join(CHECK_KINDS)}), optionally with diagnostic: NAME; got {sorted(cond)}"
                )
            if "diagnostic" in cond:
                used_diags.add(cond["diagnostic"])
                if cond["diagnostic"] not in diagnostics:
                    errors.append(
                        f"{where('not_reproduced', 'expected', j, 'diagnostic')}: {cond['diagnostic']!r} "
                        "is not listed under diagnostics:"
                    )
        kind = entry.get("kind", doc.get("defaults", {}).get("kind", "reproduction"))
        if kind == "reproduction" and "basis" not in entry:
            errors.append(
                f"{where('basis')}: a reproduction states its basis, one of {', '.join(_v.BASES)} "
                "(exact: a paper's closed form or identity against an independent computation; "
                "dynamical: what training shows; statistical: what sampling shows)"
            )
        if kind == "check" and "basis" in entry:
            errors.append(
                f"{where('basis')}: a check has no basis ({entry['basis']!r}); only reproductions state one"
            )
        if entry.get("range") is not None:
            lo, hi = (d if v is None else v for v, d in zip(entry["range"], (-math.inf, math.inf)))
            if not lo < hi:
                errors.append(
                    f"{where('range')}: {entry['range']} is not [lo, hi] with lo < hi (null: unbounded)"
                )
        if not _refs(entry["check"]):  # a literal check is built now: its arguments must make sense
            try:
                make_check(entry["check"], {})
            except ParameterError as exc:
                errors.append(f"{where('check')}: {exc}")
    errors += [f"{label}: values: {n!r} is referenced by no claim" for n in sorted(set(values) - used_values)]
    errors += [
        f"{label}: values: {n!r} is referenced but not listed" for n in sorted(used_values - set(values))
    ]
    errors += [
        f"{label}: diagnostics: {n!r} is tested by no prediction"
        for n in sorted(set(diagnostics) - used_diags)
    ]
    if errors:
        raise LedgerError(f"{len(errors)} problem(s) in the claims ledger:\n  " + "\n  ".join(errors))
    defaults = doc.get("defaults", {})
    claims = [{**defaults, **entry} for entry in doc["claims"]]
    texts = {n: d["text"] if isinstance(d, dict) else d for n, d in diagnostics.items()}
    sources = {n: d["source"] if isinstance(d, dict) else "run" for n, d in diagnostics.items()}
    return Ledger(path, doc["chapter"], claims, dict(values), texts, sources)


# -- from data to the harness's objects -----------------------------------------------------------


def _resolve(arg: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(arg, dict) and set(arg) == {"ref"}:
        if arg["ref"] not in values:
            raise LedgerError(
                f"the value {arg['ref']!r} is not given: pass it to run.show_ledger({arg['ref']}=...)"
            )
        return _checks.to_plain(values[arg["ref"]])
    return arg


def make_check(spec: Mapping[str, Any], values: Mapping[str, Any]) -> _checks.Check:
    """The :class:`~nlcl.harness.claims.checks.Check` of a ledger's ``check:`` (``{at_least: 8}``); a
    ``{ref: NAME}`` argument takes ``values[NAME]``."""
    ((kind, arg),) = spec.items()
    if kind in ("at_least", "at_most", "greater_than", "less_than"):
        return getattr(_checks, kind)(_resolve(arg, values))
    if kind == "exactly":
        return _checks.exactly(_resolve(arg, values))
    if kind == "between":
        return _checks.between(*(_resolve(a, values) for a in arg))
    if kind == "approx":
        tol = {k: _resolve(arg[k], values) for k in ("rtol", "atol") if k in arg}
        return _checks.approx(_resolve(arg["value"], values), **tol)
    if kind == "is_true":
        return _checks.is_true()
    raise LedgerError(f"unknown check {kind!r}; one of {CHECK_KINDS}")  # pragma: no cover - the schema


def make_rule(spec: Any, values: Mapping[str, Any]) -> _v.SeedRule | None:
    """The seed rule of a ledger's ``decide:`` (``check_on_mean``, ``{holds_on_fraction: 0.8}``)."""
    if spec is None:
        return None
    if isinstance(spec, str):
        return getattr(_v, spec)()
    ((name, arg),) = spec.items()
    return getattr(_v, name)(_resolve(arg, values))


def _prediction(conditions: list[dict[str, Any]], values: Mapping[str, Any], diagnostics: Mapping[str, Any]):
    """The ``expected`` predicate of a not-reproduced explanation: every condition holds (on the
    measured value, or on the named diagnostic, looked up when the claim is measured)."""
    built = [
        (c.get("diagnostic"), make_check({k: v for k, v in c.items() if k != "diagnostic"}, values))
        for c in conditions
    ]

    def expected(measured: Any) -> bool:
        for name, check in built:
            if name is not None and name not in diagnostics:
                raise MissingDiagnostic(
                    f"a not-reproduced prediction tests the diagnostic {name!r}: provide it with "
                    f"run.diagnostic({name!r}, value) before measuring the claim"
                )
            if not check(measured if name is None else diagnostics[name]):
                return False
        return True

    expected.description = " and ".join(f"{name or 'measured'} {check.description}" for name, check in built)
    return expected


def declare_ledger(
    led: Ledger,
    values: Mapping[str, Any],
    registry: Any,
    params: Mapping[str, Any],
    *,
    paper_setting: bool,
    at_paper: Callable[..., bool],
) -> dict[str, Any]:
    """Declare every claim of ``led`` in ``registry`` and show the ledger table; returns id → claim.

    ``values``: the values the ledger's checks reference (``{ref: NAME}``), all of them; ``params``:
    the run's parameters (a statement may name them); ``paper_setting`` and ``at_paper``: the run's
    answers to ``required: paper_setting`` and ``required: {at_paper: [...]}``. What
    :meth:`nlcl.harness.run.chapter.Run.show_ledger` does once it has read the ledger.
    """
    if registry.records or registry.unmeasured():
        raise LedgerError(
            f"{led.label}: run.show_ledger() comes before any claim is declared or measured; "
            f"declared inline already: {sorted({r['id'] for r in registry.records} | set(registry.unmeasured()))}"
        )
    missing, extra = sorted(set(led.values) - set(values)), sorted(set(values) - set(led.values))
    clash = sorted(set(values) & set(params))
    if missing or extra or clash:
        raise LedgerError(
            f"{led.label}: run.show_ledger() takes the values listed under values: {sorted(led.values)}; "
            f"missing {missing}, not listed {extra}, named like a parameter {clash}"
        )
    values = dict(values)
    names = {**{k: _checks.to_plain(v) for k, v in params.items()}, **values}

    def required(spec: Any) -> bool:
        if isinstance(spec, bool):
            return spec
        if spec == "paper_setting":
            return paper_setting
        if "at_paper" in spec:
            return at_paper(*spec["at_paper"])
        value = _resolve(spec, values)
        if not isinstance(value, bool):
            raise LedgerError(f"the value {spec['ref']!r} must be True or False, got {value!r}")
        return value

    def explanation(spec: Any, value_range: Any) -> Any:
        """A ``not_reproduced:`` mapping as a :class:`~nlcl.harness.claims.verdicts.NotReproduced` whose
        ``expected`` is the declared prediction, ``band`` its conditions on the measured value, with
        the diagnostics' sources and the claim's ``range`` (a string is left to ``declare``, as inline)."""
        if not isinstance(spec, dict):
            return spec
        nr = dict(spec)
        if "expected" in nr:
            conds = nr["expected"] if isinstance(nr["expected"], list) else [nr["expected"]]
            nr["expected"] = _prediction(conds, values, registry.diagnostics)
            nr["diagnostics"] = tuple(c["diagnostic"] for c in conds if c.get("diagnostic"))
            on_measured = [c for c in conds if not c.get("diagnostic")]
            nr["band"] = _prediction(on_measured, values, {}) if on_measured else None
            nr["sources"] = {n: led.diagnostic_sources.get(n, "run") for n in nr["diagnostics"]}
        if value_range is not None:
            nr["value_range"] = tuple(
                (-math.inf, math.inf)[i] if v is None else v for i, v in enumerate(value_range)
            )
        return _v.NotReproduced(**nr)

    claims = {}
    for i, entry in enumerate(led.claims):
        try:  # the keywords of registry.declare (= of run.expect) for this entry
            kwargs = dict(
                source=entry["source"],
                statement=_field("statement", _render, entry["statement"], names),
                check=_field("check", make_check, entry["check"], values),
                paper=entry.get("paper"),
                required=_field("required", required, entry.get("required", True)),
                profiles=tuple(entry.get("profiles", PROFILES)),
                not_reproduced=_field(
                    "not_reproduced", explanation, entry.get("not_reproduced"), entry.get("range")
                ),
                kind=entry.get("kind", "reproduction"),
                basis=entry.get("basis"),
                revised=entry.get("revised", ()),
                decide=_field("decide", make_rule, entry.get("decide"), values),
                timing=entry.get("timing", False),
                fails=(entry.get("fails") or {}).get("why"),
            )
        except ParameterError as exc:
            raise LedgerError(f"{_where(led.label, {'claims': led.claims}, ['claims', i])}: {exc}") from None
        claims[entry["id"]] = registry.declare(entry["id"], **kwargs)
    registry.ledger = led.label
    if registry.display_values:
        show_markdown(ledger_markdown(led, claims, values))
    return claims


def ledger_claim(led: Ledger | None, claims: Mapping[str, Any], id: str) -> Any:
    """The claim ``id`` that ``led`` declared (``run.claim(ID)``), or an error naming the near miss."""
    if led is None:
        raise LedgerError(f"run.claim({id!r}): call run.show_ledger() first (declared before measured)")
    if id not in claims:
        import difflib

        near = difflib.get_close_matches(id, claims, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f"; it declares {sorted(claims)}"
        raise LedgerError(f"run.claim({id!r}): {led.label} declares no such claim{hint}")
    return claims[id]


def _field(name: str, make: Any, *args: Any) -> Any:
    """``make(*args)``, with an error that names the ledger field it came from."""
    try:
        return make(*args)
    except ParameterError as exc:
        raise LedgerError(f"field {name}: {exc}") from None


def _render(template: str, names: Mapping[str, Any]) -> str:
    """A statement with ``{NAME}`` replaced by a parameter's or a value's value (``{{`` is ``{``)."""

    class Names(dict):
        def __missing__(self, key: str) -> Any:
            raise LedgerError(f"{{{key}}} names no parameter or value; known: {sorted(names)}")

    try:
        return template.format_map(Names(names))
    except LedgerError:
        raise
    except (ValueError, IndexError, AttributeError) as exc:
        raise LedgerError(f"{exc} (write a literal brace as {{{{ or }}}})") from None


def timing_chapters(root: str | Path | None = None) -> list[str]:
    """Chapters with a wall-clock claim (``timing: true``), for ``.ci/run timing`` (run as ``__main__``)."""
    return sorted(
        p.stem for p in ledger_dir(root).glob("*.yaml") if any(c.get("timing") for c in read_ledger(p).claims)
    )


if __name__ == "__main__":  # pragma: no cover
    print("\n".join(timing_chapters()))
