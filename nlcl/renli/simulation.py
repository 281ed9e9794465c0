"""Multimodal contrastive learning with linear learners (Ren & Li 2023): alignment vs balance.

**This module implements a reconstruction.**  The stored copy of Ren & Li (2023) lost every formula;
``shared/papers/ren-li-setup.md`` reconstructs the setup from the paper's prose.  The reconstructed
choices (each listed in the chapter ``book/renli-simulation.py``) are:

* Data model (Ren & Li, Eq. 1): ``x_A = M_A z + H_A ξ_A``, ``x_B = M_B z + H_B ξ_B`` in R^d, with
  ``z ∈ {±1}^r`` shared by a positive pair and independent noises ``ξ_A, ξ_B ∈ {±1}^{r_ξ}``, all
  uniform.  ``M_A = Q_A diag(σ_A)`` with orthonormal ``Q_A``; the signal strengths ``σ_A`` are evenly
  spaced on ``[1, κ]`` (:func:`signal_strengths`); ``σ_B`` is a random permutation of ``σ_A``;
  ``H_A = ν · (orthonormal columns orthogonal to Q_A)``, likewise for B with its own ``Q_B``.
* Learners (Ren & Li, Eq. 2): ``f_A(x) = W_A x / sqrt(mean_batch ||W_A x||²)``, ``W_A ∈ R^{m×d}``
  with i.i.d. ``N(0, 1/d)`` entries at initialization (batch-wise normalization to unit expected
  norm, :func:`normalize_batch`).
* Losses (Ren & Li, Eqs. 3-4): :func:`non_contrastive_loss` and :func:`contrastive_loss` (strength
  ``λ`` of negative pairs, inverse temperature ``β``), trained by plain SGD on fresh batches with a
  two-stage ``β`` schedule (:func:`beta_schedule`).
* Metrics (Ren & Li, Defs. 4.1-4.2 and Lemma 5.1): :func:`alignment_score`,
  :func:`condition_number` of ``U_A = W_A M_A``, :func:`stable_rank` ``= tr Σ / λ_max(Σ)`` of the
  output covariance, and :func:`noise_to_signal` ``= ||W_A H_A||_F / ||W_A M_A||_F``.

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

from nlcl.core.validate import NonFiniteError, ParameterError, nonneg_float, positive_float, positive_int
from nlcl.renli.losses import beta_schedule, contrastive_loss
from nlcl.renli.metrics import METRICS, alignment_score, condition_number, noise_to_signal, stable_rank
from nlcl.renli.model import MultimodalData, _broadcast_runs, init_learners, make_data, representations

__all__ = [
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


@torch.no_grad()
def _metrics(data: MultimodalData, W_A, W_B, x_a, x_b) -> dict[str, torch.Tensor]:
    f_a, f_b = representations(W_A, x_a), representations(W_B, x_b)
    U_A, V_A = W_A @ data.M_A, W_A @ data.H_A
    G = torch.cat([U_A, V_A], dim=-1)  # Cov(W_A x) = G Gᵀ; same non-zero spectrum as Gᵀ G
    return {
        "alignment": alignment_score(f_a, f_b),
        "condition_number": condition_number(U_A),
        "stable_rank": stable_rank(G.transpose(-1, -2) @ G),
        "noise_to_signal": noise_to_signal(W_A, data.M_A, data.H_A),
    }


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
) -> TrainingHistory:
    """Train linear learners on every run of ``data`` at once with SGD on fresh batches.

    Ren & Li, Algorithm 3.1 (reconstructed): the loss is :func:`contrastive_loss` with the run's
    ``λ`` and the two-stage ``β`` (:func:`beta_schedule`; ``lam``, ``beta1``, ``beta2`` are one
    number or one per run); a run with ``λ = 0`` is the
    non-contrastive method (:func:`non_contrastive_loss`) with the same number of steps.  Each run
    has its own ``W_A, W_B`` (:func:`init_learners`); the summed loss gives each run its own
    gradient.  The metrics (:data:`METRICS`) are measured at step 0, every ``log_every`` steps,
    at the end of stage 1 and at the end, on a fixed evaluation batch of ``eval_size`` pairs per
    run drawn before training.  Training advances the generators of ``data``: build a fresh data
    model (:func:`make_data`) to repeat a run exactly.  Chapter ``renli-simulation``.

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
    device = torch.device(device)

    W_A, W_B = init_learners(data, width)
    x_eval_a, x_eval_b, _ = data.sample(eval_size)
    data = data.to(device)
    W_A, W_B = W_A.to(device).requires_grad_(), W_B.to(device).requires_grad_()
    x_eval_a, x_eval_b = x_eval_a.to(device), x_eval_b.to(device)
    lam_t = torch.tensor(lam_list, dtype=data.M_A.dtype, device=device)
    beta1_t = torch.tensor(beta1_list, dtype=data.M_A.dtype, device=device)
    beta2_t = torch.tensor(beta2_list, dtype=data.M_A.dtype, device=device)

    total = steps1 + steps2
    logged = sorted({0, total, steps1, *range(0, total + 1, log_every)})
    logged_set = set(logged)
    history: dict[str, list[torch.Tensor]] = {k: [] for k in (*METRICS, "loss")}
    snaps_a, snaps_b = {"init": W_A.detach().cpu().clone()}, {"init": W_B.detach().cpu().clone()}
    last_loss = torch.full((data.n_runs,), float("nan"), device=device)

    def log() -> None:
        for k, v in _metrics(data, W_A.detach(), W_B.detach(), x_eval_a, x_eval_b).items():
            history[k].append(v.detach().cpu())
        history["loss"].append(last_loss.detach().cpu())

    log()
    for step in tqdm(range(total), desc="Ren & Li SGD", disable=not progress, mininterval=2.0):
        beta = beta_schedule(step, steps1, beta1_t, beta2_t)
        x_a, x_b, _ = data.sample(batch_size)
        loss = contrastive_loss(representations(W_A, x_a), representations(W_B, x_b), lam_t, beta)
        if not bool(torch.isfinite(loss).all()):
            bad = torch.nonzero(~torch.isfinite(loss)).flatten().tolist()
            raise NonFiniteError(
                f"training diverged at step {step}: the loss of runs {bad} is NaN or infinite; "
                f"lower lr={lr} (allowed: any lr > 0 small enough for a finite loss)"
            )
        g_a, g_b = torch.autograd.grad(loss.sum(), (W_A, W_B))
        with torch.no_grad():
            W_A -= lr * g_a
            W_B -= lr * g_b
        for name, w in (("W_A", W_A), ("W_B", W_B)):
            if not bool(torch.isfinite(w).all()):
                bad = torch.nonzero(~torch.isfinite(w.detach()).flatten(1).all(dim=1)).flatten().tolist()
                raise NonFiniteError(
                    f"training diverged at step {step}: the weights {name} of runs {bad} are NaN or "
                    f"infinite after the update; lower lr={lr}"
                )
        last_loss = loss.detach()
        if step + 1 == steps1:
            snaps_a["stage1"], snaps_b["stage1"] = W_A.detach().cpu().clone(), W_B.detach().cpu().clone()
        if step + 1 in logged_set:
            log()
    snaps_a["final"], snaps_b["final"] = W_A.detach().cpu().clone(), W_B.detach().cpu().clone()
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
