"""Re-run, on fresh seeds, the cells where nlcl and the oracle differ (issue 18, item 3).

The rule, declared before any fresh-seed run was trained: take every cell of the complete record
(``results/tian-tokens-oracle.json``, 5 seeds per trainer) whose verdict under the released
scoring is "differs", and train both trainers again at the fresh seeds 5..9 (seeds no run of the
record used; each trainer draws its own data and initialization from them). The difference
**replicates** when, on the fresh seeds alone, the cell differs again by issue 18's rule
(|mean difference| > max(0.02, 2 combined standard errors)) in a score that differed in the
record, with the same sign of the mean difference. A difference that replicates is a property of
the trainers (a cause to find); one that does not is what 20 cells × 2 scores compared at about
two standard errors give by chance, and the record's verdict for that cell is seed noise.

Writes ``results/tian-tokens-oracle-replication.json`` (the oracle's fresh runs are cached, one
JSON line each, in ``results/tian-tokens-oracle-replication-runs.jsonl``, so a stopped run
resumes). Run from the repository root:
``.venv/bin/python tests/oracle/replicate_differing.py [--processes 2]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare_oracle import RECORD, agrees, compare_cell, git_commit  # noqa: E402
from run_oracle_grid import cached_keys, train  # noqa: E402

ROOT = HERE.parents[1]
CACHE = ROOT / "results" / "tian-tokens-oracle-replication-runs.jsonl"
OUT = ROOT / "results" / "tian-tokens-oracle-replication.json"
FRESH_SEEDS = [5, 6, 7, 8, 9]
STEPS = 5000
SCORES = ("chi_plus", "chi_minus")


def differing_cells(record: dict) -> list[dict]:
    """The record's cells whose verdict under the released scoring is not "agrees"."""
    return [c for c in record["cells"] if not c["verdict_released"].startswith("agrees")]


def replication(cell: dict, fresh: dict) -> dict:
    """The rule of this module for one cell: which scores differed, and whether they differ again
    on the fresh seeds with the same sign (``fresh``: :func:`compare_oracle.compare_cell` output)."""
    differed = [s for s in SCORES if abs(cell[f"diff_released_{s}"]) > cell[f"tol_released_{s}"]]
    again = []
    for s in differed:
        ok, _ = agrees(
            fresh[f"oracle_{s}"],
            fresh[f"oracle_{s}_se"],
            fresh[f"nlcl_released_{s}"],
            fresh[f"nlcl_released_{s}_se"],
        )
        same_sign = (fresh[f"diff_released_{s}"] > 0) == (cell[f"diff_released_{s}"] > 0)
        if not ok and same_sign:
            again.append(s)
    return dict(differed_in=differed, differs_again_in=again, replicates=bool(again))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=1)
    args = ap.parse_args()
    record = json.loads(RECORD.read_text())
    if not record["status"].startswith("complete"):
        raise SystemExit(f"{RECORD} is not complete ({record['status']}): finish run_oracle_grid.py first")
    cells = differing_cells(record)
    print(f"{len(cells)} differing cell(s): {[(c['loss'], c['bn'], c['activation']) for c in cells]}")
    done = cached_keys(CACHE)
    jobs = [
        dict(loss=c["loss"], bn=c["bn"], activation=c["activation"], seed=s, niter=STEPS)
        for s in FRESH_SEEDS
        for c in cells
        if (c["loss"], c["bn"], c["activation"], s, STEPS) not in done
    ]
    print(f"{len(jobs)} oracle runs to train ({len(done)} cached)", flush=True)
    train(jobs, args.processes, CACHE)
    oracle = [json.loads(line) for line in CACHE.read_text().splitlines() if line.strip()]

    import torch
    from score_nlcl_runs import score_runs

    torch.set_num_threads(1)
    triples = [(c["loss"], c["bn"], c["activation"]) for c in cells]
    nlcl_rows, worst, wall = score_runs(triples, FRESH_SEEDS) if triples else ([], 0.0, 0.0)
    out_cells = []
    for c in cells:
        t = (c["loss"], c["bn"], c["activation"])
        o = [r for r in oracle if (r["loss"], r["bn"], r["activation"]) == t and r["seed"] in FRESH_SEEDS]
        n = [r for r in nlcl_rows if (r["loss"], r["bn"], r["activation"]) == t]
        fresh = compare_cell(o, n)
        out_cells.append(
            dict(
                loss=c["loss"],
                bn=c["bn"],
                activation=c["activation"],
                record={
                    k: c[k]
                    for k in c
                    if k.startswith(("oracle_chi", "nlcl_released", "diff_released", "tol_released"))
                },
                fresh=fresh,
                **replication(c, fresh),
            )
        )
    OUT.write_text(
        json.dumps(
            dict(
                what="the cells where nlcl and the oracle differ in results/tian-tokens-oracle.json, re-run "
                "by both trainers at fresh seeds",
                written_by="tests/oracle/replicate_differing.py",
                rule=__doc__.split("\n\n")[1].replace("\n", " "),
                commit=git_commit(),
                date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                record_commit=record["commit"],
                fresh_seeds=FRESH_SEEDS,
                nlcl_wall_s=round(wall, 1),
                nlcl_released_scoring_max_abs_diff=worst,
                cells=out_cells,
            ),
            indent=1,
            ensure_ascii=False,
        )
        + "\n"
    )
    for c in out_cells:
        print(
            c["loss"],
            c["bn"],
            c["activation"],
            "differed in",
            c["differed_in"],
            "replicates:",
            c["replicates"],
        )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
