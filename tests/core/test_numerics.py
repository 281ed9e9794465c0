"""nlcl.core.numerics: the numeric environment and the portable path (issue 29)."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from nlcl.core import numerics


def test_mode_reads_the_environment_and_rejects_unknown_values(monkeypatch):
    monkeypatch.delenv("NLCL_NUMERICS", raising=False)
    assert numerics.mode() == "native"
    monkeypatch.setenv("NLCL_NUMERICS", "portable")
    assert numerics.mode() == "portable"
    assert numerics.mode("native") == "native"
    with pytest.raises(
        ValueError, match=r"NLCL_NUMERICS='fast' is not a numeric mode; allowed: native, portable"
    ):
        numerics.mode("fast")


def test_apply_portable_sets_what_the_user_did_not(monkeypatch):
    for name in numerics.PORTABLE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NLCL_NUMERICS", "native")
    monkeypatch.setenv("MKL_CBWR", "SSE4_2")  # the user's own choice wins
    set_now = numerics.apply("portable")
    assert set_now == {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
    assert os.environ["MKL_CBWR"] == "SSE4_2" and os.environ["NLCL_NUMERICS"] == "portable"
    assert numerics.apply("native") == {}


def _env(cnr="AVX2", branch="Intel(R) Advanced Vector Extensions 2 (Intel(R) AVX2)", cap="AVX2", **kw):
    return {
        "torch": "2.13.0+cpu",
        "torch_threads": 1,
        "torch_capability": cap,
        "cpu_isa": kw.get("isa", "avx512f"),
        "mkl": {"available": True, "cnr": cnr, "branch": branch},
        "numpy_blas": {"architecture": kw.get("numpy", "SkylakeX")},
    }


def test_portable_path_needs_mkls_avx2_branch_and_atens_avx2_kernels():
    assert numerics.on_portable_path(_env())
    assert not numerics.on_portable_path(_env(cnr="OFF"))
    assert not numerics.on_portable_path(_env(cap="AVX512"))
    # MKL_ENABLE_INSTRUCTIONS=AVX512 overrides the CNR branch: MKL says CNR:AVX2 but runs AVX-512
    assert not numerics.on_portable_path(
        _env(branch="Intel(R) Advanced Vector Extensions 512 (Intel(R) AVX-512)")
    )
    assert numerics.on_portable_path({"torch_capability": "AVX2", "mkl": {"available": False}})


def test_numbers_key_drops_the_cpu_only_on_the_portable_path():
    a, b = _env(isa="avx512f"), _env(isa="avx2")
    assert numerics.same_numbers(a, b)  # two CPUs, the same portable numbers
    assert not numerics.same_numbers(_env(isa="avx2", numpy="Haswell"), a)  # numpy's BLAS differs
    assert numerics.same_numbers(_env(isa="avx2", numpy="Haswell"), a, numpy=False)
    native_a = _env(cnr="OFF", cap="AVX512", isa="avx512f")
    native_b = _env(cnr="OFF", cap="AVX512", isa="avx2")
    assert not numerics.same_numbers(native_a, native_b)
    assert "cpu_isa" in numerics.numbers_key(native_a) and "cpu_isa" not in numerics.numbers_key(a)
    assert not numerics.same_numbers(None, a) and not numerics.same_numbers(a, {})


def test_environment_names_cpu_torch_mkl_and_settings():
    env = numerics.environment()
    assert set(env) >= {
        "mode",
        "portable",
        "cpu",
        "cpu_generation",
        "cpu_isa",
        "torch",
        "torch_capability",
        "torch_threads",
        "mkl",
    }
    assert set(env["settings"]) == set(numerics.SETTINGS)
    assert isinstance(env["portable"], bool) and env["cpu"]
    mkl = env["mkl"]
    if mkl.get("available"):
        assert mkl["cnr"] and mkl["branch"] and mkl["version"]
    line = numerics.describe(env)
    assert env["mode"] in line and str(env["torch_threads"]) in line


def test_the_test_suite_runs_on_the_portable_path():
    """tests/conftest.py sets NLCL_NUMERICS=portable before torch loads (unless the caller chose)."""
    env = numerics.environment()
    if os.environ.get("NLCL_NUMERICS") != "portable" or any(
        os.environ.get(k, v) != v for k, v in numerics.PORTABLE.items()
    ):
        pytest.skip("the caller chose another numeric path")
    if "avx2" not in open("/proc/cpuinfo").read():
        pytest.skip("this CPU has no AVX2")
    why = numerics.portable_unavailable(env)
    if why:
        pytest.skip(why)
    assert env["portable"], env


def test_portable_unavailable_names_an_ignored_branch():
    """MKL reporting another CNR mode than the MKL_CBWR asked for (as on an AMD EPYC) is named."""
    mkl = {"available": True, "version": "2024.0", "branch": "Intel(R) Architecture processors"}
    amd = {"cpu": "AMD EPYC", "settings": {"MKL_CBWR": "AVX2"}, "mkl": {**mkl, "cnr": "AUTO"}}
    why = numerics.portable_unavailable(amd)
    assert why and "MKL_CBWR=AVX2" in why and "AUTO" in why and "AMD EPYC" in why
    intel = {"cpu": "Intel", "settings": {"MKL_CBWR": "AVX2"}, "mkl": {**mkl, "cnr": "AVX2"}}
    assert numerics.portable_unavailable(intel) is None
    assert numerics.portable_unavailable({**amd, "settings": {"MKL_CBWR": None}}) is None  # native
    assert (
        numerics.portable_unavailable({"mkl": {"available": False}, "settings": {"MKL_CBWR": "AVX2"}}) is None
    )


def test_import_nlcl_applies_the_mode_in_a_fresh_process():
    code = "import nlcl, os; print(os.environ.get('MKL_CBWR'), os.environ.get('ATEN_CPU_CAPABILITY'))"
    clean = {
        k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY", "NLCL_NUMERICS")
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "NLCL_NUMERICS": "portable"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["AVX2", "avx2"]
    out = subprocess.run([sys.executable, "-c", code], env=clean, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]
    bad = subprocess.run(
        [sys.executable, "-c", "import nlcl"],
        env={**clean, "NLCL_NUMERICS": "fast"},
        capture_output=True,
        text=True,
    )
    assert bad.returncode != 0 and "NLCL_NUMERICS='fast' is not a numeric mode" in bad.stderr


def test_cpu_model_and_mkl_path_read_what_this_process_runs_on():
    assert numerics.cpu_model() and numerics.cpu_isa()
    generation = numerics.cpu_generation()
    if Path("/proc/cpuinfo").exists() and platform.machine() == "x86_64":
        vendor, numbers = generation.split(" ")
        family, model = numbers.split("/")
        assert vendor and int(family) > 0 and int(model) >= 0
    blas = numerics.numpy_blas()
    assert blas == {} or {"library", "version", "architecture", "threads"} == set(blas)
    assert numerics.environment()["numpy_blas"] == blas
    mkl = numerics.mkl_path()
    assert mkl == {"available": False} or {"version", "branch", "cnr", "threads"} <= set(mkl)


def test_cpu_fields_come_from_the_first_processor_and_fall_back_without_cpuinfo(monkeypatch):
    import io

    text = (
        "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
        "model name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512f\n\n"
        "processor\t: 1\nvendor_id\t: Other\ncpu family\t: 1\nmodel\t\t: 9\nmodel name\t: Other\nflags\t\t: sse2\n"
    )
    monkeypatch.setattr(numerics, "open", lambda *a, **k: io.StringIO(text), raising=False)
    assert (numerics.cpu_model(), numerics.cpu_generation(), numerics.cpu_isa()) == (
        "AMD EPYC",
        "AuthenticAMD 26/2",
        "avx512f",
    )

    def missing(*a, **k):
        raise OSError("no /proc/cpuinfo")

    monkeypatch.setattr(numerics, "open", missing, raising=False)
    assert numerics.cpu_generation() is None
    assert numerics.cpu_model() == (platform.processor() or platform.machine() or "unknown")
    assert numerics.cpu_isa() == (platform.machine() or "unknown")
