"""Fan-out over processes or machines on :mod:`dask.distributed` (one engine for the whole book).

:func:`dask_client` gives a client either of a ``LocalCluster`` sized to this machine (worker
*processes*, each with a fixed number of threads, so that small torch operations do not fight
over cores) or of a running scheduler given by address (``tcp://host:8786``: a cluster started by
hand with ``dask scheduler`` + ``dask worker``, or by dask-jobqueue / dask-kubernetes). The token
grid (:func:`nlcl.tian.tokens.grid.train_token_runs`), its benchmark and ``nlcl sweep`` all use it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from nlcl.core.validate import ParameterError, positive_int

__all__ = ["WORKER_THREADS_ENV", "dask_client", "set_worker_threads", "worker_threads"]

#: Torch threads per Dask worker process, when set (``nlcl book`` sets it to a chapter's per-slot
#: share of the cores when it gives the chapter more worker processes).
WORKER_THREADS_ENV = "NLCL_WORKER_THREADS"


def worker_threads(default: int) -> int:
    """Torch threads of each worker process of a local cluster: :data:`WORKER_THREADS_ENV` when set,
    else ``default`` (the token grid's: this process's threads shared among its workers). ``nlcl
    book`` sets the variable to the threads the chapter has in one process, so that the number of
    workers it gives a chapter never changes the thread count a task computes with, hence never the
    numbers (a token-grid stack is bitwise the same in a worker and in one process with as many
    threads)."""
    raw = os.environ.get(WORKER_THREADS_ENV, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ParameterError(f"{WORKER_THREADS_ENV}={raw!r} must be a positive integer")
    return int(raw)


def set_worker_threads(threads: int) -> int:
    """Set torch's intra-op threads in a worker process (run on every worker); returns the value."""
    import torch

    torch.set_num_threads(threads)
    return torch.get_num_threads()


@contextlib.contextmanager
def dask_client(
    scheduler: str | None = None, workers: int | None = None, threads_per_worker: int = 1
) -> Iterator[Any]:
    """A ``dask.distributed.Client``, closed (with its ``LocalCluster``) on exit.

    ``scheduler``: the address of a running scheduler; ``None`` starts a ``LocalCluster`` of
    ``workers`` processes (default: one per core) with ``threads_per_worker`` Dask threads each and
    the same number of torch threads (set in every worker before the first task). Workers of an
    external scheduler keep their own thread settings.
    """
    from dask.distributed import Client, LocalCluster

    threads = positive_int("threads_per_worker", threads_per_worker)
    if scheduler:
        if not isinstance(scheduler, str) or "://" not in scheduler and ":" not in scheduler:
            raise ParameterError(
                f"scheduler={scheduler!r}: expected an address such as 'tcp://127.0.0.1:8786'"
            )
        client = Client(scheduler, timeout="10s")
        try:
            yield client
        finally:
            client.close()
        return
    n = positive_int("workers", workers) if workers is not None else max(1, os.cpu_count() or 1)
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=threads,
        processes=True,
        dashboard_address=None,
        silence_logs=40,
    )
    client = Client(cluster)
    try:
        client.run(set_worker_threads, threads)
        yield client
    finally:
        client.close()
        cluster.close()
