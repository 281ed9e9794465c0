"""Read-outs of the linear simulation (Ren & Li 2023, Fig. 1, Secs. 4-5) that the chapter
``book/renli-simulation.py`` measures its claims on.

Each function is one quantity of the chapter, computed from the run histories of
:mod:`nlcl.renli.simulation` and the Gram trajectories of :mod:`nlcl.renli.tracking`:

* :func:`ratio_after_alignment`: the growth of κ(U_A) after alignment (Lemma 5.1: the
  non-contrastive dynamics keep κ of order κ and let it grow);
* :func:`steps_to_balance`: stage-2 steps until κ(U_A) ≤ threshold (Lemma 5.3: the negative pairs
  bring κ(U_A) to ≈ 1, faster for a larger λ);
* :func:`non_increasing`, :func:`fraction`, :func:`seed_values`: the per-seed forms of the claims;
* :func:`lemma_states`: the explicit Lemmas 4.4 and 4.5 (:mod:`nlcl.renli.lemmas`) on trained states;
* :func:`signal_cosines`: cosines between matching signal columns of U_A and U_B (alignment, Sec. 5.2);
* :func:`loglog_slopes` and :func:`slope_spread`: per-seed rates of the finite-width error (Lemmas
  5.1-5.3: finite width tracks infinite width);
* :func:`batch_stream`: the minibatch latent signs of the finite-batch tracking runs (Thm. 4.3:
  polynomially many samples per step);
* :func:`stage2_efold`: the stage-2 steps each e-fold of the stage-1 condition number costs
  (Cor. C.20);
* :func:`stage2_convergence`: the rate at which κ(U_A) − 1 falls in stage 2 (Sec. 5.4 / App. C.5:
  a linear convergence rate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import torch

from nlcl.core.fits import loglog_slope
from nlcl.core.validate import ParameterError
from nlcl.renli.lemmas import (
    alignment_condition,
    balance_condition,
    normalized_maps,
    population_alignment,
)
from nlcl.renli.metrics import relative_deviation
from nlcl.renli.minibatch import sample_signs
from nlcl.renli.model import MultimodalData
from nlcl.renli.tracking import gram_condition_number, tracking_error

__all__ = [
    "alignment_gaps",
    "batch_stream",
    "condition_gap_table",
    "example_state",
    "simulation_configs",
    "stage1_deviations",
    "stage2_convergence",
    "stage2_efold",
    "stage2_times",
    "tracking_table",
    "fraction",
    "lemma_states",
    "loglog_slopes",
    "non_increasing",
    "ratio_after_alignment",
    "seed_values",
    "signal_cosines",
    "slope_spread",
    "steps_to_balance",
]


def ratio_after_alignment(g: pd.DataFrame, threshold: float = 0.95) -> float:
    """Final condition number / condition number at the first evaluation with alignment ≥ threshold.

    ``g``: one run's history (columns ``alignment``, ``condition_number``, in step order). NaN if
    the run never aligns. Lemma 5.1: the non-contrastive condition number grows after alignment.
    """
    aligned = g[g.alignment >= threshold]
    if aligned.empty:
        return np.nan
    return g.condition_number.iloc[-1] / aligned.condition_number.iloc[0]


def seed_values(table: pd.DataFrame, column: str) -> list:
    """``table[column]`` in the order of the ``seed`` column (one row per seed), as a list."""
    return table.set_index("seed")[column].sort_index().tolist()


def fraction(ok: Sequence[bool] | pd.Series) -> float:
    """The fraction of true values; 1.0 for none (no failing run: nothing left to explain)."""
    return float(np.mean(ok)) if len(ok) else 1.0


def steps_to_balance(g: pd.DataFrame, start: int, threshold: float = 1.5) -> float:
    """Steps after ``start`` (the end of stage 1) until κ(U_A) ≤ threshold first; ∞ if never.

    ``g``: one run's history from ``start`` on (columns ``step``, ``condition_number``). Lemma 5.3:
    stage 2 brings κ(U_A) to ≈ 1, with a force proportional to λ.
    """
    hit = g[g.condition_number <= threshold]
    return np.inf if hit.empty else float(hit.step.iloc[0] - start)


def non_increasing(v: Sequence[float]) -> bool:
    """Each value ≤ the previous one; ∞ ≤ ∞ holds (np.diff of two infinities would be NaN)."""
    v = np.asarray(v, dtype=float)
    return bool(np.all(v[1:] <= v[:-1]))


def lemma_states(
    W_A: dict[str, torch.Tensor],
    W_B: dict[str, torch.Tensor],
    index: torch.Tensor,
    runs: pd.DataFrame,
    data: MultimodalData,
    *,
    n: int,
    generator: torch.Generator,
    eps: float = 0.15,
) -> pd.DataFrame:
    """The explicit Lemmas 4.4 and 4.5 (:mod:`nlcl.renli.lemmas`) on every run and stage.

    ``W_A``, ``W_B``: weights per stage (``init``, ``stage1``, ``final``), (R, m, d); ``index``: the
    runs to evaluate, described by the rows of ``runs`` (``method``, ``kappa``, ``seed``) and by
    ``data``; ``n`` fresh pairs per alignment score, drawn from ``generator`` (stage by stage).
    One row per (stage, run): κ(U_A), δ, the bounds K* with and without noise, whether Lemma 4.4
    holds, the alignment score and the fraction of distinct-latent pairs, whether Lemma 4.5's
    κ ≤ κ*(eps) holds, the stable rank and Lemma 4.5's bound on it.
    """
    rows = []
    for stage in ("init", "stage1", "final"):
        maps = normalized_maps(W_A[stage][index].double(), W_B[stage][index].double(), data)
        a_cond = alignment_condition(*maps)
        b_cond = balance_condition(maps[0], maps[1], eps=eps)
        score, distinct = population_alignment(*maps, n=n, generator=generator)
        for i, (_, row) in enumerate(runs.iterrows()):
            rows.append(
                dict(
                    stage=stage,
                    method=row.method,
                    kappa_data=row.kappa,
                    seed=row.seed,
                    kappa=float(a_cond["kappa"][i]),
                    delta=float(a_cond["delta"][i]),
                    kappa_bound=float(a_cond["kappa_bound"][i]),
                    kappa_bound_noise_free=float(a_cond["kappa_bound_noise_free"][i]),
                    holds_44=bool(a_cond["holds"][i]),
                    alignment=float(score[i]),
                    distinct=float(distinct[i]),
                    holds_45=bool(b_cond["holds"][i]),
                    srank=float(b_cond["srank"][i]),
                    srank_bound=float(b_cond["srank_bound"][i]),
                )
            )
    return pd.DataFrame(rows)


def signal_cosines(Gn: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """Cosines between matching signal columns of Ũ_A and Ũ_B, (..., r), from the normalised Gram
    matrix Gn (..., 2K, 2K) of [Ũ_A Ṽ_A Ũ_B Ṽ_B] (:func:`nlcl.renli.tracking.normalized_gram`):
    ⟨u_A,k, u_B,k⟩ / (‖u_A,k‖ ‖u_B,k‖). All ≈ 1: the pair is aligned (Ren & Li, Sec. 5.2)."""
    K = r + r_xi
    cross = torch.diagonal(Gn[..., :r, K : K + r], dim1=-2, dim2=-1)
    aa = torch.diagonal(Gn[..., :r, :r], dim1=-2, dim2=-1)
    bb = torch.diagonal(Gn[..., K : K + r, K : K + r], dim1=-2, dim2=-1)
    return cross / (aa * bb).sqrt()


def loglog_slopes(table: pd.DataFrame) -> list[float]:
    """Per column (seed) of ``table``, the log-log slope of its values against the index (width m)."""
    return [loglog_slope(table.index, table[s]) for s in table.columns]


def slope_spread(per_seed: Sequence[float]) -> str:
    """A one-line summary of per-seed slopes: mean, range and how many lie in [−0.7, −0.3]."""
    inside = sum(-0.7 <= v <= -0.3 for v in per_seed)
    return (
        f"per seed: mean {np.mean(per_seed):.2f}, range [{min(per_seed):.2f}, {max(per_seed):.2f}], "
        f"{inside}/{len(per_seed)} in [−0.7, −0.3]"
    )


def batch_stream(
    seed: int, n: int, copies: int, *, n_seeds: int, r: int, r_xi: int
) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    """The batches of the finite-batch tracking runs: step t → (w_A, w_B) of :func:`sample_signs`
    for ``n_seeds`` data seeds and ``n`` pairs, repeated for ``copies`` widths (the same batches for
    every width of a data seed); one generator, seeded ``seed``, per stream."""
    gen = torch.Generator().manual_seed(seed)
    return lambda t: tuple(w.repeat(copies, 1, 1) for w in sample_signs(n_seeds, n, r, r_xi, gen))


def simulation_configs(
    seeds: Sequence[int],
    kappas: Sequence[float],
    lams: Sequence[float],
    beta1s: Sequence[float],
    *,
    kappa: float,
    lam: float,
    beta1: float,
    beta2: float,
) -> pd.DataFrame:
    """The runs of the chapter, one row per (seed, κ, λ, β₁) configuration, in training order.

    Per seed: ``main`` (non-contrastive, λ = 0, and contrastive, λ = ``lam``, for every κ of
    ``kappas``), ``lambda`` (contrastive with the other λ of ``lams`` at ``kappa``), ``beta``
    (contrastive with the other stage-1 β of ``beta1s`` at ``kappa``); β₂ = ``beta2`` for all.
    Ren & Li 2023, Alg. 3.1 (L_C with λ = 0 is L_NC exactly).
    """
    rows = []
    for s in seeds:
        for k in kappas:
            for method, lam_ in (("non-contrastive", 0.0), ("contrastive", lam)):
                rows.append(dict(group="main", method=method, seed=s, kappa=k, lam=lam_, beta1=beta1))
        for v in lams:
            if v != lam:
                rows.append(
                    dict(group="lambda", method="contrastive", seed=s, kappa=kappa, lam=v, beta1=beta1)
                )
        for b in beta1s:
            if b != beta1:
                rows.append(dict(group="beta", method="contrastive", seed=s, kappa=kappa, lam=lam, beta1=b))
    return pd.DataFrame(rows).assign(beta2=beta2)


def stage1_deviations(hist, kappa: float, lam: float) -> pd.DataFrame:
    """δ(β₁) = ‖W^C(t₁) − W^NC(t₁)‖_F / ‖W^NC(t₁) − W(0)‖_F, W = [W_A, W_B], per seed and β₁.

    ``hist``: a :class:`nlcl.renli.simulation` history (``runs``, weights ``W_A``/``W_B`` per stage).
    Each contrastive run at ``kappa`` and ``lam`` (groups ``main`` and ``beta``) against the
    non-contrastive main run of its seed (same data, batches and initialisation). Ren & Li 2023,
    Sec. 5.3 / Lemma B.9: stage 1 ≈ non-contrastive up to O(λβ₁). Rows sorted by seed, β₁.
    """
    runs = hist.runs
    stage1 = {k: torch.cat([hist.W_A[k], hist.W_B[k]], dim=-1) for k in ("init", "stage1")}
    ref = {
        (row.seed): i
        for i, row in runs.iterrows()
        if row.group == "main" and row.kappa == kappa and row.lam == 0
    }
    rows = []
    for i, row in runs.iterrows():
        if (
            row.kappa == kappa
            and row.lam == lam
            and row.method == "contrastive"
            and row.group in ("main", "beta")
        ):
            j = ref[row.seed]
            delta = relative_deviation(stage1["stage1"][i], stage1["stage1"][j], stage1["init"][j])
            rows.append(dict(seed=row.seed, beta1=row.beta1, delta=float(delta)))
    return pd.DataFrame(rows).sort_values(["seed", "beta1"])


def condition_gap_table(s1: pd.DataFrame) -> pd.DataFrame:
    """κ(U_A) during stage 1, indexed by (seed, step), one column per (λ, β₁)."""
    return s1.pivot_table(index=["seed", "step"], columns=["lam", "beta1"], values="condition_number")


def alignment_gaps(
    s1: pd.DataFrame, piv: pd.DataFrame, *, lam: float, beta1: float, end: int, threshold: float = 0.95
) -> tuple[dict, dict]:
    """The relative gap (κ_C − κ_NC)/κ_NC per seed, at the non-contrastive run's first evaluation
    with alignment ≥ ``threshold`` (the end of stage 1, ``end``, if it never aligns) and at ``end``.

    ``s1``: the stage-1 history (λ = 0 and λ = ``lam``); ``piv``: :func:`condition_gap_table`.
    """
    al_nc = s1[s1.lam == 0].pivot_table(index="seed", columns="step", values="alignment")
    rel_gap = (piv[(lam, beta1)] - piv[(0.0, beta1)]) / piv[(0.0, beta1)]  # (seed, step)
    gap_align, gap_end = {}, {}
    for s_, row_ in al_nc.iterrows():
        t_align = row_.index[row_.values >= threshold]
        t_align = int(t_align[0]) if len(t_align) else end
        gap_align[s_], gap_end[s_] = float(rel_gap.loc[(s_, t_align)]), float(rel_gap.loc[(s_, end)])
    return gap_align, gap_end


def stage2_times(df: pd.DataFrame, start: int, threshold: float = 1.25) -> pd.DataFrame:
    """Per contrastive main run (seed, κ): κ(U_A) at the end of stage 1 (step ``start``), the stage-2
    steps until κ(U_A) ≤ ``threshold`` (∞ if never) and the final κ(U_A) (Lemma 5.3)."""
    rows = []
    for (s_, k_), g in df[(df.group == "main") & (df.method == "contrastive")].groupby(["seed", "kappa"]):
        hit = g[(g.step >= start) & (g.condition_number <= threshold)]
        rows.append(
            dict(
                seed=s_,
                kappa=k_,
                kappa_end_stage1=float(g[g.step == start].condition_number.iloc[0]),
                steps_to_1_25=float(hit.step.iloc[0] - start) if len(hit) else np.inf,
                kappa_final=float(g.condition_number.iloc[-1]),
            )
        )
    return pd.DataFrame(rows)


def example_state(
    maps: tuple[torch.Tensor, ...], *, n: int, generator: torch.Generator, eps: float = 0.15
) -> tuple[pd.DataFrame, torch.Tensor, dict]:
    """The explicit Lemmas 4.4-4.5 on one designed model (``maps`` of :func:`nlcl.renli.lemmas.binary_code_maps`):
    a one-row table like :func:`lemma_states`'s, the alignment score and the balance condition."""
    score, distinct = population_alignment(*maps, n=n, generator=generator)
    cond = alignment_condition(*maps)
    bal = balance_condition(maps[0], maps[1], eps=eps)
    row = dict(
        stage="example",
        method="binary code",
        kappa=float(cond["kappa"]),
        kappa_bound=float(cond["kappa_bound"]),
        holds_44=bool(cond["holds"]),
        alignment=float(score),
        distinct=float(distinct),
        holds_45=bool(bal["holds"]),
        srank=float(bal["srank"]),
        srank_bound=float(bal["srank_bound"]),
    )
    return pd.DataFrame([row]), score, bal


