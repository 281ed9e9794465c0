"""The cost of the portable numeric path on this CPU (issue 29): ``python tests/numerics/cost.py``.

Each measurement runs in a fresh process with one torch thread, native and portable alternating,
``REPEATS`` times; the record keeps the best (least disturbed) time of each. Measured:

* ``gemm_f32_1024`` / ``gemm_f64_1024`` / ``gemm_f32_256``: GFLOP/s of one matrix product;
* ``token_step_1`` / ``token_step_16``: ms per configuration-step of nlcl's token engine (β = 5,
  P = 5, ReLU, BN mean, out 50, 200 steps) for one configuration and a 16-configuration stack;
* ``oracle_step``: ms per step of the released trainer (tests/oracle, 200 steps).

Writes ``results/numerics-cost-cpu.json`` with the numeric environment of each mode. Run it where
nothing else runs (a claim about time is decided on a quiet machine).
"""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "results" / "numerics-cost-cpu.json"
sys.path.insert(0, str(HERE))
from record import clean_env, stamp  # noqa: E402

REPEATS = 3

PROBE = r"""
import json, time, sys
import nlcl
import torch
torch.set_num_threads(1)
from nlcl.core import numerics
out = {}
for name, n, dt in (("gemm_f32_1024", 1024, torch.float32), ("gemm_f64_1024", 1024, torch.float64),
                    ("gemm_f32_256", 256, torch.float32)):
    a, b = torch.randn(n, n, dtype=dt), torch.randn(n, n, dtype=dt)
    a @ b
    reps = max(5, int(4e9 / (2 * n**3)))
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    out[name] = 2 * n**3 * reps / (time.perf_counter() - t) / 1e9
from nlcl.tian.tokens.grid import TokenRun, train_token_runs
for name, k in (("token_step_1", 1), ("token_step_16", 16)):
    runs = [TokenRun("relu", "infonce", "mean", 5, 5, 1.0, s, lr=0.02, tau=0.1) for s in range(k)]
    train_token_runs(runs, 5, out_dim=50)
    t = time.perf_counter()
    train_token_runs(runs, 200, out_dim=50)
    out[name] = (time.perf_counter() - t) / (200 * k) * 1e3
sys.path.insert(0, sys.argv[1])
from released_trainer import OracleConfig, train
train(OracleConfig(activation="relu", bn="mean", niter=5))
t = time.perf_counter()
train(OracleConfig(activation="relu", bn="mean", niter=200))
out["oracle_step"] = (time.perf_counter() - t) / 200 * 1e3
print(json.dumps({"times": out, "numerics": numerics.environment()}))
"""


def measure(mode: str) -> dict:
    res = subprocess.run(
        [sys.executable, "-c", PROBE, str(HERE.parent / "oracle")],
        env=clean_env({"NLCL_NUMERICS": mode}),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> dict:
    runs = {"native": [], "portable": []}
    for _ in range(REPEATS):
        for mode in runs:
            runs[mode].append(measure(mode))
    best = {}
    for mode, rs in runs.items():
        keys = rs[0]["times"]
        best[mode] = {k: (max if k.startswith("gemm") else min)(r["times"][k] for r in rs) for k in keys}
    ratio = {k: best["portable"][k] / best["native"][k] for k in best["native"]}
    rec = {
        **stamp(),
        "made_with": "python tests/numerics/cost.py",
        "units": "gemm_*: GFLOP/s (higher is faster); *_step*: ms per (configuration-)step",
        "best_of": REPEATS,
        "native": best["native"],
        "portable": best["portable"],
        "portable_over_native": ratio,
        "numerics": {m: rs[0]["numerics"] for m, rs in runs.items()},
    }
    OUT.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
    return rec


if __name__ == "__main__":
    r = main()
    for k, v in r["portable_over_native"].items():
        print(f"{k:16s} native {r['native'][k]:9.3f}  portable {r['portable'][k]:9.3f}  ratio {v:.2f}")
