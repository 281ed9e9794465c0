"""The "Re-run this chapter" box and the launch set-up of a published chapter notebook.

At staging time (``nlcl book``), every executed chapter notebook gets

* a collapsed **Re-run this chapter** box right after its parameters: the ``nlcl run`` and
  papermill commands, the parameters table (name, type, default, the ``ci`` and ``full`` sizes,
  help) and download links for the executed ``.ipynb`` and the ``.py`` source;
* a hidden **Colab set-up** cell (tag ``remove-cell``: not shown on the page) that, on Google Colab
  only, clones the repository's ``notebooks`` branch, installs ``nlcl`` and runs from its root;
* the ``python3`` kernelspec, which Binder and Colab know (locally, ``papermill -k nlcl``).

The parameters come from the chapter's ``parameters`` cell (papermill's inspector, through
``chapter_parameters``); the sizes from the ``sizes=`` argument of ``nlcl.start`` in the chapter's
code cells, read with :mod:`ast` (never executed).
"""

from __future__ import annotations

import ast
import html
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from nlcl.harness.run.spec import PROFILES

__all__ = [
    "Expression",
    "chapter_sizes",
    "notebook_code",
    "rerun_markdown",
    "colab_setup_source",
    "prepare_notebook",
    "repository_url",
    "stage_chapter",
]

RERUN_TAG = "nlcl-rerun"
COLAB_TAG = "nlcl-colab-setup"
#: The branch the book workflow pushes the executed notebooks to (the launch buttons' target).
NOTEBOOKS_BRANCH = "notebooks"


@dataclass(frozen=True)
class Expression:
    """A size given by an expression (``list(PAPER_BETAS)``), shown as its source text."""

    text: str

    def __str__(self) -> str:
        return self.text


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return Expression(ast.unparse(node))


def _size_table(node: ast.expr, name: str) -> dict[str, Any]:
    """One profile's sizes: ``dict(a=1, b=2)`` or ``{"a": 1, "b": 2}``."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
    ):
        return {kw.arg: _literal(kw.value) for kw in node.keywords if kw.arg is not None}
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return {k.value: _literal(v) for k, v in zip(node.keys, node.values)}  # type: ignore[union-attr]
    raise ValueError(f"{name}: cannot read a profile's sizes from {ast.unparse(node)!r}")


def _is_start(call: ast.Call) -> bool:
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "start") or (
        isinstance(func, ast.Name) and func.id == "start"
    )


def chapter_sizes(source: str, name: str = "chapter") -> dict[str, dict[str, Any]]:
    """The profile sizes declared by ``nlcl.start(..., sizes={...})`` in a chapter's source.

    Returns ``{"ci": {...}, "full": {...}}``. Values that are not literals (``list(PAPER_PS)``)
    are :class:`Expression` objects holding their source text. ``sizes=NAME`` is resolved through
    a module-level assignment ``NAME = {...}``. A chapter without ``sizes=`` gives ``{}``.
    Raises ``ValueError`` (naming the chapter) if the source does not parse or the sizes are not
    a dictionary of profiles.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{name}: the chapter does not parse as Python: {exc}") from None
    assigned = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _is_start(call)):
            continue
        sizes = next((kw.value for kw in call.keywords if kw.arg == "sizes"), None)
        if sizes is None:
            continue
        if isinstance(sizes, ast.Name):
            if sizes.id not in assigned:
                raise ValueError(f"{name}: sizes={sizes.id} is not assigned at module level")
            sizes = assigned[sizes.id]
        if not (isinstance(sizes, ast.Dict) and all(isinstance(k, ast.Constant) for k in sizes.keys)):
            raise ValueError(f"{name}: sizes= must be a dictionary of profiles, got {ast.unparse(sizes)!r}")
        return {k.value: _size_table(v, name) for k, v in zip(sizes.keys, sizes.values)}  # type: ignore[union-attr]
    return {}


