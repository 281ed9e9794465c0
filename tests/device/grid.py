"""The token paper grid (960 runs x 5000 steps, seeds 0-2) on CUDA with the fused engine, timed.

Writes $OUT/grid.json (device, wall, compile log, per-stack seconds) and $OUT/grid-table.csv.gz.
Usage: python3 tests/device/grid.py [steps] [seeds...]  (defaults: 5000, 0 1 2)
NLCL_CUDA_GRAPH=1 replays each stack's step as one CUDA graph (nlcl.tian.tokens.cuda_graph).
"""

import json
import os
import sys
import time

t_import = time.perf_counter()
import torch

from nlcl.core.device import describe_device, get_device
from nlcl.tian.tokens.fused import compile_log
from nlcl.tian.tokens.grid import paper_grid, runs_from_table, train_token_runs

out = os.environ.get("OUT", "/tmp/out")
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
seeds = [int(s) for s in sys.argv[2:]] or [0, 1, 2]
dev = get_device(os.environ.get("GRID_DEVICE", "cuda"))
grid = paper_grid(seeds=seeds)
runs = runs_from_table(grid)
marks, last = [], [time.perf_counter()]


def on_stack(done):
    now = time.perf_counter()
    marks.append((len(done), round(now - last[0], 3)))
    last[0] = now
    print(f"{len(done)} of {len(runs)} runs, stack {marks[-1][1]:.1f} s", flush=True)


res = train_token_runs(runs, steps, device=dev, engine="fused", on_stack=on_stack)
record = dict(
    what="nlcl.tian.tokens.grid.train_token_runs(paper_grid(seeds), steps, engine='fused') on one device",
    device=describe_device(dev),
    torch=torch.__version__,
    runs=len(runs),
    steps=steps,
    seeds=seeds,
    cuda_graph=os.environ.get("NLCL_CUDA_GRAPH", "0"),
    wall_s=round(res.wall_s, 2),
    run_steps_per_s=round(res.run_steps_per_s),
    compile=compile_log(),
    stacks=marks,
    process_s=round(time.perf_counter() - t_import, 2),
)
json.dump(record, open(f"{out}/grid.json", "w"), indent=1)
grid[["figure"]].join(res.table).to_csv(f"{out}/grid-table.csv.gz", index=False)
print(json.dumps({k: v for k, v in record.items() if k not in ("compile", "stacks")}))
