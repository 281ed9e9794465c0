"""How a chapter's claims ledger is shown (a markdown table, in place, before any measurement) and
how its use is checked (the claim calls of a chapter's source, by AST). See :mod:`nlcl.harness.claims.ledger`.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from nlcl.harness.claims.checks import to_plain

__all__ = ["claim_calls", "ledger_markdown", "ledger_summary"]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _value(value: Any) -> str:
    value = to_plain(value)
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def ledger_summary(led: Any, claims: Mapping[str, Any]) -> str:
    """The ledger's one-line summary: how many claims, how many required, of which kinds."""
    n = len(claims)
    required = sum(1 for c in claims.values() if c.required)
    kinds: dict[str, int] = {}
    for c in claims.values():
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    parts = ", ".join(f"{k} {kind}{'s' if k != 1 else ''}" for kind, k in sorted(kinds.items()))
    return f"The claims of this chapter: {n} declared ({parts}), {required} required"


def ledger_markdown(led: Any, claims: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The ledger as a markdown table (declared claims ``claims``: id → :class:`~nlcl.harness.claims.registry.Claim`),
    with the values the checks use, the not-reproduced explanations declared in advance and the
    revisions, in a block collapsed by default whose summary line counts the claims."""
    rows = [
        '<details class="nlcl-ledger">',
        f"<summary>{ledger_summary(led, claims)}. Declared before anything is measured, in "
        f"<code>{led.label}</code>.</summary>",
        "",
        "| claim | statement | source | check | decided by | required · kind |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    notes, revisions, failures = [], [], []
    for cid, c in claims.items():
        paper = None if c.paper is None or str(c.paper) == c.check.description else c.paper
        check = c.check.description + ("" if paper is None else f" (paper: {paper})")
        rule = c.decide.description if c.decide is not None else "one measurement"
        required = ("required" if c.required else "reported, not required") + f" · {c.kind}"
        revisions += [
            f"- `{cid}`: {r['from']} → {r['to']}"
            + (f" ({r['date']})" if r.get("date") else "")
            + f": {r['reason']}"
            for r in c.revised
        ]
        rows.append(
            "| "
            + " | ".join(_cell(x) for x in (f"`{cid}`", c.statement, c.source, check, rule, required))
            + " |"
        )
        if getattr(c, "fails", None):
            failures.append(f"- `{cid}`: {c.fails}")
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
    if failures:
        rows += [
            "",
            "Declared failures (required claims that fail, with no prediction to explain them):",
            "",
            *failures,
        ]
    if revisions:
        rows += ["", "Revisions of the ledger (the reasons recorded with each):", "", *revisions]
    rows += ["", "</details>"]
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