def notebook_code(nb: nbformat.NotebookNode) -> str:
    """The Python source of a notebook's code cells (papermill's injected cell and IPython magics
    left out), for :func:`chapter_sizes`."""
    cells = [
        c.source
        for c in nb.cells
        if c.cell_type == "code" and not ({"injected-parameters", COLAB_TAG} & set(_tags(c)))
    ]
    lines = [
        ("# " + line) if line.lstrip().startswith(("%", "!")) else line
        for line in "\n".join(cells).splitlines()
    ]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    """A value as a markdown table cell (inline code, pipes escaped)."""
    if isinstance(value, Expression):
        text = value.text
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value) if isinstance(value, (list, dict)) else repr(value)
    text = text.replace("|", "\\|").replace("`", "'")
    return f"`{text}`"


def _help(text: str) -> str:
    return html.escape(text or "", quote=False).replace("|", "\\|").replace("\n", " ")


def rerun_markdown(
    chapter: str,
    parameters: Mapping[str, Mapping[str, Any]],
    sizes: Mapping[str, Mapping[str, Any]],
    *,
    source: str = "",
) -> str:
    """The MyST markdown of a chapter's collapsed "Re-run this chapter" box.

    ``parameters`` is ``chapter_parameters``'s result (name → default, type, help); ``sizes`` is
    :func:`chapter_sizes`'s. A parameter whose default is ``None`` takes its size from the profile:
    the table shows the ``ci`` and ``full`` values; other parameters are the same in both
    profiles (shown as "="). ``source`` is the chapter's file (``book/<chapter>.py``), offered for
    download next to the executed notebook.
    """
    if not parameters:
        raise ValueError(f"{chapter}: a chapter must have parameters to build its re-run box")
    source = source or f"book/{chapter}.py"
    example = next(
        (
            n
            for n in parameters
            if n in sizes.get("ci", {}) and not isinstance(sizes["ci"][n], (Expression, list, dict))
        ),
        None,
    )
    custom = f"-p seed 1 -p {example} {sizes['ci'][example]}" if example else "-p seed 1"
    rows = []
    for name, spec in parameters.items():
        sized = all(name in sizes.get(p, {}) for p in PROFILES)
        ci, full = (_cell(sizes["ci"][name]), _cell(sizes["full"][name])) if sized else ("=", "=")
        rows.append(
            f"| `{name}` | {spec.get('type', '')} | {_cell(spec.get('default'))} | {ci} | {full} | {_help(spec.get('help', ''))} |"
        )
    stem = Path(source).name
    return "\n".join(
        [
            ":::{admonition} Re-run this chapter",
            ":class: dropdown nlcl-rerun",
            "",
            "From a clone of the repository after `make setup` (see the README), with the `ci` "
            "sizes of this page, the paper's sizes, or any parameter of the table below:",
            "",
            "```bash",
            f".venv/bin/nlcl run {chapter}",
            f".venv/bin/nlcl run {chapter} --profile full",
            f".venv/bin/nlcl run {chapter} {custom}",
            "```",
            "",
            "The same with papermill, on the chapter's notebook:",
            "",
            "```bash",
            f".venv/bin/jupytext --to notebook --output {chapter}.ipynb {source}",
            f".venv/bin/papermill -k nlcl {chapter}.ipynb {chapter}.out.ipynb -p profile ci {custom}",
            "```",
            "",
            "A parameter left at `None` takes the profile's size (columns `ci` and `full`); "
            '"=" means the same value in both profiles.',
            "",
            "| parameter | type | default | `ci` | `full` | meaning |",
            "| --- | --- | --- | --- | --- | --- |",
            *rows,
            "",
            f'Download: <a class="nlcl-download-ipynb" href="../_sources/{source[:-3]}.ipynb" download>'
            f"{chapter}.ipynb</a> (this page, executed) · "
            f"{{download}}`{stem} <{stem}>` (the chapter's source, a jupytext py:percent file).",
            ":::",
        ]
    )


