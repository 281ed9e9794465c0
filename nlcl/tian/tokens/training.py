"""Batched contrastive training of the two-layer RF network (Tian 2023, Sec. 5 and App. E.2).

One vectorized computation trains many (configuration, seed) runs: runs that share the tensor
shapes (same K, d, M) are stacked along a leading run axis and updated together by SGD with
momentum and weight decay (per-run learning rates allowed).  Runs in a stack may differ in
activation, BatchNorm variant, loss, temperature, learning rate, P, ζ and seed.

* :func:`train_batched` is the generic trainer: a :class:`~nlcl.tian.rf_network.TwoLayerRF` stack plus a
  callable ``data(step) -> (x, x')`` of view batches (dense (R, N, K, d) tensors or
  :class:`~nlcl.tian.tokens.world.TokenBatch`), so other data (e.g. MNIST patches, App. E.3) reuse it.
* :mod:`nlcl.tian.tokens.grid` trains the paper's grid of token-task runs with it; ``nlcl train-grid``
  saves the full-profile artifacts ``results/tian-tokens-full-*``.

Losses (Tian 2023, Eq. 1 and Sec. 2) on ℓ2-normalized outputs, with the normalization of the
paper's released code (a mean over the batch, logits s/τ with s the dot product):

* ``"infonce"`` — cross-entropy of the positive z_iᵀz'_i against the negatives z_iᵀz_j, j ≠ i:
  Eq. 1 with ε = 1, divided by τN (:func:`nlcl.tian.losses.info_nce`);
* ``"quadratic"`` — uniform α: −(1/N)Σ_i z_iᵀz'_i/τ + (1/N²)Σ_{i≠j} z_iᵀz_j/τ.

Deterministic on CPU for given seeds.  Explained in ``book/tian-tokens.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import torch

from nlcl.core.device import keep_freed_memory
from nlcl.core.validate import NonFiniteError, ParameterError, choice, nonneg_float, positive_int
from nlcl.tian.losses import LOSSES, contrastive_loss
from nlcl.tian.paper import RELEASED_TAU, SGD_LR, SGD_MOMENTUM, WEIGHT_DECAY
from nlcl.tian.rf_network import TwoLayerRF, segments
from nlcl.tian.tokens.tables import token_step
from nlcl.tian.tokens.world import TokenBatch

__all__ = [
    "ENGINES",
    "sgd_momentum_step",
    "train_batched",
]

#: Gradient engines of :func:`train_batched`.
ENGINES: tuple[str, ...] = ("auto", "tables", "autograd", "fused")


def sgd_momentum_step(
    params: Sequence[torch.Tensor],
    buffers: Sequence[torch.Tensor],
    lr: torch.Tensor,
    momentum: float,
    weight_decay: float,
) -> None:
    """One SGD step with momentum and weight decay, per-run learning rates (torch.optim.SGD rule).

    d = ∇ + λ p;  b ← μ b + d;  p ← p − η_r b, with η_r = ``lr[r]`` for run r (leading axis).
    Buffers start at zero, which reproduces torch's first step b = d.  Used by
    :func:`train_batched` (Tian 2023, Sec. 5: momentum 0.9, weight decay 5e-3).
    """
    with torch.no_grad():
        for p, b in zip(params, buffers):
            if p.grad is None:
                continue
            d = p.grad.add(p, alpha=weight_decay) if weight_decay else p.grad
            b.mul_(momentum).add_(d)
            p.sub_(lr.reshape(-1, *([1] * (p.ndim - 1))) * b)
            p.grad = None


def _cat_views(x1, x2):
    if isinstance(x1, TokenBatch):
        return TokenBatch(torch.cat([x1.index, x2.index], 1), x1.embedding)
    return torch.cat([x1, x2], 1)


def train_batched(
    model: TwoLayerRF,
    data: Callable[[int], tuple],
    steps: int,
    *,
    loss: str | Sequence[str] = "infonce",
    tau: float | Sequence[float] = RELEASED_TAU,
    lr: float | Sequence[float] = SGD_LR,
    momentum: float = SGD_MOMENTUM,
    weight_decay: float = WEIGHT_DECAY,
    check_every: int = 1,
    callback: Callable[[int, torch.Tensor], None] | None = None,
    progress: bool | str = False,
    engine: str = "auto",
) -> torch.Tensor:
    """Train a stack of runs by SGD on the contrastive loss (Tian 2023, Sec. 5, Eq. 1).

    ``data(step)`` returns the two views (x, x') of the step for all R runs.  Both views go through
    the network in one call; BatchNorm statistics are per view (as two forward calls would be).
    ``loss``, ``tau`` and ``lr`` are scalars or one per run.  Raises ``ValueError`` naming the
    run(s) and step when a loss becomes NaN or infinite (checked every ``check_every`` steps).
    Returns the per-run loss of the last step (R,).

    ``engine``: ``"autograd"`` differentiates the per-sample network with torch autograd;
    ``"tables"`` computes the same loss and gradients in token-table space
    (:func:`nlcl.tian.tokens.tables.token_step`, token inputs only, about an order of magnitude faster);
    ``"auto"`` (default) takes ``"tables"`` for :class:`~nlcl.tian.tokens.world.TokenBatch` views and
    ``"autograd"`` otherwise; ``"fused"`` (opt-in, token inputs only) runs the whole step (the
    batch draw for :class:`~nlcl.tian.tokens.fused.TokenViews` data, forward, loss, backward, update)
    as one compiled graph per shape (:mod:`nlcl.tian.tokens.fused`), equal to ``"tables"`` within
    rounding, not bitwise.
    """
    steps = positive_int("steps", steps)
    engine = choice("engine", engine, ENGINES)
    keep_freed_memory()
    R = model.n_runs
    losses = [choice("loss", l, LOSSES) for l in (loss if not isinstance(loss, str) else [loss] * R)]
    if len(losses) != R:
        raise ParameterError(f"loss has {len(losses)} entries; expected 1 or n_runs={R}")
    dev, dt = model.W.device, model.W.dtype
    tau_t = torch.as_tensor(tau, dtype=dt, device=dev).reshape(-1).expand(R).clone()
    lr_t = torch.as_tensor(lr, dtype=dt, device=dev).reshape(-1).expand(R).clone()
    if bool((tau_t <= 0).any()) or not bool(torch.isfinite(tau_t).all()):
        raise ParameterError(f"tau={tau!r} must be finite and > 0")
    if bool((lr_t <= 0).any()) or not bool(torch.isfinite(lr_t).all()):
        raise ParameterError(f"lr={lr!r} must be finite and > 0")
    nonneg_float("momentum", momentum)
    nonneg_float("weight_decay", weight_decay)
    check_every = positive_int("check_every", check_every)
    segs = segments(losses)
    params = model.parameters()
    bufs = [torch.zeros_like(p) for p in params]
    it: Iterable[int] = range(steps)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc=progress if isinstance(progress, str) else "train", leave=False)
    if engine == "fused":
        from nlcl.tian.tokens.fused import train_fused

        return train_fused(
            model,
            data,
            steps,
            losses=losses,
            tau=tau_t,
            lr=lr_t,
            momentum=momentum,
            weight_decay=weight_decay,
            check_every=check_every,
            callback=callback,
            it=it,
        )
    last = torch.full((R,), float("nan"))
    for step in it:
        x1, x2 = data(step)
        x = _cat_views(x1, x2)
        use_tables = engine == "tables" or (engine == "auto" and isinstance(x, TokenBatch))
        if use_tables:
            if not isinstance(x, TokenBatch):
                raise ParameterError(
                    f"engine='tables' needs TokenBatch views; data({step}) gave {type(x1).__name__}"
                )
            per_run, gW, gV = token_step(model, x, losses, tau_t)
        else:
            f = model(x, views=2)
            N = f.shape[1] // 2
            f1, f2 = f[:, :N], f[:, N:]
            parts = [contrastive_loss(f1[sl], f2[sl], name, tau_t[sl]) for sl, name in segs]
            per_run = parts[0] if len(parts) == 1 else torch.cat(parts)
        if (step + 1) % check_every == 0 or step == steps - 1:
            bad = ~torch.isfinite(per_run.detach())
            if bool(bad.any()):
                runs = torch.nonzero(bad).flatten().tolist()
                raise NonFiniteError(
                    f"training diverged: loss is NaN or infinite at step {step} for run(s) {runs[:10]} "
                    f"(lr={lr_t[runs[0]].item():g}); lower lr or check the inputs"
                )
        if use_tables:
            model.W.grad, model.V.grad = gW, gV
        else:
            per_run.sum().backward()
        sgd_momentum_step(params, bufs, lr_t, momentum, weight_decay)
        if callback is not None:
            callback(step, per_run.detach())
        last = per_run.detach()
    return last
