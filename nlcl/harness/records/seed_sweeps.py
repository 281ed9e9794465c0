"""Verdicts across base seeds: committed ci sweeps that show whether a chapter's verdicts are robust.

A chapter's claims already aggregate over the seeds *inside* one run (``n_seeds``, ``n_init``, ...);
this module checks the verdicts themselves against the one number a reader may change first, the
base ``seed``. ``python -m nlcl.harness.records.seed_sweeps CHAPTER`` runs the chapter at base seeds 0–4
(``--seeds``) in the ``ci`` profile through ``nlcl sweep`` (Dask, one run folder per point) and writes
``results/seed-sweeps/<chapter>.json``: the chapter's source hash, commit, date, profile, seeds, wall
time of its points and one row per (seed, claim) with its status, measured value, kind, whether it is
required, where its value came from (``computed``) and, for a claim whose explanation tests
diagnostics, their values at that seed (``diagnostics``; rows made before they were kept lack it).

The reproducibility report (:mod:`nlcl.harness.site.report`) shows, per chapter, how many claims keep one
verdict at every seed, lists the claims whose verdict changes with the seed, and names every required
claim that fails at some seed (a build at that seed fails). A record whose chapter changed since the
sweep is stale, as for the paper-scale records (:mod:`nlcl.harness.records.paper_scale`).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlcl.core import numerics as _numerics

__all__ = [
    "SWEEP_DIR",
    "DEFAULT_SEEDS",
    "record_from_points",
    "load_seed_sweeps",
    "stale_sweeps",
    "claim_stability",
    "report_lines",
    "main",
]

SWEEP_DIR = Path("results") / "seed-sweeps"
DEFAULT_SEEDS = "0..4"


def _diagnostics(claim: Mapping[str, Any]) -> dict[str, Any] | None:
    """The diagnostics a claim record's explanation tested (``note_prediction["diagnostics"]``: the
    values given with ``run.diagnostic(name, value)``), or None."""
    prediction = claim.get("note_prediction")
    values = prediction.get("diagnostics") if isinstance(prediction, Mapping) else None
    return dict(values) if isinstance(values, Mapping) and values else None


def record_from_points(
    chapter: str,
    points: Sequence[Mapping[str, Any]],
    *,
    chapter_sha256: str,
    commit: str | None,
    profile: str,
    seconds: float,
    numerics: Mapping[str, Any] | None = None,
    modules_sha256: str | None = None,
) -> dict[str, Any]:
    """The committed record of one seed sweep, from the sweep's point results (``SweepResult.points``);
    ``seconds`` is the sum of the points' chapter run times; ``numerics`` the numeric environment
    the chapters ran in (default: this process's, which the sweep's kernels inherit)."""
    rows, errors = [], {}
    for p in sorted(points, key=lambda p: p["params"]["seed"]):
        seed = int(p["params"]["seed"])
        if not p["claims"]:
            errors[str(seed)] = (p.get("error") or "no claims").splitlines()[0][:300]
        for c in p["claims"]:
            row = {
                "seed": seed,
                "claim": c["id"],
                "kind": c.get("kind", "reproduction"),
                "required": bool(c.get("required")),
                "status": c["status"],
                "measured": c.get("measured"),
                "computed": c.get("computed", "this run"),
            }
            diagnostics = _diagnostics(c)
            if diagnostics:  # what the claim's explanation tested at this seed, to audit its verdict
                row["diagnostics"] = diagnostics
            rows.append(row)
    return {
        "chapter": chapter,
        "profile": profile,
        "seeds": sorted(int(p["params"]["seed"]) for p in points),
        "chapter_sha256": chapter_sha256,
        "modules_sha256": modules_sha256,
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "points_time_s": round(float(seconds), 1),
        "numerics": dict(numerics) if numerics is not None else _numerics.environment(),
        "errors": errors,
        "rows": rows,
    }


def load_seed_sweeps(directory: Path) -> dict[str, dict[str, Any]]:
    """Every ``<chapter>.json`` under ``directory``: chapter → record (with its ``artifact`` path)."""
    out = {}
    for path in sorted(Path(directory).glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("rows"), list) or "chapter" not in data:
            raise ValueError(f"{path}: expected a seed-sweep record with 'chapter' and a 'rows' list")
        data["artifact"] = f"{SWEEP_DIR / path.name}"
        out[data["chapter"]] = data
    return out


def stale_sweeps(directory: Path, root: Path | None = None) -> dict[str, str]:
    """Committed sweep records that no longer describe their chapter: chapter → reason
    (:func:`nlcl.harness.records.sources.stale_sources`)."""
    from nlcl.harness.records import sources

    return sources.stale_sources(load_seed_sweeps(directory), root, since="the sweep")


def claim_stability(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per claim of a sweep record: its status at each seed, whether that is one verdict at every
    seed, and the seeds at which it fails while required (where a build at that seed fails). A claim
    whose value was read from a committed artifact (``read_from``) is never counted as stable."""
    by_claim: dict[str, dict[str, Any]] = {}
    for row in record["rows"]:
        c = by_claim.setdefault(
            row["claim"], {"claim": row["claim"], "kind": row["kind"], "required": False, "statuses": {}}
        )
        c["statuses"][row["seed"]] = row["status"]
        c["required"] = c["required"] or row["required"]
        if row.get("computed", "this run") != "this run":  # read from a committed artifact
            c["read_from"] = row["computed"]
        if row["required"] and row["status"] in ("fail", "invalid"):
            c.setdefault("breaks_build", []).append(row["seed"])
    out = []
    for c in by_claim.values():
        seen = set(c["statuses"].values())
        missing = [s for s in record["seeds"] if s not in c["statuses"]]
        # a verdict read from a committed artifact cannot change with the seed: not evidence of stability
        c["stable"] = len(seen) == 1 and not missing and "read_from" not in c
        c["breaks_build"] = sorted(c.get("breaks_build", []))
        c["summary"] = ", ".join(f"{s} {n}" for s, n in Counter(c["statuses"].values()).most_common())
        out.append(c)
    return out


