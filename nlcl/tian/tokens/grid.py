"""The paper's grid of token-task runs (Tian 2023, Sec. 5, Figs. 9-11, Table 1) and its trainer.

:func:`paper_grid` lists the runs of Figs. 9, 10, 11 and Table 1; :func:`train_token_runs` trains
them in stacks of equal β and P (vectorized over runs; optionally in worker processes) with
:func:`nlcl.tian.tokens.training.train_batched` and scores them with
:func:`nlcl.tian.tokens.metrics.matching_scores`. ``nlcl train-grid`` writes the artifacts the chapter
``book/tian-tokens.py`` reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
import pandas as pd
import torch

from nlcl.core.cluster import worker_threads
from nlcl.core.validate import ParameterError, choice, positive_float, positive_int
from nlcl.tian.losses import LOSSES
from nlcl.tian.paper import (
    RELEASED_TAU,
    SGD_LR,
    SGD_MOMENTUM,
    TOKEN_BATCH,
    TOKEN_BETAS,
    TOKEN_PS,
    TOKEN_ZETAS,
    WEIGHT_DECAY,
)
from nlcl.tian.rf_network import ACTIVATIONS_2LAYER, BN_VARIANTS
from nlcl.tian.tokens.stacks import build_stack, check_workers, result_table, stack_cost
from nlcl.tian.tokens.training import train_batched

#: Where BatchNorm takes its moments in :func:`paper_grid`: per view (released code) or pooled
#: over both views (App. D, Eqs. 164-165).
BN_MOMENTS: tuple[str, ...] = ("view", "pooled")

__all__ = [
    "BN_MOMENTS",
    "PAPER_BETAS",
    "PAPER_PS",
    "SIGN_SYMMETRIC",
    "TokenRun",
    "TrainResult",
    "grid_parameters",
    "paper_grid",
    "runs_from_table",
    "train_token_runs",
]


#: The paper's over-parameterizations β and candidates per RF P (Figs. 9-11, Table 1), as
#: :mod:`nlcl.tian.paper` declares them.
PAPER_BETAS: tuple[int, ...] = TOKEN_BETAS
PAPER_PS: tuple[int, ...] = TOKEN_PS

#: Activations with h(−z) = ±h(z): a filter and its negation give the same hidden units up to
#: sign, so the sign of a learned filter is arbitrary (scored with |cos| in ``chi_*_symmetric``).
SIGN_SYMMETRIC: tuple[str, ...] = ("linear", "quadratic")


@dataclass(frozen=True)
class TokenRun:
    """One run of the token experiment (Tian 2023, Sec. 5, App. E.2); M = β P filters per RF.

    ``bn`` is one of :data:`nlcl.tian.rf_network.BN_VARIANTS`; ``loss`` one of :data:`LOSSES`.
    """

    activation: str = "relu"
    loss: str = "infonce"
    bn: str = "none"
    beta: int = 1
    P: int = 1
    zeta: float = 1.0
    seed: int = 0
    lr: float = SGD_LR
    tau: float = RELEASED_TAU

    @property
    def M(self) -> int:
        """Filters per RF, M = βP."""
        return self.beta * self.P

    def validate(self, n_tokens: int = 20) -> TokenRun:
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
    final_loss, and chi_plus_released, chi_minus_released: the same scores with the released
    code's normaliser, see :data:`nlcl.tian.tokens.metrics.NORMALISERS`), in input order.
    ``weights``: run index → W (K, M, d) for the runs asked for.
    ``run_steps_per_s``: training speed (runs × steps / wall seconds).  ``wall_s``: total.
    ``curves``: with ``record_every``, the training curves (long table: ``run`` (input index),
    ``step``, ``loss``, ``chi_plus``, ``chi_minus``; see :func:`train_token_runs`), else None.
    The table's ``chi_plus_symmetric`` / ``chi_minus_symmetric`` score every sign-symmetric
    activation (linear and x²: ``h(−z)`` and ``h(z)`` give the same hidden units up to sign) with
    |cos|; the book's ``chi_plus`` takes |cos| for linear only, as the released code does.
    ``chi_plus_printed`` / ``chi_minus_printed`` score as Eqs. 16 and 181 are printed: the signed
    cosine for every activation and a 1/P prefactor (:func:`~nlcl.tian.tokens.metrics.matching_scores`).
    """

    table: pd.DataFrame
    weights: dict[int, torch.Tensor]
    wall_s: float
    run_steps_per_s: float
    curves: pd.DataFrame | None = None


