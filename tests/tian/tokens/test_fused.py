"""Tests for nlcl.tian.tokens.fused: the fused (compiled) token step equals the eager ``tables`` engine.

Tolerances.  The fused step computes the same formulas as :func:`nlcl.tian.tokens.tables.token_step`
in another order (the compiler fuses loops and vectorises reductions differently), so the two
agree to rounding, not bitwise.  Two checks, each with a tolerance derived from that:

* in float64, with the step run eagerly (``NLCL_FUSED_COMPILE=0``), for every activation,
  BatchNorm variant and loss: rounding is ~1e-16 relative per operation and a step has reductions
  of at most a few hundred terms, so agreement to 1e-10 (relative to the largest entry) shows the
  formulas are the same (a wrong term would differ at O(1));
* in float32, compiled, over a few steps: the float32 rounding of either engine is measured
  against a float64 run of the same training, and the fused engine must be as close to it as the
  eager engine is (within 4× its error, plus 1e-6 of the largest entry for the case where the
  eager error happens to be tiny).  That is the honest criterion for "as accurate as the released
  engine"; a fixed tolerance would be a guess.  Equality is tested over 5 steps only: a
  5,000-step training is chaotic and amplifies last-bit differences into different trajectories
  (as it does between CPUs: ``nlcl.core.numerics``).
"""

import warnings
from dataclasses import replace

import pytest
import torch

import nlcl.tian.tokens.fused as token_fused
from nlcl.core.validate import ParameterError
from nlcl.tian.losses import LOSSES
from nlcl.tian.rf_network import ACTIVATIONS_2LAYER, BN_VARIANTS, TwoLayerRF
from nlcl.tian.tokens.fused import TokenViews, compile_log, fused_stepper, train_fused
from nlcl.tian.tokens.grid import TokenRun, train_token_runs
from nlcl.tian.tokens.stacks import build_stack
from nlcl.tian.tokens.training import train_batched
from nlcl.tian.tokens.world import TokenBatch, make_token_worlds, sample_views


def _close(a, b, rel):
    scale = max(float(a.abs().max()), float(b.abs().max()), 1e-30)
    return float((a - b).abs().max()) <= rel * scale


def test_draw_in_the_step_equals_sample_views_bitwise():
    world = make_token_worlds([0, 7, 123], [1, 3, 5], [1.0, 2.0, 10.0])
    N, K = 16, world.generators.shape[2]
    views = TokenViews(world, N, world.embedding())
    pos = (
        token_fused._position_hash(N, torch.device("cpu")),
        token_fused._position_hash(2 * N * K, torch.device("cpu")),
    )
    for step in (0, 1, 4999):
        iv = token_fused._draw(world.seeds, world.generators, torch.tensor(step), *pos, N, 20)
        x1, x2, _ = sample_views(world, step, N)
        assert torch.equal(iv, torch.stack([x1.index, x2.index], 1))
        y1, y2 = views(step)
        assert torch.equal(y1.index, x1.index) and torch.equal(y2.index, x2.index)


def test_compiled_draw_equals_sample_views_bitwise():
    # the draw as the compiler builds it (vectorised int64 arithmetic) on this test's numeric path
    world = make_token_worlds([0, 7, 123], [1, 3, 5], [1.0, 2.0, 10.0])
    N, K = 32, world.generators.shape[2]
    cpu = torch.device("cpu")
    pos = (token_fused._position_hash(N, cpu), token_fused._position_hash(2 * N * K, cpu))
    draw = torch.compile(token_fused._draw, fullgraph=True, dynamic=False)
    for step in (0, 3, 4999):
        iv = draw(world.seeds, world.generators, torch.tensor(step), *pos, N, 20)
        x1, x2, _ = sample_views(world, step, N)
        assert torch.equal(iv, torch.stack([x1.index, x2.index], 1))


def _token_data(R, N, K, T, diagonal, seed=0):
    g = torch.Generator().manual_seed(seed)
    E = torch.diag_embed(0.5 + torch.rand(R, T, generator=g, dtype=torch.float64))
    if not diagonal:
        E = torch.randn(R, T, T, generator=g, dtype=torch.float64)

    def data(step):
        gs = torch.Generator().manual_seed(1000 + step)
        idx = torch.randint(0, T, (R, 2, N, K), generator=gs)
        return TokenBatch(idx[:, 0], E), TokenBatch(idx[:, 1], E)

    return data


