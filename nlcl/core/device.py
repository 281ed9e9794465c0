"""Device selection and seeding: one call seeds python, numpy and torch.

The device is CUDA when available, else CPU. It can be forced with a parameter (``device="cpu"``)
or with the environment variable ``NLCL_DEVICE`` (the parameter wins unless it is ``"auto"``).
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from nlcl.core.validate import ParameterError, nonneg_int

__all__ = ["DEVICES", "get_device", "seed_everything", "describe_device", "keep_freed_memory"]

DEVICES = ("auto", "cpu", "cuda")


def get_device(device: str | torch.device | None = "auto") -> torch.device:
    """Resolve ``device`` ("auto", "cpu", "cuda", "cuda:1", or a torch.device) to a torch.device.

    "auto" (or ``None``) reads ``NLCL_DEVICE`` and otherwise picks CUDA when it is available.
    Asking for CUDA on a machine without it is an error, not a silent fall-back.
    """
    if isinstance(device, torch.device):
        return device
    if device is None or device == "auto":
        device = os.environ.get("NLCL_DEVICE", "auto") or "auto"
        if device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        source = "NLCL_DEVICE"
    else:
        source = "device"
    if not isinstance(device, str) or not (device == "cpu" or device.split(":")[0] == "cuda"):
        raise ParameterError(f"{source}={device!r} is not allowed; choose one of: 'auto', 'cpu', 'cuda'")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ParameterError(f"{source}={device!r} but CUDA is not available here; use 'cpu' or 'auto'")
    return torch.device(device)


def seed_everything(seed: int) -> torch.Generator:
    """Seed python's ``random``, numpy's global generator and torch (CPU and CUDA).

    Returns a fresh ``torch.Generator`` seeded with ``seed`` for code that prefers explicit
    generators. Same seed, same numbers on CPU.
    """
    seed = nonneg_int("seed", seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():  # pragma: no cover - no GPU in CI
        torch.cuda.manual_seed_all(seed)
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen


def describe_device(device: torch.device) -> str:
    """One line naming the device, e.g. 'cuda:0 (NVIDIA H200)' or 'cpu (2 threads)'."""
    if device.type == "cuda":  # pragma: no cover - no GPU in CI
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    return f"cpu ({torch.get_num_threads()} threads)"


_MALLOC_TUNED: bool | None = None


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory for reuse instead of returning it to the system.

    A training step allocates and frees the same few megabyte-sized tensors every step.  With
    glibc's defaults, blocks above a dynamic threshold are ``mmap``-ed and ``munmap``-ed each
    time, and every reuse pays page faults (seen as system time): on the 2-core CI machine this
    doubled the time of a token-task step.  This raises the mmap threshold to 32 MiB and the trim
    threshold to 1 GiB (``mallopt``, the same as ``MALLOC_MMAP_THRESHOLD_`` /
    ``MALLOC_TRIM_THRESHOLD_``).  The process keeps up to that much freed memory; results are
    unchanged.  Idempotent; returns True when applied, False where glibc is not the allocator.
    """
    global _MALLOC_TUNED
    if _MALLOC_TUNED is None:
        _MALLOC_TUNED = False
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6")
            M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
            ok = libc.mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1
            ok = libc.mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024) == 1 and ok
            _MALLOC_TUNED = bool(ok)
        except (OSError, AttributeError):  # not glibc (macOS, Windows, musl)
            _MALLOC_TUNED = False
    return _MALLOC_TUNED
