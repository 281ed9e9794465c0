"""The reproducibility report: every claim of the book and every chapter's run time, one page.

Written by ``nlcl book`` (:func:`nlcl.harness.site.build_book`) into the staged ``book/reproducibility.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nlcl.harness.claims import status_badge

__all__ = ["REPORT_MARKER", "write_report"]


REPORT_MARKER = "<!-- nlcl:claims-report -->"


def _fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        inner = ", ".join(_fmt_value(v) for v in value[:6])
        return f"[{inner}{', …' if len(value) > 6 else ''}]"
    return str(value).replace("|", "\\|")


def write_report(
    records: list[dict[str, Any]],
    timings: dict[str, dict[str, Any]],
    template: Path,
    destination: Path,
    chapter_order: list[str] | None = None,
) -> dict[str, int]:
    """Write the reproducibility report: every claim (source, paper value, measured, tolerance,
    status, chapter link) and per-chapter run time, into ``template`` at :data:`REPORT_MARKER`.
    Returns the counts per status.
    """
    order = {c: i for i, c in enumerate(chapter_order or [])}
    records = sorted(records, key=lambda r: (order.get(r["chapter"], len(order)), r["chapter"]))
    counts = {s: sum(r["status"] == s for r in records) for s in ("pass", "fail", "not-reproduced")}
    lines = [
        f"**{len(records)} claims**: {counts['pass']} pass, {counts['fail']} fail, "
        f"{counts['not-reproduced']} not reproduced "
        f"(profile `{records[0]['profile'] if records else '—'}`, commit `{records[0]['commit'] if records else '—'}`).",
        "",
        "| claim | chapter | source | statement | paper | measured | check | status |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        lines.append(
            f"| `{r['id']}` | {{doc}}`{r['chapter']}` | {r['source']} | {r['statement']} | "
            f"{_fmt_value(r['expected'])} | {_fmt_value(r['measured'])} | {r['tolerance']} | "
            f"{status_badge(r['status'], r['required'])} |"
        )
    notes = [r for r in records if r.get("note") and r["status"] != "pass"]
    if notes:
        lines += ["", "## Not reproduced", ""]
        for r in notes:
            lines.append(f"- `{r['id']}` ({{doc}}`{r['chapter']}`): {r['note']}")
    if timings:
        lines += [
            "",
            "## Chapter run times",
            "",
            "| chapter | profile | run time | status |",
            "| --- | --- | --- | --- |",
        ]
        for name in sorted(timings, key=lambda c: order.get(c, len(order))):
            t = timings[name]
            lines.append(
                f"| {{doc}}`{name}` | `{t['profile']}` | {t['seconds']:.1f} s | {'ok' if t['ok'] else 'failed'} |"
            )
    text = template.read_text()
    body = "\n".join(lines)
    text = text.replace(REPORT_MARKER, body) if REPORT_MARKER in text else text + "\n\n" + body + "\n"
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text)
    return counts
