"""Shared fixtures: every test writes generated files into a temporary build directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]
# No per-example deadline: it is a timed assertion (the standards: time with `make bench`, never in
# tests), and it failed on a 0.8 ms example whose first call took 535 ms on a loaded machine (stop 46).
settings.register_profile("nlcl", deadline=None)
settings.load_profile("nlcl")
os.environ.setdefault("NLCL_OFFLINE", "1")
# The suite runs on the portable numeric path (MKL's AVX2 branch, ATen's AVX2 kernels), set before
# torch loads: numbers compared with committed ones are then the same on every x86-64 CPU with AVX2
# (issue 29; nlcl.core.numerics). NLCL_NUMERICS=native, or an explicit MKL_CBWR, takes another path,
# and the tests that compare with committed numbers then use the measured cross-path tolerance.
os.environ.setdefault("NLCL_NUMERICS", "portable")
import nlcl  # noqa: E402,F401  (applies NLCL_NUMERICS)


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


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "numerics: compares numbers computed in this process with committed ones (issue 29); .ci/run's "
        "numerics stage runs these again under other MKL code paths",
    )
