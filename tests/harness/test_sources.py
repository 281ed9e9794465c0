"""Records go stale when the nlcl code a chapter computes with changes (issue 26, item 5)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from nlcl.harness.records import provenance, sources


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def book(tmp_path: Path) -> Path:
    """A tiny book: a chapter that imports a module, names another, and uses the harness."""
    root = tmp_path / "book-root"
    write(root, "_toc.yml", "root: intro\n")
    write(root, "nlcl/__init__.py", "")
    write(root, "nlcl/core/__init__.py", "")
    write(root, "nlcl/core/a.py", "from . import b\nfrom .b import twice\n")
    write(root, "nlcl/core/b.py", "def twice(x):\n    return 2 * x\n")
    write(root, "nlcl/core/unused.py", "")
    write(root, "nlcl/paper/__init__.py", "")
    write(root, "nlcl/paper/c.py", "import nlcl.core.b\n")
    write(root, "nlcl/harness/__init__.py", "")
    write(root, "nlcl/harness/claims/registry.py", "from nlcl.core import unused\n")
    write(
        root,
        "book/ch.py",
        """\
        import nlcl
        from nlcl.core import a
        from nlcl.harness.claims.registry import at_least

        def f():
            return nlcl.paper.c.g()
        """,
    )
    return root


def test_chapter_modules_follow_imports_and_names_but_not_the_harness(tmp_path):
    root = book(tmp_path)
    assert sources.chapter_modules("ch", root) == [
        "nlcl.core",
        "nlcl.core.a",
        "nlcl.core.b",
        "nlcl.paper",
        "nlcl.paper.c",
    ]
    assert [str(p) for p in sources.module_files("ch", root)] == [
        "nlcl/core/__init__.py",
        "nlcl/core/a.py",
        "nlcl/core/b.py",
        "nlcl/paper/__init__.py",
        "nlcl/paper/c.py",
    ]


def test_a_record_goes_stale_when_an_imported_module_changes(tmp_path):
    root = book(tmp_path)
    record = {
        "commit": "abc",
        "chapter_sha256": provenance.chapter_sha256("ch", root),
        "modules_sha256": sources.modules_sha256("ch", root),
    }
    assert sources.stale_sources({"ch": record}, root) == {}
    write(root, "nlcl/harness/claims/registry.py", "# the harness changed: not the chapter's computation\n")
    write(root, "nlcl/core/unused.py", "X = 1\n")
    assert sources.stale_sources({"ch": record}, root) == {}
    write(root, "nlcl/core/b.py", "def twice(x):\n    return x + x\n")  # imported through nlcl.core.a
    assert sources.stale_sources({"ch": record}, root, since="the run") == {
        "ch": "nlcl code the chapter imports changed since the run (commit abc)"
    }


def test_records_without_a_module_hash_are_compared_with_git(tmp_path):
    root = book(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=root, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    record = {"commit": commit, "chapter_sha256": provenance.chapter_sha256("ch", root)}
    assert sources.stale_sources({"ch": record}, root) == {}
    write(root, "nlcl/paper/c.py", "import nlcl.core.b\nY = 2\n")
    assert "git diff of its modules" in sources.stale_sources({"ch": record}, root)["ch"]
    assert sources.changed_since(commit, [Path("nlcl/paper/c.py")], root) is True
    assert sources.changed_since(commit, [Path("nlcl/core/b.py")], root) is False
    unknown = {**record, "commit": "0" * 40}
    assert "git cannot compare" in sources.stale_sources({"ch": unknown}, root)["ch"]


def test_the_real_chapters_compute_with_their_paper_subpackage():
    modules = sources.chapter_modules("tian-fig8-landscape")
    assert "nlcl.tian.landscape" in modules and not any(m.startswith("nlcl.harness") for m in modules)
    assert sources.modules_sha256("no-such-chapter", missing_ok=True) is None
