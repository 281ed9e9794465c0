"""Every chapter safe at the edges of its declared parameters.

A chapter declares what each parameter allows (:mod:`nlcl.harness.run.spec`). A reader who runs
``nlcl run CHAPTER -p name value`` with a value inside that declaration should get either a run, or
a stop with exit 1 and one sentence that names the parameter and what went wrong (the training
diverged, no run reached stage 2, ...), never a library's traceback. This module checks that, one
parameter at a time, at small sizes:

* :func:`edge_cases` lists the cases of one chapter: first the small sizes alone (which must run
  to the end, so that each case reaches the code its parameter feeds), then each parameter at each end of what it allows
  (both ends of a range; every other choice; the other value of a bool; for a list, its shortest
  length with every item at the low end, then at the high end of the items' range), the others at
  the chapter's small sizes from ``book/edges.yaml``. A *size* (a parameter with ``ci``/``full``
  sizes: a count of steps, samples or seeds) is taken at its low end only: its high end only costs
  time. Parameters whose range names a moved one are moved into their new range, in turn.
* :func:`run_case` executes the chapter's code cells in this process, as papermill would (the
  parameters cell, then the case's values, then the rest) in a fresh namespace, with a time limit.
* :func:`classify` sorts the outcome: ``ran`` (to the end, whatever its claims say), ``stopped``
  (an error a user can act on: :data:`~nlcl.harness.run.notebook.USER_ERRORS`, whose sentence names
  the parameter unless it is a failed claim), ``unclear`` (a user error whose sentence does not name
  the parameter), ``crashed`` (any other exception: the traceback a reader would see) or
  ``timeout``.
* :func:`check_chapters` runs every case of the given chapters, one chapter per worker process
  (``dask.distributed``), and returns the outcomes; ``python -m nlcl.harness.run.edges`` prints them.

Cases run in-process rather than through papermill to keep the check to minutes: a kernel start
per case would cost more than most cases. The errors are the same exceptions the kernel raises, and
:func:`classify` applies the same rule as ``nlcl run`` (:func:`~nlcl.harness.run.notebook.run_chapter`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "EDGES_FILE",
    "EdgeCase",
    "Outcome",
    "load_sizes",
    "load_known",
    "load_not_gated",
    "edge_cases",
    "run_case",
    "classify",
    "check_chapter",
    "check_chapters",
    "main",
]

#: The small sizes each chapter's edge cases run at (relative to the repository root).
EDGES_FILE = "book/edges.yaml"
#: Seconds one case may take at small sizes before it counts as ``timeout``.
CASE_TIMEOUT_S = 300
#: Seconds all the cases of one chapter may take (its process group is then killed).
CHAPTER_TIMEOUT_S = 1200
#: Parameters every chapter has that are not checked here: ``profile`` is fixed to ``ci``;
#: ``device`` depends on the machine (``cuda`` without a GPU is a usage error, tested elsewhere).
SKIPPED = ("profile", "device")
#: Values whose outcome depends on the network, not on the chapter: the full MNIST is a download
#: (offline, as in CI, the loader stops and says so; ``tests/datasets/test_mnist.py`` tests that).
#: These cases are not run.
NETWORK = {("source", "full"), ("mnist_source", "full")}
#: The first case of every chapter: the small sizes alone (it must run to the end).
BASELINE = "(small sizes)"
#: Parameters that size the machine's share, not the experiment: like a size, only their low end is
#: tried (the high end of ``workers`` starts that many processes on whatever machine runs the check).
RESOURCES = ("workers",)
#: Outcomes that pass.
SAFE = ("ran", "stopped")


@dataclass
class EdgeCase:
    """One run: ``parameter`` at ``end`` (``low``, ``high``, ``choice``, ``other``) with ``value``;
    ``values`` are all the parameters the run gets (the small sizes, the case, dependents moved)."""

    chapter: str
    parameter: str
    end: str
    value: Any
    values: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # the chapter's file (a chapter outside the book, e.g. a test fixture)

    @property
    def key(self) -> str:
        """``parameter=value``, as :data:`EDGES_FILE`'s ``known-unsafe`` entry names a case."""
        return f"{self.parameter}={self.value!r}"

    @property
    def label(self) -> str:
        return f"{self.chapter}: {self.key} ({self.end})"


