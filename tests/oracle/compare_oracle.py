"""Build ``results/tian-tokens-oracle.json`` (+ ``-cells.csv``): nlcl against the oracle, cell by cell (issue 18).

Inputs: the oracle's runs (``run_oracle_grid.py`` → ``results/tian-tokens-oracle-runs.jsonl``, the
literal re-implementation of the released trainer, scored by the released ``check_result``) and
nlcl's runs (``score_nlcl_runs.py`` → ``results/tian-tokens-oracle-nlcl-runs.json``: the same
configuration, nlcl's own seeds, every run scored with the book's cosine and with the released
normaliser).  Each trainer draws its data and initialization from its own seeds, so the two are
compared as distributions over seeds.

The rule (issue 18, stated before any oracle run was compared): a cell agrees when the means
differ by at most max(0.02, 2 combined standard errors) for both χ̄+ and χ̄−; the combined
standard error is sqrt(se_oracle² + se_nlcl²), each the sample standard deviation over seeds
divided by sqrt(#seeds).  The verdict is given twice: nlcl scored with the released normaliser
(like the oracle: the like-for-like comparison) and with the book's cosine (the comparison issue 18
reported).  A cell whose oracle has a single seed has no standard error of its own; its verdict
is marked "indicative" and uses nlcl's per-seed standard deviation in its place (the assumption
that both trainers have the same seed spread, which the cells with ≥ 2 oracle seeds let one check).

Run from the repository root: ``.venv/bin/python tests/oracle/compare_oracle.py``.
"""

from __future__ import annotations

import csv
import json
import math
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_oracle_grid import BOLD, CACHE, GRID  # noqa: E402

ROOT = HERE.parents[1]
NLCL = ROOT / "results" / "tian-tokens-oracle-nlcl-runs.json"
RECORD = ROOT / "results" / "tian-tokens-oracle.json"
CSV = ROOT / "results" / "tian-tokens-oracle-cells.csv"
PLANNED_SEEDS = 5
STEPS = 5000
#: The issue's tolerance floor on a mean difference.
FLOOR = 0.02
#: χ̄± keys of nlcl's runs per scoring.
SCORINGS = {"released": ("chi_plus_released", "chi_minus_released"), "cosine": ("chi_plus", "chi_minus")}


def mean_sd(values: list[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for one value)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    m = sum(values) / n
    if n < 2:
        return m, None
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))


def agrees(m_o: float, se_o: float, m_n: float, se_n: float) -> tuple[bool, float]:
    """Issue 18's rule: (|m_o − m_n| <= tolerance, tolerance)."""
    tol = max(FLOOR, 2 * math.hypot(se_o, se_n))
    return abs(m_o - m_n) <= tol, tol


def compare_cell(oracle: list[dict], nlcl: list[dict]) -> dict:
    """One cell's statistics and verdicts (``oracle``: runs with chi_plus/chi_minus from check_result)."""
    out: dict = dict(
        oracle_seeds=sorted(r["seed"] for r in oracle), nlcl_seeds=sorted(r["seed"] for r in nlcl)
    )
    n_o, n_n = len(oracle), len(nlcl)
    if n_n < 2:
        raise ValueError(f"nlcl has {n_n} seeds in a cell; need >= 2")
    for score in ("chi_plus", "chi_minus"):
        m, sd = mean_sd([r[score] for r in oracle]) if n_o else (None, None)
        out[f"oracle_{score}"] = m
        out[f"oracle_{score}_se"] = None if sd is None else sd / math.sqrt(n_o)
    for scoring, keys in SCORINGS.items():
        verdicts = []
        for score, key in zip(("chi_plus", "chi_minus"), keys):
            m_n, sd_n = mean_sd([r[key] for r in nlcl])
            se_n = sd_n / math.sqrt(n_n)
            out[f"nlcl_{scoring}_{score}"], out[f"nlcl_{scoring}_{score}_se"] = m_n, se_n
            if not n_o:
                continue
            se_o = out[f"oracle_{score}_se"]
            ok, tol = agrees(out[f"oracle_{score}"], sd_n if se_o is None else se_o, m_n, se_n)
            out[f"diff_{scoring}_{score}"] = m_n - out[f"oracle_{score}"]
            out[f"tol_{scoring}_{score}"] = tol
            verdicts.append(ok)
        if not n_o:
            out[f"verdict_{scoring}"] = "no oracle run"
        else:
            v = "agrees" if all(verdicts) else "differs"
            out[f"verdict_{scoring}"] = v + (" (indicative: 1 oracle seed)" if n_o == 1 else "")
    return out


