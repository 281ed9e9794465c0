import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from nlcl.core.validate import ParameterError
from nlcl.harness import notebook, report, site
from nlcl.harness.notebook import ChapterNotFound, coerce_parameters

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"
NLCL = [sys.executable, "-m", "nlcl.harness.cli"]


def test_toc_files_and_chapters():
    files = notebook.toc_files(ROOT)
    assert files[0] == "book/intro" and "book/reproducibility" in files
    chapters = notebook.chapters(ROOT)
    assert "tian-fig8-landscape" in chapters
    assert all(p.suffix == ".py" and p.is_file() for p in chapters.values())


def test_resolve_chapter():
    assert notebook.resolve_chapter("tian-fig8-landscape", ROOT).name == "tian-fig8-landscape.py"
    assert notebook.resolve_chapter("book/tian-fig8-landscape.py", ROOT).name == "tian-fig8-landscape.py"
    assert notebook.resolve_chapter(str(TINY), ROOT) == TINY
    with pytest.raises(
        ChapterNotFound, match=r"(?s)unknown chapter 'nope'; available chapters:\n  .*tian-fig8-landscape"
    ):
        notebook.resolve_chapter("nope", ROOT)


def test_to_notebook_and_parameters():
    nb = notebook.to_notebook(TINY)
    assert nb.metadata["kernelspec"]["name"] == notebook.KERNEL_NAME
    spec = notebook.chapter_parameters(nb)
    assert list(spec) == ["profile", "seed", "device", "n", "scale", "must_fail"]
    assert spec["n"] == {"default": "None", "type": "int", "help": "a size; None takes the profile's"}


def test_exactly_one_parameters_cell():
    nb = notebook.to_notebook(TINY)
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}))
    with pytest.raises(ParameterError, match="exactly one cell tagged 'parameters'; found 2"):
        notebook.chapter_parameters(nb, "tiny")


SPEC = {
    "n": {"default": "None", "type": "int", "help": ""},
    "lr": {"default": "0.1", "type": "float", "help": "learning rate"},
    "act": {"default": "'relu'", "type": "str", "help": ""},
    "angles": {"default": "None", "type": "list", "help": ""},
    "flag": {"default": "False", "type": "bool", "help": ""},
}


def test_coerce_parameters_types():
    out = coerce_parameters(
        {"n": "5", "lr": "1", "act": "linear", "angles": "[0, 1.5]", "flag": "true"}, SPEC
    )
    assert out == {"n": 5, "lr": 1.0, "act": "linear", "angles": [0, 1.5], "flag": True}
    assert coerce_parameters({"n": "None", "act": "123"}, SPEC) == {"n": None, "act": "123"}
    assert coerce_parameters({"n": 4}, SPEC) == {"n": 4}


@pytest.mark.parametrize(
    "name,value,msg",
    [
        ("n", "abc", "expected int"),
        ("n", "2.5", "expected int"),
        ("n", "True", "expected int"),
        ("lr", "fast", "expected float"),
        ("angles", "3", "expected list"),
        ("flag", "maybe", "expected bool"),
    ],
)
def test_coerce_parameters_wrong_type(name, value, msg):
    with pytest.raises(ParameterError, match=msg):
        coerce_parameters({name: value}, SPEC, "tiny")


def test_coerce_parameters_unknown_lists_parameters():
    with pytest.raises(
        ParameterError, match=r"tiny has no parameter 'oops'; its parameters are:\n  n \(int\) = None"
    ) as err:
        coerce_parameters({"oops": "1"}, SPEC, "tiny")
    assert "lr (float) = 0.1  # learning rate" in str(err.value)


def test_write_report(tmp_path):
    template = tmp_path / "t.md"
    template.write_text("# Report\n\n" + report.REPORT_MARKER + "\n")
    rec = {
        "id": "a",
        "chapter": "ch",
        "source": "Tian 2023",
        "statement": "s",
        "expected": "≥ 8",
        "measured": 9,
        "tolerance": "≥ 8",
        "status": "pass",
        "required": True,
        "profile": "ci",
        "commit": "c",
        "note": None,
    }
    bad = {**rec, "id": "b", "status": "not-reproduced", "note": "because"}
    counts = report.write_report(
        [rec, bad],
        {"ch": {"seconds": 1.5, "ok": True, "profile": "ci"}},
        template,
        tmp_path / "out.md",
        ["ch"],
    )
    text = (tmp_path / "out.md").read_text()
    assert counts == {"pass": 1, "fail": 0, "not-reproduced": 1}
    assert "| `a` | {doc}`ch` | Tian 2023 |" in text and "✅ pass" in text
    assert "because" in text and "1.5 s" in text and report.REPORT_MARKER not in text


