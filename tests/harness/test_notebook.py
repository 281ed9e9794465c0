import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from nlcl.core.validate import ParameterError
from nlcl.harness.records import provenance
from nlcl.harness.run import notebook
from nlcl.harness.run.notebook import ChapterNotFound, coerce_parameters
from nlcl.harness.site import build as site
from nlcl.harness.site import report

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"
NLCL = [sys.executable, "-m", "nlcl.harness.run.cli"]


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


def test_resolve_chapter_prefers_an_existing_file_to_the_book_chapter_of_that_name(tmp_path):
    copy = tmp_path / "tian-fig8-landscape.py"  # a modified copy of a book chapter
    copy.write_text((ROOT / "book" / "tian-fig8-landscape.py").read_text() + "\n# mine\n")
    assert notebook.resolve_chapter(str(copy), ROOT) == copy.resolve()
    with pytest.raises(
        ChapterNotFound, match=r"(?s)unknown chapter 'nope'; available chapters:\n  .*tian-fig8-landscape"
    ):
        notebook.resolve_chapter("nope", ROOT)


def test_to_notebook_and_parameters():
    nb = notebook.to_notebook(TINY)
    assert nb.metadata["kernelspec"]["name"] == notebook.KERNEL_NAME
    params = notebook.chapter_parameters(TINY)
    assert list(params) == ["profile", "seed", "device", "n", "scale", "must_fail", "make_nan"]
    assert params["n"].help == "a size; None takes the profile's" and params["n"].nullable


def test_coerce_parameters_types():
    P = notebook.chapter_parameters(TINY)
    out = coerce_parameters({"n": "5", "scale": "1", "must_fail": "true", "device": "cpu"}, P)
    assert out == {"n": 5, "scale": 1.0, "must_fail": True, "device": "cpu"}
    assert coerce_parameters({"n": "None"}, P) == {"n": None}


@pytest.mark.parametrize(
    "name,value,msg",
    [
        ("n", "abc", "expected an int"),
        ("n", "2.5", "expected an int"),
        ("n", "True", "expected an int"),
        ("n", "0", r"n=0 is not allowed; expected an int in \[1, 1000\], or None"),
        ("scale", "fast", "expected a float"),
        ("scale", "nan", "expected a float"),
        ("must_fail", "maybe", "expected true or false"),
        ("seed", str(2**70), "seed=1180591620717411303424 is not allowed"),
        ("device", "gpu", "device='gpu' is not allowed"),
    ],
)
def test_coerce_parameters_rejects(name, value, msg):
    with pytest.raises(ParameterError, match=msg):
        coerce_parameters({name: value}, notebook.chapter_parameters(TINY), "tiny")


def test_coerce_parameters_unknown_lists_parameters():
    with pytest.raises(ParameterError, match=r"tiny has no parameter 'scael'; did you mean 'scale'\?") as err:
        coerce_parameters({"scael": "1"}, notebook.chapter_parameters(TINY), "tiny")
    assert "n (int | None) = None: an int in [1, 1000], or None" in str(err.value)


def test_check_output(tmp_path):
    assert notebook.check_output(tmp_path / "a" / "b.ipynb") == tmp_path / "a" / "b.ipynb"
    assert not (tmp_path / "a" / "b.ipynb").exists()
    (tmp_path / "f").write_text("x")
    with pytest.raises(ParameterError, match="cannot write the notebook there"):
        notebook.check_output(tmp_path / "f" / "b.ipynb")
    with pytest.raises(ParameterError, match="cannot write the notebook there"):
        notebook.check_output("/proc/nlcl/b.ipynb")
    with pytest.raises(ParameterError, match="must end in .ipynb"):
        notebook.check_output(tmp_path / "b.txt")


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
    assert (counts["pass"], counts["fail"], counts["not-reproduced"]) == (1, 0, 1)
    # a record without a basis (made before records carried one) reads as unclassified
    assert "| `a` | {doc}`ch` | unclassified | Tian 2023 |" in text and "✓ pass" in text
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
    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    res = notebook.run_chapter(TINY, parameters={"n": "4"}, root=ROOT, progress_bar=False)
    assert Path.cwd() == tmp_path  # the kernel starts in the root; this process stays where it was
    assert isinstance(res, notebook.ChapterResult)
    assert res.ok and res.chapter == "tiny-chapter" and res.claims[0]["measured"] == 4 and res.seconds > 0
    assert (
        res.run_dir.parent == tmp_path / "runs" / "tiny-chapter"
        and res.output == res.run_dir / "notebook.ipynb"
    )
    assert {p.name for p in res.run_dir.iterdir()} >= {
        "run.json",
        "claims",
        "provenance.json",
        "notebook.ipynb",
    }
    prov = json.loads((res.run_dir / "provenance.json").read_text())
    assert prov["chapter_sha256"] == provenance.source_sha256(TINY)  # the source that ran
    with pytest.raises(ParameterError, match="profile='paper'"):
        notebook.run_chapter(TINY, profile="paper", root=ROOT)


