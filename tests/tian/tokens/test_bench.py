"""Smoke test of nlcl.tian.tokens.bench (no timing assertions)."""

import json

import pytest

from nlcl.core.validate import ParameterError
from nlcl.tian.tokens.bench import (
    format_benchmark,
    matmul_peak_gflops,
    reference_runs,
    run_benchmark,
    step_flops,
    table_step_flops,
    time_reference_steps,
)


def test_step_flops_grows_with_M():
    assert step_flops(100) > step_flops(10) > 0


def test_table_step_flops_counts_fewer_than_the_network():
    assert table_step_flops(100) > table_step_flops(10) > table_step_flops(10, "quadratic") > 0
    # the tables engine does far less arithmetic than the per-sample network at large M
    assert step_flops(100) > 5 * table_step_flops(100)
    with pytest.raises(ParameterError, match="loss"):
        table_step_flops(10, "hinge")


def test_peak_is_positive():  # re-exported from nlcl.core.speed (tested there)
    assert matmul_peak_gflops(64, repeats=1) > 0


def test_quick_benchmark_writes_json(tmp_path, monkeypatch):
    import nlcl.tian.tokens.bench as bench

    monkeypatch.setattr(bench, "paper_grid", _small_grid)
    out = tmp_path / "bench.json"
    res = run_benchmark(quick=True, steps=1, out=out)
    stored = json.loads(out.read_text())
    assert stored["grid_runs_total"] == res["grid_runs_total"]
    for key in (
        "matmul_peak_gflops",
        "grid_ms_per_step_per_config_cpu",
        "achieved_gflops",
        "achieved_gflops_engine",
        "projected_full_grid_min_dedicated",
    ):
        assert stored[key] > 0
    assert stored["engine"] == "auto"
    text = format_benchmark(res)
    assert "matmul peak" in text and "projected full grid" in text
    ref = stored["reference_steps"]
    assert set(ref) == {"1", "16"} and ref["16"]["tables"]["roofline_ratio"] > 1
    assert "reference step" in text and "its FLOP time at the peak" in text


def test_benchmark_rejects_unknown_engine(tmp_path):
    with pytest.raises(ParameterError, match="engine"):
        run_benchmark(quick=True, steps=1, out=None, engine="fast")


def _small_grid():
    from nlcl.tian.tokens.grid import paper_grid

    return paper_grid(["fig9"], seeds=[0], activations=["relu"], betas=[1, 5], Ps=[1, 3])


def test_time_stack_reports_positive_times():
    from nlcl.tian.tokens.bench import time_stack
    from nlcl.tian.tokens.grid import TokenRun

    runs = [TokenRun("relu", beta=1, P=3, seed=s) for s in range(2)]
    for engine in ("tables", "autograd"):
        wall, cpu = time_stack(runs, 2, batch_size=8, warmup=1, engine=engine)
        assert wall > 0 and cpu > 0


def test_benchmark_with_worker_processes(tmp_path, monkeypatch):
    import nlcl.tian.tokens.bench as bench

    monkeypatch.setattr(bench, "paper_grid", _small_grid)
    res = run_benchmark(quick=True, steps=1, out=None, workers=2)
    assert res["workers"] == 2 and res["projected_full_grid_min_wall"] > 0
    with pytest.raises(ParameterError, match="workers"):
        run_benchmark(quick=True, steps=1, out=None, workers=0)


def test_reference_step_flops_counted_from_the_shapes():
    # M = βP = 25, d_out = 50, N = 128, K = 10, 20 tokens: table products 3·2·K·2T·M·d_out,
    # gather + scatter 2·2N·K·d_out, InfoNCE similarities and their gradient 2·2·N²·d_out
    (run,) = reference_runs(1)
    assert run.M == 25 and run.bn == "mean" and run.loss == "infonce"
    expected = 3 * 2 * 10 * 40 * 25 * 50 + 2 * 256 * 10 * 50 + 2 * 2 * 128 * 128 * 50
    assert table_step_flops(run.M, "infonce", out_dim=50) == expected == 6_532_800


def test_time_reference_steps_interleaves_engines(monkeypatch):
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")  # the fused step run eagerly: no compiler needed here
    res = time_reference_steps(
        (1, 2), ("tables", "fused"), steps=1, repeats=2, peak_gflops=100.0, batch_size=16
    )
    for R in ("1", "2"):
        for engine in ("tables", "fused"):
            v = res[R][engine]
            assert v["ms_cpu"] > 0 and v["ms_wall"] > 0 and v["roofline_ratio"] > 0
            assert v["flops_per_config_step"] == table_step_flops(25, out_dim=50, batch_size=16)
    assert res["1"]["fused"]["backend"] == "eager" and res["1"]["tables"]["compile_s"] is None
    with pytest.raises(ParameterError, match="engine"):
        time_reference_steps((1,), ("fast",), steps=1, repeats=1)


def test_a_cuda_record_prints_the_reference_step_in_wall_time():
    entry = {
        "tables": dict(ms_cpu=9.0, ms_wall=2.0, flops_per_config_step=1e6, roofline_ratio=5.0),
        "fused": dict(ms_cpu=9.0, ms_wall=0.5, flops_per_config_step=1e6, roofline_ratio=1.0),
    }
    res = dict(
        device="cuda:0 (NVIDIA H200)",
        threads=1,
        workers=1,
        engine="fused",
        matmul_peak_gflops=5e4,
        single_config_ms_per_step_cpu={},
        single_config_ms_per_step_wall={},
        grid_runs_timed=1,
        grid_runs_total=960,
        grid_ms_per_step_per_config_cpu=1.0,
        grid_ms_per_step_per_config_wall=1.0,
        achieved_gflops=1.0,
        fraction_of_peak=0.1,
        achieved_gflops_engine=1.0,
        fraction_of_peak_engine=0.1,
        projected_full_grid_min_dedicated=1.0,
        projected_full_grid_min_wall=1.0,
        note="",
        reference_config="ref",
        reference_steps={"16": entry},
    )
    text = format_benchmark(res)
    assert "best of interleaved repeats, wall time" in text and "fused 0.500 ms (9.000 CPU)" in text
    assert "fused speed-up: 4.00x" in text
    res["device"] = "cpu (1 threads)"
    assert "CPU time" in format_benchmark(res) and "fused speed-up: 1.00x" in format_benchmark(res)