def tracking_table(
    G_all: torch.Tensor,
    kappa_inf: torch.Tensor,
    widths: Sequence[int],
    seeds: Sequence[int],
    stage1: torch.Tensor,
    stage2: torch.Tensor,
    r: int,
    r_xi: int,
) -> pd.DataFrame:
    """Per width m and seed: the largest distance to the infinite-width run in each stage
    (:func:`nlcl.renli.tracking.tracking_error`) and the largest relative error of κ(U_A).

    ``G_all``: (T, 1 + widths, seeds, 2K, 2K), infinite width first; ``kappa_inf``: its κ(U_A),
    (T, seeds); ``stage1``/``stage2``: boolean masks over the T records (Lemmas 5.1-5.3).
    """
    G_inf = G_all[:, 0]
    rows = []
    for j, m in enumerate(widths):
        err = tracking_error(G_all[:, j + 1], G_inf, r, r_xi)  # (T, seeds)
        kap = gram_condition_number(G_all[:, j + 1], r, r_xi)
        cerr = (kap - kappa_inf).abs() / kappa_inf
        for s in range(len(seeds)):
            rows.append(
                dict(
                    m=m,
                    seed=seeds[s],
                    stage1=float(err[stage1, s].max()),
                    stage2=float(err[stage2, s].max()),
                    condition=float(cerr[:, s].max()),
                )
            )
    return pd.DataFrame(rows)