@dataclass
class Outcome:
    """What one :class:`EdgeCase` did: ``kind`` (see :func:`classify`), the error's class and text
    (one line for a user error, the traceback otherwise), the code cell (1-based) and seconds."""

    case: EdgeCase
    kind: str
    error: str = ""
    ename: str = ""
    cell: int | None = None
    seconds: float = 0.0

    @property
    def safe(self) -> bool:
        return self.kind in SAFE

    def line(self) -> str:
        where = f" in code cell {self.cell}" if self.cell else ""
        text = self.error.strip().splitlines()[0] if self.error and self.kind != "crashed" else self.error
        return f"{self.kind:<8} {self.case.label} [{self.seconds:.1f} s]" + (
            f"{where}: {text}" if text else ""
        )


#: A known-unsafe case whose reason starts with this only runs out of time: it is not run again.
SLOW_PREFIX = "slow:"
#: The key of ``book/edges.yaml`` that lists the cases known not to be safe yet (not a chapter).
KNOWN_KEY = "known-unsafe"


def _read_edges_file(root: Path | None) -> dict[str, Any]:
    import yaml

    from nlcl.harness.records.provenance import repo_root

    data = yaml.safe_load((repo_root(root) / EDGES_FILE).read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{EDGES_FILE}: expected a mapping chapter -> {{parameter: value}}")
    return data


def load_sizes(root: Path | None = None) -> dict[str, dict[str, Any]]:
    """chapter → its small sizes, from :data:`EDGES_FILE` (every chapter must have an entry)."""
    data = _read_edges_file(root)
    return {str(k): dict(v or {}) for k, v in data.items() if k not in (KNOWN_KEY, NOT_GATED_KEY)}


#: The key of ``book/edges.yaml`` that lists chapters the gate does not check yet, with why.
NOT_GATED_KEY = "not-gated"


def load_not_gated(root: Path | None = None) -> dict[str, str]:
    """chapter → why the gate test does not check its edges yet (:data:`EDGES_FILE`'s ``not-gated``)."""
    return {str(k): str(v) for k, v in (_read_edges_file(root).get(NOT_GATED_KEY) or {}).items()}


def load_known(root: Path | None = None) -> dict[str, dict[str, str]]:
    """chapter → {case label (``parameter=value``) → why it is not safe yet}: the cases of
    :data:`EDGES_FILE`'s ``known-unsafe`` entry, which the gate expects to fail, and only those."""
    data = _read_edges_file(root).get(KNOWN_KEY) or {}
    return {str(ch): {str(k): str(v) for k, v in (cases or {}).items()} for ch, cases in data.items()}


def _names_in(bounds: Any) -> set[str]:
    return {b for b in (bounds or []) if isinstance(b, str)}


def _bound(b: Any, resolved: Mapping[str, Any]) -> Any:
    return resolved[b] if isinstance(b, str) else b


def _ends(p: Any, resolved: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(end, value) pairs of one parameter, at the resolved values of the others."""
    size = bool(p.sizes) or p.name in RESOURCES
    if p.type == "bool":
        return [("other", not bool(resolved[p.name]))]
    if p.choices:
        return [("choice", c) for c in p.choices if c != resolved[p.name]]
    if p.type in ("int", "float") and p.range:
        lo, hi = (_bound(b, resolved) for b in p.range)
        out = [] if lo is None else [("low", lo)]
        if hi is not None and not size:
            out.append(("high", hi))
        return [(e, float(v) if p.type == "float" else int(v)) for e, v in out]
    if p.type == "list" and p.items:
        n = max(1, (p.length or [1])[0] or 1)
        it = p.items
        if it.get("choices"):
            current = resolved[p.name] or []
            return [("choice", [c]) for c in it["choices"] if [c] != list(current)][:1] + [
                ("all", list(it["choices"])[: (p.length or [None, None])[1] or len(it["choices"])])
            ]
        if it.get("range"):
            lo, hi = (_bound(b, resolved) for b in it["range"])
            cast = float if it.get("type", "float") == "float" else int
            out = [] if lo is None else [("low", [cast(lo)] * n)]
            if hi is not None and not size:
                out.append(("high", [cast(hi)] * n))
            return out
    return []


def _clamp(p: Any, value: Any, resolved: Mapping[str, Any]) -> Any:
    """``value`` moved into ``p``'s range at ``resolved`` (for a parameter whose bound names another)."""

    def clip(v: Any, bounds: Any) -> Any:
        if v is None or not bounds:
            return v
        lo, hi = (_bound(b, resolved) for b in bounds)
        if lo is not None and v < lo:
            v = lo
        if hi is not None and v > hi:
            v = hi
        return v

    if p.type == "list" and p.items and value is not None:
        return [clip(v, p.items.get("range")) for v in value]
    return clip(value, p.range)


def edge_cases(
    chapter: str, sizes: Mapping[str, Any] | None = None, root: Path | None = None
) -> list[EdgeCase]:
    """The cases of ``chapter`` (see the module's docstring), each with all its values."""
    from nlcl.harness.run import notebook, spec

    path = notebook.resolve_chapter(chapter, root or _root())
    declared = notebook.chapter_parameters(path)
    base = {"profile": "ci", **dict(sizes or {})}
    spec.check_values(base, declared, path.stem)
    # the small sizes alone must run to the end, or the cases would stop before what they vary
    cases = [EdgeCase(path.stem, BASELINE, "base", None, dict(base), str(path))]
    for name, p in declared.items():
        if name in SKIPPED:
            continue
        resolved = spec.resolve(base, declared, "ci")
        for end, value in _ends(p, resolved):
            if isinstance(value, str) and (name, value) in NETWORK:
                continue
            values = {**base, name: value}
            for _ in declared:  # parameters whose range names a moved one, until none moves
                res = spec.resolve(values, declared, "ci")
                moved_any = False
                for other, q in declared.items():
                    bounds = (q.range or []) + ((q.items or {}).get("range") or [])
                    if other != name and _names_in(bounds):
                        moved = _clamp(q, res[other], res)
                        if moved != res[other]:
                            values[other], moved_any = moved, True
                if not moved_any:
                    break
            cases.append(EdgeCase(path.stem, name, end, value, values, str(path)))
    return cases


def _root() -> Path:
    from nlcl.harness.records.provenance import repo_root

    return repo_root()


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def classify(case: EdgeCase, exc: BaseException | None) -> tuple[str, str, str]:
    """(kind, ename, error) of a case that raised ``exc`` (``None``: it ran to the end).

    ``stopped``: a user error (:data:`~nlcl.harness.run.notebook.USER_ERRORS`); its sentence must
    name the parameter (``ClaimsFailed``, a run whose required claims fail, is exempt: it ran).
    ``unclear``: a user error that does not name it. ``crashed``: anything else, with the traceback.
    """
    from nlcl.harness.run.notebook import USER_ERRORS

    if exc is None:
        return "ran", "", ""
    ename = type(exc).__name__
    if isinstance(exc, _Timeout):
        return "timeout", ename, f"more than {CASE_TIMEOUT_S} s at small sizes"
    text = f"{ename}: {exc}"
    if ename in USER_ERRORS:
        if ename == "ClaimsFailed" or case.parameter in str(exc):
            return ("ran" if ename == "ClaimsFailed" else "stopped"), ename, text
        return "unclear", ename, text
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
    return "crashed", ename, tb


def run_case(case: EdgeCase, root: Path | None = None, timeout: int = CASE_TIMEOUT_S) -> Outcome:
    """Execute ``case``'s chapter in a fresh namespace of this process (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlcl.harness.run import notebook

    root = root or _root()
    path = notebook.resolve_chapter(case.source or case.chapter, root)
    nb = notebook.to_notebook(path)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    exc, cell, t0 = None, None, time.perf_counter()
    old = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="nlcl-edge-") as tmp:
        import builtins

        from IPython.display import display

        # a kernel's builtins include display()
        ns: dict[str, Any] = {"__name__": "__main__", "__builtins__": {**vars(builtins), "display": display}}
        sink = io.StringIO()
        try:
            os.chdir(root)
            if timeout:
                signal.alarm(timeout)
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                for i, c in enumerate(cells, start=1):
                    cell = i
                    exec(compile(c.source, f"<{case.chapter} code cell {i}>", "exec"), ns)
                    if "parameters" in c.metadata.get("tags", []):
                        ns.update(case.values)
                        ns["nlcl_run_dir"] = tmp
        except _Timeout as e:
            exc = e
        except Exception as e:  # noqa: BLE001 - every exception is an outcome to classify
            exc = e
        finally:
            if timeout:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, old)
            os.chdir(cwd)
            plt.close("all")
    kind, ename, error = classify(case, exc)
    return Outcome(case, kind, error, ename, cell if exc else None, round(time.perf_counter() - t0, 2))


def check_chapter(
    chapter: str, root: Path | None = None, timeout: int = CASE_TIMEOUT_S, only: Iterable[str] | None = None
) -> list[Outcome]:
    """Every case of ``chapter`` (``only``: these parameters), in this process, in order."""
    root = root or _root()
    sizes = load_sizes(root)
    if chapter not in sizes:
        raise ValueError(f"{EDGES_FILE} has no entry for chapter {chapter!r}; add its small sizes")
    cases = edge_cases(chapter, sizes[chapter], root)
    if only:
        keep = set(only)
        cases = [c for c in cases if c.parameter in keep]
    known = load_known(root).get(chapter, {})
    from tqdm.auto import tqdm

    out = []
    for case in tqdm(cases, desc=f"edges {chapter}", unit="case", disable=not sys.stderr.isatty()):
        why = known.get(case.key, "")
        if why.startswith(SLOW_PREFIX):  # a known case that only runs out of time: not run again
            out.append(Outcome(case, "skipped", why))
        else:
            out.append(run_case(case, root, timeout))
    return out


def _outcome_from(d: dict[str, Any]) -> Outcome:
    case = EdgeCase(**d.pop("case"))
    return Outcome(case, **d)


def _chapter_in_subprocess(chapter: str, root: str, timeout: int) -> list[dict[str, Any]]:
    """One chapter's cases in a fresh Python (no state shared with other chapters), in its own
    process group, killed with everything it started after :data:`CHAPTER_TIMEOUT_S`. The outcomes
    come back in a file: what the chapter's own processes print (a compiler, a worker) may reach
    the child's standard output."""
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    with tempfile.TemporaryDirectory(prefix="nlcl-edges-") as tmp:
        result = Path(tmp) / "outcomes.json"
        cmd = [sys.executable, "-m", "nlcl.harness.run.edges", chapter, "--json", str(result)]
        proc = subprocess.Popen(
            [*cmd, "--timeout", str(timeout)],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        case = asdict(EdgeCase(chapter, "(all)", "", None))
        try:
            out, _ = proc.communicate(timeout=CHAPTER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            text = f"the chapter's cases took more than {CHAPTER_TIMEOUT_S} s in all"
            return [
                {"case": case, "kind": "timeout", "error": text, "ename": "", "cell": None, "seconds": 0.0}
            ]
        try:
            return json.loads(result.read_text())
        except (OSError, ValueError):
            text = f"exit {proc.returncode}, no outcomes; its output ends:\n{(out or '')[-4000:]}"
            return [
                {"case": case, "kind": "crashed", "error": text, "ename": "", "cell": None, "seconds": 0.0}
            ]


def check_chapters(
    chapters: Iterable[str] | None = None,
    workers: int = 2,
    root: Path | None = None,
    timeout: int = CASE_TIMEOUT_S,
) -> list[Outcome]:
    """Every case of ``chapters`` (default: every chapter of the book), one chapter per task on a
    local ``dask.distributed`` cluster of ``workers`` processes, each chapter in its own Python."""
    from dask.distributed import as_completed

    from nlcl.core.cluster import dask_client
    from nlcl.harness.run import notebook

    root = root or _root()
    names = list(chapters) if chapters else list(notebook.chapters(root))
    for name in names:
        notebook.resolve_chapter(name, root)
    out: list[Outcome] = []
    with dask_client(None, min(workers, len(names))) as client:
        futures = [
            client.submit(_chapter_in_subprocess, name, str(root), timeout, key=f"edges-{name}", pure=False)
            for name in names
        ]
        for fut in as_completed(futures):
            out.extend(_outcome_from(d) for d in fut.result())
    order = {n: i for i, n in enumerate(names)}
    return sorted(out, key=lambda o: order.get(o.case.chapter, 0))


def _jsonable(o: Outcome) -> dict[str, Any]:
    d = asdict(o)

    def fix(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return repr(v)
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return fix(d)


def main(argv: list[str] | None = None) -> int:
    """``python -m nlcl.harness.run.edges [CHAPTER ...]``: run the edge cases, print one line per
    case; exit 1 when a case is not safe (``crashed``, ``unclear`` or ``timeout``)."""
    ap = argparse.ArgumentParser(prog="python -m nlcl.harness.run.edges", description=main.__doc__)
    ap.add_argument("chapters", nargs="*", help="chapter ids (default: every chapter)")
    ap.add_argument("--only", nargs="+", metavar="PARAMETER", help="only these parameters (one chapter)")
    ap.add_argument("--workers", type=int, default=2, help="chapters at a time (default 2)")
    ap.add_argument("--timeout", type=int, default=CASE_TIMEOUT_S, help="seconds per case")
    ap.add_argument("--json", metavar="FILE", help="write the outcomes as JSON to FILE")
    args = ap.parse_args(argv)
    if len(args.chapters) == 1 and (args.only or args.json):
        outcomes = check_chapter(args.chapters[0], timeout=args.timeout, only=args.only)
    else:
        outcomes = check_chapters(args.chapters or None, args.workers, timeout=args.timeout)
    for o in outcomes:
        print(o.line())
    bad = [o for o in outcomes if not o.safe]
    print(f"edges: {len(outcomes)} cases, {len(outcomes) - len(bad)} safe, {len(bad)} not safe")
    if args.json:
        Path(args.json).write_text(json.dumps([_jsonable(o) for o in outcomes], indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
