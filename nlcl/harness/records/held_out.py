"""Held-out verdicts: the ci verdicts of record come from base seeds nobody developed a chapter at.

Base seeds 0–4 are the **development set**: chapters were written, and claims revised, while their
verdicts at those seeds were visible (``results/seed-sweeps/``), so "no required claim fails at
seeds 0–4" is true by construction. The **held-out set** is the evidence, like a test set:

* its seeds are drawn when the held-out run starts (``python -m nlcl.harness.records.held_out run``), at
  random from :data:`DRAW_RANGE`, excluding the development seeds and every seed of an earlier
  held-out set (``results/held-out/ledger.json``), so no document of the project names them before
  they have been run;
* the run executes every chapter's ``ci`` profile at each of them (``nlcl sweep``: one run folder
  per point, on Dask) from a clean tree, and writes ``results/held-out/record.json`` (per chapter:
  source hash, one row per seed and claim, errors) and appends the set to the ledger;
* every run draws a new set: a chapter revised after a held-out run (its source hash differs from
  the record's) is shown as revised after the run, and is decided again only at fresh seeds, never
  at seeds its author has seen (``run --chapters C ...`` re-decides those chapters at a new set and
  keeps the others' verdicts and sets). The set of a run is thereby consumed.

``replay`` re-runs each chapter of the record at its own held-out seeds on this machine and
compares every row with the record (:func:`compare_rows`): whether the verdicts of record hold
here. It draws nothing and writes no record; seeds already run are not consumed again.

The verdict of record of a claim at ``ci`` (:func:`claim_verdicts`): ``pass`` when it passes at every
held-out seed, ``fail`` when a required claim fails (or is invalid) at some seed, else the status it
has at every seed, or ``mixed`` (with the counts). The reproducibility report's headline reads it
(:func:`headline`).
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEV_SEEDS",
    "DRAW_RANGE",
    "N_SEEDS",
    "HELD_OUT_DIR",
    "draw_seeds",
    "used_seeds",
    "load_ledger",
    "load_record",
    "build_record",
    "merge_records",
    "claim_verdicts",
    "revised_since",
    "headline",
    "attach",
    "headline_text",
    "compare_rows",
    "main",
]

#: The development set: the base seeds chapters were written and revised at.
DEV_SEEDS = (0, 1, 2, 3, 4)
#: Held-out seeds are drawn from this half-open range (far from every seed a chapter derives from 0–4).
DRAW_RANGE = (10_000, 1_000_000)
#: Seeds per held-out run.
N_SEEDS = 3
HELD_OUT_DIR = Path("results") / "held-out"
LEDGER = "ledger.json"
RECORD = "record.json"


def load_ledger(directory: Path) -> list[dict[str, Any]]:
    """The held-out sets drawn so far (oldest first): seeds, date, commit, what they decided."""
    path = Path(directory) / LEDGER
    return json.loads(path.read_text())["sets"] if path.is_file() else []


def used_seeds(ledger: Sequence[Mapping[str, Any]]) -> set[int]:
    """Every seed a held-out draw must avoid: the development set and all earlier held-out sets."""
    return set(DEV_SEEDS) | {int(s) for entry in ledger for s in entry["seeds"]}


def draw_seeds(n: int, used: set[int], rng: Any = None) -> list[int]:
    """``n`` distinct seeds from :data:`DRAW_RANGE`, none in ``used`` (``rng``: ``secrets.SystemRandom``
    by default, so nobody can know them before the draw)."""
    if n < 1:
        raise ValueError(f"n={n}: a held-out set needs at least one seed")
    rng = rng or secrets.SystemRandom()
    low, high = DRAW_RANGE
    out: list[int] = []
    while len(out) < n:
        s = rng.randrange(low, high)
        if s not in used and s not in out:
            out.append(s)
    return sorted(out)


def load_record(directory: Path) -> dict[str, Any] | None:
    """The latest held-out record (``record.json``), or None when no held-out run was committed."""
    path = Path(directory) / RECORD
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict) or "seeds" not in data:
        raise ValueError(f"{path}: expected a held-out record with 'seeds' and 'chapters'")
    data["artifact"] = f"{HELD_OUT_DIR / RECORD}"
    return data


def build_record(
    seeds: Sequence[int],
    chapters: Mapping[str, Mapping[str, Any]],
    *,
    commit: str,
    numerics: Mapping[str, Any] | None,
    seconds: float,
) -> dict[str, Any]:
    """The committed record of one held-out run; ``chapters``: chapter → seed-sweep record
    (:func:`nlcl.harness.records.seed_sweeps.record_from_points`) of that chapter at ``seeds``."""
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    keys = ("chapter_sha256", "modules_sha256", "seeds", "errors", "rows", "points_time_s")
    return {
        "seeds": sorted(int(s) for s in seeds),
        "development_seeds": list(DEV_SEEDS),
        "profile": "ci",
        "commit": commit,
        "date": date,
        "wall_time_s": round(float(seconds), 1),
        "numerics": dict(numerics) if numerics else None,
        "chapters": {
            c: {**{k: rec.get(k) for k in keys}, "commit": commit, "date": date}
            for c, rec in chapters.items()
        },
    }


def merge_records(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """``new`` (a held-out run of some chapters, at a fresh set) over ``old``: the chapters of
    ``new`` replace theirs, the others keep the set they were decided at; ``seeds`` lists every set
    still in use (a chapter's own ``seeds`` say which decided it)."""
    if not old:
        return dict(new)
    # an old chapter keeps the commit and date it was decided at (the new run's are not its own)
    kept = {
        c: {"commit": old.get("commit"), "date": old.get("date"), **r} for c, r in old["chapters"].items()
    }
    chapters = {**kept, **new["chapters"]}
    seeds = sorted({int(s) for rec in chapters.values() for s in rec["seeds"]})
    return {**new, "seeds": seeds, "chapters": chapters}


def _verdict(statuses: Mapping[Any, str], required: bool) -> str:
    seen = set(statuses.values())
    if required and seen & {"fail", "invalid"}:
        return "fail"
    if len(seen) == 1:
        return next(iter(seen))
    return "mixed"


def claim_verdicts(record: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(chapter, claim id) → ``verdict`` (see the module docstring), ``statuses`` and ``measured`` per
    held-out seed, ``kind``, ``required``, ``summary`` (counts) and ``seeds``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for chapter, rec in record["chapters"].items():
        for row in rec["rows"]:
            c = out.setdefault(
                (chapter, row["claim"]),
                {"kind": row["kind"], "required": False, "statuses": {}, "measured": {}},
            )
            c["statuses"][int(row["seed"])] = row["status"]
            c["measured"][int(row["seed"])] = row.get("measured")
            c["required"] = c["required"] or bool(row["required"])
    for (chapter, _), c in out.items():
        seeds = record["chapters"][chapter]["seeds"]
        missing = [s for s in seeds if s not in c["statuses"]]
        for s in missing:  # the run at that seed failed before measuring this claim
            c["statuses"][s] = "missing"
        c["verdict"] = _verdict(c["statuses"], c["required"])
        c["summary"] = ", ".join(f"{n} {s}" for s, n in Counter(c["statuses"].values()).most_common())
        c["seeds"] = list(seeds)
    return out


def revised_since(record: Mapping[str, Any], root: Path | None = None) -> dict[str, str]:
    """Chapters whose source changed after the held-out run (their held-out verdicts describe an
    earlier version): chapter → reason. Their next held-out verdicts come from a new set."""
    from nlcl.harness.records import sources

    recs = {c: {"commit": record.get("commit"), **r} for c, r in record["chapters"].items()}
    try:
        return sources.stale_sources(recs, root, since="the held-out run")
    except FileNotFoundError:  # a record outside a book: nothing to compare with
        return {}


def headline(record: Mapping[str, Any], root: Path | None = None) -> dict[str, Any]:
    """The report's headline: required reproductions at the held-out seeds.

    ``reproduced`` (pass at every held-out seed), ``not_reproduced``, ``failed`` (fail or invalid at
    some seed, or mixed), ``not_gated`` (timing claims measured beside other runs: undecided),
    ``total``; informational claims and checks are left out. ``revised``: the
    chapters changed since the run (:func:`revised_since`)."""
    verdicts = claim_verdicts(record)
    req = [v for v in verdicts.values() if v["required"] and v["kind"] == "reproduction"]
    names = {"pass": "reproduced", "not-reproduced": "not_reproduced", "not-gated": "not_gated"}
    counts = Counter(names.get(v["verdict"], "failed") for v in req)
    return {
        "seeds": list(record["seeds"]),
        "total": len(req),
        "reproduced": counts["reproduced"],
        "not_reproduced": counts["not_reproduced"],
        "failed": counts["failed"],
        "not_gated": counts["not_gated"],
        "revised": revised_since(record, root),
    }


def attach(records: Sequence[Mapping[str, Any]], record: Mapping[str, Any] | None, root: Path | None = None):
    """Each claim record with ``held_out`` (verdict, summary, seeds, whether its chapter was revised
    since, artifact) where the held-out record has the claim; the others unchanged."""
    if not record:
        return [dict(r) for r in records]
    verdicts = claim_verdicts(record)
    revised = revised_since(record, root)
    out = []
    for r in records:
        r = dict(r)
        v = verdicts.get((r["chapter"], r["id"]))
        if v is not None:
            r["held_out"] = {
                "verdict": v["verdict"],
                "summary": v["summary"],
                "seeds": v["seeds"],
                "revised": r["chapter"] in revised,
                "artifact": record.get("artifact", f"{HELD_OUT_DIR / RECORD}"),
            }
        out.append(r)
    return out


def headline_text(record: Mapping[str, Any] | None, root: Path | None = None) -> str:
    """The report's first line: the verdicts of record (required reproductions at held-out seeds)."""
    if not record:
        return (
            "**No held-out verdicts yet**: the verdicts below come from the development set (base "
            "seed 0 of this build; seeds 0–4 in the seed sweeps), where the chapters were written."
        )
    h = headline(record, root)
    seeds = ", ".join(map(str, h["seeds"]))
    revised = (
        f" Chapters revised since their held-out run (their verdicts describe an earlier version): "
        f"{', '.join(sorted(h['revised']))}."
        if h["revised"]
        else ""
    )
    return (
        f"**Verdicts of record** (`ci` profile at held-out base seeds {seeds}, drawn when the run "
        f"started, `{HELD_OUT_DIR / RECORD}`): of **{h['total']} required reproductions**, "
        f"{h['reproduced']} reproduced at every held-out seed, {h['not_reproduced']} not reproduced, "
        f"{h['failed']} failed or mixed"
        + (
            f", {h['not_gated']} timing claims not gated (measured beside other runs)"
            if h["not_gated"]
            else ""
        )
        + f". Informational claims and checks are not counted.{revised} "
        f"The development set (base seed 0 of this build; 0–4 in the seed sweeps) gives:"
    )


def _sweep(chapter: str, seeds: Sequence[int], args: argparse.Namespace):
    """``nlcl sweep`` of ``chapter``'s ci profile at ``seeds``, as the command line asked."""
    from nlcl.harness.run.sweep import run_sweep

    return run_sweep(
        chapter,
        {"seed": list(seeds)},
        profile="ci",
        workers=args.workers,
        scheduler=args.scheduler,
        out=Path(args.sweep_dir) / chapter if args.sweep_dir else None,
        progress=not args.quiet,
    )


def compare_rows(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A replay's rows (``new``) against the record's (``old``), matched by (seed, claim): ``rows``,
    ``status_differs`` (the record's rows whose status differs or that the replay lacks, each with
    both statuses and values), ``values_differ`` (equal status, another value) and
    ``max_rel_difference`` over the numeric values of magnitude above 1e-12 (smaller ones are
    rounding residuals of identities), with the claim it was found at."""
    replayed = {(int(r["seed"]), r["claim"]): r for r in new}
    status, values, worst = [], 0, (0.0, None)
    for row in old:
        key = (int(row["seed"]), row["claim"])
        now = replayed.get(key)
        if now is None or now["status"] != row["status"]:
            here = [now["status"], now.get("measured")] if now else None
            status.append(
                dict(seed=key[0], claim=key[1], record=[row["status"], row.get("measured")], here=here)
            )
            continue
        a, b = row.get("measured"), now.get("measured")
        if json.dumps(a, default=str) == json.dumps(b, default=str):
            continue
        values += 1
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        if numeric and abs(a) > 1e-12 and abs(a - b) / abs(a) > worst[0]:
            worst = (abs(a - b) / abs(a), key[1])
    return {"rows": len(old), "status_differs": status, "values_differ": values, "max_rel_difference": worst}


def _replay(args: argparse.Namespace) -> int:
    from nlcl.harness.records import seed_sweeps

    record = load_record(Path(args.out))
    if record is None:
        print(f"{args.out}: no held-out record")
        return 1
    revised = revised_since(record)
    report: dict[str, Any] = {}
    for chapter in args.chapters or list(record["chapters"]):
        rec = record["chapters"].get(chapter)
        if rec is None or chapter in revised:
            why = "not in the record" if rec is None else f"revised since the run ({revised[chapter]})"
            print(f"{chapter}: not replayed: {why}")
            report[chapter] = {"skipped": why}
            continue
        res = _sweep(chapter, rec["seeds"], args)
        rows = seed_sweeps.record_from_points(
            chapter, res.points, chapter_sha256="", commit=None, profile="ci", seconds=0.0
        )["rows"]
        report[chapter] = cmp = compare_rows(rec["rows"], rows)
        rel, at = cmp["max_rel_difference"]
        same = cmp["rows"] - len(cmp["status_differs"])
        print(
            f"{chapter}: {same} of {cmp['rows']} rows with the record's status, {cmp['values_differ']} values "
            f"differ" + (f" (largest relative difference {rel:.2g}, {at})" if at else ""),
            flush=True,
        )
        for d in cmp["status_differs"]:
            print(f"  seed {d['seed']} {d['claim']}: record {d['record']}, here {d['here']}")
    if args.report:
        from nlcl.core.numerics import environment

        out = {"record_commit": record.get("commit"), "numerics": environment(), "chapters": report}
        Path(args.report).write_text(json.dumps(out, indent=1, default=str) + "\n")
    return 1 if any(c.get("status_differs") for c in report.values()) else 0


def _run(args: argparse.Namespace) -> int:
    from nlcl.core import numerics
    from nlcl.harness.records import provenance, seed_sweeps, sources
    from nlcl.harness.run import notebook

    root = provenance.repo_root()
    commit = provenance.git_commit(root)
    if commit.endswith("+dirty") and not args.allow_dirty:
        print(
            "held_out: the tree has uncommitted changes; a verdict of record needs a committed tree "
            "(commit, or run in a clean clone)"
        )
        return 2
    out = Path(args.out)
    ledger = load_ledger(out)
    seeds = draw_seeds(args.n, used_seeds(ledger))
    chapters = list(args.chapters or notebook.chapters(root))
    print(f"held_out: seeds {seeds} (drawn now), {len(chapters)} chapters, profile ci", flush=True)
    t0 = time.perf_counter()
    per_chapter = {}
    for chapter in chapters:
        res = _sweep(chapter, seeds, args)
        per_chapter[chapter] = seed_sweeps.record_from_points(
            chapter,
            res.points,
            chapter_sha256=provenance.chapter_sha256(chapter, root),
            modules_sha256=sources.modules_sha256(chapter, root),
            commit=commit,
            profile="ci",
            seconds=sum(float(p.get("seconds", 0.0)) for p in res.points),
            numerics={},
        )
    record = build_record(
        seeds,
        per_chapter,
        commit=commit,
        numerics=numerics.environment(),
        seconds=time.perf_counter() - t0,
    )
    record = merge_records(load_record(out) if args.chapters else None, record)
    record.pop("artifact", None)
    out.mkdir(parents=True, exist_ok=True)
    (out / RECORD).write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
    entry = {"seeds": seeds, "date": record["date"], "commit": commit, "chapters": chapters}
    (out / LEDGER).write_text(json.dumps({"sets": [*ledger, entry]}, indent=2) + "\n")
    h = headline(record, root)
    print(
        f"{out / RECORD}: required reproductions at seeds {seeds}: {h['reproduced']} reproduced, "
        f"{h['not_reproduced']} not reproduced, {h['failed']} failed (of {h['total']})"
    )
    for (chapter, claim), v in sorted(claim_verdicts(record).items()):
        if v["verdict"] not in ("pass",):
            print(
                f"  {chapter} {claim}: {v['verdict']} ({v['summary']}){' required' if v['required'] else ''}"
            )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m nlcl.harness.records.held_out run [--n 3] [--workers N]``, ``... check`` or ``... replay``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "action",
        choices=["run", "check", "replay"],
        help="run: a new held-out set; check: revised chapters; replay: the record's seeds again, here",
    )
    parser.add_argument("--n", type=int, default=N_SEEDS, help="seeds in the new held-out set")
    parser.add_argument("--chapters", nargs="*", help="only these chapters (default: every chapter)")
    parser.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument(
        "--sweep-dir", default=None, help="nlcl sweep folders (default: sweeps/<chapter>/...)"
    )
    parser.add_argument("--out", default=str(HELD_OUT_DIR))
    parser.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--report", default=None, help="replay: write the comparison as JSON here")
    args = parser.parse_args(argv)
    if args.action == "run":
        return _run(args)
    if args.action == "replay":
        return _replay(args)
    record = load_record(Path(args.out))
    if record is None:
        print(f"{args.out}: no held-out record")
        return 1
    from nlcl.harness.records import provenance

    return provenance.print_stale(args.out, revised_since(record))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
