"""Train the oracle (the released trainer, ``released_trainer``) on cells of issue 18's grid.

Each run is one process-independent (activation, loss, BN, seed) training at the released README's
configuration (``released_trainer.OracleConfig`` defaults: K = 10, d = 20, P = 5, G = 40, β = 5,
d_out = 50, η = 0.02, momentum 0.9, weight decay 5e-3, batch 128, τ = 0.1, 5000 steps), scored
with the released ``check_result``.  Finished runs are appended, one JSON line each, to
``--cache`` (a run already there is not trained again), so the script can be stopped and resumed;
``compare_oracle.py`` builds the comparison record from that file.

``.venv/bin/python tests/oracle/run_oracle_grid.py --cells bold --seeds 0 1 2 3 4 --processes 4``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "results" / "tian-tokens-oracle-runs.jsonl"
ACTIVATIONS = ("linear", "relu", "leaky_relu", "quadratic", "sigmoid")
BOLD = [
    ("quadratic", "mean", "quadratic"),
    ("quadratic", "none", "relu"),
    ("quadratic", "none", "leaky_relu"),
    ("quadratic", "none", "linear"),
    ("quadratic", "none", "quadratic"),
]
GRID = [(loss, bn, a) for loss in ("quadratic", "infonce") for bn in ("mean", "none") for a in ACTIVATIONS]


def _run(job):
    import torch

    torch.set_num_threads(1)
    from released_trainer import OracleConfig, train_and_score

    cfg = OracleConfig(**job)
    t0 = time.perf_counter()
    out = train_and_score(cfg)
    return {**asdict(cfg), **out, "wall_s": round(time.perf_counter() - t0, 1)}


def key(d):
    return (d["loss"], d["bn"], d["activation"], int(d["seed"]), int(d["niter"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", choices=["bold", "grid"], default="bold")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=CACHE)
    args = ap.parse_args()
    cells = BOLD if args.cells == "bold" else BOLD + [c for c in GRID if c not in BOLD]
    done = cached_keys(args.cache)
    # Seed-major: every cell gets its first seeds before any cell gets more.
    jobs = [
        dict(loss=loss, bn=bn, activation=a, seed=s, niter=args.steps)
        for s in args.seeds
        for loss, bn, a in cells
        if (loss, bn, a, s, args.steps) not in done
    ]
    print(f"{len(jobs)} oracle runs to train ({len(done)} cached)", flush=True)
    train(jobs, args.processes, args.cache)


def cached_keys(cache: Path) -> set:
    """The keys of the runs already in ``cache`` (empty when it does not exist)."""
    if not cache.exists():
        return set()
    return {key(json.loads(line)) for line in cache.read_text().splitlines() if line.strip()}


def train(jobs: list[dict], processes: int, cache: Path) -> None:
    """Train ``jobs`` on ``processes`` processes, appending each finished run to ``cache``."""
    with mp.get_context("spawn").Pool(processes) as pool:
        for res in pool.imap(_run, jobs):
            with cache.open("a") as fh:
                fh.write(json.dumps(res, sort_keys=True) + "\n")
            print(
                res["loss"],
                res["bn"],
                res["activation"],
                res["seed"],
                f"χ̄+ {res['chi_plus']:.3f} χ̄− {res['chi_minus']:.3f} ({res['wall_s']} s)",
                flush=True,
            )


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
