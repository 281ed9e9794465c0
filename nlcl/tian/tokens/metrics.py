"""Matching scores of learned filters against the token embeddings (Tian 2023, Eqs. 16 and 181).

For a receptive field R_k with filters {w_km} and token embeddings u_a:

    χ+(R_k) = mean_{a ∈ R_k^g} max_m cos(w_km, u_a),   χ̄+ = mean_k χ+(R_k)   (Eq. 16 / 180)
    χ−(R_k) = mean_{a ∉ R_k^g} max_m cos(w_km, u_a),   χ̄− = mean_k χ−(R_k)   (Eq. 181)

For linear activation a filter and its negation are the same pattern, so cos is replaced by
|cos| (as in the paper's released code).  Eq. 181 is printed with a 1/P prefactor over the d − P
tokens a ∉ R_k^g; we average (1/(d − P)), which keeps χ̄− in [−1, 1] and comparable across P.
R_k^g is the set of tokens that some generator fixes at R_k (:attr:`TokenWorld.relevant`).

``normaliser="released"`` scores as the paper's released code does (facebookresearch/luckmatters,
``ssl/real-dataset/bn_gen.py``, ``compute_score`` called by ``check_result``): the same sets and
averages, but ``w_kmᵀû_a / (‖w_km‖ + max(max_{m,b}|w_kmᵀû_b| / 1000, 1e-6))`` in place of the
cosine, so a filter whose norm has decayed to about a thousandth of the RF's largest weight scores
well below its cosine (it drops out of the max).  The book's default is the cosine.

Fig. 5's reading, "learned weights clearly capture the 3 candidate tokens within R_k^g at each RF",
is :func:`candidates_captured`: the share of the pairs (R_k, a ∈ R_k^g) for which some filter of R_k
has more than half of its squared norm on u_a.

Also :data:`PAPER_TABLE1`, the paper's Table 1 (mean, std of χ̄+ at ζ = 10 for the four
BatchNorm variants), for side-by-side comparison.

Explained in ``book/tian-tokens.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch

from nlcl.core.validate import ParameterError
from nlcl.tian.tokens.world import TokenWorld

__all__ = [
    "candidates_captured",
    "filter_token_cosines",
    "matching_scores",
    "NORMALISERS",
    "PREFACTORS",
    "PAPER_TABLE1",
    "paper_table1",
    "summarize",
    "grid_predicates",
    "grid_predicates_per_seed",
]


#: Denominators of the matching scores: the cosine (the book's) or the released ``compute_score``'s.
NORMALISERS: tuple[str, ...] = ("cosine", "released")

#: Averages of the matching scores over a token set: the mean, or 1/P times the sum (as printed).
PREFACTORS: tuple[str, ...] = ("mean", "1/P")


def filter_token_cosines(
    W: torch.Tensor,
    embedding: torch.Tensor,
    linear: bool | Sequence[bool] = False,
    normaliser: str = "cosine",
) -> torch.Tensor:
    """cos(w_km, u_a) for all runs, RFs, filters and tokens (the inner term of Eq. 16).

    ``W`` (R, K, M, d), ``embedding`` (R, n_tokens, d) or (n_tokens, d).  ``linear`` (one flag or
    one per run) takes |cos|.  A zero filter has cosine 0.  Returns (R, K, M, n_tokens).
    ``normaliser="released"`` divides w_kmᵀû_a by ‖w_km‖ + max(max_{m,b}|w_kmᵀû_b| / 1000, 1e-6)
    instead (the released ``compute_score``, ``bn_gen.py``; the max runs over the RF's filters).
    """
    if normaliser not in NORMALISERS:
        raise ParameterError(f"normaliser={normaliser!r}; allowed: {', '.join(NORMALISERS)}")
    if W.ndim != 4:
        raise ParameterError(f"W has shape {tuple(W.shape)}; expected (R, K, M, d)")
    E = embedding if embedding.ndim == 3 else embedding[None].expand(W.shape[0], -1, -1)
    if E.shape[0] != W.shape[0] or E.shape[2] != W.shape[3]:
        raise ParameterError(
            f"embedding has shape {tuple(embedding.shape)}; expected (R, n_tokens, d={W.shape[3]})"
        )
    En = torch.nn.functional.normalize(E.double().to(W.device), dim=-1)
    if normaliser == "cosine":
        Wn = torch.nn.functional.normalize(W.double(), dim=-1)
        cos = torch.einsum("rkmd,rad->rkma", Wn, En)
    else:
        proj = torch.einsum("rkmd,rad->rkma", W.double(), En)
        eps = (proj.abs().amax(dim=(2, 3), keepdim=True) / 1000).clamp(min=1e-6)
        cos = proj / (W.double().norm(dim=-1)[..., None] + eps)
    lin = torch.as_tensor(linear, dtype=torch.bool, device=W.device).reshape(-1).expand(W.shape[0])
    return torch.where(lin[:, None, None, None], cos.abs(), cos)


def matching_scores(
    W: torch.Tensor,
    world: TokenWorld,
    linear: bool | Sequence[bool] = False,
    normaliser: str = "cosine",
    prefactor: str = "mean",
) -> tuple[torch.Tensor, torch.Tensor]:
    """χ̄+ (Eq. 16) and χ̄− (Eq. 181) of each run's filters; two tensors of shape (R,).

    ``W`` (R, K, M, d) are the learned low-layer filters of the runs of ``world``.  An RF with no
    relevant token (possible only for tiny G) is left out of the RF average.  ``normaliser``: one
    of :data:`NORMALISERS` ("released" reproduces the released ``check_result``).  ``prefactor``:
    one of :data:`PREFACTORS`: ``"mean"`` averages over the tokens of the set (the book's and the
    released code's choice), ``"1/P"`` sums over the set and divides by P, as Eqs. 16 and 181 are
    printed (for χ̄− a sum over the d − P irrelevant tokens, so it can exceed 1).
    """
    if prefactor not in PREFACTORS:
        raise ParameterError(f"prefactor={prefactor!r}; allowed: {', '.join(PREFACTORS)}")
    if W.shape[0] != world.n_runs or W.shape[1] != world.K or W.shape[3] != world.n_tokens:
        raise ParameterError(
            f"W has shape {tuple(W.shape)}; expected (R={world.n_runs}, K={world.K}, M, d={world.n_tokens})"
        )
    best = (
        filter_token_cosines(W, world.embedding(dtype=torch.float64), linear, normaliser).max(dim=2).values
    )  # (R, K, n)
    rel = world.relevant.to(best.device)

    P = world.P.to(best.device, torch.float64)[:, None]

    def score(mask: torch.Tensor) -> torch.Tensor:
        n = mask.sum(-1)
        per_rf = (best * mask).sum(-1) / (n.clamp(min=1) if prefactor == "mean" else P)
        ok = n > 0
        return (per_rf * ok).sum(-1) / ok.sum(-1).clamp(min=1)

    return score(rel), score(~rel)


def candidates_captured(
    W: torch.Tensor, world: TokenWorld, linear: bool | Sequence[bool] = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """Fig. 5's reading: the share of candidates some filter captures, and the weakest match (Tian 2023).

    A filter w_km *captures* token a when more than half of its squared norm lies on u_a,
    cos²(w_km, u_a) > ½ (the embeddings are orthonormal, Sec. 5, so a is then its one dominant
    token); with ReLU cos > 1/√2, with ``linear`` |cos| > 1/√2 (:func:`filter_token_cosines`).
    Fig. 5: with ReLU the filters of every RF capture each of its candidates R_k^g
    (:attr:`TokenWorld.relevant`), a share of 1; linear filters do not. ``W`` (R, K, M, d).

    Returns (R,) float64 each: the share of the pairs (R_k, a ∈ R_k^g) with a captured, and the
    weakest match min_{k, a ∈ R_k^g} max_m cos(w_km, u_a) (the share is 1 iff it exceeds 1/√2).
    """
    if W.shape[0] != world.n_runs or W.shape[1] != world.K or W.shape[3] != world.n_tokens:
        raise ParameterError(
            f"W has shape {tuple(W.shape)}; expected (R={world.n_runs}, K={world.K}, M, d={world.n_tokens})"
        )
    best = filter_token_cosines(W, world.embedding(dtype=torch.float64), linear).max(dim=2).values
    rel = world.relevant.to(best.device)
    captured = (best > 2**-0.5) & rel  # (R, K, n)
    share = captured.sum((1, 2)) / rel.sum((1, 2)).clamp(min=1)
    weakest = torch.where(rel, best, torch.full_like(best, torch.inf)).amin((1, 2))
    return share.double().cpu(), weakest.double().cpu()


#: Tian (2023) Table 1: χ̄+ (mean, std over 3 seeds) at ζ = 10, keyed by (β, P) then variant.
#: Variants: "detached" (μ no, σ² no), "var" (μ no, σ² yes), "mean" (μ yes, σ² no), "vanilla".
PAPER_TABLE1: dict[tuple[int, int], dict[str, tuple[float, float]]] = {
    (1, 1): {"detached": (0.31, 0.24), "var": (0.23, 0.06), "mean": (0.30, 0.24), "vanilla": (0.23, 0.06)},
    (1, 3): {"detached": (0.65, 0.09), "var": (-0.03, 0.01), "mean": (0.64, 0.07), "vanilla": (0.24, 0.11)},
    (1, 5): {"detached": (0.61, 0.06), "var": (-0.00, 0.00), "mean": (0.62, 0.02), "vanilla": (0.38, 0.04)},
    (1, 10): {"detached": (0.66, 0.06), "var": (0.53, 0.05), "mean": (0.70, 0.03), "vanilla": (0.56, 0.04)},
    (2, 1): {"detached": (0.36, 0.13), "var": (0.27, 0.06), "mean": (0.63, 0.11), "vanilla": (0.33, 0.12)},
    (2, 3): {"detached": (0.78, 0.01), "var": (0.00, 0.01), "mean": (0.80, 0.02), "vanilla": (0.41, 0.07)},
    (2, 5): {"detached": (0.78, 0.02), "var": (0.22, 0.21), "mean": (0.77, 0.07), "vanilla": (0.56, 0.02)},
    (2, 10): {"detached": (0.83, 0.08), "var": (0.72, 0.06), "mean": (0.80, 0.04), "vanilla": (0.71, 0.05)},
    (5, 1): {"detached": (0.63, 0.06), "var": (0.43, 0.12), "mean": (0.67, 0.06), "vanilla": (0.46, 0.06)},
    (5, 3): {"detached": (0.90, 0.06), "var": (0.45, 0.07), "mean": (0.90, 0.03), "vanilla": (0.60, 0.08)},
    (5, 5): {"detached": (0.90, 0.01), "var": (0.72, 0.01), "mean": (0.88, 0.06), "vanilla": (0.74, 0.02)},
    (5, 10): {"detached": (0.88, 0.01), "var": (0.88, 0.04), "mean": (0.92, 0.03), "vanilla": (0.90, 0.03)},
    (10, 1): {"detached": (0.63, 0.12), "var": (0.37, 0.15), "mean": (0.70, 0.17), "vanilla": (0.46, 0.15)},
    (10, 3): {"detached": (0.95, 0.05), "var": (0.72, 0.06), "mean": (0.94, 0.05), "vanilla": (0.80, 0.03)},
    (10, 5): {"detached": (0.98, 0.02), "var": (0.84, 0.05), "mean": (0.96, 0.06), "vanilla": (0.92, 0.01)},
    (10, 10): {"detached": (0.90, 0.01), "var": (0.97, 0.02), "mean": (0.89, 0.03), "vanilla": (0.97, 0.02)},
}


def paper_table1() -> pd.DataFrame:
    """Tian 2023, Table 1 (:data:`PAPER_TABLE1`) as a long table with columns beta, P, bn, paper_mean, paper_std."""
    rows = [
        dict(beta=b, P=p, bn=v, paper_mean=m, paper_std=s)
        for (b, p), cells in PAPER_TABLE1.items()
        for v, (m, s) in cells.items()
    ]
    return pd.DataFrame(rows)


def summarize(
    table: pd.DataFrame, by: Sequence[str], values: Sequence[str] = ("chi_plus", "chi_minus")
) -> pd.DataFrame:
    """Mean and (sample) std over seeds of ``values`` grouped by ``by`` (Tian 2023, Figs. 9-11, Table 1: mean ± std)."""
    missing = [c for c in list(by) + list(values) if c not in table.columns]
    if missing:
        raise ParameterError(f"table lacks column(s) {missing}")
    g = table.groupby(list(by), sort=True)[list(values)]
    out = g.mean().add_suffix("_mean").join(g.std(ddof=1).add_suffix("_std")).join(g.size().rename("n"))
    return out.reset_index()


def grid_predicates(
    fig9: pd.DataFrame, fig10: pd.DataFrame, fig11: pd.DataFrame, table1: pd.DataFrame
) -> dict:
    """The quantities behind the token-experiment claims of Tian (2023), Sec. 5.1 and App. E.2.

    Inputs are result tables of :func:`nlcl.tian.tokens.grid.train_token_runs` (columns activation, bn,
    beta, P, zeta, seed, chi_plus, chi_minus) for Fig. 9 (InfoNCE), Fig. 10 (quadratic loss),
    Fig. 11 (BN vs none over ζ) and Table 1 (BN variants at ζ = 10); cells are means over seeds.
    Returns a dict:

    * ``p1_linear_minus_relu``: χ̄+(linear) − χ̄+(ReLU) at P = 1 and the smallest β (Fig. 9);
    * ``relu_beats_linear``: fraction of cells with P > 1, β ≥ 2 where ReLU χ̄+ > linear χ̄+;
    * ``relu_beta_span`` / ``linear_beta_span``: χ̄+(β_max) − χ̄+(β_min) averaged over P > 1, for
      ReLU, and its absolute value for linear;
    * ``infonce_minus_quadratic``: ReLU χ̄+ (Fig. 9) minus (Fig. 10), mean over the common cells;
    * ``lowest_chi_minus``: the activation with the lowest grid-mean χ̄− in Fig. 9;
    * ``bn_minus_none_zeta10``: mean over β > 1, P > 1 of χ̄+(vanilla BN) − χ̄+(no BN) at ζ = 10;
    * ``no_var_backprop_wins``: fraction of the (β, P, μ-backprop) comparisons of Table 1 where not
      backpropagating σ² gives χ̄+ ≥ backpropagating it;
    * ``table1_vs_paper``: mean |ours − paper| over the Table 1 cells present (:data:`PAPER_TABLE1`).

    and three quantities that the chapter's not-reproduced explanations make predictions about:

    * ``linear_beta_span_signed``: linear χ̄+(β_max) − χ̄+(β_min) averaged over P > 1, with its sign;
    * ``relu_chi_minus_rank``: ReLU's rank among the activations of Fig. 9 by grid-mean χ̄−
      (1 = lowest; 0 when ReLU is absent);
    * ``table1_minus_paper``: mean (ours − paper) over the Table 1 cells present, with its sign.

    A quantity whose cells are missing is NaN.
    """

    def cell(table, **sel):
        t = table
        for k, v in sel.items():
            t = t[t[k] == v]
        return t.groupby(["beta", "P"]).chi_plus.mean()

    out: dict = {}
    relu9, lin9 = cell(fig9, activation="relu"), cell(fig9, activation="linear")
    common = relu9.index.intersection(lin9.index)
    b_min = min((b for b, _ in common), default=None)
    out["p1_linear_minus_relu"] = (
        float(lin9.loc[(b_min, 1)] - relu9.loc[(b_min, 1)])
        if b_min is not None and (b_min, 1) in common
        else float("nan")
    )
    big = [(b, p) for b, p in common if b >= 2 and p > 1]
    out["relu_beats_linear"] = float(np.mean([relu9[c] > lin9[c] for c in big])) if big else float("nan")

    def beta_span(series, p):
        bs = sorted(b for b, q in common if q == p)
        return float(series.loc[(bs[-1], p)] - series.loc[(bs[0], p)]) if len(bs) >= 2 else float("nan")

    p_big = sorted({p for _, p in common if p > 1})
    spans = [beta_span(relu9, p) for p in p_big]
    out["relu_beta_span"] = (
        float(np.nanmean(spans)) if p_big and not np.all(np.isnan(spans)) else float("nan")
    )
    spans = [beta_span(lin9, p) for p in p_big]
    some = p_big and not np.all(np.isnan(spans))
    out["linear_beta_span"] = float(np.nanmean(np.abs(spans))) if some else float("nan")
    out["linear_beta_span_signed"] = float(np.nanmean(spans)) if some else float("nan")
    relu10 = cell(fig10, activation="relu")
    both = relu10.index.intersection(relu9.index)
    out["infonce_minus_quadratic"] = float((relu9[both] - relu10[both]).mean()) if len(both) else float("nan")
    chi_minus = (
        fig9.groupby("activation").chi_minus.mean().sort_values(kind="stable")
        if len(fig9)
        else pd.Series(dtype=float)
    )
    out["lowest_chi_minus"] = str(chi_minus.index[0]) if len(chi_minus) else ""
    out["relu_chi_minus_rank"] = int(chi_minus.index.get_loc("relu")) + 1 if "relu" in chi_minus.index else 0
    z10 = fig11[fig11.zeta == 10.0]
    bn, nobn = cell(z10, bn="vanilla"), cell(z10, bn="none")
    sel = [c for c in bn.index.intersection(nobn.index) if c[0] > 1 and c[1] > 1]
    out["bn_minus_none_zeta10"] = float((bn[sel] - nobn[sel]).mean()) if sel else float("nan")
    if len(table1):
        m1 = summarize(table1, ["beta", "P", "bn"], values=["chi_plus"]).pivot(
            index=["beta", "P"], columns="bn", values="chi_plus_mean"
        )
        wins = [
            (m1[a] >= m1[b])[m1[a].notna() & m1[b].notna()]
            for a, b in (("detached", "var"), ("mean", "vanilla"))
            if a in m1 and b in m1
        ]
        wins = pd.concat(wins) if wins else pd.Series(dtype=bool)
        out["no_var_backprop_wins"] = float(wins.mean()) if len(wins) else float("nan")
        s1 = summarize(table1, ["beta", "P", "bn"], values=["chi_plus"]).merge(
            paper_table1(), on=["beta", "P", "bn"]
        )
        diff = s1.chi_plus_mean - s1.paper_mean
        out["table1_vs_paper"] = float(diff.abs().mean()) if len(s1) else float("nan")
        out["table1_minus_paper"] = float(diff.mean()) if len(s1) else float("nan")
    else:
        out["no_var_backprop_wins"] = out["table1_vs_paper"] = out["table1_minus_paper"] = float("nan")
    return out


def grid_predicates_per_seed(
    fig9: pd.DataFrame, fig10: pd.DataFrame, fig11: pd.DataFrame, table1: pd.DataFrame
) -> pd.DataFrame:
    """:func:`grid_predicates` on each seed's runs alone: one row per seed, one column per quantity.

    The claims of Tian (2023), Sec. 5 are decided on grids whose cells average the seeds (as the
    paper's Figs. 9-11 and Table 1 do); these one-seed grids show how much each quantity moves
    from seed to seed. The seeds are those present in every non-empty table; an empty table stays
    empty (its quantities are NaN, as in :func:`grid_predicates`).
    """
    tables = (fig9, fig10, fig11, table1)
    present = [set(t["seed"].unique().tolist()) for t in tables if len(t)]
    seeds = sorted(set.intersection(*present)) if present else []
    rows = [grid_predicates(*(t[t["seed"] == s] if len(t) else t for t in tables)) for s in seeds]
    return pd.DataFrame(rows, index=pd.Index(seeds, name="seed"))
