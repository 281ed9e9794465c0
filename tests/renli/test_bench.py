"""Tests for nlcl.renli.bench: the Ren & Li simulation step benchmark (latent vs direct engine)."""

from __future__ import annotations

import json

import pytest

from nlcl.core.validate import ParameterError
from nlcl.renli.bench import PROFILES, chapter_runs, run_benchmark, step_timer


def test_chapter_runs_match_the_chapter_grid():
    kap, seeds, lams = chapter_runs(2)
    assert len(kap) == len(seeds) == len(lams) == 2 * 11  # 6 main + 3 λ + 2 β₁ per seed
    assert lams.count(0.0) == 2 * 3 and sorted(set(seeds)) == [0, 1]
    assert PROFILES["full"]["n_seeds"] >= 5 and PROFILES["ci"]["n_seeds"] >= 3


def test_step_timer_runs_and_rejects_unknown_engine():
    for engine in ("latent", "direct"):
        step_timer(engine, width=8, batch_size=8, n_seeds=1, d=8, r=2)()
    with pytest.raises(ParameterError, match="engine"):
        step_timer("fast", width=8, batch_size=8, n_seeds=1)


def test_run_benchmark_writes_a_record(tmp_path):
    out = tmp_path / "bench.json"
    res = run_benchmark(
        repeats=1, out=out, profiles={"tiny": dict(width=8, batch_size=8, n_seeds=1, steps=10)}
    )
    row = json.loads(out.read_text())["profiles"]["tiny"]
    assert row == res["profiles"]["tiny"] and row["runs"] == 11
    assert row["latent_ms_per_step_wall"] > 0 and row["speedup_wall"] > 0
