"""Tests for nlcl.harness.site.schedule (issue 28 §3): ``nlcl book`` starts the longest chapters first by
the last timing record (then swaps pairs where the simulation predicts an earlier end) and gives a
chapter with a parallel loop more workers where that finishes sooner. No chapter is executed: the
runner is mocked."""

import json
import threading
import time
from pathlib import Path

import pytest
import yaml

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import verdicts
from nlcl.harness.run.notebook import ChapterResult, chapters
from nlcl.harness.site import build as site
from nlcl.harness.site import schedule
from nlcl.harness.site.schedule import Task, execute, load_costs, make_plan, simulate

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"
#: A full-profile build's chapter times: the record of 3c296ca (results/book-full-bench-cpu.json then,
#: 2 cores), kept as a fixture so that a new record does not change these tests' expectations.
FULL = json.loads((ROOT / "tests" / "fixtures" / "book-full-bench-cpu-3c296ca.json").read_text())["chapters"]


def test_longest_first_by_the_timing_record():
    costs = {"a": 10.0, "b": 300.0, "c": 50.0, "d": 50.0}
    plan = make_plan(["a", "b", "c", "d"], costs, 2)
    assert isinstance(plan, schedule.Plan) and plan.jobs == 2
    assert [t.chapter for t in plan.tasks] == ["b", "c", "d", "a"]  # ties keep the TOC order
    assert all(t.slots == 1 and t.parameters == {} for t in plan.tasks)
    assert plan.makespan == simulate(plan.tasks, 2) == 300.0


def test_unknown_chapters_start_first_in_toc_order_and_no_record_is_toc_order():
    plan = make_plan(["a", "new", "b", "other"], {"a": 1.0, "b": 5.0}, 2)
    assert [t.chapter for t in plan.tasks] == ["new", "other", "b", "a"]
    plan = make_plan(["x", "y", "z"], {}, 2)
    assert [t.chapter for t in plan.tasks] == ["x", "y", "z"] and plan.makespan is None
    assert "table-of-contents order" in plan.describe()


def test_the_committed_full_build_record_gives_a_shorter_schedule_than_toc_order():
    """With the full profile's times, the table-of-contents order predicts the 2,298 s the build took
    (the record of 3c296ca: chapters_executed_s 2297.7); longest first predicts 2,187 s, and the
    swaps after it 2,177 s (half the chapter sum is 2,175 s: no plan on 2 slots ends sooner).
    Two workers for tian-tokens from the start would take longer (its 1-worker time fits beside the
    other chapters), so the plan keeps it on one."""
    toc = list(chapters(ROOT))
    assert set(toc) == set(FULL)
    assert simulate([Task(c, 1, FULL[c]) for c in toc], 2) == pytest.approx(2297.1, abs=1)
    longest_first = schedule._order(toc, FULL, {}, 0.0)
    assert simulate(longest_first, 2) == pytest.approx(2187.3, abs=1)
    plan = make_plan(toc, FULL, 2, {"tian-tokens": 256}, {c: "bench" for c in toc})
    assert plan.tasks[0] == Task("tian-tokens", 1, FULL["tian-tokens"])
    assert sum(FULL.values()) / 2 <= plan.makespan == pytest.approx(2176.9, abs=1)
    assert plan.alternatives[(2,)] > plan.makespan
    assert "longest first by bench" in plan.describe() and "2177 s" in plan.describe()


def test_swaps_after_longest_first_remove_an_idle_tail():
    # longest first on 2 slots: 4 | 3, then 3 (3-6), 2 (4-6), and the last 2 alone (6-8): 8;
    # a swap gives 4 + 3 | 3 + 2 + 2 = 7
    costs = {"a": 4.0, "b": 3.0, "c": 3.0, "d": 2.0, "e": 2.0}
    assert simulate(schedule._order(list(costs), costs, {}, 0.0), 2) == 8.0
    plan = make_plan(list(costs), costs, 2)
    assert plan.makespan == simulate(plan.tasks, 2) == 7.0
    assert [t.chapter for t in plan.tasks[:2]] == ["a", "b"]  # the longest still start at once
    assert sorted(t.chapter for t in plan.tasks) == sorted(costs)
    # nothing to gain: the order stays longest first
    costs = {"a": 10.0, "b": 300.0, "c": 50.0, "d": 50.0}
    assert [t.chapter for t in make_plan(list(costs), costs, 2).tasks] == ["b", "c", "d", "a"]