@pytest.mark.parametrize("diagonal", [True, False])
def test_fused_equals_tables_in_float64_for_every_setting(diagonal, monkeypatch):
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")  # the same step function, run eagerly
    combos = [(a, b, l) for a in ACTIVATIONS_2LAYER for b in BN_VARIANTS for l in LOSSES]
    R, K, T, M = len(combos), 3, 5, 2
    data = _token_data(R, 8, K, T, diagonal)
    out = []
    for engine in ("tables", "fused"):
        model = TwoLayerRF(
            R, K, T, M, 4, [c[0] for c in combos], [c[1] for c in combos], range(R), dtype=torch.float64
        )
        losses = train_batched(model, data, 3, loss=[c[2] for c in combos], tau=0.2, lr=0.05, engine=engine)
        out.append((losses, model.W.detach(), model.V.detach()))
    for a, b in zip(*out):
        assert _close(a, b, 1e-10)


@pytest.mark.parametrize(
    "device",
    ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))],
)
def test_compiled_fused_is_as_accurate_as_tables_in_float32(device):
    runs = [
        TokenRun("relu", "infonce", "mean", 2, 3, 1.0, 0, lr=0.02),
        TokenRun("relu", "infonce", "mean", 2, 3, 2.0, 1, lr=0.02),
        TokenRun("quadratic", "quadratic", "none", 2, 3, 1.0, 2, lr=0.02),
        TokenRun("leaky_relu", "infonce", "pooled-vanilla", 2, 3, 5.0, 3, lr=0.02),
        TokenRun("sigmoid", "quadratic", "none", 2, 3, 1.0, 4, lr=0.02),
    ]
    # the same configurations with β = 2, P = 2 (M = 4 instead of 6): a second stack with the same
    # layout, so the same compiled graph
    runs += [replace(r, P=2, seed=r.seed + 5) for r in runs]
    kw = dict(batch_size=32, out_dim=8, keep_weights=range(len(runs)), record_every=1, device=device)
    res, n_log = {}, len(compile_log())
    for engine, dtype in (("tables", torch.float64), ("tables", torch.float32), ("fused", torch.float32)):
        res[engine, dtype] = train_token_runs(runs, 5, dtype=dtype, engine=engine, **kw)
    assert len(compile_log()) == n_log + 1, "stacks that differ only in M share one compiled step"
    entry = compile_log()[-1]
    assert entry["compile_s"] > 0 and "'M'" in entry["key"]
    if device == "cuda":  # Triton is part of a CUDA build of torch: the step must compile there
        assert entry["backend"] == "inductor" and "cuda" in entry["key"], entry
    else:  # compiled where a C++ compiler works: a fallback for any other reason (a graph break) is a bug
        assert entry["backend"] == "inductor" or "ompiler" in entry["error"], entry
    ref = res["tables", torch.float64]
    eager, fused = res["tables", torch.float32], res["fused", torch.float32]
    # per-step losses (the curves' loss column: step 0 and each of the 5 steps) and final weights
    for get in (
        lambda r: torch.tensor(r.curves["loss"].to_numpy()),
        lambda r: torch.cat([r.weights[i].double().reshape(-1) for i in range(len(runs))]),
    ):
        x64, e32, f32 = get(ref), get(eager), get(fused)
        scale = float(x64.abs().max())
        err_eager = float((e32 - x64).abs().max())
        err_fused = float((f32 - x64).abs().max())
        assert err_fused <= 4 * err_eager + 1e-6 * scale, (err_fused, err_eager, scale)
        if device == "cpu":
            assert _close(f32, e32, 1e-5)


