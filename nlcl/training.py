"""Batched contrastive training of the two-layer RF network (Tian 2023, Sec. 5 and App. E.2).

One vectorized computation trains many (configuration, seed) runs: runs that share the tensor
shapes (same K, d, M) are stacked along a leading run axis and updated together by SGD with
momentum and weight decay (per-run learning rates allowed).  Runs in a stack may differ in
activation, BatchNorm variant, loss, temperature, learning rate, P, ζ and seed.

* :func:`train_batched` is the generic trainer: a :class:`~nlcl.models.TwoLayerRF` stack plus a
  callable ``data(step) -> (x, x')`` of view batches (dense (R, N, K, d) tensors or
  :class:`~nlcl.tokens.TokenBatch`), so other data (e.g. MNIST patches, App. E.3) reuse it.
* :func:`train_token_runs` trains a list of :class:`TokenRun` configurations on the synthetic
  token task, grouping them into stacks, and returns the matching scores χ̄± per run.
* :func:`paper_grid` lists the runs of Figs. 9, 10, 11 and Table 1; ``python -m nlcl.training``
  (:func:`main`) trains them and saves the full-profile artifacts ``results/tian-tokens-full-*``.

Losses (Tian 2023, Eq. 1 and Sec. 2) on ℓ2-normalized outputs, with the normalization of the
paper's released code (a mean over the batch, logits s/τ with s the dot product):

* ``"infonce"`` — cross-entropy of the positive z_iᵀz'_i against the negatives z_iᵀz_j, j ≠ i:
  Eq. 1 with ε = 1, divided by τN (:func:`nlcl.losses.info_nce`);
* ``"quadratic"`` — uniform α: −(1/N)Σ_i z_iᵀz'_i/τ + (1/N²)Σ_{i≠j} z_iᵀz_j/τ.

Deterministic on CPU for given seeds.  Explained in ``book/tian-tokens.py``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, fields
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from .device import keep_freed_memory
from .models import ACTIVATIONS_2LAYER, BN_VARIANTS, TwoLayerRF, segments
from .tables import token_step
from .tokens import TokenBatch, make_token_worlds, sample_views
from .validate import ParameterError, choice, nonneg_float, positive_float, positive_int

__all__ = [
    "LOSSES",
    "ENGINES",
    "TokenRun",
    "TrainResult",
    "contrastive_loss",
    "sgd_momentum_step",
    "train_batched",
    "train_token_runs",
    "paper_grid",
    "PAPER_BETAS",
    "PAPER_PS",
    "runs_from_table",
    "grid_parameters",
    "main",
]

#: Loss names accepted by :func:`contrastive_loss`.
LOSSES: tuple[str, ...] = ("infonce", "quadratic")
#: Gradient engines of :func:`train_batched`.
ENGINES: tuple[str, ...] = ("auto", "tables", "autograd")
#: The paper's over-parameterizations β and candidates per RF P (Figs. 9-11, Table 1).
PAPER_BETAS: tuple[int, ...] = (1, 2, 5, 10)
PAPER_PS: tuple[int, ...] = (1, 3, 5, 10)


def contrastive_loss(f1: torch.Tensor, f2: torch.Tensor, loss: str, tau: float | torch.Tensor) -> torch.Tensor:
    """Per-run contrastive loss of views f1, f2 (R, N, d) → (R,) (Tian 2023, Eq. 1; Sec. 2).

    ``"infonce"``: mean over i of −log[exp(s_ii'/τ) / (exp(s_ii'/τ) + Σ_{j≠i} exp(s_ij/τ))] with
    s_ii' = f1[i]ᵀf2[i] and s_ij = f1[i]ᵀf1[j]; for unit-norm f this equals
    ``nlcl.losses.info_nce(f1, f2, τ, eps=1, reduction="mean") / τ`` (Eq. 1 with ε = 1, ÷ τN).
    ``"quadratic"`` (uniform α, the released code's form): [−(1/N)Σ_i s_ii' + (1/N²)Σ_{i≠j} s_ij]/τ
    = [``nlcl.losses.quadratic_loss(f1, f2)`` − Σ_i s_ii'] / (N²τ); the extra −Σ_i s_ii' is the
    released code's (1 + 1/N) factor on the positive term.  Both identities are unit-tested; this
    batched form is 2-7× faster than calling :mod:`nlcl.losses` and takes a per-run τ (R,).
    ``tau`` is a float or a per-run tensor (R,).
    """
    choice("loss", loss, LOSSES)
    if f1.shape != f2.shape or f1.ndim < 2:
        raise ParameterError(f"f1 {tuple(f1.shape)} and f2 {tuple(f2.shape)} must share a shape (..., N, d)")
    N = f1.shape[-2]
    tau_t = torch.as_tensor(tau, dtype=f1.dtype, device=f1.device)
    if bool((tau_t <= 0).any()):
        raise ParameterError(f"tau={tau!r} must be > 0")
    if loss == "infonce":
        return _info_nce_mean(f1, f2, tau_t)
    pos = (f1 * f2).sum(-1).mean(-1)
    g = f1.sum(-2)
    off = ((g * g).sum(-1) - (f1 * f1).sum((-1, -2))) / N**2
    return (-pos + off) / tau_t


def _info_nce_mean(f1: torch.Tensor, f2: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """InfoNCE as in the released code: cross-entropy with the positive on the diagonal."""
    t = tau if tau.ndim == 0 else tau.reshape(-1, *([1] * (f1.ndim - 1)))
    sim = torch.matmul(f1, f1.transpose(-1, -2))
    pos = (f1 * f2).sum(-1)
    logits = torch.diagonal_scatter(sim, pos, dim1=-2, dim2=-1) / t
    diag = torch.diagonal(logits, dim1=-2, dim2=-1)
    return (torch.logsumexp(logits, dim=-1) - diag).mean(-1)


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
    tau: float | Sequence[float] = 0.1,
    lr: float | Sequence[float] = 2e-3,
    momentum: float = 0.9,
    weight_decay: float = 5e-3,
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
    (:func:`nlcl.tables.token_step`, token inputs only, about an order of magnitude faster);
    ``"auto"`` (default) takes ``"tables"`` for :class:`~nlcl.tokens.TokenBatch` views and
    ``"autograd"`` otherwise.
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
    last = torch.full((R,), float("nan"))
    for step in it:
        x1, x2 = data(step)
        x = _cat_views(x1, x2)
        use_tables = engine == "tables" or (engine == "auto" and isinstance(x, TokenBatch))
        if use_tables:
            if not isinstance(x, TokenBatch):
                raise ParameterError(f"engine='tables' needs TokenBatch views; data({step}) gave {type(x1).__name__}")
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
                raise ValueError(
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


@dataclass(frozen=True)
class TokenRun:
    """One run of the token experiment (Tian 2023, Sec. 5, App. E.2); M = β P filters per RF.

    ``bn`` is one of :data:`nlcl.models.BN_VARIANTS`; ``loss`` one of :data:`LOSSES`.
    """

    activation: str = "relu"
    loss: str = "infonce"
    bn: str = "none"
    beta: int = 1
    P: int = 1
    zeta: float = 1.0
    seed: int = 0
    lr: float = 2e-3
    tau: float = 0.1

    @property
    def M(self) -> int:
        """Filters per RF, M = βP."""
        return self.beta * self.P

    def validate(self, n_tokens: int = 20) -> "TokenRun":
        """Raise ``ValueError`` for a bad field; return self."""
        choice("activation", self.activation, ACTIVATIONS_2LAYER)
        choice("loss", self.loss, LOSSES)
        choice("bn", self.bn, BN_VARIANTS)
        positive_int("beta", self.beta)
        positive_int("P", self.P)
        if self.P > n_tokens:
            raise ParameterError(f"P={self.P} must be <= n_tokens={n_tokens}")
        positive_float("zeta", self.zeta)
        positive_float("lr", self.lr)
        positive_float("tau", self.tau)
        if self.seed < 0:
            raise ParameterError(f"seed={self.seed} must be >= 0")
        return self


@dataclass
class TrainResult:
    """Output of :func:`train_token_runs`.

    ``table``: one row per run (its :class:`TokenRun` fields, M, chi_plus, chi_minus,
    final_loss), in input order.  ``weights``: run index → W (K, M, d) for the runs asked for.
    ``run_steps_per_s``: training speed (runs × steps / wall seconds).  ``wall_s``: total.
    """

    table: pd.DataFrame
    weights: dict[int, torch.Tensor]
    wall_s: float
    run_steps_per_s: float


def train_token_runs(
    runs: Sequence[TokenRun],
    steps: int,
    *,
    batch_size: int = 128,
    momentum: float = 0.9,
    weight_decay: float = 5e-3,
    K: int = 10,
    n_tokens: int = 20,
    G: int = 40,
    n_fixed: int = 5,
    out_dim: int = 20,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    max_elements: int = 48_000_000,
    keep_weights: Iterable[int] = (),
    progress: bool = False,
    on_stack: Callable[[pd.DataFrame], None] | None = None,
    workers: int = 1,
) -> TrainResult:
    """Train token-task runs in stacks of equal M and report χ̄+ and χ̄− per run (Sec. 5, E.2).

    Runs are grouped by M = βP and split so that a stack's hidden activations (R × 2N × KM)
    stay under ``max_elements``; inside a stack they are ordered by (activation, bn, loss) so
    those form contiguous segments.  A run's data (its token world and batches) and its
    initialization depend only on its own seed, P and ζ, so results do not depend on the
    grouping.  Scores come from :func:`nlcl.metrics.matching_scores`.  ``on_stack(table)``, if
    given, is called after each stack with the rows of the runs finished so far (input order).

    ``workers`` > 1 (CPU only) trains the stacks in that many processes, each with
    ⌊threads / workers⌋ torch threads (at least 1), largest stacks first.  On a small CPU this is
    faster than one process using all threads, because most operations of a step are too small
    for intra-op parallelism; results are the same up to floating-point reduction order.
    """
    steps = positive_int("steps", steps)
    batch_size = positive_int("batch_size", batch_size)
    runs = [r.validate(n_tokens) for r in runs]
    if not runs:
        raise ParameterError("runs is empty; expected at least one TokenRun")
    keep = set(int(i) for i in keep_weights)
    device = torch.device(device)
    workers = _check_workers(workers, device)
    order = sorted(range(len(runs)), key=lambda i: (runs[i].M, runs[i].activation, runs[i].bn, runs[i].loss, i))
    stacks: list[list[int]] = []
    for i in order:
        cap = max(1, max_elements // (2 * batch_size * K * runs[i].M))
        if stacks and runs[stacks[-1][0]].M == runs[i].M and len(stacks[-1]) < cap:
            stacks[-1].append(i)
        else:
            stacks.append([i])
    opts = dict(steps=steps, batch_size=batch_size, momentum=momentum, weight_decay=weight_decay, K=K,
                n_tokens=n_tokens, G=G, n_fixed=n_fixed, out_dim=out_dim, device=str(device), dtype=dtype)
    chi_p = np.full(len(runs), np.nan)
    chi_m = np.full(len(runs), np.nan)
    final = np.full(len(runs), np.nan)
    weights: dict[int, torch.Tensor] = {}
    t0 = time.perf_counter()

    def collect(idx, out) -> None:
        cp, cm, last, W = out
        chi_p[idx], chi_m[idx], final[idx] = cp, cm, last
        for j, i in enumerate(idx):
            if i in keep:
                weights[i] = W[j].clone()
        if on_stack is not None:
            t = _result_table(runs, chi_p, chi_m, final)
            on_stack(t[~np.isnan(chi_p)])

    if workers == 1:
        for idx in stacks:
            rs = [runs[i] for i in idx]
            collect(idx, _train_stack(rs, opts, f"M={rs[0].M} ×{len(rs)}" if progress else False))
    else:
        # Longest stacks first (cost ~ R·(M + c)), so that no worker is left with a big one at the end.
        jobs = sorted(stacks, key=lambda idx: -_stack_cost(len(idx), runs[idx[0]].M))
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(runs), desc=f"runs ({workers} workers)", unit="run")
        with _worker_pool(workers) as pool:
            pending = [(idx, pool.apply_async(_train_stack, ([runs[i] for i in idx], opts, False))) for idx in jobs]
            for idx, res in pending:
                collect(idx, res.get())
                if bar is not None:
                    bar.update(len(idx))
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    table = _result_table(runs, chi_p, chi_m, final)
    return TrainResult(table, weights, wall, len(runs) * steps / wall if wall > 0 else float("nan"))


def _check_workers(workers: int, device: torch.device) -> int:
    """Validate a number of worker processes for ``device`` (more than one only on CPU)."""
    workers = positive_int("workers", workers)
    if workers > 1 and device.type != "cpu":
        raise ParameterError(f"workers={workers} needs device='cpu' (got {device}); on a GPU use workers=1")
    return workers


def _worker_pool(workers: int):
    """A pool of ``workers`` spawned processes sharing this process's torch threads (at least 1 each)."""
    import multiprocessing

    threads = max(1, torch.get_num_threads() // workers)
    return multiprocessing.get_context("spawn").Pool(workers, initializer=torch.set_num_threads, initargs=(threads,))


def _stack_cost(n_runs: int, M: int) -> int:
    """Relative cost of a stack of ``n_runs`` runs with M filters per RF (for scheduling only)."""
    return n_runs * (M + 20)


def _build_stack(rs: Sequence[TokenRun], *, batch_size: int = 128, K: int = 10, n_tokens: int = 20, G: int = 40,
                 n_fixed: int = 5, out_dim: int = 20, device: str | torch.device = "cpu",
                 dtype: torch.dtype = torch.float32):
    """The token worlds, the stacked model and ``data(step)`` of one stack of equal-M runs."""
    device = torch.device(device)
    world = make_token_worlds([r.seed for r in rs], [r.P for r in rs], [r.zeta for r in rs],
                              n_tokens=n_tokens, K=K, G=G, n_fixed=n_fixed)
    model = TwoLayerRF(len(rs), K, n_tokens, rs[0].M, out_dim, activation=[r.activation for r in rs],
                       bn=[r.bn for r in rs], seeds=[r.seed for r in rs], dtype=dtype, device=device)
    emb = world.embedding(dtype=dtype, device=device)

    def data(step: int):
        x1, x2, _ = sample_views(world, step, batch_size, device=device, embedding=emb)
        return x1, x2

    return world, model, data


def _train_stack(rs: Sequence[TokenRun], opts: dict, progress: bool | str):
    """Train one stack of equal-M runs; return (χ̄+, χ̄−, final loss) arrays and the filters W."""
    from .metrics import matching_scores

    device = torch.device(opts["device"])
    world, model, data = _build_stack(rs, batch_size=opts["batch_size"], K=opts["K"], n_tokens=opts["n_tokens"],
                                      G=opts["G"], n_fixed=opts["n_fixed"], out_dim=opts["out_dim"], device=device,
                                      dtype=opts["dtype"])
    last = train_batched(model, data, opts["steps"], loss=[r.loss for r in rs], tau=[r.tau for r in rs],
                         lr=[r.lr for r in rs], momentum=opts["momentum"], weight_decay=opts["weight_decay"],
                         check_every=1 if device.type == "cpu" else 50, progress=progress)
    Wf = model.filters().cpu()
    cp, cm = matching_scores(Wf, world, linear=[r.activation == "linear" for r in rs])
    return cp.double().numpy(), cm.double().numpy(), last.double().cpu().numpy(), Wf


def _result_table(runs, chi_p, chi_m, final) -> pd.DataFrame:
    table = pd.DataFrame([asdict(r) for r in runs])
    table["M"] = [r.M for r in runs]
    table["chi_plus"] = chi_p
    table["chi_minus"] = chi_m
    table["final_loss"] = final
    return table


def paper_grid(
    figures: Sequence[str] = ("fig9", "fig10", "fig11", "table1"),
    *,
    seeds: Sequence[int] = (0, 1, 2),
    betas: Sequence[int] = PAPER_BETAS,
    Ps: Sequence[int] = PAPER_PS,
    activations: Sequence[str] = ACTIVATIONS_2LAYER,
    zetas: Sequence[float] = (2.0, 5.0, 10.0),
    lr: float = 2e-3,
    tau: float = 0.1,
) -> pd.DataFrame:
    """The runs of Tian (2023) Figs. 9, 10, 11 and Table 1, one row per run with its figure.

    * fig9: InfoNCE, every activation, ζ = 1, no BN;
    * fig10: the same with the quadratic loss;
    * fig11: ReLU, InfoNCE, BN ∈ {none, vanilla} × ζ ∈ ``zetas``;
    * table1: ReLU, InfoNCE, ζ = 10, the four BN backprop variants.

    Every (β, P, seed) of ``betas`` × ``Ps`` × ``seeds``.  Columns: ``figure`` and the
    :class:`TokenRun` fields.  With the defaults: 240 + 240 + 288 + 192 = 960 runs.
    """
    rows = []
    for fig in figures:
        choice("figures", fig, ("fig9", "fig10", "fig11", "table1"))
        if fig in ("fig9", "fig10"):
            combos = [dict(activation=a, loss="infonce" if fig == "fig9" else "quadratic") for a in activations]
        elif fig == "fig11":
            combos = [dict(bn=b, zeta=float(z)) for z in zetas for b in ("none", "vanilla")]
        else:
            combos = [dict(bn=b, zeta=10.0) for b in ("detached", "var", "mean", "vanilla")]
        for c in combos:
            for beta in betas:
                for P in Ps:
                    for s in seeds:
                        run = TokenRun(**{**dict(beta=int(beta), P=int(P), seed=int(s), lr=lr, tau=tau), **c})
                        rows.append(dict(figure=fig, **asdict(run.validate())))
    return pd.DataFrame(rows)


def runs_from_table(table: pd.DataFrame) -> list[TokenRun]:
    """The :class:`TokenRun` of each row of a table with its fields (e.g. :func:`paper_grid`)."""
    names = [f.name for f in fields(TokenRun)]
    missing = [n for n in names if n not in table.columns]
    if missing:
        raise ParameterError(f"table lacks the TokenRun column(s) {missing}")
    types = {f.name: f.type for f in fields(TokenRun)}
    out = []
    for rec in table[names].to_dict("records"):
        out.append(TokenRun(**{k: (int(v) if types[k] == "int" else float(v) if types[k] == "float" else str(v))
                               for k, v in rec.items()}))
    return out


def grid_parameters(steps: int, lr: float = 2e-3, seeds: Sequence[int] = (0, 1, 2)) -> dict:
    """The parameters recorded with a paper-grid artifact (and checked when a chapter loads it).

    Everything that determines the runs of :func:`paper_grid` trained by :func:`train_token_runs`
    with its defaults (Tian 2023, Sec. 5 and App. E.2), plus ``steps``, ``lr`` and the ``seeds``.
    """
    return dict(steps=int(steps), batch_size=128, momentum=0.9, weight_decay=5e-3, K=10, n_tokens=20, G=40,
                n_fixed=5, out_dim=20, lr=float(lr), tau=0.1, seeds=[int(s) for s in seeds],
                betas=list(PAPER_BETAS), Ps=list(PAPER_PS), zetas=[2.0, 5.0, 10.0],
                activations=list(ACTIVATIONS_2LAYER))


def main(argv: Sequence[str] | None = None) -> None:
    """Train figures of the paper grid and save one ``nlcl.results`` artifact per figure.

    ``python -m nlcl.training --figures table1 fig9 --steps 5000 --prefix tian-tokens-full``
    writes ``results/<prefix>-<figure>.csv/.json`` (the artifacts ``book/tian-tokens.py`` reads).
    """
    import argparse
    import signal
    import sys

    from . import results
    from .device import describe_device, get_device
    from .provenance import git_commit

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--figures", nargs="+", default=["fig9", "fig10", "fig11", "table1"])
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--prefix", default="tian-tokens-full")
    ap.add_argument("--profile", default="full")
    ap.add_argument("--workers", type=int, default=1, help="processes on CPU (e.g. the number of cores)")
    args = ap.parse_args(argv)
    dev = get_device(args.device)
    # A terminated run (SIGTERM, e.g. `kill` or a batch scheduler) exits through the worker pool's
    # context manager, which stops the worker processes instead of leaving them running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # All figures and seeds in one call: stacks of equal M hold runs of every figure and seed,
    # smallest M first, and every figure's finished rows are saved after each stack, so an
    # interrupted run leaves honest subsets (all cells up to some M = βP), labeled as such.
    grid = paper_grid(args.figures, seeds=args.seeds, lr=args.lr)
    t_start = time.perf_counter()
    commit = git_commit()  # the code as it was when training started

    def save(partial: pd.DataFrame) -> None:
        table = grid[["figure"]].join(partial, how="inner")
        wall = time.perf_counter() - t_start
        for fig in args.figures:
            sub = table[table.figure == fig].reset_index(drop=True)
            total = int((grid.figure == fig).sum())
            params = {**grid_parameters(args.steps, args.lr, args.seeds), "figure": fig}
            results.save(f"{args.prefix}-{fig}", sub, params=params, profile=args.profile,
                         device=describe_device(dev), commit=commit,
                         notes=f"{len(sub)} of {total} runs done ({args.steps} steps each, {args.workers} worker process(es)); the whole grid "
                               f"({len(table)} of {len(grid)} runs) took {wall:.0f} s wall so far; "
                               f"{'complete' if len(sub) == total else 'PARTIAL: an honest subset of the grid'}")
        print(f"saved {len(table)} of {len(grid)} runs after {wall:.0f} s", flush=True)

    res = train_token_runs(runs_from_table(grid), args.steps, device=dev, progress=True, on_stack=save,
                           workers=args.workers)
    print(f"{len(grid)} runs x {args.steps} steps in {res.wall_s:.0f} s wall "
          f"({res.run_steps_per_s:.0f} run-steps/s, {args.workers} worker(s), {describe_device(dev)})", flush=True)


if __name__ == "__main__":
    main()