def test_a_parallel_chapter_gets_the_idle_cores_when_that_finishes_sooner():
    # alone (nlcl book --only tian-tokens --jobs 2): both cores
    plan = make_plan(["tian-tokens"], FULL, 2, {"tian-tokens": 256})
    assert plan.tasks == [Task("tian-tokens", 2, FULL["tian-tokens"] / (2 * schedule.PARALLEL_EFFICIENCY))]
    assert plan.tasks[0].parameters == {"workers": 2}
    # the parallel chapter is the critical path: it takes both slots first, the others follow
    costs = {"grid": 1000.0, "a": 200.0, "b": 100.0}
    plan = make_plan(["a", "grid", "b"], costs, 2, {"grid": 8})
    assert [(t.chapter, t.slots) for t in plan.tasks] == [("grid", 2), ("a", 1), ("b", 1)]
    assert plan.makespan == pytest.approx(1000 / (2 * 0.89) + 200)
    # its declared maximum of workers is respected, and jobs=1 never gives more than one
    assert make_plan(["a", "grid", "b"], costs, 4, {"grid": 3}).tasks[0].slots == 3
    assert all(t.slots == 1 for t in make_plan(["a", "grid", "b"], costs, 1, {"grid": 8}).tasks)
    # without a timing record there is nothing to decide on: one worker
    assert make_plan(["grid", "a"], {"a": 1.0}, 2, {"grid": 8}).tasks[0] == Task("grid", 1, None)


def test_the_plan_is_deterministic():
    costs = {c: float(len(c) * 37 % 101) for c in FULL}
    plans = [make_plan(list(FULL), costs, 3, {"tian-tokens": 256}) for _ in range(3)]
    assert plans[0].tasks == plans[1].tasks == plans[2].tasks


def test_simulate_waits_for_the_slots_a_chapter_holds():
    tasks = [Task("a", 1, 10.0), Task("gang", 2, 5.0), Task("b", 1, 1.0)]
    assert simulate(tasks, 2) == 16.0  # gang waits for a; b for gang
    with pytest.raises(ParameterError, match="3 slots of 2"):
        simulate([Task("x", 3, 1.0)], 2)


def test_one_slot_seconds_counts_the_workers_a_chapter_had():
    assert schedule.one_slot_seconds({"seconds": 12.5}) == 12.5
    assert schedule.one_slot_seconds({"seconds": 100.0, "workers": 2}) == pytest.approx(178.0)
    for bad in ({}, {"seconds": "x"}, {"seconds": 0.0}, {"seconds": float("nan")}, {"seconds": True}):
        assert schedule.one_slot_seconds(bad) is None


def test_load_costs_prefers_the_last_build_then_the_committed_record(tmp_path):
    build, root = tmp_path / "_build", tmp_path / "repo"
    (root / "results").mkdir(parents=True)
    build.mkdir()
    bench = {"chapters": {"a": 100.0, "b": 200.0, "c": 300.0, "d": "n/a"}}
    (root / "results" / "book-full-bench-cpu.json").write_text(json.dumps(bench))
    timings = {
        "a": {"seconds": 50.0, "ok": True, "profile": "full"},
        "b": {"seconds": 20.0, "ok": False, "profile": "full"},  # failed: its time says little
        "c": {"seconds": 30.0, "ok": True, "profile": "ci"},  # another profile
        "t": {"seconds": 100.0, "ok": True, "profile": "full", "workers": 2},
    }
    (build / "timings.json").write_text(json.dumps(timings))
    costs, sources = load_costs(["a", "b", "c", "d", "t"], build, root, "full")
    assert costs == {"a": 50.0, "b": 200.0, "c": 300.0, "t": pytest.approx(178.0)}
    assert sources["a"] == "_build/timings.json" and sources["b"] == "results/book-full-bench-cpu.json"
    assert load_costs(["a"], build, root, "ci") == ({}, {})  # no ci record: table-of-contents order
    (build / "timings.json").write_text("{not json")
    assert load_costs(["a"], build, root, "full")[0] == {"a": 100.0}


