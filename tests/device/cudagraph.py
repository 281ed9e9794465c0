"""The fused token step replayed as one CUDA graph (NLCL_CUDA_GRAPH=1) against the plain loop, timed.

For grid stacks (60 runs of one (beta, P); default M = 6 and M = 100), from the same initialisation,
train_batched(engine='fused', check_every=50) with NLCL_CUDA_GRAPH=0 and =1 (nlcl.tian.tokens.cuda_graph).
Prints ms per step of each and how far W and V end apart (bitwise equal expected); writes
$OUT/cudagraph.json. Stop 44 wrote this experiment with train_fused's setup repeated by hand; since
stop 46 the capture is package code (opt-in) and this script only switches it.
Usage: python3 tests/device/cudagraph.py [steps] [beta P ...]   (defaults: 2000, 2 3 10 10)
GRID_DEVICE=cpu is a dry run of the script's logic (off a GPU the setting changes nothing).
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
all_runs = runs_from_table(paper_grid())


def sync():
    if dev.type == "cuda":
        torch.cuda.synchronize()


def train(runs, n, graph):
    os.environ["NLCL_CUDA_GRAPH"] = "1" if graph else "0"
    _, model, data = build_stack(runs, batch_size=128, out_dim=20, device=dev)
    kw = dict(loss=[r.loss for r in runs], tau=[r.tau for r in runs], lr=[r.lr for r in runs])
    sync()
    t = time.perf_counter()
    train_batched(model, data, n, momentum=0.9, weight_decay=5e-3, check_every=50, engine="fused", **kw)
    sync()
    return model, (time.perf_counter() - t) / n * 1e3


results = []
for beta, P in zip(pairs[::2], pairs[1::2]):
    runs = sorted(
        (r for r in all_runs if r.beta == beta and r.P == P), key=lambda r: (r.loss, r.activation, r.bn)
    )
    t = time.perf_counter()
    train(runs, 3, False)  # compiles (or loads) the step for this layout
    row = dict(beta=beta, P=P, M=runs[0].M, runs=len(runs), steps=steps, first_call_s=time.perf_counter() - t)
    try:
        plain, row["plain_ms_per_step"] = train(runs, steps, False)
        graph, row["graph_ms_per_step"] = train(runs, steps, True)
        for name in ("W", "V"):
            a, b = getattr(plain, name).detach(), getattr(graph, name).detach()
            row[f"{name}_equal"], row[f"max_abs_d{name}"] = (
                bool(torch.equal(a, b)),
                float((a - b).abs().max()),
            )
    except Exception as err:  # noqa: BLE001 - an experiment: report and go on
        row["error"] = f"{type(err).__name__}: {err}"[:500]
    results.append(row)
    print(json.dumps(row), flush=True)
record = dict(
    what="fused token step: train_batched with NLCL_CUDA_GRAPH=0 vs 1 (nlcl.tian.tokens.cuda_graph)",
    device=torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
    torch=torch.__version__,
    results=results,
    compile=F.compile_log(),
)
os.makedirs(out_dir, exist_ok=True)
json.dump(record, open(f"{out_dir}/cudagraph.json", "w"), indent=1)
