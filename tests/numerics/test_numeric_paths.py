"""The portable numeric path gives the same numbers whatever MKL and torch would pick on another
x86 CPU (issue 29). Each case runs ``fingerprint.py`` (two 200-step trainings: float32 through MKL's
SGEMM and ATen, float64 through MKL's DGEMM) in a fresh process with its own kernel variables.

CPUs are emulated on this one: ``MKL_ENABLE_INSTRUCTIONS=AVX2`` makes MKL dispatch as on a CPU
without AVX-512, and ``MKL_CBWR=<branch>`` takes the code path MKL picks on a CPU of that class.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nlcl.core import numerics

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REFERENCE = ROOT / "results" / "numerics-reference.json"
sys.path.insert(0, str(HERE))
from record import clean_env  # noqa: E402

FLAGS = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""

pytestmark = pytest.mark.skipif(
    " avx2" not in FLAGS, reason="the portable path needs an x86-64 CPU with AVX2"
)


def fingerprint(**env) -> dict:
    """fingerprint.py in a fresh process with exactly these kernel variables (none inherited)."""
    out = subprocess.run(
        [sys.executable, str(HERE / "fingerprint.py")],
        env=clean_env(env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _hashes(fp: dict) -> tuple[str, str]:
    return fp["oracle_float32"], fp["nlcl_float64"]


def _skip_where_mkl_ignores_the_portable_branch(fp: dict) -> None:
    """On a non-Intel CPU MKL ignores MKL_CBWR=AVX2 (nlcl.core.numerics.portable_unavailable)."""
    why = numerics.portable_unavailable(fp["numerics"])
    if why:
        pytest.skip(why)


def test_portable_path_gives_the_same_bits_on_every_emulated_cpu():
    here = fingerprint(NLCL_NUMERICS="portable")  # this CPU (AVX-512 where it has it)
    _skip_where_mkl_ignores_the_portable_branch(here)
    avx2_cpu = fingerprint(NLCL_NUMERICS="portable", MKL_ENABLE_INSTRUCTIONS="AVX2")
    explicit = fingerprint(MKL_CBWR="AVX2", ATEN_CPU_CAPABILITY="avx2", ONEDNN_MAX_CPU_ISA="AVX2")
    assert here["numerics"]["portable"] and avx2_cpu["numerics"]["portable"]
    assert _hashes(here) == _hashes(avx2_cpu) == _hashes(explicit)


def test_native_paths_differ_so_the_identity_above_is_not_vacuous():
    """Without the pin the numbers follow MKL's code path: the CPU classes give different bits."""
    paths = ["AVX2", "SSE4_2", "COMPATIBLE"] + (["AVX512"] if "avx512f" in FLAGS else [])
    avx2 = fingerprint(MKL_CBWR="AVX2")  # first: where MKL ignores it, skip before the others run
    _skip_where_mkl_ignores_the_portable_branch(avx2)
    seen = {p: _hashes(avx2 if p == "AVX2" else fingerprint(MKL_CBWR=p)) for p in paths}
    assert len(set(seen.values())) == len(paths), seen


def test_portable_fingerprint_equals_the_committed_reference():
    """results/numerics-reference.json was made on the portable path (tests/numerics/record.py);
    the same torch version and one thread give the same bits on any AVX2 CPU."""
    ref = json.loads(REFERENCE.read_text())
    assert ref["numerics"]["portable"] and ref["fingerprint"]["numerics"]["portable"]
    assert not ref["commit"].endswith("+dirty")
    here = fingerprint(NLCL_NUMERICS="portable")
    _skip_where_mkl_ignores_the_portable_branch(here)
    if here["numerics"]["torch"] != ref["fingerprint"]["numerics"]["torch"]:
        pytest.skip(
            f"torch {here['numerics']['torch']} here, the reference has {ref['fingerprint']['numerics']['torch']}"
        )
    assert _hashes(here) == _hashes(ref["fingerprint"])