def test_parallel_chapters_are_those_with_a_workers_parameter():
    found = schedule.parallel_chapters({"tian-tokens": ROOT / "book" / "tian-tokens.py", "tiny": TINY})
    assert found == {"tian-tokens": 256}


def test_execute_starts_in_plan_order_and_never_holds_more_slots_than_jobs():
    tasks = [Task("gang", 2), Task("a"), Task("b"), Task("c"), Task("gang2", 2), Task("d")]
    lock, state = threading.Lock(), {"held": 0, "most": 0}
    started, ended = [], []

    def run(task):
        with lock:
            started.append(task.chapter)
            state["held"] += task.slots
            state["most"] = max(state["most"], state["held"])
        time.sleep(0.02 if task.chapter != "a" else 0.06)
        with lock:
            state["held"] -= task.slots
        if task.chapter == "c":
            raise RuntimeError("boom")
        return task.chapter

    def done(task, fut):
        ended.append((task.chapter, fut.exception() is None))

    execute(tasks, 2, run, done)
    assert started == [t.chapter for t in tasks] and state["most"] == 2
    assert sorted(ended) == sorted((t.chapter, t.chapter != "c") for t in tasks)
    assert ended.index(("gang", True)) == 0  # it held both slots: nothing ran beside it
    with pytest.raises(ParameterError, match="slots=3"):
        execute([Task("x", 3)], 2, run, done)


