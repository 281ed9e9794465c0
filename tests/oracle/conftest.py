"""The oracle modules of this folder import each other by plain name (they share no code with nlcl)."""

import sys
from pathlib import Path

import pytest
import torch

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


@pytest.fixture(autouse=True)
def _one_thread():
    """The oracle's steps are many small operations: one torch thread is the fastest on a small CPU."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
