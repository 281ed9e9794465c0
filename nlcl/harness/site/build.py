"""The book: execute every chapter of ``_toc.yml`` into a staging tree, write the report, build the site.

:func:`build_book` executes the chapters (in parallel) with :func:`nlcl.harness.run.notebook.run_chapter`,
each into its run folder ``_build/runs/<chapter>/`` with its notebook in ``_build/staging``; it
merges each run's claims into ``_build/claims/<chapter>.json`` and its timing into
``_build/timings.json`` (with ``--only``, the other chapters' results are kept), writes the
reproducibility report (:mod:`nlcl.harness.site.report`) and builds the site with jupyter-book (1.x)
with execution off, so the site shows exactly the outputs that ran. Only the book writes ``_build/``.
The site serves MathJax itself (:mod:`nlcl.harness.site.sphinx_ext`): without the package that ships it,
the build stops before executing anything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from nlcl.core.validate import choice, positive_int
from nlcl.harness.claims.registry import load_records
from nlcl.harness.records import provenance
from nlcl.harness.run.chapter import PROFILES
from nlcl.harness.run.notebook import ChapterNotFound, ChapterResult, chapters, ensure_kernel, run_chapter
from nlcl.harness.site import schedule, sphinx_ext
from nlcl.harness.site.extras import add_site_extras
from nlcl.harness.site.report import from_ledgers, write_report

__all__ = ["build_book"]


def _stage_toc(root: Path, staging: Path, executed: set[str]) -> None:
    """Copy ``_toc.yml`` into the staging tree, keeping only the chapters that have an executed
    notebook and dropping parts left empty (jupyter-book rejects empty chapter lists)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    available = chapters(root)

    def keep(entry: dict) -> bool:
        stem = Path(entry.get("file", "")).name
        return stem not in available or stem in executed

    parts = []
    for part in toc.get("parts") or []:
        part = dict(part)
        part["chapters"] = [c for c in part.get("chapters") or [] if keep(c)]
        if part["chapters"]:
            parts.append(part)
    if "parts" in toc:
        toc["parts"] = parts
    (staging / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))


def _stage_sources(root: Path, staging: Path, keep_notebooks: bool = False) -> None:
    """Copy the book's sources into ``staging``; with ``keep_notebooks`` keep the notebooks that
    earlier runs executed there (``--only``)."""
    if staging.exists() and not keep_notebooks:
        shutil.rmtree(staging)
    staging.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / "_config.yml", staging / "_config.yml")
    shutil.copytree(
        root / "book",
        staging / "book",
        ignore=shutil.ignore_patterns("*.py", "*.ipynb", "__pycache__", ".ipynb_checkpoints"),
        dirs_exist_ok=True,
    )


def _chapter_env(task, jobs: int, n_chapters: int, threads: int) -> dict[str, str]:
    """The kernel environment of one chapter of the book: whether other chapters may run beside it
    (``NLCL_CONCURRENT``: timing claims are then shown, not gated) and, for a chapter given several
    slots, the torch threads of each of its workers (those of one slot, as in one process)."""
    from nlcl.core.cluster import WORKER_THREADS_ENV
    from nlcl.harness.claims.verdicts import CONCURRENT_ENV

    alone = n_chapters == 1 or task.slots >= jobs  # nothing else can hold a slot meanwhile
    env = {CONCURRENT_ENV: "0" if alone else "1"}
    if task.slots > 1:
        env[WORKER_THREADS_ENV] = str(threads)
    return env


def _merge_results(
    build: Path,
    results: dict[str, ChapterResult],
    profile: str,
    full: bool,
    slots: dict[str, int] | None = None,
) -> dict:
    """Write each executed chapter's claims into ``_build/claims`` and merge ``timings.json``
    (with the worker processes each chapter had, which :mod:`nlcl.harness.site.schedule` reads back);
    chapters not executed now keep their earlier files (unless this is a full build)."""
    claims_dir = build / "claims"
    if full and claims_dir.exists():
        shutil.rmtree(claims_dir)
    claims_dir.mkdir(parents=True, exist_ok=True)
    timings_file = build / "timings.json"
    timings = {}
    if not full and timings_file.is_file():
        try:
            timings = json.loads(timings_file.read_text())
        except ValueError:
            timings = {}
    for name, r in results.items():
        (claims_dir / f"{name}.json").write_text(json.dumps(r.claims, indent=2, ensure_ascii=False) + "\n")
        timings[name] = {
            "seconds": round(r.seconds, 2),
            "ok": r.ok,
            "profile": profile,
            "cell": r.cell,
            "workers": (slots or {}).get(name, 1),
        }
    timings_file.write_text(json.dumps(timings, indent=2) + "\n")
    return timings


def _jupyter_book() -> list[str]:
    exe = Path(sys.executable).parent / "jupyter-book"
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    raise FileNotFoundError("jupyter-book is not installed; install nlcl with the [book] extra")


