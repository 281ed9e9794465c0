"""A chapter's measured run time from the book benchmark records (nlcl.harness.records.run_time)."""

from __future__ import annotations

import json
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nlcl.harness.records import run_time
from nlcl.harness.records.provenance import repo_root
from nlcl.harness.run.notebook import chapters


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


def test_entry_names_time_build_machine_commit_and_date():
    assert run_time.record_run_time(_record({"a": 333.57}), "a", "full") == {
        "profile": "full",
        "time": "5.6 minutes",
        "how": "in a whole-book build, 2 chapters at a time on a 2-core AMD EPYC",
        "when": "bdf7a4d, 2026-11-27",
    }


def test_entry_names_the_cpu_family_where_the_record_has_it():
    rec = _record({"a": 333.57})
    rec["machine"]["cpu_generation"] = "AuthenticAMD 26/2"
    assert run_time.record_run_time(rec, "a", "full")["how"].endswith("on a 2-core AMD EPYC (family 26)")
    rec["machine"]["cpu_generation"] = None  # not readable there: the model name alone
    assert run_time.record_run_time(rec, "a", "full")["how"].endswith("on a 2-core AMD EPYC")
    rec["numerics"]["cpu_generation"] = "AuthenticAMD 25/17"  # where records made from fb7585a on keep it
    assert run_time.record_run_time(rec, "a", "full")["how"].endswith("on a 2-core AMD EPYC (family 25)")


def test_entry_says_one_chapter_at_a_time_worker_processes_and_a_gpu():
    rec = _record({"a": 40.0}, command="nlcl book --profile ci", workers={"a": 3}, date=None)
    rec["machine"]["device"] = "NVIDIA H200"
    entry = run_time.record_run_time(rec, "a", "ci")
    assert entry["time"] == "40 s on 3 worker processes" and entry["when"] == "bdf7a4d"
    assert entry["how"] == "in a whole-book build, one chapter at a time on NVIDIA H200"


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
def test_entry_is_none_without_a_number_for_the_chapter(rec):
    assert run_time.record_run_time(rec, "a", "full") is None


def _write(tmp_path, name, rec):
    (tmp_path / "results").mkdir(exist_ok=True)
    (tmp_path / "results" / name).write_text(rec if isinstance(rec, str) else json.dumps(rec))


def test_sentence_shares_how_the_records_were_measured(tmp_path):
    _write(tmp_path, "book-full-bench-cpu.json", _record({"a": 333.57}))
    _write(tmp_path, "book-ci-bench-cpu.json", _record({"a": 25.4}, commit="3472b82aa", date="2026-11-28"))
    assert run_time.run_time_sentence("a", tmp_path) == (
        "ci profile 25 s (3472b82, 2026-11-28), full profile 5.6 minutes (bdf7a4d, 2026-11-27), "
        "each measured in a whole-book build, 2 chapters at a time on a 2-core AMD EPYC."
    )


def test_sentence_names_each_machine_and_a_profile_without_record(tmp_path):
    _write(tmp_path, "book-full-bench-cpu.json", _record({"a": 333.57}))
    _write(tmp_path, "book-full-bench-gpu.json", _record({"a": 61.0}, machine={"device": "NVIDIA H100"}))
    _write(tmp_path, "book-ci-bench-cpu.json", "not json")
    assert run_time.run_time_sentence("a", tmp_path) == (
        "full profile 5.6 minutes in a whole-book build, 2 chapters at a time on a 2-core AMD EPYC "
        "(bdf7a4d, 2026-11-27), full profile 61 s in a whole-book build, 2 chapters at a time on "
        "NVIDIA H100 (bdf7a4d, 2026-11-27); ci profile not yet timed."
    )
    assert run_time.run_time_sentence("b", tmp_path) == "not yet timed in a whole-book build."


def test_sentence_of_a_single_record_and_outside_the_repository(tmp_path, monkeypatch):
    _write(tmp_path, "book-full-bench-cpu.json", _record({"a": 6.03}))
    assert run_time.run_time_sentence("a", tmp_path) == (
        "full profile 6 s (bdf7a4d, 2026-11-27), measured in a whole-book build, 2 chapters at a time "
        "on a 2-core AMD EPYC; ci profile not yet timed."
    )
    monkeypatch.setenv("NLCL_ROOT", str(tmp_path / "nowhere"))
    assert "not yet timed" in run_time.run_time_sentence("a")


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
