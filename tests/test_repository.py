"""Repository-level invariants: layout, TOC ↔ chapters, dependency lists, chapter conventions."""

import contextlib
import importlib
import inspect
import io
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

import nlcl
from nlcl.harness.run import notebook

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.py"))


def test_layout():
    for name in (
        "book",
        "nlcl",
        "tests",
        "_config.yml",
        "_toc.yml",
        "environment.yml",
        "pyproject.toml",
        "README.md",
        "Makefile",
        ".ci/run",
        "constraints.txt",
    ):
        assert (ROOT / name).exists(), name


def test_no_tracked_ipynb():
    try:
        files = subprocess.run(
            ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert files == [], f"chapters are jupytext .py files; tracked notebooks: {files}"


def test_toc_and_book_files_agree():
    entries = notebook.toc_files(ROOT)
    for entry in entries:
        assert (ROOT / f"{entry}.py").is_file() or (ROOT / f"{entry}.md").is_file(), (
            f"_toc.yml lists missing {entry}"
        )
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


# ---------------------------------------------------------------------------------------------
# The front door and the manual: README is one screen that links to the "Using this book" page
# (book/using.md), which documents the command line, the make targets and the environment
# variables as the code defines them. README, the manual and results/PERFORMANCE.md state the
# current state, not a diary.
# ---------------------------------------------------------------------------------------------

USING = ROOT / "book" / "using.md"
README_MAX_LINES = 80


def test_readme_is_one_screen_and_links_to_the_manual():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert "](book/using.md)" in readme, "README links to the 'Using this book' page"
    assert "book/using" in notebook.toc_files(ROOT), "the manual is a page of the book"
    assert USING.read_text().startswith("# Using this book\n")


#: What a diary leaves in a document (the history stays in git and in the records' own files).
DIARY = {
    "a 'stop N'": re.compile(r"\bstops? #?\d+", re.I),
    "an issue number": re.compile(r"\b(issues?|PR|pull request) #?\d+", re.I),
    "a date": re.compile(r"\b(19|20)\d\d-[01]\d(-[0-3]\d)?\b"),
    "a commit-like hash": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "a story of a seed": re.compile(r"\b(found|revealed|showed) (at|with|on|by) (base )?seeds? \d+", re.I),
}


@pytest.mark.parametrize("path", ["README.md", "book/using.md", "results/PERFORMANCE.md"])
def test_docs_state_the_current_state_not_a_diary(path):
    text = (ROOT / path).read_text()
    found = [f"{what}: {m.group(0)!r}" for what, rx in DIARY.items() for m in rx.finditer(text)]
    assert found == [], f"{path} reads as a diary: {found}"


def _cli_help(*argv: str) -> str:
    """What ``nlcl ARGV --help`` prints, from the entry point pyproject.toml declares."""
    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["nlcl"]
    module, _, func = target.partition(":")
    main = getattr(importlib.import_module(module), func)
    out = io.StringIO()
    wide = mock.patch.dict(os.environ, {"COLUMNS": "1000"})  # argparse wraps help at the terminal's width
    with wide, contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code == 0
    return out.getvalue()


def test_the_manual_documents_every_command_option_and_exit_code():
    manual = USING.read_text()
    top = _cli_help()
    commands = re.findall(r"^    (\S+)\s{2,}\S", top.split("exit codes:")[0], re.M)
    assert {"run", "book", "list", "sweep"} <= set(commands), commands
    missing = []
    for command in commands:  # each in a section of its own, which names each of its options
        section = re.search(rf"^### `nlcl {re.escape(command)}`\n(.*?)(?=^##)", manual, re.M | re.S)
        if section is None:
            missing.append(f"a section '### `nlcl {command}`'")
            continue
        options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", _cli_help(command))) - {"--help"}
        missing += [f"nlcl {command} {o}" for o in sorted(options) if o not in section.group(1)]
    codes = re.findall(r"^\s+(\d+)\s{2,}", top.split("exit codes:")[1], re.M)
    assert {"0", "1", "2", "130"} <= set(codes), codes
    missing += [f"exit code {c}" for c in codes if f"\n| {c} |" not in manual]
    assert "--version" in top and "nlcl --version" in manual
    assert missing == [], f"book/using.md does not document: {missing}"


def test_the_manual_documents_every_make_target_and_environment_variable():
    manual = USING.read_text()
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()
    missing = [f"make {t}" for t in phony if f"`make {t}" not in manual]
    source = "\n".join(p.read_text() for p in (ROOT / "nlcl").rglob("*.py"))
    names = set(re.findall(r"\bNLCL_[A-Z_]+\b", source))
    assert {"NLCL_DEVICE", "NLCL_NUMERICS", "NLCL_RUNS_DIR"} <= names
    missing += [n for n in sorted(names) if f"`{n}`" not in manual]
    assert missing == [], f"book/using.md does not document: {missing}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_conventions(path):
    from nlcl.harness.run import spec

    text = path.read_text()
    nb = notebook.to_notebook(path)
    declared = spec.read_chapter(path)  # the parameters cell + the spec= of nlcl.start
    for name in ("profile", "seed", "device"):
        assert name in declared.parameters, f"{path.stem}: parameter {name!r} missing"
    assert declared.parameters["profile"].default == "ci"
    assert declared.chapter == path.stem, "nlcl.start must name the chapter id"
    assert re.search(r"nlcl\.start\(\s*\"[^\"]+\",\s*globals\(\),\s*spec=", text), (
        "the chapter starts with nlcl.start(CHAPTER, globals(), spec={...})"
    )
    start_cell = [c for c in nb.cells if "nlcl.start(" in c.source]
    params_cell = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert nb.cells.index(start_cell[0]) == params_cell[0] + 1, (
        "nlcl.start belongs in the cell after the parameters"
    )
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[-1].source.strip() == "run.finish()", f"{path.stem}: the last cell must be run.finish()"
    assert all(not c.get("outputs") for c in code)
    assert "{glue:text}" in text or "{glue:}" in text, (
        f"{path.stem}: prose should quote computed values via glue"
    )


def _modules():
    """Every module of the package, as a name relative to ``nlcl`` (``tian.landscape``)."""
    for info in pkgutil.walk_packages(nlcl.__path__, "nlcl."):
        if not info.ispkg and not info.name.rsplit(".", 1)[-1].startswith("_"):
            yield info.name.removeprefix("nlcl.")


def _public_objects():
    for name in _modules():
        module = importlib.import_module(f"nlcl.{name}")
        names = getattr(module, "__all__", None)
        if names is None:
            names = [
                n
                for n, o in vars(module).items()
                if not n.startswith("_")
                and (inspect.isfunction(o) or inspect.isclass(o))
                and getattr(o, "__module__", "") == module.__name__
            ]
        for name in names:
            if inspect.isfunction(getattr(module, name, None)) or inspect.isclass(
                getattr(module, name, None)
            ):
                yield (
                    module.__name__.removeprefix("nlcl."),
                    name,
                )  # constants (ALL_CAPS tuples etc.) are data, not functions


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


# ---------------------------------------------------------------------------------------------
# The layout shows the architecture (book/using.md, "Repository layout"): the harness (one subpackage per concern),
# the book benchmark, shared core, datasets and one subpackage per paper; paper code never imports
# the harness; no import circles; one concept per module (CONTRIBUTING, "One concept per module").
# ---------------------------------------------------------------------------------------------

SUBPACKAGES = ("harness", "bench", "core", "datasets", "tian", "esser", "renli")
#: The harness's concerns (nlcl/harness/__init__.py): every harness module lives in one of them.
HARNESS_CONCERNS = ("run", "claims", "records", "site")
#: Not a size rule (a module is split when it holds two concepts, not because it is long): a
#: bound that only a module which has swallowed several concepts reaches, to make a reviewer look.
SANITY_MAX_LINES = 1200


def _module_path(mod: str) -> Path:
    base = ROOT.joinpath(*mod.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _import_graph():
    import ast

    packages = {
        "nlcl." + ".".join(p.parent.relative_to(ROOT / "nlcl").parts)
        for p in (ROOT / "nlcl").rglob("__init__.py")
        if p.parent != ROOT / "nlcl"
    }
    modules = {f"nlcl.{m}" for m in _modules()} | packages
    graph = {}
    for mod in modules:
        deps = set()
        for node in ast.walk(ast.parse(_module_path(mod).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nlcl"):
                deps.add(node.module)
                deps |= {f"{node.module}.{a.name}" for a in node.names} & modules
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("nlcl")}
        graph[mod] = (deps & modules) - {mod}
    return graph


def test_package_is_split_into_the_documented_subpackages():
    top = sorted(p.name for p in (ROOT / "nlcl").iterdir() if p.suffix == ".py" or p.is_dir())
    assert [p for p in top if p not in (*SUBPACKAGES, "__init__.py", "__pycache__")] == []
    harness = ROOT / "nlcl" / "harness"
    loose = sorted(p.name for p in harness.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"harness modules outside the concerns {HARNESS_CONCERNS}: {loose}"
    concerns = sorted(p.name for p in harness.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert concerns == sorted(HARNESS_CONCERNS), (
        "a new concern of the harness is named here and in its __init__"
    )


def test_paper_code_never_imports_the_harness():
    """Paper, shared and dataset code never imports the harness (nlcl.bench, which times the book, may)."""
    bad = [
        (m, d)
        for m, deps in _import_graph().items()
        if not m.startswith(("nlcl.harness", "nlcl.bench"))
        for d in deps
        if d.startswith("nlcl.harness")
    ]
    assert bad == [], f"paper/core code importing the harness: {bad}"


def test_the_harness_never_imports_the_bench():
    bad = [
        (m, d)
        for m, deps in _import_graph().items()
        if m.startswith("nlcl.harness")
        for d in deps
        if d.startswith("nlcl.bench")
    ]
    assert bad == [], f"the book machinery importing its benchmark: {bad}"


def test_no_import_circles():
    graph, state, cycles = _import_graph(), {}, []

    def visit(u, stack):
        state[u] = 1
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                cycles.append(stack[stack.index(v) :] + [v])
            elif v not in state:
                visit(v, stack + [v])
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u, [u])
    assert cycles == [], f"import circles: {cycles}"


def test_every_module_names_its_concept():
    """The mechanical part of "one concept per module" (CONTRIBUTING): every module that holds code
    opens with a docstring whose first line names its concept, and none has grown past a bound
    that only several concepts reach. Whether a module holds one concept is the reviewer's call."""
    import ast

    unnamed, huge = [], {}
    for p in sorted((ROOT / "nlcl").rglob("*.py")):
        text = p.read_text()
        if not text.strip():
            continue  # an empty package marker
        doc = ast.get_docstring(ast.parse(text), clean=False) or ""
        if not doc.split("\n", 1)[0].strip():
            unnamed.append(str(p.relative_to(ROOT)))
        if (n := len(text.splitlines())) > SANITY_MAX_LINES:
            huge[str(p.relative_to(ROOT))] = n
    assert unnamed == [], f"modules without a first docstring line naming their concept: {unnamed}"
    assert huge == {}, (
        f"modules over {SANITY_MAX_LINES} lines: {huge}; read them for the concepts they hold "
        "and split there (CONTRIBUTING, 'One concept per module')"
    )


@pytest.mark.parametrize("package", ["harness", *(f"harness/{c}" for c in HARNESS_CONCERNS), "bench"])
def test_each_harness_package_says_what_its_modules_hold(package):
    """Each harness subpackage's ``__init__`` docstring names its concern and every module in it."""
    import ast

    folder = ROOT / "nlcl" / package
    doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
    dotted = "nlcl." + package.replace("/", ".")
    parts = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
    parts += [p.name for p in folder.iterdir() if (p / "__init__.py").is_file()]
    missing = sorted(m for m in parts if f"{dotted}.{m}`" not in doc)
    assert doc and missing == [], f"{dotted}.__init__ does not say what these hold: {missing}"


def test_import_nlcl_is_light():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, nlcl, nlcl.harness.run.cli; print(sorted(m for m in ('torch', 'numpy', 'pandas') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[]", f"`import nlcl` and the CLI module must not import heavy libraries; imported {out}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_compiles_as_python(path):
    # jupytext tolerates a markdown line without "# "; Python does not, and neither do we.
    compile(path.read_text(), str(path), "exec")


def test_ruff_lint_and_format_are_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is not installed: install nlcl with the [test] extra (make setup)")
    targets = ["nlcl", "tests", "book"]
    lint = subprocess.run([ruff, "check", *targets], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, f"ruff check found problems (run `ruff check --fix`):\n{lint.stdout[-3000:]}"
    fmt = subprocess.run([ruff, "format", "--check", *targets], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, f"files need `ruff format`:\n{fmt.stdout[-3000:]}"


def test_committed_full_profile_records_are_current():
    """Each paper-scale record (results/claims-full/) was run with today's chapter source.

    A chapter edited after its full run must be re-run at paper scale (``nlcl run CHAPTER --profile
    full`` then ``python -m nlcl.harness.records.paper_scale CHAPTER``) or its record removed.
    """
    from nlcl.harness.records import paper_scale

    stale = paper_scale.stale_records(ROOT / "results" / "claims-full", ROOT)
    assert not stale, "stale paper-scale records:\n" + "\n".join(
        f"  {c}: {w}" for c, w in sorted(stale.items())
    )


def test_one_list_of_profiles():
    """The profile names live in one place, ``nlcl.harness.run.spec.PROFILES`` (issue 25, item 3)."""
    spelled = re.compile(r"""[(\[]\s*["']ci["']\s*,\s*["']full["']\s*[)\]]""")
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in sorted((ROOT / "nlcl").rglob("*.py"))
        if p != ROOT / "nlcl" / "harness" / "run" / "spec.py"
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if spelled.search(line)
    ]
    assert not found, "profiles spelled out instead of spec.PROFILES: " + ", ".join(found)


def test_committed_explanations_record_a_prediction():
    """Every required claim of a paper-scale record whose explanation is shown recorded what that
    explanation predicted (issue 26: diagnostics with their values, or a band that excludes at least
    half of the failure region); `.ci/run book` walks the ci build's records the same way."""
    from nlcl.harness.claims import predictions

    records = [
        r
        for path in sorted((ROOT / "results" / "claims-full").glob("*.json"))
        for r in json.loads(path.read_text())["claims"]
    ]
    problems = predictions.walk_records(records)
    assert records and not problems, "explanations that predict nothing:\n" + "\n".join(problems)


def test_committed_verdict_records_come_from_committed_trees():
    """Paper-scale, seed-sweep and held-out records name a commit without uncommitted changes
    (issue 26): a record made from a dirty tree describes code nobody can check out."""
    paths = [
        *(ROOT / "results" / "claims-full").glob("*.json"),
        *(ROOT / "results" / "seed-sweeps").glob("*.json"),
        *(ROOT / "results" / "held-out").glob("record.json"),
        *(ROOT / "results" / "held-out" / "sets").glob("*.json"),
        *(ROOT / "results" / "held-out-full").glob("record.json"),
        *(ROOT / "results" / "held-out-full" / "sets").glob("*.json"),
    ]
    dirty = []
    for path in paths:
        rec = json.loads(path.read_text())
        commits = [rec.get("commit")] + [c.get("commit") for c in rec.get("chapters", {}).values()]
        commits += [s.get("commit") for s in rec.get("sets", [])]
        dirty += [f"{path.relative_to(ROOT)}: {c}" for c in commits if str(c).endswith("+dirty")]
    assert paths and not dirty, "records from dirty trees:\n" + "\n".join(dirty)


def test_every_held_out_set_keeps_its_rows():
    """Held-out evidence accumulates (issue 52): every set the ledger lists, of every chapter it ran,
    is kept with its rows in results/held-out/sets/<chapter>.json (``held_out run`` appends there;
    ``held_out archive`` copies the sets of record.json's git history)."""
    from nlcl.harness.records import held_out

    for profile, directory in held_out.PROFILE_DIRS.items():  # results/held-out and held-out-full
        ledger = held_out.load_ledger(ROOT / directory)
        sets = held_out.load_sets(ROOT / directory, profile)  # a set of the other profile: an error
        kept = {(c, tuple(s["seeds"])) for c, chapter_sets in sets.items() for s in chapter_sets if s["rows"]}
        missing = [
            (c, e["seeds"])
            for e in ledger
            for c in e["chapters"]
            if (c, tuple(sorted(e["seeds"]))) not in kept
        ]
        assert ledger or profile == "full", f"{directory}: no held-out set"
        assert not missing, f"{directory}: held-out sets without their rows: {missing}"


def test_no_held_out_seed_is_drawn_twice_at_any_profile():
    """A held-out seed is used once (issue 52): never a development seed, never in two sets, of
    either profile (``held_out run`` draws avoiding both ledgers, ``held_out.all_ledgers``)."""
    from nlcl.harness.records import held_out

    seen: dict[int, str] = {}
    twice = []
    for profile, directory in held_out.PROFILE_DIRS.items():
        for i, entry in enumerate(held_out.load_ledger(ROOT / directory)):
            for s in entry["seeds"]:
                if s in seen or s in held_out.DEV_SEEDS:
                    twice.append(f"{s}: {seen.get(s, 'a development seed')} and {profile} set {i}")
                seen[s] = f"{profile} set {i}"
    assert seen and not twice, f"held-out seeds used twice: {twice}"


def test_claims_declared_without_randomness_have_one_value_per_held_out_set():
    """A ledger's ``seeded: false`` takes a claim's held-out verdict out of the evidence (issue 52); the
    held-out rows must bear it out: within each set (one code), one value at every seed."""
    from nlcl.harness.records import held_out

    unseeded = held_out.declared_unseeded(ROOT)
    for directory in held_out.PROFILE_DIRS.values():  # the ci and the full held-out sets
        sets = held_out.load_sets(ROOT / directory)
        assert not held_out.unseeded_problems(sets, unseeded), directory


def test_committed_seed_sweeps_are_current():
    """Each chapter's verdicts across base seeds (results/seed-sweeps/) were swept with today's source.

    After editing a chapter, re-run ``python -m nlcl.harness.records.seed_sweeps CHAPTER`` (or ``make seed-sweep
    CHAPTER=...``) and commit the record.
    """
    from nlcl.harness.records import seed_sweeps

    directory = ROOT / "results" / "seed-sweeps"
    stale = seed_sweeps.stale_sweeps(directory, ROOT) if directory.is_dir() else {}
    assert not stale, "stale seed-sweep records:\n" + "\n".join(
        f"  {c}: {w}" for c, w in sorted(stale.items())
    )


LEDGERS = sorted((ROOT / "book" / "claims").glob("*.yaml"))


@pytest.mark.parametrize("path", LEDGERS, ids=[p.stem for p in LEDGERS])
def test_a_chapter_measures_exactly_the_claims_of_its_ledger(path):
    """A chapter whose claims live in ``book/claims/<chapter>.yaml`` declares them once with
    ``run.show_ledger(...)``, measures each with ``run.claim("<id>")`` (a literal id, read here by
    AST) and declares nothing inline: a ledger id never measured, or a measured id the ledger
    lacks, fails."""
    from nlcl.harness.claims import ledger

    chapter = ROOT / "book" / f"{path.stem}.py"
    assert chapter.is_file(), f"{path.name}: there is no chapter book/{path.stem}.py"
    declared = ledger.read_ledger(path).ids  # validates the schema too
    calls = ledger.claim_calls(chapter.read_text())
    assert calls["show_ledger"] == ["run.show_ledger"], f"{chapter.name}: call run.show_ledger() once"
    assert calls["inline"] == [], f"{chapter.name}: claims declared inline beside a ledger: {calls['inline']}"
    measured = set(calls["measured"])
    assert "<dynamic>" not in measured, f"{chapter.name}: run.claim() needs a literal id"
    assert sorted(set(declared) - measured) == [], f"{path.name}: ledger ids the chapter never measures"
    assert sorted(measured - set(declared)) == [], f"{chapter.name}: measured ids {path.name} lacks"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_a_chapter_shows_a_ledger_only_when_it_has_one(path):
    from nlcl.harness.claims import ledger

    shows = bool(ledger.claim_calls(path.read_text())["show_ledger"])
    has = (ROOT / "book" / "claims" / f"{path.stem}.yaml").is_file()
    assert shows == has, (
        f"{path.stem}: run.show_ledger() {'without' if shows else 'never called, with'} a ledger"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_reads_like_a_paper(path):
    """Every chapter keeps its claims in a ledger and has short cells, no functions of its own, its imports
    in one cell, the seed read as run.seed, its plumbing collapsed and no code line cut off at the
    page's width (nlcl.harness.run.chapter_shape; issue 25)."""
    from nlcl.harness.run import chapter_shape

    assert (ROOT / "book" / "claims" / f"{path.stem}.yaml").is_file(), (
        f"{path.stem}: its claims belong in book/claims/{path.stem}.yaml (issue 25)"
    )
    problems = chapter_shape.shape_problems(path)
    assert not problems, f"{path.stem}:\n  " + "\n  ".join(problems)


_XREF = re.compile(r":(?:func|mod|class|data|meth|attr|obj|exc):`~?\.?([A-Za-z_][\w.]*)`")


def _resolve(module, scope, target: str) -> bool:
    """Whether a docstring's cross-reference names something that exists: a dotted ``nlcl.`` path,
    or a name in the module (or the enclosing class; dataclass fields count)."""
    parts = target.split(".")
    if parts[0] == "nlcl":
        for i in range(len(parts), 0, -1):
            try:
                obj, rest = importlib.import_module(".".join(parts[:i])), parts[i:]
                break
            except ImportError:
                continue
    else:
        obj, rest = module, parts
        if scope is not None and not hasattr(module, parts[0]):
            obj = scope
    for name in rest:
        fields = getattr(obj, "__dataclass_fields__", {})
        if not hasattr(obj, name) and name not in fields:
            return False
        obj = getattr(obj, name, None)
    return True


def test_docstring_references_resolve():
    """Every ``:func:``/``:class:``/``:mod:``... reference in the package's docstrings names a thing
    that exists, so a docstring cannot keep describing code that moved (issue 25, item 3). Names of
    other libraries (``torch.…``, ``numpy.…``) are not checked."""
    import ast

    other = {"torch", "numpy", "np", "scipy", "pandas", "sklearn", "dask", "jsonschema", "papermill"}
    other |= {"jupytext", "matplotlib", "seaborn", "tqdm", "argparse", "pathlib", "functools", "typing"}
    bad = []
    for path in sorted((ROOT / "nlcl").rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        module = importlib.import_module(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            scope = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
            for target in _XREF.findall(ast.get_docstring(node, clean=False) or ""):
                if target.split(".")[0] not in other and not _resolve(module, scope, target):
                    bad.append(f"{path.relative_to(ROOT)} ({getattr(node, 'name', 'module')}): {target}")
    assert not bad, "docstring references to nothing:\n  " + "\n  ".join(bad)


def test_property_tests_run_without_a_deadline():
    # conftest's "nlcl" profile; a test's own @settings(max_examples=...) inherits it
    from hypothesis import settings

    assert settings.default.deadline is None
