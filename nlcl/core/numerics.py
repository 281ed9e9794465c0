"""The numeric environment of a run, and a portable numeric path for runs compared across machines.

A long training is chaotic: 5,000 steps turn a last-bit difference in one matrix product into a
different final score (±0.04 in a single token-task run's χ̄+). Which last bits a product has
depends on the kernels that compute it, and three libraries pick their kernels from the CPU:

* **MKL** (torch's BLAS on x86): its *code path* (AVX-512, AVX2, SSE4.2, ...) unless
  ``MKL_CBWR`` (conditional numerical reproducibility) fixes one. MKL documents that a fixed
  branch gives the same results on every Intel or compatible CPU that supports it, for the same
  MKL version and thread count.
* **ATen** (torch's own vectorised kernels: reductions, elementwise): its capability
  (``torch.backends.cpu.get_cpu_capability()``), capped by ``ATEN_CPU_CAPABILITY``.
* **oneDNN** (convolutions): its ISA, capped by ``ONEDNN_MAX_CPU_ISA``.

Numbers computed by numpy, scipy and scikit-learn go through numpy's OpenBLAS, whose kernel also
follows the CPU (``OPENBLAS_CORETYPE``); nlcl records it but does not pin it.

Two modes, chosen with the environment variable ``NLCL_NUMERICS``:

``native`` (the default for chapters and the book)
    Each library takes the fastest path for this CPU. Numbers are bitwise reproducible for the
    same :func:`numbers_key` (CPU path, torch version, thread count), in distribution elsewhere.
``portable`` (the default for the test suite, ``tests/conftest.py``)
    :data:`PORTABLE` is set before torch initialises: MKL's AVX2 branch, ATen's AVX2 kernels and
    oneDNN capped at AVX2. torch's numbers are then the same on every Intel x86-64 CPU with AVX2
    for the same torch version and thread count; the cost is MKL's AVX-512 speed on CPUs that
    have it (about half the GEMM throughput there; nothing on AVX2-only CPUs). A variable the user
    set explicitly is left alone (and then the run is not on the portable path: see
    :func:`environment`'s ``portable``). **Not on AMD:** MKL 2024.0 ignores ``MKL_CBWR=AVX2`` on a
    non-Intel CPU (it reports CNR ``AUTO`` and its generic "Intel(R) Architecture processors"
    branch; measured on an AMD EPYC, where the AVX2, SSE4_2 and AVX512 branches give the same bits
    and only ``COMPATIBLE`` differs), so there the run stays off the portable path and
    :func:`portable_unavailable` says why.

``import nlcl`` calls :func:`apply` (so a chapter's first cell pins the path before torch loads),
and every provenance record carries :func:`environment` under ``numerics``.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MODES",
    "PORTABLE",
    "KERNEL_VARS",
    "SETTINGS",
    "mode",
    "apply",
    "cpu_model",
    "cpu_generation",
    "cpu_isa",
    "mkl_path",
    "numpy_blas",
    "environment",
    "numbers_key",
    "same_numbers",
    "on_portable_path",
    "portable_unavailable",
    "describe",
]

#: The values of ``NLCL_NUMERICS``.
MODES = ("native", "portable")

#: What ``portable`` sets (each only where the user has not set it).
PORTABLE: dict[str, str] = {
    "MKL_CBWR": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
}

#: The variables that choose torch's kernels (a process without them takes the native path).
KERNEL_VARS = ("NLCL_NUMERICS", "MKL_ENABLE_INSTRUCTIONS", *PORTABLE)

#: Environment variables that choose kernels; :func:`environment` records each one's value.
SETTINGS = (
    "NLCL_NUMERICS",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "ATEN_CPU_CAPABILITY",
    "ONEDNN_MAX_CPU_ISA",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_CORETYPE",
)


def mode(value: str | None = None) -> str:
    """The numeric mode: ``value``, else ``NLCL_NUMERICS``, else ``native``; raises on anything else."""
    chosen = value if value is not None else os.environ.get("NLCL_NUMERICS") or "native"
    if chosen not in MODES:
        raise ValueError(f"NLCL_NUMERICS={chosen!r} is not a numeric mode; allowed: {', '.join(MODES)}")
    return chosen


def apply(value: str | None = None) -> dict[str, str]:
    """Put the process on the numeric path of :func:`mode` ``(value)``; returns the variables set.

    For ``portable`` each variable of :data:`PORTABLE` is set unless the environment already has
    it, and ``NLCL_NUMERICS`` is set so that child processes (Jupyter kernels, Dask workers) follow.
    It must run before torch's first operation (MKL and ATen read these variables once); when
    torch has already computed something, the variables still reach child processes, and
    :func:`environment` reports the path this process actually took.
    """
    chosen = mode(value)
    set_now: dict[str, str] = {}
    if chosen == "portable":
        os.environ["NLCL_NUMERICS"] = "portable"
        for name, val in PORTABLE.items():
            if name not in os.environ:
                os.environ[name] = set_now[name] = val
    return set_now


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (``model name``, ``flags``, ``cpu family``,
    ...); empty where the file cannot be read (not Linux)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.strip():
                    if fields:
                        break
                    continue
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    fields = _cpuinfo()
    if "model name" in fields:
        return fields["model name"]
    return platform.processor() or platform.machine() or "unknown"


def cpu_generation() -> str | None:
    """The CPU's vendor, family and model numbers (``/proc/cpuinfo``), e.g. ``AuthenticAMD 25/17``:
    what tells two generations apart where a virtual machine reports the same model name (``AMD
    EPYC``) for both, and what numpy's BLAS picks its kernels by. None where it cannot be read."""
    fields = _cpuinfo()
    if "cpu family" not in fields or "model" not in fields:
        return None
    return f"{fields.get('vendor_id', '?')} {fields['cpu family']}/{fields['model']}"


