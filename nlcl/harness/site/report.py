"""The reproducibility report: every claim of the book and every chapter's run time, one page.

Written by ``nlcl book`` (:func:`nlcl.harness.site.build.build_book`) into the staged ``book/reproducibility.md``.
Reproductions and checks are separate tables; only reproductions are counted in the headline,
which also gives them apart by basis (:func:`basis_sentence`): exact results verified, dynamical and
statistical claims reproduced at held-out seeds, and informational (not required) ones apart.
Each reproduction shows its ci verdict (with seed statistics where it was measured over seeds)
beside its paper-scale verdict, and how each chapter's verdicts hold across base seeds, from the
committed ci sweeps ``results/seed-sweeps/<chapter>.json`` (:mod:`nlcl.harness.records.seed_sweeps`).
The paper-scale column reads two records (:mod:`nlcl.harness.records.paper_scale`): the status of
the full-profile run at base seed 0, ``results/claims-full/<chapter>.json``, and the pass count at
held-out base seeds, ``results/held-out-full/`` (``held_out run --profile full``; only the sets at the
chapter's current code counted, :func:`nlcl.harness.records.paper_scale.held_out_counts`), e.g.
"✓ pass · 3/3 held-out seeds". The count is never a class (3 seeds cannot decide one), and the
published verdicts and the headline's classes stay those of the seed-0 record; a required
reproduction that fails at a counted held-out full seed is marked ⚠ in the column and listed
under "Paper-scale runs".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nlcl.harness.claims.display import status_badge
from nlcl.harness.claims.verdicts import is_finite
from nlcl.harness.records import held_out
from nlcl.harness.records.paper_scale import (
    attach_held_out,
    held_out_counts,
    held_out_failures,
    load_full_records,
    stale_records,
)

__all__ = [
    "BASIS_LABELS",
    "HEADLINE_MARKER",
    "UNCLASSIFIED",
    "basis_counts",
    "basis_sentence",
    "REPORT_MARKER",
    "from_ledgers",
    "merge_full",
    "published_verdict",
    "write_report",
]


REPORT_MARKER = "<!-- nlcl:claims-report -->"
#: Where the headline (the counts) goes, when the template has it; else it opens the report.
HEADLINE_MARKER = "<!-- nlcl:claims-headline -->"
_STATUSES = ("pass", "fail", "not-reproduced", "invalid", "not-gated")
#: The basis of a reproduction record without one (made before records carried ``basis``, or
#: declared inline without it).
UNCLASSIFIED = "unclassified"
#: How the headline names each basis (:data:`nlcl.harness.claims.verdicts.BASES`, then unclassified).
#: The headline's names of the bases; "How to read this report" (book/reproducibility.md) defines them.
BASIS_LABELS = {
    "exact": "exact results",
    "dynamical": "dynamical claims",
    "statistical": "statistical claims",
    UNCLASSIFIED: "unclassified (records without a basis, made before records carried one)",
}


def _fmt_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        inner = ", ".join(_fmt_value(v) for v in value[:6])
        return f"[{inner}{', …' if len(value) > 6 else ''}]"
    return str(value).replace("|", "\\|")


def _cell(text: Any) -> str:
    """Table-safe text: a literal ``|`` (as in |x|) would split the markdown cell."""
    return str(text).replace("|", "\\|")


def _fmt_seeds(r: dict[str, Any]) -> str:
    s = r.get("seeds")
    if not s:
        return "single value" if r.get("kind", "reproduction") == "reproduction" else "—"
    if s.get("mean") is None:
        if not is_finite(s.get("values")):
            return f"{s['n']} seeds, non-finite"
        return f"{', '.join(map(str, s['values']))} (n={s['n']}), holds on {100 * s['holds_fraction']:.0f}%"
    text = f"{s['mean']:.4g} ± {s['std']:.2g} (n={s['n']}), holds on {100 * s['holds_fraction']:.0f}%"
    if s.get("margin_within_spread"):
        text += " ⚠ margin < spread"
    return text


def demoted(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reproductions made informational by a revision (``to`` starting with "informational"): they
    left the required count, so the report names them beside the headline instead of hiding them."""
    return [
        r
        for r in records
        if not r.get("required")
        and any(str(v.get("to", "")).lower().startswith("informational") for v in r.get("revised") or [])
    ]


