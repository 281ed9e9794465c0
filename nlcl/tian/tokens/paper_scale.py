"""The paper-scale artifacts of the chapter ``book/tian-tokens.py`` (Tian 2023, Sec. 5, App. D and E.2).

The chapter evaluates the paper's claims about the token task (Figs. 9-11 and Table 1) on
paper-scale grids: committed full-profile artifacts (``results/tian-tokens-full-*``, joined with
the seeds trained later, ``EXTRA_SEEDS``), the pooled-moments BatchNorm grids (App. D, Eqs.
164-165) or its own full-profile run. This module loads and joins them through the results store
the chapter passes in (``nlcl.harness.results``: paper code does not import the harness), says
whether a grid is complete and where each table comes from (the files a claim is read from), and
reads the committed benchmark records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from nlcl.tian.paper import TOKEN_STEPS
from nlcl.tian.tokens.grid import grid_parameters, paper_grid

__all__ = [
    "EXTRA_SEEDS",
    "FIGURES",
    "GRID_KEYS",
    "SENSITIVITY_LR",
    "artifact_files",
    "bench_summary",
    "computed_main_text",
    "computed_text",
    "describe",
    "is_complete",
    "load_artifact",
    "load_extra_for_live",
    "load_one",
    "load_pooled",
    "read_from",
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


# -- the paper-scale artifacts ----------------------------------------------------------------


def load_one(store: Any, name: str, fig: str, lr: float, steps: int = TOKEN_STEPS) -> Any:
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


def load_pooled(store: Any, prefix: str, fig: str, lr: float) -> Any:
    """The committed pooled-moments grid ``<prefix>-<fig>`` (BatchNorm runs only), or None."""
    name = f"{prefix}-{fig}"
    try:
        stored_seeds = store.load(name).meta["parameters"]["seeds"]
        params = {**grid_parameters(TOKEN_STEPS, lr, stored_seeds, bn_moments="pooled"), "figure": fig}
        return store.load(name, params=params)
    except (FileNotFoundError, store.ArtifactMismatch) as err:
        print(f"{name}: no usable artifact ({str(err)[:160]})")
        return None


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
