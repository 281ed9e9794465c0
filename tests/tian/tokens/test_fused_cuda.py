"""The fused token step on CUDA (skipped without a GPU; run on a lent GPU, records in README).

The same two checks as ``test_fused.py`` (its docstring derives the tolerances), on the GPU: the
batch drawn in the step is bitwise the CPU sampler's (integer arithmetic), and the compiled step
(TorchInductor's Triton backend) is as close to a float64 run of the same training as the eager
``tables`` engine in float32 on the same GPU is (within 4× its error, plus 1e-6 of the largest
entry).  A compile failure that falls back to eager fails the second test: on a GPU with a
working Triton the fused engine must compile.
"""

from dataclasses import replace

import pytest
import torch

import nlcl.tian.tokens.fused as token_fused
from nlcl.tian.tokens.fused import compile_log
from nlcl.tian.tokens.grid import TokenRun, train_token_runs
from nlcl.tian.tokens.world import make_token_worlds, sample_views

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_draw_on_cuda_equals_the_cpu_sampler_bitwise():
    world = make_token_worlds([0, 7, 123], [1, 3, 5], [1.0, 2.0, 10.0])
    N, K = 32, world.generators.shape[2]
    dev = torch.device("cuda")
    pos = (token_fused._position_hash(N, dev), token_fused._position_hash(2 * N * K, dev))
    seeds, gens = world.seeds.to(dev), world.generators.to(dev)
    for step in (0, 3, 4999):
        iv = token_fused._draw(seeds, gens, torch.tensor(step, device=dev), *pos, N, 20)
        x1, x2, _ = sample_views(world, step, N)
        assert torch.equal(iv.cpu(), torch.stack([x1.index, x2.index], 1))


def test_compiled_fused_on_cuda_is_as_accurate_as_tables():
    runs = [
        TokenRun("relu", "infonce", "mean", 2, 3, 1.0, 0, lr=0.02),
        TokenRun("relu", "infonce", "mean", 2, 3, 2.0, 1, lr=0.02),
        TokenRun("quadratic", "quadratic", "none", 2, 3, 1.0, 2, lr=0.02),
        TokenRun("leaky_relu", "infonce", "pooled-vanilla", 2, 3, 5.0, 3, lr=0.02),
        TokenRun("sigmoid", "quadratic", "none", 2, 3, 1.0, 4, lr=0.02),
    ]
    runs += [replace(r, P=2, seed=r.seed + 5) for r in runs]
    kw = dict(batch_size=32, out_dim=8, keep_weights=range(len(runs)), record_every=1, device="cuda")
    res, n_log = {}, len(compile_log())
    for engine, dtype in (("tables", torch.float64), ("tables", torch.float32), ("fused", torch.float32)):
        res[engine, dtype] = train_token_runs(runs, 5, dtype=dtype, engine=engine, **kw)
    assert len(compile_log()) == n_log + 1, "stacks that differ only in M share one compiled step"
    entry = compile_log()[-1]
    assert entry["backend"] == "inductor" and "cuda" in entry["key"], entry
    ref = res["tables", torch.float64]
    eager, fused = res["tables", torch.float32], res["fused", torch.float32]
    for get in (
        lambda r: torch.tensor(r.curves["loss"].to_numpy()),
        lambda r: torch.cat([r.weights[i].double().reshape(-1) for i in range(len(runs))]),
    ):
        x64, e32, f32 = get(ref), get(eager), get(fused)
        scale = float(x64.abs().max())
        err_eager = float((e32 - x64).abs().max())
        err_fused = float((f32 - x64).abs().max())
        assert err_fused <= 4 * err_eager + 1e-6 * scale, (err_fused, err_eager, scale)


def test_tables_on_cuda_equal_tables_on_cpu_in_float64():
    runs = [
        TokenRun("relu", "infonce", "mean", 2, 3, 1.0, 0, lr=0.02),
        TokenRun("linear", "quadratic", "none", 1, 3, 1.0, 1, lr=0.02),
    ]
    kw = dict(batch_size=32, out_dim=8, keep_weights=range(len(runs)), dtype=torch.float64, engine="tables")
    cpu = train_token_runs(runs, 5, device="cpu", **kw)
    gpu = train_token_runs(runs, 5, device="cuda", **kw)
    for i in range(len(runs)):
        a, b = cpu.weights[i].double(), gpu.weights[i].double().cpu()
        assert float((a - b).abs().max()) <= 1e-10 * float(a.abs().max())


def test_the_reference_step_is_timed_on_cuda():
    from nlcl.tian.tokens.bench import time_reference_steps

    res = time_reference_steps(
        (1, 2), ("tables", "fused"), steps=2, repeats=1, peak_gflops=5e4, device="cuda"
    )
    for R in ("1", "2"):
        assert all(v["ms_wall"] > 0 and v["roofline_ratio"] > 0 for v in res[R].values())
    assert res["1"]["fused"]["backend"] == "inductor"
