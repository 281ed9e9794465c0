"""The claims dashboard of the reproducibility page: a summary figure and a filterable table.

:func:`write_dashboard` turns the claim records of a build (``_build/claims/*.json``) and the
chapter timings into

* ``claims-summary.svg`` next to the page: per chapter, how many reproductions passed / were not
  reproduced / failed (/ were invalid), checks of our own code in a separate panel;
* ``_static/nlcl-claims.json``: every claim as one row (the data behind the table, offered for
  download);
* an HTML table written into the page at :data:`DASHBOARD_MARKER`: one row per claim with the
  paper value, the tolerance, and the verdict (with measured value and seed statistics) at ``ci``
  and at ``full`` scale side by side, and a link to the claim's place in its chapter (the anchor
  ``#claim-<id>`` at its check cell). The table is rendered on the server, so it reads without
  JavaScript; ``_static/nlcl.js`` adds sorting, the filters (paper, chapter, status, kind,
  profile, free text) and the clamping of long statements (expanded on click). Its columns fit a
  1280-pixel window without horizontal scrolling.

Optional record fields are shown when present and as "—" when not: ``kind`` ("reproduction" or
"check"), ``seeds`` (n, mean, std, holds_fraction, values), ``full`` (the paper-scale verdict:
status, measured, artifact), ``revised`` (tolerance revisions); status ``invalid`` besides pass,
fail and not-reproduced.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlcl.harness.run.spec import PROFILES

__all__ = [
    "DASHBOARD_MARKER",
    "STATUS_LABELS",
    "paper_of",
    "claim_rows",
    "summary_counts",
    "summary_figure",
    "dashboard_html",
    "write_dashboard",
]

DASHBOARD_MARKER = "<!-- nlcl:claims-dashboard -->"
#: Verdicts in display order, with their labels.
STATUS_LABELS = {
    "pass": "pass",
    "not-reproduced": "not reproduced",
    "fail": "fail",
    "invalid": "invalid",
    "not-gated": "not gated",  # a timing claim measured beside other chapters (see _gate_note)
}
STATUS_COLORS = {
    "pass": "#029e73",
    "not-reproduced": "#de8f05",
    "fail": "#d55e00",
    "invalid": "#949494",
    "not-gated": "#56b4e9",
}
_ALWAYS_COUNTED = ("pass", "not-reproduced", "fail")  # the others are named only when present
MISSING = "—"
_PAPERS = {"tian": "Tian 2023", "esser": "Esser et al. 2024", "renli": "Ren & Li 2023"}
FIGURE_NAME = "claims-summary.svg"
DATA_NAME = "nlcl-claims.json"


def paper_of(record: Mapping[str, Any]) -> str:
    """The paper a claim comes from: its source up to the first comma ("Tian 2023, Eq. 8" →
    "Tian 2023"), else the paper of the chapter's prefix (``tian-…`` → "Tian 2023")."""
    source = str(record.get("source") or "").split(",")[0].strip()
    if re.search(r"\b(19|20)\d\d\b", source):
        return source
    prefix = str(record.get("chapter", "")).split("-")[0]
    return _PAPERS.get(prefix, source or MISSING)


def _fmt(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, list):
        inner = ", ".join(_fmt(v) for v in value[:6])
        return f"[{inner}{', …' if len(value) > 6 else ''}]"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items())
    return str(value)


def _sort_key(value: Any) -> str | float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return float(value)
    return _fmt(value)


def _seeds(seeds: Any) -> str:
    if not isinstance(seeds, Mapping):
        return MISSING
    n = seeds.get("n")
    parts = []
    if seeds.get("mean") is not None:
        std = seeds.get("std")
        parts.append(_fmt(seeds["mean"]) + (f" ± {_fmt(std)}" if std is not None else ""))
    frac = seeds.get("holds_fraction")
    if frac is not None:
        held = f"{round(frac * n)}/{n}" if isinstance(n, int) and n > 0 else f"{100 * frac:.0f}%"
        parts.append(f"holds {held}")
    text = "; ".join(parts) or _fmt(seeds.get("values"))
    return f"n={n}: {text}" if n is not None else text


