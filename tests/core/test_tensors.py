"""Tests for nlcl.core.tensors: numpy/torch interoperation helpers."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.tensors import REDUCTIONS, as_array, as_tensor, is_torch, like, reduce_samples
from nlcl.core.validate import ParameterError


def test_is_torch():
    assert is_torch(torch.zeros(2)) and not is_torch(np.zeros(2)) and not is_torch([1.0])


def test_as_array_keeps_tensors_and_converts_the_rest():
    t = torch.zeros(3)
    assert as_array(t) is t
    a = as_array([1, 2])
    assert isinstance(a, np.ndarray) and a.dtype == float


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=8))
def test_like_matches_the_reference_type_and_dtype(values):
    ref_t = torch.zeros(1, dtype=torch.float32)
    out = like(values, ref_t)
    assert is_torch(out) and out.dtype == torch.float32
    ref_np = np.zeros(1, dtype=np.float32)
    out_np = like(torch.tensor(values, dtype=torch.float64), ref_np)
    assert isinstance(out_np, np.ndarray) and out_np.dtype == np.float32
    assert like(values, np.zeros(1, dtype=int)).dtype == np.float64


def test_as_tensor_casts_and_names_bad_input():
    assert as_tensor("x", [[1, 2]], torch.float64).dtype == torch.float64
    with pytest.raises(ParameterError, match="x must be an array of numbers"):
        as_tensor("x", [["a"]])


def test_reduce_samples_sum_or_mean():
    total = torch.tensor([6.0, 3.0])
    assert reduce_samples(total, 3, "sum") is total
    torch.testing.assert_close(reduce_samples(total, 3, "mean"), torch.tensor([2.0, 1.0]))
    assert reduce_samples(np.float64(4.0), 2, "mean") == 2.0
    assert REDUCTIONS == ("sum", "mean")
    with pytest.raises(ParameterError, match="reduction='max' is not allowed"):
        reduce_samples(total, 3, "max")
