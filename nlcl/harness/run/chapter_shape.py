"""The shape of a chapter that reads like a paper (issue 25): what a repository test enforces.

A chapter whose claims live in a ledger (``book/claims/<chapter>.yaml``) reads top to bottom as
statement → prediction → short code → figure → verdict, with the plumbing collapsed on its page:

- **short cells**: code cells of at most :data:`MAX_CELL_LINES` non-blank lines, median at most
  :data:`MAX_MEDIAN_LINES`;
- **no library code**: no ``def``, ``class`` or ``name = lambda`` in the chapter (what it would define
  belongs in the paper's subpackage, with a test);
- **explicit imports**: every import in one cell right after the ``nlcl.start(...)`` cell
  (``import nlcl`` stays in the start cell), and no attribute access ``nlcl.X`` besides
  ``nlcl.start``, so nothing works only because the harness happened to import it;
- **one way to read the seed**: ``run.seed`` (the seed the run seeded everything with), never the
  bare parameter ``seed``;
- **plumbing collapsed**: the parameters, start and imports cells carry a ``hide-cell`` (or
  ``remove-cell``) tag, and the first cell is the chapter's title and overview (markdown);
- **no line cut off**: code lines of at most :data:`MAX_LINE` characters, the width of the page's
  code column (``book/ruff.toml``).

:func:`shape_problems` lists what a chapter breaks, one line each (empty when it conforms).
"""

from __future__ import annotations

import ast
import statistics
from pathlib import Path
from typing import Any

__all__ = ["MAX_CELL_LINES", "MAX_LINE", "MAX_MEDIAN_LINES", "cell_lengths", "shape_problems"]

MAX_CELL_LINES = 40
MAX_MEDIAN_LINES = 10
MAX_LINE = 88
_HIDE = {"hide-cell", "remove-cell"}


def _code_cells(path: Path) -> tuple[list[Any], list[Any]]:
    from nlcl.harness.run.notebook import to_notebook

    nb = to_notebook(path)
    return nb.cells, [c for c in nb.cells if c.cell_type == "code"]


def cell_lengths(path: str | Path) -> list[int]:
    """Non-blank lines of each code cell of a chapter, in order."""
    return [sum(1 for line in c.source.splitlines() if line.strip()) for c in _code_cells(Path(path))[1]]


def _tags(cell: Any) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def shape_problems(path: str | Path) -> list[str]:
    """What a chapter breaks of the rules above, one message per problem, naming the cell (its
    position among code cells, from 1) and the line; ``[]`` for a chapter that reads like a paper."""
    path = Path(path)
    cells, code = _code_cells(path)
    problems: list[str] = []
    if not cells or cells[0].cell_type != "markdown" or not cells[0].source.lstrip().startswith("# "):
        problems.append("the first cell is the chapter's title and overview (markdown starting '# ')")

    lengths = cell_lengths(path)
    for i, n in enumerate(lengths, 1):
        if n > MAX_CELL_LINES:
            problems.append(f"code cell {i} has {n} lines (at most {MAX_CELL_LINES})")
    if lengths and statistics.median(lengths) > MAX_MEDIAN_LINES:
        problems.append(
            f"median code cell is {statistics.median(lengths):g} lines (at most {MAX_MEDIAN_LINES})"
        )

    start = next((i for i, c in enumerate(code) if "nlcl.start(" in c.source), None)
    if start is None:
        return [*problems, "no nlcl.start(...) cell"]
    params = next((i for i, c in enumerate(code) if "parameters" in _tags(c)), None)
    for name, i in (("parameters", params), ("nlcl.start", start), ("imports", start + 1)):
        if i is not None and i < len(code) and not (_tags(code[i]) & _HIDE):
            problems.append(f"the {name} cell (code cell {i + 1}) is collapsed on the page: tag it hide-cell")

    for i, cell in enumerate(code, 1):
        for k, line in enumerate(cell.source.splitlines(), 1):
            if len(line) > MAX_LINE:
                problems.append(f"code cell {i}, line {k}: {len(line)} characters (at most {MAX_LINE})")
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as exc:
            problems.append(f"code cell {i}: {exc.msg} (line {exc.lineno})")
            continue
        problems += [f"code cell {i}: {p}" for p in _node_problems(tree, i - 1, start, params)]
    return problems


def _node_problems(tree: ast.AST, index: int, start: int, params: int | None) -> list[str]:
    out = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(f"{where}: defines {node.name!r}; move it into the paper's subpackage, with a test")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            out.append(f"{where}: a lambda bound to a name is a function definition; move it into nlcl")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names]
            if index == start and isinstance(node, ast.Import) and names == ["nlcl"]:
                continue
            if index != start + 1:
                out.append(f"{where}: imports {', '.join(names)} outside the imports cell after nlcl.start")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "nlcl" and node.attr != "start":
                out.append(f"{where}: nlcl.{node.attr} without importing it; import it in the imports cell")
        elif isinstance(node, ast.Name) and node.id == "seed" and index != params:
            out.append(f"{where}: read the seed as run.seed, not the bare parameter seed")
    return out
