"""Tests for nlcl.core.cluster: the Dask client used by the token grid, its benchmark and sweeps."""

import pytest
import torch

from nlcl.core.cluster import WORKER_THREADS_ENV, dask_client, set_worker_threads, worker_threads
from nlcl.core.validate import ParameterError


def _threads() -> int:
    return torch.get_num_threads()


def test_local_cluster_runs_tasks_with_the_asked_torch_threads():
    with dask_client(workers=2, threads_per_worker=1) as client:
        assert client.submit(sum, [1, 2, 3]).result() == 6
        threads = client.run(_threads)
        assert len(threads) == 2 and set(threads.values()) == {1}
    assert client.status == "closed"


def test_set_worker_threads_returns_the_setting():
    old = torch.get_num_threads()
    try:
        assert set_worker_threads(1) == 1
    finally:
        torch.set_num_threads(old)


def test_dask_client_rejects_bad_input():
    with pytest.raises(ParameterError, match="workers"):
        with dask_client(workers=0):
            pass
    with pytest.raises(ParameterError, match="threads_per_worker"):
        with dask_client(workers=1, threads_per_worker=0):
            pass
    with pytest.raises(ParameterError, match="scheduler"):
        with dask_client(scheduler="not an address"):
            pass


def test_worker_threads_follow_nlcl_worker_threads(monkeypatch):
    """nlcl book gives a chapter more worker processes only with as many torch threads each as the
    chapter has in one process (NLCL_WORKER_THREADS), so the worker count never changes a token-grid
    stack's thread count, hence its numbers (tests/tian/tokens/test_training.py:
    test_train_token_runs_on_dask_workers_is_bitwise_one_process)."""
    monkeypatch.delenv(WORKER_THREADS_ENV, raising=False)
    assert worker_threads(3) == 3
    monkeypatch.setenv(WORKER_THREADS_ENV, "4")
    assert worker_threads(1) == 4
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(WORKER_THREADS_ENV, bad)
        with pytest.raises(ParameterError, match="NLCL_WORKER_THREADS"):
            worker_threads(2)
