"""Which ``nlcl`` source a chapter's numbers depend on, so that a record goes stale when it changes.

A committed record (paper-scale, seed sweep) describes a chapter as it was: its source and ledger
(:func:`nlcl.harness.records.provenance.source_sha256`) *and* the package code it computes with. This
module finds that code statically: the ``nlcl`` modules the chapter imports or names
(``nlcl.core.plotting.subplots`` counts), and, transitively, what those modules import, with
their packages' ``__init__``. The harness (``nlcl.harness``, and the top-level ``nlcl`` lazy
loader) is left out: it runs, judges and shows a chapter but computes none of its numbers, and its
rules are pinned by its own tests; counting it would make every record stale at each report
change (or at each move of a harness module). The whole-book benchmark (``nlcl.bench``) is left out
for the same reason: it times the book and computes no chapter's numbers. :func:`modules_sha256` hashes the files found; records carry it as ``modules_sha256``.
"""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["EXCLUDED", "chapter_modules", "module_files", "modules_sha256", "changed_since", "stale_sources"]

#: Module prefixes that do not count as a chapter's computation (see the module docstring).
EXCLUDED = ("nlcl.harness", "nlcl.bench")


def _module_file(name: str, root: Path) -> Path | None:
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _counted(name: str) -> bool:
    return (
        name != "nlcl"
        and name.startswith("nlcl.")
        and not any(name == p or name.startswith(p + ".") for p in EXCLUDED)
    )


def _longest_module(dotted: str, root: Path) -> str | None:
    """The longest prefix of ``a.b.c.d`` that is an ``nlcl`` module or package under ``root``."""
    parts = dotted.split(".")
    for n in range(len(parts), 1, -1):
        name = ".".join(parts[:n])
        if _module_file(name, root) is not None:
            return name
    return None


def _attribute_chain(node: ast.Attribute) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "nlcl":
        return ".".join(["nlcl", *reversed(parts)])
    return None


def _imports(source: str, module: str | None, is_package: bool, root: Path) -> set[str]:
    """The ``nlcl`` modules that ``source`` imports or names (relative imports resolved)."""
    out: set[str] = set()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and module:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, base]) if base else ".".join(pkg)
            names = [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Attribute):
            chain = _attribute_chain(node)
            names = [chain] if chain else []
        else:
            continue
        for name in names:
            found = _longest_module(name, root) if name.startswith("nlcl.") else None
            if found:
                out.add(found)
    return out


def chapter_modules(chapter: str | os.PathLike, root: str | os.PathLike | None = None) -> list[str]:
    """The ``nlcl`` modules (and their packages) whose code the chapter runs, harness excluded.

    ``chapter``: an id (``tian-tokens``: ``book/tian-tokens.py`` under the book's root) or a path.
    """
    from nlcl.harness.records.provenance import repo_root

    root = repo_root(root)
    path = Path(chapter) if str(chapter).endswith(".py") else root / "book" / f"{chapter}.py"
    todo = [n for n in _imports(path.read_text(encoding="utf-8"), None, False, root) if _counted(n)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:n]) for n in range(2, len(parts)) if _counted(".".join(parts[:n]))]
        file = _module_file(name, root)
        if file is None:
            continue
        found = _imports(file.read_text(encoding="utf-8"), name, file.name == "__init__.py", root)
        todo += [n for n in found if _counted(n) and n not in seen]
    return sorted(seen)


def module_files(chapter: str | os.PathLike, root: str | os.PathLike | None = None) -> list[Path]:
    """The files of :func:`chapter_modules`, relative to the book's root."""
    from nlcl.harness.records.provenance import repo_root

    root = repo_root(root)
    files = (_module_file(n, root) for n in chapter_modules(chapter, root))
    return sorted({f.relative_to(root) for f in files if f is not None})


def modules_sha256(
    chapter: str | os.PathLike, root: str | os.PathLike | None = None, *, missing_ok: bool = False
) -> str | None:
    """SHA-256 over the names and bytes of :func:`module_files` (a change to any of them, or a
    module added to or dropped from the set, changes it). ``missing_ok``: ``None`` instead of an
    error when there is no book or no such chapter (a chapter run outside the repository)."""
    from nlcl.harness.records.provenance import repo_root

    try:
        root = repo_root(root)
        module_files(chapter, root)
    except (FileNotFoundError, SyntaxError):
        if missing_ok:
            return None
        raise
    digest = hashlib.sha256()
    for rel in module_files(chapter, root):
        digest.update(str(rel).encode() + b"\0" + (root / rel).read_bytes() + b"\0")
    return digest.hexdigest()


def changed_since(commit: str, files: list[Path], root: str | os.PathLike | None = None) -> bool | None:
    """Whether any of ``files`` differs between ``commit`` and the working tree (git); ``None``
    when git cannot tell (no repository, an unknown commit). For records made before they
    carried :func:`modules_sha256`."""
    from nlcl.harness.records.provenance import repo_root

    root = repo_root(root)
    commit = str(commit or "").removesuffix("+dirty")
    if not commit or not files:
        return None if not commit else False
    try:
        done = subprocess.run(
            ["git", "diff", "--quiet", commit, "--", *map(str, files)],
            cwd=root,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: False, 1: True}.get(done.returncode)


def stale_sources(
    records: Mapping[str, Mapping[str, Any]], root: str | os.PathLike | None = None, *, since: str = "the run"
) -> dict[str, str]:
    """Committed records (chapter → record with ``chapter_sha256`` and ``commit``) that no longer
    describe their chapter: chapter → reason. A record is current when its ``chapter_sha256``
    equals that of today's ``book/<chapter>.py`` (with its ledger) and the ``nlcl`` code the
    chapter computes with is unchanged (:mod:`nlcl.harness.records.sources`): its ``modules_sha256``
    equals today's, or, for a record made before records carried it, git finds no change to those
    files since the record's commit. One without the hash, or of a chapter that no longer exists,
    is stale too. ``since`` names what made the record in the reason ("the run", "the sweep").
    Used by :mod:`nlcl.harness.records.paper_scale` and :mod:`nlcl.harness.records.seed_sweeps`.
    """
    from nlcl.harness.records.provenance import chapter_sha256

    out = {}
    for chapter, rec in records.items():
        now = chapter_sha256(chapter, root)
        then = rec.get("chapter_sha256")
        if now is None:
            out[chapter] = f"book/{chapter}.py no longer exists"
        elif then is None:
            out[chapter] = "the record has no chapter_sha256 (made before sources were hashed)"
        elif then != now:
            out[chapter] = f"book/{chapter}.py changed since {since} (commit {rec.get('commit')})"
        elif rec.get("modules_sha256"):
            if rec["modules_sha256"] != modules_sha256(chapter, root):
                out[chapter] = (
                    f"nlcl code the chapter imports changed since {since} (commit {rec.get('commit')})"
                )
        else:
            files = module_files(chapter, root)
            changed = changed_since(str(rec.get("commit", "")), files, root)
            if changed is None:
                out[chapter] = (
                    f"the record has no modules_sha256 and git cannot compare commit {rec.get('commit')}"
                )
            elif changed:
                out[chapter] = (
                    f"nlcl code the chapter imports changed since {since} (commit {rec.get('commit')}; "
                    "git diff of its modules)"
                )
    return out
