"""The claims' bookkeeping of the chapter ``book/tian-tokens.py`` (Tian 2023, Sec. 5, App. D, E.2).

The chapter evaluates the paper's claims about the token task (Figs. 9-11 and Table 1) on the
paper-scale grids of :mod:`nlcl.tian.tokens.paper_scale`. This module records each claim's
quantity as the claims do (rounded, per seed, read from which files), builds Table 1 (App. E.2),
re-scores the grids under the other scorings of Eqs. 16 and 180-181, joins the pooled-moments
BatchNorm grids (App. D, Eqs. 164-165) and tabulates the seed spread, the explanations'
predictions and the training curves. The claims' quantities themselves are
:func:`nlcl.tian.tokens.metrics.grid_predicates`, and for Fig. 5 :func:`fig5_capture`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from nlcl.tian.tokens.metrics import candidates_captured, grid_predicates, paper_table1, summarize
from nlcl.tian.tokens.paper_scale import FIGURES, artifact_files, read_from
from nlcl.tian.tokens.world import make_token_worlds

__all__ = [
    "ACT_LABEL",
    "GRID_CLAIMS",
    "NEEDS",
    "SCORINGS",
    "VARIANT",
    "curve_summary",
    "fig5_capture",
    "grid_checks",
    "grid_measurements",
    "per_view_names",
    "pooled_grids",
    "pooled_rows",
    "prediction_rows",
    "rescored",
    "rounded",
    "scoring_cell",
    "scoring_comparison",
    "seed_values",
    "spread_rows",
    "table1",
]

#: The grid claims: (id without the ``tokens-`` prefix, key of ``grid_predicates``, figure).
GRID_CLAIMS = [
    ("p1-linear-vs-relu", "p1_linear_minus_relu", "fig9"),
    ("relu-beats-linear", "relu_beats_linear", "fig9"),
    ("relu-grows-with-beta", "relu_beta_span", "fig9"),
    ("linear-flat-in-beta", "linear_beta_span", "fig9"),
    ("infonce-beats-quadratic", "infonce_minus_quadratic", "fig10"),
    ("relu-lowest-chi-minus", "lowest_chi_minus", "fig9"),
    ("bn-helps-at-zeta10", "bn_minus_none_zeta10", "fig11"),
    ("table1-no-var-backprop", "no_var_backprop_wins", "table1"),
    ("table1-vs-paper", "table1_vs_paper", "table1"),
]
#: The figures each grid claim's quantity reads (``grid_predicates``).
NEEDS = {cid: {fig} for cid, _, fig in GRID_CLAIMS}
NEEDS["infonce-beats-quadratic"] = {"fig9", "fig10"}
ACT_LABEL = {
    "linear": "linear",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU(0.05)",
    "quadratic": "quadratic $x^2$",
    "sigmoid": "sigmoid (control)",
}
#: Table 1's columns: which batch statistics BatchNorm backpropagates.
VARIANT = {
    "detached": "μ no / σ² no",
    "var": "μ no / σ² yes",
    "mean": "μ yes / σ² no",
    "vanilla": "μ yes / σ² yes",
}
#: The scorings of χ̄± (Eqs. 16, 181) a result table carries: (χ̄+ column, χ̄− column).
SCORINGS = {
    "book": ("chi_plus", "chi_minus"),
    "released": ("chi_plus_released", "chi_minus_released"),
    "sign-symmetric": ("chi_plus_symmetric", "chi_minus_symmetric"),
    "printed": ("chi_plus_printed", "chi_minus_printed"),
}


# -- values as the claims record them ---------------------------------------------------------


def rounded(v: Any) -> Any:
    """A claim's quantity as recorded: strings and integers as they are, else 3 decimals."""
    return v if isinstance(v, (str, int)) else round(float(v), 3)


def seed_values(per_seed: pd.DataFrame, key: str) -> list | None:
    """The quantity on each seed's grid (None below two seeds, or where a seed's grid lacks
    cells)."""
    values = [rounded(v) for v in per_seed[key]] if len(per_seed) >= 2 else None
    finite = values is not None and all(not isinstance(v, float) or math.isfinite(v) for v in values)
    return values if finite else None


