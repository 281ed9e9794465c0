"""Running one chapter: jupytext text notebook → checked parameters → papermill, into a run folder.

:func:`run_chapter` reads the chapter's parameter declaration from its source (:mod:`nlcl.harness.run.spec`,
no kernel), checks the requested values (unknown names, wrong types, values out of range, CUDA where
there is none: :class:`ParameterError` before anything starts), creates a run folder
(:mod:`nlcl.harness.run.runs`) and executes the chapter with papermill's API, injecting the run folder;
the result is read only from that folder. The book (:mod:`nlcl.harness.site.build`) runs every chapter so.
Importing this module is light (no torch, no notebook libraries).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nlcl.core.validate import ParameterError, choice
from nlcl.harness.records import provenance
from nlcl.harness.run import runs
from nlcl.harness.run import spec as _spec
from nlcl.harness.run.spec import PROFILES

__all__ = [
    "KERNEL_NAME",
    "ChapterNotFound",
    "ChapterResult",
    "Interrupted",
    "toc_files",
    "chapters",
    "resolve_chapter",
    "to_notebook",
    "chapter_parameters",
    "coerce_parameters",
    "check_output",
    "ensure_kernel",
    "run_chapter",
]

KERNEL_NAME = "nlcl"
#: Exceptions that mean "bad input": reported as one line, without a traceback.
USER_ERRORS = ("ParameterError", "ChapterNotFound", "ClaimsFailed", "ArtifactMismatch", "NonFiniteError")
#: Of those, the ones that are usage errors (exit 2).
USAGE_ERRORS = ("ParameterError", "ChapterNotFound")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_KERNEL_FLAG = "--IPKernelApp.log_level=ERROR"
INJECTED_LABEL = "Show the parameter values this page ran with"
IOPUB_TIMEOUT_S = 120
#: Seconds a kernel may take to start. papermill's default, 60 s, is exceeded on a loaded machine
#: (a held-out sweep beside other record runs lost a point to "Kernel didn't respond in 60 seconds").
KERNEL_START_TIMEOUT_S = 300


class _KnownParameters(logging.Filter):
    """Drop papermill's "Passed unknown parameter" warnings: nlcl checked the names already."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Passed unknown parameter")


logging.getLogger("papermill").addFilter(_KnownParameters())


class ChapterNotFound(ParameterError):
    """The requested chapter is not in the book; the message lists the available chapters."""


def _kernel_manager_class(log_path: Path, cwd: Path, env: dict[str, str] | None = None):
    """A kernel manager whose kernel starts in ``cwd`` (papermill's ``cwd=`` changes the whole
    process's, which races in ``nlcl book --jobs 2``'s threads), with ``env`` added to its environment
    only, writing its own stderr (e.g. a traceback on Ctrl-C) to ``log_path``, not the terminal."""
    from jupyter_client.manager import AsyncKernelManager

    class _KernelManager(AsyncKernelManager):
        async def start_kernel(self, **kw: Any) -> None:
            kw.setdefault("stderr", open(log_path, "ab"))  # noqa: SIM115 (the kernel holds it)
            kw.setdefault("cwd", str(cwd))
            if env:
                kw["env"] = {**kw.get("env", os.environ), **env}
            await super().start_kernel(**kw)

    return _KernelManager


class Interrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C); its run folder is marked ``interrupted``."""


class _CtrlC:
    """Remembers a SIGINT (then raises KeyboardInterrupt as usual): under load a Ctrl-C can land
    where the kernel client swallows it and the chapter runs on; :func:`run_chapter` checks ``seen`` after
    execution. Main thread only (not in ``nlcl book --jobs N``'s threads)."""

    def __init__(self) -> None:
        self.seen, self._old = False, None
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        self.seen = True
        signal.default_int_handler(signum, frame)

    def restore(self) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None


# ----------------------------------------------------------------------------------------------
# The table of contents and the chapters
# ----------------------------------------------------------------------------------------------


def toc_files(root: Path) -> list[str]:
    """Every ``file:`` entry of ``_toc.yml`` in reading order (root first), without extension."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [toc["root"]]

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for key in ("parts", "chapters", "sections"):
                for child in node.get(key) or []:
                    walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk({k: v for k, v in toc.items() if k in ("parts", "chapters", "sections")})
    return [str(Path(f).with_suffix("")) if Path(f).suffix in (".py", ".md", ".ipynb") else f for f in files]


def chapters(root: Path | None = None) -> dict[str, Path]:
    """The executable chapters (``book/*.py`` files listed in ``_toc.yml``), id → path, in TOC order."""
    root = root or provenance.repo_root()
    out: dict[str, Path] = {}
    for entry in toc_files(root):
        path = root / f"{entry}.py"
        if path.is_file():
            out[path.stem] = path
    return out


def resolve_chapter(name: str, root: Path | None = None) -> Path:
    """A chapter id (``tian-fig8-landscape``), a TOC entry (``book/…``) or a path to a ``.py`` chapter."""
    root = root or provenance.repo_root()
    available = chapters(root)
    candidate = Path(name)
    if candidate.suffix == ".py" and candidate.is_file():
        # an existing file is that file, even when a book chapter has the same name (a modified copy)
        return candidate.resolve()
    stem = candidate.stem if name.endswith(".py") else candidate.name
    if stem in available:
        return available[stem]
    listed = "\n  ".join(available) or "(none)"
    raise ChapterNotFound(f"unknown chapter {name!r}; available chapters:\n  {listed}")


def to_notebook(path: Path) -> Any:
    """Read a jupytext text chapter (or an ``.ipynb``) into a notebook with the nlcl kernelspec."""
    import jupytext

    nb = jupytext.read(str(path))
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3 (nlcl)", "language": "python"}
    nb.metadata.setdefault("language_info", {"name": "python"})
    return nb


def chapter_parameters(path: str | Path) -> dict[str, _spec.Parameter]:
    """The chapter's declared parameters, name → :class:`nlcl.harness.run.spec.Parameter` (from source)."""
    return _spec.read_chapter(path).parameters


def coerce_parameters(
    raw: dict[str, Any], params: dict[str, _spec.Parameter], chapter: str = "chapter"
) -> dict[str, Any]:
    """Parse command-line values (strings) and check them against the chapter's declaration.

    Unknown names fail with a "did you mean" and the chapter's parameters; a wrong type or a value
    out of range fails naming the parameter, the value and what is allowed.
    """
    _spec.check_names(list(raw), params, chapter)
    parsed = {k: _spec.parse_value(params[k], v) for k, v in raw.items()}
    return _spec.check_values(parsed, params, chapter)


def check_output(path: str | Path) -> Path:
    """Make sure the executed notebook can be written at ``path``; one-line error if not."""
    out = Path(path)
    if out.suffix != ".ipynb":
        raise ParameterError(f"-o {str(path)!r}: the executed notebook must end in .ipynb")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        existed = out.exists()
        with open(out, "a"):
            pass
        if not existed:
            out.unlink()
    except OSError as exc:
        raise ParameterError(
            f"-o {str(path)!r}: cannot write the notebook there: {exc.strerror or exc}"
        ) from None
    return out


# ----------------------------------------------------------------------------------------------
# Execution
# ----------------------------------------------------------------------------------------------


def ensure_kernel() -> str:
    """Register (once) a kernelspec named ``nlcl`` that runs this interpreter; return its name.

    papermill needs a registered kernelspec; registering our own avoids picking up a ``python3``
    kernel of another environment.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(KERNEL_NAME)
        if (
            spec.argv
            and Path(spec.argv[0]).resolve() == Path(sys.executable).resolve()
            and _KERNEL_FLAG in spec.argv
        ):
            return KERNEL_NAME
    except NoSuchKernel:
        pass
    from ipykernel.kernelspec import install

    path = Path(install(kernel_name=KERNEL_NAME, display_name="Python 3 (nlcl)", prefix=sys.prefix))
    # Kernels only log errors: a loopback kernel's "running over TCP without encryption" warning
    # would otherwise be printed for every chapter.
    spec_file = path / "kernel.json"
    data = json.loads(spec_file.read_text())
    data["argv"].append(_KERNEL_FLAG)
    spec_file.write_text(json.dumps(data, indent=1))
    return KERNEL_NAME


@dataclass
class ChapterResult:
    """Outcome of executing one chapter (``usage`` marks a usage error found inside the kernel)."""

    chapter: str
    output: Path
    seconds: float
    ok: bool
    error: str = ""
    cell: int | None = None
    claims: list[dict[str, Any]] = field(default_factory=list)
    run_dir: Path | None = None
    usage: bool = False


def _label_injected_cell(path: Path) -> None:
    """Collapse and label papermill's injected-parameters cell so the page shows what ran."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if "injected-parameters" in tags:
            cell.metadata.setdefault("tags", [])
            if "hide-input" not in cell.metadata["tags"]:
                cell.metadata["tags"].append("hide-input")
            cell.metadata["mystnb"] = {
                "code_prompt_show": INJECTED_LABEL,
                "code_prompt_hide": "Hide the parameter values",
            }
            cell.source = (
                "# Parameter values injected by papermill for this run (they override the defaults above)\n"
                + cell.source
            )
    nbformat.write(nb, str(path))


def _failing_cell(path: Path) -> int | None:
    import nbformat

    try:
        nb = nbformat.read(str(path), as_version=4)
    except Exception:  # pragma: no cover - unreadable output
        return None
    code_index = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code_index += 1
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return code_index
    return None


def prepare(
    chapter: str | Path,
    parameters: dict[str, Any] | None = None,
    profile: str | None = None,
    root: Path | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Resolve the chapter and check the parameters (light: no kernel); return (path, values)."""
    root = root or provenance.repo_root()
    path = resolve_chapter(str(chapter), root)
    declared = chapter_parameters(path)
    raw = dict(parameters or {})
    if profile is not None:
        raw["profile"] = choice("profile", profile, PROFILES)
    values = coerce_parameters(raw, declared, path.stem)
    values.setdefault("profile", "ci")
    return path, values


def _read_claims(run_dir: Path, chapter: str) -> list[dict[str, Any]]:
    """The claims of exactly this run: only if the kernel wrote this folder's run record."""
    record = runs.read_run(run_dir)
    if record.get("run_id") != run_dir.name:
        return []
    file = run_dir / "claims" / f"{chapter}.json"
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError):
        return []


def run_chapter(
    chapter: str | Path,
    *,
    parameters: dict[str, Any] | None = None,
    profile: str | None = None,
    output: str | Path | None = None,
    root: Path | None = None,
    progress_bar: bool = True,
    log_output: bool = False,
    run_dir: str | Path | None = None,
    echo=None,
    env: dict[str, str] | None = None,
) -> ChapterResult:
    """Execute one chapter with papermill into its own run folder. Usage errors raise before
    anything runs; Ctrl-C raises :class:`Interrupted` after marking the folder ``interrupted``.

    ``run_dir`` (default: a new folder under ``runs/<chapter>/``) is emptied and receives the run
    record, claims and provenance; the notebook goes to ``output`` (default: ``<run_dir>/notebook.ipynb``).
    Returns a :class:`ChapterResult`; a chapter that raised (including failed required claims)
    gives ``ok=False`` with the failing code cell's number and the error text. ``env``: added to
    the kernel's environment (``nlcl book``: ``NLCL_CONCURRENT``, worker threads)."""
    root = (root or provenance.repo_root()).resolve()
    path, values = prepare(chapter, parameters, profile, root)
    out = check_output(output) if output else None
    if run_dir is None:
        run_dir = runs.new_run_dir(root, path.stem, values)
    else:
        run_dir = Path(run_dir).resolve()
        if run_dir.exists():
            shutil.rmtree(run_dir)
        run_dir.mkdir(parents=True)
    out = out or run_dir / "notebook.ipynb"
    # the source that runs (a modified copy outside book/ included), for the provenance record
    (run_dir / provenance.SOURCE_HASH_FILE).write_text(provenance.source_sha256(path, root) + "\n")
    if echo is not None:
        echo(f"nlcl run: {path.stem}: run folder {run_dir}")
    t0 = time.perf_counter()
    ok, error, cell, usage = True, "", None, False
    log_file = logging.FileHandler(run_dir / "log.txt")
    stream = logging.StreamHandler(sys.stdout)
    pm_logger = logging.getLogger("papermill")
    ctrl_c = _CtrlC()
    try:
        import papermill as pm

        nb = to_notebook(path)
        kernel = ensure_kernel()
        injected = dict(values)
        try:
            injected["nlcl_run_dir"] = str(run_dir.relative_to(root))
        except ValueError:
            injected["nlcl_run_dir"] = str(run_dir)
        # papermill's and nbclient's messages go to the run's log (and, with log_output, to stdout);
        # never to the terminal's stderr through logging's last-resort handler
        pm_logger.addHandler(log_file)
        if log_output:
            stream.setFormatter(logging.Formatter("%(message)s"))
            pm_logger.addHandler(stream)
            pm_logger.setLevel(logging.INFO)
        try:
            pm.execute_notebook(
                nb,
                str(out),
                parameters=injected,
                kernel_name=kernel,
                progress_bar=progress_bar,
                log_output=log_output,
                # papermill fails a cell whose output arrives more than 4 s after it finished;
                # on a loaded machine that happens to healthy cells
                iopub_timeout=IOPUB_TIMEOUT_S,
                start_timeout=KERNEL_START_TIMEOUT_S,
                kernel_manager_class=_kernel_manager_class(run_dir / "kernel.log", root, env),
            )
        except pm.PapermillExecutionError as exc:
            if exc.ename == "KeyboardInterrupt":
                raise KeyboardInterrupt from None
            ok, cell = False, _failing_cell(out)
            usage = exc.ename in USAGE_ERRORS
            error = f"{exc.ename}: {exc.evalue}"
            if exc.ename not in USER_ERRORS:  # a user mistake needs one line, a bug its traceback
                error += "\n" + _ANSI.sub("", "\n".join(exc.traceback[-8:]))
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # kernel died, timeout, ...
            ok, error = False, f"{type(exc).__name__}: {exc}"
        if ctrl_c.seen:  # a Ctrl-C that the kernel machinery swallowed still ends the run
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        # the torn-down kernel leaves asyncio tasks whose "exception was never retrieved" would be
        # printed at exit: the run is over, one line says so
        logging.getLogger("asyncio").setLevel(logging.CRITICAL + 1)
        runs.update_run(run_dir, chapter=path.stem, status="interrupted")
        raise Interrupted(f"{path.stem}: interrupted; partial run folder {run_dir}") from None
    finally:
        ctrl_c.restore()
        pm_logger.removeHandler(log_file)
        pm_logger.removeHandler(stream)
        log_file.close()
    seconds = time.perf_counter() - t0
    if out.is_file():
        _label_injected_cell(out)
    claims = _read_claims(run_dir, path.stem)
    usage = usage and not claims  # a bad value found by the chapter before it measured anything
    record = runs.read_run(run_dir)
    status = "complete" if ok else "failed"
    runs.update_run(
        run_dir,
        chapter=path.stem,
        status=status,
        notebook=str(out),
        seconds=round(seconds, 2),
        error=error or None,
        started_kernel_run=bool(record.get("started")),
    )
    return ChapterResult(path.stem, out, seconds, ok, error, cell, claims, run_dir, usage)


# ----------------------------------------------------------------------------------------------
# The book
# ----------------------------------------------------------------------------------------------