def demoted_sentence(records: list[dict[str, Any]]) -> str:
    """The headline's note on :func:`demoted` claims with their verdict here ("" when none)."""
    out = demoted(records)
    if not out:
        return ""
    names = ", ".join(f"`{r['id']}` ({r['status']})" for r in out)
    return (
        f" **{len(out)} reproductions were made informational by a revision** (not counted above): {names}."
    )


def _class_verdict(r: dict[str, Any]) -> tuple[bool, bool]:
    """(reproduced, with held-out evidence) of a reproduction record.

    With seeded held-out evidence (a class of :data:`nlcl.harness.records.held_out.CLASSES`): an
    exact result is verified when its published verdict (:func:`published_verdict`) is reproduced
    and it passed at every counted held-out seed (round-off does not depend on the seed); a
    dynamical or statistical claim is reproduced when the decision rule's class is ``reproduced``.
    Without it (no held-out set, unseeded, read from an artifact, revised since): the published
    verdict."""
    h = r.get("held_out")
    published = published_verdict(r) == "reproduced"
    if not h or h.get("class") not in held_out.CLASSES:
        return published, False
    if r.get("basis") == "exact":
        return published and h.get("passes") == h.get("n"), True
    return h["class"] == "reproduced", True


def basis_counts(repro: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per basis (``exact``, ``dynamical``, ``statistical``, :data:`UNCLASSIFIED`), over the required
    reproductions: ``total``, ``reproduced`` (:func:`_class_verdict`), ``held_out`` (how many have
    seeded held-out evidence) and ``held_out_reproduced``; and ``informational``: the reproductions that are
    not required, with ``total`` and ``reproduced``. A record without ``basis`` is unclassified."""
    out: dict[str, dict[str, int]] = {
        b: {"total": 0, "reproduced": 0, "held_out": 0, "held_out_reproduced": 0} for b in BASIS_LABELS
    }
    info = {"total": 0, "reproduced": 0}
    for r in repro:
        ok, held = _class_verdict(r)
        if not r.get("required"):
            info["total"] += 1
            info["reproduced"] += ok
            continue
        c = out[r.get("basis") if r.get("basis") in BASIS_LABELS else UNCLASSIFIED]
        c["total"] += 1
        c["reproduced"] += ok
        c["held_out"] += held
        c["held_out_reproduced"] += ok and held
    return {**out, "informational": info}


def basis_sentence(repro: list[dict[str, Any]]) -> str:
    """The headline's classes apart: exact results verified, dynamical and statistical claims
    reproduced at held-out seeds (those without seeded held-out evidence counted apart, by their
    published verdict), unclassified records named as such, informational reproductions apart."""
    counts = basis_counts(repro)
    parts = []
    for b, label in BASIS_LABELS.items():
        c = counts[b]
        if not c["total"] and b == UNCLASSIFIED:
            continue
        if b == "exact":
            text = f"{c['reproduced']} of {c['total']} verified"
        else:
            text = f"{c['held_out_reproduced']} of {c['held_out']} reproduced at held-out seeds"
        rest = c["total"] - c["held_out"]
        if b != "exact" and rest:
            text += (
                f" and {c['reproduced'] - c['held_out_reproduced']} of {rest} without held-out "
                "evidence reproduced in this build"
            )
        parts.append(f"{label}: {text}")
    info = counts["informational"]
    return (
        "**By basis**, of the required reproductions: "
        + "; ".join(parts)
        + f". **Informational reproductions** (not required, not counted above): {info['total']}, "
        f"{info['reproduced']} of them reproduced."
    )


def merge_full(records: list[dict[str, Any]], full: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Attach each claim's paper-scale verdict as ``record["full"]`` (status, measured, artifact);
    ``full`` maps chapter → full-profile record file (see :func:`load_full_records`).
    """
    out = []
    for r in records:
        r = dict(r)
        chapter = full.get(r["chapter"])
        if chapter is not None:
            match = next((f for f in chapter["claims"] if f["id"] == r["id"]), None)
            if match is not None:
                r["full"] = {
                    "status": match["status"],
                    "measured": match["measured"],
                    "artifact": chapter["artifact"],
                    "commit": chapter.get("commit"),
                    "date": chapter.get("date"),
                    "data_source": chapter.get("data_source"),
                    "computed": match.get("computed"),
                }
                if match.get("seeds"):
                    r["full"]["seeds"] = match["seeds"]
        out.append(r)
    return out


def published_verdict(r: dict[str, Any]) -> str:
    """The verdict the book publishes: the paper-scale one where a full run exists, else ci's.

    A claim not reproduced in ci but reproduced at paper scale is *reproduced at paper scale*.
    """
    full = r.get("full")
    if r["status"] == "invalid" or (full and full["status"] == "invalid"):
        return "invalid"
    if full is None:
        return "reproduced" if r["status"] == "pass" else r["status"]
    return "reproduced" if full["status"] == "pass" else full["status"]


def _verdict_cell(
    r: dict[str, Any], full_chapters: set[str], held_full: dict[tuple[str, str], Any] | None = None
) -> str:
    """The paper-scale column: the seed-0 record's status, then the pass count at held-out seeds
    (``held_full``: :func:`held_out_counts`, None when there is no held-out full run)."""
    full = r.get("full")
    if full is not None:
        cell = status_badge(full["status"], True)
        if full["status"] == "pass" and r["status"] != "pass":
            cell += " (ci caveat)"
    elif r["chapter"] in full_chapters:
        cell = "not measured at paper scale"
    else:
        cell = "not run at paper scale"
    return f"{cell} · {_held_out_full_text(r, held_full)}"


def _held_out_full_text(r: dict[str, Any], held_full: dict[tuple[str, str], Any] | None) -> str:
    """A claim's pass count at held-out full seeds, as the paper-scale column shows it."""
    h = r.get("held_out_full")
    if h is None:
        if held_full is None:
            return "no held-out full run"
        if any(chapter == r["chapter"] for chapter, _ in held_full):
            return "not measured at held-out full seeds"
        return "no held-out full run of this chapter"
    if h["counted"] and h["failing"] and r.get("required"):
        return f"**⚠ {_cell(h['count'])}**"
    return _cell(h["count"])


def _held_out_full_sentence(repro: list[dict[str, Any]], held_full: dict[tuple[str, str], Any] | None) -> str:
    """The 'Paper-scale runs' section's sentence on what the paper-scale column reads."""
    seed0 = (
        "The paper-scale column reads the full run at base seed 0 (`results/claims-full/`, the status "
        "published above)"
    )
    if held_full is None:
        return f" {seed0}; no held-out full run yet (`results/held-out-full/`)."
    shown = [r["held_out_full"] for r in repro if r.get("held_out_full")]
    counted = [h for h in shown if h["counted"] and h["n"]]
    failing = held_out_failures(held_full, [(r["chapter"], r["id"]) for r in repro])
    seeds = sorted({len(h["seeds"]) for h in counted})
    n_seeds = "" if not seeds else f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}–{seeds[-1]}"
    return (
        f" {seed0} and the pass count at held-out base seeds in the full profile "
        f"(`results/held-out-full/`, every set at the chapter's current code; {n_seeds or 'no'} seeds per "
        f"claim, too few for the decision rule's classes, so a count is shown and the published verdict "
        f"stays the seed-0 one): {sum(h['passes'] == h['n'] for h in counted)} of {len(counted)} reproductions "
        f"pass at every counted held-out full seed"
        + (
            f", {len(shown) - len(counted)} without a count at the current code"
            if len(shown) > len(counted)
            else ""
        )
        + (
            f"; **{len(failing)} required reproduction{' fails' if len(failing) == 1 else 's fail'} at some "
            "held-out full seed** (" + ", ".join(f"`{c['claim']}`" for c in failing) + ")"
            if failing
            else ""
        )
        + "."
    )