def grid_measurements(
    values: Mapping[str, Any],
    per_seed: pd.DataFrame,
    files: Mapping[str, Any],
    joined: Mapping[str, list[str] | None] | None = None,
) -> dict[str, dict[str, Any]]:
    """The keywords of ``measure`` for each grid claim whose figures ``files`` covers: the
    quantity of ``grid_predicates`` (rounded), its per-seed values and the committed files it
    was read from (None where computed in this run). ``joined`` (figure → committed files, or
    None): the extra seeds pooled with this run's own grid (the full profile's seeds 3-4), which a
    claim computed in this run names as ``joined_with``."""
    out = {}
    for cid, key, _ in GRID_CLAIMS:
        if not NEEDS[cid] <= set(files):
            continue
        src = read_from(files, NEEDS[cid])
        kw = dict(measured=rounded(values[key]), per_seed=seed_values(per_seed, key), read_from=src)
        extra = [f for fig in FIGURES if fig in NEEDS[cid] for f in (joined or {}).get(fig) or []]
        if src is None and extra:
            kw["joined_with"] = extra
        out[cid] = kw
    return out


def grid_checks(ledger_claims: Sequence[Mapping[str, Any]], make_check: Callable) -> dict:
    """The checks of the grid claims ``tokens-<id>`` as the chapter's ledger declares them
    (``ledger_claims``: its entries; ``make_check``: ``nlcl.harness.ledger.make_check``)."""
    by_id = {c["id"]: c for c in ledger_claims}
    return {cid: make_check(by_id[f"tokens-{cid}"]["check"], {}) for cid, _, _ in GRID_CLAIMS}


def prediction_rows(
    records: Sequence[Mapping[str, Any]],
    ids: Sequence[str],
    diagnostics: Mapping[str, Any],
    ledger_claims: Sequence[Mapping[str, Any]],
    make_check: Callable,
) -> list[dict[str, Any]]:
    """One row per prediction of the not-reproduced explanations of the claims ``ids``: the
    diagnostic (or the claim's own value), its value, what the ledger predicted and whether it
    held (``ledger_claims`` and ``make_check`` as in :func:`grid_checks`)."""
    led = {c["id"]: c for c in ledger_claims}
    by_id = {r["id"]: r for r in records}
    rows = []
    for cid in ids:
        nr = led[cid].get("not_reproduced")
        if not isinstance(nr, dict) or cid not in by_id:
            continue
        rec = by_id[cid]
        conds = nr["expected"] if isinstance(nr["expected"], list) else [nr["expected"]]
        for cond in conds:
            name = cond.get("diagnostic")
            check = make_check({k: v for k, v in cond.items() if k != "diagnostic"}, {})
            value = rec["measured"] if name is None else diagnostics.get(name)
            rows.append(
                dict(claim=cid, status=rec["status"], quantity=name or cid, value=value)
                | {
                    "predicted": check.description,
                    "prediction holds": value is not None and bool(check(value)),
                }
            )
    return rows


def spread_rows(records: Sequence[Mapping[str, Any]], ids: Sequence[str], grid: str) -> list[dict]:
    """The seed spread of the claims ``ids`` (in that order): per-seed values, their std, on how
    many seeds the predicate holds, and whether the margin is smaller than the spread."""
    by_id = {r["id"]: r for r in records}
    rows = []
    for cid in ids:
        rec = by_id.get(cid)
        seeds = rec.get("seeds") if rec else None
        if not seeds:
            continue
        rows.append(
            {
                "grid": grid,
                "claim": rec["id"],
                "check": rec["tolerance"],
                "decided value": rec["measured"],
                "per seed": ", ".join(map(str, seeds["values"])),
                "std over seeds": round(seeds["std"], 3) if seeds.get("std") is not None else "",
                "holds on": f"{round(seeds['holds_fraction'] * seeds['n'])}/{seeds['n']}",
                "margin < spread": "yes" if seeds.get("margin_within_spread") else "",
                "status": rec["status"],
            }
        )
    return rows


# -- Table 1 (App. E.2) -----------------------------------------------------------------------


