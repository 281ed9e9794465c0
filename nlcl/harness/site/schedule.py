"""Which chapter ``nlcl book`` starts when, and how many cores a chapter with a parallel loop gets.

``nlcl book --jobs N`` has N *slots*. :func:`make_plan` orders the chapters **longest first** by
the **last timing record** (:func:`load_costs`), then **swaps pairs** of them while the simulation
(:func:`simulate`) predicts an earlier end (:func:`_improve`: longest first can leave a slot idle at
the end while a long chapter finishes alone; a swap that gives both slots the same work removes
that). The costs come, in this order of preference, chapter by chapter, from:

1. the previous build's ``_build/timings.json`` (entries of the same profile that finished);
2. the committed benchmark of the profile, ``results/book-<profile>-bench-cpu.json`` (its
   ``chapters``: seconds per chapter);
3. nothing: such chapters start first, in the order of ``_toc.yml`` (an unknown cost is taken to be
   long, so that it cannot be the one left running alone at the end).

A chapter that declares an integer parameter ``workers`` (:data:`PARALLEL_PARAMETER`; the token grid
of ``tian-tokens`` trains on that many Dask processes) can use more than one slot. For each such
chapter with a known cost the plan tries 1 … N slots (up to the parameter's declared maximum),
simulates each schedule (:func:`simulate`: a chapter on k slots takes its one-slot time /
(k · :data:`PARALLEL_EFFICIENCY`)), and keeps the one predicted to finish first (ties: fewer
slots). A chapter on k > 1 slots starts first and holds its k slots until it ends: while it runs,
the other N − k slots run the other chapters. The plan depends only on the timing record, N and the
chapters, never on how the run goes.

**Numbers do not depend on the plan.** The chapter is run with ``-p workers k``, each Dask worker
with the torch threads the chapter has in one process (``NLCL_WORKER_THREADS``, see
:func:`nlcl.tian.tokens.grid.worker_threads`): a stack of the token grid trains with the same
number of threads in a worker as in one process, and its numbers are then bitwise the same
(``tests/tian/tokens/test_training.py``). Every chapter's kernel is told whether other chapters may
run beside it (``NLCL_CONCURRENT``): timing claims are then shown, not gated
(:mod:`nlcl.harness.claims.verdicts`).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError, positive_int
from nlcl.harness.records.run_time import bench_record_path

__all__ = [
    "PARALLEL_EFFICIENCY",
    "PARALLEL_PARAMETER",
    "Plan",
    "Task",
    "execute",
    "gpu_present",
    "load_costs",
    "make_plan",
    "one_slot_seconds",
    "parallel_chapters",
    "simulate",
]

#: The chapter parameter that sets the worker processes of a chapter's parallel inner loop.
PARALLEL_PARAMETER = "workers"
#: Speed-up per extra worker of such a loop, relative to perfect: tian-tokens' full profile took
#: 1,555 s on 1 worker (beside another chapter) and 875 s on 2 (alone): 1555 / (2 · 875) = 0.89
#: (the full-book record of 3c296ca, kept as tests/fixtures/book-full-bench-cpu-3c296ca.json).
PARALLEL_EFFICIENCY = 0.89
#: Most assignments of slots tried (the product over parallel chapters of 1 … N).
MAX_CANDIDATES = 4096


@dataclass(frozen=True)
class Task:
    """One chapter of the plan: the slots it holds (= worker processes of its parallel loop) and
    its predicted seconds on them (``None``: no timing record)."""

    chapter: str
    slots: int = 1
    estimate: float | None = None

    @property
    def parameters(self) -> dict[str, int]:
        """The parameters the book passes: ``workers=k`` for k > 1, else none (the default)."""
        return {PARALLEL_PARAMETER: self.slots} if self.slots > 1 else {}


@dataclass
class Plan:
    """The chapters in the order they are started, where the costs came from and the predicted
    wall time of the chapters (``None`` when no chapter has a timing record)."""

    tasks: list[Task]
    jobs: int
    sources: dict[str, str] = field(default_factory=dict)
    makespan: float | None = None
    alternatives: dict[tuple[int, ...], float] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the build log."""
        known = sorted({s for s in self.sources.values()})
        how = (
            "longest first by " + " and ".join(known)
            if known
            else "no timing record: table-of-contents order"
        )
        parts = [f"{t.chapter}" + (f" ({t.slots} workers)" if t.slots > 1 else "") for t in self.tasks]
        text = f"order ({how}): " + ", ".join(parts)
        if self.makespan is not None:
            text += f"; predicted {self.makespan:.0f} s of chapters"
        return text


