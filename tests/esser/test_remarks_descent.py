"""Remark 1's gradient descent (nlcl.esser.remarks): the chunked descent is the one-batch one.

Bit for bit on the AMD EPYC where it was written; a BLAS may round a batched product differently
for another batch size (as it does here for a batch of one, which the chunks avoid), so the tests
allow float64 rounding (rtol 1e-12) and would still catch any change of arithmetic."""

from __future__ import annotations

import math

import pytest
import torch

from nlcl.esser import remarks


def _one_batch_descent(x, y, W, A, lr, steps, hidden):
    """The descent as first written (all S networks in one batch, out-of-place): the oracle."""
    W, A = W.clone(), A.clone()
    n, root_h = x.shape[0], math.sqrt(W.shape[1])
    for _ in range(steps):
        pre = x @ W.transpose(-1, -2)
        act = torch.relu(pre)
        g_u = (act @ A / root_h - y) / n
        g_A = act.transpose(-1, -2) @ g_u / root_h
        if hidden:
            g_pre = (g_u @ A.transpose(-1, -2)) * (pre > 0) / root_h
            W = W - lr * g_pre.transpose(-1, -2) @ x
        A = A - lr * g_A
    return torch.relu(x @ W.transpose(-1, -2)) @ A / root_h


@pytest.mark.parametrize("S", [1, 2, 3, 7, 30])
def test_descent_chunks_cover_the_networks_in_order_never_one_alone(S):
    for h in (8, 64, 4096, 1 << 16):
        chunks = remarks._descent_chunks(S, 32, h)
        assert [i for c in chunks for i in range(c.start, c.stop)] == list(range(S))
        assert S == 1 or all(c.stop - c.start >= 2 for c in chunks)


@pytest.mark.parametrize("hidden", [True, False])
@pytest.mark.parametrize(
    ("S", "h", "z"), [(3, 4096, 1), (10, 4096, 3), (9, 4096, 1), (7, 2048, 1), (5, 64, 3)]
)
def test_chunked_descent_is_the_one_batch_descent(monkeypatch, hidden, S, h, z):
    g = torch.Generator().manual_seed(S * h + z)
    n = 32
    x = torch.cat(
        [torch.randn(n, 2, generator=g, dtype=torch.float64), torch.ones(n, 1, dtype=torch.float64)], 1
    )
    W = torch.randn(S, h, 3, generator=g, dtype=torch.float64)
    A = torch.randn(S, h, z, generator=g, dtype=torch.float64)
    y = (
        torch.randn(S, n, z, generator=g, dtype=torch.float64)
        if z == 1
        else torch.randn(n, z, generator=g, dtype=torch.float64)
    )
    ref = _one_batch_descent(x, y, W, A, 0.5, 12, hidden)
    close = dict(rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(remarks._regression_descent(x, y, W, A, 0.5, 12, hidden), ref, **close)
    monkeypatch.setattr(remarks, "_CHUNK_ENTRIES", 1)  # chunks of two (and three) networks
    torch.testing.assert_close(remarks._regression_descent(x, y, W, A, 0.5, 12, hidden), ref, **close)
