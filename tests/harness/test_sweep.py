"""Tests for nlcl.harness.run.sweep and ``nlcl sweep``: grids, keys, a LocalCluster sweep with a failing
point and a resumed sweep, and a sweep against a separately started scheduler and worker."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.harness.run import sweep
from nlcl.harness.run.cli import main
from nlcl.harness.run.sweep import (
    SweepResult,
    expand_grid,
    inputs_sha256,
    parse_values,
    point_key,
    run_sweep,
    summarize_sweep,
)

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"


def test_parse_values():
    assert parse_values("seed", "0..3") == [0, 1, 2, 3]
    assert parse_values("lr", "0.1, 1e-2") == [0.1, 0.01]
    assert parse_values("act", "relu,linear") == ["relu", "linear"]
    assert parse_values("flag", "True,False") == [True, False]
    for bad in ("", "3..1", "a..b", "1,,2"):
        with pytest.raises(ParameterError):
            parse_values("x", bad)


@given(
    st.dictionaries(
        st.sampled_from("abc"), st.lists(st.integers(), min_size=1, max_size=3, unique=True), min_size=1
    )
)
def test_expand_grid_is_the_cartesian_product(grid):
    points = expand_grid(grid)
    n = 1
    for v in grid.values():
        n *= len(v)
    assert len(points) == n and len({tuple(sorted(p.items())) for p in points}) == n


def test_expand_grid_rejects_empty_and_repeated_values():
    with pytest.raises(ParameterError, match="no values"):
        expand_grid({"a": []})
    with pytest.raises(ParameterError, match="repeats"):
        expand_grid({"a": [1, 1]})


def test_point_key_is_stable_and_sensitive():
    k = point_key("h", "ci", {"a": 1, "b": 2})
    assert k == point_key("h", "ci", {"b": 2, "a": 1})
    assert k != point_key("h2", "ci", {"a": 1, "b": 2}) != point_key("h", "full", {"a": 1, "b": 2})


def test_inputs_hash_follows_the_chapter_its_modules_and_its_committed_artifacts(tmp_path, monkeypatch):
    """A resumed sweep must not reuse points made with other code or other committed artifacts."""
    from nlcl.harness.records import sources

    (tmp_path / "book").mkdir()
    (tmp_path / "results").mkdir()
    chapter = tmp_path / "book" / "ch.py"
    chapter.write_text("x = 1\n")
    (tmp_path / "results" / "ch-full.json").write_text("{}")
    (tmp_path / "results" / "other-full.json").write_text("{}")
    base = inputs_sha256(chapter, tmp_path)
    assert inputs_sha256(chapter, tmp_path) == base
    (tmp_path / "results" / "other-full.json").write_text('{"a": 1}')  # another chapter's artifact
    assert inputs_sha256(chapter, tmp_path) == base
    (tmp_path / "results" / "ch-full.json").write_text('{"a": 1}')
    changed_artifact = inputs_sha256(chapter, tmp_path)
    assert changed_artifact != base
    monkeypatch.setattr(sources, "modules_sha256", lambda *a, **k: "another module hash")
    assert inputs_sha256(chapter, tmp_path) != changed_artifact
    monkeypatch.undo()
    chapter.write_text("x = 2\n")
    assert inputs_sha256(chapter, tmp_path) != changed_artifact


def test_summarize_sweep():
    table = pd.DataFrame(
        {
            "seed": [0, 1, 2],
            "claim": ["c", "c", "c"],
            "measured": [1.0, 2.0, 3.0],
            "status": ["pass", "pass", "fail"],
        }
    )
    s = summarize_sweep(table).iloc[0]
    assert s.points == 3 and s.holds_fraction == pytest.approx(2 / 3) and s["mean"] == 2.0 and s["std"] == 1.0


def test_sweep_rejects_bad_values_before_starting_workers(tmp_path):
    with pytest.raises(ParameterError, match="scale"):
        run_sweep(TINY, {"scale": ["x"]}, out=tmp_path, root=ROOT, echo=lambda s: None)
    assert main(["sweep", str(TINY)]) == 2


def test_local_sweep_registers_the_kernel_before_starting_workers(tmp_path, monkeypatch):
    # workers each registering it at once on a machine without it raced (seen with nlcl book's threads)
    from nlcl.core import cluster
    from nlcl.harness.run import notebook

    calls = []

    def no_cluster(*a, **k):
        calls.append("cluster")
        raise RuntimeError("stop here")

    monkeypatch.setattr(notebook, "ensure_kernel", lambda: calls.append("kernel"))
    monkeypatch.setattr(cluster, "dask_client", no_cluster)
    with pytest.raises(RuntimeError, match="stop here"):
        run_sweep(TINY, {"n": [2, 3]}, workers=2, out=tmp_path, root=ROOT, echo=lambda s: None)
    assert calls == ["kernel", "cluster"]


@pytest.mark.slow
def test_local_cluster_sweep_with_a_failing_point_and_resume(tmp_path):
    grid = {"n": [2, 3], "must_fail": [False, True]}
    res = run_sweep(TINY, grid, workers=2, out=tmp_path, root=ROOT, progress=False, echo=lambda s: None)
    assert isinstance(res, SweepResult)
    assert len(res.points) == 4 and len(res.failed) == 2 and res.skipped == 0
    t = pd.read_csv(tmp_path / "table.csv")
    assert set(t.status) == {"pass", "fail"} and sorted(t.n.unique()) == [2, 3]
    s = pd.read_csv(tmp_path / "summary.csv")
    assert s.loc[s.claim == "tiny-n", "holds_fraction"].item() == 0.5
    assert (tmp_path / "summary.png").stat().st_size > 0
    # Resumed: the two finished points are skipped, the two failed ones run again.
    again = run_sweep(TINY, grid, workers=2, out=tmp_path, root=ROOT, progress=False, echo=lambda s: None)
    assert again.skipped == 2 and len(again.points) == 4


@pytest.mark.slow
def test_sweep_against_a_separately_started_scheduler(tmp_path):
    bin_dir = Path(sys.executable).parent
    dask = str(bin_dir / "dask")
    file = tmp_path / "scheduler.json"
    env = {**os.environ, "NLCL_ROOT": str(ROOT)}
    sched = subprocess.Popen(
        [
            dask,
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--scheduler-file",
            str(file),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = None
    try:
        for _ in range(200):
            if file.is_file() and file.stat().st_size:
                break
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        worker = subprocess.Popen(
            [dask, "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        res = run_sweep(
            TINY,
            {"n": [1, 2]},
            scheduler=address,
            out=tmp_path / "s",
            root=ROOT,
            progress=False,
            echo=lambda s: None,
        )
        assert len(res.points) == 2 and not res.failed
        assert sorted(res.table["measured"]) == [1, 2]
    finally:
        for p in (worker, sched):
            if p is not None:
                p.terminate()
                p.wait(timeout=30)


@pytest.mark.parametrize("concurrent", [True, False])
def test_sweep_point_tells_the_kernel_whether_other_points_run_beside_it(tmp_path, monkeypatch, concurrent):
    """Points of a sweep that run at the same time share the CPU: their timing claims are shown,
    not gated (NLCL_CONCURRENT=1 in the kernel's environment); a point run alone gates them."""
    from nlcl.harness.claims import verdicts
    from nlcl.harness.run import notebook

    monkeypatch.setenv("NLCL_BUILD_DIR", str(tmp_path))  # restored after the test
    monkeypatch.setenv(verdicts.CONCURRENT_ENV, "")
    seen = {}

    def fake_run_chapter(chapter, **kw):
        seen["concurrent"] = verdicts.concurrent_run()
        return notebook.ChapterResult(chapter, tmp_path / "x.ipynb", 0.0, True)

    monkeypatch.setattr(notebook, "run_chapter", fake_run_chapter)
    out = sweep._run_point("ch", {}, "ci", str(tmp_path / "p"), str(tmp_path), concurrent)
    assert out["ok"] and seen["concurrent"] is concurrent


def test_a_full_point_saves_its_artifacts_into_a_results_copy_of_its_own(tmp_path, monkeypatch):
    """A full run saves its chapter's artifacts; points of one full sweep run side by side, so each
    saves into a copy of the results folder of its own and the committed one stays as it was
    (a ci point reads the committed folder)."""
    from nlcl.harness.records import results
    from nlcl.harness.run import notebook

    committed = tmp_path / "results"
    (committed / "held-out" / "sets").mkdir(parents=True)
    (committed / "ch-full.json").write_text("committed")
    monkeypatch.setenv("NLCL_BUILD_DIR", str(tmp_path))
    monkeypatch.delenv("NLCL_RESULTS_DIR", raising=False)
    seen = []

    def fake_run_chapter(chapter, **kw):
        here = results.results_dir()
        seen.append(here)
        (here / "ch-full.json").write_text(f"written by {kw['parameters']}")
        return notebook.ChapterResult(chapter, tmp_path / "x.ipynb", 0.0, True)

    monkeypatch.setattr(notebook, "run_chapter", fake_run_chapter)
    for seed in (1, 2):
        out = sweep._run_point("ch", {"seed": seed}, "full", str(tmp_path / f"p{seed}"), str(tmp_path))
        assert out["ok"]
    assert seen == [tmp_path / "p1" / "results", tmp_path / "p2" / "results"]
    assert (committed / "ch-full.json").read_text() == "committed"
    assert (tmp_path / "p1" / "results" / "ch-full.json").read_text() == "written by {'seed': 1}"
    assert not (tmp_path / "p1" / "results" / "held-out").exists()  # the held-out records stay out
    assert "NLCL_RESULTS_DIR" not in os.environ  # restored after the point
    # a results folder named by NLCL_RESULTS_DIR is the one copied, and named again afterwards
    monkeypatch.setenv("NLCL_RESULTS_DIR", str(committed))
    sweep._run_point("ch", {"seed": 3}, "full", str(tmp_path / "p3"), str(tmp_path / "elsewhere"))
    assert seen[-1] == tmp_path / "p3" / "results" and os.environ["NLCL_RESULTS_DIR"] == str(committed)
    assert (committed / "ch-full.json").read_text() == "committed"
    sweep._run_point("ch", {"seed": 4}, "ci", str(tmp_path / "p4"), str(tmp_path))  # ci: as it was
    assert seen[-1] == committed and (committed / "ch-full.json").read_text() == "written by {'seed': 4}"


def test_point_results_is_a_fresh_copy_without_the_held_out_records(tmp_path):
    committed = tmp_path / "results"
    (committed / "held-out-full" / "sets").mkdir(parents=True)
    (committed / "ch-full.json").write_text("committed")
    own = sweep.point_results(tmp_path / "p", committed)
    assert own == tmp_path / "p" / "results" and (own / "ch-full.json").read_text() == "committed"
    assert not (own / "held-out-full").exists()
    (own / "stale.json").write_text("from an earlier try")
    assert not (sweep.point_results(tmp_path / "p", committed) / "stale.json").exists()  # fresh each time
    assert list(sweep.point_results(tmp_path / "q", tmp_path / "none").iterdir()) == []
