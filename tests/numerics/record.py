"""Make the committed numeric records of issue 29 (run from the repository root).

``python tests/numerics/record.py reference``
    ``results/numerics-reference.json``: on the portable numeric path (``NLCL_NUMERICS=portable``,
    one torch thread), the fingerprint (``fingerprint.py``) and the 5,000-step cell that
    ``tests/oracle/test_oracle_record.py`` re-trains: the oracle's seed-0 run and nlcl's first two
    runs of the quadratic / BN mean / x² cell. ``make test`` compares a fresh run with it exactly
    wherever the run is on the portable path (any x86-64 CPU with AVX2, same torch and threads).
``python tests/numerics/record.py spread``
    ``results/numerics-spread.json``: the same cell under each numeric path of :data:`PATHS` on
    this machine (MKL's CNR branches emulate the CPUs it would pick them on; ATen's capability the
    torch kernels), each in a fresh process. The tolerance for a run on a path other than the
    portable one is derived from it, by the rule declared here before the measurement:
    ``tol = 3·√2·sd``, sd the standard deviation (ddof 1) of the score over the distinct outcomes of
    the paths (paths with bitwise equal scores count once): a difference
    of two single runs on different paths stays within three standard deviations of such a
    difference.

Each record names its numeric environment (``nlcl.core.numerics.environment``), commit and date.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REFERENCE = ROOT / "results" / "numerics-reference.json"
SPREAD = ROOT / "results" / "numerics-spread.json"
SCORES = (
    "oracle_chi_plus",
    "oracle_chi_minus",
    "nlcl_chi_plus_0",
    "nlcl_chi_minus_0",
    "nlcl_chi_plus_1",
    "nlcl_chi_minus_1",
)

#: The numeric paths of the spread record: name → environment variables (nothing else kernel-choosing set).
PATHS = {
    "native": {},
    "portable": {"NLCL_NUMERICS": "portable"},
    "mkl-avx512": {"MKL_CBWR": "AVX512"},
    "mkl-avx2": {"MKL_CBWR": "AVX2"},
    "mkl-avx": {"MKL_CBWR": "AVX"},
    "mkl-sse4_2": {"MKL_CBWR": "SSE4_2"},
    "mkl-compatible": {"MKL_CBWR": "COMPATIBLE"},
    "mkl-compatible-aten-default": {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
}


def clean_env(extra: dict) -> dict:
    """This process's environment without kernel-choosing variables, plus ``extra``, with the
    repository, the oracle and this folder importable (for fresh processes on one numeric path)."""
    from nlcl.core.numerics import KERNEL_VARS

    env = {k: v for k, v in os.environ.items() if k not in KERNEL_VARS}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE.parent / "oracle"), str(HERE)])
    return env


def cell_scores() -> dict:
    """The 5,000-step cell of the oracle record test in this process (its numeric path)."""
    import torch
    from released_trainer import OracleConfig, train_and_score
    from run_oracle_grid import BOLD
    from score_nlcl_runs import CONFIG as c

    import nlcl  # noqa: F401
    from nlcl.core import numerics
    from nlcl.tian.tokens.grid import TokenRun, train_token_runs

    torch.set_num_threads(1)
    loss, bn, act = BOLD[0]
    out = train_and_score(OracleConfig(activation=act, loss=loss, bn=bn, seed=0))
    nlcl_runs = json.loads((ROOT / "results" / "tian-tokens-oracle-nlcl-runs.json").read_text())
    rows = [r for r in nlcl_runs["runs"] if (r["loss"], r["bn"], r["activation"]) == (loss, bn, act)][:2]
    runs = [
        TokenRun(act, loss, bn, c["beta"], c["P"], c["zeta"], r["seed"], lr=c["lr"], tau=c["tau"])
        for r in rows
    ]
    keys = ("batch_size", "momentum", "weight_decay", "K", "n_tokens", "G", "n_fixed", "out_dim")
    table = train_token_runs(runs, c["steps"], **{k: c[k] for k in keys}).table
    scores = {"oracle_chi_plus": out["chi_plus"], "oracle_chi_minus": out["chi_minus"]}
    for i, (_, t) in enumerate(table.iterrows()):
        for s in ("chi_plus", "chi_minus", "chi_plus_released", "chi_minus_released"):
            scores[f"nlcl_{s}_{i}"] = float(t[s])
    return {
        "cell": [loss, bn, act],
        "nlcl_seeds": [r["seed"] for r in rows],
        "scores": scores,
        "numerics": numerics.environment(),
    }


def _in_fresh_process(extra: dict, what: str) -> dict:
    code = f"import json, record; print(json.dumps(record.{what}()))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=clean_env(extra),
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def stamp() -> dict:
    sys.path.insert(0, str(ROOT))
    import datetime as dt

    from nlcl.harness.records import provenance

    return {
        "commit": provenance.git_commit(ROOT),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def fingerprint_here() -> dict:
    import fingerprint

    return fingerprint.fingerprint()


def make_reference() -> dict:
    env = {"NLCL_NUMERICS": "portable"}
    rec = {
        **stamp(),
        "made_with": "python tests/numerics/record.py reference",
        "fingerprint": _in_fresh_process(env, "fingerprint_here"),
        **_in_fresh_process(env, "cell_scores"),
    }
    assert rec["numerics"]["portable"], "the reference must be made on the portable path"
    REFERENCE.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
    return rec


def make_spread() -> dict:
    paths = {}
    for name, extra in PATHS.items():
        paths[name] = {"env": extra, **_in_fresh_process(extra, "cell_scores")}
        print(name, {k: round(v, 4) for k, v in paths[name]["scores"].items()}, flush=True)
    return _write_spread(paths)


def spread_stats(paths: dict) -> dict:
    """Per score: min, max, sd (ddof 1) and ``tol = 3·√2·sd`` over the *distinct* outcomes of the
    paths: paths that gave bitwise the same scores (e.g. ``native`` and ``mkl-avx512`` on an AVX-512
    CPU) are one draw, not two (a correction made while the first spread run was still running,
    before any of its statistics were seen)."""
    outcomes = {json.dumps(p["scores"], sort_keys=True): p["scores"] for p in paths.values()}
    draws = list(outcomes.values())
    stats = {"distinct_outcomes": len(draws)}
    for s in draws[0]:
        vals = [d[s] for d in draws]
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
        stats[s] = {"min": min(vals), "max": max(vals), "sd": sd, "tol": 3 * math.sqrt(2) * sd}
    return stats


def _write_spread(paths: dict) -> dict:
    stats = spread_stats(paths)
    rec = {
        **stamp(),
        "made_with": "python tests/numerics/record.py spread",
        "rule": "tol = 3*sqrt(2)*sd over the distinct outcomes of the paths (declared before the measurement)",
        "paths": paths,
        "stats": stats,
    }
    SPREAD.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
    return rec


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what not in ("reference", "spread", "restat"):
        sys.exit("usage: python tests/numerics/record.py reference|spread|restat")
    if what == "restat":  # the statistics again from the recorded paths (after a rule correction)
        _write_spread(json.loads(SPREAD.read_text())["paths"])
    else:
        make_reference() if what == "reference" else make_spread()