def one_slot_seconds(entry: Mapping[str, Any]) -> float | None:
    """A timing entry's time on one slot: ``seconds`` (for an entry run with ``workers`` = k > 1,
    ``seconds · k · PARALLEL_EFFICIENCY``); ``None`` if not a positive finite number."""
    seconds = entry.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        return None
    if seconds <= 0:
        return None
    workers = entry.get("workers", 1)
    k = workers if isinstance(workers, int) and not isinstance(workers, bool) and workers > 1 else 1
    return float(seconds) * (k * PARALLEL_EFFICIENCY if k > 1 else 1.0)


def load_costs(
    chapters: Sequence[str], build: Path, root: Path, profile: str
) -> tuple[dict[str, float], dict[str, str]]:
    """Each chapter's last known time on one slot (seconds) and where it comes from: the previous
    build's ``timings.json`` (same profile, finished), else ``results/book-<profile>-bench-cpu.json``.
    Chapters with neither are absent. Unreadable files count as absent."""
    costs: dict[str, float] = {}
    sources: dict[str, str] = {}

    def read(path: Path) -> Any:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None

    timings = read(Path(build) / "timings.json")
    if isinstance(timings, dict):
        for name in chapters:
            entry = timings.get(name)
            if isinstance(entry, dict) and entry.get("profile") == profile and entry.get("ok"):
                seconds = one_slot_seconds(entry)
                if seconds is not None:
                    costs[name], sources[name] = seconds, "_build/timings.json"
    bench_name = bench_record_path(profile, cuda=False).as_posix()
    bench = read(Path(root) / bench_name)
    per_chapter = bench.get("chapters") if isinstance(bench, dict) else None
    if isinstance(per_chapter, dict):
        for name in chapters:
            if name not in costs:
                seconds = one_slot_seconds({"seconds": per_chapter.get(name)})
                if seconds is not None:
                    costs[name], sources[name] = seconds, bench_name
    return costs, sources


def gpu_present() -> bool:
    """Whether the chapters' ``device="auto"`` resolves to CUDA here. Then no chapter gets more than
    one slot: a parallel inner loop runs on CPU processes (the token grid refuses ``workers`` > 1
    on a GPU), and on a GPU it runs in the chapter's own process. Decided as the chapters decide
    it (:func:`nlcl.core.device.get_device`, so ``NLCL_DEVICE`` counts); a bad ``NLCL_DEVICE`` is
    left for each chapter to report."""
    from nlcl.core.validate import cuda_unavailable

    if cuda_unavailable() is not None:  # answers without importing torch
        return False
    from nlcl.core.device import get_device

    try:
        return get_device("auto").type == "cuda"
    except ParameterError:
        return False


def parallel_chapters(paths: Mapping[str, Path]) -> dict[str, int]:
    """The chapters with a parallel inner loop: chapter → the most workers it accepts (the upper
    bound of its ``workers`` parameter's range, else unbounded). Read from the source, no kernel."""
    from nlcl.harness.run.notebook import chapter_parameters

    out: dict[str, int] = {}
    for name, path in paths.items():
        try:
            param = chapter_parameters(path).get(PARALLEL_PARAMETER)
        except (OSError, SyntaxError, ValueError):  # a chapter whose declaration is broken runs as it is
            continue
        if param is None or param.type != "int":
            continue
        high = (param.range or [None, None])[-1]
        out[name] = int(high) if isinstance(high, int) and not isinstance(high, bool) else 1 << 30
    return out


def _duration(cost: float, slots: int) -> float:
    return cost if slots == 1 else cost / (slots * PARALLEL_EFFICIENCY)


def simulate(tasks: Sequence[Task], jobs: int) -> float:
    """Predicted wall time of running ``tasks`` as :func:`execute` does: in order, each when its
    slots are free, for ``estimate`` seconds (``None`` counts as 0)."""
    jobs = positive_int("jobs", jobs)
    running: list[tuple[float, int]] = []  # (end time, slots)
    now, free, end = 0.0, jobs, 0.0
    for t in tasks:
        if t.slots > jobs:
            raise ParameterError(f"{t.chapter}: {t.slots} slots of {jobs}")
        while free < t.slots:
            running.sort()
            now, slots = running.pop(0)
            free += slots
        finish = now + (t.estimate or 0.0)
        running.append((finish, t.slots))
        free -= t.slots
        end = max(end, finish)
    return end


def _order(
    chapters: Sequence[str], costs: Mapping[str, float], slots: Mapping[str, int], fill: float
) -> list[Task]:
    """Chapters on several slots first (longest first), then those without a timing record (in
    table-of-contents order), then the rest longest first (ties: table-of-contents order)."""
    toc = {c: i for i, c in enumerate(chapters)}
    tasks = [
        Task(c, slots.get(c, 1), _duration(costs[c], slots.get(c, 1)) if c in costs else None)
        for c in chapters
    ]

    def key(t: Task) -> tuple:
        if t.slots > 1:
            return (0, -(t.estimate or fill), toc[t.chapter])
        if t.estimate is None:
            return (1, 0.0, toc[t.chapter])
        return (2, -t.estimate, toc[t.chapter])

    return sorted(tasks, key=key)