def test_fused_falls_back_to_eager_with_one_warning(monkeypatch):
    def broken(fn, name):
        def fail(*args):
            raise RuntimeError("no C++ compiler found\nmore detail")

        return fail

    monkeypatch.setattr(token_fused, "_compile", broken)
    monkeypatch.setattr(token_fused, "_CACHE", {})
    monkeypatch.setattr(token_fused, "_WARNED", [])
    runs = [TokenRun("relu", seed=s) for s in range(2)]
    _, m_eager, data = build_stack(runs, batch_size=8, out_dim=4)
    _, m_fused, _ = build_stack(runs, batch_size=8, out_dim=4)
    a = train_batched(m_eager, data, 2, engine="tables")
    with pytest.warns(
        RuntimeWarning, match=r"torch.compile failed \(RuntimeError: no C\+\+ compiler found\)"
    ):
        b = train_batched(m_fused, data, 2, engine="fused")
    assert compile_log()[-1]["backend"] == "eager (compile failed)"
    assert _close(a, b, 1e-5) and _close(m_eager.W.detach(), m_fused.W.detach(), 1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one warning per process, not one per shape
        fused_stepper(
            m_fused,
            losses=["infonce"] * 2,
            N=4,
            T=20,
            diagonal=True,
            draw=True,
            momentum=0.9,
            weight_decay=0.0,
        )


def test_fused_needs_token_views(monkeypatch):
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")
    model = TwoLayerRF(1, 2, 3, 2, 4)
    dense = torch.randn(1, 4, 2, 3)
    with pytest.raises(ParameterError, match="fused"):
        train_batched(model, lambda s: (dense, dense), 1, engine="fused")
    with pytest.raises(ParameterError, match="fused"):
        train_fused(
            model,
            lambda s: (dense, dense),
            1,
            losses=["infonce"],
            tau=torch.tensor([0.1]),
            lr=torch.tensor([0.1]),
            momentum=0.9,
            weight_decay=0.0,
            check_every=1,
            callback=None,
            it=range(1),
        )


def test_fused_names_the_diverged_run(monkeypatch):
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")  # the step's finiteness flag, run eagerly
    runs = [TokenRun("relu", seed=0, lr=0.02), TokenRun("relu", seed=1, lr=1e30)]
    _, model, data = build_stack(runs, batch_size=8, out_dim=4)
    with pytest.raises(ValueError, match=r"step \d+ for run\(s\) \[1\] \(lr=1e\+30\)"):
        train_batched(model, data, 20, lr=[r.lr for r in runs], engine="fused")


def test_infonce_blocks_do_not_change_a_run(monkeypatch):
    # eager: the loss in blocks of one run (N² elements each) equals one block of the whole stack
    monkeypatch.setenv("NLCL_FUSED_COMPILE", "0")
    monkeypatch.setattr(token_fused, "_CACHE", {})
    runs = [TokenRun("relu", "infonce", "mean", 2, 3, 1.0, s, lr=0.02) for s in range(3)]
    runs.append(TokenRun("relu", "quadratic", "mean", 2, 3, 1.0, 3, lr=0.02))  # one block
    out, default = [], token_fused._LOSS_CHUNK_ELEMENTS
    for elements in (default, 16 * 16):
        monkeypatch.setattr(token_fused, "_LOSS_CHUNK_ELEMENTS", elements)
        _, model, data = build_stack(runs, batch_size=16, out_dim=8)
        loss = train_batched(model, data, 3, loss=[r.loss for r in runs], engine="fused")
        out.append((loss, model.W.detach().clone(), model.V.detach().clone()))
    # runs per block: default / 16² (the three InfoNCE runs in one) and 1, one cached step each
    assert sorted(st.cfg.loss_chunk for st in token_fused._CACHE.values()) == [1, default // 16**2]
    assert all(torch.equal(a, b) for a, b in zip(*out))


def test_cpp_wrapper_and_blocks_run_the_same_bits(monkeypatch):
    # the C++ wrapper (CPU default) only replaces the Python code that calls the compiled kernels;
    # InfoNCE blocks of one run (N² elements) give each run the bits of one block for the stack
    runs = [TokenRun("relu", "infonce", "mean", 2, 3, 1.0, s, lr=0.02) for s in range(2)]
    out, default = {}, token_fused._LOSS_CHUNK_ELEMENTS
    for cpp, elements in ((True, default), (False, default), (True, 16 * 16)):
        monkeypatch.setattr(token_fused, "_CPP_WRAPPER", cpp)
        monkeypatch.setattr(token_fused, "_LOSS_CHUNK_ELEMENTS", elements)
        monkeypatch.setattr(token_fused, "_CACHE", {})
        _, model, data = build_stack(runs, batch_size=16, out_dim=8)
        loss = train_batched(model, data, 3, engine="fused")
        out[cpp, elements] = (loss, model.W.detach().clone(), model.V.detach().clone())
        assert compile_log()[-1]["backend"] == "inductor" or "ompiler" in compile_log()[-1]["error"]
    ref = out[True, default]
    assert all(all(torch.equal(a, b) for a, b in zip(ref, o)) for o in out.values())


def test_the_cpp_wrapper_setting_is_part_of_the_step_cache_key(monkeypatch):
    # a step compiled with one wrapper is not reused after the setting changes (nothing compiles
    # here: torch.compile is lazy until the first call)
    monkeypatch.setattr(token_fused, "_CACHE", {})
    _, model, _ = build_stack([TokenRun("relu", seed=0)], batch_size=8, out_dim=4)
    kw = dict(losses=["infonce"], N=8, T=20, diagonal=True, draw=True, momentum=0.9, weight_decay=0.0)
    steps = {}
    for cpp in (True, False):
        monkeypatch.setattr(token_fused, "_CPP_WRAPPER", cpp)
        steps[cpp] = fused_stepper(model, **kw)
        assert steps[cpp].cpp is cpp and fused_stepper(model, **kw) is steps[cpp]
    assert steps[True] is not steps[False]
    assert fused_stepper(model, compile=False, **kw).cpp is False  # eager: no wrapper at all