def test_stage_toc_drops_unexecuted_and_empty_parts(tmp_path):
    site._stage_toc(ROOT, tmp_path, executed=set())
    toc = yaml.safe_load((tmp_path / "_toc.yml").read_text())
    files = [c["file"] for p in toc["parts"] for c in p["chapters"]]
    assert "book/reproducibility" in files
    assert not any(f.endswith("tian-fig8-landscape") for f in files)
    assert all(p["chapters"] for p in toc["parts"])


@pytest.mark.slow
def test_run_chapter_api(tmp_path, monkeypatch):
    monkeypatch.setenv("NLCL_BUILD_DIR", str(tmp_path))
    res = notebook.run_chapter(
        TINY, parameters={"n": "4"}, output=tmp_path / "t.ipynb", root=ROOT, progress_bar=False
    )
    assert isinstance(res, notebook.ChapterResult)
    assert res.ok and res.chapter == "tiny-chapter" and res.claims[0]["measured"] == 4 and res.seconds > 0
    with pytest.raises(ParameterError, match="profile='paper'"):
        notebook.run_chapter(TINY, profile="paper", root=ROOT)


def test_cli_main_in_process(capsys):
    from nlcl.harness.cli import main

    assert main(["list"]) == 0
    assert "tian-fig8-landscape" in capsys.readouterr().out
    assert main(["run", "no-such-chapter"]) == 2
    assert "available chapters" in capsys.readouterr().err


def test_ensure_kernel_is_idempotent():
    assert notebook.ensure_kernel() == notebook.KERNEL_NAME
    assert notebook.ensure_kernel() == notebook.KERNEL_NAME


# ---- command line (executes notebooks: a few seconds each) ---------------------------------


