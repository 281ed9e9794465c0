"""``nlcl sweep``: run one chapter over a grid of parameters on a Dask cluster.

The grid is the Cartesian product of the values given per parameter (``-p lr 0.01,0.02 -p seed
0..4``); every point is one ordinary chapter run (:func:`nlcl.harness.run.notebook.run_chapter`) in a
folder of its own, executed as a task on a :mod:`dask.distributed` cluster: a ``LocalCluster``
sized to the machine by default (one single-threaded worker process per core), or any running
scheduler given by address, so the same command runs on a laptop, a workstation or a cluster
started with dask-jobqueue or dask-kubernetes.

Each point is keyed by a hash of what the run reads (the chapter's source, the ``nlcl`` modules it
runs, :func:`nlcl.harness.records.sources.modules_sha256`, and the committed artifacts
``results/<chapter>-*``), the profile and the point's parameters: a sweep that is run again skips
the points already done (their ``point.json`` exists), and a changed chapter, module or artifact
re-runs everything. A failing point is recorded with its error and does not stop
the others. A ``full``-profile point saves the artifacts its chapter writes into a copy of the
results folder of its own (``<point>/results``, ``NLCL_RESULTS_DIR``), never into the committed
``results/``: points running at the same time never read each other's half-written files, and the
sweep leaves the committed artifacts as they were. The sweep writes:

* ``<out>/points/<key>/``: the point's run folder (``run/``: notebook, claims, provenance, log) and
  ``point.json``;
* ``<out>/table.csv``: one row per (point, claim): the parameters, the claim's measured value,
  status and whether it is required (a failed point without claims has one row, status ``error``);
* ``<out>/summary.csv`` and ``<out>/summary.png``: per claim, the number of points, the fraction on
  which it holds, and the mean and spread of its measured value; the figure plots each claim's
  measured value over the swept parameters (seaborn).

This is how a verdict is checked across seeds (``-p seed 0..9``) or across a parameter.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = [
    "SweepResult",
    "parse_values",
    "expand_grid",
    "inputs_sha256",
    "point_key",
    "point_results",
    "run_sweep",
    "summarize_sweep",
]

#: Statuses of a claim that count as "the claim holds" in the sweep summary.
HOLDS = ("pass",)


def parse_values(name: str, spec: str) -> list[Any]:
    """The values of one swept parameter: ``"a,b,c"`` (each a Python literal or a bare string) or an
    inclusive integer range ``"0..9"``.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ParameterError(f"sweep values for {name!r} must be 'v1,v2,...' or 'START..STOP'; got {spec!r}")
    text = spec.strip()
    if ".." in text and "," not in text:
        lo, _, hi = text.partition("..")
        try:
            start, stop = int(lo), int(hi)
        except ValueError:
            raise ParameterError(
                f"sweep range for {name!r} must be two integers 'START..STOP'; got {spec!r}"
            ) from None
        if stop < start:
            raise ParameterError(f"sweep range for {name!r} is empty: {spec!r} (STOP < START)")
        return list(range(start, stop + 1))
    values = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ParameterError(f"sweep values for {name!r} contain an empty item: {spec!r}")
        try:
            values.append(ast.literal_eval(item))
        except (ValueError, SyntaxError):
            values.append(item)
    return values