def report_lines(
    sweeps: Mapping[str, Mapping[str, Any]], order: Mapping[str, int] | None = None
) -> list[str]:
    """The report's section on verdicts across base seeds (Markdown lines)."""
    order = order or {}
    lines = [
        "",
        "## Verdicts across base seeds",
        "",
        "Each chapter's `ci` profile run at several base seeds (`python -m nlcl.harness.records.seed_sweeps "
        "CHAPTER`, committed under `results/seed-sweeps/`). A verdict that changes with the seed is an "
        "anecdote at ci size; a required claim that fails at some seed is listed with those seeds.",
        "",
        "| chapter | base seeds | one verdict at every seed | verdict changes with the seed | "
        "required claims failing at some seed | record current? |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    changing = []
    for chapter in sorted(sweeps, key=lambda c: (order.get(c, len(order)), c)):
        rec = sweeps[chapter]
        rows = claim_stability(rec)
        stable = sum(r["stable"] for r in rows)
        moving = [r for r in rows if not r["stable"] and "read_from" not in r]
        read = sum("read_from" in r for r in rows)
        changing += [(chapter, r) for r in moving]
        breaking = [
            f"`{r['claim']}` (seeds {', '.join(map(str, r['breaks_build']))})"
            for r in rows
            if r["breaks_build"]
        ]
        errors = "; ".join(f"seed {s}: {e}" for s, e in rec.get("errors", {}).items())
        seeds = ", ".join(map(str, rec["seeds"]))
        current = f"**stale**: {rec['stale']}" if rec.get("stale") else "yes"
        lines.append(
            f"| {{doc}}`{chapter}` | {seeds} | {stable} of {len(rows)}"
            f"{f' ({read} read from committed artifacts, not counted)' if read else ''} | {len(moving)} | "
            f"{'; '.join(breaking) or 'none'}{' — errors: ' + errors if errors else ''} | {current} |"
        )
    if changing:
        lines += [
            "",
            "Claims whose verdict changes with the base seed:",
            "",
            "| claim | chapter | kind | required | verdict per seed |",
            "| --- | --- | --- | --- | --- |",
        ]
        for chapter, r in changing:
            per_seed = " · ".join(f"{s}: {v}" for s, v in sorted(r["statuses"].items()))
            lines.append(
                f"| `{r['claim']}` | {{doc}}`{chapter}` | {r['kind']} | {'yes' if r['required'] else 'no'} | {per_seed} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """``python -m nlcl.harness.records.seed_sweeps CHAPTER [--seeds 0..4] [--workers N]``: commit-ready sweep record."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("chapter", nargs="?", help="chapter id (omit with --check)")
    parser.add_argument("--seeds", default=DEFAULT_SEEDS, help="base seeds: 'a,b,c' or 'START..STOP'")
    parser.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument("--check", action="store_true", help="list the records whose chapter changed since")
    parser.add_argument("--out", default=str(SWEEP_DIR))
    parser.add_argument(
        "--sweep-dir",
        default=None,
        help="the nlcl sweep folder (default: sweeps/<chapter>/<grid hash>); points already run there "
        "with today's chapter source are reused",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    from nlcl.harness.records import provenance
    from nlcl.harness.run.sweep import parse_values, run_sweep

    root = provenance.repo_root()
    if args.check:
        return provenance.print_stale(args.out, stale_sweeps(Path(args.out), root))
    if not args.chapter:
        parser.error("give a chapter (or --check)")
    commit = provenance.git_commit(root)
    if commit.endswith("+dirty"):
        print(
            f"seed_sweeps: refused: the tree has uncommitted changes ({commit}); commit, or sweep a clean clone"
        )
        return 2
    seeds = parse_values("seed", args.seeds)
    sha = provenance.chapter_sha256(args.chapter, root)
    from nlcl.harness.records import sources

    if sha is None:
        parser.error(f"unknown chapter {args.chapter!r}: no book/{args.chapter}.py")
    res = run_sweep(
        args.chapter,
        {"seed": seeds},
        profile="ci",
        scheduler=args.scheduler,
        workers=args.workers,
        out=args.sweep_dir,
        progress=not args.quiet,
    )
    record = record_from_points(
        args.chapter,
        res.points,
        chapter_sha256=sha,
        modules_sha256=sources.modules_sha256(args.chapter, root),
        commit=commit,
        profile="ci",
        seconds=sum(float(p.get("seconds", 0.0)) for p in res.points),
    )
    dest = Path(args.out) / f"{args.chapter}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
    moving = [r for r in claim_stability(record) if not r["stable"]]
    breaking = [r for r in claim_stability(record) if r["breaks_build"]]
    print(
        f"{dest}: {len(record['seeds'])} seeds, {len(moving)} claims change verdict with the seed, "
        f"{len(breaking)} required claims fail at some seed"
    )
    for r in moving:
        print(
            f"  {r['claim']}: {r['summary']}"
            + (f" (required; fails at seeds {r['breaks_build']})" if r["breaks_build"] else "")
        )
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