def git_commit() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()


def build(oracle_runs: list[dict], nlcl_record: dict) -> dict:
    """The comparison record from the oracle's runs and nlcl's record."""
    cells = []
    for loss, bn, act in GRID:
        o = [
            r
            for r in oracle_runs
            if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act) and r["niter"] == STEPS
        ]
        n = [r for r in nlcl_record["runs"] if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act)]
        cell = dict(loss=loss, bn=bn, activation=act, bold=(loss, bn, act) in BOLD)
        cell.update(compare_cell(o, n))
        cells.append(cell)
    complete = all(len(c["oracle_seeds"]) >= PLANNED_SEEDS for c in cells)
    walls = [r["wall_s"] for r in oracle_runs if r["niter"] == STEPS]
    return dict(
        what="nlcl's token trainer against the oracle (tests/oracle/released_trainer.py, a literal "
        "re-implementation of the released luckmatters bn_gen.py trainer, scored by its check_result), "
        "as distributions over seeds, on issue 18's grid",
        written_by="tests/oracle/compare_oracle.py",
        commit=git_commit(),
        date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        machine=f"{platform.node()} {platform.machine()}, 2 CPU cores shared with a parallel book build",
        rule=f"agree when |mean difference| <= max({FLOOR}, 2 sqrt(se_oracle^2 + se_nlcl^2)) for both "
        "χ̄+ and χ̄−; with one oracle seed the verdict is indicative and uses nlcl's per-seed sd for the "
        "oracle's se",
        scorings={
            "released": "nlcl's runs scored with matching_scores(normaliser='released') (= check_result): "
            "like for like",
            "cosine": "nlcl's runs scored with the book's cosine (matching_scores default), the oracle "
            "with check_result: the comparison issue 18 reported",
        },
        config=dict(nlcl_record["config"], oracle="released_trainer.OracleConfig defaults"),
        status="complete" if complete else f"PARTIAL: fewer than {PLANNED_SEEDS} oracle seeds in some cells",
        planned=f"{len(GRID)} cells × {PLANNED_SEEDS} seeds per trainer",
        oracle_runs=len(walls),
        oracle_wall_s=dict(
            total=round(sum(walls), 1),
            min=min(walls, default=None),
            max=max(walls, default=None),
            note="one process, one torch thread, nice 10, on a CPU shared with other work; the first "
            "8 runs were trained under heavier load",
        ),
        nlcl_commit=nlcl_record.get("commit"),
        nlcl_wall_s=nlcl_record.get("wall_s"),
        nlcl_released_scoring_max_abs_diff=nlcl_record.get("released_scoring_max_abs_diff"),
        cells=cells,
    )


def main() -> None:
    if not NLCL.is_file():
        raise SystemExit(f"{NLCL} is missing: run tests/oracle/score_nlcl_runs.py first")
    oracle = (
        [json.loads(line) for line in CACHE.read_text().splitlines() if line.strip()]
        if CACHE.exists()
        else []
    )
    record = build(oracle, json.loads(NLCL.read_text()))
    RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    cols = list(record["cells"][0])
    with CSV.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for c in record["cells"]:
            w.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in c.items()})
    for c in record["cells"]:
        print(
            f"{c['loss']:9s} {c['bn']:4s} {c['activation']:10s} oracle n={len(c['oracle_seeds'])} "
            f"released: {c['verdict_released']:40s} cosine: {c['verdict_cosine']}"
        )
    print(f"wrote {RECORD} and {CSV} ({record['status']})")


if __name__ == "__main__":
    main()