def claim_rows(
    records: Sequence[Mapping[str, Any]], chapter_order: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One flat row per claim (reading order: chapters as in the table of contents).

    Each row has the record's id, chapter, paper, source, statement, kind, required flag, paper
    value (``expected``), tolerance, note, revisions, the link to its anchor in the chapter
    (``<chapter>.html#claim-<id>``), and ``at``: the verdict per profile (``ci``/``full``:
    status, measured, seeds, artifact), from the record's own profile and from its ``full`` field.
    """
    order = {c: i for i, c in enumerate(chapter_order or [])}
    rows = []
    for rec in sorted(records, key=lambda r: (order.get(r["chapter"], len(order)), r["chapter"])):
        at: dict[str, dict[str, Any]] = {}
        full = rec.get("full")
        keys = ("status", "measured", "seeds", "artifact", "data_source", "computed")
        if isinstance(full, Mapping) and full:
            at["full"] = {k: full.get(k) for k in keys}
        at[rec.get("profile") or "ci"] = {
            **{k: rec.get(k) for k in keys},
            "artifact": None,
            "data_source": (rec.get("parameters") or {}).get("data_source"),
        }
        rows.append(
            {
                "id": rec["id"],
                "chapter": rec["chapter"],
                "paper": paper_of(rec),
                "source": rec.get("source", ""),
                "statement": rec.get("statement", ""),
                "kind": rec.get("kind") or MISSING,
                # a reproduction's basis (exact, dynamical, statistical); "unclassified" when its
                # record predates the field; None for a check
                "basis": (rec.get("basis") or "unclassified") if rec.get("kind") != "check" else None,
                "required": bool(rec.get("required", True)),
                "expected": rec.get("expected"),
                "tolerance": rec.get("tolerance"),
                "status": rec["status"],
                "profile": rec.get("profile") or "ci",
                "note": rec.get("note"),
                "gate_note": rec.get("gate_note"),
                "revised": rec.get("revised") or [],
                "commit": rec.get("commit"),
                "href": f"{rec['chapter']}.html#claim-{rec['id']}",
                "at": at,
                "held_out": rec.get("held_out"),
                "held_out_full": rec.get("held_out_full"),
            }
        )
    return rows


def summary_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """Per chapter and kind ("reproduction", "check", or "—" where the record has no kind): the
    number of claims per status of the build's own profile."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        by_kind = out.setdefault(row["chapter"], {})
        counts = by_kind.setdefault(row["kind"], {s: 0 for s in STATUS_LABELS})
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return out


def summary_figure(
    rows: Sequence[Mapping[str, Any]], path: str | Path, chapter_order: Sequence[str] | None = None
) -> Path:
    """Draw the per-chapter summary (stacked horizontal bars per status) as an SVG file.

    Reproductions (and claims without a recorded kind) on the left, checks of our own code on the
    right when there are any.
    """
    import matplotlib
    from matplotlib.figure import Figure

    counts = summary_counts(rows)
    chapters = [c for c in (chapter_order or []) if c in counts] + sorted(
        c for c in counts if c not in (chapter_order or [])
    )
    kinds = {row["kind"] for row in rows}
    panels = [("reproduction", "Reproductions" if MISSING not in kinds else "Claims")]
    if "check" in kinds:
        panels.append(("check", "Checks of our code"))
    height = max(2.0, 0.32 * len(chapters) + 1.2)
    with matplotlib.rc_context({"svg.fonttype": "none", "font.size": 9}):
        fig = Figure(figsize=(4.2 * len(panels) + 1.8, height), layout="constrained")
        axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
        y = list(range(len(chapters)))
        for ax, (kind, title) in zip(axes, panels):
            left = [0] * len(chapters)
            for status, color in STATUS_COLORS.items():
                widths = []
                for c in chapters:
                    groups = counts[c]
                    keys = [kind] if kind == "check" else [k for k in groups if k != "check"]
                    widths.append(sum(groups.get(k, {}).get(status, 0) for k in keys))
                if any(widths):
                    ax.barh(y, widths, left=left, color=color, label=STATUS_LABELS[status], height=0.7)
                left = [a + b for a, b in zip(left, widths)]
            ax.set_title(title)
            ax.set_xlabel("number of claims")
            ax.grid(axis="y", visible=False)
            ax.grid(axis="x", color="0.85", linewidth=0.6)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        axes[0].set_yticks(y, chapters)
        axes[0].invert_yaxis()
        handles, labels = [], []
        for ax in axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), frameon=False)
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, format="svg")
    return path


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _math(text: str) -> str:
    """Escape for HTML and turn ``$…$`` into ``\\(…\\)`` so that MathJax typesets it."""
    return re.sub(r"\$([^$]+)\$", r"\\(\1\\)", _e(text))


