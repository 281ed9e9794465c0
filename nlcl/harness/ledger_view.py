"""How a chapter's claims ledger is shown (a markdown table, in place, before any measurement) and
how its use is checked (the claim calls of a chapter's source, by AST). See :mod:`nlcl.harness.ledger`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from nlcl.harness.checks import to_plain

__all__ = ["claim_calls", "from_ledgers", "ledger_markdown"]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value(value: Any) -> str:
    value = to_plain(value)
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def ledger_markdown(led: Any, claims: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The ledger as a markdown table (declared claims ``claims``: id → :class:`~nlcl.harness.claims.Claim`),
    with the values the checks use and the not-reproduced explanations declared in advance."""
    rows = [
        f"**Claims of this chapter, declared before anything is measured** (`{led.label}`)",
        "",
        "| claim | statement | source | check | decided by | required · kind | revisions |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    notes = []
    for cid, c in claims.items():
        paper = None if c.paper is None or str(c.paper) == c.check.description else c.paper
        check = c.check.description + ("" if paper is None else f" (paper: {paper})")
        rule = c.decide.description if c.decide is not None else "one measurement"
        required = ("required" if c.required else "reported, not required") + f" · {c.kind}"
        revisions = "; ".join(
            f"{r['from']} → {r['to']}" + (f" ({r['date']})" if r.get("date") else "") + f": {r['reason']}"
            for r in c.revised
        )
        rows.append(
            "| "
            + " | ".join(
                _cell(x) for x in (f"`{cid}`", c.statement, c.source, check, rule, required, revisions or "—")
            )
            + " |"
        )
        nr = c.not_reproduced
        if nr is not None:
            predicts = getattr(nr.expected, "description", None)
            notes.append(
                f"- `{cid}`: {nr.why} (applies in {nr.scope()}"
                + (f"; predicts {predicts}" if predicts else "")
                + (f"; evidence: {nr.evidence}" if nr.evidence else "")
                + ")"
            )
    if values:
        used = ", ".join(f"`{k}` = {_value(v)} ({led.values[k]})" for k, v in values.items())
        rows += ["", f"Values the checks use: {used}."]
    if notes:
        rows += ["", "Not-reproduced explanations, declared with what they predict:", "", *notes]
    return "\n".join(rows)


def claim_calls(source: str) -> dict[str, list[str]]:
    """The claim calls of a chapter's source, by AST: ``measured`` (ids of ``run.claim("ID")``),
    ``inline`` (ids of ``run.expect(...)`` or ``run.claim(ID, value, ...)``; ``<dynamic>`` when not
    a literal), ``show_ledger`` (one entry per ``run.show_ledger(...)`` call)."""
    out: dict[str, list[str]] = {"measured": [], "inline": [], "show_ledger": []}
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        if not isinstance(node.func, ast.Attribute):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "run"):
            continue
        name = node.func.attr
        first = node.args[0] if node.args else None
        cid = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else "<dynamic>"
        if name == "show_ledger":
            out["show_ledger"].append("run.show_ledger")
        elif name == "expect" or (name == "claim" and (len(node.args) > 1 or node.keywords)):
            out["inline"].append(cid)
        elif name == "claim":
            out["measured"].append(cid)
    return out


def from_ledgers(records: list[dict[str, Any]], root: Any) -> list[dict[str, Any]]:
    """Claim records with their static text read from the chapters' ledgers, as the report and the
    dashboard show them: for a chapter with ``book/claims/<chapter>.yaml``, each record's source,
    statement (its ``{name}`` templates filled from the record's parameters; the record's own
    rendering where it names a value the chapter computed) and revisions come from the ledger, and
    ``ledger`` names the file. Records of chapters without a ledger, and ids a ledger lacks, are
    returned as they are (the repository test keeps ledgers and chapters in step)."""
    from pathlib import Path

    from nlcl.harness.ledger import ledger_path, read_ledger
    from nlcl.harness.verdicts import normalize_revisions

    cache: dict[str, Any] = {}
    out = []
    for rec in records:
        chapter = rec.get("chapter")
        if chapter not in cache:
            path = ledger_path(chapter, Path(root))
            cache[chapter] = read_ledger(path, chapter) if path.is_file() else None
        led = cache[chapter]
        entry = None if led is None else next((c for c in led.claims if c["id"] == rec.get("id")), None)
        if entry is None:
            out.append(rec)
            continue
        names = {k: to_plain(v) for k, v in (rec.get("parameters") or {}).items()}
        try:
            statement = entry["statement"].format(**names)
        except (KeyError, IndexError, ValueError, AttributeError):
            statement = rec.get("statement", entry["statement"])
        revised = normalize_revisions(entry.get("revised", []))
        out.append(
            {
                **rec,
                "source": entry["source"],
                "statement": statement,
                "revised": revised,
                "ledger": led.label,
            }
        )
    return out
