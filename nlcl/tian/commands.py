"""The Tian 2023 subcommands of ``nlcl`` (registered through :mod:`nlcl.core.commands`).

- ``nlcl train-grid``: train the token task's paper grid (Sec. 5, App. E.2) and save one results
  artifact per figure (:func:`train_grid`); ``book/tian-tokens.py`` reads them.
- ``nlcl bench``: benchmark the token trainer at the paper's sizes (:mod:`nlcl.tian.tokens.bench`).

The training itself is :func:`nlcl.tian.tokens.grid.train_token_runs`; this module adds what the
book needs around it: provenance (the commit read when training started), one artifact per figure
saved after every stack (an interrupted run leaves honest, labeled subsets), and a clean stop on
SIGTERM. It imports nothing heavy at import time (``nlcl --help`` reads it).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Sequence

from nlcl.core.commands import Command, Services
from nlcl.tian.paper import SGD_LR, TOKEN_STEPS

__all__ = ["COMMANDS", "train_grid"]


def train_grid(
    figures: Sequence[str] = ("fig9", "fig10", "fig11", "table1"),
    *,
    steps: int = TOKEN_STEPS,
    seeds: Sequence[int] = (0, 1, 2),
    lr: float = SGD_LR,
    device: str = "cpu",
    prefix: str = "tian-tokens-full",
    profile: str = "full",
    workers: int = 1,
    scheduler: str | None = None,
    bn_moments: str = "view",
    engine: str = "auto",
    services: Services,
    echo=print,
) -> None:
    """Train ``figures`` of the paper grid and save ``results/<prefix>-<figure>.csv/.json``.

    ``nlcl train-grid --figures table1 fig9 --steps 5000 --prefix tian-tokens-full`` writes the
    artifacts ``book/tian-tokens.py`` reads. ``workers`` > 1 trains on a Dask ``LocalCluster``;
    ``scheduler`` (an address) on a running Dask cluster (:func:`nlcl.core.cluster.dask_client`).
    ``bn_moments="pooled"`` trains the BatchNorm runs of fig11/table1 with moments pooled over both
    views (:func:`nlcl.tian.tokens.grid.paper_grid`). ``engine`` is the trainer's gradient engine
    (:data:`nlcl.tian.tokens.training.ENGINES`; ``"fused"``: one compiled graph per stack shape, equal
    to the table engine within rounding, not bitwise), recorded in each artifact's parameters when it
    is not the default. ``services`` saves the artifacts and names the
    commit (the command line passes the book's: :func:`nlcl.harness.run.cli.services`).
    """
    from nlcl.core.device import describe_device, get_device
    from nlcl.tian.tokens.grid import grid_parameters, paper_grid, runs_from_table, train_token_runs

    dev = get_device(device)
    # what trained it: the device, and the processes when the grid is spread over Dask workers
    if scheduler is not None:
        where = f"{describe_device(dev)} per worker, Dask cluster at {scheduler}"
    elif workers > 1:
        where = f"{describe_device(dev)} per worker, {workers} Dask worker processes"
    else:
        where = describe_device(dev)
    # A terminated run (SIGTERM, e.g. `kill` or a batch scheduler) exits through the Dask client's
    # context manager, which stops the Dask worker processes instead of leaving them running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # All figures and seeds in one call: stacks of equal (β, P) hold runs of every figure and seed,
    # smallest M first, and every figure's finished rows are saved after each stack, so an
    # interrupted run leaves honest subsets (all cells up to some M = βP), labeled as such.
    grid = paper_grid(list(figures), seeds=list(seeds), lr=lr, bn_moments=bn_moments)
    t_start = time.perf_counter()
    commit = services.git_commit()  # the code as it was when training started

    def save(partial) -> None:
        table = grid[["figure"]].join(partial, how="inner")
        wall = time.perf_counter() - t_start
        for fig in figures:
            sub = table[table.figure == fig].reset_index(drop=True)
            total = int((grid.figure == fig).sum())
            params = {**grid_parameters(steps, lr, list(seeds), bn_moments), "figure": fig}
            if engine != "auto":
                params["engine"] = engine
            done = "complete" if len(sub) == total else "PARTIAL: an honest subset of the grid"
            services.save_artifact(
                f"{prefix}-{fig}",
                sub,
                params=params,
                profile=profile,
                device=where,
                commit=commit,
                notes=f"{len(sub)} of {total} runs done ({steps} steps each, {workers} worker process(es)); "
                f"the whole grid ({len(table)} of {len(grid)} runs) took {wall:.0f} s wall so far; {done}",
            )
        echo(f"saved {len(table)} of {len(grid)} runs after {wall:.0f} s")

    res = train_token_runs(
        runs_from_table(grid),
        steps,
        device=dev,
        progress=True,
        on_stack=save,
        workers=workers,
        scheduler=scheduler,
        engine=engine,
    )
    echo(
        f"{len(grid)} runs x {steps} steps in {res.wall_s:.0f} s wall "
        f"({res.run_steps_per_s:.0f} run-steps/s, {where})"
    )


def _train_grid_arguments(grid: argparse.ArgumentParser) -> None:
    grid.add_argument("--figures", nargs="+", default=["fig9", "fig10", "fig11", "table1"])
    grid.add_argument("--steps", type=int, default=TOKEN_STEPS)
    grid.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    grid.add_argument("--lr", type=float, default=SGD_LR)
    grid.add_argument("--device", default="cpu")
    grid.add_argument(
        "--prefix", default="tian-tokens-full", help="artifact names: results/<prefix>-<figure>"
    )
    grid.add_argument("--profile", default="full")
    grid.add_argument(
        "--workers", type=int, default=1, help="Dask LocalCluster processes on CPU (e.g. the number of cores)"
    )
    grid.add_argument("--scheduler", default=None, help="address of a running Dask scheduler instead")
    grid.add_argument(
        "--bn-moments",
        choices=("view", "pooled"),
        default="view",
        help="BatchNorm moments per view (default, as the released code) or pooled over both views "
        "(App. D, Eqs. 164-165: trains only the BatchNorm runs of fig11/table1)",
    )
    grid.add_argument(
        "--engine",
        choices=("auto", "tables", "autograd", "fused"),
        default="auto",
        help="gradient engine (default auto = tables for token data; fused: one torch.compile graph "
        "per stack shape, equal within rounding, not bitwise; recorded in the artifacts)",
    )


def _train_grid_command(args: argparse.Namespace, services: Services) -> int:
    train_grid(
        args.figures,
        steps=args.steps,
        seeds=args.seeds,
        lr=args.lr,
        device=args.device,
        prefix=args.prefix,
        profile=args.profile,
        workers=args.workers,
        scheduler=args.scheduler,
        bn_moments=args.bn_moments,
        engine=args.engine,
        services=services,
    )
    return 0


def _bench_arguments(bench: argparse.ArgumentParser) -> None:
    bench.add_argument("--quick", action="store_true", help="time 3 stacks (M = 1, 15, 100) for 3 steps")
    bench.add_argument("--device", default="cpu")
    bench.add_argument("--threads", type=int, default=None)
    bench.add_argument("--steps", type=int, default=None)
    bench.add_argument("--out", default="runs/bench/bench.json")
    bench.add_argument("--engine", default="auto", help="auto (tables for token data), tables or autograd")
    bench.add_argument(
        "--workers",
        type=int,
        default=1,
        help="time the grid on a Dask LocalCluster of this many processes (CPU)",
    )


def _bench_command(args: argparse.Namespace, services: Services) -> int:
    from nlcl.tian.tokens.bench import format_benchmark, run_benchmark

    res = run_benchmark(
        args.quick, args.device, args.threads, args.steps, args.out, args.engine, args.workers
    )
    print(format_benchmark(res))
    if args.out:
        print(f"wrote {args.out}")
    return 0


#: The subcommands this paper adds to ``nlcl`` (found by :func:`nlcl.harness.run.cli.paper_commands`).
COMMANDS = (
    Command(
        "train-grid",
        "train the token task's paper grid (Tian 2023, Sec. 5) and save results artifacts",
        _train_grid_arguments,
        _train_grid_command,
    ),
    Command(
        "bench", "benchmark the token-task trainer at the paper's sizes", _bench_arguments, _bench_command
    ),
)