def _verdict_cell(row: Mapping[str, Any], profile: str) -> str:
    """One cell for one profile: the verdict first (what a reader scans for), then the measured
    value, with seed statistics below it; the record it comes from (``artifact``) is the cell's
    title. Sorting by it sorts by verdict."""
    at = row["at"].get(profile)
    held_full = _held_out_full_line(row) if profile == "full" else ""
    if not at or at.get("status") is None:
        return f'<td class="nlcl-verdict" data-sort="">{MISSING}{held_full}</td>'
    status = at["status"]
    label = STATUS_LABELS.get(status, status)
    if not row["required"] and profile == row["profile"]:
        label += " (info)"
    rank = list(STATUS_LABELS).index(status) if status in STATUS_LABELS else len(STATUS_LABELS)
    extra = f'<br><span class="nlcl-num" title="measured">{_e(_fmt(at.get("measured")))}</span>'
    if at.get("seeds") is not None:
        extra += f'<br><span class="nlcl-seeds" title="seeds">{_e(_seeds(at["seeds"]))}</span>'
    extra += _provenance_line(at)
    extra += _held_out_line(row) if profile == "ci" else held_full
    # The record it comes from (the same file for a chapter's rows): on hover, not in the way.
    title = f' title="from {_e(at["artifact"])}"' if at.get("artifact") else ""
    return (
        f'<td class="nlcl-verdict" data-sort="{rank}"{title}>'
        f'<span class="nlcl-status nlcl-{_e(status)}">{_e(label)}</span>{extra}</td>'
    )


def _provenance_line(at: Mapping[str, Any]) -> str:
    """Where the verdict's value came from when that is not simply this run on the paper's data:
    read from a committed artifact, or measured on a named data source (an MNIST subset)."""
    parts = []
    if at.get("computed") and at["computed"] != "this run":
        parts.append(str(at["computed"]))
    if at.get("data_source"):
        parts.append(f"data: {at['data_source']}")
    return f'<br><span class="nlcl-source">{_e("; ".join(parts))}</span>' if parts else ""


def _held_out_line(row: Mapping[str, Any]) -> str:
    """The verdict of record at the held-out base seeds, under the ci verdict (or "")."""
    h = row.get("held_out")
    if not h:
        return ""
    seeds = ", ".join(map(str, h["seeds"]))
    # a claim with no set at today's code already says so in its summary
    revised = " (chapter revised since)" if h["revised"] and h.get("class") != "revised" else ""
    return (
        f'<br><span class="nlcl-heldout" title="held-out base seeds {_e(seeds)}">'
        f"held-out: {_e(h['summary'])}{revised}</span>"
    )


def _held_out_full_line(row: Mapping[str, Any]) -> str:
    """The pass count at held-out base seeds in the full profile, under the paper-scale verdict (or
    ""): a count, not a class (:func:`nlcl.harness.records.paper_scale.held_out_counts`); ⚠ where a
    required claim fails at a counted seed."""
    h = row.get("held_out_full")
    if not h:
        return ""
    seeds = ", ".join(map(str, h["seeds"]))
    warn = "⚠ " if h["counted"] and h["failing"] and row["required"] else ""
    return (
        f'<br><span class="nlcl-heldout" title="held-out base seeds {_e(seeds)} (full profile)">'
        f"{warn}held-out: {_e(h['count'])}</span>"
    )


