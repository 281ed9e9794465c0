"""The fused token step captured once as a CUDA graph and replayed every step (opt-in, GPU only).

On a GPU the fused step of a grid stack is bound by launching its kernels, not by arithmetic: on an
H200 every 60-run stack of the token grid took about 1.06 ms a step whatever its M (stop 43), so the
grid's 960 runs × 5000 steps took 98 s (issue 28 asks for 60).  A CUDA graph records the step's kernel
launches once and replays them with one call.  That is possible here because every input of
:func:`nlcl.tian.tokens.fused.train_fused`'s drawn-batch step is a tensor that lives for the whole run:
the state (W, V and their momentum buffers, updated in place), the step counter (refilled each step),
the seeds, the embedding and the learning rates.  A replay runs the same kernels on the same memory,
so the numbers are those of the step it captured.

Set ``NLCL_CUDA_GRAPH=1`` to use it (default ``0``): it has not yet run on a GPU, and becomes the
default only once a lent GPU has shown it bitwise equal to the plain loop and faster
(``tests/device/gpu.sh``).  On the CPU the setting changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import torch

from nlcl.core.validate import ParameterError

__all__ = ["ENV", "graph_wanted", "capture"]

ENV = "NLCL_CUDA_GRAPH"


def graph_wanted(device: torch.device) -> bool:
    """Whether to capture the fused step on ``device``: ``NLCL_CUDA_GRAPH=1`` and a CUDA device.

    Raises
    ------
    ParameterError
        When ``NLCL_CUDA_GRAPH`` is set to anything but ``0`` or ``1``.
    """
    value = os.environ.get(ENV, "0").strip() or "0"
    if value not in ("0", "1"):
        raise ParameterError(f"{ENV}={value!r} is not allowed; choose '0' (plain loop) or '1' (CUDA graph)")
    return value == "1" and torch.device(device).type == "cuda"


def capture(step: Callable, args: Sequence[torch.Tensor], state: int = 4, warmup: int = 3) -> Callable:
    """Capture ``step(*args)`` as a CUDA graph; return a function that replays it.

    The first ``state`` arguments are updated in place by ``step``: the ``warmup`` calls that compile
    and load its kernels (on a side stream, as CUDA graphs need) run on copies of them, so capturing
    leaves the run's state as it was.  The returned function takes the same ``args`` (the very same
    tensors: a graph reads and writes fixed addresses), replays the graph and returns its outputs,
    the first (the per-run loss) as a copy, since the next replay overwrites it.
    """
    args = tuple(args)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        copies = tuple(a.clone() for a in args[:state])
        for _ in range(warmup):
            step(*copies, *args[state:])
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = step(*args)

    def replay(*given: torch.Tensor) -> tuple:
        if len(given) != len(args) or any(a is not b for a, b in zip(given, args, strict=True)):
            raise RuntimeError("a captured step replays on the tensors it was captured with")
        graph.replay()
        return (outs[0].clone(), *outs[1:])

    replay.graph = graph  # kept alive with the function
    return replay