def train_token_runs(
    runs: Sequence[TokenRun],
    steps: int,
    *,
    batch_size: int = TOKEN_BATCH,
    momentum: float = SGD_MOMENTUM,
    weight_decay: float = WEIGHT_DECAY,
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
    scheduler: str | None = None,
    record_every: int | None = None,
    engine: str = "auto",
) -> TrainResult:
    """Train token-task runs in stacks of equal β and P and report χ̄+ and χ̄− per run (Sec. 5, E.2).

    Runs are grouped by (β, P) (in :func:`paper_grid` every (β, P) has the same runs, so the ``fused``
    engine compiles one graph for every M > 1), split so that a stack's hidden activations (R × 2N × KM)
    stay under ``max_elements``, and ordered inside a stack by (loss, activation, bn) into contiguous
    segments.  A run's data and initialization depend only on its own seed, P and ζ, so results do not
    depend on the grouping (up to rounding).  Scores: :func:`nlcl.tian.tokens.metrics.matching_scores`.
    ``on_stack(table)``, if given, is called after each stack with the finished runs' rows (input order).

    ``workers`` > 1 (CPU only) trains the stacks as tasks on a Dask ``LocalCluster`` of that many
    processes (:func:`nlcl.core.cluster.dask_client`), each with ⌊threads / workers⌋ torch threads
    (at least 1; ``NLCL_WORKER_THREADS`` sets it: :func:`nlcl.core.cluster.worker_threads`),
    largest stacks first; ``scheduler`` (an address) sends them to a running Dask cluster instead.
    On a small CPU this is faster than one process using all threads, because most operations of a
    step are too small for intra-op parallelism.  A stack's result does not depend on where it runs:
    with the same number of torch threads the numbers are bitwise those of one process.

    ``record_every`` (steps) records training curves in ``TrainResult.curves``: at step 0 the
    untrained filters' χ̄± and the loss of the first minibatch; at every multiple s of
    ``record_every`` (and at ``steps``) χ̄± of the filters after s updates and the mean loss of
    the minibatches since the previous record.  Recording does not change the training.
    ``engine``: :func:`~nlcl.tian.tokens.training.train_batched`'s (``"fused"``: compiled, opt-in).
    """
    steps = positive_int("steps", steps)
    if record_every is not None:
        record_every = positive_int("record_every", record_every)
    batch_size = positive_int("batch_size", batch_size)
    runs = [r.validate(n_tokens) for r in runs]
    if not runs:
        raise ParameterError("runs is empty; expected at least one TokenRun")
    keep = set(int(i) for i in keep_weights)
    device = torch.device(device)
    workers = check_workers(workers, device)
    group = [(r.M, r.beta, r.P) for r in runs]
    order = sorted(
        range(len(runs)), key=lambda i: (*group[i], runs[i].loss, runs[i].activation, runs[i].bn, i)
    )
    stacks: list[list[int]] = []
    for i in order:
        cap = max(1, max_elements // (2 * batch_size * K * runs[i].M))
        if stacks and group[stacks[-1][0]] == group[i] and len(stacks[-1]) < cap:
            stacks[-1].append(i)
        else:
            stacks.append([i])
    opts = dict(
        steps=steps,
        batch_size=batch_size,
        momentum=momentum,
        weight_decay=weight_decay,
        K=K,
        n_tokens=n_tokens,
        G=G,
        n_fixed=n_fixed,
        out_dim=out_dim,
        device=str(device),
        dtype=dtype,
        record_every=record_every,
        engine=engine,
    )
    # χ̄± pairs: cosine (the book's), released normaliser, |cos| for sign-symmetric h, as printed (signed, 1/P)
    scores = np.full((len(runs), 8), np.nan)
    final = np.full(len(runs), np.nan)
    weights: dict[int, torch.Tensor] = {}
    curve_parts: list[pd.DataFrame] = []
    t0 = time.perf_counter()

    def collect(idx, out) -> None:
        sc, last, W, curve = out
        scores[idx], final[idx] = sc, last
        if curve is not None:
            curve["run"] = np.asarray(idx)[curve.pop("slot").to_numpy()]
            curve_parts.append(curve)
        for j, i in enumerate(idx):
            if i in keep:
                weights[i] = W[j].clone()
        if on_stack is not None:
            t = result_table(runs, scores, final)
            on_stack(t[~np.isnan(scores[:, 0])])

    if workers == 1 and scheduler is None:
        for idx in stacks:
            rs = [runs[i] for i in idx]
            collect(idx, _train_stack(rs, opts, f"M={rs[0].M} ×{len(rs)}" if progress else False))
    else:
        from dask.distributed import as_completed

        from nlcl.core.cluster import dask_client

        bar = None
        if progress:
            from tqdm.auto import tqdm

            where = f"{workers} workers" if scheduler is None else f"scheduler {scheduler}"
            bar = tqdm(total=len(runs), desc=f"runs ({where})", unit="run")
        threads = worker_threads(max(1, torch.get_num_threads() // workers))
        with dask_client(scheduler, workers, threads) as client:
            # Longest stacks first (cost ~ R·(M + c)), so that no worker is left with a big one at the end.
            futures = {
                client.submit(
                    _train_stack,
                    [runs[i] for i in idx],
                    opts,
                    False,
                    priority=stack_cost(len(idx), runs[idx[0]].M),
                    pure=False,
                ): idx
                for idx in stacks
            }
            for fut in as_completed(futures):
                idx = futures[fut]
                collect(idx, fut.result())
                if bar is not None:
                    bar.update(len(idx))
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - t0
    table = result_table(runs, scores, final)
    curves = None
    if record_every is not None:
        curves = (
            pd.concat(curve_parts, ignore_index=True)
            .sort_values(["run", "step"], kind="stable")
            .reset_index(drop=True)[["run", "step", "loss", "chi_plus", "chi_minus"]]
        )
    return TrainResult(table, weights, wall, len(runs) * steps / wall if wall > 0 else float("nan"), curves)


def _train_stack(rs: Sequence[TokenRun], opts: dict, progress: bool | str):
    """Train one stack of equal-M runs.

    Returns the scores (R, 6), the final losses, the filters W and the curves (or None): a long
    table with ``slot`` (index in ``rs``), ``step``, ``loss``, ``chi_plus``, ``chi_minus``.
    """
    from nlcl.tian.tokens.metrics import matching_scores

    device = torch.device(opts["device"])
    world, model, data = build_stack(
        rs,
        batch_size=opts["batch_size"],
        K=opts["K"],
        n_tokens=opts["n_tokens"],
        G=opts["G"],
        n_fixed=opts["n_fixed"],
        out_dim=opts["out_dim"],
        device=device,
        dtype=opts["dtype"],
    )
    lin = [r.activation == "linear" for r in rs]
    every = opts.get("record_every")
    steps = opts["steps"]
    records: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    callback = None
    if every is not None:
        window: list[torch.Tensor] = []

        def record(step_count: int, loss: torch.Tensor) -> None:
            cp, cm = matching_scores(model.filters().detach().cpu(), world, linear=lin)
            records.append((step_count, loss.double().cpu().numpy(), cp.numpy(), cm.numpy()))

        def callback(step: int, per_run: torch.Tensor) -> None:
            if step == 0:
                record(0, per_run)  # the loss of the first minibatch is the untrained network's
            window.append(per_run)
            if (step + 1) % every == 0 or step == steps - 1:
                record(step + 1, torch.stack(window).mean(0))
                window.clear()

        # χ̄± of the untrained filters are recorded before the first update: score them now.
        init_scores = matching_scores(model.filters().detach().cpu(), world, linear=lin)

    last = train_batched(
        model,
        data,
        steps,
        loss=[r.loss for r in rs],
        tau=[r.tau for r in rs],
        lr=[r.lr for r in rs],
        momentum=opts["momentum"],
        weight_decay=opts["weight_decay"],
        check_every=1 if device.type == "cpu" else 50,
        callback=callback,
        progress=progress,
        engine=opts.get("engine", "auto"),
    )
    Wf = model.filters().cpu()
    cp, cm = matching_scores(Wf, world, linear=lin)
    rp, rm = matching_scores(Wf, world, linear=lin, normaliser="released")
    sym = [r.activation in SIGN_SYMMETRIC for r in rs]
    sp, sm = matching_scores(Wf, world, linear=sym)
    pp, pm = matching_scores(Wf, world, linear=False, prefactor="1/P")
    scores = torch.stack([cp, cm, rp, rm, sp, sm, pp, pm], 1).double().numpy()
    curve = None
    if every is not None:
        step0, loss0, _, _ = records[0]
        records[0] = (step0, loss0, init_scores[0].numpy(), init_scores[1].numpy())
        R = len(rs)
        curve = pd.DataFrame(
            {
                "slot": np.tile(np.arange(R), len(records)),
                "step": np.repeat([r[0] for r in records], R),
                "loss": np.concatenate([r[1] for r in records]),
                "chi_plus": np.concatenate([r[2] for r in records]).astype(float),
                "chi_minus": np.concatenate([r[3] for r in records]).astype(float),
            }
        )
    return scores, last.double().cpu().numpy(), Wf, curve


def paper_grid(
    figures: Sequence[str] = ("fig9", "fig10", "fig11", "table1"),
    *,
    seeds: Sequence[int] = (0, 1, 2),
    betas: Sequence[int] = PAPER_BETAS,
    Ps: Sequence[int] = PAPER_PS,
    activations: Sequence[str] = ACTIVATIONS_2LAYER,
    zetas: Sequence[float] = TOKEN_ZETAS,
    lr: float = SGD_LR,
    tau: float = RELEASED_TAU,
    bn_moments: str = "view",
) -> pd.DataFrame:
    """The runs of Tian (2023) Figs. 9, 10, 11 and Table 1, one row per run with its figure.

    * fig9: InfoNCE, every activation, ζ = 1, no BN;
    * fig10: the same with the quadratic loss;
    * fig11: ReLU, InfoNCE, BN ∈ {none, vanilla} × ζ ∈ ``zetas``;
    * table1: ReLU, InfoNCE, ζ = 10, the four BN backprop variants.

    Every (β, P, seed) of ``betas`` × ``Ps`` × ``seeds``.  Columns: ``figure`` and the
    :class:`TokenRun` fields.  With the defaults: 240 + 240 + 288 + 192 = 960 runs.

    ``bn_moments="pooled"`` gives the BatchNorm runs only, with the ``pooled-*`` variant of each
    (moments over the 2N samples of both views, App. D Eqs. 164-165; see
    :mod:`nlcl.tian.rf_network`): fig11's vanilla half and all of table1.  The runs without
    BatchNorm do not depend on where the moments come from, so they are not repeated.
    """
    choice("bn_moments", bn_moments, BN_MOMENTS)
    rows = []
    for fig in figures:
        choice("figures", fig, ("fig9", "fig10", "fig11", "table1"))
        if fig in ("fig9", "fig10"):
            combos = [
                dict(activation=a, loss="infonce" if fig == "fig9" else "quadratic") for a in activations
            ]
        elif fig == "fig11":
            combos = [dict(bn=b, zeta=float(z)) for z in zetas for b in ("none", "vanilla")]
        else:
            combos = [dict(bn=b, zeta=10.0) for b in ("detached", "var", "mean", "vanilla")]
        if bn_moments == "pooled":
            combos = [{**c, "bn": f"pooled-{c['bn']}"} for c in combos if c.get("bn", "none") != "none"]
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
        out.append(
            TokenRun(
                **{
                    k: (int(v) if types[k] == "int" else float(v) if types[k] == "float" else str(v))
                    for k, v in rec.items()
                }
            )
        )
    return out


def grid_parameters(
    steps: int, lr: float = SGD_LR, seeds: Sequence[int] = (0, 1, 2), bn_moments: str = "view"
) -> dict:
    """The parameters recorded with a paper-grid artifact (and checked when a chapter loads it).

    Everything that determines the runs of :func:`paper_grid` trained by :func:`train_token_runs`
    with its defaults (Tian 2023, Sec. 5 and App. E.2), plus ``steps``, ``lr`` and the ``seeds``;
    ``bn_moments`` is recorded only when it is ``"pooled"`` (artifacts before it existed are per view).
    """
    choice("bn_moments", bn_moments, BN_MOMENTS)
    extra = {"bn_moments": "pooled"} if bn_moments == "pooled" else {}
    return dict(
        steps=int(steps),
        batch_size=TOKEN_BATCH,
        momentum=SGD_MOMENTUM,
        weight_decay=WEIGHT_DECAY,
        K=10,
        n_tokens=20,
        G=40,
        n_fixed=5,
        out_dim=20,
        lr=float(lr),
        tau=RELEASED_TAU,
        seeds=[int(s) for s in seeds],
        betas=list(PAPER_BETAS),
        Ps=list(PAPER_PS),
        zetas=list(TOKEN_ZETAS),
        activations=list(ACTIVATIONS_2LAYER),
        **extra,
    )
