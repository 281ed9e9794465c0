"""Paper-scale verdicts: committed records of a chapter's claims run with ``--profile full``.

After ``nlcl run CHAPTER --profile full`` the claims and provenance of that run are in its run
folder (``runs/<chapter>/<run id>/``); ``python -m nlcl.harness.records.paper_scale CHAPTER`` copies those of
the newest finished full-profile run (or of ``--run FOLDER``, or of a book build with ``--build``),
with provenance (commit, date, device, wall time), into ``results/claims-full/<chapter>.json``. The reproducibility report
(:mod:`nlcl.harness.site.report`) reads these files and shows each claim's paper-scale verdict beside
its ci verdict; a chapter without such a file is shown as "not run at paper scale".

Those records are of base seed 0, a development seed. **At held-out seeds**, ``python -m
nlcl.harness.records.held_out run --profile full`` runs every chapter's full profile at 3 or more
freshly drawn seeds into ``results/held-out-full/`` (:mod:`nlcl.harness.records.held_out`);
:func:`held_out_counts` accumulates those sets as the ``ci`` held-out verdicts are accumulated
(every set at today's code, the same Clopper–Pearson interval), and the report shows each claim's
result as a **pass count**, "k/n held-out seeds" with the statuses of the seeds that did not pass
(:func:`pass_count_text`), beside the seed-0 status, never as a class: at 3 seeds the decision rule
cannot reach *reproduced* (3 passes of 3 give a lower bound of 0.29), so every clean claim would read
"underpowered". A required reproduction that fails at a counted held-out full seed
(:func:`held_out_failures`) is shown as such; the published verdicts stay those of the seed-0 records.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "FULL_DIR",
    "HELD_OUT_FAILING",
    "save_full_record",
    "load_full_records",
    "latest_full_run",
    "stale_records",
    "held_out_counts",
    "pass_count_text",
    "attach_held_out",
    "held_out_failures",
    "main",
]

FULL_DIR = Path("results") / "claims-full"


def save_full_record(
    chapter: str, claims_file: Path, provenance_file: Path, destination: Path
) -> dict[str, Any]:
    """Write ``destination`` from a full-profile run's claims and provenance files; returns it.

    Refuses records of another profile (only a ``full`` run gives a paper-scale verdict), of a run
    from a tree with uncommitted changes, and of a run whose parameters differ from the chapter's
    full-profile defaults (:func:`non_default_parameters`): ``-p lr 0.01`` is not the paper's verdict.
    """
    claims = json.loads(Path(claims_file).read_text())
    prov = json.loads(Path(provenance_file).read_text())
    profiles = {r["profile"] for r in claims} | {prov.get("profile")}
    if profiles != {"full"}:
        raise ValueError(
            f"{claims_file}: profile(s) {sorted(map(str, profiles))}; a paper-scale record needs 'full'"
        )
    if str(prov.get("commit", "")).endswith("+dirty"):
        raise ValueError(
            f"{provenance_file}: the run was made from a tree with uncommitted changes (commit "
            f"{prov.get('commit')}); a paper-scale record needs a committed tree: commit, re-run"
        )
    differs = non_default_parameters(chapter, prov.get("parameters") or {})
    if differs:
        raise ValueError(
            f"{provenance_file}: parameters differ from the chapter's full-profile defaults "
            f"({'; '.join(differs)}); a paper-scale verdict is the chapter's own setting"
        )
    record = {
        "chapter": chapter,
        "profile": "full",
        "commit": prov.get("commit"),
        "date": prov.get("date"),
        "device": prov.get("device"),
        "numerics": prov.get("numerics"),
        "wall_time_s": prov.get("wall_time_s"),
        "parameters": prov.get("parameters"),
        "chapter_sha256": prov.get("chapter_sha256"),
        "modules_sha256": prov.get("modules_sha256"),
        "data_source": prov.get("data_source"),
        "claims": claims,
    }
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
    return record


#: Parameters that change where a run computes, not what: a full run on a GPU is still the paper's.
NOT_THE_SETTING = ("device", "workers")


def non_default_parameters(chapter: str, parameters: dict[str, Any], root: Path | None = None) -> list[str]:
    """``name: run value != default`` for each parameter of a run that differs from the chapter's
    declared default at the ``full`` profile (profile sizes filled in; :data:`NOT_THE_SETTING` aside)."""
    from nlcl.harness.records import provenance
    from nlcl.harness.run import spec

    if not parameters:
        return []
    path = provenance.repo_root(root) / "book" / f"{chapter}.py"
    declared = spec.read_chapter(path).parameters
    want = spec.resolve({}, declared, "full")
    plain = lambda v: json.loads(json.dumps(v, default=str))  # noqa: E731  (tuples → lists)
    return [
        f"{k}: {parameters[k]!r} != {want[k]!r}"
        for k in sorted(parameters)
        if k in want and k not in NOT_THE_SETTING and plain(parameters[k]) != plain(want[k])
    ]


def load_full_records(directory: Path) -> dict[str, dict[str, Any]]:
    """Read every ``<chapter>.json`` under ``directory``: chapter → record (with ``artifact`` path)."""
    out = {}
    for path in sorted(Path(directory).glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "claims" not in data:
            raise ValueError(f"{path}: expected a paper-scale record with a 'claims' list")
        data["artifact"] = f"{FULL_DIR / path.name}"
        out[data["chapter"]] = data
    return out


def stale_records(directory: Path, root: Path | None = None) -> dict[str, str]:
    """Committed records that no longer describe the chapter: chapter → reason.

    A record is current when the SHA-256 of ``book/<chapter>.py`` it was run with
    (``chapter_sha256``, from the run's provenance) equals that of today's file; a record without
    the hash, or of a chapter that no longer exists, is stale too. Refresh one with
    ``nlcl run CHAPTER --profile full`` and ``python -m nlcl.harness.records.paper_scale CHAPTER``.
    """
    from nlcl.harness.records import sources

    return sources.stale_sources(load_full_records(directory), root, since="the run")


def latest_full_run(chapter: str, root: Path | None = None) -> Path:
    """The newest run folder of ``chapter`` run with ``--profile full`` that finished (its required
    claims may have failed: that is a verdict too); a clear error if there is none."""
    from nlcl.core.validate import ParameterError
    from nlcl.harness.records import provenance
    from nlcl.harness.run import runs

    base = runs.runs_root(root or provenance.repo_root()) / chapter
    candidates = []
    for folder in sorted(base.glob("*/")) if base.is_dir() else []:
        rec = runs.read_run(folder)
        finished = rec.get("status") == "complete" or str(rec.get("error", "")).startswith("ClaimsFailed")
        if rec.get("profile") == "full" and finished and (folder / "claims" / f"{chapter}.json").is_file():
            candidates.append(folder)
    if not candidates:
        raise ParameterError(
            f"no finished full-profile run of {chapter!r} under {base}; run "
            f"`nlcl run {chapter} --profile full` first, or give --run FOLDER / --build FOLDER"
        )
    return candidates[-1]  # run ids start with the UTC time


# -- at held-out seeds: pass counts, not classes ------------------------------------------------

#: Statuses of a counted held-out ``full`` row that the report shows as a failure (``missing``: the
#: run at that seed measured nothing for the claim).
HELD_OUT_FAILING = ("fail", "invalid", "missing")


def held_out_counts(
    directory: Path | None = None, root: Path | None = None
) -> dict[tuple[str, str], dict[str, Any]] | None:
    """The paper-scale pass counts at held-out seeds, (chapter, claim) → entry: every ``full``-profile
    set under ``directory`` (default ``results/held-out-full``,
    :data:`nlcl.harness.records.held_out.HELD_OUT_FULL_DIR`)
    accumulated by :func:`nlcl.harness.records.held_out.accumulate` (only the sets at today's
    ``chapter_sha256`` and ``modules_sha256`` counted; the same interval), each entry with ``count``
    (:func:`pass_count_text`) and ``failing`` (how many counted seeds gave one of
    :data:`HELD_OUT_FAILING`). None when there is no set (no held-out full run); a clear error when a
    set under ``directory`` is not of the ``full`` profile.

    The entry's ``class`` is the decision rule's, kept for completeness and never shown: at the
    default 3 seeds it is at best *underpowered* (3 passes of 3: lower bound 0.29)."""
    from nlcl.harness.records import held_out

    directory = Path(directory) if directory is not None else held_out.HELD_OUT_FULL_DIR
    sets = held_out.load_sets(directory, "full")
    if not sets:
        return None
    out = held_out.accumulate(sets, held_out.current_hashes(sets, root), held_out.declared_unseeded(root))
    for c in out.values():
        counted = c["class"] != "revised"
        c["failing"] = sum(c["statuses"].get(s, 0) for s in HELD_OUT_FAILING) if counted else 0
        c["count"] = pass_count_text(c)
    return out


def pass_count_text(c: Mapping[str, Any]) -> str:
    """A claim's held-out pass count in words, from an accumulated entry: ``"3/3 held-out seeds"``,
    with the statuses of the seeds that did not pass (``"2/3 held-out seeds (1 fail)"``), whether it
    is not held-out evidence (values read from or pooled with committed artifacts; nothing random),
    or, when no set is at today's code, what the sets at earlier code gave (not counted)."""
    if c["class"] == "revised":
        e = c.get("earlier") or {}
        before = f" ({e['passes']}/{e['n']} pass at earlier code, not counted)" if e.get("n") else ""
        return f"no held-out set at the current code{before}"
    if c["n"] == 0:
        return "not gated at any held-out seed (timing, measured beside other runs)"
    others = ", ".join(f"{k} {s}" for s, k in sorted(c["statuses"].items()) if s != "pass" and k)
    text = f"{c['passes']}/{c['n']} held-out seed{'s' * (c['n'] != 1)}" + (f" ({others})" if others else "")
    if c["evidence"] == "artifact":
        how = "pooled with" if "joined with" in str(c.get("read_from")) else "read from"
        return f"{text}; not held-out evidence: values {how} committed artifacts"
    if c["evidence"] == "unseeded":
        return f"{text}; not held-out evidence: nothing random (ledger: seeded: false)"
    return text


def attach_held_out(
    records: Sequence[Mapping[str, Any]], counts: Mapping[tuple[str, str], Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Each claim record with ``held_out_full`` where a held-out full set has the claim (its
    :func:`held_out_counts` entry: ``count``, ``passes``, ``n``, ``statuses``, ``interval``,
    ``evidence``, ``failing``, ``counted``: a set at today's code was counted, ``seeds``, ``sets``,
    ``artifact``); the others unchanged."""
    from nlcl.harness.records import held_out

    out = []
    for r in records:
        r = dict(r)
        c = (counts or {}).get((r.get("chapter"), r.get("id")))
        if c is not None:
            r["held_out_full"] = {
                **{k: c[k] for k in ("count", "passes", "n", "statuses", "interval", "evidence", "seeds")},
                "failing": c.get("failing", 0),
                "counted": c["class"] != "revised",
                "sets": len(c["sets"]),
                "artifact": f"{held_out.HELD_OUT_FULL_DIR / held_out.SETS}/{r['chapter']}.json",
            }
        out.append(r)
    return out


def held_out_failures(
    counts: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    claims: Iterable[tuple[str, str]] | None = None,
) -> list[Mapping[str, Any]]:
    """The required reproductions (of the book's ``claims``, (chapter, id) pairs, where given) that
    gave one of :data:`HELD_OUT_FAILING` at some counted held-out full seed, by chapter and claim."""
    keep = None if claims is None else set(claims)
    return sorted(
        (
            c
            for key, c in (counts or {}).items()
            if c.get("failing")
            and c["required"]
            and c["kind"] == "reproduction"
            and (keep is None or key in keep)
        ),
        key=lambda c: (c["chapter"], c["claim"]),
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m nlcl.harness.records.paper_scale CHAPTER [--run FOLDER | --build FOLDER]``: commit-ready full record."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("chapter", nargs="?", help="chapter id (omit with --check)")
    parser.add_argument(
        "--check", action="store_true", help="list the committed records whose chapter changed since"
    )
    parser.add_argument("--run", default=None, help="run folder of the full run (default: the newest one)")
    parser.add_argument("--build", default=None, help="or: the build folder of a full book build")
    parser.add_argument("--out", default=str(FULL_DIR))
    args = parser.parse_args(argv)
    from nlcl.harness.records import provenance

    if args.check:
        return provenance.print_stale(args.out, stale_records(Path(args.out)))
    if not args.chapter:
        parser.error("give a chapter (or --check)")

    if args.build:
        build = Path(args.build) if args.build else provenance.build_dir()
        claims, prov = (
            build / "claims" / f"{args.chapter}.json",
            build / "provenance" / f"{args.chapter}.json",
        )
        if not prov.is_file():  # `nlcl book` keeps each chapter's run folder under <build>/runs/
            folder = build / "runs" / args.chapter
            claims, prov = folder / "claims" / f"{args.chapter}.json", folder / "provenance.json"
    else:
        folder = Path(args.run) if args.run else latest_full_run(args.chapter)
        claims, prov = folder / "claims" / f"{args.chapter}.json", folder / "provenance.json"
    try:
        rec = save_full_record(args.chapter, claims, prov, Path(args.out) / f"{args.chapter}.json")
    except ValueError as exc:
        print(f"paper_scale: refused: {exc}")
        return 2
    print(f"{args.out}/{args.chapter}.json: {len(rec['claims'])} claims, commit {rec['commit']}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