def stage2_efold(stage2_time: pd.DataFrame, *, setting: str = "") -> tuple[float, float]:
    """Least-squares line of the stage-2 steps to κ(U_A) ≤ 1.25 against log κ(U_A) at the end of
    stage 1, over the runs of :func:`stage2_times` that reach 1.25: (steps per e-fold, offset).

    A linear convergence rate (Ren & Li, Sec. 5.4; Cor. C.20: the time to a given accuracy grows
    with the log of the starting condition number) makes the steps linear in log κ.  Raises
    ParameterError, starting with ``setting`` (e.g. ``"lr=1e6"``), when fewer than two runs with
    different stage-1 condition numbers reach 1.25 (nothing to fit).
    """
    reached = stage2_time[np.isfinite(stage2_time.steps_to_1_25)]
    if reached.kappa_end_stage1.nunique() < 2:
        where = f"{setting}: " if setting else ""
        raise ParameterError(
            f"{where}{len(reached)} of {len(stage2_time)} contrastive main runs reached κ(U_A) ≤ 1.25 "
            "within stage 2; the stage-2 time against the stage-1 condition number needs two"
        )
    cost, offset = np.polyfit(np.log(reached.kappa_end_stage1), reached.steps_to_1_25, 1)
    return float(cost), float(offset)


