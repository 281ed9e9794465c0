"""Build ``results/tian-tokens-oracle-comparison.json``: nlcl against the oracle, cell by cell (issue 18, item 2).

The oracle's runs are those of ``run_oracle_grid.py`` (``results/tian-tokens-oracle-runs.jsonl``);
nlcl's are those of ``score_nlcl_runs.py`` (``results/tian-tokens-oracle-scoring.json``: the same
configuration and seeds, trained by nlcl).  Both are scored with the released ``check_result``.
A cell agrees when the means differ by at most max(0.02, 2 combined standard errors) for both
χ̄+ and χ̄− (issue 18); a cell with fewer than two seeds on either side is "too few seeds".
The record says which cells and seeds exist and is marked partial when the planned grid (five
activations × BN {none, mean} × {InfoNCE, quadratic} × 5 seeds) is not complete.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from run_oracle_grid import CACHE, GRID

ROOT = Path(__file__).resolve().parents[2]
NLCL = ROOT / "results" / "tian-tokens-oracle-scoring.json"
RECORD = ROOT / "results" / "tian-tokens-oracle-comparison.json"
PLANNED_SEEDS = 5


def stats(values):
    n = len(values)
    if n == 0:
        return None, None
    m = sum(values) / n
    if n < 2:
        return m, None
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1) / n)


def compare(a, b):
    """Agreement of two (mean, se) pairs by the issue's rule; None when a standard error is missing."""
    if a[1] is None or b[1] is None:
        return None
    return abs(a[0] - b[0]) <= max(0.02, 2 * math.sqrt(a[1] ** 2 + b[1] ** 2))


def main() -> None:
    oracle = (
        [json.loads(line) for line in CACHE.read_text().splitlines() if line.strip()]
        if CACHE.exists()
        else []
    )
    nlcl = json.loads(NLCL.read_text()) if NLCL.exists() else {"runs": [], "config": {}}
    cells = []
    for loss, bn, act in GRID:
        o = [
            r
            for r in oracle
            if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act) and r["niter"] == 5000
        ]
        n = [r for r in nlcl["runs"] if (loss, r["bn"], r["activation"]) == ("quadratic", bn, act)]
        if not o and not n:
            continue
        cell = dict(
            loss=loss,
            bn=bn,
            activation=act,
            oracle_seeds=sorted(r["seed"] for r in o),
            nlcl_seeds=sorted(r["seed"] for r in n),
        )
        verdicts = []
        for score, okey, nkey in (
            ("chi_plus", "chi_plus", "released_chi_plus"),
            ("chi_minus", "chi_minus", "released_chi_minus"),
        ):
            so, sn = stats([r[okey] for r in o]), stats([r[nkey] for r in n])
            cell[f"oracle_{score}"], cell[f"oracle_{score}_se"] = so
            cell[f"nlcl_{score}"], cell[f"nlcl_{score}_se"] = sn
            verdicts.append(compare(so, sn))
        cell["agrees"] = None if None in verdicts else all(verdicts)
        cell["verdict"] = {None: "too few seeds", True: "agrees", False: "differs"}[cell["agrees"]]
        cells.append(cell)
    complete = len(cells) == len(GRID) and all(
        len(c["oracle_seeds"]) >= PLANNED_SEEDS and len(c["nlcl_seeds"]) >= PLANNED_SEEDS for c in cells
    )
    record = dict(
        what="nlcl's token trainer against the oracle (a literal re-implementation of the released trainer), "
        "both scored with the released check_result (issue 18, item 2)",
        written_by="tests/oracle/compare_oracle.py",
        rule="agree when |mean difference| <= max(0.02, 2 combined standard errors) for χ̄+ and χ̄−",
        config=dict(nlcl.get("config", {}), oracle="released_trainer.OracleConfig defaults, 5000 steps"),
        status="complete" if complete else "PARTIAL",
        planned=f"{len(GRID)} cells (five activations × BN {{none, mean}} × {{InfoNCE, quadratic}}) × "
        f"{PLANNED_SEEDS} seeds, both trainers",
        oracle_runs=len(oracle),
        cells=cells,
    )
    RECORD.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    for c in cells:
        print(c["bn"], c["activation"], c["loss"], c["verdict"], c["oracle_seeds"], c["nlcl_seeds"])
    print(f"wrote {RECORD} ({record['status']})")


if __name__ == "__main__":
    main()
