"""The chapter pipeline: jupytext text notebook → papermill execution → jupyter-book site.

* :func:`run_chapter` converts a ``book/*.py`` chapter with jupytext's API, checks the requested
  parameters against the chapter's ``parameters`` cell (unknown names and wrong types are errors,
  not papermill warnings), and executes it with papermill's API.
* :func:`build_book` executes every chapter listed in ``_toc.yml`` (in parallel) into a staging tree
  under ``_build/``, writes the reproducibility report, and builds the site with jupyter-book with
  execution off, so the site shows exactly the outputs that ran.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import yaml

from nlcl.core.validate import ParameterError, choice
from nlcl.harness import provenance
from nlcl.harness.chapter import PROFILES

__all__ = [
    "KERNEL_NAME",
    "ChapterNotFound",
    "ChapterResult",
    "toc_files",
    "chapters",
    "resolve_chapter",
    "to_notebook",
    "chapter_parameters",
    "coerce_parameters",
    "ensure_kernel",
    "run_chapter",
]

KERNEL_NAME = "nlcl"
#: Exceptions that mean "bad input": reported as one line, without a traceback.
USER_ERRORS = ("ParameterError", "ChapterNotFound", "ClaimsFailed", "ArtifactMismatch")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_KERNEL_FLAG = "--IPKernelApp.log_level=ERROR"
INJECTED_LABEL = "Show the parameter values this page ran with"


class ChapterNotFound(ParameterError):
    """The requested chapter is not in the book; the message lists the available chapters."""


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
    stem = Path(name).stem if name.endswith(".py") else Path(name).name
    if stem in available:
        return available[stem]
    candidate = Path(name)
    if candidate.suffix == ".py" and candidate.is_file():
        return candidate.resolve()
    listed = "\n  ".join(available) or "(none)"
    raise ChapterNotFound(f"unknown chapter {name!r}; available chapters:\n  {listed}")


def to_notebook(path: Path) -> nbformat.NotebookNode:
    """Read a jupytext text chapter (or an ``.ipynb``) into a notebook with the nlcl kernelspec."""
    import jupytext

    nb = jupytext.read(str(path))
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3 (nlcl)", "language": "python"}
    nb.metadata.setdefault("language_info", {"name": "python"})
    return nb


def chapter_parameters(nb: nbformat.NotebookNode, name: str = "chapter") -> dict[str, dict[str, Any]]:
    """The chapter's parameters, name → {default, type, help}, read with papermill's inspector.

    Raises if the notebook does not have exactly one cell tagged ``parameters``.
    """
    import papermill as pm

    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(tagged) != 1:
        raise ParameterError(f"{name} must have exactly one cell tagged 'parameters'; found {len(tagged)}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chapter.ipynb"
        nbformat.write(nb, str(path))
        inspected = pm.inspect_notebook(str(path))
    return {
        key: {"default": p["default"], "type": p["inferred_type_name"], "help": p["help"]}
        for key, p in inspected.items()
    }


def _parse_literal(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    lowered = raw.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        return raw


_TYPES = {
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "bool": (bool,),
    "list": (list, tuple),
    "dict": (dict,),
}


def coerce_parameters(
    raw: dict[str, Any], spec: dict[str, dict[str, Any]], chapter: str = "chapter"
) -> dict[str, Any]:
    """Parse command-line values (strings) and check them against the chapter's parameter spec.

    Unknown names fail listing the chapter's parameters with their defaults; a value of the wrong
    type fails naming the expected type. ``None`` is accepted where the default is ``None``.
    """
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in spec:
            listed = "\n  ".join(
                f"{k} ({v['type']}) = {v['default']}" + (f"  # {v['help']}" if v["help"] else "")
                for k, v in spec.items()
            )
            raise ParameterError(f"{chapter} has no parameter {name!r}; its parameters are:\n  {listed}")
        expected = spec[name]["type"]
        parsed = _parse_literal(value)
        if expected == "str" and not isinstance(parsed, str) and isinstance(value, str):
            parsed = value  # e.g. -p name 123 for a str parameter
        if parsed is None and spec[name]["default"] == "None":
            out[name] = None
            continue
        allowed = _TYPES.get(expected)
        if allowed is not None:
            ok = isinstance(parsed, allowed) and not (
                expected in ("int", "float") and isinstance(parsed, bool)
            )
            if not ok:
                raise ParameterError(
                    f"{chapter}: parameter {name}={value!r} has the wrong type; expected {expected} "
                    f"(default {spec[name]['default']})"
                )
            if expected == "float":
                parsed = float(parsed)
            if expected == "list":
                parsed = list(parsed)
        out[name] = parsed
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
    """Outcome of executing one chapter."""

    chapter: str
    output: Path
    seconds: float
    ok: bool
    error: str = ""
    cell: int | None = None
    claims: list[dict[str, Any]] = field(default_factory=list)


def _label_injected_cell(path: Path) -> None:
    """Collapse and label papermill's injected-parameters cell so the page shows what ran."""
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


def run_chapter(
    chapter: str | Path,
    *,
    parameters: dict[str, Any] | None = None,
    profile: str | None = None,
    output: str | Path | None = None,
    root: Path | None = None,
    progress_bar: bool = True,
    log_output: bool = False,
) -> ChapterResult:
    """Execute one chapter with papermill. Parameter errors raise before anything runs.

    Returns a :class:`ChapterResult`; a chapter that raised (including failed required claims)
    gives ``ok=False`` with the failing code cell's number and the error text.
    """
    import papermill as pm

    root = root or provenance.repo_root()
    path = resolve_chapter(str(chapter), root)
    nb = to_notebook(path)
    spec = chapter_parameters(nb, path.stem)
    raw = dict(parameters or {})
    if profile is not None:
        raw["profile"] = choice("profile", profile, PROFILES)
    if "profile" not in spec:
        raise ParameterError(f"{path.stem}: the parameters cell must define 'profile'")
    values = coerce_parameters(raw, spec, path.stem)
    values.setdefault("profile", "ci")
    out = Path(output) if output else provenance.build_dir(root) / "notebooks" / f"{path.stem}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    kernel = ensure_kernel()
    t0 = time.perf_counter()
    ok, error, cell = True, "", None
    try:
        pm.execute_notebook(
            nb,
            str(out),
            parameters=values,
            kernel_name=kernel,
            cwd=str(root),
            progress_bar=progress_bar,
            log_output=log_output,
        )
    except pm.PapermillExecutionError as exc:
        ok, cell = False, _failing_cell(out)
        error = f"{exc.ename}: {exc.evalue}"
        if exc.ename not in USER_ERRORS:  # a user mistake needs one line, a bug its traceback
            error += "\n" + _ANSI.sub("", "\n".join(exc.traceback[-8:]))
    except Exception as exc:  # kernel died, timeout, ...
        ok, error = False, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
    seconds = time.perf_counter() - t0
    if out.is_file():
        _label_injected_cell(out)
    claims_file = provenance.build_dir(root) / "claims" / f"{path.stem}.json"
    claims = json.loads(claims_file.read_text()) if claims_file.is_file() else []
    return ChapterResult(path.stem, out, seconds, ok, error, cell, claims)


# ----------------------------------------------------------------------------------------------
# The book
# ----------------------------------------------------------------------------------------------
