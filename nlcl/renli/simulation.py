"""Multimodal contrastive learning with linear learners (Ren & Li 2023): alignment vs balance.

**This module implements a reconstruction.**  The stored copy of Ren & Li (2023) lost every formula;
``shared/papers/ren-li-setup.md`` reconstructs the setup from the paper's prose.  The reconstructed
choices (each listed in the chapter ``book/renli-simulation.py``) are:

* Data model (Ren & Li, Eq. 1): ``x_A = M_A z + H_A ξ_A``, ``x_B = M_B z + H_B ξ_B`` in R^d, with
  ``z ∈ {±1}^r`` shared by a positive pair and independent noises ``ξ_A, ξ_B ∈ {±1}^{r_ξ}``, all
  uniform.  ``M_A = Q_A diag(σ_A)`` with orthonormal ``Q_A``; the signal strengths ``σ_A`` are evenly
  spaced on ``[1, κ]`` (:func:`~nlcl.renli.model.signal_strengths`); ``σ_B`` is a random permutation of ``σ_A``;
  ``H_A = ν · (orthonormal columns orthogonal to Q_A)``, likewise for B with its own ``Q_B``.
* Learners (Ren & Li, Eq. 2): ``f_A(x) = W_A x / sqrt(mean_batch ||W_A x||²)``, ``W_A ∈ R^{m×d}``
  with i.i.d. ``N(0, 1/d)`` entries at initialization (batch-wise normalization to unit expected
  norm, :func:`normalize_batch`).
* Losses (Ren & Li, Eqs. 3-4): :func:`~nlcl.renli.losses.non_contrastive_loss` and :func:`contrastive_loss` (strength
  ``λ`` of negative pairs, inverse temperature ``β``), trained by plain SGD on fresh batches with a
  two-stage ``β`` schedule (:func:`beta_schedule`).
* Metrics (Ren & Li, Defs. 4.1-4.2 and Lemma 5.1): :func:`alignment_score`,
  :func:`condition_number` of ``U_A = W_A M_A``, :func:`stable_rank` ``= tr Σ / λ_max(Σ)`` of the
  output covariance, and :func:`~nlcl.renli.metrics.noise_to_signal` ``= ||W_A H_A||_F / ||W_A M_A||_F``.

Every tensor carries a leading *run* axis: one run is one (seed, κ, λ) configuration, and
:func:`train` advances all runs at once (vectorized over seeds and configurations).  Each run draws
its data model, its initialization and its batches from its own generator seeded with the run's
seed, so a run's trajectory does not depend on which other runs share the batch; in particular a
non-contrastive run (``λ = 0``) and a contrastive run with the same seed and ``κ`` share the data
model, the initialization and every batch.

Explained in the chapters ``book/renli-simulation.py`` (results 1-3) and
``book/renli-mnist-captions.py`` (the real-data analog, which reuses the losses and metrics).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

from nlcl.core.blocks import axis_blocks
from nlcl.core.validate import NonFiniteError, ParameterError, nonneg_float, positive_float, positive_int
from nlcl.renli import latent
from nlcl.renli.latent import data_maps, latent_loss
from nlcl.renli.losses import beta_schedule, contrastive_loss
from nlcl.renli.metrics import METRICS, alignment_score, condition_number, stable_rank
from nlcl.renli.model import (
    MultimodalData,
    _broadcast_runs,
    init_learners,
    make_data,
    normalize_batch,
    representations,
)

__all__ = [
    "ENGINES",
    "TrainingHistory",
    "train",
    "train_configs",
]


# --------------------------------------------------------------------------------------------
# Training (Ren & Li, Algorithm 3.1), vectorized over runs
# --------------------------------------------------------------------------------------------


@dataclass
class TrainingHistory:
    """Metrics of every run over training, and the weights at the stage boundary and at the end.

    The curves of Ren & Li 2023, Fig. 1 (alignment score, Def. 4.1; stable rank, Def. 4.2; the
    condition number of U_A, Sec. 5); chapter ``book/renli-simulation.py``.

    Attributes
    ----------
    steps : (T,) the logged steps (0 = initialization, last = end of training).
    metrics : name → (R, T) array, for each name in :data:`METRICS` plus ``"loss"`` (the training
        loss of the step's batch, ``nan`` at step 0).
    runs : one row per run with its ``seed``, ``kappa``, ``lam``, ``beta1`` and ``beta2``.
    W_A, W_B : dict stage → (R, m, d) tensors (CPU) for stages ``"init"``, ``"stage1"``, ``"final"``.
    steps_stage1 : number of stage-1 steps.

    Chapter ``renli-simulation``.
    """

    steps: np.ndarray
    metrics: dict[str, np.ndarray]
    runs: pd.DataFrame
    W_A: dict[str, torch.Tensor]
    W_B: dict[str, torch.Tensor]
    steps_stage1: int

    def frame(self) -> pd.DataFrame:
        """Long table: one row per (run, logged step) with the run's attributes and every metric."""
        rows = []
        for name, values in self.metrics.items():
            df = pd.DataFrame(values, columns=self.steps)
            df["run"] = np.arange(len(df))
            rows.append(df.melt(id_vars="run", var_name="step", value_name=name).set_index(["run", "step"]))
        out = pd.concat(rows, axis=1).reset_index()
        out["step"] = out["step"].astype(int)
        out["stage"] = np.where(out["step"] <= self.steps_stage1, 1, 2)
        return self.runs.reset_index(names="run").merge(out, on="run")

    def final(self) -> pd.DataFrame:
        """One row per run: its attributes and every metric at the last logged step."""
        df = self.frame()
        return df[df["step"] == self.steps[-1]].reset_index(drop=True)


#: Training engines of :func:`train`: ``"latent"`` (exact dynamics in the k = r + r_ξ latent
#: coordinates, :mod:`nlcl.renli.latent`; the default) and ``"direct"`` (the reference, in R^d).
ENGINES = ("latent", "direct")


@torch.no_grad()
def _metrics_from(U_A, V_A, alignment) -> dict[str, torch.Tensor]:
    G = torch.cat([U_A, V_A], dim=-1)  # Cov(W_A x) = G Gᵀ; same non-zero spectrum as Gᵀ G
    return {
        "alignment": alignment,
        "condition_number": condition_number(U_A),
        "stable_rank": stable_rank(G.transpose(-1, -2) @ G),
        "noise_to_signal": torch.linalg.matrix_norm(V_A) / torch.linalg.matrix_norm(U_A),
    }


class _DirectState:
    """The reference engine: ``W_A, W_B`` (R, m, d) trained in the ambient dimension."""

    def __init__(self, data: MultimodalData, W_A, W_B, eval_latents) -> None:
        self.data = data
        self.W_A, self.W_B = W_A.requires_grad_(), W_B.requires_grad_()
        z, xi_a, xi_b = (t.to(data.M_A.device) for t in eval_latents)
        self.x_eval_a = z @ data.M_A.transpose(1, 2) + xi_a @ data.H_A.transpose(1, 2)
        self.x_eval_b = z @ data.M_B.transpose(1, 2) + xi_b @ data.H_B.transpose(1, 2)

    def loss(self, n: int, lam, beta) -> torch.Tensor:
        x_a, x_b, _ = self.data.sample(n)
        return contrastive_loss(representations(self.W_A, x_a), representations(self.W_B, x_b), lam, beta)

    def update(self, loss: torch.Tensor, lr: float) -> None:
        g_a, g_b = torch.autograd.grad(loss.sum(), (self.W_A, self.W_B))
        with torch.no_grad():
            self.W_A -= lr * g_a
            self.W_B -= lr * g_b

    def check_tensors(self):
        return (("W_A", self.W_A), ("W_B", self.W_B))

    def weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.W_A.detach().cpu().clone(), self.W_B.detach().cpu().clone()

    def metrics(self) -> dict[str, torch.Tensor]:
        W_A, W_B, data = self.W_A.detach(), self.W_B.detach(), self.data
        f_a, f_b = representations(W_A, self.x_eval_a), representations(W_B, self.x_eval_b)
        return _metrics_from(W_A @ data.M_A, W_A @ data.H_A, alignment_score(f_a, f_b))


class _LatentState:
    """The latent engine (:mod:`nlcl.renli.latent`): state ``Y`` (R, m, k), ``K = K(0) + Y D``,
    ``W = W(0) + Y Bᵀ``; exact SGD of the same model with ``O(n² k + m k²)`` work per step.
    """

    def __init__(self, data: MultimodalData, W_A, W_B, eval_latents) -> None:
        self.data, self.r = data, data.r
        self.W0_A, self.W0_B = W_A, W_B
        self.B_A, self.D_A = data_maps(data.M_A, data.H_A)
        self.B_B, self.D_B = data_maps(data.M_B, data.H_B)
        self.K0_A, self.K0_B = W_A @ self.B_A, W_B @ self.B_B
        self.Y_A, self.Y_B = torch.zeros_like(self.K0_A), torch.zeros_like(self.K0_B)
        self._set_K()
        z, xi_a, xi_b = (t.to(data.M_A.device) for t in eval_latents)
        self.w_eval_a, self.w_eval_b = torch.cat([z, xi_a], -1), torch.cat([z, xi_b], -1)

    def _set_K(self) -> None:
        self.K_A = (self.K0_A + self.Y_A @ self.D_A).requires_grad_()
        self.K_B = (self.K0_B + self.Y_B @ self.D_B).requires_grad_()

    def loss(self, n: int, lam, beta) -> torch.Tensor:
        z, xi_a, xi_b = (t.to(self.data.M_A.device) for t in self.data.sample_latents(n))
        w_a, w_b = torch.cat([z, xi_a], -1), torch.cat([z, xi_b], -1)
        return latent_loss(self.K_A, self.K_B, w_a, w_b, lam, beta)

    def update(self, loss: torch.Tensor, lr: float) -> None:
        g_a, g_b = torch.autograd.grad(loss.sum(), (self.K_A, self.K_B))
        with torch.no_grad():
            self.Y_A -= lr * g_a
            self.Y_B -= lr * g_b
            self._set_K()

    def check_tensors(self):
        return (("W_A", self.K_A), ("W_B", self.K_B))

    def weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.no_grad():
            W_A = self.W0_A + self.Y_A @ self.B_A.transpose(-1, -2)
            W_B = self.W0_B + self.Y_B @ self.B_B.transpose(-1, -2)
        return W_A.cpu(), W_B.cpu()

    @torch.no_grad()
    def metrics(self) -> dict[str, torch.Tensor]:
        K_A, K_B, r = self.K_A.detach(), self.K_B.detach(), self.r
        # a few runs at a time: their n × m outputs and n × n distances stay in the cache (the
        # (R, n, n) batch went through memory); the same operations on fewer runs, bitwise equal
        n, m = self.w_eval_a.shape[-2], K_A.shape[-2]
        align = []
        for s in axis_blocks(K_A.shape[0], n * max(n, m), latent.RUN_CHUNK_ELEMENTS):
            f_a = normalize_batch(self.w_eval_a[s] @ K_A[s].transpose(-1, -2))
            f_b = normalize_batch(self.w_eval_b[s] @ K_B[s].transpose(-1, -2))
            align.append(alignment_score(f_a, f_b))
        return _metrics_from(K_A[..., :r], K_A[..., r:], torch.cat(align))


def _all_finite(w: torch.Tensor) -> bool:
    """Whether every entry of ``w`` is finite: one sum (NaN or ±inf entries make it non-finite),
    and the entrywise check only when the sum is not finite (it may overflow with finite entries).
    """
    w = w.detach()
    return bool(torch.isfinite(w.sum())) or bool(torch.isfinite(w).all())


def train(
    data: MultimodalData,
    lam: float | Sequence[float],
    *,
    width: int,
    steps_stage1: int,
    steps_stage2: int,
    beta1: float | Sequence[float] = 0.05,
    beta2: float | Sequence[float] = 2.0,
    lr: float = 2.0,
    batch_size: int = 512,
    eval_size: int = 512,
    log_every: int = 50,
    device: torch.device | str = "cpu",
    progress: bool = True,
    engine: str = "latent",
) -> TrainingHistory:
    """Train linear learners on every run of ``data`` at once with SGD on fresh batches.

    Ren & Li, Algorithm 3.1 (reconstructed): the loss is :func:`contrastive_loss` with the run's
    ``λ`` and the two-stage ``β`` (:func:`beta_schedule`; ``lam``, ``beta1``, ``beta2`` are one
    number or one per run); a run with ``λ = 0`` is the
    non-contrastive method (:func:`~nlcl.renli.losses.non_contrastive_loss`) with the same number of steps.  Each run
    has its own ``W_A, W_B`` (:func:`init_learners`); the summed loss gives each run its own
    gradient.  The metrics (:data:`METRICS`) are measured at step 0, every ``log_every`` steps,
    at the end of stage 1 and at the end, on a fixed evaluation batch of ``eval_size`` pairs per
    run drawn before training.  Training advances the generators of ``data``: build a fresh data
    model (:func:`make_data`) to repeat a run exactly.

    ``engine="latent"`` (default) runs the exact dynamics in the ``k = r + r_ξ`` latent coordinates
    (:mod:`nlcl.renli.latent`: ``W = W(0) + Y Bᵀ`` with ``B = [M, H]``, the loss from k × k Gram
    blocks); ``engine="direct"`` trains ``W`` in R^d, the reference.  Both follow the same batches
    and agree up to rounding (tests: 1e-9 in float64).  Chapter ``renli-simulation``.

    Raises
    ------
    ParameterError
        For a non-positive size or rate, a negative ``λ``, or a ``lam`` list whose length is
        neither 1 nor the number of runs.
    ValueError
        If the loss becomes NaN or infinite (the message names the step, the runs and ``lr``).
    """
    width = positive_int("width", width)
    steps1 = positive_int("steps_stage1", steps_stage1) if steps_stage1 else 0
    steps2 = positive_int("steps_stage2", steps_stage2) if steps_stage2 else 0
    if steps1 + steps2 == 0:
        raise ParameterError("steps_stage1=0 and steps_stage2=0; train for at least one step")
    lr = positive_float("lr", lr)
    batch_size, eval_size = positive_int("batch_size", batch_size), positive_int("eval_size", eval_size)
    if batch_size < 2 or eval_size < 2:
        raise ParameterError(
            f"batch_size={batch_size} and eval_size={eval_size} must be >= 2 (negative pairs)"
        )
    log_every = positive_int("log_every", log_every)
    lam_list = [nonneg_float("lam", float(v)) for v in _broadcast_runs("lam", lam, data.n_runs)]
    beta1_list = [positive_float("beta1", float(v)) for v in _broadcast_runs("beta1", beta1, data.n_runs)]
    beta2_list = [positive_float("beta2", float(v)) for v in _broadcast_runs("beta2", beta2, data.n_runs)]
    for name in ("M_A", "M_B", "H_A", "H_B"):
        if not bool(torch.isfinite(getattr(data, name)).all()):
            raise ParameterError(f"data.{name} has NaN or infinite entries; build the data with make_data")
    if engine not in ENGINES:
        raise ParameterError(f"engine={engine!r} must be one of {ENGINES}")
    device = torch.device(device)

    W_A, W_B = init_learners(data, width)
    z_eval, xi_eval_a, xi_eval_b = data.sample_latents(eval_size)  # the draws of data.sample
    data = data.to(device)
    lam_t = torch.tensor(lam_list, dtype=data.M_A.dtype, device=device)
    beta1_t = torch.tensor(beta1_list, dtype=data.M_A.dtype, device=device)
    beta2_t = torch.tensor(beta2_list, dtype=data.M_A.dtype, device=device)
    state = (_LatentState if engine == "latent" else _DirectState)(
        data, W_A.to(device), W_B.to(device), (z_eval, xi_eval_a, xi_eval_b)
    )

    total = steps1 + steps2
    logged = sorted({0, total, steps1, *range(0, total + 1, log_every)})
    logged_set = set(logged)
    history: dict[str, list[torch.Tensor]] = {k: [] for k in (*METRICS, "loss")}
    snaps_a, snaps_b = {}, {}
    snaps_a["init"], snaps_b["init"] = state.weights()
    last_loss = torch.full((data.n_runs,), float("nan"), device=device)

    def log() -> None:
        for k, v in state.metrics().items():
            history[k].append(v.detach().cpu())
        history["loss"].append(last_loss.detach().cpu())

    log()
    for step in tqdm(range(total), desc="Ren & Li SGD", disable=not progress, mininterval=2.0):
        beta = beta_schedule(step, steps1, beta1_t, beta2_t)
        loss = state.loss(batch_size, lam_t, beta)
        if not bool(torch.isfinite(loss).all()):
            bad = torch.nonzero(~torch.isfinite(loss)).flatten().tolist()
            raise NonFiniteError(
                f"training diverged at step {step}: the loss of runs {bad} is NaN or infinite; "
                f"lower lr={lr} (allowed: any lr > 0 small enough for a finite loss)"
            )
        state.update(loss, lr)
        for name, w in state.check_tensors():
            if not _all_finite(w):
                bad = torch.nonzero(~torch.isfinite(w.detach()).flatten(1).all(dim=1)).flatten().tolist()
                raise NonFiniteError(
                    f"training diverged at step {step}: the weights {name} of runs {bad} are NaN or "
                    f"infinite after the update; lower lr={lr}"
                )
        last_loss = loss.detach()
        if step + 1 == steps1:
            snaps_a["stage1"], snaps_b["stage1"] = state.weights()
        if step + 1 in logged_set:
            log()
    snaps_a["final"], snaps_b["final"] = state.weights()
    if steps1 == 0:
        snaps_a["stage1"], snaps_b["stage1"] = snaps_a["init"], snaps_b["init"]

    runs = pd.DataFrame(
        {
            "seed": list(data.seeds),
            "kappa": data.kappa.cpu().numpy(),
            "lam": lam_list,
            "beta1": beta1_list,
            "beta2": beta2_list,
        }
    )
    metrics = {k: torch.stack(v, dim=1).double().numpy() for k, v in history.items()}
    return TrainingHistory(
        steps=np.asarray(logged), metrics=metrics, runs=runs, W_A=snaps_a, W_B=snaps_b, steps_stage1=steps1
    )


def train_configs(
    configs: pd.DataFrame,
    *,
    d: int,
    r: int,
    r_xi: int,
    nu: float = 0.3,
    device: torch.device | str = "cpu",
    **train_kwargs,
) -> TrainingHistory:
    """Train one run per row of ``configs`` (columns ``seed``, ``kappa``, ``lam``, optional ``beta1``,
    ``beta2``), all at once: :func:`make_data` then :func:`train`.

    Extra columns of ``configs`` (e.g. a ``group`` label) are carried into
    :attr:`TrainingHistory.runs`.  ``train_kwargs`` go to :func:`train` (``width``, ``steps_stage1``,
    ...).  Ren & Li, Algorithm 3.1 over a grid of (seed, κ, λ, β); chapter ``renli-simulation``.

    Raises
    ------
    ParameterError
        If a required column is missing or ``configs`` is empty.
    """
    missing = [c for c in ("seed", "kappa", "lam") if c not in configs.columns]
    if missing or len(configs) == 0:
        raise ParameterError(
            f"configs has columns {list(configs.columns)} and {len(configs)} rows; "
            "expected at least one row and the columns 'seed', 'kappa', 'lam'"
        )
    configs = configs.reset_index(drop=True)
    data = make_data(d, r, r_xi, configs["kappa"].tolist(), configs["seed"].astype(int).tolist(), nu=nu)
    for col in ("beta1", "beta2"):
        if col in configs.columns:
            train_kwargs[col] = configs[col].tolist()
    hist = train(data, configs["lam"].tolist(), device=device, **train_kwargs)
    extra = configs.drop(columns=[c for c in hist.runs.columns if c in configs.columns])
    hist.runs = pd.concat([hist.runs, extra], axis=1)
    return hist