def table1(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 1 of Tian 2023 (App. E.2, ζ = 10): mean χ̄+ per (β, P, BN variant) with the paper's
    value and the difference, long and as the printed wide table."""
    t = table[table.figure == "table1"] if "figure" in table else table
    s = summarize(t, ["beta", "P", "bn"], values=["chi_plus"])
    s = s.merge(paper_table1(), on=["beta", "P", "bn"], how="left")
    s["diff"] = s.chi_plus_mean - s.paper_mean
    s["cell"] = [
        f"{m:.2f}{' (1 seed)' if np.isnan(sd) else f' ± {sd:.2f}'} (paper {pm:.2f}, {d:+.2f})"
        for m, sd, pm, d in zip(s.chi_plus_mean, s.chi_plus_std, s.paper_mean, s["diff"])
    ]
    wide = s.pivot(index=["beta", "P"], columns="bn", values="cell")[list(VARIANT)]
    return s, wide.rename(columns=VARIANT)


# -- other scorings (Eqs. 16, 180-181; the released check_result) -----------------------------


def rescored(tables: Sequence[pd.DataFrame], scoring: str) -> tuple[list[pd.DataFrame], set[str]]:
    """The four tables with χ̄± replaced by ``scoring``'s, and the figures whose tables carry
    them."""
    cp, cm = SCORINGS[scoring]
    out, have = [], set()
    for fig, t in zip(FIGURES, tables):
        if len(t) and cp in t.columns:
            out.append(t.assign(chi_plus=t[cp], chi_minus=t[cm]))
            have.add(fig)
        else:
            out.append(t)
    return out, have


def scoring_comparison(
    grids: Mapping[str, Sequence[pd.DataFrame]], checks: Mapping[str, Any], others: Sequence[str]
) -> tuple[pd.DataFrame, dict[str, list[bool]]]:
    """Every grid claim's quantity under each scoring of ``SCORINGS`` on each grid of ``grids``,
    and per scoring of ``others`` whether each verdict agrees with the book's scoring."""
    scoring_rows, same = [], {sc: [] for sc in others}
    for grid_name, tables in grids.items():
        if not any(len(t) for t in tables):
            continue
        values, stored = {}, {}
        for sc in SCORINGS:
            tabs, stored[sc] = rescored(tables, sc)
            values[sc] = grid_predicates(*tabs)
        for cid, key, _ in GRID_CLAIMS:
            check = checks[cid]
            row = dict(grid=grid_name, claim=f"tokens-{cid}", check=check.description)
            ok = {sc: NEEDS[cid] <= stored[sc] for sc in SCORINGS}
            if not ok["book"]:
                continue
            for sc in SCORINGS:
                row[sc] = rounded(values[sc][key]) if ok[sc] else "(not stored)"
            base = bool(check(values["book"][key]))
            for sc in others:
                if ok[sc]:
                    agree = bool(check(values[sc][key])) == base
                    same[sc].append(agree)
                    if not agree:
                        row[sc] = f"{row[sc]} (verdict differs)"
            scoring_rows.append(row)
    return pd.DataFrame(scoring_rows).set_index(["grid", "claim"]), same


def scoring_cell(scoring_table: pd.DataFrame, grid_name: str, cid: str, scoring: str) -> str:
    """One entry of the scoring table, as text ("n/a" when that grid is not in this run)."""
    key = (grid_name, f"tokens-{cid}")
    return str(scoring_table.loc[key, scoring]) if key in scoring_table.index else "n/a"


# -- BatchNorm moments pooled over both views (App. D, Eqs. 164-165) --------------------------


def per_view_names(t: pd.DataFrame) -> pd.DataFrame:
    """A pooled table with the per-view variant names, which grid_predicates and table1 read."""
    return t.assign(bn=t.bn.str.removeprefix("pooled-"))


def pooled_grids(
    arts: Mapping[str, Any],
    view_tables: Sequence[pd.DataFrame],
    view_files: Mapping[str, Any],
) -> dict[str, Any]:
    """The four tables of the pooled-moments grid (Figs. 9 and 10 and Fig. 11's no-BN runs from
    the per-view grid, on the pooled grid's seeds), the per-view grid on the same seeds, the
    committed files each figure reads, and the seeds."""
    v9, v10, v11, vt1 = view_tables
    seeds_pooled = sorted(set(arts["fig11"].table.seed) & set(arts["table1"].table.seed))
    no_bn = v11[(v11.bn == "none") & v11.seed.isin(seeds_pooled)]
    common = [c for c in no_bn.columns if c in arts["fig11"].table.columns]
    p11 = pd.concat([no_bn[common], per_view_names(arts["fig11"].table)[common]], ignore_index=True)
    pt1 = per_view_names(arts["table1"].table)
    view_same = [t[t.seed.isin(seeds_pooled)] if len(t) else t for t in view_tables]
    files = {
        "fig11": artifact_files(arts["fig11"]) + view_files["fig11"] if view_files["fig11"] else None,
        "table1": artifact_files(arts["table1"]),
    }
    return dict(tables=[v9, v10, p11, pt1], view_same=view_same, files=files, seeds=seeds_pooled)


def pooled_rows(
    lr_value: float,
    values_v: Mapping[str, Any],
    values_p: Mapping[str, Any],
    checks: Mapping[str, Any],
    n_seeds: int,
) -> list[dict[str, Any]]:
    """The BatchNorm claims' quantities with per-view and with pooled moments, and whether the
    verdicts agree."""
    rows = []
    for cid, key, fig in GRID_CLAIMS:
        if fig not in ("fig11", "table1"):
            continue
        check = checks[cid]
        rows.append(
            {
                "η": f"{lr_value:g}",
                "claim": f"tokens-{cid}",
                "check": check.description,
                "per view (released)": rounded(values_v[key]),
                "pooled (App. D)": rounded(values_p[key]),
                "same verdict": bool(check(values_v[key])) == bool(check(values_p[key])),
                "seeds": n_seeds,
            }
        )
    return rows


# -- training curves -----------------------------------------------------------------------------


def curve_summary(curves: pd.DataFrame, T: int) -> tuple[pd.DataFrame, int]:
    """Per activation and η: χ̄+ untrained, at the last record before 0.8 T and at T, the share
    of the χ̄+ gain made in the last fifth, and the loss at the start and at T."""
    late = max(s for s in curves.step.unique() if s <= 0.8 * T)
    rows = []
    for (act, lr_text), g in curves.groupby(["activation", "η"], sort=False):
        m = g.groupby("step")[["loss", "chi_plus"]].mean()
        gain = m.chi_plus[T] - m.chi_plus[0]
        rows.append(
            {
                "activation": act,
                "η": lr_text,
                "χ̄+ untrained": m.chi_plus[0],
                f"χ̄+ at {late}": m.chi_plus[late],
                f"χ̄+ at {T}": m.chi_plus[T],
                "share of the χ̄+ gain in the last fifth": (m.chi_plus[T] - m.chi_plus[late]) / gain
                if gain != 0
                else float("nan"),
                "loss untrained": m.loss[0],
                f"loss at {T}": m.loss[T],
            }
        )
    return pd.DataFrame(rows).set_index(["activation", "η"]), late


def fig5_capture(runs: Sequence[Any], weights: Mapping[int, torch.Tensor]) -> pd.DataFrame:
    """Fig. 5's claims per run: the share of candidates captured and the weakest match (Tian 2023, Fig. 5).

    ``runs``: :class:`~nlcl.tian.tokens.grid.TokenRun` (ζ = 1); ``weights``: run index → W (K, M, d)
    for every run (``train_token_runs(..., keep_weights=range(len(runs)))``). Each run's world is
    redrawn from its seed and P (:func:`~nlcl.tian.tokens.world.make_token_worlds`, the world it
    trained on) and scored by :func:`~nlcl.tian.tokens.metrics.candidates_captured` (|cos| for
    linear). Returns columns activation, lr, seed, share, weakest, one row per run in input order.
    """
    W = torch.stack([weights[i] for i in range(len(runs))])
    world = make_token_worlds([r.seed for r in runs], [r.P for r in runs], [r.zeta for r in runs])
    share, weakest = candidates_captured(W, world, [r.activation == "linear" for r in runs])
    return pd.DataFrame(
        {
            "activation": [r.activation for r in runs],
            "lr": [r.lr for r in runs],
            "seed": [r.seed for r in runs],
            "share": share.numpy(),
            "weakest": weakest.numpy(),
        }
    )