def cpu_isa() -> str:
    """The widest x86 vector extension the CPU reports: ``avx512f``, ``avx2``, ``avx``, ``sse4_2``
    (or the machine name on other architectures, ``unknown`` where flags cannot be read)."""
    flags = _cpuinfo().get("flags", "").split()
    if not flags:
        return platform.machine() or "unknown"
    return next((isa for isa in ("avx512f", "avx2", "avx", "sse4_2") if isa in flags), "sse2")


_MKL: dict[str, Any] = {}


def _mkl_verbose_lines() -> list[str]:
    """MKL's verbose lines for one tiny DGEMM, read from file descriptor 1."""
    import ctypes
    import tempfile

    import torch

    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(1)
        try:
            os.dup2(f.fileno(), 1)
            with torch.backends.mkl.verbose(torch.backends.mkl.VERBOSE_ON):
                x = torch.ones(4, 4, dtype=torch.float64)
                x @ x
            libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return f.read().decode(errors="replace").splitlines()


def mkl_path() -> dict[str, Any]:
    """The code path MKL took in this process: ``branch`` (the processor class of MKL's verbose
    header, e.g. ``Intel(R) AVX2``), ``cnr`` (the ``MKL_CBWR`` branch in force, ``OFF`` when none),
    ``threads`` and ``version``; ``{"available": False}`` where torch has no MKL."""
    import torch

    if not torch.backends.mkl.is_available():
        return {"available": False}
    if not _MKL:
        try:
            lines = _mkl_verbose_lines()
        except (OSError, RuntimeError, AttributeError) as exc:  # no fd 1, no libc, old torch
            return {"available": True, "error": f"{type(exc).__name__}: {exc}"}
        header = next((ln for ln in lines if "oneMKL" in ln or "Intel(R) Math Kernel" in ln), "")
        call = next((ln for ln in lines if "GEMM(" in ln), "")
        m = re.search(r"(oneMKL|Math Kernel Library)\s+(?:Version\s+)?([\d.]+(?: Update \d+)?)", header)
        b = re.search(r"architecture (.*?)(?:, Lnx| enabled processors|$)", header)
        _MKL.update(
            available=True,
            version=m.group(2) if m else "unknown",
            branch=(b.group(1).strip() if b else "unknown (MKL's verbose header was printed before)"),
        )
        cnr = re.search(r"CNR:(\S+)", call)
        _MKL["cnr"] = cnr.group(1) if cnr else "unknown"
    out = dict(_MKL)
    try:
        call = next((ln for ln in _mkl_verbose_lines() if "GEMM(" in ln), "")
        thr = re.search(r"NThr:(\d+)", call)
        out["threads"] = int(thr.group(1)) if thr else None
    except (OSError, RuntimeError, AttributeError):
        out["threads"] = None
    return out


def numpy_blas() -> dict[str, Any]:
    """numpy's BLAS (threadpoolctl): library, version, kernel architecture, threads."""
    try:
        import numpy  # noqa: F401  (loads numpy's BLAS so that threadpoolctl sees it)
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    for info in threadpool_info():
        if info.get("user_api") == "blas" and "numpy" in str(info.get("filepath", "")):
            return {
                "library": info.get("internal_api"),
                "version": info.get("version"),
                "architecture": info.get("architecture"),
                "threads": info.get("num_threads"),
            }
    return {}


