"""Train nlcl on issue 18's grid and score every run both ways; write ``results/tian-tokens-oracle-nlcl-runs.json``.

The grid: five activations × BatchNorm {none, mean} × {InfoNCE, quadratic} at the released
README's configuration (K = 10, d = 20, P = 5, G = 40, β = 5 (M = 25), d_out = 50, η = 0.02,
momentum 0.9, weight decay 5e-3, batch 128, τ = 0.1, 5000 steps, ζ = 1), seeds 0..n−1, trained by
nlcl (``nlcl.tian.tokens.grid.train_token_runs``, one stack) and scored with

* the book's scoring, ``matching_scores(..., normaliser="cosine")`` (``chi_plus``, ``chi_minus``);
* the released code's normaliser, ``normaliser="released"`` (``chi_plus_released``,
  ``chi_minus_released``); each run is also scored by :func:`released_scoring.check_result` (the
  oracle's literal restatement of the released ``check_result``) on the same weights and
  generators, and the script stops if the two differ by more than 1e-5.

``compare_oracle.py`` builds the comparison record from this file and the oracle's runs.
Run from the repository root: ``.venv/bin/python tests/oracle/score_nlcl_runs.py [--seeds 8]``.
Deterministic: the same seeds and torch threads give the same numbers.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from released_scoring import check_result  # noqa: E402
from run_oracle_grid import GRID  # noqa: E402

from nlcl.tian.tokens.grid import TokenRun, train_token_runs  # noqa: E402
from nlcl.tian.tokens.world import make_token_worlds  # noqa: E402

ROOT = HERE.parents[1]
RECORD = ROOT / "results" / "tian-tokens-oracle-nlcl-runs.json"

#: The released README's Sec. 5 command (ssl/real-dataset/README.md, "Fourth paper").
CONFIG = dict(
    K=10,
    n_tokens=20,
    P=5,
    G=40,
    n_fixed=5,
    beta=5,
    out_dim=50,
    lr=0.02,
    momentum=0.9,
    weight_decay=5e-3,
    batch_size=128,
    tau=0.1,
    steps=5000,
    zeta=1.0,
)
#: Largest allowed difference between nlcl's released-normaliser scores and check_result (float32 sums).
SCORING_TOL = 1e-5


def patterns(generators: torch.Tensor) -> list[list[int]]:
    """nlcl's generators (G, K), −1 = wildcard, as the released ``Distribution.distributions``."""
    return [[int(a) for a in row] for row in generators.tolist()]


def score_runs(
    cells: list[tuple[str, str, str]], seeds: list[int], steps: int = CONFIG["steps"], progress: bool = False
) -> tuple[list[dict], float, float]:
    """Train nlcl on ``cells`` (loss, bn, activation) × ``seeds`` at :data:`CONFIG` and score every run
    both ways; returns (rows, largest |released normaliser − check_result|, training wall seconds)."""
    c = CONFIG
    runs = [
        TokenRun(
            activation=a,
            loss=loss,
            bn=bn,
            beta=c["beta"],
            P=c["P"],
            zeta=c["zeta"],
            seed=s,
            lr=c["lr"],
            tau=c["tau"],
        )
        for loss, bn, a in cells
        for s in seeds
    ]
    t0 = time.perf_counter()
    res = train_token_runs(
        runs,
        steps,
        batch_size=c["batch_size"],
        momentum=c["momentum"],
        weight_decay=c["weight_decay"],
        K=c["K"],
        n_tokens=c["n_tokens"],
        G=c["G"],
        n_fixed=c["n_fixed"],
        out_dim=c["out_dim"],
        keep_weights=range(len(runs)),
        progress=progress,
    )
    wall = time.perf_counter() - t0
    worlds = make_token_worlds(
        seeds, c["P"], c["zeta"], n_tokens=c["n_tokens"], K=c["K"], G=c["G"], n_fixed=c["n_fixed"]
    )
    rows, worst = [], 0.0
    for i, r in enumerate(runs):
        W = res.weights[i]  # (K, M, d), float32 as in the released model
        rel = check_result(
            {f"w1.{k}.weight": W[k] for k in range(W.shape[0])},
            patterns(worlds.generators[seeds.index(r.seed)]),
            c["n_tokens"],
            is_linear=r.activation == "linear",
        )
        row = res.table.iloc[i]
        worst = max(
            worst,
            abs(rel["loc_all"] - row.chi_plus_released),
            abs(rel["loc_other_all"] - row.chi_minus_released),
        )
        rows.append(
            dict(
                loss=r.loss,
                bn=r.bn,
                activation=r.activation,
                seed=r.seed,
                chi_plus=round(float(row.chi_plus), 6),
                chi_minus=round(float(row.chi_minus), 6),
                chi_plus_released=round(float(row.chi_plus_released), 6),
                chi_minus_released=round(float(row.chi_minus_released), 6),
                final_loss=round(float(row.final_loss), 6),
            )
        )
    return rows, worst, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=CONFIG["steps"])
    ap.add_argument("--out", type=Path, default=RECORD)
    ap.add_argument("--progress", action="store_true", help="a progress bar on stderr")
    args = ap.parse_args()
    torch.set_num_threads(1)
    c = CONFIG
    seeds = list(range(args.seeds))
    rows, worst, wall = score_runs(GRID, seeds, args.steps, args.progress)
    if worst > SCORING_TOL:
        raise SystemExit(f"normaliser='released' differs from check_result by {worst:.2e} > {SCORING_TOL}")
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    record = dict(
        what="nlcl's token runs on issue 18's grid, scored with the cosine (the book's) and with the "
        "released normaliser",
        written_by="tests/oracle/score_nlcl_runs.py",
        commit=commit,
        date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        machine=f"{platform.node()} {platform.machine()} ({torch.get_num_threads()} torch thread), "
        f"torch {torch.__version__}",
        config={**c, "steps": args.steps, "seeds": seeds},
        released_scoring_max_abs_diff=worst,
        wall_s=round(wall, 1),
        runs=rows,
    )
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}: {len(rows)} runs, {wall:.0f} s of training, check_result max diff {worst:.1e}")


if __name__ == "__main__":
    main()