def stage2_convergence(kappa: np.ndarray, *, floor: float = 0.01, setting: str = "") -> pd.DataFrame:
    """How κ(U_A) − 1 falls in stage 2, per run: one row per column of ``kappa`` (T, runs), the
    condition number at consecutive steps from the start of stage 2.

    The window runs from the first step to the first with κ − 1 < ``floor`` (the whole stage if
    none). On y = log(κ − 1) over the window: ``rate``, minus the least-squares slope (per step),
    and ``r2``, its coefficient of determination; ``early_rate`` and ``late_rate``, the mean decrease
    of y per step over the first and the last third; ``rate_ratio`` = late / early; and
    ``max_factor``, the largest per-step factor (κ_{t+1} − 1)/(κ_t − 1).  Ren & Li, Sec. 5.4 and
    App. C.5: once aligned, "the above implies a linear convergence rate", i.e. κ − 1 shrinks by a
    factor bounded below 1 at every step (``max_factor`` < 1) at a rate that does not fade as κ
    approaches 1 (``rate_ratio`` not small; a sublinear approach such as 1/t slows down; the early
    rate is clipped at 1e-12, a first third that does not fall shows in ``max_factor``).
    Raises ParameterError (starting with ``setting``) for a run whose window has fewer than 6
    steps.
    """
    kappa = np.asarray(kappa, dtype=float)
    if kappa.ndim != 2:
        raise ParameterError(f"kappa has shape {kappa.shape}; expected (steps, runs)")
    rows = []
    for j in range(kappa.shape[1]):
        excess = kappa[:, j] - 1.0
        below = np.flatnonzero(~(excess >= floor))
        end = int(below[0]) if len(below) else len(excess)
        if end < 6:
            where = f"{setting}: " if setting else ""
            raise ParameterError(
                f"{where}run {j} has κ(U_A) − 1 ≥ {floor:g} for {end} steps of stage 2 (κ(U_A) = "
                f"{kappa[0, j]:.4g} at its start); a convergence rate needs at least 6"
            )
        y, t = np.log(excess[:end]), np.arange(end, dtype=float)
        slope, icpt = np.polyfit(t, y, 1)
        r2 = 1.0 - float(np.sum((y - (slope * t + icpt)) ** 2) / np.sum((y - y.mean()) ** 2))
        third = end // 3
        early = max((y[0] - y[third]) / third, 1e-12)  # a first third that does not fall: see max_factor
        late = (y[end - 1 - third] - y[end - 1]) / third
        rows.append(
            dict(
                steps=end,
                rate=-float(slope),
                r2=r2,
                early_rate=float(early),
                late_rate=float(late),
                rate_ratio=float(late / early),
                max_factor=float(np.exp(np.diff(y)).max()),
            )
        )
    return pd.DataFrame(rows)
