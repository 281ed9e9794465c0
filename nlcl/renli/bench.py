"""Benchmark of the Ren & Li simulation's SGD step: the latent engine against the direct reference.

``python -m nlcl.renli.bench [--quick] [--out results/renli-simulation-bench-cpu.json]`` times one
SGD step of every run of the chapter ``book/renli-simulation.py`` at once (the chapter's run grid:
``n_seeds × (2·|κ| + |λ| − 1 + |β₁| − 1)`` runs), at the ``ci`` and ``full`` sizes, with
``engine="latent"`` (:mod:`nlcl.renli.latent`) and ``engine="direct"`` (training in R^d), timed
interleaved (:func:`nlcl.core.timing.interleaved_timings`: a burst of load from another process hits
both engines of a repeat alike) and reported as the median over repeats, wall clock and process CPU
time.  Ren & Li 2023, Algorithm 3.1 (reconstructed; the model of ``ren-li-setup.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from nlcl.core.timing import interleaved_timings
from nlcl.core.validate import ParameterError, positive_int
from nlcl.renli.model import init_learners, make_data
from nlcl.renli.simulation import ENGINES, _DirectState, _LatentState

__all__ = ["PROFILES", "chapter_runs", "run_benchmark", "step_timer"]

#: Sizes of the chapter's profiles (book/renli-simulation.py, ``spec=``), and its sweeps' lengths.
PROFILES = {
    "ci": dict(width=128, batch_size=128, n_seeds=3, steps=800),
    "full": dict(width=512, batch_size=512, n_seeds=5, steps=3000),
}
_KAPPAS, _LAMS, _BETA1S = (2.0, 4.0, 8.0), (0.25, 0.5, 1.0, 2.0), (0.01, 0.05, 0.2)


def chapter_runs(n_seeds: int) -> tuple[list[float], list[int], list[float]]:
    """κ, seed and λ of every run of the chapter's grid (main: NC and C per κ; λ sweep; β₁ sweep)."""
    n_seeds = positive_int("n_seeds", n_seeds)
    kap, seeds, lams = [], [], []
    for s in range(n_seeds):
        for k in _KAPPAS:
            kap += [k, k]
            seeds += [s, s]
            lams += [0.0, 1.0]
        for v in _LAMS:
            if v != 1.0:
                kap.append(4.0), seeds.append(s), lams.append(v)
        for _ in range(len(_BETA1S) - 1):
            kap.append(4.0), seeds.append(s), lams.append(1.0)
    return kap, seeds, lams


def step_timer(engine: str, *, width: int, batch_size: int, n_seeds: int, d: int = 64, r: int = 8):
    """A callable doing one SGD step (stage 2, β = 2) of every run of the chapter's grid."""
    if engine not in ENGINES:
        raise ParameterError(f"engine={engine!r} must be one of {ENGINES}")
    kap, seeds, lams = chapter_runs(n_seeds)
    data = make_data(d, r, r, kap, seeds)
    W_A, W_B = init_learners(data, width)
    state = (_LatentState if engine == "latent" else _DirectState)(data, W_A, W_B, data.sample_latents(2))
    lam = torch.tensor(lams, dtype=data.M_A.dtype)
    beta = torch.full_like(lam, 2.0)

    def step() -> None:
        state.update(state.loss(batch_size, lam, beta), 1e-3)

    return step


def run_benchmark(
    quick: bool = False,
    repeats: int | None = None,
    out: str | os.PathLike | None = None,
    profiles: dict[str, dict] | None = None,
) -> dict:
    """Time both engines at both profiles' sizes (``profiles``: default :data:`PROFILES`); write the
    record to ``out`` (unless None)."""
    repeats = positive_int("repeats", repeats if repeats is not None else (2 if quick else 3))
    number = 2 if quick else 3
    res: dict = {
        "device": f"cpu ({torch.get_num_threads()} threads)",
        "threads": torch.get_num_threads(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "repeats": repeats,
        "steps_per_measurement": number,
        "profiles": {},
        "note": (
            "one SGD step of all runs of the chapter's grid at once (float32); median over interleaved "
            "repeats; shared 2-core machine: wall includes waiting for a core, cpu is process CPU time "
            "(both threads); projected_training_s = ms/step x the profile's steps (training only; the "
            "chapter's other sections are not included)"
        ),
    }
    for prof, size in (PROFILES if profiles is None else profiles).items():
        fns = {e: step_timer(e, **{k: size[k] for k in ("width", "batch_size", "n_seeds")}) for e in ENGINES}
        cpu: dict[str, list[float]] = {e: [] for e in ENGINES}

        def timed(e):
            def call():
                c0 = time.process_time()
                fns[e]()
                cpu[e].append(time.process_time() - c0)

            return call

        table = interleaved_timings({e: timed(e) for e in ENGINES}, repeats=repeats, number=number)
        wall = table.groupby("key").seconds.median()
        row = {"runs": len(chapter_runs(size["n_seeds"])[0]), **size}
        for e in ENGINES:
            row[f"{e}_ms_per_step_wall"] = 1e3 * float(wall[e])
            row[f"{e}_ms_per_step_cpu"] = 1e3 * float(np.median(cpu[e][-repeats * number :]))
            row[f"{e}_projected_training_s"] = float(wall[e]) * size["steps"]
        row["speedup_wall"] = float(wall["direct"] / wall["latent"])
        row["speedup_cpu"] = row["direct_ms_per_step_cpu"] / row["latent_ms_per_step_cpu"]
        res["profiles"][prof] = row
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=2) + "\n")
    return res


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m nlcl.renli.bench [--quick] [--repeats N] [--out PATH]``."""
    ap = argparse.ArgumentParser(prog="python -m nlcl.renli.bench", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats and steps")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the chapter uses 1)")
    ap.add_argument("--out", default="results/renli-simulation-bench-cpu.json")
    args = ap.parse_args(argv)
    torch.set_num_threads(positive_int("threads", args.threads))
    res = run_benchmark(quick=args.quick, repeats=args.repeats, out=args.out)
    for prof, row in res["profiles"].items():
        print(
            f"{prof}: {row['runs']} runs, latent {row['latent_ms_per_step_wall']:.1f} ms/step, "
            f"direct {row['direct_ms_per_step_wall']:.1f} ms/step (wall): {row['speedup_wall']:.1f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