def test_run_chapter_waits_for_a_slow_kernel(tmp_path, monkeypatch):
    """A kernel may take minutes to start on a loaded machine (a held-out sweep beside other
    record runs): run_chapter gives papermill KERNEL_START_TIMEOUT_S, not its default 60 s."""
    import papermill as pm

    seen = {}

    def fake(nb, out, **kw):
        seen.update(kw)
        raise RuntimeError("Kernel didn't respond")

    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setattr(pm, "execute_notebook", fake)
    res = notebook.run_chapter(TINY, root=ROOT, progress_bar=False)
    assert seen["start_timeout"] == notebook.KERNEL_START_TIMEOUT_S >= 300
    assert not res.ok and "Kernel didn't respond" in res.error


def test_cli_main_in_process(capsys):
    from nlcl.harness.run.cli import main

    assert main(["list"]) == 0
    assert "tian-fig8-landscape" in capsys.readouterr().out
    assert main(["run", "no-such-chapter"]) == 2
    assert "available chapters" in capsys.readouterr().err


def test_ensure_kernel_is_idempotent():
    assert notebook.ensure_kernel() == notebook.KERNEL_NAME
    assert notebook.ensure_kernel() == notebook.KERNEL_NAME


# ---- command line (executes notebooks: a few seconds each) ---------------------------------


