"""Repository-level invariants: layout, TOC ↔ chapters, dependency lists, chapter conventions."""

import importlib
import inspect
import pkgutil
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

import nlcl
from nlcl import pipeline

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.py"))


def test_layout():
    for name in ("book", "nlcl", "tests", "_config.yml", "_toc.yml", "environment.yml", "pyproject.toml",
                 "README.md", "Makefile", ".ci/run", "constraints.txt"):
        assert (ROOT / name).exists(), name


def test_no_tracked_ipynb():
    try:
        files = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert files == [], f"chapters are jupytext .py files; tracked notebooks: {files}"


def test_toc_and_book_files_agree():
    entries = pipeline.toc_files(ROOT)
    for entry in entries:
        assert (ROOT / f"{entry}.py").is_file() or (ROOT / f"{entry}.md").is_file(), f"_toc.yml lists missing {entry}"
    listed = set(entries)
    for path in (ROOT / "book").iterdir():
        if path.suffix in (".py", ".md"):
            assert f"book/{path.stem}" in listed, f"{path.name} is not listed in _toc.yml"
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["only_build_toc_files"] is True
    assert config["execute"]["execute_notebooks"] == "off"
    assert config["sphinx"]["config"]["nb_execution_raise_on_error"] is True


def _requirements(items):
    return {Requirement(r).name.lower(): str(Requirement(r).specifier) for r in items}


def test_pyproject_and_environment_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert _requirements(declared) == _requirements([p for p in pip if not p.startswith("-e")])
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python == "python=3.11"


def test_torch_is_pinned_for_installs():
    assert "torch==2.13.0" in (ROOT / "constraints.txt").read_text()
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()


def test_readme_starts_with_the_two_commands_and_ci_calls_them():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```(?:bash|sh)?\n(.*?)```", readme, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands[:2] == ["make book", "make test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "make book" in ci


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_conventions(path):
    text = path.read_text()
    nb = pipeline.to_notebook(path)
    spec = pipeline.chapter_parameters(nb, path.stem)
    for name in ("profile", "seed", "device"):
        assert name in spec, f"{path.stem}: parameter {name!r} missing"
    assert spec["profile"]["default"].strip("'\"") == "ci"
    assert re.search(rf'nlcl\.start\(\s*"{re.escape(path.stem)}"', text), "nlcl.start must name the chapter id"
    assert re.search(r'sizes=\{\s*"ci":', text) or re.search(r"sizes=\{'ci':", text) or "sizes=SIZES" in text
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[-1].source.strip() == "run.finish()", f"{path.stem}: the last cell must be run.finish()"
    assert all(not c.get("outputs") for c in code)
    assert "{glue:text}" in text or "{glue:}" in text, f"{path.stem}: prose should quote computed values via glue"


def _public_objects():
    for info in pkgutil.iter_modules(nlcl.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"nlcl.{info.name}")
        names = getattr(module, "__all__", None)
        if names is None:
            names = [n for n, o in vars(module).items()
                     if not n.startswith("_") and (inspect.isfunction(o) or inspect.isclass(o))
                     and getattr(o, "__module__", "") == module.__name__]
        for name in names:
            if inspect.isfunction(getattr(module, name, None)) or inspect.isclass(getattr(module, name, None)):
                yield info.name, name  # constants (ALL_CAPS tuples etc.) are data, not functions


def test_every_public_function_is_tested():
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    missing = [f"nlcl.{m}.{n}" for m, n in _public_objects() if not re.search(rf"\b{re.escape(n)}\b", tests)]
    assert missing == [], f"public names never mentioned in tests: {missing}"


def test_public_functions_have_docstrings():
    missing = []
    for module, name in _public_objects():
        obj = getattr(importlib.import_module(f"nlcl.{module}"), name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
            missing.append(f"nlcl.{module}.{name}")
    assert missing == [], f"public objects without docstrings: {missing}"