def colab_setup_source(repository_url: str, branch: str = NOTEBOOKS_BRANCH) -> str:
    """The code of the hidden set-up cell that makes a published notebook run on Google Colab."""
    if not repository_url.startswith(("https://", "http://")):
        raise ValueError(f"repository_url={repository_url!r} must be an http(s) URL of the repository")
    return "\n".join(
        [
            "# On Google Colab only: fetch the book (the executed notebooks' branch), install nlcl from it,",
            "# and run from its root. Elsewhere this cell does nothing.",
            "import os, subprocess, sys",
            'if "google.colab" in sys.modules:',
            '    if not os.path.isdir("/content/nlcl"):',
            f'        subprocess.run(["git", "clone", "--depth", "1", "--branch", {branch!r}, {repository_url!r}, "/content/nlcl"], check=True)',
            '        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "-e", "/content/nlcl"], check=True)',
            '    sys.path.insert(0, "/content/nlcl")',
            '    os.chdir("/content/nlcl")',
        ]
    )


def _tags(cell: Any) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def prepare_notebook(
    notebook: str | Path,
    source: str | Path,
    *,
    parameters: Mapping[str, Mapping[str, Any]],
    repository_url: str | None = None,
    root: str | Path | None = None,
    sizes: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Add the re-run box (and, with ``repository_url``, the Colab set-up cell) to an executed
    chapter notebook, in place; copy the ``.py`` source next to it for the download link.

    Idempotent: cells added by an earlier call are replaced. ``root`` is the repository root, for
    the source's path in the commands (default: the parent of ``source``'s folder, as for
    ``book/<chapter>.py``).
    """
    notebook, source = Path(notebook), Path(source)
    chapter = source.stem
    root = Path(root) if root is not None else source.parent.parent
    nb = nbformat.read(str(notebook), as_version=4)
    box = rerun_markdown(
        chapter,
        parameters,
        sizes if sizes is not None else chapter_sizes(notebook_code(nb), chapter),
        source=source.resolve().relative_to(root.resolve()).as_posix(),
    )
    nb.cells = [c for c in nb.cells if not ({RERUN_TAG, COLAB_TAG} & set(_tags(c)))]
    anchor = next((i for i, c in enumerate(nb.cells) if "injected-parameters" in _tags(c)), None)
    if anchor is None:
        anchor = next((i for i, c in enumerate(nb.cells) if "parameters" in _tags(c)), None)
    if anchor is None:
        raise ValueError(f"{chapter}: the notebook has no parameters cell")
    nb.cells.insert(anchor + 1, nbformat.v4.new_markdown_cell(box, metadata={"tags": [RERUN_TAG]}))
    if repository_url:
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        setup = nbformat.v4.new_code_cell(
            colab_setup_source(repository_url), metadata={"tags": ["remove-cell", COLAB_TAG]}
        )
        nb.cells.insert(first_code, setup)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
    if nb.nbformat_minor < 5:  # cell ids exist from nbformat 4.5 on
        for cell in nb.cells:
            cell.pop("id", None)
    nbformat.write(nb, str(notebook))
    shutil.copyfile(source, notebook.parent / source.name)


def repository_url(root: str | Path) -> str | None:
    """``repository.url`` of the book's ``_config.yml`` (the one value a fork changes), or None."""
    import yaml

    config = yaml.safe_load((Path(root) / "_config.yml").read_text()) or {}
    url = (config.get("repository") or {}).get("url")
    return str(url).rstrip("/") if url else None


def stage_chapter(notebook: str | Path, source: str | Path, root: str | Path) -> None:
    """The staging hook of ``nlcl book``: :func:`prepare_notebook` with the chapter's declared
    parameters and profile sizes (:func:`nlcl.harness.run.spec.read_chapter`, the one declaration)
    and the repository URL of ``_config.yml``."""
    from nlcl.harness.run.spec import read_chapter

    notebook, source = Path(notebook), Path(source)
    declared = read_chapter(source).parameters
    parameters = {n: {"type": p.type, "default": p.default, "help": p.help} for n, p in declared.items()}
    sizes = {prof: {n: p.sizes[prof] for n, p in declared.items() if prof in p.sizes} for prof in PROFILES}
    prepare_notebook(
        notebook, source, parameters=parameters, repository_url=repository_url(root), root=root, sizes=sizes
    )
