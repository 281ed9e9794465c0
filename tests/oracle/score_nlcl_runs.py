"""Score nlcl's token runs with both scorings; write ``results/tian-tokens-oracle-scoring.json``.

Issue 18's five bold cells (quadratic loss: BN mean with x²; no BN with ReLU, LeakyReLU, linear
and x²) at the released README's configuration (K = 10, d = 20, P = 5, G = 40, β = 5, d_out = 50,
η = 0.02, momentum 0.9, weight decay 5e-3, batch 128, τ = 0.1, 5000 steps, ζ = 1), over seeds
0..n−1, trained by nlcl (``nlcl.tian.token_grid.train_token_runs``) and scored twice:

* ``nlcl``: ``nlcl.tian.token_metrics.matching_scores`` (the book's scoring: cosine with u_a);
* ``released``: :func:`released_scoring.check_result`, the literal re-implementation of the
  released ``check_result`` (``bn_gen.py``), on the same weights and the same generators.

Run from the repository root: ``.venv/bin/python tests/oracle/score_nlcl_runs.py [--seeds 5]``.
Deterministic: the same seeds give the same numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
from pathlib import Path

import torch
from released_scoring import check_result

from nlcl.tian.token_grid import TokenRun, train_token_runs
from nlcl.tian.tokens import make_token_worlds

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "results" / "tian-tokens-oracle-scoring.json"

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
#: Issue 18's bold cells: (BatchNorm, activation), all with the quadratic loss.
BOLD_CELLS = [
    ("mean", "quadratic"),
    ("none", "relu"),
    ("none", "leaky_relu"),
    ("none", "linear"),
    ("none", "quadratic"),
]
#: χ̄− of the released trainer as reported in issue 18 (mean over the seeds it lists), for reference only.
RELEASED_TRAINER_REPORTED = {
    "mean/quadratic": {"chi_minus": 0.237, "seeds": 5},
    "none/relu": {"chi_minus": 0.188, "seeds": 1},
    "none/leaky_relu": {"chi_minus": 0.187, "seeds": 1},
    "none/linear": {"chi_minus": 0.083, "seeds": 1},
    "none/quadratic": {"chi_minus": 0.233, "seeds": 1},
}


def patterns(generators: torch.Tensor) -> list[list[int]]:
    """nlcl's generators (G, K), −1 = wildcard, as the released ``Distribution.distributions``."""
    return [[int(a) for a in row] for row in generators.tolist()]


def mean_se(values):
    n = len(values)
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else float("nan")
    return m, sd / math.sqrt(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=CONFIG["steps"])
    ap.add_argument("--out", type=Path, default=RECORD)
    args = ap.parse_args()
    torch.set_num_threads(1)
    c = CONFIG
    seeds = list(range(args.seeds))
    runs = [
        TokenRun(
            activation=a,
            loss="quadratic",
            bn=bn,
            beta=c["beta"],
            P=c["P"],
            zeta=c["zeta"],
            seed=s,
            lr=c["lr"],
            tau=c["tau"],
        )
        for bn, a in BOLD_CELLS
        for s in seeds
    ]
    t0 = time.perf_counter()
    res = train_token_runs(
        runs,
        args.steps,
        batch_size=c["batch_size"],
        momentum=c["momentum"],
        weight_decay=c["weight_decay"],
        K=c["K"],
        n_tokens=c["n_tokens"],
        G=c["G"],
        n_fixed=c["n_fixed"],
        out_dim=c["out_dim"],
        keep_weights=range(len(runs)),
    )
    wall = time.perf_counter() - t0
    worlds = make_token_worlds(
        seeds, c["P"], c["zeta"], n_tokens=c["n_tokens"], K=c["K"], G=c["G"], n_fixed=c["n_fixed"]
    )
    rows = []
    for i, r in enumerate(runs):
        W = res.weights[i]  # (K, M, d), float32 as in the released model
        rel = check_result(
            {f"w1.{k}.weight": W[k] for k in range(W.shape[0])},
            patterns(worlds.generators[seeds.index(r.seed)]),
            c["n_tokens"],
            is_linear=r.activation == "linear",
        )
        row = res.table.iloc[i]
        rows.append(
            dict(
                bn=r.bn,
                activation=r.activation,
                seed=r.seed,
                nlcl_chi_plus=float(row.chi_plus),
                nlcl_chi_minus=float(row.chi_minus),
                released_chi_plus=rel["loc_all"],
                released_chi_minus=rel["loc_other_all"],
            )
        )
    cells = []
    for bn, a in BOLD_CELLS:
        sub = [r for r in rows if r["bn"] == bn and r["activation"] == a]
        cell = dict(bn=bn, activation=a, n_seeds=len(sub))
        for key in ("nlcl_chi_plus", "nlcl_chi_minus", "released_chi_plus", "released_chi_minus"):
            m, se = mean_se([r[key] for r in sub])
            cell[key], cell[key + "_se"] = round(m, 4), round(se, 4)
        ref = RELEASED_TRAINER_REPORTED[f"{bn}/{a}"]
        cell["released_trainer_chi_minus_reported"] = ref["chi_minus"]
        cell["released_trainer_seeds_reported"] = ref["seeds"]
        cells.append(cell)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    record = dict(
        what="χ̄± of nlcl's token runs under nlcl's scoring and under the released check_result (issue 18)",
        written_by="tests/oracle/score_nlcl_runs.py",
        commit=commit,
        config={**c, "steps": args.steps, "loss": "quadratic", "seeds": seeds},
        released_trainer_reported="issue 18's table: the released bn_gen.py run by a session (not re-run here)",
        wall_s=round(wall, 1),
        cells=cells,
        runs=[{k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in rows],
    )
    args.out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    for cell in cells:
        print(cell)
    print(f"wrote {args.out} ({wall:.0f} s of training)")


if __name__ == "__main__":
    main()