def _gate_note(row: Mapping[str, Any]) -> str:
    """Why a timing claim's verdict is not gated in this build (its ``gate_note``), or ""."""
    if row.get("status") != "not-gated" or not row.get("gate_note"):
        return ""
    return f'<details class="nlcl-note"><summary>not gated: why</summary>{_e(row["gate_note"])}</details>'


def _revisions(revised: Sequence[Any]) -> str:
    if not revised:
        return ""
    items = "".join(f"<li>{_e(_fmt(r))}</li>" for r in revised)
    n = len(revised)
    return f'<details class="nlcl-revised"><summary>revised {n}×</summary><ul>{items}</ul></details>'


#: Column headings (and sort indices) of the claims table: the verdict and measured value at each
#: profile (:data:`PROFILES`) share a cell, so that at a laptop's width the table needs no
#: horizontal scrolling.
COLUMNS = ("claim", "statement (source)", "paper", "check", "verdict at ci", "verdict at paper scale (full)")
#: Column widths (``table-layout: fixed``; long statements are clamped to a few lines).
_WIDTHS = ("18%", "32%", "11%", "11%", "14%", "14%")
_PROFILE_HEADINGS = {"ci": "verdict at <code>ci</code>", "full": "verdict at paper scale (<code>full</code>)"}


