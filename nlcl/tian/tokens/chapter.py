"""The bookkeeping of the chapter ``book/tian-tokens.py`` (Tian 2023, Sec. 5, App. D and E.2).

The chapter evaluates the paper's claims about the token task (Figs. 9-11 and Table 1) on
paper-scale grids: committed full-profile artifacts (``results/tian-tokens-full-*``, joined with
the seeds trained later, ``EXTRA_SEEDS``) or its own full-profile run. This module loads and joins
those artifacts (through the results store the chapter passes in, ``nlcl.harness.results``:
paper code does not import the harness), says where each table comes from, builds Table 1 (App. E.2), re-scores the grids
under the other scorings of Eqs. 16 and 180-181, joins the pooled-moments BatchNorm grids (App. D,
Eqs. 164-165) and tabulates the seed spread, the oracle record and the training curves. The
claims' quantities themselves are :func:`nlcl.tian.tokens.metrics.grid_predicates`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlcl.tian.tokens.grid import grid_parameters, paper_grid
from nlcl.tian.tokens.metrics import grid_predicates, paper_table1, summarize

__all__ = [
    "ACT_LABEL",
    "ACT_SHORT",
    "EXTRA_SEEDS",
    "FIGURES",
    "GRID_CLAIMS",
    "GRID_KEYS",
    "NEEDS",
    "SCORINGS",
    "SENSITIVITY_LR",
    "VARIANT",
    "artifact_files",
    "bench_summary",
    "cell_name",
    "computed_main_text",
    "computed_text",
    "curve_summary",
    "describe",
    "grid_checks",
    "grid_measurements",
    "is_complete",
    "load_artifact",
    "load_extra_for_live",
    "load_one",
    "load_pooled",
    "oracle_cells",
    "oracle_table",
    "per_view_names",
    "pooled_grids",
    "pooled_rows",
    "prediction_rows",
    "read_from",
    "replication_rows",
    "rescored",
    "rounded",
    "scoring_cell",
    "scoring_comparison",
    "seed_values",
    "spread_rows",
    "table1",
    "table_for",
]

#: The four experiments of the grid: Figs. 9, 10, 11 and Table 1.
FIGURES = ("fig9", "fig10", "fig11", "table1")
#: The columns that identify one run of the grid.
GRID_KEYS = ["activation", "loss", "bn", "beta", "P", "zeta", "seed"]
#: The released code's learning rate, of the sensitivity grid ``tian-tokens-full-lr0.01-*``.
SENSITIVITY_LR = 1e-2
#: Grids whose claims had margins smaller than their seed spread got more seeds, trained later
#: into an artifact of their own (``nlcl train-grid --seeds 3 4 --prefix <prefix>-seeds3-4``).
EXTRA_SEEDS = {
    "tian-tokens-full": "tian-tokens-full-seeds3-4",
    "tian-tokens-full-lr0.01": "tian-tokens-full-lr0.01-seeds3-4",
}
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
ACT_SHORT = {
    "quadratic": "x²",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU",
    "linear": "linear",
    "sigmoid": "sigmoid",
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


# -- the paper-scale artifacts ----------------------------------------------------------------


def load_one(store: Any, name: str, fig: str, lr: float, steps: int = 5000) -> Any:
    """The artifact ``name`` of ``store`` (``nlcl.harness.results``) if it was trained at ``lr``
    for ``steps`` on the paper's grid (any seeds)."""
    stored_seeds = store.load(name).meta["parameters"]["seeds"]
    return store.load(name, params={**grid_parameters(steps, lr, stored_seeds), "figure": fig})


def load_artifact(store: Any, prefix: str, fig: str, lr: float) -> Any:
    """The committed artifact ``<prefix>-<fig>`` trained at ``lr`` (any completed seeds, plus the
    extra seeds of ``EXTRA_SEEDS`` when present), or None."""
    try:
        art = load_one(store, f"{prefix}-{fig}", fig, lr)
    except (FileNotFoundError, store.ArtifactMismatch) as err:
        print(f"{prefix}-{fig}: no usable artifact ({str(err)[:160]})")
        return None
    if prefix in EXTRA_SEEDS:
        try:
            extra = load_one(store, f"{EXTRA_SEEDS[prefix]}-{fig}", fig, lr)
            art = store.concat_seeds([art, extra])
        except (FileNotFoundError, store.ArtifactMismatch) as err:
            print(f"{EXTRA_SEEDS[prefix]}-{fig}: extra seeds not used ({str(err)[:160]})")
    return art


