"""The machine's arithmetic speed: the float32 matmul rate that roofline ratios are taken against.

One probe, used twice: ``nlcl bench`` divides each token step's FLOPs by it (a *roofline ratio*,
comparable across machines; :mod:`nlcl.tian.tokens.bench`), and ``make book-bench`` samples it
before and after a build to tell the machine's hour (:func:`nlcl.bench.book.machine_speed`).
On CPU it is timed in process CPU time, so time spent descheduled on a shared machine does not
count.
"""

from __future__ import annotations

import time

import torch

from nlcl.core.validate import positive_int

__all__ = ["synchronize", "matmul_peak_gflops"]


def synchronize(dev: torch.device) -> None:
    """Wait for the GPU's queued work, so that a clock read after it times the work (CUDA); nothing
    on CPU, where operators return when done."""
    if dev.type == "cuda":  # pragma: no cover - no GPU in CI
        torch.cuda.synchronize()


def matmul_peak_gflops(
    n: int = 1024, repeats: int = 5, device: torch.device | str = "cpu", *, calls: int = 4
) -> float:
    """Best-of-``repeats`` float32 GFLOP/s of an n×n matmul (2n³ FLOPs), the machine's peak proxy.

    Each repeat times ``calls`` products and takes their mean; the best repeat counts (a burst of
    load elsewhere only lowers the others). On CPU the time is the process CPU time
    (``time.process_time``), so that time spent descheduled does not count; with T threads it is
    T × wall time at best, i.e. the per-core peak times T. On CUDA it is wall time between
    synchronisations. The first product (allocation, library set-up) is not timed.
    """
    n = positive_int("n", n)
    repeats = positive_int("repeats", repeats)
    calls = positive_int("calls", calls)
    dev = torch.device(device)
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    a @ b
    best = float("inf")
    clock = time.perf_counter if dev.type == "cuda" else time.process_time
    for _ in range(repeats):
        synchronize(dev)
        t0 = clock()
        for _ in range(calls):
            a @ b
        synchronize(dev)
        best = min(best, (clock() - t0) / calls)
    return 2 * n**3 / max(best, 1e-12) / 1e9
