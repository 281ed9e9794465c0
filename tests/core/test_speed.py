"""Tests for nlcl.core.speed: the matmul peak probe behind roofline ratios and book-bench's speed."""

import pytest

from nlcl.core.speed import matmul_peak_gflops
from nlcl.core.validate import ParameterError


def test_peak_is_a_positive_finite_rate():
    for calls in (1, 3):
        rate = matmul_peak_gflops(64, repeats=2, calls=calls)
        assert 0 < rate < float("inf")


@pytest.mark.parametrize(
    ("name", "kwargs"), [("n", {"n": 0}), ("repeats", {"repeats": -1}), ("calls", {"calls": 0})]
)
def test_bad_sizes_name_the_parameter(name, kwargs):
    with pytest.raises(ParameterError, match=name):
        matmul_peak_gflops(**{"n": 64, **kwargs})


def test_the_token_bench_and_book_bench_share_the_probe(monkeypatch):
    import nlcl.core.speed
    from nlcl.bench import book as book_bench
    from nlcl.tian.tokens import bench

    assert bench.matmul_peak_gflops is matmul_peak_gflops
    monkeypatch.setattr(nlcl.core.speed, "matmul_peak_gflops", lambda n, repeats, calls: 42.0)
    speed = book_bench.machine_speed(scale=0.001, samples=2, repeats=1)
    assert speed["matmul_gflops"] == 42.0 and speed["range"]["matmul_gflops"] == [42.0, 42.0]


def test_synchronize_is_a_no_op_on_cpu():
    import torch

    from nlcl.core.speed import synchronize

    assert synchronize(torch.device("cpu")) is None
