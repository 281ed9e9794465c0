"""How a claim record is shown: its verdict under the measuring cell and its row in a chapter table.

Used by :mod:`nlcl.harness.claims.registry` (each measurement shows its verdict, with the anchor the
reproducibility page links to) and :mod:`nlcl.harness.site.report` (status badges).
"""

from __future__ import annotations

from typing import Any

from nlcl.harness.claims import verdicts as _v

__all__ = ["records_table_markdown", "status_badge", "show_claim", "show_markdown"]


def status_badge(status: str, required: bool = True) -> str:
    """A short status label for tables: ✓ pass, ✗ fail, ⚠ not reproduced, ⊘ invalid, ◷ not gated
    (a timing claim measured beside other chapters) (+ 'info'). Text symbols, not emoji: the
    default fonts (DejaVu, Liberation) have them, where emoji show as empty boxes."""
    label = {
        "pass": "✓ pass",
        "fail": "✗ fail",
        "not-reproduced": "⚠ not reproduced",
        "invalid": "⊘ invalid",
        _v.NOT_GATED: "◷ not gated",
    }[status]
    return label if required else f"{label} (info)"


def _measured(rec: dict[str, Any]) -> str:
    """The measured cell of a chapter's claims table: the deciding value, with the seed statistics."""
    s = rec.get("seeds")
    if s and s.get("pooled"):
        return f"{_format(rec['measured'])} (seed-averaged; per seed: {_per_seed(s)})"
    if s and s.get("mean") is not None:
        return f"{s['mean']:.4g} ± {s['std']:.2g} ({s['n']} seeds, {100 * s['holds_fraction']:.0f}% hold)"
    return _format(rec["measured"])


def _per_seed(s: dict[str, Any]) -> str:
    spread = (
        f"{s['mean']:.4g} ± {s['std']:.2g}" if s.get("mean") is not None else ", ".join(map(str, s["values"]))
    )
    return f"{spread}, {100 * s['holds_fraction']:.0f}% of {s['n']} hold"


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and len(value) > 6:
        return "[" + ", ".join(_format(v) for v in value[:6]) + ", …]"
    return str(value)


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def show_claim(rec: dict[str, Any]) -> None:
    """Show a measured claim's verdict (markdown in a notebook), anchored as ``#claim-<id>``."""
    text = (
        f"{status_badge(rec['status'], rec['required'])} — **{rec['id']}** ({rec['source']}): "
        f"{rec['statement']} Check: {rec['tolerance']}; measured: {_format(rec['measured'])}."
    )
    if rec.get("seeds") and rec["seeds"].get("mean") is not None:
        s = rec["seeds"]
        text += f" Over {s['n']} seeds: {s['mean']:.4g} ± {s['std']:.3g}, holds on {100 * s['holds_fraction']:.0f}% ({s['rule']})."
        if s.get("margin_within_spread"):
            text += " The margin to the threshold is smaller than the seed spread."
    elif rec.get("seeds") and _v.is_finite(rec["seeds"].get("values")):
        s = rec["seeds"]
        text += f" Over {s['n']} seeds: {', '.join(map(str, s['values']))}; holds on {100 * s['holds_fraction']:.0f}% ({s['rule']})."
    computed = rec.get("computed", _v.THIS_RUN)
    if computed.startswith(_v.THIS_RUN + ","):
        text += f" Computed in {computed}."
    elif computed != _v.THIS_RUN:
        text += f" Not computed in this run: {computed}."
    if rec["status"] == _v.NOT_GATED:
        text += f"\n\n> **Not gated**: {rec.get('gate_note')}."
    if rec["status"] == "not-reproduced" and rec["note"]:
        text += f"\n\n> **Not reproduced** ({rec['note_scope']}). {rec['note']}"
        text += _prediction_text(rec.get("note_prediction"))
    elif rec.get("note_stale"):
        text += f"\n\n> **Stale explanation**: this claim passed; its not-reproduced note no longer applies: {rec['note']}"
    # The anchor the reproducibility page links to (the claim's place in its chapter).
    anchor = f'<span id="claim-{rec["id"]}"></span>' if _in_notebook() else ""
    show_markdown(anchor + text)


def _prediction_text(pred: dict[str, Any] | None) -> str:
    """What the explanation predicted, as the record stores it (diagnostics and their values)."""
    if not pred:
        return ""
    if pred.get("kind") == "diagnostics":
        values = ", ".join(f"{k} = {_format(v)}" for k, v in pred["diagnostics"].items())
        return f" *Its prediction tested the diagnostics {values}.*"
    if pred.get("excluded") is not None:
        return f" *Its prediction excludes {100 * pred['excluded']:.0f}% of the failure region.*"
    return ""


def show_markdown(text: str) -> None:
    """Display markdown as rich output in a notebook, as plain text elsewhere."""
    if _in_notebook():
        from IPython.display import Markdown, display

        display(Markdown(text))
    else:
        print(text)


def records_table_markdown(records: list[dict[str, Any]]) -> str:
    """The chapter's claims as markdown: a table of reproductions, then a table of checks."""
    if not records:
        return "_This chapter records no claims._"
    out = []
    for kind, title in (("reproduction", "Reproductions"), ("check", "Checks of our implementation")):
        recs = [r for r in records if r.get("kind", "reproduction") == kind]
        if not recs:
            continue
        rows = [
            f"*{title}*",
            "",
            "| claim | source | check | measured | status |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in recs:
            status = status_badge(r["status"], r["required"]) + (
                " (stale explanation)" if r.get("note_stale") else ""
            )
            if r.get("computed", _v.THIS_RUN) != _v.THIS_RUN:
                status += f" ({r['computed']})"
            rows.append(f"| `{r['id']}` | {r['source']} | {r['tolerance']} | {_measured(r)} | {status} |")
        out.append("\n".join(rows))
    return "\n\n".join(out)