def dashboard_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The dashboard's HTML: verdict buttons, filters and the table (one ``<tr>`` per claim, with
    ``data-*`` attributes the filters read). No blank lines, so it is one raw-HTML block.

    Columns (:data:`COLUMNS`, widths fixed so that a laptop's window shows them all): the claim
    (id linking to its check, chapter, kind), statement with source (clamped to a few lines that
    ``_static/nlcl.js`` expands on click; the explanation of a claim that did not pass below it),
    the paper's value, the check with its revisions, then per profile (``ci``, paper scale
    ``full``) the verdict with the measured value and seed statistics below it.
    """

    def options(key: str, values: Sequence[str]) -> str:
        opts = "".join(f'<option value="{_e(v)}">{_e(STATUS_LABELS.get(v, v))}</option>' for v in values)
        return f'<label>{key} <select data-nlcl-filter="{key}"><option value="">all</option>{opts}</select></label>'

    def unique(values):
        return list(dict.fromkeys(values))

    statuses = [s for s in STATUS_LABELS if any(s == a.get("status") for r in rows for a in r["at"].values())]
    statuses += sorted({a.get("status") for r in rows for a in r["at"].values()} - set(statuses) - {None})
    profiles = [p for p in PROFILES if any(p in r["at"] for r in rows)]
    counts = {s: sum(r["status"] == s for r in rows) for s in statuses}
    buttons = "".join(
        f'<button type="button" class="nlcl-status nlcl-{_e(s)}" data-nlcl-status="{_e(s)}">'
        f"{_e(STATUS_LABELS.get(s, s))}: {counts[s]}</button>"
        for s in statuses
    )
    head = (
        "<tr>"
        + "".join(f'<th data-nlcl-sort="{i}">{c}</th>' for i, c in enumerate(COLUMNS[:4]))
        + "".join(
            f'<th data-nlcl-sort="{4 + i}" class="nlcl-profile">{_PROFILE_HEADINGS.get(p, _e(p))}</th>'
            for i, p in enumerate(PROFILES)
        )
        + "</tr>"
    )
    cols = "".join(f'<col style="width: {w}">' for w in _WIDTHS)
    body = []
    for r in rows:
        data = {
            "paper": r["paper"],
            "chapter": r["chapter"],
            "kind": r["kind"],
            "profiles": " ".join(p for p in PROFILES if p in r["at"]),
            **{f"status-{p}": (r["at"].get(p) or {}).get("status") or "" for p in PROFILES},
        }
        attrs = " ".join(f'data-{k}="{_e(v)}"' for k, v in data.items())
        note = ""
        if r.get("note") and r["status"] != "pass":
            note = f'<details class="nlcl-note"><summary>why</summary>{_math(r["note"])}</details>'
        note += _gate_note(r)
        basis = f" ({_e(r['basis'])})" if r.get("basis") else ""
        body.append(
            f"<tr {attrs}>"
            f'<td data-sort="{_e(r["id"])}"><a href="{_e(r["href"])}"><code>{_e(r["id"])}</code></a>'
            f'<br><span class="nlcl-chapter">{_e(r["chapter"])}</span>'
            f'<br><span class="nlcl-kind">kind: {_e(r["kind"])}{basis}</span></td>'
            f'<td class="nlcl-statement mathjax_process"><div class="nlcl-clamp">{_math(r["statement"])} '
            f'<span class="nlcl-source">({_e(r["source"])})</span></div>{note}</td>'
            f'<td class="mathjax_process">{_e(_fmt(r["expected"]))}</td>'
            f'<td data-sort="{_e(r["tolerance"])}">{_e(_fmt(r["tolerance"]))}{_revisions(r["revised"])}</td>'
            + "".join(_verdict_cell(r, p) for p in PROFILES)
            + "</tr>"
        )
    filters = (
        options("paper", unique(r["paper"] for r in rows))
        + options("chapter", unique(r["chapter"] for r in rows))
        + options("status", statuses)
        + options("kind", unique(r["kind"] for r in rows))
        + options("profile", profiles)
        + '<label>search <input type="search" data-nlcl-filter="text" placeholder="id, statement, source"></label>'
    )
    return (
        '<div class="nlcl-dashboard nlcl-wide" id="claims-dashboard">'
        f'<div class="nlcl-status-buttons">{buttons}<button type="button" data-nlcl-status="">all: {len(rows)}</button></div>'
        f'<div class="nlcl-filters">{filters}</div>'
        f'<p class="nlcl-shown" aria-live="polite">{len(rows)} of {len(rows)} claims shown</p>'
        '<div class="nlcl-table-wrap"><table class="nlcl-claims">'
        f"<colgroup>{cols}</colgroup><thead>{head}</thead><tbody>{''.join(body)}</tbody></table></div></div>"
    )


def write_dashboard(
    records: Sequence[Mapping[str, Any]],
    timings: Mapping[str, Mapping[str, Any]],
    page: str | Path,
    static_dir: str | Path,
    chapter_order: Sequence[str] | None = None,
) -> dict[str, int]:
    """Write the dashboard of a build into the staged reproducibility ``page`` (at
    :data:`DASHBOARD_MARKER`, else after the title), the summary figure next to the page and the
    rows as JSON into ``static_dir``. Returns the number of claims per status.
    """
    page, static_dir = Path(page), Path(static_dir)
    rows = claim_rows(records, chapter_order)
    order = list(chapter_order or []) + sorted(set(timings) - set(chapter_order or []))
    static_dir.mkdir(parents=True, exist_ok=True)
    data = {"claims": rows, "timings": {c: dict(timings[c]) for c in order if c in timings}}
    (static_dir / DATA_NAME).write_text(json.dumps(data, indent=1, ensure_ascii=False, default=str) + "\n")
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUS_LABELS}
    parts = []
    if rows:
        summary_figure(rows, page.parent / FIGURE_NAME, order)
        parts += [
            f":::{{figure}} {FIGURE_NAME}",
            ":alt: Per chapter, the number of claims that passed, were not reproduced or failed.",
            ":name: claims-summary",
            "",
            "Claims per chapter and verdict (profile `"
            + rows[0]["profile"]
            + "`). "
            + ", ".join(f"{n} {STATUS_LABELS[s]}" for s, n in counts.items() if n or s in _ALWAYS_COUNTED)
            + ".",
            ":::",
            "",
        ]
    parts += [
        "Filter the table by paper, chapter, verdict, kind or profile, or click a verdict button; "
        "click a column heading to sort; a claim's id links to its check in the chapter. "
        f'The rows as JSON: <a href="../_static/{DATA_NAME}" download>{DATA_NAME}</a>.',
        "",
        "```{raw} html",
        dashboard_html(rows),
        "```",
    ]
    block = "\n".join(parts)
    text = page.read_text()
    if DASHBOARD_MARKER in text:
        text = text.replace(DASHBOARD_MARKER, block)
    else:
        head, sep, rest = text.partition("\n")
        text = head + sep + "\n" + block + "\n\n" + rest
    page.write_text(text)
    return counts