def expand_grid(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of ``grid`` (name → values), in a deterministic order (last name fastest)."""
    names = list(grid)
    for name in names:
        if len(grid[name]) == 0:
            raise ParameterError(f"sweep parameter {name!r} has no values")
        if len(set(map(repr, grid[name]))) != len(grid[name]):
            raise ParameterError(f"sweep parameter {name!r} repeats a value: {list(grid[name])}")
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def inputs_sha256(chapter: Path, root: Path) -> str:
    """SHA-256 of what a run of ``chapter`` reads: its source, the ``nlcl`` modules it runs and the
    committed artifacts ``results/<chapter>-*`` (a ``ci`` run reads the paper-scale ones)."""
    from nlcl.harness.records import sources

    digest = hashlib.sha256(chapter.read_bytes())
    digest.update(str(sources.modules_sha256(chapter, root, missing_ok=True)).encode())
    for f in sorted((root / "results").glob(f"{chapter.stem}-*")):
        if f.is_file():
            digest.update(b"\0" + f.name.encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def point_key(source_hash: str, profile: str, params: Mapping[str, Any]) -> str:
    """A short, stable key of one sweep point: the chapter's source hash, the profile and the parameters."""
    payload = json.dumps(
        {"source": source_hash, "profile": profile, "params": params}, sort_keys=True, default=repr
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass
class SweepResult:
    """The outcome of :func:`run_sweep`."""

    chapter: str
    directory: Path
    points: list[dict[str, Any]]
    skipped: int
    table: Any = field(repr=False)  # pandas.DataFrame: one row per (point, claim)
    summary: Any = field(repr=False)  # pandas.DataFrame: one row per claim
    seconds: float = 0.0

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [p for p in self.points if not p["ok"]]


#: The environment variable that names the results folder (:func:`nlcl.harness.records.results.results_dir`).
RESULTS_ENV = "NLCL_RESULTS_DIR"


def point_results(folder: Path, committed: Path) -> Path:
    """``<folder>/results``: a fresh copy of the ``committed`` results folder (the held-out records
    left out), where a ``full``-profile point saves the artifacts its chapter writes."""
    own = Path(folder) / "results"
    if own.exists():
        shutil.rmtree(own)
    if Path(committed).is_dir():
        shutil.copytree(committed, own, ignore=shutil.ignore_patterns("held-out*"))
    else:
        own.mkdir(parents=True)
    return own


def _run_point(
    chapter: str, params: dict, profile: str, point_dir: str, root: str, concurrent: bool = False
) -> dict[str, Any]:
    """One sweep point, run inside a Dask worker: a chapter run whose files all go to ``point_dir``.
    ``concurrent``: other points run at the same time, so the chapter's timing claims are shown but
    not gated (:mod:`nlcl.harness.claims.verdicts`)."""
    from nlcl.harness.claims.verdicts import CONCURRENT_ENV
    from nlcl.harness.run.notebook import run_chapter

    folder = Path(point_dir)
    folder.mkdir(parents=True, exist_ok=True)
    # Every point has its own build folder (claims, provenance), so points running at the same
    # time on one machine never see each other's files. Workers run one task at a time.
    os.environ["NLCL_BUILD_DIR"] = str(folder)
    os.environ[CONCURRENT_ENV] = "1" if concurrent else "0"
    committed = os.environ.get(RESULTS_ENV)
    t0 = time.perf_counter()
    try:
        if profile == "full":  # a full run saves artifacts: into a copy of its own (module docstring)
            os.environ[RESULTS_ENV] = str(point_results(folder, Path(committed or Path(root) / "results")))
        res = run_chapter(
            chapter,
            parameters=params,
            profile=profile,
            output=folder / "chapter.ipynb",
            root=Path(root),
            progress_bar=False,
        )
        ok, error, claims = res.ok, res.error, res.claims
    except Exception as exc:  # a usage error of this point (bad value): recorded, the sweep goes on
        ok, error, claims = False, f"{type(exc).__name__}: {exc}", []
    finally:
        if committed is None:
            os.environ.pop(RESULTS_ENV, None)
        else:
            os.environ[RESULTS_ENV] = committed
    return {
        "params": params,
        "ok": bool(ok),
        "error": error,
        "seconds": round(time.perf_counter() - t0, 2),
        "claims": claims,
    }


def run_sweep(
    chapter: str | os.PathLike,
    grid: Mapping[str, Sequence[Any]],
    *,
    profile: str = "ci",
    scheduler: str | None = None,
    workers: int | None = None,
    out: str | os.PathLike | None = None,
    root: str | os.PathLike | None = None,
    progress: bool = True,
    echo: Callable[[str], None] = print,
) -> SweepResult:
    """Run ``chapter`` at every point of ``grid`` on a Dask cluster; see the module docstring.

    ``scheduler``: the address of a running Dask scheduler (``tcp://host:8786``); ``None`` starts a
    ``LocalCluster`` of ``workers`` single-threaded processes (default: one per core). ``out``:
    the sweep folder (default ``sweeps/<chapter>/<hash of the grid and profile>``).
    """
    from nlcl.core.validate import choice
    from nlcl.harness.records import provenance
    from nlcl.harness.run import notebook
    from nlcl.harness.run.spec import PROFILES

    choice("profile", profile, PROFILES)
    root = Path(root or provenance.repo_root()).resolve()
    path = notebook.resolve_chapter(str(chapter), root)
    spec = notebook.chapter_parameters(path)
    # Every value is checked against the chapter's parameters before any worker starts.
    points = [notebook.coerce_parameters(p, spec, path.stem) for p in expand_grid(grid)]
    source_hash = inputs_sha256(path, root)
    grid_id = point_key(source_hash, profile, {k: list(map(repr, v)) for k, v in grid.items()})[:10]
    directory = Path(out) if out else root / "sweeps" / path.stem / grid_id
    directory.mkdir(parents=True, exist_ok=True)
    todo, done = [], []
    for params in points:
        key = point_key(source_hash, profile, params)
        record = directory / "points" / key / "point.json"
        if record.is_file():
            done.append(json.loads(record.read_text()))
        else:
            todo.append((key, params))
    echo(
        f"nlcl sweep: {path.stem}: {len(points)} points ({len(done)} already done, {len(todo)} to run), "
        f"profile {profile}; folder {directory}"
    )
    t0 = time.perf_counter()
    # Points that run at the same time share the machine (an external cluster's workers may too).
    concurrent = len(todo) > 1 and (scheduler is not None or (workers or os.cpu_count() or 1) > 1)
    if todo:
        from dask.distributed import as_completed

        from nlcl.core.cluster import dask_client

        if scheduler is None:  # local workers share this kernelspec: register it once, not in each at once
            notebook.ensure_kernel()
        with dask_client(scheduler, workers) as client:
            futures = {
                client.submit(
                    _run_point,
                    str(path),
                    params,
                    profile,
                    str(directory / "points" / key),
                    str(root),
                    concurrent,
                    key=f"nlcl-sweep-{key}",
                    pure=False,
                ): key
                for key, params in todo
            }
            from tqdm.auto import tqdm

            with tqdm(total=len(futures), desc=f"sweep {path.stem}", unit="pt", disable=not progress) as bar:
                for fut in as_completed(futures):
                    key = futures[fut]
                    try:
                        result = fut.result()
                    except Exception as exc:  # the worker itself failed
                        params = dict(todo)[key]
                        result = {
                            "params": params,
                            "ok": False,
                            "error": f"{type(exc).__name__}: {exc}",
                            "seconds": 0.0,
                            "claims": [],
                        }
                    result["key"] = key
                    folder = directory / "points" / key
                    folder.mkdir(parents=True, exist_ok=True)
                    if result["ok"]:  # only finished points are skipped by a resumed sweep
                        (folder / "point.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
                    else:
                        (folder / "failed.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
                        bar.write(f"  point {result['params']} FAILED: {result['error'].splitlines()[0]}")
                    done.append(result)
                    bar.update()
    table = _table(done, list(grid))
    summary = summarize_sweep(table)
    table.to_csv(directory / "table.csv", index=False)
    summary.to_csv(directory / "summary.csv", index=False)
    _plot(table, list(grid), directory / "summary.png")
    res = SweepResult(
        path.stem, directory, done, len(points) - len(todo), table, summary, time.perf_counter() - t0
    )
    echo(
        f"nlcl sweep: {len(done) - len(res.failed)} of {len(done)} points ok in {res.seconds:.1f} s; "
        f"table: {directory / 'table.csv'}; summary: {directory / 'summary.csv'}"
    )
    return res


def _table(points: list[dict[str, Any]], names: list[str]):
    import pandas as pd

    rows = []
    for p in points:
        base = {n: p["params"].get(n) for n in names}
        base.update(point=p.get("key", ""), point_ok=p["ok"])
        if not p["claims"]:
            rows.append({**base, "claim": None, "measured": None, "status": "error", "required": None})
        for c in p["claims"]:
            rows.append(
                {
                    **base,
                    "claim": c["id"],
                    "measured": c["measured"],
                    "status": c["status"],
                    "required": c["required"],
                }
            )
    return pd.DataFrame(
        rows, columns=[*names, "point", "point_ok", "claim", "measured", "status", "required"]
    )


def summarize_sweep(table) -> Any:
    """Per claim: points measured, the fraction on which it holds, mean and standard deviation of the
    measured value (numeric claims only), and how many points failed to measure it."""
    import numpy as np
    import pandas as pd

    rows = []
    for claim, sub in table.dropna(subset=["claim"]).groupby("claim", sort=False):
        values = pd.to_numeric(sub["measured"], errors="coerce")
        numeric = values.dropna()
        rows.append(
            {
                "claim": claim,
                "points": len(sub),
                "holds_fraction": float(sub["status"].isin(HOLDS).mean()),
                "mean": float(numeric.mean()) if len(numeric) else np.nan,
                "std": float(numeric.std(ddof=1)) if len(numeric) > 1 else np.nan,
                "statuses": ", ".join(f"{s} {n}" for s, n in sub["status"].value_counts().items()),
            }
        )
    return pd.DataFrame(rows, columns=["claim", "points", "holds_fraction", "mean", "std", "statuses"])


def _plot(table, names: list[str], destination: Path) -> None:
    """Each numeric claim's measured value over the first swept parameter (the rest as hue)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns

    from nlcl.core import plotting

    plotting.setup()
    data = table.dropna(subset=["claim"]).copy()
    data["measured"] = pd.to_numeric(data["measured"], errors="coerce")
    data = data.dropna(subset=["measured"])
    if data.empty:
        fig, ax = plt.subplots(figsize=(4, 1.5))
        ax.text(0.5, 0.5, "no numeric claim was measured", ha="center", va="center")
        ax.axis("off")
        fig.savefig(destination, dpi=100)
        plt.close(fig)
        return
    x = names[0]
    hue = names[1] if len(names) > 1 else None
    data[x] = data[x].astype(str)
    if hue:
        data[hue] = data[hue].astype(str)
    grid = sns.catplot(
        data=data,
        x=x,
        y="measured",
        hue=hue,
        col="claim",
        col_wrap=min(4, data["claim"].nunique()),
        kind="strip",
        sharey=False,
        height=2.6,
        aspect=1.2,
        dodge=bool(hue),
    )
    grid.set_titles("{col_name}")
    grid.set_axis_labels(x, "measured value")
    grid.figure.savefig(destination, dpi=100, bbox_inches="tight")
    plt.close(grid.figure)
