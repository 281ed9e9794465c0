"""The "Re-run this chapter" box and the launch set-up of published notebooks (nlcl.harness.site.rerun)."""

from pathlib import Path

import nbformat
import pytest

from nlcl.harness.site.rerun import (
    COLAB_TAG,
    RERUN_TAG,
    Expression,
    chapter_sizes,
    colab_setup_source,
    notebook_code,
    prepare_notebook,
    repository_url,
    rerun_markdown,
    stage_chapter,
)

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.py"))

SOURCE = """
import nlcl
PAPER = (1, 2)
run = nlcl.start("x", profile=profile, sizes={"ci": dict(n=3, ws=[1, 2], ps=list(PAPER)), "full": {"n": 30, "ws": [1], "ps": list(PAPER)}},
                 params=dict(n=n))
"""


def test_chapter_sizes_literals_and_expressions():
    sizes = chapter_sizes(SOURCE, "x")
    assert sizes["ci"] == {"n": 3, "ws": [1, 2], "ps": Expression("list(PAPER)")}
    assert sizes["full"]["n"] == 30
    assert str(sizes["full"]["ps"]) == "list(PAPER)"


def test_chapter_sizes_through_a_module_level_name():
    src = 'SIZES = {"ci": dict(a=1), "full": dict(a=2)}\nrun = start("y", sizes=SIZES)\n'
    assert chapter_sizes(src) == {"ci": {"a": 1}, "full": {"a": 2}}


@pytest.mark.parametrize(
    "src,msg",
    [
        ("run = nlcl.start('x', sizes=SIZES)", "not assigned"),
        ("run = nlcl.start('x', sizes=make())", "dictionary of profiles"),
        ("run = nlcl.start('x', sizes={'ci': make(), 'full': {}})", "cannot read"),
        ("def (:", "does not parse"),
    ],
)
def test_chapter_sizes_errors_name_the_chapter(src, msg):
    with pytest.raises(ValueError, match=msg) as info:
        chapter_sizes(src, "my-chapter")
    assert "my-chapter" in str(info.value)


def test_chapter_without_sizes():
    assert chapter_sizes("import nlcl\nrun = nlcl.start('x')\n") == {}


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_chapter_declares_readable_sizes(path):
    from nlcl.harness.run.spec import read_chapter

    declared = read_chapter(path).parameters
    sizes = {
        prof: {n: p.sizes[prof] for n, p in declared.items() if prof in p.sizes} for prof in ("ci", "full")
    }
    assert sizes["ci"] and set(sizes["ci"]) == set(sizes["full"])
    spec = {n: {"type": p.type, "default": p.default, "help": p.help} for n, p in declared.items()}
    box = rerun_markdown(path.stem, spec, sizes)
    for name in spec:
        assert f"| `{name}` |" in box


PARAMS = {
    "profile": {"default": '"ci"', "type": "str", "help": '"ci" or "full"'},
    "seed": {"default": "0", "type": "int", "help": "random seed"},
    "n": {"default": "None", "type": "int", "help": "grid size | None: the profile's"},
}


def test_rerun_markdown_commands_table_and_downloads():
    box = rerun_markdown("x", PARAMS, {"ci": {"n": 3}, "full": {"n": 30}}, source="book/x.py")
    assert box.startswith(":::{admonition} Re-run this chapter\n:class: dropdown nlcl-rerun")
    assert box.rstrip().endswith(":::")
    assert ".venv/bin/nlcl run x --profile full" in box
    assert ".venv/bin/nlcl run x -p seed 1 -p n 3" in box
    assert "papermill -k nlcl x.ipynb x.out.ipynb -p profile ci" in box
    assert "jupytext --to notebook --output x.ipynb book/x.py" in box
    assert "| `n` | int | `None` | `3` | `30` | grid size \\| None: the profile's |" in box
    assert "| `seed` | int | `0` | = | = | random seed |" in box
    assert 'href="../_sources/book/x.ipynb"' in box and "{download}`x.py <x.py>`" in box


def test_rerun_markdown_needs_parameters():
    with pytest.raises(ValueError, match="x: a chapter must have parameters"):
        rerun_markdown("x", {}, {})


