"""The fused token step on CUDA (skipped without a GPU; run on a lent GPU, records in results/PERFORMANCE.md).

On the GPU: the batch drawn in the step is bitwise the CPU sampler's (integer arithmetic); the
eager ``tables`` step equals the CPU's in float64; the fused loop does not wait for the GPU between
its checks; the reference step of ``nlcl bench`` is timed; the step replayed as a CUDA graph
(``NLCL_CUDA_GRAPH=1``) trains as the plain loop.
The compiled step's accuracy (TorchInductor's Triton backend, as close to a float64 run as the
eager engine in float32, the tolerance derived in ``test_fused.py``) is the ``cuda`` case of
``test_fused.py::test_compiled_fused_is_as_accurate_as_tables_in_float32``: there a fallback to
eager fails, since a CUDA build of torch ships Triton.
"""

import warnings

import pytest
import torch

import nlcl.tian.tokens.fused as token_fused
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


def test_fused_steps_queue_without_synchronising():
    """Between its finiteness checks the fused loop only queues work: the number of synchronising
    CUDA calls (torch's sync debug mode) does not grow with the steps.  A step tensor made anew
    each step (a blocking host-to-device copy) would add one sync a step."""
    from nlcl.tian.tokens.bench import reference_runs
    from nlcl.tian.tokens.stacks import build_stack
    from nlcl.tian.tokens.training import train_batched

    _, model, data = build_stack(reference_runs(2), batch_size=32, out_dim=8, device="cuda")
    kw = dict(engine="fused", check_every=10_000, lr=0.02)
    train_batched(model, data, 2, **kw)  # compiles outside the count

    def syncs(steps: int) -> int:
        torch.cuda.set_sync_debug_mode("warn")
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                train_batched(model, data, steps, **kw)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        return sum("synchronizing CUDA operation" in str(w.message) for w in seen)

    assert syncs(24) == syncs(4)


def test_a_captured_step_replays_on_its_own_tensors():
    from nlcl.tian.tokens.cuda_graph import capture

    x, k = torch.zeros(3, device="cuda"), torch.ones(3, device="cuda")

    def step(x, k):
        x.add_(k)
        return x.sum(), x

    replay = capture(step, (x, k), state=1)
    assert float(x.sum()) == 0  # the warm-up stepped a copy; capturing runs nothing
    first, _ = replay(x, k)
    second, _ = replay(x, k)
    assert (float(first), float(second), float(x.sum())) == (3.0, 6.0, 6.0)  # the loss is a copy
    with pytest.raises(RuntimeError, match="captured"):
        replay(x.clone(), k)


def test_the_captured_fused_loop_trains_as_the_plain_loop(monkeypatch):
    """NLCL_CUDA_GRAPH=1 replays the same kernels on the same memory: W, V, the last loss and the
    per-step losses a callback sees equal the plain loop's (to 1e-6 of the largest entry: a scatter
    with atomic adds may sum in another order on a GPU; the expected outcome is bitwise)."""
    from nlcl.tian.tokens.bench import reference_runs
    from nlcl.tian.tokens.stacks import build_stack
    from nlcl.tian.tokens.training import train_batched

    def train(setting):
        monkeypatch.setenv("NLCL_CUDA_GRAPH", setting)
        _, model, data = build_stack(reference_runs(4), batch_size=32, out_dim=8, device="cuda")
        seen = []
        kw = dict(engine="fused", lr=0.02, check_every=10, callback=lambda s, x: seen.append(x))
        loss = train_batched(model, data, 30, **kw)
        return model.W.detach().clone(), model.V.detach().clone(), loss, torch.stack(seen)

    for plain, graph in zip(train("0"), train("1"), strict=True):
        scale = float(plain.abs().max())
        assert float((plain - graph).abs().max()) <= 1e-6 * scale, float((plain - graph).abs().max())