def load_extra_for_live(store: Any, fig: str, lr: float, steps: int, seeds: Sequence[int]) -> Any:
    """In the full profile, the committed extra seeds trained with this run's ``lr`` and ``steps``,
    or None (also when they overlap the run's own ``seeds``)."""
    name = f"{EXTRA_SEEDS['tian-tokens-full']}-{fig}"
    try:
        extra = load_one(store, name, fig, lr, steps)
    except (FileNotFoundError, store.ArtifactMismatch) as err:
        print(f"{name}: extra seeds not used ({str(err)[:160]})")
        return None
    stored_seeds = extra.meta["parameters"]["seeds"]
    if set(stored_seeds) & set(seeds):
        print(f"{name}: extra seeds {stored_seeds} overlap this run's seeds {list(seeds)}: not used")
        return None
    return extra


def is_complete(table: pd.DataFrame, fig: str, lr: float, tau: float) -> bool:
    """True when a result table holds every run of the paper's grid for ``fig`` at ``lr``."""
    full = paper_grid([fig], lr=lr, tau=tau)
    have = set(map(tuple, table[GRID_KEYS].astype(str).values))
    return all(tuple(r) in have for r in full[GRID_KEYS].astype(str).values)


def describe(art: Any, fig: str, profile: str, short: bool = False) -> str:
    """Where results come from, with their extent (a partial artifact says so)."""
    if art is None:
        return f"live {profile} run"
    t = art.table
    n_full = len(paper_grid([fig], seeds=art.meta["parameters"]["seeds"]))
    extent = "complete" if len(t) == n_full else f"PARTIAL, {len(t)} of {n_full} runs"
    lr_text = f"η = {art.meta['parameters']['lr']:g}"
    seeds = sorted(t.seed.unique().tolist())
    if short:
        return f"full-profile artifact, {lr_text} ({extent}, seeds {seeds})"
    return f"full-profile artifact, {lr_text}, {extent} ({art.label()}; seeds {seeds})"


def table_for(
    fig: str,
    claim_source: Mapping[str, str],
    artifacts: Mapping[str, Any],
    live_table: pd.DataFrame,
    extra_live: Mapping[str, Any],
) -> pd.DataFrame:
    """The table the claims use for ``fig``: the artifact when ``claim_source[fig]`` is
    "artifact", else the live run (in the full profile joined by the committed extra seeds, as
    the ci profile joins them to the artifact)."""
    if claim_source[fig] == "artifact":
        return artifacts[fig].table
    own = live_table[live_table.figure == fig].reset_index(drop=True)
    if extra_live[fig] is None:
        return own
    extra = extra_live[fig].table
    common = [c for c in own.columns if c in extra.columns]
    return pd.concat([own[common], extra[common]], ignore_index=True)


def artifact_files(art: Any) -> list[str]:
    """The committed files an artifact was read from (one per part when extra seeds were
    joined)."""
    return [f"results/{m['name']}.json" for m in art.meta.get("parts") or [art.meta]]


def read_from(files: Mapping[str, list[str] | None], figs: set[str]) -> list[str] | None:
    """``read_from=`` of a claim whose quantity reads the tables of ``figs``: their committed
    files, or None when any of them is (partly) computed in this run (``files[fig]`` None)."""
    out = [f for fig in FIGURES if fig in figs for f in (files[fig] or [None])]
    return None if None in out else out


def computed_text(
    fig: str, main_files: Mapping[str, Any], seeds: Sequence[int], extra_live: Mapping[str, Any]
) -> str:
    """Where the table of ``fig`` at the run's η comes from, in words (file names with
    ``<figure>``)."""
    if main_files[fig]:
        names = [f.replace(fig, "<figure>") for f in main_files[fig]]
        return "read from the committed " + " and ".join(names) + ", not computed in this run"
    text = f"computed in this run (seeds {', '.join(map(str, seeds))})"
    if extra_live[fig] is not None:
        extra = artifact_files(extra_live[fig])[0].replace(fig, "<figure>")
        text += f", joined with seeds {extra_live[fig].meta['parameters']['seeds']} read from {extra}"
    return text


def computed_main_text(texts: Mapping[str, str]) -> str:
    """The words of :func:`computed_text` for all four figures, said once when they agree."""
    if len(set(texts.values())) == 1:
        return texts["fig9"] + (f" (<figure>: {', '.join(FIGURES)})" if "<figure>" in texts["fig9"] else "")
    return "; ".join(f"{fig}: {t}" for fig, t in texts.items())


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
    values: Mapping[str, Any], per_seed: pd.DataFrame, files: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    """The keywords of ``measure`` for each grid claim whose figures ``files`` covers: the
    quantity of ``grid_predicates`` (rounded), its per-seed values and the committed files it
    was read from (None where computed in this run)."""
    return {
        cid: dict(
            measured=rounded(values[key]),
            per_seed=seed_values(per_seed, key),
            read_from=read_from(files, NEEDS[cid]),
        )
        for cid, key, _ in GRID_CLAIMS
        if NEEDS[cid] <= set(files)
    }


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


