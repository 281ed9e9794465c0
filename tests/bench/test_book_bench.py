"""The whole-book benchmark record (nlcl.bench.book)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from nlcl.bench import book as book_bench
from nlcl.core.validate import ParameterError
from nlcl.harness.records.run_time import bench_record_path
from nlcl.harness.site.schedule import load_costs


def _build(tmp_path: Path, profile: str = "full", ok: bool = True) -> Path:
    build = tmp_path / "_build"
    (build / "claims").mkdir(parents=True)
    timings = {
        "a": {"seconds": 100.0, "ok": ok, "profile": profile, "workers": 1},
        "b": {"seconds": 30.5, "ok": True, "profile": profile, "workers": 2},
    }
    (build / "timings.json").write_text(json.dumps(timings))
    claims = [
        {"id": "x", "status": "pass"},
        {"id": "y", "status": "pass"},
        {"id": "z", "status": "not-reproduced"},
    ]
    (build / "claims" / "a.json").write_text(json.dumps(claims))
    return build


def test_record_of_a_build_with_before_and_target(tmp_path):
    before = {"commit": "old", "wall_s": 500, "chapter_seconds_sum": 900, "chapters": {"a": 400.0}, "x": 1}
    rec = book_bench.make_record(
        _build(tmp_path),
        120.04,
        profile="full",
        command="nlcl book",
        commit="abc",
        before=before,
        target_s=100,
    )
    assert rec["chapters"] == {"a": 100.0, "b": 30.5} and rec["chapter_seconds_sum"] == 130.5
    assert rec["wall_s"] == 120.0 and rec["target_s"] == 100.0 and rec["meets_target"] is False
    assert rec["workers"] == {"b": 2} and rec["every_chapter_ok"] is True
    assert rec["claims"] == {"not-reproduced": 1, "pass": 2}
    assert rec["before"] == {
        k: before[k] for k in ("commit", "wall_s", "chapter_seconds_sum", "chapters")
    } | {"date": None}
    assert rec["commit"] == "abc" and rec["machine"]["cpu_cores"] >= 1 and "numerics" in rec
    assert {"cpu", "cpu_generation", "numpy_blas"} <= set(rec["numerics"])  # the CPU is named there
    json.dumps(rec)  # serialisable
    assert "target_s" not in book_bench.make_record(
        _build(tmp_path / "2"), 1.0, profile="full", command="c", commit="abc"
    )


def test_children_cpu_reports_user_and_system_seconds():
    used = book_bench.children_cpu()
    assert used is not None and set(used) == {"user", "system"} and min(used.values()) >= 0.0


def test_record_with_cpu_seconds(tmp_path):
    before = {"commit": "old", "wall_s": 5.0, "cpu_s": {"user": 9.0, "system": 1.0}}
    rec = book_bench.make_record(
        _build(tmp_path), 1.0, profile="full", command="c", commit="abc", before=before,
        cpu_s={"user": 8.04, "system": 0.26},
    )  # fmt: skip
    assert rec["cpu_s"] == {"user": 8.0, "system": 0.3} and rec["before"]["cpu_s"] == before["cpu_s"]
    assert "cpu_s" not in book_bench.make_record(
        _build(tmp_path / "2"), 1.0, profile="full", command="c", commit="a"
    )


def test_machine_speed_reports_three_positive_rates_and_restores_threads():
    import torch

    threads = torch.get_num_threads()
    speed = book_bench.machine_speed(scale=0.001, samples=3, repeats=1)
    rates = {"matmul_gflops", "copy_gbs", "dispatch_per_s"}
    assert set(speed) == rates | {"range"} and set(speed["range"]) == rates
    for name in rates:  # the median lies in its samples' range
        low, high = speed["range"][name]
        assert 0 < low <= speed[name] <= high
    assert torch.get_num_threads() == threads
    with pytest.raises(ParameterError, match="scale must be > 0, got 0"):
        book_bench.machine_speed(scale=0)


def test_speed_sampler_samples_while_the_block_runs():
    assert book_bench.dispatch_rate(100) > 0
    with book_bench.SpeedSampler(interval_s=0.01, calls=100) as sampler:
        time.sleep(0.3)
    summary = sampler.summary()
    assert summary["samples"] == len(sampler.samples) >= 2 and summary["interval_s"] == 0.01
    low, mid, high = (summary["dispatch_per_s"][k] for k in ("p10", "median", "p90"))
    assert 0 < low <= mid <= high and len(summary["series_k"]) == summary["samples"]
    assert not sampler._thread.is_alive()  # stopped on leaving the block
    assert book_bench.SpeedSampler(interval_s=60).summary() is None  # no sample yet
    with pytest.raises(ParameterError, match="interval_s must be > 0, got 0"):
        book_bench.SpeedSampler(interval_s=0)


def test_steal_seconds_is_a_count_or_none():
    steal = book_bench.steal_seconds()
    assert steal is None or steal >= 0.0
    if Path("/proc/stat").exists():
        assert steal is not None


def test_record_keeps_the_machine_speed(tmp_path):
    speed = {"before": {"matmul_gflops": 90.0}, "after": {"matmul_gflops": 80.0}, "steal_s": 0.0}
    rec = book_bench.make_record(_build(tmp_path), 1.0, profile="full", command="c", commit="a", speed=speed)
    assert rec["speed"] == speed
    assert "speed" not in book_bench.make_record(
        _build(tmp_path / "2"), 1.0, profile="full", command="c", commit="a"
    )


def test_the_record_is_what_the_scheduler_reads(tmp_path):
    rec = book_bench.make_record(_build(tmp_path), 120.0, profile="full", command="c", commit="abc")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "book-full-bench-cpu.json").write_text(json.dumps(rec))
    costs, sources = load_costs(["a", "b"], tmp_path / "nobuild", tmp_path, "full")
    assert costs == {"a": 100.0, "b": 30.5} and set(sources.values()) == {"results/book-full-bench-cpu.json"}


def test_record_refuses_a_build_of_another_profile_or_none(tmp_path):
    with pytest.raises(ParameterError, match="not of profile 'full'"):
        book_bench.make_record(_build(tmp_path, profile="ci"), 1.0, profile="full", command="c", commit="abc")
    with pytest.raises(ParameterError, match="build the book first"):
        book_bench.make_record(tmp_path / "empty", 1.0, profile="full", command="c", commit="abc")
    assert not book_bench.make_record(
        _build(tmp_path / "k", ok=False), 1.0, profile="full", command="c", commit="abc"
    )["every_chapter_ok"]


def test_the_record_path_names_the_device():
    assert bench_record_path("full", cuda=False) == Path("results/book-full-bench-cpu.json")
    assert bench_record_path("ci", cuda=True) == Path("results/book-ci-bench-gpu.json")


def test_main_times_the_build_and_keeps_the_previous_record_as_before(tmp_path, monkeypatch, capsys):
    build = _build(tmp_path)
    monkeypatch.setenv("NLCL_BUILD_DIR", str(build))
    monkeypatch.setenv("NLCL_COMMIT", "abc123")
    monkeypatch.setattr(book_bench, "machine_speed", lambda: {"matmul_gflops": 1.0})
    out = tmp_path / "bench.json"
    out.write_text(json.dumps({"commit": "old", "wall_s": 999.0, "chapter_seconds_sum": 1.0, "chapters": {}}))
    ok = f"{sys.executable} -c 'import time; time.sleep(0.3)'"
    args = ["--out", str(out), "--build-command", ok, "--target", "60", "--sample-every", "0.05"]
    assert book_bench.main(args) == 0
    rec = json.loads(out.read_text())
    assert rec["commit"] == "abc123" and rec["before"]["wall_s"] == 999.0 and rec["meets_target"] is True
    assert set(rec["cpu_s"]) == {"user", "system"} and min(rec["cpu_s"].values()) >= 0.0  # the child's
    assert rec["speed"]["before"] == rec["speed"]["after"] == {"matmul_gflops": 1.0}
    assert rec["speed"]["during"]["samples"] >= 1  # sampled while the build ran
    assert book_bench.steal_seconds() is None or rec["speed"]["steal_s"] >= 0.0
    assert "was 999.0 s at old" in capsys.readouterr().out
    # a failed build writes nothing
    out.unlink()
    fail = f"{sys.executable} -c 'raise SystemExit(3)'"
    assert book_bench.main(["--out", str(out), "--build-command", fail]) == 3
    assert not out.exists() and "no record written" in capsys.readouterr().err


def test_main_refuses_a_dirty_tree_and_bad_jobs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NLCL_COMMIT", "abc+dirty")
    assert book_bench.main(["--out", str(tmp_path / "o.json"), "--build-command", "true"]) == 2
    assert "uncommitted changes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        book_bench.main(["--jobs", "0"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        book_bench.main(["--sample-every", "0"])
    assert "--sample-every must be > 0 seconds, got 0.0" in capsys.readouterr().err
