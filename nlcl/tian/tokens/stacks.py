"""One stack of token-task runs (Tian 2023, Sec. 5): runs of equal M = βP trained together.

:func:`build_stack` makes the stack's token worlds (one per run), the stacked two-layer RF model
and its minibatch sampler; :func:`nlcl.tian.tokens.grid.train_token_runs` and the benchmark
(:mod:`nlcl.tian.tokens.bench`) train and time such stacks. Private helpers shared by those two modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import pandas as pd
import torch

from nlcl.core.validate import ParameterError, positive_int
from nlcl.tian.rf_network import TwoLayerRF
from nlcl.tian.tokens.fused import TokenViews
from nlcl.tian.tokens.world import make_token_worlds

__all__: list[str] = []


def check_workers(workers: int, device: torch.device) -> int:
    """Validate a number of worker processes for ``device`` (more than one only on CPU)."""
    workers = positive_int("workers", workers)
    if workers > 1 and device.type != "cpu":
        raise ParameterError(f"workers={workers} needs device='cpu' (got {device}); on a GPU use workers=1")
    return workers


def stack_cost(n_runs: int, M: int) -> int:
    """Relative cost of a stack of ``n_runs`` runs with M filters per RF (for scheduling only)."""
    return n_runs * (M + 20)


def build_stack(
    rs: Sequence,
    *,
    batch_size: int = 128,
    K: int = 10,
    n_tokens: int = 20,
    G: int = 40,
    n_fixed: int = 5,
    out_dim: int = 20,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
):
    """The token worlds, the stacked model and ``data(step)`` of one stack of equal-M runs
    (``rs``: :class:`~nlcl.tian.tokens.grid.TokenRun`)."""
    device = torch.device(device)
    world = make_token_worlds(
        [r.seed for r in rs],
        [r.P for r in rs],
        [r.zeta for r in rs],
        n_tokens=n_tokens,
        K=K,
        G=G,
        n_fixed=n_fixed,
    )
    model = TwoLayerRF(
        len(rs),
        K,
        n_tokens,
        rs[0].M,
        out_dim,
        activation=[r.activation for r in rs],
        bn=[r.bn for r in rs],
        seeds=[r.seed for r in rs],
        dtype=dtype,
        device=device,
    )
    emb = world.embedding(dtype=dtype, device=device)
    # data(step) -> (x, x'), sample_views' draws; the fused engine draws the same in its step
    return world, model, TokenViews(world, batch_size, emb)


def result_table(runs, scores, final) -> pd.DataFrame:
    """One row per run: its fields, M, χ̄± (book's scoring), the final loss, then the released,
    sign-symmetric and printed χ̄± (``scores`` columns 0-7, :func:`nlcl.tian.tokens.grid._train_stack`)."""
    table = pd.DataFrame([asdict(r) for r in runs])
    table["M"] = [r.M for r in runs]
    table["chi_plus"] = scores[:, 0]
    table["chi_minus"] = scores[:, 1]
    table["final_loss"] = final
    for j, name in enumerate(("released", "symmetric", "printed")):
        table[f"chi_plus_{name}"] = scores[:, 2 + 2 * j]
        table[f"chi_minus_{name}"] = scores[:, 3 + 2 * j]
    return table
