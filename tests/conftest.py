"""Shared fixtures: every test writes generated files into a temporary build directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("NLCL_OFFLINE", "1")


@pytest.fixture()
def build_dir(tmp_path, monkeypatch):
    """Point NLCL_BUILD_DIR at a temporary folder (claims, provenance, notebooks go there)."""
    path = tmp_path / "_build"
    monkeypatch.setenv("NLCL_BUILD_DIR", str(path))
    return path


@pytest.fixture()
def one_chapter_repo(tmp_path, monkeypatch):
    """A minimal book in the current directory: ``_toc.yml`` and one chapter ``book/ch.py``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NLCL_ROOT", raising=False)
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "ch.py").write_text("# %%\n")
    return tmp_path