def _mini_book(tmp_path) -> Path:
    """Three copies of the tiny chapter; one declares a parallel loop (``workers``)."""
    root = tmp_path / "book_root"
    (root / "book").mkdir(parents=True)
    (root / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    (root / "book" / "reproducibility.md").write_text((ROOT / "book" / "reproducibility.md").read_text())
    (root / "book" / "intro.md").write_text("# Mini\n")
    names = ["ch-short", "ch-grid", "ch-long"]
    for name in names:
        text = TINY.read_text().replace('"tiny-chapter"', f'"{name}"')
        if name == "ch-grid":
            text = text.replace(
                "make_nan: bool = False  # measure a NaN (an invalid claim)\n",
                "make_nan: bool = False  # measure a NaN (an invalid claim)\n"
                "workers: int = 1  # processes of the parallel loop\n",
            ).replace('"scale": {', '"workers": {"range": [1, 4]},\n        "scale": {')
        (root / "book" / f"{name}.py").write_text(text)
    toc = {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [
            {"caption": "C", "chapters": [{"file": f"book/{n}"} for n in names]},
            {"caption": "R", "chapters": [{"file": "book/reproducibility"}]},
        ],
    }
    (root / "_toc.yml").write_text(yaml.safe_dump(toc))
    return root


def test_build_book_runs_the_plan_with_a_mocked_runner(tmp_path, monkeypatch):
    """build_book orders by the previous build's timings, passes -p workers k to the parallel
    chapter, tells each kernel whether it runs beside others, and records the workers it gave."""
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    root = _mini_book(tmp_path)
    assert schedule.parallel_chapters({"ch-grid": root / "book" / "ch-grid.py"}) == {"ch-grid": 4}
    build = root / "_build"
    build.mkdir()
    previous = {
        "ch-short": {"seconds": 5.0, "ok": True, "profile": "ci"},
        "ch-grid": {"seconds": 400.0, "ok": True, "profile": "ci"},
        "ch-long": {"seconds": 100.0, "ok": True, "profile": "ci"},
    }
    (build / "timings.json").write_text(json.dumps(previous))
    calls = []

    def fake_run_chapter(path, *, parameters=None, env=None, run_dir=None, **kw):
        calls.append((Path(path).stem, dict(parameters or {}), dict(env or {})))
        return ChapterResult(Path(path).stem, Path(kw["output"]), 1.0, True)

    monkeypatch.setattr(site, "run_chapter", fake_run_chapter)
    # the kernelspec is registered once before the threads start (they raced on a fresh machine)
    monkeypatch.setattr(site, "ensure_kernel", lambda: calls.append(("ensure_kernel", {}, {})))
    lines = []
    assert site.build_book(root=root, jobs=2, site=False, echo=lines.append) == 0
    assert calls.pop(0)[0] == "ensure_kernel"
    assert [c[0] for c in calls] == ["ch-grid", "ch-long", "ch-short"]
    grid, long_, short = calls
    assert grid[1] == {"workers": 2} and long_[1] == short[1] == {}
    # the grid holds both slots (nothing beside it); the others run two at a time
    assert grid[2][verdicts.CONCURRENT_ENV] == "0" and grid[2]["NLCL_WORKER_THREADS"]
    assert long_[2] == short[2] == {verdicts.CONCURRENT_ENV: "1"}
    assert any("ch-grid (2 workers), ch-long, ch-short" in line for line in lines)
    timings = json.loads((build / "timings.json").read_text())
    assert timings["ch-grid"]["workers"] == 2 and timings["ch-long"]["workers"] == 1
    # the next build reads that back as a one-worker time of 2 · 0.89 · 1 s
    assert load_costs(["ch-grid"], build, root, "ci")[0]["ch-grid"] == pytest.approx(1.78)
    # serially (--jobs 1) nothing runs beside a chapter: timing claims gate
    calls.clear()
    assert site.build_book(root=root, jobs=1, site=False, echo=lines.append) == 0
    calls.pop(0)
    assert all(c[2] == {verdicts.CONCURRENT_ENV: "0"} and c[1] == {} for c in calls)
    # where CUDA is available the grid runs on the GPU in its own process: one slot, no workers
    calls.clear()
    monkeypatch.setattr(schedule, "gpu_present", lambda: True)
    assert site.build_book(root=root, jobs=2, site=False, echo=lines.append) == 0
    assert all(c[1] == {} for c in calls[1:]) and "ch-grid" in [c[0] for c in calls]


def test_gpu_present_needs_a_cuda_build_and_a_device(monkeypatch):
    import torch

    from nlcl.core import validate

    monkeypatch.setattr(validate, "cuda_unavailable", lambda: "no NVIDIA device")
    assert schedule.gpu_present() is False
    monkeypatch.setattr(validate, "cuda_unavailable", lambda: None)
    monkeypatch.delenv("NLCL_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert schedule.gpu_present() is False
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("NLCL_DEVICE", raising=False)
    assert schedule.gpu_present() is True
    monkeypatch.setenv("NLCL_DEVICE", "cpu")  # the chapters' device="auto" then means the CPU
    assert schedule.gpu_present() is False


@pytest.mark.slow
def test_a_failing_timing_claim_is_not_gated_in_a_concurrent_build_and_gates_alone(tmp_path, monkeypatch):
    """End to end, real kernels: NLCL_CONCURRENT reaches the chapter; a timing claim outside its
    tolerance does not fail ``nlcl book --jobs 2`` (status not-gated, shown in the report with the
    reason) and does fail ``nlcl book --jobs 1``."""
    monkeypatch.delenv("NLCL_BUILD_DIR", raising=False)
    monkeypatch.delenv(verdicts.CONCURRENT_ENV, raising=False)
    root = _mini_book(tmp_path)
    timed = (root / "book" / "ch-long.py").read_text()
    timed = timed.replace(
        'print("n =", P.n',
        'run.expect("tiny-time", source="test", statement="a time", check=exactly(-1), timing=True)'
        '.measure(P.n)\nprint("n =", P.n',
    )
    (root / "book" / "ch-long.py").write_text(timed)
    lines = []
    assert site.build_book(root=root, jobs=2, site=False, echo=lines.append) == 0, "\n".join(lines)
    claims = json.loads((root / "_build" / "claims" / "ch-long.json").read_text())
    rec = next(c for c in claims if c["id"] == "tiny-time")
    assert rec["status"] == "not-gated" and rec["outcome"] == "fail" and rec["required"]
    report = (root / "_build" / "staging" / "book" / "reproducibility.md").read_text()
    assert "## Timing claims not gated in this build" in report and "`tiny-time`" in report
    assert site.build_book(root=root, jobs=1, only=["ch-long"], site=False, echo=lines.append) == 1
    claims = json.loads((root / "_build" / "claims" / "ch-long.json").read_text())
    assert next(c for c in claims if c["id"] == "tiny-time")["status"] == "fail"
