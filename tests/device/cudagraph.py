"""Experiment (stop 44; not package code, never run on a GPU yet): the fused token step as one CUDA graph.

For grid stacks (60 runs of one (beta, P); default M = 6 and M = 100), from the same initialisation:
  plain: train_batched(engine='fused', check_every=50), as the grid trains on a GPU;
  graph: the same cached compiled step captured once with torch.cuda.graph on the persistent
         tensors (W, Vk, momentum buffers, step counter...), replayed once a step after refilling
         the step counter; finiteness read every 50 steps.
Prints ms per step of each and whether W and V end bitwise equal; writes $OUT/cudagraph.json.
Usage: python3 tests/device/cudagraph.py [steps] [beta P ...]   (defaults: 2000, 2 3 10 10)
GRID_DEVICE=cpu runs the plain arm and the setup only (a dry run of the script's logic).
"""

import json
import os
import sys
import time

import torch

import nlcl.tian.tokens.fused as F
from nlcl.tian.tokens.grid import paper_grid, runs_from_table
from nlcl.tian.tokens.stacks import build_stack
from nlcl.tian.tokens.training import train_batched

dev = torch.device(os.environ.get("GRID_DEVICE", "cuda"))
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
pairs = [int(a) for a in sys.argv[2:]] or [2, 3, 10, 10]
out_dir = os.environ.get("OUT", "/tmp/out")
MOM, WD, CHECK = 0.9, 5e-3, 50
all_runs = runs_from_table(paper_grid())


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


results = []
for beta, P in zip(pairs[::2], pairs[1::2]):
    runs = sorted(
        (r for r in all_runs if r.beta == beta and r.P == P), key=lambda r: (r.loss, r.activation, r.bn)
    )
    kw = dict(
        loss=[r.loss for r in runs],
        tau=[r.tau for r in runs],
        lr=[r.lr for r in runs],
        momentum=MOM,
        weight_decay=WD,
        check_every=CHECK,
        engine="fused",
    )
    mk = lambda: build_stack(runs, batch_size=128, out_dim=20, device=dev)  # noqa: E731
    _, m0, data = mk()
    t = time.perf_counter()
    train_batched(m0, data, 3, **kw)  # compiles (or loads) the step for this layout
    sync()
    row = dict(beta=beta, P=P, M=runs[0].M, runs=len(runs), steps=steps, first_call_s=time.perf_counter() - t)
    _, mA, _ = mk()
    sync()
    t = time.perf_counter()
    train_batched(mA, data, steps, **kw)
    sync()
    row["plain_ms_per_step"] = (time.perf_counter() - t) / steps * 1e3
    # graph arm: train_fused's setup, by hand, on a fresh model with the same initialisation
    _, mB, _ = mk()
    W = mB.W.detach()
    R, K, M, _ = W.shape
    O = mB.out_dim
    Vk = mB.V.detach().reshape(R, O, K, M).permute(0, 2, 3, 1).contiguous()
    bW, bVk = torch.zeros_like(W), torch.zeros_like(Vk)
    E = data.embedding.to(W.dtype)
    dg = F._diagonal(E)
    emb = E if dg is None else dg
    stepper = F.fused_stepper(
        mB,
        losses=kw["loss"],
        N=128,
        T=E.shape[1],
        diagonal=dg is not None,
        draw=True,
        momentum=MOM,
        weight_decay=WD,
        compile=True,
    )
    tau = torch.tensor(kw["tau"], dtype=W.dtype, device=dev)
    lr = torch.tensor(kw["lr"], dtype=W.dtype, device=dev)
    seeds, gens = data.world.seeds.to(dev), data.world.generators.to(dev)
    pos = (F._position_hash(128, dev), F._position_hash(2 * 128 * K, dev))
    step_t = seeds.new_zeros(())
    args = (W, Vk, bW, bVk, emb, lr, tau, seeds, gens, step_t, pos)
    if dev.type == "cuda":
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):  # warm-up on copies: the real tensors are not stepped
                copies = tuple(a.clone() for a in args[:4])
                for _ in range(3):
                    stepper(*copies, *args[4:])
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                outs = stepper(*args)
            sync()
            t = time.perf_counter()
            for s in range(steps):
                step_t.fill_(s)
                graph.replay()
                if (s + 1) % CHECK == 0 or s == steps - 1:
                    assert bool(outs[-1]), f"non-finite loss at step {s}"
            sync()
            row["graph_ms_per_step"] = (time.perf_counter() - t) / steps * 1e3
            mB.V.detach().copy_(Vk.permute(0, 3, 1, 2).reshape(R, O, K * M))
            row["W_equal"] = bool(torch.equal(mA.W, mB.W))
            row["V_equal"] = bool(torch.equal(mA.V, mB.V))
            row["max_abs_dW"] = float((mA.W - mB.W).abs().max())
        except Exception as err:  # noqa: BLE001 - an experiment: report and go on
            row["graph_error"] = f"{type(err).__name__}: {err}"[:500]
    results.append(row)
    print(json.dumps(row), flush=True)
record = dict(
    what="fused token step: train_batched vs one captured CUDA graph replayed per step (stop-44 experiment)",
    device=torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
    torch=torch.__version__,
    results=results,
    compile=F.compile_log(),
)
os.makedirs(out_dir, exist_ok=True)
json.dump(record, open(f"{out_dir}/cudagraph.json", "w"), indent=1)
