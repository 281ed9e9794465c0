"""The publishing workflow (.github/workflows/book.yml), the local gate (.ci/run) and Binder set-up.

The workflow is validated against the GitHub workflow JSON schema that ``check-jsonschema`` ships
(``--builtin-schema vendor.github-workflows``: vendored in the package, nothing is downloaded), and
its shape is checked: triggers, the same .ci/run stages as the local gate, and publication only
after the build job passed.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
STAGES = ("setup", "test", "numerics", "book", "timing", "linkcheck", "browser")


def _workflow() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text())
    # YAML 1.1 reads the key `on` as True.
    data["on"] = data.pop(True, data.get("on"))
    return data


def _check_jsonschema() -> str:
    exe = Path(sys.executable).parent / "check-jsonschema"
    found = str(exe) if exe.is_file() else shutil.which("check-jsonschema")
    if not found:
        pytest.skip("check-jsonschema is not installed (it is in the [test] extra)")
    return found


def test_workflow_matches_the_github_schema():
    proc = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on:", "runs_on:"))
    proc = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "runs-on" in proc.stdout


def test_workflow_triggers_and_publication():
    wf = _workflow()
    assert wf["on"]["push"]["branches"] == ["main"]
    assert wf["on"]["schedule"][0]["cron"].split()[2:] == ["*", "*", "*"], "nightly"
    jobs = wf["jobs"]
    build = jobs["build"]
    uses = [s.get("uses", "") for s in build["steps"]]
    runs = [s.get("run", "") for s in build["steps"]]
    assert any(u.startswith("actions/setup-python") for u in uses)
    setup_python = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert (
        setup_python["with"]["cache"] == "pip"
        and "constraints.txt" in setup_python["with"]["cache-dependency-path"]
    )
    # The build job runs every stage of the local gate, in the gate's order.
    assert [r for r in runs if r.startswith(".ci/run")] == [f".ci/run {s}" for s in STAGES]
    assert any(u.startswith("actions/upload-pages-artifact") for u in uses)
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_build/html"
    # Publication only after a green build (a failed chapter or claim keeps the previous site) and
    # only from main.
    for name in ("deploy", "notebooks"):
        assert jobs[name]["needs"] == "build"
        assert "refs/heads/main" in jobs[name]["if"]
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in jobs["deploy"]["steps"])
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert wf["permissions"] == {"contents": "read"}
    assert (
        "torch" in WORKFLOW.read_text() and "download.pytorch.org/whl/cpu" in wf["env"]["PIP_EXTRA_INDEX_URL"]
    )


def test_ci_run_has_the_stages_and_installs_chromium():
    ci = (ROOT / ".ci" / "run").read_text()
    for stage in STAGES:
        assert f"{stage})" in ci, f".ci/run has no stage {stage!r}"
    assert "chromium chromium-driver" in ci
    assert "linkcheck" in ci and "-m browser" in ci


def test_ci_run_rejects_an_unknown_stage():
    proc = subprocess.run(
        [str(ROOT / ".ci" / "run"), "nosuchstage"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 2
    assert "nosuchstage" in proc.stderr and "setup" in proc.stderr


def test_binder_installs_like_make_setup():
    post = (ROOT / "binder" / "postBuild").read_text()
    assert "-c constraints.txt" in post and "-e ." in post
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def test_repository_url_is_one_value_in_config():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = config["repository"]["url"]
    assert url.startswith("https://github.com/") and len(url.rstrip("/").split("/")) == 5
    assert config["repository"]["branch"] == "notebooks"
    assert config["launch_buttons"]["binderhub_url"] and config["launch_buttons"]["colab_url"]
    # The workflow's check reads the URL the same way (first `url:` line of _config.yml).
    first = next(
        line for line in (ROOT / "_config.yml").read_text().splitlines() if line.strip().startswith("url:")
    )
    assert first.split("url:", 1)[1].split("#")[0].strip() == url