def _makespan(tasks: Sequence[Task], jobs: int, fill: float) -> float:
    """:func:`simulate` of ``tasks``, a chapter without a timing record taken to last ``fill``."""
    return simulate([Task(t.chapter, t.slots, t.estimate or fill) for t in tasks], jobs)


def _improve(tasks: list[Task], jobs: int, fill: float) -> list[Task]:
    """``tasks`` reordered by pairwise swaps of the one-slot chapters with a timing record, each swap
    kept only if :func:`simulate` predicts an earlier end (by more than a millisecond), until no swap
    does; the chapters on several slots, those without a record and the ``jobs`` longest keep their
    places (they start first). Deterministic: swaps are tried from the end of the order (where
    longest first leaves its idle slot), the first improvement is taken."""
    tasks = list(tasks)
    longest = sorted(tasks, key=lambda t: -(t.estimate or 0.0))[:jobs]  # they start at once
    fixed = {id(t) for t in longest}
    movable = [
        i for i, t in enumerate(tasks) if t.slots == 1 and t.estimate is not None and id(t) not in fixed
    ]
    best = _makespan(tasks, jobs, fill)
    # each kept swap lowers the makespan, so the loop ends; the bound is never reached in practice
    for _ in range(len(movable) ** 2):
        # the tail first: the long chapters stay first
        for j, i in itertools.combinations(movable[::-1], 2):
            if tasks[i].estimate == tasks[j].estimate:
                continue
            tasks[i], tasks[j] = tasks[j], tasks[i]
            trial = _makespan(tasks, jobs, fill)
            if trial < best - 1e-3:
                best = trial
                break
            tasks[i], tasks[j] = tasks[j], tasks[i]
        else:
            break
    return tasks


def make_plan(
    chapters: Sequence[str],
    costs: Mapping[str, float],
    jobs: int,
    parallel: Mapping[str, int] | None = None,
    sources: Mapping[str, str] | None = None,
) -> Plan:
    """The plan for ``chapters`` (in table-of-contents order) on ``jobs`` slots: see the module
    docstring. ``costs``: one-slot seconds per chapter (:func:`load_costs`); ``parallel``: chapter →
    the most workers it accepts (:func:`parallel_chapters`)."""
    jobs = positive_int("jobs", jobs)
    chapters = list(chapters)
    known = [costs[c] for c in chapters if c in costs]
    fill = statistics.median(known) if known else 0.0  # an unknown chapter, in the simulation
    elastic = [c for c in chapters if c in (parallel or {}) and c in costs]
    choices = [range(1, min(jobs, max(1, (parallel or {})[c])) + 1) for c in elastic]
    best: tuple[tuple[float, int, tuple[int, ...]], list[Task], float] | None = None
    alternatives: dict[tuple[int, ...], float] = {}
    for ks in itertools.islice(itertools.product(*choices), MAX_CANDIDATES):
        tasks = _improve(_order(chapters, costs, dict(zip(elastic, ks, strict=True)), fill), jobs, fill)
        predicted = _makespan(tasks, jobs, fill)
        alternatives[ks] = predicted
        candidate = (round(predicted, 6), sum(ks), ks)
        if best is None or candidate < best[0]:
            best = (candidate, tasks, predicted)
    assert best is not None  # product() yields at least one candidate, () when nothing is elastic
    _, tasks, predicted = best
    used = {c: s for c, s in (sources or {}).items() if c in costs and c in chapters}
    makespan = predicted if known else None
    return Plan(tasks, jobs, used, makespan, alternatives if len(alternatives) > 1 else {})


def execute(
    tasks: Sequence[Task],
    jobs: int,
    run: Callable[[Task], Any],
    done: Callable[[Task, Future], None],
) -> None:
    """Run ``tasks`` on ``jobs`` slots, in order: each starts when the slots it holds are free
    (a later chapter never overtakes an earlier one, so the order is the plan's), in a thread
    calling ``run(task)``; ``done(task, future)`` is called in this thread as each ends."""
    jobs = positive_int("jobs", jobs)
    for t in tasks:
        if not 1 <= t.slots <= jobs:
            raise ParameterError(f"{t.chapter}: slots={t.slots} must be between 1 and jobs={jobs}")
    pending = list(tasks)
    running: dict[Future, Task] = {}
    free = jobs
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            while pending and pending[0].slots <= free:
                task = pending.pop(0)
                free -= task.slots
                running[pool.submit(run, task)] = task
            finished, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in [f for f in running if f in finished]:  # in the order they were started
                task = running.pop(fut)
                free += task.slots
                done(task, fut)
