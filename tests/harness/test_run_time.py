"""A chapter's measured run time from the book benchmark records (nlcl.harness.run_time)."""

from __future__ import annotations

import json
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nlcl.harness import run_time
from nlcl.harness.notebook import chapters
from nlcl.harness.provenance import repo_root


def _record(chapters_s, command="nlcl book --profile full --jobs 2", **extra):
    rec = {
        "command": command,
        "commit": "bdf7a4d98ccb",
        "date": "2026-11-27T21:03:23Z",
        "machine": {"cpu_cores": 2, "device": "cpu"},
        "numerics": {"cpu": "AMD EPYC"},
        "chapters": chapters_s,
        "workers": {},
    }
    return {**rec, **extra}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.2, "1 s"), (25.7, "26 s"), (89.4, "89 s"), (90, "1.5 minutes"), (333.57, "5.6 minutes")],
)
def test_format_seconds(seconds, text):
    assert run_time.format_seconds(seconds) == text


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, "3", True, None])
def test_format_seconds_rejects_what_is_not_a_duration(bad):
    with pytest.raises(ValueError, match="seconds="):
        run_time.format_seconds(bad)


def test_clause_names_profile_time_build_machine_commit_and_date():
    clause = run_time.record_run_time(_record({"a": 333.57}), "a", "full")
    assert clause == (
        "`full` profile: 5.6 minutes (a whole-book build, 2 chapters at a time on a 2-core AMD EPYC, "
        "bdf7a4d, 2026-11-27)"
    )


def test_clause_says_one_chapter_at_a_time_worker_processes_and_a_gpu():
    rec = _record({"a": 40.0}, command="nlcl book --profile ci", workers={"a": 3})
    rec["machine"]["device"] = "NVIDIA H200"
    clause = run_time.record_run_time(rec, "a", "ci")
    assert clause.startswith(
        "`ci` profile: 40 s (3 worker processes) (a whole-book build, one chapter at a time"
    )
    assert "on NVIDIA H200" in clause


@pytest.mark.parametrize(
    "rec",
    [
        {},
        {"chapters": []},
        _record({"b": 1.0}),
        _record({"a": None}),
        _record({"a": True}),
        _record({"a": "9"}),
    ],
)
def test_clause_is_none_without_a_number_for_the_chapter(rec):
    assert run_time.record_run_time(rec, "a", "full") is None


def test_sentence_reads_every_profile_cpu_and_gpu_records(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "book-full-bench-cpu.json").write_text(json.dumps(_record({"a": 333.57})))
    gpu = _record({"a": 61.0}, machine={"cpu_cores": 16, "device": "NVIDIA H100"})
    (tmp_path / "results" / "book-full-bench-gpu.json").write_text(json.dumps(gpu))
    (tmp_path / "results" / "book-ci-bench-cpu.json").write_text("not json")
    text = run_time.run_time_sentence("a", tmp_path)
    assert text.startswith("`ci` profile: not yet timed in a whole-book build; `full` profile: 5.6 minutes")
    assert text.endswith("on NVIDIA H100, bdf7a4d, 2026-11-27).")
    assert run_time.run_time_sentence("b", tmp_path).count("not yet timed") == 2


def test_glue_only_inside_a_kernel(monkeypatch):
    glued = []

    class FakeRun:
        chapter = "tian-tokens"

        def glue(self, name, value):
            glued.append((name, value))

    run = FakeRun()
    monkeypatch.setattr(InteractiveShell, "initialized", classmethod(lambda cls: False))
    assert run_time.glue_run_time(run) is run and glued == []
    monkeypatch.setattr(InteractiveShell, "initialized", classmethod(lambda cls: True))
    assert run_time.glue_run_time(run) is run
    assert glued == [("run-time", run_time.run_time_sentence("tian-tokens"))]


@pytest.mark.parametrize("chapter", sorted(chapters(repo_root())))
def test_chapter_states_its_run_time_from_the_records(chapter):
    """The "Expected run time" paragraph shows the glued measurement and types no duration of its own."""
    text = (repo_root() / "book" / f"{chapter}.py").read_text()
    paragraph = text.split("**Expected run time.**", 1)[1].split("\n#\n", 1)[0].split("\n\n", 1)[0]
    assert "{glue:text}`run-time`" in paragraph
    assert not re.search(r"\d\s*(s|seconds?|min|minutes?|hours?)\b", paragraph), paragraph