def nlcl(*args, env_build=None):
    import os

    env = dict(os.environ)
    if env_build is not None:
        env["NLCL_BUILD_DIR"] = str(env_build)
    return subprocess.run([*NLCL, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow
def test_cli_run_with_override(tmp_path):
    out = tmp_path / "tiny.ipynb"
    res = nlcl(
        "run", str(TINY), "-p", "n", "5", "-p", "scale", "2", "-o", str(out), "--quiet", env_build=tmp_path
    )
    assert res.returncode == 0, res.stderr
    claims = json.loads((tmp_path / "claims" / "tiny-chapter.json").read_text())
    assert claims[0]["measured"] == 5 and claims[0]["status"] == "pass"
    nb = nbformat.read(str(out), as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "hide-input" in injected[0].metadata.tags
    assert (
        "n = 5" in injected[0].source
        and injected[0].metadata.mystnb["code_prompt_show"] == notebook.INJECTED_LABEL
    )
    assert "n = 5 scale = 2.0" in "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_cli_profile_full(tmp_path):
    res = nlcl(
        "run", str(TINY), "--profile", "full", "-o", str(tmp_path / "t.ipynb"), "--quiet", env_build=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert json.loads((tmp_path / "claims" / "tiny-chapter.json").read_text())[0]["measured"] == 30


@pytest.mark.slow
def test_cli_failed_claim_exits_nonzero_naming_cell(tmp_path):
    res = nlcl(
        "run",
        str(TINY),
        "-p",
        "must_fail",
        "True",
        "-o",
        str(tmp_path / "t.ipynb"),
        "--quiet",
        env_build=tmp_path,
    )
    assert res.returncode == 1
    assert "failed in code cell" in res.stderr and "ClaimsFailed" in res.stderr and "tiny-n" in res.stderr


def test_cli_unknown_parameter(tmp_path):
    res = nlcl("run", "tian-fig8-landscape", "-p", "no_such_param", "1", env_build=tmp_path)
    assert res.returncode == 2
    assert "no parameter 'no_such_param'" in res.stderr and 'activation (str) = "relu"' in res.stderr


def test_cli_wrong_type(tmp_path):
    res = nlcl("run", "tian-fig8-landscape", "-p", "n_grid", "many", env_build=tmp_path)
    assert res.returncode == 2 and "expected int" in res.stderr


def test_cli_unknown_chapter(tmp_path):
    res = nlcl("run", "no-such-chapter", env_build=tmp_path)
    assert res.returncode == 2 and "available chapters" in res.stderr and "tian-fig8-landscape" in res.stderr


def test_cli_duplicate_parameter(tmp_path):
    res = nlcl("run", "tian-fig8-landscape", "-p", "seed", "1", "-p", "seed", "2", env_build=tmp_path)
    assert res.returncode == 2 and "given twice" in res.stderr


def test_cli_list():
    res = nlcl("list")
    assert res.returncode == 0 and "tian-fig8-landscape" in res.stdout
    res = nlcl("list", "tian-fig8-landscape")
    assert res.returncode == 0 and "n_grid (int) = None" in res.stdout


def test_cli_bad_profile_is_usage_error():
    res = nlcl("book", "--profile", "paper")
    assert res.returncode == 2 and "invalid choice" in res.stderr


@pytest.mark.slow
def test_cli_fig8_linear(tmp_path):
    res = nlcl(
        "run",
        "tian-fig8-landscape",
        "-p",
        "activation",
        "linear",
        "--quiet",
        "-o",
        str(tmp_path / "f.ipynb"),
        env_build=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    claims = {c["id"]: c for c in json.loads((tmp_path / "claims" / "tian-fig8-landscape.json").read_text())}
    assert claims["fig8-relu-maxima"]["measured"] == 2 and not claims["fig8-relu-maxima"]["required"]


def _mini_book(tmp_path, chapter_source: str) -> Path:
    root = tmp_path / "book_root"
    (root / "book").mkdir(parents=True)
    shutil.copy2(ROOT / "_config.yml", root / "_config.yml")
    shutil.copy2(ROOT / "book" / "reproducibility.md", root / "book" / "reproducibility.md")
    (root / "book" / "intro.md").write_text("# Mini\n")
    (root / "book" / "tiny-chapter.py").write_text(chapter_source)
    toc = {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [
            {"caption": "C", "chapters": [{"file": "book/tiny-chapter"}]},
            {"caption": "E", "chapters": []},
            {"caption": "R", "chapters": [{"file": "book/reproducibility"}]},
        ],
    }
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    return root


@pytest.mark.slow
def test_build_book_site_and_report(tmp_path, monkeypatch):
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    root = _mini_book(tmp_path, TINY.read_text())
    lines = []
    assert site.build_book(root=root, jobs=1, echo=lines.append) == 0
    assert (root / "_build" / "html" / "index.html").is_file()
    assert (root / "_build" / "html" / "book" / "tiny-chapter.html").is_file()
    report = (root / "_build" / "staging" / "book" / "reproducibility.md").read_text()
    assert "`tiny-n`" in report and "✅ pass" in report
    timings = json.loads((root / "_build" / "timings.json").read_text())
    assert timings["tiny-chapter"]["ok"] is True
    # The chapter's source is staged next to its notebook only as the page's .py download.
    assert (root / "_build" / "staging" / "book" / "tiny-chapter.py").read_text() == TINY.read_text()
    assert list((root / "_build" / "html" / "_downloads").rglob("tiny-chapter.py"))
    page = (root / "_build" / "html" / "book" / "tiny-chapter.html").read_text()
    assert "nlcl-rerun" in page and "mybinder.org/v2/gh/" in page and 'id="claim-tiny-n"' in page
    assert "claims-summary.svg" in report


@pytest.mark.slow
def test_build_book_fails_naming_chapter_and_cell(tmp_path, monkeypatch):
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    root = _mini_book(tmp_path, TINY.read_text().replace("must_fail: bool = False", "must_fail: bool = True"))
    lines = []
    assert site.build_book(root=root, jobs=1, site=False, echo=lines.append) == 1
    text = "\n".join(lines)
    assert "chapter 'tiny-chapter' FAILED in code cell" in text and "ClaimsFailed" in text
