import random

import numpy as np
import pytest
import torch

from nlcl.core.device import describe_device, get_device, seed_everything
from nlcl.core.validate import ParameterError


def test_get_device_auto_is_cpu_without_cuda(monkeypatch):
    monkeypatch.delenv("NLCL_DEVICE", raising=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert get_device("auto").type == expected
    assert get_device(None).type == expected
    assert get_device("cpu") == torch.device("cpu")
    assert get_device(torch.device("cpu")) == torch.device("cpu")


def test_env_override(monkeypatch):
    monkeypatch.setenv("NLCL_DEVICE", "cpu")
    assert get_device("auto") == torch.device("cpu")
    monkeypatch.setenv("NLCL_DEVICE", "tpu")
    with pytest.raises(ParameterError, match="NLCL_DEVICE='tpu' is not allowed"):
        get_device("auto")


def test_bad_device_names_allowed_values():
    with pytest.raises(
        ParameterError, match=r"device='gpu' is not allowed; choose one of: 'auto', 'cpu', 'cuda'"
    ):
        get_device("gpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error without CUDA")
def test_cuda_requested_without_cuda():
    with pytest.raises(ParameterError, match="CUDA is not available"):
        get_device("cuda")


def test_seed_everything_is_deterministic():
    def draw():
        return random.random(), np.random.rand(), torch.rand(1).item()

    gen = seed_everything(7)
    a = draw() + (torch.rand(1, generator=gen).item(),)
    gen = seed_everything(7)
    b = draw() + (torch.rand(1, generator=gen).item(),)
    assert a == b
    with pytest.raises(ParameterError, match="seed=-1"):
        seed_everything(-1)


def test_describe_device():
    assert describe_device(torch.device("cpu")).startswith("cpu (")
