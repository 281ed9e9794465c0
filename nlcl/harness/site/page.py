"""What a reader reads on a chapter's page: the package code each section shows, and prose that
speaks of the paper and the experiment, not of the project's history. Repository tests apply both
rules to every chapter.

- **The experiment on the page.** Every ``nlcl`` function or class that a chapter's code calls (the
  data, the model, the loss, the update, the measurement and the figure behind its claims) is shown
  on the page, from the package source, by an ``nlcl-source`` directive
  (:mod:`nlcl.harness.site.directives`) in the section that calls it or an earlier one. The harness
  (``nlcl.harness``: running, claims, records) is not an experiment and is not counted.
  :func:`sections` splits a chapter into its ``##`` sections; :func:`missing_sources` lists what a
  chapter calls without showing.
- **No history in the prose.** A chapter's markdown has no dates, commit-like hashes, run ids,
  "stop N", "issue N" or "PR N", and no story of a seed that once revealed a problem: that history
  lives in the ledger's revision log and on the reproducibility page. :func:`history_problems` lists
  each offending line.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Section",
    "sections",
    "called_names",
    "shown_names",
    "missing_sources",
    "HISTORY",
    "history_problems",
]

_DIRECTIVE = re.compile(r"^\s*(?:```+|:::+)\s*\{nlcl-source\}\s*(.*)$", re.M)


@dataclass
class Section:
    """One ``##`` section of a chapter (the part before the first ``##`` is the overview)."""

    title: str
    markdown: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)

    @property
    def claims(self) -> list[str]:
        """The claim ids the section measures (``run.claim("<id>")``)."""
        return re.findall(r"""run\.claim\(\s*["']([^"']+)["']""", "\n".join(self.code))


def _cells(path: Path) -> list[Any]:
    from nlcl.harness.run.notebook import to_notebook

    return to_notebook(Path(path)).cells


def sections(path: str | Path) -> list[Section]:
    """The chapter's sections in order, each with its markdown and code cells."""
    out = [Section("(overview)")]
    for cell in _cells(Path(path)):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    out.append(Section(line[3:].strip()))
                    break
            out[-1].markdown.append(cell.source)
        elif cell.cell_type == "code":
            out[-1].code.append(cell.source)
    return out


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _counted(dotted: str) -> bool:
    return dotted.startswith("nlcl.") and not dotted.startswith("nlcl.harness")


def _imports(tree: ast.AST) -> tuple[dict[str, str], dict[str, str]]:
    """(names → dotted object, aliases → dotted module) of the ``nlcl`` imports of a chapter."""
    names, modules = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nlcl"):
            for a in node.names:
                dotted = f"{node.module}.{a.name}"
                (modules if _is_module(dotted) else names)[a.asname or a.name] = dotted
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("nlcl.") and a.asname:
                    modules[a.asname] = a.name
    return names, modules


def _is_code_object(dotted: str) -> bool:
    from nlcl.harness.site.directives import SourceNotFound, resolve

    try:
        obj = inspect.unwrap(resolve(dotted))
    except SourceNotFound:
        return False
    return inspect.isfunction(obj) or inspect.isclass(obj)


def called_names(source: str, imports: tuple[dict[str, str], dict[str, str]]) -> list[str]:
    """The ``nlcl`` functions and classes (dotted, harness excluded) that ``source`` calls, in order."""
    names, modules = imports
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, dotted = node.func, None
        if isinstance(func, ast.Name) and func.id in names:
            dotted = names[func.id]
        elif (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules
        ):
            dotted = f"{modules[func.value.id]}.{func.attr}"
        if dotted and _counted(dotted) and dotted not in found and _is_code_object(dotted):
            found.append(dotted)
    return found


def shown_names(markdown: str) -> list[str]:
    """The dotted names an ``nlcl-source`` directive of ``markdown`` shows."""
    return [name for args in _DIRECTIVE.findall(markdown) for name in args.split()]


def missing_sources(path: str | Path) -> list[str]:
    """One line per ``nlcl`` function or class the chapter calls in a section without showing it
    there or earlier (empty when every experiment's code is on the page), and per shown name that
    does not resolve."""
    from nlcl.harness.site.directives import SourceNotFound, source_of

    parts = sections(path)
    imports = _imports(ast.parse("\n".join(c for s in parts for c in s.code)))
    shown: set[str] = set()
    problems = []
    for s in parts:
        for md in s.markdown:
            for name in shown_names(md):
                try:
                    source_of(name)
                except SourceNotFound as exc:
                    problems.append(f"{Path(path).stem}: section '{s.title}': {exc}")
                shown.add(name)
        called = called_names("\n".join(s.code), imports) if s.code else []
        problems += [
            f"{Path(path).stem}: section '{s.title}' calls {name} but shows its source neither there nor earlier"
            for name in called
            if name not in shown
        ]
    return problems


#: What counts as the project's history in a chapter's prose: (pattern, what it is).
HISTORY = [
    (re.compile(r"\b(19|20)\d\d-[01]\d(-[0-3]\d)?\b"), "a date"),
    (
        re.compile(
            r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? [0-3]?\d,? (19|20)\d\d\b"
            r"|\b[0-3]?\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* (19|20)\d\d\b"
        ),
        "a date",
    ),
    (re.compile(r"\b\d{8}T\d{6}\b"), "a run id"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"), "a commit-like hash"),
    (re.compile(r"\bstops? #?\d+", re.I), "a 'stop N'"),
    (re.compile(r"\b(issues?|PR|pull request) #?\d+", re.I), "an issue number"),
    (re.compile(r"\bcommit\b", re.I), "a commit"),
    (
        re.compile(
            r"\b(found|revealed|showed|exposed|discovered) (it )?(at|with|on|by) (base )?seeds? \d+", re.I
        ),
        "a story of a seed",
    ),
    (
        re.compile(r"\b(base )?seeds? \d+ (once|first|had|revealed|exposed|failed)\b", re.I),
        "a story of a seed",
    ),
    (
        re.compile(r"\b(was|were) (revised|re-declared|redeclared|tightened|loosened)\b", re.I),
        "a revision story",
    ),
]


def history_problems(path: str | Path) -> list[str]:
    """One line per markdown line of the chapter that carries the project's history (:data:`HISTORY`)."""
    problems = []
    for cell in _cells(Path(path)):
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            for pattern, what in HISTORY:
                m = pattern.search(line)
                if m:
                    problems.append(f"{Path(path).stem}: {what} ({m.group(0)!r}) in: {line.strip()[:120]}")
    return problems
