"""Benchmark of the batched token-task trainer (Tian 2023, Sec. 5 / App. E.2 at the paper's sizes).

``nlcl bench [--quick] [--device cpu|cuda] [--threads T] [--engine tables|autograd]``
prints and writes ``_build/bench.json``:

* the matrix-multiply peak (GFLOP/s) of this machine, measured in the same run;
* ms per training step for one configuration (R = 1) at the paper's sizes;
* ms per step per configuration when the whole grid is stacked (Figs. 9, 10, 11, Table 1; runs
  of equal M = βP in one stack, as ``nlcl train-grid`` trains them);
* achieved GFLOP/s and fraction of the matmul peak, counted two ways: the FLOPs of the
  per-sample network (:func:`step_flops`, what the ``autograd`` engine computes; for the
  ``tables`` engine a *dense-equivalent* rate) and the FLOPs the ``tables`` engine actually does
  (:func:`table_step_flops`, about 13× fewer);
* the projected wall time of the full grid (960 runs × 5000 steps);
* the *reference step* (:func:`time_reference_steps`, the configuration of
  ``tests/numerics/cost.py``: ReLU, InfoNCE, BatchNorm mean, β = 5, P = 5, d_out = 50) for one
  configuration and per configuration-step of a 16-configuration stack: ms per step, its FLOPs
  (:func:`table_step_flops`) and the *roofline ratio*, the time as a multiple of the time those
  FLOPs take at the matmul peak measured in the same run (same dtype, same threads, same clock),
  which is comparable across machines.  With ``--engine fused`` the eager ``tables`` engine and
  the fused one are timed interleaved in the same process (best of several repeats), and the
  fused engine's compile time is reported (once per shape; later runs of the shape reuse it).

The grid is timed stack by stack for a few steps each (all stacks, or a subset with ``--quick``)
and extrapolated to 5000 steps.  On a shared machine the wall time includes waiting for a core,
so on CPU every number is also measured in process CPU time (the cost on a dedicated core), with
the peak measured in the same run and with the same clock so the ratio is meaningful.  With
more OpenMP threads than free cores, spinning threads can slow training down by orders of
magnitude: benchmark and train with ``--threads`` ≤ the free cores.  Explained in
``book/tian-tokens.py`` (speed section).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import torch

from nlcl.core.device import describe_device, get_device
from nlcl.core.speed import matmul_peak_gflops, synchronize
from nlcl.core.validate import choice, positive_int
from nlcl.tian.losses import LOSSES
from nlcl.tian.tokens.grid import paper_grid, runs_from_table
from nlcl.tian.tokens.stacks import build_stack, check_workers, stack_cost
from nlcl.tian.tokens.training import ENGINES, train_batched

__all__ = [
    "matmul_peak_gflops",
    "step_flops",
    "table_step_flops",
    "time_stack",
    "reference_runs",
    "time_reference_steps",
    "run_benchmark",
    "format_benchmark",
]


def step_flops(
    M: int, *, K: int = 10, d: int = 20, n_tokens: int = 20, batch_size: int = 128, out_dim: int = 20
) -> float:
    """Multiply-add FLOPs of one training step of one run (forward + backward, both views).

    Counts the matrix products: the top layer V (2N × KM × d_out, ×3 for forward, ∂V and ∂f_1),
    the InfoNCE similarity matrix (N × N × d_out, ×3) and W Eᵀ (K M d n_tokens, ×3); elementwise
    work (activations, BatchNorm, gather, softmax) is not counted, so the achieved rate is a
    lower bound on the useful work.
    """
    n2 = 2 * batch_size
    top = 2 * n2 * K * M * out_dim
    sim = 2 * batch_size * batch_size * out_dim
    emb = 2 * K * M * d * n_tokens
    return 3.0 * (top + sim + emb)


def table_step_flops(
    M: int,
    loss: str = "infonce",
    *,
    K: int = 10,
    n_tokens: int = 20,
    batch_size: int = 128,
    out_dim: int = 20,
) -> float:
    """FLOPs of one step of one run in the ``tables`` engine (:func:`nlcl.tian.tokens.tables.token_step`).

    Counts the table products Z = Y V (forward), ∂V and ∂Y (backward), each 2 · K · 2n_tokens · M ·
    d_out; the gather and scatter between tables and samples (2N · K · d_out additions each way);
    and, for InfoNCE, the similarity matrix and its gradient (2 · N² · d_out each).  Elementwise
    work is not counted.
    """
    choice("loss", loss, LOSSES)
    n2 = 2 * batch_size
    tables = 3 * 2 * K * 2 * n_tokens * M * out_dim
    gather = 2 * n2 * K * out_dim
    sim = 2 * 2 * batch_size * batch_size * out_dim if loss == "infonce" else 0
    return float(tables + gather + sim)


def time_stack(
    runs,
    steps: int,
    *,
    batch_size: int = 128,
    device: torch.device | str = "cpu",
    warmup: int = 2,
    engine: str = "auto",
) -> tuple[float, float]:
    """(wall, CPU) seconds per training step of one stack of equal-M token runs, after ``warmup``.

    CPU time is the process CPU time (all threads); on a shared machine the wall time also
    counts the time the process waits for a core.
    """
    dev = torch.device(device)
    _, model, data = build_stack(runs, batch_size=batch_size, device=dev)
    kw = dict(
        loss=[r.loss for r in runs],
        tau=[r.tau for r in runs],
        lr=[r.lr for r in runs],
        check_every=1 if dev.type == "cpu" else 50,
        engine=engine,
    )
    train_batched(model, data, warmup, **kw)
    synchronize(dev)
    t0, c0 = time.perf_counter(), time.process_time()
    train_batched(model, data, steps, **kw)
    synchronize(dev)
    return (time.perf_counter() - t0) / steps, (time.process_time() - c0) / steps


def reference_runs(n_runs: int = 1) -> list:
    """The reference step's runs: ReLU, InfoNCE, BN mean, β = 5, P = 5, lr 0.02, seeds 0..n−1.

    The configuration whose cost ``tests/numerics/cost.py`` records against the released trainer
    (trained with ``out_dim=50``); M = βP = 25 filters per RF.
    """
    from nlcl.tian.tokens.grid import TokenRun

    return [
        TokenRun("relu", "infonce", "mean", 5, 5, 1.0, s, lr=0.02, tau=0.1)
        for s in range(positive_int("n_runs", n_runs))
    ]


def time_reference_steps(
    sizes=(1, 16),
    engines=("tables",),
    *,
    steps: int = 50,
    repeats: int = 5,
    peak_gflops: float | None = None,
    out_dim: int = 50,
    batch_size: int = 128,
    device: torch.device | str = "cpu",
) -> dict:
    """Time the reference step (:func:`reference_runs`) per engine, interleaved, best of ``repeats``.

    For each stack size R in ``sizes`` and each engine, one model is trained ``steps`` steps per
    repeat, the engines taking turns, so that a load change on a shared machine hits them alike;
    the least disturbed repeat (the minimum) is kept, in process CPU time and in wall time.  A
    first call per engine (excluded) warms up; for ``"fused"`` it compiles, and its duration is
    ``compile_s``.  Returns ``{str(R): {engine: {...}}}`` with ms per configuration-step (CPU and
    wall), the FLOPs per configuration-step (:func:`table_step_flops`) and, when ``peak_gflops``
    is given, ``roofline_ratio`` = CPU time / (FLOPs / peak).  On CUDA the clock is the wall
    (synchronised; the process CPU time does not measure the GPU), and so is the ratio's time.
    """
    from nlcl.tian.tokens.fused import compile_log

    steps, repeats = positive_int("steps", steps), positive_int("repeats", repeats)
    for e in engines:
        choice("engine", e, ENGINES)
    dev = torch.device(device)
    gpu = dev.type == "cuda"
    train = dict(loss="infonce", tau=0.1, lr=0.02, check_every=50 if gpu else 1)
    out: dict = {}
    for R in sizes:
        runs = reference_runs(R)
        flops = table_step_flops(runs[0].M, "infonce", batch_size=batch_size, out_dim=out_dim)
        models, data = {}, None
        entry: dict = {}
        for e in engines:
            _, models[e], data = build_stack(runs, batch_size=batch_size, out_dim=out_dim, device=dev)
            n_log = len(compile_log())
            t0 = time.perf_counter()
            train_batched(models[e], data, 2, engine=e, **train)
            synchronize(dev)
            warm = time.perf_counter() - t0
            log = compile_log()[n_log:]
            entry[e] = dict(
                ms_cpu=float("inf"),
                ms_wall=float("inf"),
                flops_per_config_step=flops,
                warmup_s=warm,
                compile_s=sum(x["compile_s"] for x in log) if log else None,
                backend=log[-1]["backend"] if log else None,
            )
        for _ in range(repeats):
            for e in engines:
                synchronize(dev)
                t0, c0 = time.perf_counter(), time.process_time()
                train_batched(models[e], data, steps, engine=e, **train)
                synchronize(dev)
                scale = 1e3 / (steps * R)
                entry[e]["ms_cpu"] = min(entry[e]["ms_cpu"], (time.process_time() - c0) * scale)
                entry[e]["ms_wall"] = min(entry[e]["ms_wall"], (time.perf_counter() - t0) * scale)
        if peak_gflops:
            for v in entry.values():
                ms = v["ms_wall"] if gpu else v["ms_cpu"]
                v["roofline_ratio"] = ms / 1e3 / (v["flops_per_config_step"] / (peak_gflops * 1e9))
        out[str(R)] = entry
    return out


def _time_stack_job(runs, steps: int, device: str, engine: str) -> tuple[float, float, float]:
    """Worker side of :func:`run_benchmark` with workers > 1: (wall, CPU, elapsed incl. set-up) s/step."""
    t0 = time.perf_counter()
    wall, cpu = time_stack(runs, steps, device=device, engine=engine)
    return wall, cpu, (time.perf_counter() - t0) / steps


def run_benchmark(
    quick: bool = False,
    device: str = "cpu",
    threads: int | None = None,
    steps: int | None = None,
    out: str | os.PathLike | None = "_build/bench.json",
    engine: str = "auto",
    workers: int = 1,
) -> dict:
    """Measure the numbers listed in the module docstring; write them to ``out`` (unless None).

    ``workers`` > 1 (CPU only) times the grid's stacks on a Dask ``LocalCluster`` of that many
    processes at once, each with ⌊threads / workers⌋ threads, as ``nlcl train-grid --workers``
    trains them; the grid's wall time is then the cluster's wall time, scaled by the share of the workers' time spent in the
    timed steps (world construction and warm-up excluded).
    """
    dev = get_device(device)
    engine = choice("engine", engine, ENGINES)
    workers = check_workers(workers, dev)
    if threads is not None:
        torch.set_num_threads(positive_int("threads", threads))
    steps = positive_int("steps", steps if steps is not None else (3 if quick else 10))
    peak = matmul_peak_gflops(512 if quick else 1024, device=dev)
    from nlcl.tian.tokens.fused import compile_log

    n_log = len(compile_log())
    ref_engines = (
        ("tables", "fused") if engine == "fused" else ("autograd",) if engine == "autograd" else ("tables",)
    )
    reference = time_reference_steps(  # on CPU in process CPU time, on CUDA in wall time
        engines=ref_engines,
        steps=10 if quick else 50,
        repeats=3 if quick else 7,
        peak_gflops=peak,
        device=dev,
    )
    grid = paper_grid()
    runs = runs_from_table(grid)
    by_m: dict[int, list] = {}
    for r in runs:
        by_m.setdefault(r.M, []).append(r)
    Ms = sorted(by_m)
    if quick:
        Ms = [m for m in Ms if m in (1, 15, 100)]
    single_wall, single_cpu = {}, {}
    for m in (15, 100) if not quick else (15,):
        w, c = time_stack(by_m[m][:1], steps, device=dev, engine=engine)
        single_wall[m], single_cpu[m] = 1e3 * w, 1e3 * c
    wall_s, cpu_s, dense_flops, table_flops, n_runs = {}, {}, 0.0, 0.0, 0
    for m in Ms:
        dense_flops += len(by_m[m]) * step_flops(m)
        table_flops += sum(table_step_flops(m, r.loss) for r in by_m[m])
        n_runs += len(by_m[m])
    if workers == 1:
        for m in Ms:
            wall_s[m], cpu_s[m] = time_stack(by_m[m], steps, device=dev, engine=engine)
        grid_wall = sum(wall_s.values())
    else:
        from nlcl.core.cluster import dask_client

        with dask_client(None, workers, max(1, torch.get_num_threads() // workers)) as client:
            t0 = time.perf_counter()  # the LocalCluster's workers are up: time the grid only
            # largest stacks first, one per task, as nlcl.tian.tokens.grid schedules them
            futures = {
                m: client.submit(
                    _time_stack_job,
                    by_m[m],
                    steps,
                    str(dev),
                    engine,
                    priority=stack_cost(len(by_m[m]), m),
                    pure=False,
                )
                for m in Ms
            }
            timed = [futures[m].result() for m in Ms]
            pool_wall = time.perf_counter() - t0
        for m, (w, c, _) in zip(Ms, timed):
            wall_s[m], cpu_s[m] = w, c
        grid_wall = pool_wall / steps * sum(w for w, _, _ in timed) / sum(e for _, _, e in timed)
    # On CUDA the CPU clock is meaningless: use wall time for everything.
    busy = cpu_s if dev.type == "cpu" else wall_s
    grid_busy = sum(busy.values())
    dense_rate = dense_flops / grid_busy / 1e9
    engine_rate = dense_rate if engine == "autograd" else table_flops / grid_busy / 1e9
    full_runs = len(runs)
    scale = 5000 * (full_runs / n_runs)
    res = dict(
        device=describe_device(dev),
        threads=torch.get_num_threads(),
        workers=workers,
        engine=engine,
        quick=quick,
        timed_steps=steps,
        matmul_peak_gflops=peak,
        single_config_ms_per_step_wall={str(k): v for k, v in single_wall.items()},
        single_config_ms_per_step_cpu={str(k): v for k, v in single_cpu.items()},
        grid_runs_timed=n_runs,
        grid_runs_total=full_runs,
        grid_ms_per_step_per_config_wall=1e3 * grid_wall / n_runs,
        grid_ms_per_step_per_config_cpu=1e3 * grid_busy / n_runs,
        stack_ms_per_step_wall={str(k): 1e3 * v for k, v in wall_s.items()},
        stack_ms_per_step_cpu={str(k): 1e3 * v for k, v in cpu_s.items()},
        achieved_gflops=dense_rate,
        fraction_of_peak=dense_rate / peak,
        achieved_gflops_engine=engine_rate,
        fraction_of_peak_engine=engine_rate / peak,
        projected_full_grid_min_wall=grid_wall * scale / 60,
        projected_full_grid_min_dedicated=grid_busy * scale / 60,
        reference_config="ReLU, InfoNCE, BN mean, beta=5, P=5 (M=25), d_out=50, batch 128, K=10, 20 tokens",
        reference_steps=reference,
        compile_s_total=sum(x["compile_s"] for x in compile_log()[n_log:]),
        note=(
            "achieved_gflops counts the FLOPs of the per-sample network (for the tables engine a dense-equivalent "
            "rate); achieved_gflops_engine counts the FLOPs the engine does. Shared machine: wall times include "
            "waiting for a core; the 'cpu'/'dedicated' numbers use process CPU time (what the computation costs "
            "on a dedicated core); peak measured in the same run with the same clock"
        ),
    )
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=2) + "\n")
    return res


def format_benchmark(res: dict) -> str:
    """The benchmark record of :func:`run_benchmark` as the lines ``nlcl bench`` prints."""
    lines = [
        f"device: {res['device']}, threads {res['threads']}, workers {res['workers']}, engine {res['engine']}",
        f"matmul peak: {res['matmul_peak_gflops']:.1f} GFLOP/s",
    ]
    for m, v in res["single_config_ms_per_step_cpu"].items():
        lines.append(
            f"one configuration (M={m}): {v:.2f} ms/step CPU, {res['single_config_ms_per_step_wall'][m]:.2f} ms wall"
        )
    lines += [
        f"batched grid ({res['grid_runs_timed']} of {res['grid_runs_total']} runs timed): "
        f"{res['grid_ms_per_step_per_config_cpu']:.3f} ms/step per configuration CPU, "
        f"{res['grid_ms_per_step_per_config_wall']:.3f} ms wall",
        f"achieved (per-sample network FLOPs): {res['achieved_gflops']:.1f} GFLOP/s = "
        f"{100 * res['fraction_of_peak']:.1f}% of the matmul peak",
        f"achieved (FLOPs the engine does): {res['achieved_gflops_engine']:.1f} GFLOP/s = "
        f"{100 * res['fraction_of_peak_engine']:.1f}% of the matmul peak",
        f"projected full grid (960 runs x 5000 steps): {res['projected_full_grid_min_dedicated']:.1f} min on a "
        f"dedicated core, {res['projected_full_grid_min_wall']:.1f} min at this run's wall-clock rate",
        res["note"],
    ]
    ref = res.get("reference_steps")
    if ref:
        gpu = res["device"].startswith("cuda")
        clock, key, other = ("wall time", "ms_wall", "CPU") if gpu else ("CPU time", "ms_cpu", "wall")
        lines.append(f"reference step ({res['reference_config']}), best of interleaved repeats, {clock}:")
        for R, entry in ref.items():
            what = "one configuration" if R == "1" else f"stack of {R}, per configuration-step"
            parts = []
            for e, v in entry.items():
                part = f"{e} {v[key]:.3f} ms ({v['ms_cpu' if gpu else 'ms_wall']:.3f} {other})"
                if "roofline_ratio" in v:
                    part += f" = {v['roofline_ratio']:.0f}x its FLOP time at the peak"
                if v.get("compile_s") is not None:
                    part += f", compiled in {v['compile_s']:.1f} s ({v['backend']})"
                parts.append(part)
            flops = next(iter(entry.values()))["flops_per_config_step"]
            lines.append(f"  {what}: {flops / 1e6:.2f} MFLOP; " + "; ".join(parts))
            if "tables" in entry and "fused" in entry:
                lines.append(f"  fused speed-up: {entry['tables'][key] / entry['fused'][key]:.2f}x")
    if res.get("compile_s_total"):
        lines.append(f"compile time (fused engine, all shapes of this run): {res['compile_s_total']:.1f} s")
    return "\n".join(lines)
