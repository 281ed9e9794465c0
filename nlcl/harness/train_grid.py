"""``nlcl train-grid``: train the token task's paper grid and save one results artifact per figure.

The training itself is :func:`nlcl.tian.tokens.grid.train_token_runs`; this module adds what the
book needs around it: provenance (the commit read when training started), one artifact per figure
saved after every stack (an interrupted run leaves honest, labeled subsets), and a clean stop on
SIGTERM. Explained in ``book/tian-tokens.py``.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Sequence

import pandas as pd

__all__ = ["train_grid"]


def train_grid(
    figures: Sequence[str] = ("fig9", "fig10", "fig11", "table1"),
    *,
    steps: int = 5000,
    seeds: Sequence[int] = (0, 1, 2),
    lr: float = 2e-3,
    device: str = "cpu",
    prefix: str = "tian-tokens-full",
    profile: str = "full",
    workers: int = 1,
    scheduler: str | None = None,
    bn_moments: str = "view",
    echo=print,
) -> None:
    """Train ``figures`` of the paper grid and save ``results/<prefix>-<figure>.csv/.json``.

    ``nlcl train-grid --figures table1 fig9 --steps 5000 --prefix tian-tokens-full`` writes the
    artifacts ``book/tian-tokens.py`` reads. ``workers`` > 1 trains on a Dask ``LocalCluster``;
    ``scheduler`` (an address) on a running Dask cluster (:func:`nlcl.core.cluster.dask_client`).
    ``bn_moments="pooled"`` trains the BatchNorm runs of fig11/table1 with moments pooled over both
    views (:func:`nlcl.tian.tokens.grid.paper_grid`).
    """
    from nlcl.core.device import describe_device, get_device
    from nlcl.harness import results
    from nlcl.harness.provenance import git_commit
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
    # All figures and seeds in one call: stacks of equal M hold runs of every figure and seed,
    # smallest M first, and every figure's finished rows are saved after each stack, so an
    # interrupted run leaves honest subsets (all cells up to some M = βP), labeled as such.
    grid = paper_grid(list(figures), seeds=list(seeds), lr=lr, bn_moments=bn_moments)
    t_start = time.perf_counter()
    commit = git_commit()  # the code as it was when training started

    def save(partial: pd.DataFrame) -> None:
        table = grid[["figure"]].join(partial, how="inner")
        wall = time.perf_counter() - t_start
        for fig in figures:
            sub = table[table.figure == fig].reset_index(drop=True)
            total = int((grid.figure == fig).sum())
            params = {**grid_parameters(steps, lr, list(seeds), bn_moments), "figure": fig}
            done = "complete" if len(sub) == total else "PARTIAL: an honest subset of the grid"
            results.save(
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
    )
    echo(
        f"{len(grid)} runs x {steps} steps in {res.wall_s:.0f} s wall "
        f"({res.run_steps_per_s:.0f} run-steps/s, {where})"
    )
