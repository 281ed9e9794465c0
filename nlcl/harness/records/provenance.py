"""Where things live (repository root, build directory) and what produced a result (provenance).

Provenance is the record every chapter ends with and every results artifact carries: commit,
profile, parameters, device, library versions, the numeric environment (CPU, torch's kernels and
threads, MKL's code path: :mod:`nlcl.core.numerics`), date and wall time.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "repo_root",
    "build_dir",
    "git_commit",
    "library_versions",
    "file_sha256",
    "code_text",
    "ledger_text",
    "source_sha256",
    "chapter_sha256",
    "print_stale",
    "SOURCE_HASH_FILE",
    "collect",
]

_PACKAGE_DIR = Path(__file__).resolve().parent
LIBRARIES = ("nlcl", "numpy", "scipy", "torch", "pandas", "scikit-learn", "matplotlib", "seaborn")


def repo_root(start: str | os.PathLike | None = None) -> Path:
    """The book's root: ``NLCL_ROOT``, else the nearest ancestor of ``start`` (default: the current
    directory) holding ``_toc.yml``, else the parent of the installed package (editable installs).
    """
    env = os.environ.get("NLCL_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "_toc.yml").is_file():
            return candidate
    if (_PACKAGE_DIR.parent / "_toc.yml").is_file():
        return _PACKAGE_DIR.parent
    raise FileNotFoundError(
        f"cannot find the nlcl book (a folder with _toc.yml) above {here}; "
        "run from the repository or set NLCL_ROOT"
    )


def build_dir(root: str | os.PathLike | None = None) -> Path:
    """Where ``nlcl book`` writes: ``NLCL_BUILD_DIR`` (relative to the book's root if relative),
    else ``<root>/_build``. Only the book uses it; ``nlcl run`` writes into run folders."""
    try:
        base = Path(root) if root is not None else repo_root()
    except FileNotFoundError:
        base = Path.cwd()
    env = os.environ.get("NLCL_BUILD_DIR")
    if env:
        return (base / env).resolve() if not Path(env).is_absolute() else Path(env)
    return base / "_build"


def git_commit(root: str | os.PathLike | None = None) -> str:
    """Short commit hash of the book (``+dirty`` if tracked files changed); ``NLCL_COMMIT`` wins.

    Changes under ``results/`` do not count as dirty: a long run rewrites its own artifacts there
    while it saves partial results, and those are outputs, not the code that produced them.
    """
    env = os.environ.get("NLCL_COMMIT")
    if env:
        return env
    try:
        cwd = Path(root) if root is not None else repo_root()
    except FileNotFoundError:
        return "unknown"

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + ("+dirty" if dirty else "")


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str]:
    """Installed versions of the libraries that shape the numbers (and Python's)."""
    import importlib.metadata  # imported here: the command line stays fast

    out = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


#: File in a run folder holding the SHA-256 of the chapter source that ran (written by the runner).
SOURCE_HASH_FILE = "chapter.sha256"


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 (hex) of a file's bytes."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def code_text(path: str | os.PathLike) -> str:
    """The code a chapter runs: the code cells of a jupytext (py:percent) source, each with its
    metadata (tags such as ``parameters``), with every markdown cell and the file header left out.

    Prose is what a reader reads, not what computes a number: editing it must not make the
    chapter's committed records stale, while any change to a code cell (a comment included) does.
    A file that is not a jupytext notebook is returned as it is.
    """
    import jupytext

    path = Path(path)
    text = path.read_text()
    if path.suffix != ".py" or "# %%" not in text:
        return text
    nb = jupytext.reads(text, fmt="py:percent")
    cells = [
        json.dumps(dict(sorted(c.metadata.items())), sort_keys=True) + "\n" + c.source
        for c in nb.cells
        if c.cell_type == "code"
    ]
    return "\n# --- cell ---\n".join(cells)


def ledger_text(path: str | os.PathLike) -> str:
    """A claims ledger as data (canonical JSON of the parsed YAML): its comments, layout and YAML
    anchors do not count, every declared value does."""
    import yaml

    return json.dumps(yaml.safe_load(Path(path).read_text()), sort_keys=True, ensure_ascii=False, default=str)


def source_sha256(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """SHA-256 of what a chapter computes with: its code cells (:func:`code_text`), followed by
    its claims ledger (``book/claims/<stem>.yaml``) as data (:func:`ledger_text`) where it has one,
    so that a change of either makes the chapter's committed records stale, and an edit of the
    prose does not."""
    import hashlib

    path = Path(path)
    try:
        ledger = repo_root(root) / "book" / "claims" / f"{path.stem}.yaml"
    except FileNotFoundError:
        ledger = None
    code = code_text(path)
    if ledger is None or not ledger.is_file():
        return hashlib.sha256(code.encode()).hexdigest()
    return hashlib.sha256((code + "\n--- ledger ---\n" + ledger_text(ledger)).encode()).hexdigest()


def chapter_sha256(chapter: str, root: str | os.PathLike | None = None) -> str | None:
    """SHA-256 of the chapter's source ``book/<chapter>.py`` with its ledger (:func:`source_sha256`;
    None if there is no such file).

    Stored in every run's provenance (from the file the runner executed, see
    :data:`SOURCE_HASH_FILE`), so a committed paper-scale record can tell whether the chapter
    changed since it was run (:func:`nlcl.harness.records.paper_scale.stale_records`).
    """
    path = repo_root(root) / "book" / f"{chapter}.py"
    return source_sha256(path, root) if path.is_file() else None


def print_stale(directory: str | os.PathLike, stale: Mapping[str, str]) -> int:
    """The ``--check`` report of :func:`nlcl.harness.records.sources.stale_sources`: one line per stale record; exit status 1 if any."""
    for chapter, why in sorted(stale.items()):
        print(f"stale: {directory}/{chapter}.json: {why}")
    if not stale:
        print(f"{directory}: every record is current")
    return 1 if stale else 0


def collect(
    *, profile: str, params: dict[str, Any], device: str, commit: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A provenance record: commit, profile, parameters, device, versions, numeric environment
    (``numerics``: :func:`nlcl.core.numerics.environment`, which decides where the numbers are
    bitwise reproducible), date (UTC), extras.

    ``commit`` defaults to :func:`git_commit`; pass it when already known to skip the git call.
    """
    from nlcl.core import numerics

    return {
        "commit": commit if commit is not None else git_commit(),
        "profile": profile,
        "parameters": params,
        "device": device,
        "versions": library_versions(),
        "numerics": numerics.environment(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        **extra,
    }