def build_book(
    *,
    profile: str = "ci",
    jobs: int = 1,
    root: Path | None = None,
    only: list[str] | None = None,
    site: bool = True,
    echo=print,
) -> int:
    """Execute every chapter of ``_toc.yml`` into ``_build/staging``, write the reproducibility
    report and build the site into ``_build/html``. Returns 0 on success, 1 if any chapter failed
    (or the site build failed); failures name the chapter and the failing cell.
    """
    from tqdm.auto import tqdm

    choice("profile", profile, PROFILES)
    jobs = positive_int("jobs", jobs)
    root = (root or provenance.repo_root()).resolve()
    build = provenance.build_dir(root)
    staging = build / "staging"
    todo = chapters(root)
    if only:
        unknown = [c for c in only if c not in todo]
        if unknown:
            raise ChapterNotFound(f"unknown chapters {unknown}; available: {', '.join(todo)}")
        todo = {c: p for c, p in todo.items() if c in only}
    if site:  # the site serves MathJax itself: fail now, not after executing every chapter
        try:
            sphinx_ext.mathjax_source()
        except sphinx_ext.MathJaxMissing as exc:
            echo(f"nlcl book: cannot build the site: {exc}")
            return 1
    _stage_sources(root, staging, keep_notebooks=bool(only))
    # Share the cores between the chapters that run at once.
    threads = max(1, (os.cpu_count() or 1) // jobs)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    os.environ["NLCL_COMMIT"] = provenance.git_commit(root)
    echo(
        f"nlcl book: executing {len(todo)} chapters (profile {profile}, {jobs} at a time, {threads} threads each)"
    )
    # Longest chapters first, by the last timing record; a chapter with a parallel loop may get
    # several slots (worker processes), each worker with the threads of one slot (schedule.py);
    # not where CUDA is available: such a loop then runs on the GPU, in the chapter's process.
    costs, sources = schedule.load_costs(list(todo), build, root, profile)
    parallel = {} if schedule.gpu_present() else schedule.parallel_chapters(todo)
    plan = schedule.make_plan(list(todo), costs, jobs, parallel, sources)
    echo(f"nlcl book: {plan.describe()}")
    ensure_kernel()  # once, before the threads: on a machine without it, each installing it raced
    results: dict[str, ChapterResult] = {}
    slots = {t.chapter: t.slots for t in plan.tasks}
    t0 = time.perf_counter()

    def run(task: schedule.Task) -> ChapterResult:
        path = todo[task.chapter]
        return run_chapter(
            path,
            parameters=task.parameters,
            profile=profile,
            output=staging / path.relative_to(root).with_suffix(".ipynb"),
            root=root,
            progress_bar=False,
            run_dir=build / "runs" / task.chapter,
            env=_chapter_env(task, jobs, len(todo), threads),
        )

    with tqdm(total=len(todo), desc="chapters", unit="ch", disable=None) as bar:

        def done(task: schedule.Task, fut) -> None:
            name = task.chapter
            try:
                res = fut.result()
            except Exception as exc:  # parameter errors etc.
                res = ChapterResult(name, Path(), 0.0, False, f"{type(exc).__name__}: {exc}")
            results[name] = res
            mark = "ok  " if res.ok else "FAIL"
            passed = sum(c["status"] == "pass" for c in res.claims)
            workers = f" ({task.slots} workers)" if task.slots > 1 else ""
            bar.write(
                f"  {mark} {name:<32} {res.seconds:6.1f} s  claims: {passed}/{len(res.claims)} pass{workers}"
            )
            bar.update()

        schedule.execute(plan.tasks, jobs, run, done)
    timings = _merge_results(build, results, profile, full=not only, slots=slots)
    every = chapters(root)
    staged = {n for n, p in every.items() if (staging / p.relative_to(root).with_suffix(".ipynb")).is_file()}
    _stage_toc(root, staging, staged | set(todo))
    records = [r for r in load_records(build / "claims") if r.get("chapter") in every]
    records = from_ledgers(records, root)  # statements and revisions as the ledgers declare them
    counts = write_report(
        records,
        {n: t for n, t in timings.items() if n in every},
        root / "book" / "reproducibility.md",
        staging / "book" / "reproducibility.md",
        chapter_order=[n for n in every if n in timings],
    )
    echo(
        f"nlcl book: chapters executed in {time.perf_counter() - t0:.1f} s; claims: "
        f"{counts['pass']} pass, {counts['fail']} fail, {counts['not-reproduced']} not reproduced"
    )
    failed = [r for r in results.values() if not r.ok]
    for r in failed:
        where = f"code cell {r.cell}" if r.cell else "before or outside a cell"
        echo(f"\nnlcl book: chapter {r.chapter!r} FAILED in {where} (notebook: {r.output}):\n{r.error}")
    if failed:
        echo(f"nlcl book: {len(failed)} chapter(s) failed: {', '.join(r.chapter for r in failed)}")
        return 1
    if not site:
        return 0
    add_site_extras(root, staging, todo, records, timings)  # re-run boxes, tidy outputs, dashboard
    cmd = [*_jupyter_book(), "build", str(staging), "--path-output", str(root), "--keep-going"]
    echo("nlcl book: building the site: " + " ".join(cmd))
    proc = subprocess.run(cmd, cwd=root)
    index = root / "_build" / "html" / "index.html"
    if proc.returncode != 0 or not index.is_file():
        echo(f"nlcl book: jupyter-book failed (exit {proc.returncode})")
        return 1
    echo(f"nlcl book: site ready: {index}")
    return 0