def test_notebook_code_skips_magics_and_injected_cells():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%matplotlib inline\nx = 1"),
        nbformat.v4.new_markdown_cell("# t"),
        nbformat.v4.new_code_cell("x = 2", metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("!ls\ny = 3"),
    ]
    code = notebook_code(nb)
    assert code == "# %matplotlib inline\nx = 1\n# !ls\ny = 3\n"
    compile(code, "nb", "exec")


def test_colab_setup_source():
    code = colab_setup_source("https://github.com/o/r", "nb")
    compile(code, "setup", "exec")
    assert "'nb', 'https://github.com/o/r'" in code and '"google.colab" in sys.modules' in code
    with pytest.raises(ValueError, match="repository_url='o/r'"):
        colab_setup_source("o/r")


def test_colab_setup_cell_does_nothing_outside_colab(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(colab_setup_source("https://github.com/o/r"), {})
    assert Path.cwd() == tmp_path


def _executed(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell(
            'profile: str = "ci"  # "ci" or "full"\nseed: int = 0  # random seed\nn: int = None  # grid size',
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell('profile = "ci"', metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("import nlcl"),
    ]
    nb.metadata["kernelspec"] = {"name": "nlcl", "display_name": "Python 3 (nlcl)", "language": "python"}
    path = tmp_path / "staging" / "book" / "x.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, str(path))
    src = tmp_path / "repo" / "book" / "x.py"
    src.parent.mkdir(parents=True)
    src.write_text(SOURCE)
    return path, src


def test_prepare_notebook(tmp_path):
    path, src = _executed(tmp_path)
    for _ in range(2):  # idempotent
        prepare_notebook(path, src, parameters=PARAMS, repository_url="https://github.com/o/r")
    nb = nbformat.read(str(path), as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert sum(RERUN_TAG in t for t in tags) == 1 and sum(COLAB_TAG in t for t in tags) == 1
    # Colab set-up first among the code cells (hidden), the box right after the injected parameters.
    assert tags[1] == ["remove-cell", COLAB_TAG]
    assert "injected-parameters" in tags[3] and tags[4] == [RERUN_TAG]
    assert "book/x.py" in nb.cells[4].source
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert (path.parent / "x.py").read_text() == SOURCE
    nbformat.validate(nb)


def test_prepare_notebook_without_repository_keeps_the_kernel(tmp_path):
    path, src = _executed(tmp_path)
    prepare_notebook(path, src, parameters=PARAMS)
    nb = nbformat.read(str(path), as_version=4)
    assert not any(COLAB_TAG in c.metadata.get("tags", []) for c in nb.cells)
    assert nb.metadata["kernelspec"]["name"] == "nlcl"


def test_prepare_notebook_needs_a_parameters_cell(tmp_path):
    path, src = _executed(tmp_path)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells = nb.cells[:1]
    nbformat.write(nb, str(path))
    with pytest.raises(ValueError, match="x: the notebook has no parameters cell"):
        prepare_notebook(path, src, parameters=PARAMS)


def test_repository_url_reads_config(tmp_path):
    assert repository_url(ROOT).startswith("https://github.com/")
    (tmp_path / "_config.yml").write_text("title: t\n")
    assert repository_url(tmp_path) is None
    (tmp_path / "_config.yml").write_text("repository:\n  url: https://github.com/me/fork/\n")
    assert repository_url(tmp_path) == "https://github.com/me/fork"


def test_stage_chapter_reads_parameters_and_config(tmp_path):
    path, src = _executed(tmp_path)
    src.write_text(  # the chapter's one declaration (nlcl.harness.run.spec), which the staging hook reads
        '# %% tags=["parameters"]\nprofile: str = "ci"  # "ci" or "full"\nseed: int = 0  # random seed\n'
        'device: str = "auto"  # device\nn: int | None = None  # grid size\n\n'
        '# %%\nimport nlcl\n\nrun = nlcl.start("x", globals(), spec={"n": {"ci": 3, "full": 30}})\n'
    )
    (tmp_path / "repo" / "_config.yml").write_text("repository:\n  url: https://github.com/me/fork\n")
    stage_chapter(path, src, tmp_path / "repo")
    nb = nbformat.read(str(path), as_version=4)
    box = next(c.source for c in nb.cells if RERUN_TAG in c.metadata.get("tags", []))
    assert "| `n` | int | `None` |" in box and "| `seed` | int | `0` |" in box
    setup = next(c.source for c in nb.cells if COLAB_TAG in c.metadata.get("tags", []))
    assert "https://github.com/me/fork" in setup