def load_pooled(store: Any, prefix: str, fig: str, lr: float) -> Any:
    """The committed pooled-moments grid ``<prefix>-<fig>`` (BatchNorm runs only), or None."""
    name = f"{prefix}-{fig}"
    try:
        stored_seeds = store.load(name).meta["parameters"]["seeds"]
        params = {**grid_parameters(5000, lr, stored_seeds, bn_moments="pooled"), "figure": fig}
        return store.load(name, params=params)
    except (FileNotFoundError, store.ArtifactMismatch) as err:
        print(f"{name}: no usable artifact ({str(err)[:160]})")
        return None


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


# -- the oracle record (the released trainer re-implemented, issue 18) ------------------------


def cell_name(loss: str, bn: str, activation: str) -> str:
    """A cell of issue 18's grid as the tables show it, e.g. "quadratic, BN mean, x²"."""
    return (
        f"{'InfoNCE' if loss == 'infonce' else 'quadratic'}, "
        f"{'BN mean' if bn == 'mean' else 'no BN'}, {ACT_SHORT[activation]}"
    )


def oracle_cells(record: Mapping[str, Any]) -> pd.DataFrame:
    """The cells of the oracle record, with their names and oracle seed counts."""
    oc = pd.DataFrame(record["cells"])
    oc["cell"] = [cell_name(lo, b, a) for lo, b, a in zip(oc.loss, oc.bn, oc.activation)]
    oc["n_oracle"] = oc.oracle_seeds.map(len)
    return oc


def _pm(rows: pd.DataFrame, col: str) -> list[str]:
    return [
        f"{m:.3f} ± {s:.3f}" if s == s else f"{m:.3f}"
        for m, s in zip(rows[col], rows[col + "_se"].fillna(np.nan))
    ]


def oracle_table(oc: pd.DataFrame, record: Mapping[str, Any]) -> pd.DataFrame:
    """The oracle record cell by cell: oracle and nlcl χ̄± (mean ± s.e.) and the verdicts."""
    return pd.DataFrame(
        {
            "oracle seeds": oc.n_oracle.values,
            "oracle χ̄+": _pm(oc, "oracle_chi_plus"),
            "oracle χ̄−": _pm(oc, "oracle_chi_minus"),
            "nlcl χ̄+ (released)": _pm(oc, "nlcl_released_chi_plus"),
            "nlcl χ̄− (released)": _pm(oc, "nlcl_released_chi_minus"),
            "verdict (released)": oc.verdict_released.values,
            "nlcl χ̄− (cosine)": _pm(oc, "nlcl_cosine_chi_minus"),
            "verdict (cosine)": oc.verdict_cosine.values,
        },
        index=pd.Index(oc.cell, name=f"{len(record['config']['seeds'])} nlcl seeds per cell"),
    )


def replication_rows(replication: Mapping[str, Any]) -> tuple[list[dict], list[str]]:
    """The differing cells at the record's seeds and at the fresh seeds 5-9, and those whose
    difference keeps its sign."""
    rep_rows, same_sign = [], []
    for c in replication["cells"]:
        name = cell_name(c["loss"], c["bn"], c["activation"])
        for sc in c["differed_in"]:
            label = "χ̄+" if sc == "chi_plus" else "χ̄−"
            before, after = c["record"][f"diff_released_{sc}"], c["fresh"][f"diff_released_{sc}"]
            tol_before = c["record"][f"tol_released_{sc}"]
            tol_after = c["fresh"][f"tol_released_{sc}"]
            rep_rows.append(
                {
                    "cell": name,
                    "score": label,
                    "seeds 0-4: nlcl − oracle (tol)": f"{before:+.3f} ({tol_before:.3f})",
                    "seeds 5-9: nlcl − oracle (tol)": f"{after:+.3f} ({tol_after:.3f})",
                    "replicates": sc in c["differs_again_in"],
                }
            )
            if (before > 0) == (after > 0):
                same_sign.append(f"{name} {label}")
    return rep_rows, same_sign


# -- training curves and the benchmark --------------------------------------------------------


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


def bench_summary(store: Any) -> tuple[dict[str, dict], dict[str, str]]:
    """The committed benchmark records ``results/tian-tokens-bench-*.json`` (scalar fields) and
    the words the chapter glues from the table engine's record."""
    glue = dict(device="n/a", projected="n/a", dense="n/a", engine="n/a", peak="n/a", workers="n/a")
    benches = {}
    for name, bench in store.records("tian-tokens-bench-").items():
        benches[name] = {k: v for k, v in bench.items() if not isinstance(v, dict)}
        if name == "tian-tokens-bench-cpu":
            glue = dict(
                device=bench["device"],
                projected=f"{bench['projected_full_grid_min_wall']:.1f}",
                dense=f"{100 * bench['fraction_of_peak']:.0f}%",
                engine=f"{100 * bench['fraction_of_peak_engine']:.0f}%",
                peak=f"{bench['matmul_peak_gflops']:.0f}",
                workers=str(bench.get("workers", 1)),
            )
    return benches, glue
