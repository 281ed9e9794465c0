import re

import pytest

from nlcl.core.validate import ParameterError
from nlcl.harness.run import runs


def test_run_id_format():
    rid = runs.run_id({"a": 1})
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{6}-[0-9a-f]{4}", rid)
    assert rid.split("-")[1] == runs.run_id({"a": 1}).split("-")[1] != runs.run_id({"a": 2}).split("-")[1]


def test_new_run_dir_is_new_and_under_runs(tmp_path, monkeypatch):
    monkeypatch.delenv("NLCL_RUNS_DIR", raising=False)
    a = runs.new_run_dir(tmp_path, "ch", {"n": 1})
    b = runs.new_run_dir(tmp_path, "ch", {"n": 1})
    assert a != b and a.parent == b.parent == tmp_path / "runs" / "ch" and not any(a.iterdir())
    monkeypatch.setenv("NLCL_RUNS_DIR", "elsewhere")
    assert runs.runs_root(tmp_path) == tmp_path / "elsewhere"
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "file"))
    with pytest.raises(ParameterError, match="cannot create the run folder"):
        runs.new_run_dir(tmp_path, "ch", {})


def test_read_and_update_run(tmp_path):
    assert runs.read_run(tmp_path) == {}
    rec = runs.update_run(tmp_path, status="running", chapter="ch")
    assert rec["run_id"] == tmp_path.name and runs.read_run(tmp_path)["status"] == "running"
    runs.update_run(tmp_path, status="complete")
    assert runs.read_run(tmp_path) == {"status": "complete", "chapter": "ch", "run_id": tmp_path.name}
    with pytest.raises(ParameterError, match="status='done'"):
        runs.update_run(tmp_path, status="done")