def write_report(
    records: list[dict[str, Any]],
    timings: dict[str, dict[str, Any]],
    template: Path,
    destination: Path,
    chapter_order: list[str] | None = None,
    full_dir: Path | None = None,
    sweeps_dir: Path | None = None,
) -> dict[str, int]:
    """Write the reproducibility report into ``template`` at :data:`REPORT_MARKER`: a headline
    counting reproductions only (at :data:`HEADLINE_MARKER` where the template has one), a table
    of reproductions (ci verdict, seed statistics, paper-scale verdict), a table of checks, the
    explanations (scope, stale ones flagged), tolerance revisions, ci/full differences, verdicts across base seeds and per-chapter run time. ``full_dir`` defaults
    to ``<repository>/results/claims-full``, ``sweeps_dir`` to ``<repository>/results/seed-sweeps``. Returns the counts per ci status (reproductions only),
    plus ``checks`` and ``reproduced`` (the published verdicts).
    """
    template = Path(template)
    full_dir = (
        Path(full_dir)
        if full_dir is not None
        else template.resolve().parent.parent / "results" / "claims-full"
    )
    full = load_full_records(full_dir) if full_dir.is_dir() else {}
    if full:
        try:
            stale = stale_records(full_dir, full_dir.resolve().parent.parent)
        except FileNotFoundError:  # records outside a book: nothing to compare with
            stale = {}
        for chapter, why in stale.items():
            full[chapter]["stale"] = why
    order = {c: i for i, c in enumerate(chapter_order or [])}
    records = sorted(records, key=lambda r: (order.get(r["chapter"], len(order)), r["chapter"]))
    records = merge_full(records, full)
    root = full_dir.resolve().parent.parent
    # the held-out verdicts, accumulated over every held-out set at today's code (held_out.accumulate)
    held = held_out.evidence(full_dir.parent / "held-out", root) if full_dir.parent.is_dir() else None
    records = held_out.attach(records, held)
    # the paper scale at held-out seeds: pass counts over the held-out full sets at today's code
    held_full = held_out_counts(full_dir.parent / "held-out-full", root)
    records = attach_held_out(records, held_full)
    repro = [r for r in records if r.get("kind", "reproduction") == "reproduction"]
    checks = [r for r in records if r.get("kind", "reproduction") == "check"]
    counts = {s: sum(r["status"] == s for r in repro) for s in _STATUSES}
    published = [published_verdict(r) for r in repro]
    counts["reproduced"] = published.count("reproduced")
    counts["checks"] = len(checks)
    n_full = sum(r.get("full") is not None for r in repro)
    profile = records[0]["profile"] if records else "—"
    commit = records[0]["commit"] if records else "—"
    first = held_out.headline_text(held, [(r["chapter"], r["id"]) for r in records])
    lines = [
        f"{first} **{len(repro)} reproductions**: {counts['reproduced']} reproduced, "
        f"{published.count('not-reproduced')} not reproduced, {published.count('fail')} fail, "
        f"{published.count('invalid')} invalid{_not_gated_count(published.count('not-gated'))} "
        f"(paper-scale verdict where a committed full run at base seed 0 exists, else `{profile}`). "
        f"**{len(checks)} checks** of our own implementation "
        f"({sum(r['status'] == 'pass' for r in checks)} pass) are listed separately and not counted. "
        + basis_sentence(repro),
        "",
        "## Reproductions",
        "",
        f"This build: profile `{profile}`, commit `{commit}`; a committed full run at base seed 0 gives "
        f"the paper-scale verdict of {n_full} reproductions. In `{profile}` alone: {counts['pass']} pass, "
        f"{counts['not-reproduced']} not reproduced, {counts['fail']} fail, {counts['invalid']} invalid"
        f"{_not_gated_count(counts['not-gated'])}.",
        "",
        *([demoted_sentence(repro).strip(), ""] if demoted(repro) else []),
        f"| claim | chapter | basis | source | statement | paper | check | measured (`{profile}`) | seeds | "
        f"`{profile}` verdict | paper scale (`full`) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    full_chapters = set(full)
    for r in repro:
        badge = status_badge(r["status"], r["required"]) + (
            " (stale explanation)" if r.get("note_stale") else ""
        )
        badge += " (declared failure)" if r.get("declared_failure") else ""
        badge += _gate_outcome(r) + _held_out_text(r)
        revised = " (tolerance revised)" if r.get("revised") else ""
        lines.append(
            f"| `{r['id']}` | {{doc}}`{r['chapter']}` | {r.get('basis') or UNCLASSIFIED} | "
            f"{_cell(r['source'])} | {_cell(r['statement'])} | "
            f"{_fmt_value(r['expected'])} | {_cell(r['tolerance'])}{revised} | {_fmt_value(r['measured'])} | "
            f"{_fmt_seeds(r)} | {badge} | {_verdict_cell(r, full_chapters, held_full)} |"
        )
    lines += [
        "",
        "## Checks",
        "",
        "Sanity and identity checks of our implementation (a definition restated, an algebraic "
        "identity, a textbook fact). They cannot contradict the papers and are not counted above.",
        "",
        "| check | chapter | statement | tolerance | measured | status |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in checks:
        lines.append(
            f"| `{r['id']}` | {{doc}}`{r['chapter']}` | {_cell(r['statement'])} | {_cell(r['tolerance'])} | "
            f"{_fmt_value(r['measured'])} | {status_badge(r['status'], r['required'])} |"
        )
    sweeps_dir = Path(sweeps_dir) if sweeps_dir is not None else full_dir.parent / "seed-sweeps"
    sweeps: dict[str, dict[str, Any]] = {}
    if sweeps_dir.is_dir():
        from nlcl.harness.records import seed_sweeps

        sweeps = seed_sweeps.load_seed_sweeps(sweeps_dir)
        try:
            for chapter, why in seed_sweeps.stale_sweeps(
                sweeps_dir, sweeps_dir.resolve().parent.parent
            ).items():
                sweeps[chapter]["stale"] = why
        except FileNotFoundError:  # records outside a book: nothing to compare with
            pass
    lines += _sections(records, repro, full, order, sweeps, held_full)
    lines += held_out.report_lines(held, order, [(r["chapter"], r["id"]) for r in records])
    if sweeps:
        lines += seed_sweeps.report_lines(sweeps, order)
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
    if HEADLINE_MARKER in text:  # the headline at the top of the page, the tables further down
        text = text.replace(HEADLINE_MARKER, lines[0])
        lines = lines[2:]
    body = "\n".join(lines)
    text = text.replace(REPORT_MARKER, body) if REPORT_MARKER in text else text + "\n\n" + body + "\n"
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(text)
    return counts


def _held_out_text(r: dict[str, Any]) -> str:
    """The claim's verdict of record at the held-out seeds, after its development-set badge."""
    h = r.get("held_out")
    if not h:
        return ""
    return f"; held-out: {h['summary']}"


def _explained_at_other_seeds(record: dict[str, Any], sweeps: dict[str, dict[str, Any]]) -> list[int]:
    """The base seeds at which a current seed sweep of the record's chapter reports the claim as
    not reproduced (its explanation applied there), or []."""
    sweep = sweeps.get(record.get("chapter"), {})
    if not sweep or sweep.get("stale"):
        return []
    return sorted(
        int(r["seed"])
        for r in sweep.get("rows", [])
        if r["claim"] == record["id"] and r["status"] == "not-reproduced"
    )


def _not_gated_count(n: int) -> str:
    return f", {n} timing claim{'s' * (n != 1)} not gated (see below)" if n else ""


def _gate_outcome(r: dict[str, Any]) -> str:
    """After a not-gated timing claim's badge: what its check gave in this build."""
    return (
        f" (check gave {r['outcome']}, not gated)" if r["status"] == "not-gated" and r.get("outcome") else ""
    )


def _not_gated_lines(records: list[dict[str, Any]]) -> list[str]:
    """The section on timing claims that this build measured but did not gate, with the reason."""
    shown = [r for r in records if r["status"] == "not-gated"]
    if not shown:
        return []
    lines = [
        "",
        "## Timing claims not gated in this build",
        "",
        "These claims are verdicts on measured wall-clock time. This build ran them beside other "
        "chapters, which share the CPU, so they are shown and not gated: they never fail the build, and "
        "they are decided by a run where nothing else runs (`nlcl run CHAPTER`, `nlcl book --jobs 1`).",
        "",
    ]
    for r in shown:
        lines.append(
            f"- `{r['id']}` ({{doc}}`{r['chapter']}`): measured {_fmt_value(r['measured'])} against "
            f"{_cell(r['tolerance'])}, the check gave {r.get('outcome', '—')}. Not gated: {r.get('gate_note') or '—'}."
        )
    return lines


def _sections(records, repro, full, order, sweeps=None, held_full=None) -> list[str]:
    lines: list[str] = _not_gated_lines(records)
    notes = [r for r in records if r.get("note") and r["status"] == "not-reproduced"]
    if notes:
        lines += ["", "## Not reproduced", ""]
        for r in notes:
            scope = f" *(observed in: {r['note_scope']})*" if r.get("note_scope") else ""
            lines.append(f"- `{r['id']}` ({{doc}}`{r['chapter']}`){scope}: {r['note']}")
    flagged = [r for r in records if r.get("note_stale")]
    elsewhere = {r["id"]: _explained_at_other_seeds(r, sweeps or {}) for r in flagged}
    stale = [r for r in flagged if not elsewhere[r["id"]]]
    seed_scoped = [r for r in flagged if elsewhere[r["id"]]]
    if seed_scoped:
        lines += [
            "",
            "## Explanations that apply at other base seeds",
            "",
            "These claims pass in this build, so they are reported as reproduced; at the listed base "
            "seeds of the chapter's current seed sweep they are not reproduced, and their explanation "
            "is the one that applies there.",
            "",
        ]
        lines += [
            f"- `{r['id']}` ({{doc}}`{r['chapter']}`; not reproduced at base seeds "
            f"{', '.join(map(str, elsewhere[r['id']]))}): {r['note']}"
            for r in seed_scoped
        ]
    if stale:
        lines += [
            "",
            "## Stale explanations",
            "",
            "These claims passed although they carry a "
            "not-reproduced explanation; they are reported as reproduced and the explanation "
            "should be removed or re-scoped.",
            "",
        ]
        lines += [f"- `{r['id']}` ({{doc}}`{r['chapter']}`): {r['note']}" for r in stale]
    revised = [r for r in records if r.get("revised")]
    if revised:
        lines += [
            "",
            "## Tolerances revised after results were seen",
            "",
            "| claim | from | to | reason | date |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in revised:
            for v in r["revised"]:
                lines.append(
                    f"| `{r['id']}` | {v['from']} | {v['to']} | {v['reason']} | {v.get('date', '')} |"
                )
    differ = [
        r
        for r in repro
        if r.get("full")
        and r["status"] != "not-gated"  # not decided in this build
        and (r["full"]["status"] == "pass") != (r["status"] == "pass")
    ]
    if differ:
        lines += ["", "## Where ci and paper scale differ", ""]
        for r in differ:
            lines.append(
                f"- `{r['id']}`: ci {r['status']} (measured {_fmt_value(r['measured'])}), paper scale "
                f"{r['full']['status']} (measured {_fmt_value(r['full']['measured'])})"
            )
    chapters = sorted({r["chapter"] for r in repro}, key=lambda c: (order.get(c, len(order)), c))
    lines += [
        "",
        "## Paper-scale runs",
        "",
        "Each chapter's full-profile record at base seed 0 (`results/claims-full/`), and its full-profile "
        "runs at held-out base seeds (`results/held-out-full/`): the seeds of the sets at the chapter's "
        "current code, which the paper-scale column counts, and the sets at earlier code, which it does not."
        + _held_out_full_sentence(repro, held_full),
        "",
        "| chapter | full-profile record | commit | date | wall time | current? | held-out seeds (`full`) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in chapters:
        f = full.get(c)
        held = _held_out_full_sets(c, held_full)
        if f is None:
            lines.append(f"| {{doc}}`{c}` | not run at paper scale | — | — | — | — | {held} |")
        else:
            current = f"**stale**: {f['stale']}" if f.get("stale") else "yes"
            lines.append(
                f"| {{doc}}`{c}` | `{f['artifact']}` | `{f.get('commit')}` | {f.get('date')} | "
                f"{f.get('wall_time_s', 0):.0f} s | {current} | {held} |"
            )
    failing = held_out_failures(held_full, [(r["chapter"], r["id"]) for r in repro])
    if failing:
        seed0 = {(r["chapter"], r["id"]): (r.get("full") or {}).get("status") for r in repro}
        lines += [
            "",
            "Required reproductions that fail, are invalid or measured nothing at a counted held-out "
            "full seed (their published verdict stays the seed-0 record's):",
            "",
        ]
        lines += [
            f"- `{c['claim']}` ({{doc}}`{c['chapter']}`): {_cell(c['count'])} at seeds "
            f"{', '.join(map(str, c['seeds']))}; at base seed 0: "
            f"{seed0.get((c['chapter'], c['claim'])) or 'not run at paper scale'}"
            for c in failing
        ]
    return lines


def _held_out_full_sets(chapter: str, held_full: dict[tuple[str, str], Any] | None) -> str:
    """The paper-scale runs table's cell on a chapter's held-out full sets."""
    entries = [c for (ch, _), c in (held_full or {}).items() if ch == chapter]
    if not entries:
        return "no held-out full run"
    e = max(entries, key=lambda c: len(c["seeds"]))  # every claim of a chapter shares its sets
    parts = []
    if e["sets"]:
        n = len(e["sets"])
        parts.append(f"{', '.join(map(str, e['seeds']))} ({n} set{'s' * (n != 1)})")
    if e["excluded_sets"]:
        k = e["excluded_sets"]
        parts.append(f"{k} set{'s' * (k != 1)} at earlier code, not counted")
    return "; ".join(parts)


def from_ledgers(records: list[dict[str, Any]], root: Any) -> list[dict[str, Any]]:
    """Claim records with their static text read from the chapters' ledgers, as the report and the
    dashboard show them: for a chapter with ``book/claims/<chapter>.yaml``, each record's source,
    statement (its ``{name}`` templates filled from the record's parameters; the record's own
    rendering where it names a value the chapter computed), revisions, kind and basis come from the
    ledger (so a record made before a claim's kind or basis was declared reads as declared now), and
    ``ledger`` names the file. Records of chapters without a ledger, and ids a ledger lacks, are
    returned as they are (the repository test keeps ledgers and chapters in step)."""
    from nlcl.harness.claims.checks import to_plain
    from nlcl.harness.claims.ledger import LedgerError, _render, ledger_path, read_ledger
    from nlcl.harness.claims.verdicts import normalize_revisions

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
            statement = _render(entry["statement"], names)  # as the chapter rendered it
        except LedgerError:
            statement = rec.get("statement", entry["statement"])
        revised = normalize_revisions(entry.get("revised", []))
        kind = entry.get("kind", "reproduction")
        out.append(
            {
                **rec,
                "source": entry["source"],
                "statement": statement,
                "revised": revised,
                "kind": kind,
                "basis": entry.get("basis") if kind == "reproduction" else None,
                "ledger": led.label,
            }
        )
    return out