def environment() -> dict[str, Any]:
    """The numeric environment of this process, for provenance records.

    ``mode`` (``NLCL_NUMERICS``), ``portable`` (whether torch's kernels are on the portable path:
    MKL's CNR branch AVX2 and ATen's AVX2 kernels), the CPU (model, generation, widest ISA), torch's version,
    kernel capability and thread count, MKL's path (:func:`mkl_path`), numpy's BLAS, and the
    kernel-choosing variables as set (:data:`SETTINGS`). Imports torch.
    """
    import torch

    mkl = mkl_path()
    env = {
        "mode": mode(),
        "cpu": cpu_model(),
        "cpu_generation": cpu_generation(),
        "cpu_isa": cpu_isa(),
        "torch": torch.__version__,
        "torch_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "mkl": mkl,
        "numpy_blas": numpy_blas(),
        "settings": {name: os.environ.get(name) for name in SETTINGS},
    }
    env["portable"] = on_portable_path(env)
    return env


def on_portable_path(env: Mapping[str, Any]) -> bool:
    """Whether ``env`` (an :func:`environment` record) computed torch's numbers on the portable path."""
    mkl = env.get("mkl") or {}
    branch = str(mkl.get("branch", ""))
    # MKL_ENABLE_INSTRUCTIONS=AVX512 overrides the CNR branch (MKL then reports CNR:AVX2 but runs
    # its AVX-512 kernels): the branch of MKL's header must be the AVX2 one too, where it is known.
    mkl_ok = (not mkl.get("available", False)) or (
        str(mkl.get("cnr", "")).upper() == PORTABLE["MKL_CBWR"]
        and ("AVX2" in branch or branch.startswith("unknown"))
        and "AVX-512" not in branch
    )
    return mkl_ok and str(env.get("torch_capability", "")).upper() == PORTABLE["ATEN_CPU_CAPABILITY"].upper()


def portable_unavailable(env: Mapping[str, Any]) -> str | None:
    """Why the portable path cannot be taken on this CPU, or None where it can (or MKL is absent).

    ``env`` is an :func:`environment` record of a process that asked for MKL's AVX2 branch
    (``MKL_CBWR=AVX2``). MKL honours that branch on Intel CPUs only: elsewhere it reports another
    CNR mode (``AUTO``) and runs its generic branch, whose bits differ from the AVX2 branch's, so
    numbers compared against ones made on the portable path can agree only within a tolerance.
    """
    mkl = env.get("mkl") or {}
    asked = (env.get("settings") or {}).get("MKL_CBWR")
    if not mkl.get("available") or asked != PORTABLE["MKL_CBWR"]:
        return None
    cnr = str(mkl.get("cnr", ""))
    if cnr.upper() == asked or cnr.startswith("unknown"):
        return None
    return (
        f"MKL {mkl.get('version', '?')} ignores MKL_CBWR={asked} on this CPU ({env.get('cpu')}): it "
        f"reports CNR {cnr} and the branch {mkl.get('branch', '?')!r}, so the portable path is not "
        "available here"
    )


def numbers_key(env: Mapping[str, Any], *, numpy: bool = True) -> dict[str, Any]:
    """What decides torch's last bits: two runs with the same key and seed give bitwise equal numbers.

    On the portable path the CPU drops out (MKL's CNR branch and ATen's AVX2 kernels are the same on
    every AVX2 CPU); on the native path the CPU's ISA and MKL's branch are part of the key. numpy's
    BLAS architecture is part of it unless ``numpy=False`` (for computations that use torch only):
    nlcl does not pin it.
    """
    mkl = env.get("mkl") or {}
    key: dict[str, Any] = {
        "torch": env.get("torch"),
        "torch_threads": env.get("torch_threads"),
        "torch_capability": env.get("torch_capability"),
        "mkl_cnr": mkl.get("cnr"),
    }
    if numpy:
        key["numpy_blas"] = (env.get("numpy_blas") or {}).get("architecture")
    if not on_portable_path(env):
        key["mkl_branch"] = mkl.get("branch")
        key["cpu_isa"] = env.get("cpu_isa")
    return key


def same_numbers(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, *, numpy: bool = True) -> bool:
    """Whether two :func:`environment` records promise bitwise equal numbers (False if either is missing)."""
    return bool(a) and bool(b) and numbers_key(a, numpy=numpy) == numbers_key(b, numpy=numpy)


def describe(env: Mapping[str, Any]) -> str:
    """One line for a provenance display: mode, CPU, torch's kernels, MKL's path, threads."""
    mkl = env.get("mkl") or {}
    mkl_text = (
        f"MKL {mkl.get('version', '?')} {mkl.get('branch', '?')} (CNR {mkl.get('cnr', '?')})"
        if mkl.get("available")
        else "no MKL"
    )
    path = "portable path" if env.get("portable") else "native path"
    return (
        f"{env.get('mode')} ({path}); {env.get('cpu')} [{env.get('cpu_isa')}]; torch {env.get('torch')} "
        f"{env.get('torch_capability')} kernels, {env.get('torch_threads')} thread(s); {mkl_text}"
    )