def nlcl(*args, runs=None, env_extra=None):
    import os

    env = {**os.environ, **(env_extra or {})}
    if runs is not None:
        env["NLCL_RUNS_DIR"] = str(runs)
    return subprocess.run([*NLCL, *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)


def _run_folder(stdout: str) -> Path:
    return Path(re.search(r"run folder (\S+)", stdout).group(1))


@pytest.mark.slow
def test_cli_run_with_override(tmp_path):
    out = tmp_path / "tiny.ipynb"
    res = nlcl("run", str(TINY), "-p", "n", "5", "-p", "scale", "2", "-o", str(out), "--quiet", runs=tmp_path)
    assert res.returncode == 0, res.stderr
    folder = _run_folder(res.stdout)
    assert folder.parent == tmp_path / "tiny-chapter"
    claims = json.loads((folder / "claims" / "tiny-chapter.json").read_text())
    assert claims[0]["measured"] == 5 and claims[0]["status"] == "pass"
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "complete" and record["parameters"]["n"] == 5 and record["seed"] == 0
    assert "claims 1/1 pass" in (folder / "log.txt").read_text()
    nb = nbformat.read(str(out), as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "hide-input" in injected[0].metadata.tags
    assert (
        "n = 5" in injected[0].source
        and injected[0].metadata.mystnb["code_prompt_show"] == notebook.INJECTED_LABEL
    )
    assert "n = 5 scale = 2.0" in "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
    assert "Passed unknown parameter" not in res.stderr


@pytest.mark.slow
def test_cli_profile_full_from_yaml_file_with_log_output(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("scale: 3\n")
    res = nlcl(
        "run", str(TINY), "--profile", "full", "-f", str(params), "--log-output", "--quiet", runs=tmp_path
    )
    assert res.returncode == 0, res.stderr
    folder = _run_folder(res.stdout)
    claims = json.loads((folder / "claims" / "tiny-chapter.json").read_text())
    assert claims[0]["measured"] == 30
    assert "n = 30 scale = 3.0" in res.stdout + res.stderr  # streamed


@pytest.mark.slow
def test_cli_failed_claim_exits_1_naming_cell(tmp_path):
    res = nlcl("run", str(TINY), "-p", "must_fail", "True", "--quiet", runs=tmp_path)
    assert res.returncode == 1
    assert "failed in code cell" in res.stderr and "ClaimsFailed" in res.stderr and "tiny-n" in res.stderr
    assert json.loads((_run_folder(res.stdout) / "run.json").read_text())["status"] == "failed"


@pytest.mark.slow
def test_cli_nan_claim_is_invalid_and_exits_1(tmp_path):
    res = nlcl("run", str(TINY), "-p", "make_nan", "true", "--quiet", runs=tmp_path)
    assert res.returncode == 1
    assert "invalid claims (NaN or infinite measurement): tiny-n" in res.stderr


@pytest.mark.slow
def test_cli_error_in_kernel_before_start_reports_no_stale_claims(tmp_path):
    ok = nlcl("run", str(TINY), "--quiet", runs=tmp_path)
    assert ok.returncode == 0 and "claims 1/1 pass" in ok.stdout
    # a parameter error found only inside the kernel (NLCL_DEVICE=cuda with no CUDA here; -p device
    # cuda is answered before any kernel starts): usage error, and the earlier run's claims are not
    # reported
    res = nlcl("run", str(TINY), "--quiet", runs=tmp_path, env_extra={"NLCL_DEVICE": "cuda"})
    assert res.returncode == 2, res.stdout + res.stderr
    assert "claims 0/0 pass" in res.stdout and "CUDA is not available" in res.stderr
    assert _run_folder(res.stdout) != _run_folder(ok.stdout)


@pytest.mark.slow
def test_cli_two_concurrent_runs_see_only_their_own_results(tmp_path):
    import os

    env = {**os.environ, "NLCL_RUNS_DIR": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [*NLCL, "run", str(TINY), "-p", "n", str(n), "--quiet"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (4, 7)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for (out, err), n in zip(outs, (4, 7)):
        assert f"tiny-n: measured {n}, check = {n}" in out, out + err
        assert "claims 1/1 pass" in out
    assert _run_folder(outs[0][0]) != _run_folder(outs[1][0])


@pytest.mark.slow
def test_ctrl_c_is_remembered_even_if_swallowed():
    """A SIGINT during a run is remembered: run() ends the run as interrupted even where the kernel
    client caught the KeyboardInterrupt (it did so under load while the kernel was starting)."""
    import os
    import signal
    import time

    before = signal.getsignal(signal.SIGINT)
    ctrl_c = notebook._CtrlC()
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)  # the handler runs between bytecodes
        assert ctrl_c.seen
    finally:
        ctrl_c.restore()
    assert signal.getsignal(signal.SIGINT) is before


def test_cli_ctrl_c_exits_130_and_marks_the_run_interrupted(tmp_path):
    import os
    import signal
    import time

    env = {**os.environ, "NLCL_RUNS_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [*NLCL, "run", str(TINY), "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    line = proc.stdout.readline()
    assert "run folder" in line
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    assert issubclass(notebook.Interrupted, KeyboardInterrupt)
    assert err.strip().count("\n") == 0 and err.startswith("nlcl: interrupted"), err
    assert json.loads((_run_folder(line) / "run.json").read_text())["status"] == "interrupted"


@pytest.mark.slow
def test_papermill_path_rejects_unknown_parameter_and_writes_a_run_folder(tmp_path):
    import os

    import jupytext
    import papermill as pm

    nb_path = tmp_path / "tiny.ipynb"
    jupytext.write(jupytext.read(str(TINY)), str(nb_path))
    os.environ["NLCL_RUNS_DIR"] = str(tmp_path / "runs")
    try:
        kernel = notebook.ensure_kernel()
        with pytest.raises(pm.PapermillExecutionError, match=r"has no parameter 'nn'; did you mean 'n'"):
            pm.execute_notebook(
                str(nb_path),
                str(tmp_path / "o.ipynb"),
                parameters={"nn": 3},
                kernel_name=kernel,
                progress_bar=False,
            )
        pm.execute_notebook(
            str(nb_path),
            str(tmp_path / "o.ipynb"),
            parameters={"n": 3},
            kernel_name=kernel,
            progress_bar=False,
        )
    finally:
        del os.environ["NLCL_RUNS_DIR"]
    (folder,) = (tmp_path / "runs" / "tiny-chapter").iterdir()
    assert json.loads((folder / "claims" / "tiny-chapter.json").read_text())[0]["measured"] == 3
    assert json.loads((folder / "run.json").read_text())["status"] == "complete"


@pytest.mark.parametrize(
    "args,msg",
    [
        (("-p", "no_such_param", "1"), "no parameter 'no_such_param'"),
        (("-p", "activaton", "relu"), "did you mean 'activation'"),
        (("-p", "n_grid", "many"), "parameter n_grid='many' is not allowed; expected an int"),
        (("-p", "n_grid", "-1"), "n_grid=-1 is not allowed; expected an int in [16, 10000000]"),
        (("-p", "n_grid", "1000000000"), "n_grid=1000000000 is not allowed"),
        (("-p", "activation", "foo"), "activation='foo' is not allowed; expected one of 'linear'"),
        (("-p", "angles", "[]"), "parameter angles=[] has 0 items"),
        (("-p", "seed", str(2**80)), "parameter seed=1208925819614629174706176 is not allowed"),
        (("-p", "device", "gpu"), "device='gpu' is not allowed"),
        (("-p", "seed", "1", "-p", "seed", "2"), "given twice"),
        (("-o", "/proc/nlcl/x.ipynb"), "cannot write the notebook there"),
        (("-o", "README.md/x.ipynb"), "cannot write the notebook there"),
        (("-f", "no-such.yaml"), "cannot read it"),
    ],
)
def test_cli_usage_errors_exit_2_at_once(tmp_path, args, msg):
    res = nlcl("run", "tian-fig8-landscape", *args, runs=tmp_path)
    assert res.returncode == 2, res.stdout + res.stderr
    assert msg in res.stderr and res.stderr.startswith("nlcl: error:")
    assert "Traceback" not in res.stderr and not (tmp_path / "tian-fig8-landscape").exists()


def test_cli_usage_paths_stay_light():
    code = (
        "import sys\n"
        "from nlcl.harness.run.cli import main\n"
        "for argv in (['list'], ['list', 'tian-fig8-landscape'], ['run', 'tian-fig8-landscape', '-p', 'n_grid', '-1']):\n"
        "    main(argv)\n"
        "print(sorted(m for m in ('torch', 'numpy', 'pandas', 'papermill', 'nbformat', 'jupytext') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_cli_unknown_chapter(tmp_path):
    res = nlcl("run", "no-such-chapter", runs=tmp_path)
    assert res.returncode == 2 and "available chapters" in res.stderr and "tian-fig8-landscape" in res.stderr


def test_cli_list():
    res = nlcl("list")
    assert res.returncode == 0 and "tian-fig8-landscape" in res.stdout
    res = nlcl("list", "tian-fig8-landscape")
    assert res.returncode == 0 and "n_grid (int | None) = None" in res.stdout
    assert "allowed: an int in [16, 10000000], or None; ci 3600, full 36000" in res.stdout


def test_cli_help_documents_exit_codes():
    res = nlcl("--help")
    assert res.returncode == 0 and "130" in res.stdout and "usage error" in res.stdout


def test_cli_bad_profile_is_usage_error():
    res = nlcl("book", "--profile", "paper")
    assert res.returncode == 2 and "invalid choice" in res.stderr


@pytest.mark.slow
def test_cli_fig8_linear(tmp_path):
    res = nlcl("run", "tian-fig8-landscape", "-p", "activation", "linear", "--quiet", runs=tmp_path)
    assert res.returncode == 0, res.stderr
    folder = _run_folder(res.stdout)
    claims = {c["id"]: c for c in json.loads((folder / "claims" / "tian-fig8-landscape.json").read_text())}
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
    assert "`tiny-n`" in report and "✓ pass" in report
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


@pytest.mark.slow
def test_build_book_only_keeps_the_other_chapters(tmp_path, monkeypatch):
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    root = _mini_book(tmp_path, TINY.read_text())
    (root / "book" / "tiny-two.py").write_text(TINY.read_text().replace('"tiny-chapter"', '"tiny-two"'))
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    toc["parts"][0]["chapters"].append({"file": "book/tiny-two"})
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    lines = []
    cwd = Path.cwd()
    assert site.build_book(root=root, jobs=2, site=False, echo=lines.append) == 0
    # two chapters in threads at once: papermill's process-wide chdir used to leave us in `root`
    assert Path.cwd() == cwd
    build = root / "_build"
    kept = (build / "claims" / "tiny-two.json").read_text()
    assert json.loads(kept)[0]["chapter"] == "tiny-two"
    assert site.build_book(root=root, only=["tiny-chapter"], site=False, echo=lines.append) == 0
    assert (build / "claims" / "tiny-two.json").read_text() == kept
    assert set(json.loads((build / "timings.json").read_text())) == {"tiny-chapter", "tiny-two"}
    report = (build / "staging" / "book" / "reproducibility.md").read_text()
    assert "tiny-two" in report and "tiny-chapter" in report
    assert not (root / "runs").exists()  # the book writes only _build


def test_kernel_manager_adds_env_to_this_kernel_only(tmp_path, monkeypatch):
    """run_chapter(env=...) reaches the kernel's environment (nlcl book's NLCL_CONCURRENT, thread
    counts) without touching this process's, which other chapters' threads share."""
    import asyncio
    import os

    from jupyter_client.manager import AsyncKernelManager

    seen = {}

    async def fake_start(self, **kw):
        seen.update(kw)

    monkeypatch.setattr(AsyncKernelManager, "start_kernel", fake_start)
    monkeypatch.setenv("NLCL_TEST_OUTER", "kept")
    cls = notebook._kernel_manager_class(tmp_path / "k.log", tmp_path, {"NLCL_CONCURRENT": "1"})
    asyncio.run(cls().start_kernel())
    seen["stderr"].close()
    assert seen["env"]["NLCL_CONCURRENT"] == "1" and seen["env"]["NLCL_TEST_OUTER"] == "kept"
    assert "NLCL_CONCURRENT" not in os.environ and seen["cwd"] == str(tmp_path)
    seen.clear()
    asyncio.run(notebook._kernel_manager_class(tmp_path / "k.log", tmp_path)().start_kernel())
    seen["stderr"].close()
    assert "env" not in seen  # no env given: jupyter's default (this process's environment)
