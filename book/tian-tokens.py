# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Two-layer networks on token sequences: specialization, global modulation and BatchNorm (Tian 2023, Sec. 5)
#
# **Overview.** Tian (2023) trains a two-layer network with $K$ disjoint receptive fields (RFs) on
# synthetic token sequences and measures whether the low-layer filters $\mathbf{w}_{km}$ learn the
# tokens that matter. The paper claims that (i) with several relevant tokens per RF ($P>1$) a
# nonlinear (ReLU) network specializes its filters to different tokens and profits from
# over-parameterization $\beta$, while a linear network cannot (Theorem 4); (ii) tokens that are
# not part of any global pattern are *not* learned (global modulation, Theorems 5-6); (iii)
# InfoNCE learns better than the quadratic loss (Corollary 2); and (iv) with strongly non-uniform
# input norms, BatchNorm helps, best when the gradient does not flow through the batch variance
# (App. D, Table 1). This chapter reproduces Figs. 4/9, 10, 11, 5 and Table 1.
#
# **Prerequisites.** Tian 2023, Sec. 4 (two-layer setting), Sec. 5 and App. E.2; the theory is in
# {doc}`tian-two-layer-theory`. The matching scores $\bar\chi_\pm$ are Eqs. 16 and 181.
#
# **Expected run time.** `ci` profile (a reduced grid, 2000 steps, one seed; plus Fig. 5 at 5000
# steps): well under a minute on a 2-core CPU. `full` profile (the paper's grid: 960 runs × 5000
# steps): about 10 minutes on a 2-core CPU with `-p workers 2`. The paper-scale numbers shown below come from the
# committed artifacts `results/tian-tokens-full-*` (the paper's learning rate) and
# `results/tian-tokens-full-lr0.01-*` (the released code's), produced by `nlcl train-grid`
# (or this chapter with `--profile full`).

# %% [markdown]
# ## The task and the network
#
# **Data (Sec. 5, Fig. 3).** $d=20$ tokens with orthogonal embeddings $\mathbf{u}_a$; $K=10$ RFs; in
# each RF $R_k$ a random subset $R_k^g$ of $P$ candidate tokens. $G=40$ generators each fix 5
# random RFs to one of their candidates and leave the others as wildcards. A sample picks a
# generator and fills its wildcards with uniformly random tokens; its positive view is another
# sample of the same generator; the other samples of the batch are negatives. Non-uniformity
# $\zeta$ (App. E.2): half the tokens have $\|\mathbf{u}_a\| = 1/\zeta$, the rest $\zeta$.
#
# **Network.** $M=\beta P$ filters per RF, activation $h$, optional BatchNorm on the $KM$ hidden
# units, a top linear layer $V$ ($d_\text{out}=20$) and an $\ell_2$-normalized output. SGD with
# momentum 0.9, weight decay $5\times10^{-3}$, batch 128, 5000 minibatches, learning rate
# $2\times10^{-3}$ (Sec. 5), temperature $\tau=0.1$ (the released code). Losses: InfoNCE (Eq. 1
# with $\epsilon=1$, the released code's cross-entropy) and the quadratic loss (uniform $\alpha$).
#
# **Engine.** On token data every quantity the network computes at RF $k$ depends only on the
# token there, so `nlcl.tian.tokens.tables.token_step` computes the loss and its exact gradients on per-RF
# token tables (BatchNorm moments are count-weighted table sums) instead of per sample: the same
# numbers up to rounding (unit-tested against autograd for every activation, BatchNorm variant
# and loss), while the top layer's work shrinks by the factor $2N/d = 256/20 \approx 13$.
#
# **Scores (Eqs. 16, 181).** $\chi_+(R_k)$ averages over $a\in R_k^g$ the best cosine between a filter
# and $\mathbf{u}_a$; $\chi_-(R_k)$ the same over $a\notin R_k^g$ (we average over the $d-P$ such
# tokens, where Eq. 181 prints a $1/P$ prefactor); $\bar\chi_\pm$ average over RFs. For linear $h$
# we use $|\cos|$. $R_k^g$ counts the candidates that some generator actually uses. The released
# code divides by a slightly different normaliser; "Which scoring" below compares the two.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (reduced grid, minutes on CPU) or "full" (the paper's grid)
seed: int = 0  # base seed: runs use seeds seed, seed+1, ...
device: str = "auto"  # "auto", "cpu" or "cuda"
lr: float = 2e-3  # SGD learning rate (paper: 2e-3)
tau: float = 0.1  # InfoNCE / quadratic temperature (released code: 0.1)
steps: int | None = None  # minibatches per run; None takes the profile's size (paper: 5000)
n_seeds: int | None = None  # seeds per grid cell; None takes the profile's size (paper: 3)
betas: list | None = None  # over-parameterizations β; None takes the profile's list
Ps: list | None = None  # candidates per RF P; None takes the profile's list
zetas: list | None = None  # non-uniformities ζ of Fig. 11; None takes the profile's list
fig5_steps: int | None = None  # minibatches for the Fig. 5 weights; None takes the profile's size
curve_seeds: int | None = None  # seeds of the training-curve runs; None takes the profile's size
workers: int = 1  # CPU processes for the live grid (e.g. the number of cores for the full profile)

# %%
import nlcl

run = nlcl.start(
    "tian-tokens",
    globals(),
    spec={
        "lr": {"range": [1e-6, 10.0], "paper": 2e-3},
        "tau": {"range": [0.01, 100.0], "paper": 0.1},
        "steps": {"range": [1, 1_000_000], "ci": 2000, "full": 5000},
        "n_seeds": {"range": [1, 100], "ci": 1, "full": 3},
        "betas": {
            "length": [1, 20],
            "items": {"type": "int", "range": [1, 1000]},
            "ci": [1, 5],
            "full": [1, 2, 5, 10],
        },
        "Ps": {
            "length": [1, 20],
            "items": {"type": "int", "range": [1, 100]},
            "ci": [1, 3],
            "full": [1, 3, 5, 10],
        },
        "zetas": {
            "length": [1, 20],
            "items": {"type": "float", "range": [0.01, 1000.0]},
            "ci": [10.0],
            "full": [2.0, 5.0, 10.0],
        },
        "fig5_steps": {"range": [1, 1_000_000], "ci": 5000, "full": 5000},
        "curve_seeds": {"range": [1, 100], "ci": 3, "full": 5},
        "workers": {"range": [1, 256]},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from nlcl.harness import results
from nlcl.harness.claims import NotReproduced, Revision, at_least, at_most, exactly, greater_than, is_true
from nlcl.harness.verdicts import is_finite
from nlcl.tian.plots import plot_beta_curves, plot_filters
from nlcl.tian.rf_network import ACTIVATIONS_2LAYER
from nlcl.tian.tokens.grid import (
    TokenRun,
    grid_parameters,
    paper_grid,
    runs_from_table,
    train_token_runs,
)
from nlcl.tian.tokens.metrics import grid_predicates, grid_predicates_per_seed, paper_table1, summarize
from nlcl.tian.tokens.world import make_token_worlds

seeds = [seed + i for i in range(P.n_seeds)]
FIGURES = ("fig9", "fig10", "fig11", "table1")

# %% [markdown]
# ## What the paper predicts, and our tolerances
#
# Declared before anything is trained. Each claim is evaluated on the **paper-scale** results
# (the committed full-profile artifact, or this run when it is itself the full profile); the live
# `ci` run below only illustrates the trends. A claim is *required* when those results are in the
# paper's setting (learning rate $2\times10^{-3}$, $\tau=0.1$, 5000 steps, the full
# $\beta\times P$ grid, the paper's 3 seeds or more); otherwise it is reported but not required.
#
# 1. **P = 1** (Fig. 9): linear is at least as good as ReLU at $\beta=1$:
#    $\bar\chi_+^\text{lin}-\bar\chi_+^\text{ReLU} \ge -0.05$.
# 2. **P > 1, β ≥ 2**: ReLU $\bar\chi_+$ > linear $\bar\chi_+$ in at least 75% of those cells.
# 3. ReLU $\bar\chi_+$ grows with $\beta$ for $P>1$: $\bar\chi_+(\beta_\max)-\bar\chi_+(\beta_\min)$,
#    averaged over $P>1$, is $\ge 0.1$; linear is nearly flat: the same difference in absolute
#    value is $\le 0.1$. (ReLU's growth is informational since 2026-11-26: see below.)
# 4. InfoNCE ≥ quadratic for ReLU, $\bar\chi_+$ averaged over the grid (difference $\ge 0$).
# 5. ReLU has the lowest grid-averaged $\bar\chi_-$ of the five activations.
# 6. At $\zeta=10$ BatchNorm beats no BatchNorm for $\beta>1$, $P>1$: mean $\bar\chi_+$ difference $>0$.
# 7. Table 1: not backpropagating $\sigma^2$ is at least as good as backpropagating it in more
#    than half of the $(\beta, P, \mu\text{-backprop})$ comparisons.
# 8. (Informational, not required.) Our Table 1 is within 0.15 of the paper's, mean absolute
#    difference over the cells present (64 for the full grid).
#
# **Seeds.** Each predicate is decided, as the paper's figures are drawn, on cells that average
# the seeds (3 at paper scale). The same quantity computed on each seed's grid alone is recorded
# beside it (added after the grids had been seen; it changes no verdict): the spread over seeds,
# the fraction of seeds on which the predicate holds, and a flag where the margin between the
# decided value and the threshold is smaller than the seed spread (a verdict that more seeds
# could flip). See "Seed spread of the grid claims" below. With 3 seeds the committed grids showed
# three such margins: at $\eta=10^{-2}$ `tokens-lr0.01-relu-grows-with-beta` (0.105 against 0.1,
# std 0.020) and `tokens-lr0.01-bn-helps-at-zeta10` (0.007 against 0, std 0.019, holding on 1 of 3
# seeds), at $\eta=2\times10^{-3}$ `tokens-infonce-beats-quadratic` (−0.012 against 0, std 0.011,
# holding on 1 of 3 seeds). So two more seeds (3 and 4) of every figure were trained at both rates
# afterwards (`results/tian-tokens-full-seeds3-4-*`, `results/tian-tokens-full-lr0.01-seeds3-4-*`),
# and the claims are decided on all five, in both profiles (the full profile trains seeds 0–2 live
# and joins the committed seeds 3–4); predicates and thresholds are unchanged.
#
# **Learning-rate sensitivity.** The paper states $\eta=2\times10^{-3}$; its released code uses
# $10^{-2}$. We evaluate the same eight predicates, with the same tolerances, on a second
# paper-scale grid trained at $\eta=10^{-2}$ (claims `tokens-lr0.01-*`). They are informational:
# the paper's stated setting is the one the required claims test.
#
# **Where the verdicts come from.** At $\eta = 2\times10^{-3}$ (`tokens-*`) the tables the claims
# are measured on are, in this run, {glue:text}`tokens-computed-main`. The `tokens-lr0.01-*`
# verdicts are read in both profiles from the committed
# `results/tian-tokens-full-lr0.01-<figure>.json` (seeds 0–2) and
# `results/tian-tokens-full-lr0.01-seeds3-4-<figure>.json` (seeds 3–4): no profile retrains that grid.
# A verdict read from a committed artifact cannot change with this run's `seed`; each claim's record
# says which (`computed`), and the claims table at the end shows it.
#
# **Not-reproduced explanations.** Where a claim fails, its explanation (written after the
# committed grids had been seen) covers the failure only if a prediction it makes about the same
# results holds. Those that blame the unconverged filters at $\eta = 2\times10^{-3}$ bet that the
# claim's own predicate holds on the same grid at $\eta=10^{-2}$ (filters that learn five times
# faster), some also on the shape of the failure; the one for the lowest $\bar\chi_-$ bets on how
# the activations rank. The predictions are tested on diagnostics measured before the claim; those
# at $\eta=10^{-2}$ are read from the committed grid. The values at $\eta=10^{-2}$ had been seen
# (they are the `tokens-lr0.01-*` claims) when the predictions were written: the bet on them is one
# rule for every such explanation, not a threshold chosen per claim. By that rule the explanation of
# ReLU's growth with $\beta$ fails: the claim does not hold at $\eta=10^{-2}$ either
# ({glue:text}`tokens-lr0.01-relu-grows-with-beta` against 0.1), and no other explanation of its
# failure predicts anything we can measure, so `tokens-relu-grows-with-beta` is informational since
# 2026-11-26 (its revision says why) and is recorded as failed.

# %%
GRID_KEYS = ["activation", "loss", "bn", "beta", "P", "zeta", "seed"]
SENSITIVITY_LR = 1e-2


# Grids whose claims have margins smaller than their seed spread got more seeds, trained later
# into an artifact of their own (`nlcl train-grid --seeds 3 4 --prefix <prefix>-seeds3-4`) and
# combined with the original seeds here ("Seed spread of the grid claims" below says why).
EXTRA_SEEDS = {
    "tian-tokens-full": "tian-tokens-full-seeds3-4",
    "tian-tokens-full-lr0.01": "tian-tokens-full-lr0.01-seeds3-4",
}


def load_one(name, fig, lr, steps=5000):
    """The artifact ``name`` if it was trained at ``lr`` for ``steps`` on the paper's grid (any seeds)."""
    stored_seeds = results.load(name).meta["parameters"]["seeds"]
    return results.load(name, params={**grid_parameters(steps, lr, stored_seeds), "figure": fig})


def load_artifact(prefix, fig, lr):
    """The committed artifact ``<prefix>-<fig>`` trained at ``lr`` (any completed seeds, plus the
    extra seeds of ``EXTRA_SEEDS`` when present), or None."""
    try:
        art = load_one(f"{prefix}-{fig}", fig, lr)
    except (FileNotFoundError, results.ArtifactMismatch) as err:
        print(f"{prefix}-{fig}: no usable artifact ({str(err)[:160]})")
        return None
    if prefix in EXTRA_SEEDS:
        try:
            art = results.concat_seeds([art, load_one(f"{EXTRA_SEEDS[prefix]}-{fig}", fig, lr)])
        except (FileNotFoundError, results.ArtifactMismatch) as err:
            print(f"{EXTRA_SEEDS[prefix]}-{fig}: extra seeds not used ({str(err)[:160]})")
    return art


artifacts = (
    {fig: load_artifact("tian-tokens-full", fig, P.lr) for fig in FIGURES}
    if run.profile == "ci"
    else {fig: None for fig in FIGURES}
)
sens_artifacts = {fig: load_artifact("tian-tokens-full-lr0.01", fig, SENSITIVITY_LR) for fig in FIGURES}
paper_setting_params = run.paper_setting


def load_extra_for_live(fig):
    """In the full profile, the committed extra seeds trained with this run's settings, or None."""
    name = f"{EXTRA_SEEDS['tian-tokens-full']}-{fig}"
    try:
        extra = load_one(name, fig, P.lr, P.steps)
    except (FileNotFoundError, results.ArtifactMismatch) as err:
        print(f"{name}: extra seeds not used ({str(err)[:160]})")
        return None
    stored_seeds = extra.meta["parameters"]["seeds"]
    if set(stored_seeds) & set(seeds):
        print(f"{name}: extra seeds {stored_seeds} overlap this run's seeds {seeds}: not used")
        return None
    return extra


extra_live = {fig: load_extra_for_live(fig) if run.profile == "full" else None for fig in FIGURES}


def is_complete(table, fig, lr):
    """True when a result table holds every run of the paper's grid for ``fig`` at ``lr``."""
    full = paper_grid([fig], lr=lr, tau=P.tau)
    have = set(map(tuple, table[GRID_KEYS].astype(str).values))
    return all(tuple(r) in have for r in full[GRID_KEYS].astype(str).values)


# Which results the claims use: the live run in the full profile, else the artifact if present.
claim_source = {fig: ("artifact" if artifacts[fig] is not None else "live") for fig in FIGURES}
required = {
    fig: paper_setting_params
    and (
        (artifacts[fig] is not None and is_complete(artifacts[fig].table, fig, P.lr)) or run.profile == "full"
    )
    for fig in FIGURES
}


def describe(art, fig, short=False):
    """Where results come from, with their extent (a partial artifact says so)."""
    if art is None:
        return f"live {run.profile} run"
    t = art.table
    n_full = len(paper_grid([fig], seeds=art.meta["parameters"]["seeds"]))
    extent = "complete" if len(t) == n_full else f"PARTIAL, {len(t)} of {n_full} runs"
    lr_text = f"η = {art.meta['parameters']['lr']:g}"
    if short:
        return f"full-profile artifact, {lr_text} ({extent}, seeds {sorted(t.seed.unique().tolist())})"
    return f"full-profile artifact, {lr_text}, {extent} ({art.label()}; seeds {sorted(t.seed.unique().tolist())})"


def src(fig):
    if claim_source[fig] == "artifact":
        return describe(artifacts[fig], fig)
    if extra_live[fig] is not None:
        return (
            f"live {run.profile} run, η = {P.lr:g}, seeds {seeds}, with the extra seeds "
            f"{extra_live[fig].meta['parameters']['seeds']} of {EXTRA_SEEDS['tian-tokens-full']}-{fig} "
            f"({extra_live[fig].label()})"
        )
    return f"live {run.profile} run, η = {P.lr:g}"


run.glue("tokens-artifact-fig9", describe(artifacts["fig9"], "fig9", short=True))

# (id, key of nlcl.tian.tokens.metrics.grid_predicates, source, statement, check, the paper's words, figure)
CLAIMS = [
    (
        "p1-linear-vs-relu",
        "p1_linear_minus_relu",
        "Tian 2023, Sec. 5.1 / Fig. 4, 9",
        "P = 1, β = 1, InfoNCE: χ̄+(linear) − χ̄+(ReLU)",
        at_least(-0.05),
        "linear works well at P = 1",
        "fig9",
    ),
    (
        "relu-beats-linear",
        "relu_beats_linear",
        "Tian 2023, Sec. 5.1 / Fig. 4, 9",
        "Fraction of cells with P > 1, β ≥ 2 where ReLU χ̄+ > linear χ̄+",
        at_least(0.75),
        "ReLU better for P > 1, β > 1",
        "fig9",
    ),
    (
        "relu-grows-with-beta",
        "relu_beta_span",
        "Tian 2023, Sec. 5.1 / Fig. 4",
        "ReLU: χ̄+(β_max) − χ̄+(β_min), mean over P > 1",
        at_least(0.1),
        "the larger β, the better χ̄+",
        "fig9",
    ),
    (
        "linear-flat-in-beta",
        "linear_beta_span",
        "Tian 2023, Sec. 5.1 / Fig. 4",
        "Linear: |χ̄+(β_max) − χ̄+(β_min)|, mean over P > 1",
        at_most(0.1),
        "linear barely affected by β",
        "fig9",
    ),
    (
        "infonce-beats-quadratic",
        "infonce_minus_quadratic",
        "Tian 2023, Sec. 5.1 / Fig. 4, 10",
        "ReLU: χ̄+ with InfoNCE minus with the quadratic loss, mean over β×P cells",
        at_least(0.0),
        "quadratic loss not as effective",
        "fig10",
    ),
    (
        "relu-lowest-chi-minus",
        "lowest_chi_minus",
        "Tian 2023, App. E.2 / Fig. 9",
        "The activation with the lowest grid-mean χ̄− under InfoNCE",
        exactly("relu"),
        "ReLU lowest χ̄−",
        "fig9",
    ),
    (
        "bn-helps-at-zeta10",
        "bn_minus_none_zeta10",
        "Tian 2023, App. E.2 / Fig. 11",
        "ζ = 10, ReLU: mean over β > 1, P > 1 of χ̄+(BN) − χ̄+(no BN)",
        greater_than(0.0),
        "BN better at large ζ, β > 1, P > 1",
        "fig11",
    ),
    (
        "table1-no-var-backprop",
        "no_var_backprop_wins",
        "Tian 2023, App. E.2 / Table 1",
        "Fraction of (β, P, μ) comparisons where σ² not backpropagated ≥ backpropagated",
        greater_than(0.5),
        "σ² no-backprop better",
        "table1",
    ),
    (
        "table1-vs-paper",
        "table1_vs_paper",
        "Tian 2023, Table 1",
        "Mean |ours − paper| over the Table 1 cells present",
        at_most(0.15),
        "Table 1",
        "table1",
    ),
]
# The figures each claim's quantity reads (nlcl.tian.tokens.metrics.grid_predicates).
NEEDS = {cid: {fig} for cid, _, _, _, _, _, fig in CLAIMS}
NEEDS["infonce-beats-quadratic"] = {"fig9", "fig10"}
INFORMATIONAL = {"table1-vs-paper"}
UNCONV = (
    "at the paper's stated η = 2e-3, 5000 minibatches leave the filters far from converged: the Fig. 5 "
    "section shows the β = 5, P = 3 filters still close to their initialization; the training-curves "
    "section shows their χ̄+ still creeping up at the end of training, far below the level the same runs "
    "reach at η = 1e-2, although the training loss has levelled off at about the same value at both rates "
    "(so it is the filters, not the loss, that have not converged); and the same grid at the released "
    "code's η = 1e-2 reaches much higher χ̄+ (compare the claim tokens-lr0.01-* of the same name)"
)
# The explanations below were written after the committed grids had been seen; the predicates
# and tolerances above were declared before any token run and have not changed. Each explanation
# bets on something else the same results show (issue 26): it covers a failure only where that
# bet holds, tested on diagnostics measured before the claim ("Measuring the claims").
SLOW = (
    "a plausible mechanism is the top layer's initialization scale 1/√(KM): each filter's gradient is "
    "proportional to its top-layer weights, so at a fixed η and step budget a larger β learns more slowly"
)
FASTER = "the same grid at η = 1e-2 (five times the rate, the same 5000 minibatches)"
# Per explanation: its text, and its prediction as (quantity of grid_predicates, on which grid, the
# test, in words). "own": the grid the claim is measured on; "fast": the same grid at η = 1e-2, where
# every explanation that blames the unconverged filters bets that the claim's own predicate holds
# (test None); "measured": the claim's own value. A test takes the diagnostic's value and the claim's.
EXPLAINED = {
    "linear-flat-in-beta": (
        "Linear χ̄+ falls with β (Fig. 9, linear panel) instead of staying flat: "
        + UNCONV
        + "; the Theorem 4 argument is about fixed points, which these runs have not reached, and "
        + SLOW
        + ". Prediction: the change across β here is a fall (the signed χ̄+(β_max) − χ̄+(β_min), mean over "
        "P > 1, is negative: the larger networks lag), and on " + FASTER + ", closer to the fixed points, "
        "this claim holds (linear flat within 0.1).",
        [
            ("linear_beta_span_signed", "own", lambda v, m: v < 0, "< 0"),
            ("linear_beta_span", "fast", None, ""),
        ],
    ),
    "infonce-beats-quadratic": (
        "Averaged over the β×P cells, ReLU's χ̄+ is about the same with both losses (Figs. 9 "
        "and 10): InfoNCE is ahead at β = 1 and behind at large β; " + UNCONV + ". Prediction: here "
        "the difference is small (≥ −0.05, the tolerance this chapter gives 'at least as good' at P = 1), "
        "and on " + FASTER + ", where the filters do learn, this claim holds (InfoNCE ahead).",
        [
            ("infonce_minus_quadratic", "measured", lambda v, m: m >= -0.05, "≥ −0.05 (this claim's value)"),
            ("infonce_minus_quadratic", "fast", None, ""),
        ],
    ),
    "relu-lowest-chi-minus": (
        "The one activation below ReLU in grid-mean χ̄− is LeakyReLU(0.05) (Fig. 9, bottom row), ReLU's "
        "near-twin: it differs only by the slope 0.05 on negative inputs, and the paper reports the same "
        "trends for it. Below ReLU by a small margin, it is the only difference from the paper's ordering "
        "that these runs show. Prediction: the lowest is LeakyReLU and ReLU ranks second of the five; a "
        "failure to linear, x² or sigmoid is not covered. (An earlier version also blamed the unconverged "
        "filters; at η = 1e-2 ReLU is not the lowest either, so that part predicted nothing that held and "
        "was dropped.)",
        [
            (
                "lowest_chi_minus",
                "measured",
                lambda v, m: m == "leaky_relu",
                "= leaky_relu (this claim's value)",
            ),
            ("relu_chi_minus_rank", "own", lambda v, m: v == 2, "= 2"),
        ],
    ),
    "bn-helps-at-zeta10": (
        "Vanilla BN gives a lower χ̄+ than no BN in most ζ = 10 cells with β > 1, P > 1 (Fig. 11). "
        "We have not identified the cause; " + UNCONV + ", so this grid does not test the converged "
        "behaviour the paper reports. Prediction: on " + FASTER + " this claim holds (BatchNorm helps).",
        [("bn_minus_none_zeta10", "fast", None, "")],
    ),
    "table1-vs-paper": (
        "Our χ̄+ at ζ = 10 stay closer to their random-initialization level than the paper's: "
        + UNCONV
        + ". Prediction: ours lie below the paper's (mean of ours − paper < 0), and on "
        + FASTER
        + " this claim holds (our Table 1 within 0.15 of the paper's).",
        [("table1_minus_paper", "own", lambda v, m: v < 0, "< 0"), ("table1_vs_paper", "fast", None, "")],
    ),
}
CHECKS = {cid: check for cid, _, _, _, check, _, _ in CLAIMS}
# relu-grows-with-beta had the explanation of the unconverged filters, with SLOW; its prediction (this
# claim holds at η = 1e-2) does not hold there, and no other explanation of its failure predicts
# anything measurable: it is informational since 2026-11-26 (issue 26), and fails.
INFORMATIONAL |= {"relu-grows-with-beta"}
REVISED = {
    "relu-grows-with-beta": [
        Revision(
            from_="required",
            to="informational",
            reason="its not-reproduced explanation (filters unconverged at η = 2e-3, larger β learning more "
            "slowly) predicted that the claim holds on the same grid at η = 1e-2, where it measures 0.095 "
            "against 0.1 (5 seeds; 0.105 with seeds 0-2); no explanation of its failure predicts anything "
            "measurable that holds, so the failure at the paper's setting is recorded as a failure",
            date="2026-11-26",
        )
    ]
}
# At η = 1e-2 no explanation is given: the one claim that is not reproduced there,
# relu-lowest-chi-minus, is discussed under "Which scoring" (the |cos| re-scoring explains x²'s place
# below ReLU, not linear's), and the others fail without one.

# The explanations describe the paper-scale grids, which both profiles evaluate (ci reads the
# committed full-profile artifacts, full trains them): they apply in both.
GRID_EVIDENCE = (
    "the paper-scale grids (Figs. 9-11, Table 1 below), the Fig. 5 filters and the training curves"
)


def diagnostic_name(tag, key):
    """The name under which a grid's quantity is given to run.diagnostic, e.g. tokens-lr0.01-relu-beta-span."""
    return f"tokens-{tag + '-' if tag else ''}{key.replace('_', '-')}"


def bet_holds(cid, grid, test, value, measured):
    """Whether one bet of claim ``cid``'s explanation holds: ``test(value, measured)``, or for a bet
    on η = 1e-2 without a test, the claim's own check on ``value``; False when ``value`` is missing."""
    if grid == "measured":
        return bool(test(None, measured))
    if value is None:
        return False
    return bool(CHECKS[cid](value) if test is None else test(value, measured))


def bet_words(cid, grid, words):
    """What a bet predicts, in words (a bet on η = 1e-2 without a test: the claim's check)."""
    return f"{CHECKS[cid].description} (this claim's check)" if grid == "fast" and not words else words


def grid_explanation(cid, own, fast):
    """The explanation of claim ``cid`` (None if it has none), its prediction read from the diagnostics
    of the grid tags ``own`` (the claim's grid) and ``fast`` (the same grid at η = 1e-2)."""
    if cid not in EXPLAINED:
        return None
    why, bets = EXPLAINED[cid]
    tags = {"own": own, "fast": fast}
    names = [diagnostic_name(tags[grid], key) for key, grid, _, _ in bets if grid != "measured"]

    def expected(m):
        diagnostics = run.registry.diagnostics
        return all(
            bet_holds(cid, grid, test, diagnostics.get(diagnostic_name(tags.get(grid), key)), m)
            for key, grid, test, _ in bets
        )

    return NotReproduced(
        why, profiles=("ci", "full"), evidence=GRID_EVIDENCE, expected=expected, diagnostics=tuple(names)
    )


claims = {}
for cid, _key, source, statement, check, paper, fig in CLAIMS:
    claims[cid] = run.expect(
        f"tokens-{cid}",
        source=source,
        statement=f"{statement} ({src(fig)}).",
        check=check,
        paper=paper,
        required=required[fig] and cid not in INFORMATIONAL,
        not_reproduced=grid_explanation(cid, "", "lr0.01"),
        revised=REVISED.get(cid, ()),
    )
sens_claims = {}
for cid, _key, source, statement, check, paper, fig in CLAIMS:
    sens_claims[cid] = run.expect(
        f"tokens-lr0.01-{cid}",
        source=source,
        statement=f"{statement} ({describe(sens_artifacts[fig], fig)}).",
        check=check,
        paper=f"{paper} (the paper's setting is η = 2e-3)",
        required=False,
    )

# %% [markdown]
# ## The live run
#
# `nlcl.tian.tokens.training.paper_grid` lists the runs of the four experiments; `train_token_runs` trains
# them in stacks of equal $M$, each stack one vectorized computation over its runs (different
# activations, losses, BatchNorm variants, $P$, $\zeta$ and seeds side by side). A run's data and
# initialization depend only on its own seed, so the stacking changes the results only through
# float rounding (which a few sigmoid runs amplify over 5000 steps: re-trained in other stacks,
# 2 of the 240 Fig. 9 runs end at a visibly different $\bar\chi_+$).

# %%
grid = paper_grid(FIGURES, seeds=seeds, betas=P.betas, Ps=P.Ps, zetas=P.zetas, lr=P.lr, tau=P.tau)
live = train_token_runs(runs_from_table(grid), P.steps, device=run.device, workers=P.workers)
live_table = grid[["figure"]].join(live.table)
run.glue("tokens-live-runs", len(live_table))
run.glue("tokens-live-wall", round(live.wall_s, 1))
run.glue("tokens-live-rate", round(live.run_steps_per_s))
print(
    f"{len(live_table)} runs x {P.steps} steps in {live.wall_s:.1f} s "
    f"({live.run_steps_per_s:.0f} run-steps/s on {run.device_name})"
)
if run.profile == "full":
    for fig in FIGURES:
        results.save(
            f"tian-tokens-full-{fig}",
            live_table[live_table.figure == fig].reset_index(drop=True),
            params={**grid_parameters(P.steps, P.lr, seeds), "figure": fig},
            profile="full",
            device=run.device_name,
            notes=(
                f"{'complete' if is_complete(live_table[live_table.figure == fig], fig, P.lr) else 'PARTIAL'}"
                " grid, written by book/tian-tokens.py --profile full"
            ),
        )


def table_for(fig):
    """The table the claims use for ``fig``: the artifact when present, else the live run (in the
    full profile joined by the committed extra seeds, as the ci profile joins them to the artifact)."""
    if claim_source[fig] == "artifact":
        return artifacts[fig].table
    own = live_table[live_table.figure == fig].reset_index(drop=True)
    if extra_live[fig] is None:
        return own
    extra = extra_live[fig].table
    common = [c for c in own.columns if c in extra.columns]
    return pd.concat([own[common], extra[common]], ignore_index=True)


# %% [markdown]
# The live run: {glue:text}`tokens-live-runs` runs in {glue:text}`tokens-live-wall` s
# ({glue:text}`tokens-live-rate` run-steps per second).
#
# ## Figure 9 (Fig. 4, top row): InfoNCE, five activations
#
# $\bar\chi_+$ (top) and $\bar\chi_-$ (bottom) against $\beta$, one line per $P$, mean ± std over
# seeds; sigmoid is the non-homogeneous control. First the live run, then (in the `ci` profile)
# the paper-scale artifact.

# %%
ACT_LABEL = {
    "linear": "linear",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU(0.05)",
    "quadratic": "quadratic $x^2$",
    "sigmoid": "sigmoid (control)",
}


def show_fig(table, fig, panel, label, title):
    sub = table[table.figure == fig] if "figure" in table else table
    s = summarize(sub, [panel, "beta", "P"])
    order = {v: i for i, v in enumerate(ACTIVATIONS_2LAYER + ("none", "vanilla"))}
    s = s.sort_values([panel, "beta", "P"], key=lambda c: c.map(order) if c.name == panel else c)
    plot_beta_curves(s, panel, title=title.replace(" — ", "\n"), panel_label=label)
    plt.show()


show_fig(live_table, "fig9", "activation", ACT_LABEL.get, f"Fig. 9, InfoNCE — live {run.profile} run")
if artifacts["fig9"] is not None:
    show_fig(
        artifacts["fig9"].table,
        "fig9",
        "activation",
        ACT_LABEL.get,
        f"Fig. 9, InfoNCE — {describe(artifacts['fig9'], 'fig9', short=True)}",
    )

# %% [markdown]
# ## Figure 10: the quadratic loss

# %%
show_fig(
    live_table, "fig10", "activation", ACT_LABEL.get, f"Fig. 10, quadratic loss — live {run.profile} run"
)
if artifacts["fig10"] is not None:
    show_fig(
        artifacts["fig10"].table,
        "fig10",
        "activation",
        ACT_LABEL.get,
        f"Fig. 10, quadratic loss — {describe(artifacts['fig10'], 'fig10', short=True)}",
    )

# %% [markdown]
# ## Figure 11: BatchNorm under non-uniformity ζ (ReLU, InfoNCE)
#
# One column per $(\zeta, \text{BN})$; "vanilla" BatchNorm backpropagates through both batch
# statistics.


# %%
def show_fig11(table, title):
    t = table[table.figure == "fig11"].copy() if "figure" in table else table.copy()
    t["setting"] = [f"ζ = {z:g}, " + ("BN" if b == "vanilla" else "no BN") for z, b in zip(t.zeta, t.bn)]
    t = t.sort_values(["zeta", "bn"], ascending=[True, False])
    s = summarize(t, ["setting", "beta", "P"])
    s["key"] = s.setting.map({v: i for i, v in enumerate(dict.fromkeys(t.setting))})
    plot_beta_curves(
        s.sort_values(["key", "beta", "P"]).drop(columns="key"), "setting", title=title.replace(" — ", "\n")
    )
    plt.show()


show_fig11(live_table, f"Fig. 11 — live {run.profile} run")
if artifacts["fig11"] is not None:
    show_fig11(artifacts["fig11"].table, f"Fig. 11 — {describe(artifacts['fig11'], 'fig11', short=True)}")

# %% [markdown]
# ## Table 1: which BatchNorm statistics to backpropagate (ζ = 10)
#
# Columns: backprop through $\mu_k$ (yes/no) × through $\sigma_k^2$ (yes/no). Each cell shows our
# mean ± std, the paper's value, and the difference (ours − paper).

# %%
VARIANT = {
    "detached": "μ no / σ² no",
    "var": "μ no / σ² yes",
    "mean": "μ yes / σ² no",
    "vanilla": "μ yes / σ² yes",
}


def table1(table):
    t = table[table.figure == "table1"] if "figure" in table else table
    s = summarize(t, ["beta", "P", "bn"], values=["chi_plus"])
    s = s.merge(paper_table1(), on=["beta", "P", "bn"], how="left")
    s["diff"] = s.chi_plus_mean - s.paper_mean
    s["cell"] = [
        f"{m:.2f}{' (1 seed)' if np.isnan(sd) else f' ± {sd:.2f}'} (paper {pm:.2f}, {d:+.2f})"
        for m, sd, pm, d in zip(s.chi_plus_mean, s.chi_plus_std, s.paper_mean, s["diff"])
    ]
    wide = s.pivot(index=["beta", "P"], columns="bn", values="cell")[list(VARIANT)].rename(columns=VARIANT)
    return s, wide


live_t1, live_t1_wide = table1(live_table)
print(f"Table 1 — live {run.profile} run")
display(live_t1_wide)
if artifacts["table1"] is not None:
    art_t1, art_t1_wide = table1(artifacts["table1"].table)
    print(f"Table 1 — {describe(artifacts['table1'], 'table1')}")
    display(art_t1_wide)

# %% [markdown]
# ## Figure 5: the learned filters at P = 3, β = 5, and the learning rate
#
# One heat map per RF (rows: the $M=15$ filters, columns: the 20 tokens; ticks mark $R_k^g$; each
# filter scaled to unit max-abs), ReLU and linear with the same seed and data, InfoNCE, trained for
# {glue:text}`tokens-fig5-steps` minibatches. The paper states $\eta = 2\times10^{-3}$; its released
# configuration uses $10^{-2}$, so we train both and show both (the first seed of the training-curve runs
# below: one stack).

# %%
fig5_lrs = list(dict.fromkeys([P.lr, SENSITIVITY_LR]))
curve_seed_list = [seed + i for i in range(P.curve_seeds)]
curve_runs = [
    TokenRun(a, beta=5, P=3, seed=s, lr=l, tau=P.tau)
    for l in fig5_lrs
    for a in ("relu", "linear")
    for s in curve_seed_list
]
fig5_index = [i for i, r in enumerate(curve_runs) if r.seed == seed]  # Fig. 5 shows the first seed
CURVE_EVERY = max(1, P.fig5_steps // 50)
fig5 = train_token_runs(
    curve_runs,
    P.fig5_steps,
    device=run.device,
    keep_weights=fig5_index,
    record_every=CURVE_EVERY,
)
world5 = make_token_worlds([seed], 3)
run.glue("tokens-fig5-steps", P.fig5_steps)
for tag, lr_value in (("lr1", P.lr), ("lr2", SENSITIVITY_LR)):
    for act_name in ("relu", "linear"):
        row = fig5.table[
            (fig5.table.activation == act_name) & (fig5.table.lr == lr_value) & (fig5.table.seed == seed)
        ].iloc[0]
        run.glue(f"tokens-fig5-{act_name}-{tag}-chi-plus", round(float(row.chi_plus), 3))
        run.glue(f"tokens-fig5-{act_name}-{tag}-chi-minus", round(float(row.chi_minus), 3))
run.glue("tokens-fig5-lr1", f"{P.lr:g}")
for i in fig5_index:
    r, row = curve_runs[i], fig5.table.iloc[i]
    name = {"relu": "ReLU", "linear": "linear"}[r.activation]
    plot_filters(
        fig5.weights[i],
        world5.relevant[0],
        title=f"Fig. 5, {name}, η = {r.lr:g}: χ̄+ = {row.chi_plus:.2f}, χ̄− = {row.chi_minus:.2f}",
    )
    plt.show()
display(fig5.table.iloc[fig5_index][["activation", "lr", "chi_plus", "chi_minus"]].round(3))

# %% [markdown]
# With this run's $\eta =$ {glue:text}`tokens-fig5-lr1` (the paper's $2\times10^{-3}$ by default): ReLU
# $\bar\chi_+ =$ {glue:text}`tokens-fig5-relu-lr1-chi-plus` ($\bar\chi_- =$
# {glue:text}`tokens-fig5-relu-lr1-chi-minus`), linear $\bar\chi_+ =$ {glue:text}`tokens-fig5-linear-lr1-chi-plus`.
# With $\eta = 10^{-2}$: ReLU $\bar\chi_+ =$ {glue:text}`tokens-fig5-relu-lr2-chi-plus` ($\bar\chi_- =$
# {glue:text}`tokens-fig5-relu-lr2-chi-minus`), linear $\bar\chi_+ =$ {glue:text}`tokens-fig5-linear-lr2-chi-plus`.
#
# ## Training curves: how far 5000 minibatches get at each learning rate
#
# The chapter's central finding is that the paper's grid matches the released code's
# $\eta = 10^{-2}$ rather than the printed $2\times10^{-3}$, because 5000 minibatches at the smaller
# rate leave the networks unconverged. The evidence: the runs of Fig. 5 ($\beta = 5$, $P = 3$,
# $\zeta = 1$, InfoNCE, no BN), for {glue:text}`tokens-curve-seeds` seeds, with the training loss
# (mean over the minibatches since the previous record) and $\bar\chi_\pm$ recorded every
# {glue:text}`tokens-curve-every` minibatches. Step 0 is the untrained network: its $\bar\chi_+$ is the
# level random filters reach by chance (dashed line). Lines: mean over seeds; bands: ± 1 std.

# %%
curves = fig5.curves.merge(
    fig5.table[["activation", "lr", "seed"]], left_on="run", right_index=True, validate="many_to_one"
)
curves["η"] = curves.lr.map(lambda v: f"{v:g}")
curves["activation"] = curves.activation.map({"relu": "ReLU", "linear": "linear"})
run.glue("tokens-curve-seeds", P.curve_seeds)
run.glue("tokens-curve-every", CURVE_EVERY)
fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
for ax, col, label in zip(
    axes, ("loss", "chi_plus", "chi_minus"), ("training loss (InfoNCE)", r"$\bar\chi_+$", r"$\bar\chi_-$")
):
    sns.lineplot(
        data=curves, x="step", y=col, hue="η", style="activation", errorbar="sd", ax=ax, legend=ax is axes[0]
    )
    ax.set_xlabel("minibatch")
    ax.set_ylabel(label)
init_plus = float(curves[curves.step == 0].chi_plus.mean())
axes[1].axhline(init_plus, color="0.5", ls="--", lw=1)
axes[1].annotate(
    "untrained", (0, init_plus), xytext=(3, 3), textcoords="offset points", fontsize=7, color="0.4"
)
plt.show()

T = P.fig5_steps
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
curve_summary = pd.DataFrame(rows).set_index(["activation", "η"])
display(curve_summary.round(3))
for (act, lr_text), r in curve_summary.iterrows():
    tag = f"{'relu' if act == 'ReLU' else 'linear'}-{'lr1' if float(lr_text) == P.lr else 'lr2'}"
    run.glue(f"tokens-curve-{tag}-init", round(float(r["χ̄+ untrained"]), 3))
    run.glue(f"tokens-curve-{tag}-end", round(float(r[f"χ̄+ at {T}"]), 3))
    run.glue(f"tokens-curve-{tag}-late-share", round(float(r["share of the χ̄+ gain in the last fifth"]), 2))
    run.glue(f"tokens-curve-{tag}-late-gain", round(float(r[f"χ̄+ at {T}"] - r[f"χ̄+ at {late}"]), 3))
    run.glue(f"tokens-curve-{tag}-loss-end", round(float(r[f"loss at {T}"]), 3))
run.glue("tokens-curve-loss-init", round(float(curve_summary["loss untrained"].mean()), 2))
run.glue("tokens-curve-late", int(late))

# %% [markdown]
# ReLU at $\eta =$ {glue:text}`tokens-fig5-lr1`: $\bar\chi_+$ goes from {glue:text}`tokens-curve-relu-lr1-init`
# (untrained) to {glue:text}`tokens-curve-relu-lr1-end`; from minibatch {glue:text}`tokens-curve-late` to the
# end it still gains {glue:text}`tokens-curve-relu-lr1-late-gain` (a share
# {glue:text}`tokens-curve-relu-lr1-late-share` of its total gain). At $\eta = 10^{-2}$ the same runs reach
# {glue:text}`tokens-curve-relu-lr2-end` (last-fifth gain {glue:text}`tokens-curve-relu-lr2-late-gain`, share
# {glue:text}`tokens-curve-relu-lr2-late-share`). Linear: {glue:text}`tokens-curve-linear-lr1-end` against
# {glue:text}`tokens-curve-linear-lr2-end`. The training loss starts at {glue:text}`tokens-curve-loss-init` and
# ends at {glue:text}`tokens-curve-relu-lr1-loss-end` (ReLU, $\eta =$ {glue:text}`tokens-fig5-lr1`) and
# {glue:text}`tokens-curve-relu-lr2-loss-end` (ReLU, $\eta = 10^{-2}$).
#
# What this shows, read against the explanation the not-reproduced claims below give: compare the
# two end losses, and the last-fifth gains with the gap between the two end values of
# $\bar\chi_+$. When the end losses are about equal, the objective's value does not tell the two
# rates apart: what differs is how specialized the filters are when the loss levels off, so
# "not converged" is true of the filters (their $\bar\chi_+$ still creeps up, at a rate that
# would need many times 5000 minibatches to close the gap) rather than of the loss. Why the
# larger rate reaches filters with much higher $\bar\chi_+$ at the same loss is not established
# here. A candidate we have not tested: weight decay acts through the product $\eta\lambda$,
# five times larger at $10^{-2}$, and shrinking the components of a filter that the loss does not
# need is what raises its cosine with its token.
#
# ## Learning-rate sensitivity: the paper-scale grid at η = 10⁻²
#
# The same grid trained at the released code's $\eta=10^{-2}$, with seeds
# {glue:text}`tokens-lr0.01-seeds` (seeds 0–2 from the committed artifact
# `results/tian-tokens-full-lr0.01-*`, seeds 3–4 from `results/tian-tokens-full-lr0.01-seeds3-4-*`,
# trained later: see "Seed spread of the grid claims"): Fig. 9, Fig. 11 and Table 1, then every
# claim's quantity at both learning rates side by side.

# %%
run.glue(
    "tokens-lr0.01-seeds",
    ", ".join(
        f"{fig}: {sorted(a.table.seed.unique().tolist())}"
        for fig, a in sens_artifacts.items()
        if a is not None
    )
    or "none (no artifact)",
)
if sens_artifacts["fig9"] is not None:
    show_fig(
        sens_artifacts["fig9"].table,
        "fig9",
        "activation",
        ACT_LABEL.get,
        f"Fig. 9, InfoNCE — {describe(sens_artifacts['fig9'], 'fig9', short=True)}",
    )
if sens_artifacts["fig10"] is not None:
    show_fig(
        sens_artifacts["fig10"].table,
        "fig10",
        "activation",
        ACT_LABEL.get,
        f"Fig. 10, quadratic loss — {describe(sens_artifacts['fig10'], 'fig10', short=True)}",
    )
if sens_artifacts["fig11"] is not None:
    show_fig11(
        sens_artifacts["fig11"].table, f"Fig. 11 — {describe(sens_artifacts['fig11'], 'fig11', short=True)}"
    )
if sens_artifacts["table1"] is not None:
    _, sens_t1_wide = table1(sens_artifacts["table1"].table)
    print(f"Table 1 — {describe(sens_artifacts['table1'], 'table1')}")
    display(sens_t1_wide)

# %% [markdown]
# ## Which scoring: $\bar\chi_-$ in the book and in the released code
#
# **The book's scoring** (`nlcl.tian.tokens.metrics.matching_scores`, `normaliser="cosine"`, the
# default): $\chi_-(R_k)$ averages, over the tokens $a$ that no generator fixes at $R_k$ (the
# complement of $R_k^g$, so the prefactor is $1/(d-P)$ when every candidate is used, where Eq. 181
# prints $1/P$), the best cosine $\max_m \cos(\mathbf{w}_{km}, \mathbf{u}_a)$, with $|\cos|$ for
# linear $h$:
#
# $$\chi_-(R_k) = \frac{1}{|\bar R_k^g|}\sum_{a\notin R_k^g} \max_m
# \frac{\mathbf{w}_{km}^\top\hat{\mathbf{u}}_a}{\|\mathbf{w}_{km}\|}.$$
#
# **The released code's scoring** (`check_result` calling `compute_score` in
# facebookresearch/luckmatters, `ssl/real-dataset/bn_gen.py`) uses the same tokens ("others" =
# every token that is not a key of `symbol_freq` at location $k$), the same averages and the same
# maximum over filters, but a different denominator:
#
# $$\frac{\mathbf{w}_{km}^\top\hat{\mathbf{u}}_a}{\|\mathbf{w}_{km}\| + \max\big(\max_{m',b}
# |\mathbf{w}_{km'}^\top\hat{\mathbf{u}}_b|/1000,\ 10^{-6}\big)}$$
#
# (`matching_scores(..., normaliser="released")`, tested equal to a literal re-implementation of
# `check_result` in `tests/oracle/`). The two agree when the filters of an RF have comparable
# norms. They differ when weight decay has shrunk some filters to about a thousandth of the RF's
# largest weight: such a filter can still have a cosine near 1 with a token that no generator
# uses, and the released ratio discounts it (to one half when its norm is exactly a thousandth).
# Under the quadratic loss many filters decay this way, and the ones left pointing at
# non-candidate tokens are exactly those. **The book reports the cosine** (Eq. 181 is a cosine);
# the released score is shown beside it, here and in "Measuring the claims".
#
# **The released trainer, run independently.** `tests/oracle/released_trainer.py` re-implements
# the released trainer (`bn_gen.py` with `bn_gen_utils.py`) literally and shares no code with
# nlcl; given the same generators, batches and initial weights, nlcl's trainer ends with the same
# weights to $10^{-9}$ (`tests/oracle/test_oracle_vs_nlcl.py`). With their own seeds, the two are
# compared as distributions on issue 18's grid (five activations × BN {none, mean} × {InfoNCE,
# quadratic}) at the released README's configuration ($P=5$, $\beta=5$, $d_\text{out}=50$,
# $\eta=0.02$, 5000 steps, $\zeta=1$). The committed record `results/tian-tokens-oracle.json` is
# written by `tests/oracle/compare_oracle.py` from the oracle's runs (`run_oracle_grid.py`) and
# nlcl's (`score_nlcl_runs.py`, every run scored both ways); this chapter only reads it and never
# trains the oracle (the four checks below are read from it, and the replication check from
# `results/tian-tokens-oracle-replication.json`, in both profiles). A cell agrees when the means
# differ by at most
# $\max(0.02,\ 2\sqrt{\text{se}_\text{oracle}^2+\text{se}_\text{nlcl}^2})$ for both $\bar\chi_+$ and
# $\bar\chi_-$ (issue 18's rule); a cell with one oracle seed gets an *indicative* verdict that
# uses nlcl's per-seed spread in place of the oracle's.
#
# Predictions, declared before the record is read (checks of our implementation; the last three
# were declared informational while the record had fewer than five oracle seeds in some cells; it
# now has five in every cell, and they stay informational: where a cell differs, the fresh-seed
# replication below tests whether the difference is real, instead of an explanation hiding it):
#
# 1. nlcl's released normaliser reproduces the literal `check_result` on every run of the record:
#    largest difference $\le 10^{-5}$.
# 2. Scored like the oracle (released normaliser), nlcl agrees with the oracle in all five
#    quadratic-loss cells where issue 18 saw the gap (BN mean with $x^2$; no BN with ReLU,
#    LeakyReLU, linear and $x^2$).
# 3. Scored with the book's cosine, nlcl's $\bar\chi_-$ exceeds the oracle's in those five cells by
#    at least 0.02 on average: the gap of issue 18 is the scoring.
# 4. Over the whole grid, under the released normaliser, at least 90% of the 20 cells agree.

# %%
oracle_record = results.records("tian-tokens-oracle").get("tian-tokens-oracle")
ACT_SHORT = {
    "quadratic": "x²",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU",
    "linear": "linear",
    "sigmoid": "sigmoid",
}


def cell_name(loss, bn, activation):
    """A cell of issue 18's grid as the tables show it, e.g. "quadratic, BN mean, x²"."""
    return (
        f"{'InfoNCE' if loss == 'infonce' else 'quadratic'}, "
        f"{'BN mean' if bn == 'mean' else 'no BN'}, {ACT_SHORT[activation]}"
    )


oracle_claims = {
    "scoring-identity": run.expect(
        "tokens-released-normaliser-is-check-result",
        source="released bn_gen.py check_result / compute_score; tests/oracle/released_scoring.py",
        statement="Largest |χ̄± with normaliser='released' − χ̄± of the literal check_result| over the "
        "record's nlcl runs (results/tian-tokens-oracle-nlcl-runs.json)",
        check=at_most(1e-5),
        kind="check",
    ),
    "bold-agree": run.expect(
        "tokens-oracle-bold-cells-agree-released-scoring",
        source="issue 18; results/tian-tokens-oracle.json",
        statement="Of the five quadratic-loss cells of issue 18's gap, the number where nlcl scored with the "
        "released normaliser agrees with the oracle (released trainer re-implemented)",
        check=exactly(5),
        kind="check",
        required=False,
    ),
    "bold-gap": run.expect(
        "tokens-oracle-bold-cells-cosine-gap",
        source="issue 18; results/tian-tokens-oracle.json",
        statement="Mean over the same five cells of χ̄−(nlcl, book's cosine) − χ̄−(oracle, released scoring)",
        check=at_least(0.02),
        kind="check",
        required=False,
    ),
    "grid-agree": run.expect(
        "tokens-oracle-grid-agrees-released-scoring",
        source="issue 18; results/tian-tokens-oracle.json",
        statement="Fraction of the 20 cells (5 activations × BN {none, mean} × {InfoNCE, quadratic}) where nlcl "
        "scored with the released normaliser agrees with the oracle",
        check=at_least(0.9),
        kind="check",
        required=False,
    ),
}
if oracle_record is None:
    print("results/tian-tokens-oracle.json is missing: run tests/oracle/compare_oracle.py")
    for g in ("status", "differ", "x2bn-oracle", "x2bn-cosine", "x2bn-released", "bold-before", "bold-after"):
        run.glue(f"tokens-oracle-{g}", "n/a")
else:
    oc = pd.DataFrame(oracle_record["cells"])
    oc["cell"] = [cell_name(lo, b, a) for lo, b, a in zip(oc.loss, oc.bn, oc.activation)]
    oc["n_oracle"] = oc.oracle_seeds.map(len)

    def pm(col, rows=oc):
        return [
            f"{m:.3f} ± {s:.3f}" if s == s else f"{m:.3f}"
            for m, s in zip(rows[col], rows[col + "_se"].fillna(np.nan))
        ]

    display(
        pd.DataFrame(
            {
                "oracle seeds": oc.n_oracle.values,
                "oracle χ̄+": pm("oracle_chi_plus"),
                "oracle χ̄−": pm("oracle_chi_minus"),
                "nlcl χ̄+ (released)": pm("nlcl_released_chi_plus"),
                "nlcl χ̄− (released)": pm("nlcl_released_chi_minus"),
                "verdict (released)": oc.verdict_released.values,
                "nlcl χ̄− (cosine)": pm("nlcl_cosine_chi_minus"),
                "verdict (cosine)": oc.verdict_cosine.values,
            },
            index=pd.Index(oc.cell, name=f"{len(oracle_record['config']['seeds'])} nlcl seeds per cell"),
        )
    )
    bold = oc[oc.bold]
    fig, ax = plt.subplots(figsize=(8, 3.2))
    x = np.arange(len(bold))
    for j, (col, label) in enumerate(
        [
            ("oracle_chi_minus", "oracle (released trainer, released scoring)"),
            ("nlcl_cosine_chi_minus", "nlcl, book's cosine"),
            ("nlcl_released_chi_minus", "nlcl, released scoring"),
        ]
    ):
        ax.bar(
            x + (j - 1) * 0.27, bold[col], 0.27, yerr=2 * bold[col + "_se"].fillna(0), capsize=3, label=label
        )
    ax.set_xticks(
        x,
        [f"{c}\n({n} oracle seed{'s' if n > 1 else ''})" for c, n in zip(bold.cell, bold.n_oracle)],
        fontsize=7,
    )
    ax.set_ylabel(r"$\bar\chi_-$ (± 2 s.e.)")
    ax.set_title("Issue 18's five quadratic-loss cells: the gap is the scoring", fontsize=9)
    ax.legend(fontsize=7)
    plt.show()
    ORACLE_FILE = "results/tian-tokens-oracle.json"  # both profiles read the committed record
    oracle_claims["scoring-identity"].measure(
        float(oracle_record["nlcl_released_scoring_max_abs_diff"]), read_from=ORACLE_FILE
    )
    oracle_claims["bold-agree"].measure(
        int(bold.verdict_released.str.startswith("agrees").sum()), read_from=ORACLE_FILE
    )
    gap = float((bold.nlcl_cosine_chi_minus - bold.oracle_chi_minus).mean())
    oracle_claims["bold-gap"].measure(round(gap, 3), read_from=ORACLE_FILE)
    oracle_claims["grid-agree"].measure(
        round(float(oc.verdict_released.str.startswith("agrees").mean()), 3), read_from=ORACLE_FILE
    )
    x2 = oc[(oc.loss == "quadratic") & (oc.bn == "mean") & (oc.activation == "quadratic")].iloc[0]
    run.glue("tokens-oracle-status", oracle_record["status"])
    differ = oc[~oc.verdict_released.str.startswith("agrees")]
    run.glue(
        "tokens-oracle-differ",
        "; ".join(f"{c} ({n} oracle seeds)" for c, n in zip(differ.cell, differ.n_oracle)) or "none",
    )
    run.glue("tokens-oracle-x2bn-oracle", f"{x2.oracle_chi_minus:.3f} ({x2.n_oracle} seeds)")
    run.glue("tokens-oracle-x2bn-cosine", f"{x2.nlcl_cosine_chi_minus:.3f}")
    run.glue("tokens-oracle-x2bn-released", f"{x2.nlcl_released_chi_minus:.3f}")
    run.glue("tokens-oracle-bold-before", f"{gap:+.3f}")
    run.glue(
        "tokens-oracle-bold-after",
        f"{float((bold.nlcl_released_chi_minus - bold.oracle_chi_minus).mean()):+.3f}",
    )

# %% [markdown]
# In the quadratic-loss, BN-mean, $x^2$ cell the oracle's $\bar\chi_-$ is
# {glue:text}`tokens-oracle-x2bn-oracle`; nlcl's is {glue:text}`tokens-oracle-x2bn-cosine` with the
# book's cosine and {glue:text}`tokens-oracle-x2bn-released` with the released normaliser. Over the
# five cells of issue 18, nlcl minus oracle in $\bar\chi_-$ is {glue:text}`tokens-oracle-bold-before`
# on average with the cosine and {glue:text}`tokens-oracle-bold-after` with the released normaliser.
# The record's status: {glue:text}`tokens-oracle-status`. Cells where nlcl, scored like the
# oracle, does not agree with it: {glue:text}`tokens-oracle-differ`.

# %% [markdown]
# **Do the remaining differences replicate?** The rule, declared before any fresh-seed run
# (`tests/oracle/replicate_differing.py`): every cell that differs under the released scoring is
# trained again by both trainers at the fresh seeds 5–9, which no run of the record used. The
# difference *replicates* when, on the fresh seeds alone, the cell differs again by issue 18's
# rule, in a score that differed in the record, with the same sign. Prediction (an informational
# check): none replicates, i.e. the differences are what 20 cells × 2 scores compared at about two
# standard errors give by chance.

# %%
replication = results.records("tian-tokens-oracle-replication").get("tian-tokens-oracle-replication")
c_replicates = run.expect(
    "tokens-oracle-differences-replicate",
    source="issue 18, item 3; results/tian-tokens-oracle-replication.json",
    statement="Of the cells where nlcl (released scoring) and the oracle differ, the number whose "
    "difference replicates at the fresh seeds 5-9 (both trainers retrained)",
    check=exactly(0),
    kind="check",
    required=False,
)
if replication is None or oracle_record is None:
    print("results/tian-tokens-oracle-replication.json is missing: run tests/oracle/replicate_differing.py")
    run.glue("tokens-oracle-replicates", "n/a")
    run.glue("tokens-oracle-same-sign", "n/a")
else:
    rep_rows, same_sign = [], []
    for c in replication["cells"]:
        name = cell_name(c["loss"], c["bn"], c["activation"])
        for sc in c["differed_in"]:
            label = "χ̄+" if sc == "chi_plus" else "χ̄−"
            before, after = c["record"][f"diff_released_{sc}"], c["fresh"][f"diff_released_{sc}"]
            rep_rows.append(
                {
                    "cell": name,
                    "score": label,
                    "seeds 0-4: nlcl − oracle (tol)": f"{before:+.3f} ({c['record'][f'tol_released_{sc}']:.3f})",
                    "seeds 5-9: nlcl − oracle (tol)": f"{after:+.3f} ({c['fresh'][f'tol_released_{sc}']:.3f})",
                    "replicates": sc in c["differs_again_in"],
                }
            )
            if (before > 0) == (after > 0):
                same_sign.append(f"{name} {label}")
    display(pd.DataFrame(rep_rows).set_index(["cell", "score"]) if rep_rows else "no differing cell")
    run.glue("tokens-oracle-same-sign", ", ".join(same_sign) or "none")
    n_rep = sum(bool(c["replicates"]) for c in replication["cells"])
    c_replicates.measure(n_rep, read_from="results/tian-tokens-oracle-replication.json")
    run.glue(
        "tokens-oracle-replicates",
        "; ".join(
            cell_name(c["loss"], c["bn"], c["activation"]) for c in replication["cells"] if c["replicates"]
        )
        or f"none of {len(replication['cells'])}",
    )

# %% [markdown]
# Cells whose difference replicates at fresh seeds: {glue:text}`tokens-oracle-replicates`.
# Differences that keep their sign on the fresh seeds, though within the tolerance there (a
# systematic difference smaller than the tolerance is not excluded by ten seeds):
# {glue:text}`tokens-oracle-same-sign`.
#
# **Finding.** In the cells of issue 18 the $\bar\chi_-$ gap closes once the trainers are scored
# alike (nlcl − oracle, mean over the five cells: {glue:text}`tokens-oracle-bold-before` with the
# cosine, {glue:text}`tokens-oracle-bold-after` with the released normaliser): most of the gap is
# the denominator, not the model, the data or the update. The paper's Eq. 181
# is a cosine, which the book keeps, so under the quadratic loss the book's $\bar\chi_-$ is higher
# than what the released code prints for the same weights; $\bar\chi_+$ moves much less, because
# the filters that match candidate tokens are the large ones. The cells that still differ are
# listed above; the fresh-seed replication says whether each is a property of the trainers or
# seed noise. A standard error from five seeds is itself a rough estimate, and 20 cells × 2 scores
# compared at about two standard errors produce a couple of "differs" by chance alone.

# %% [markdown]
# ## Measuring the claims
#
# `nlcl.tian.tokens.metrics.grid_predicates` computes every claim's quantity from the four result
# tables (cells averaged over seeds); `grid_predicates_per_seed` computes it on each seed's grid
# alone, for the spread. At $\eta = 2\times10^{-3}$ the tables are {glue:text}`tokens-computed-main`;
# at $\eta = 10^{-2}$ they are read from the committed grid in every profile. The diagnostics that the
# explanations' predictions test are given first (`run.diagnostic`), then the claims are measured;
# the table after the claims lists each prediction, its diagnostic and whether it held.

# %%
main_tables = [table_for(f) for f in FIGURES]
empty = pd.DataFrame(columns=live_table.columns)
sens_tables = [sens_artifacts[f].table if sens_artifacts[f] is not None else empty for f in FIGURES]
main_values, sens_values = grid_predicates(*main_tables), grid_predicates(*sens_tables)
main_per_seed, sens_per_seed = grid_predicates_per_seed(*main_tables), grid_predicates_per_seed(*sens_tables)


def rounded(v):
    return v if isinstance(v, (str, int)) else round(float(v), 3)


def seed_values(per_seed, key):
    """The quantity on each seed's grid (None below two seeds, or where a seed's grid lacks cells)."""
    values = [rounded(v) for v in per_seed[key]] if len(per_seed) >= 2 else None
    return values if values is not None and is_finite(values) else None


def diagnose(tag, values, role, claim_list):
    """Give run.diagnostic every quantity of grid ``tag`` that the explanations of ``claim_list``
    bet on in the role ``role`` ("own": the claim's grid, "fast": the same grid at η = 1e-2)."""
    for cid, *_ in claim_list:
        for key, grid, _test, _words in EXPLAINED.get(cid, ((), []))[1]:
            if grid == role:
                run.diagnostic(diagnostic_name(tag, key), rounded(values[key]))


def artifact_files(art):
    """The committed files an artifact was read from (one per part when extra seeds were joined)."""
    return [f"results/{m['name']}.json" for m in art.meta.get("parts") or [art.meta]]


def read_from(files, figs):
    """``read_from=`` of a claim whose quantity reads the tables of ``figs``: their committed files,
    or None when any of them is (partly) computed in this run (``files[fig]`` None)."""
    out = [f for fig in FIGURES if fig in figs for f in (files[fig] or [None])]
    return None if None in out else out


main_files = {f: artifact_files(artifacts[f]) if claim_source[f] == "artifact" else None for f in FIGURES}
sens_files = {f: artifact_files(a) if a is not None else None for f, a in sens_artifacts.items()}


def computed_text(fig):
    """Where the η = P.lr table of ``fig`` comes from, in words (the file names with <figure>)."""
    if main_files[fig]:
        names = [f.replace(fig, "<figure>") for f in main_files[fig]]
        return "read from the committed " + " and ".join(names) + ", not computed in this run"
    text = f"computed in this run (seeds {', '.join(map(str, seeds))})"
    if extra_live[fig] is not None:
        extra = artifact_files(extra_live[fig])[0].replace(fig, "<figure>")
        text += f", joined with seeds {extra_live[fig].meta['parameters']['seeds']} read from {extra}"
    return text


texts = {fig: computed_text(fig) for fig in FIGURES}
run.glue(
    "tokens-computed-main",
    texts["fig9"] + (f" (<figure>: {', '.join(FIGURES)})" if "<figure>" in texts["fig9"] else "")
    if len(set(texts.values())) == 1
    else "; ".join(f"{fig}: {t}" for fig, t in texts.items()),
)
diagnose("", main_values, "own", CLAIMS)
diagnose("lr0.01", sens_values, "fast", CLAIMS)
for cid, key, *_ in CLAIMS:
    claims[cid].measure(
        rounded(main_values[key]),
        per_seed=seed_values(main_per_seed, key),
        read_from=read_from(main_files, NEEDS[cid]),
    )
    sens_claims[cid].measure(
        rounded(sens_values[key]),
        per_seed=seed_values(sens_per_seed, key),
        read_from=read_from(sens_files, NEEDS[cid]),
    )
side_by_side = pd.DataFrame(
    [
        dict(
            claim=f"tokens-{cid}",
            check=check.description,
            **{
                f"η = {P.lr:g}": rounded(main_values[key]),
                f"η = {SENSITIVITY_LR:g}": rounded(sens_values[key]),
            },
        )
        for cid, key, _, _, check, _, _ in CLAIMS
    ]
).set_index("claim")
display(side_by_side)


def prediction_rows(claim_map, own, fast):
    """One row per prediction of the explanations of ``claim_map``'s claims: the diagnostic (or the
    claim's own value), its value, what the explanation predicted and whether it held."""
    rows, tags = [], {"own": own, "fast": fast}
    for cid, claim in claim_map.items():
        if cid not in EXPLAINED or claim.record is None:
            continue
        rec = claim.record
        for key, grid, test, words in EXPLAINED[cid][1]:
            name = rec["id"] if grid == "measured" else diagnostic_name(tags[grid], key)
            value = rec["measured"] if grid == "measured" else run.registry.diagnostics.get(name)
            rows.append(
                dict(claim=rec["id"], status=rec["status"], quantity=name, value=value)
                | {
                    "predicted": bet_words(cid, grid, words),
                    "prediction holds": bet_holds(cid, grid, test, value, rec["measured"]),
                }
            )
    return rows


display(pd.DataFrame(prediction_rows(claims, "", "lr0.01")).set_index(["claim", "quantity"]))

# %% [markdown]
# ### Seed spread of the grid claims
#
# Each claim's quantity on each seed's grid alone, beside the value decided on the seed-averaged
# cells. "holds on" counts the seeds whose own grid satisfies the predicate; "margin < spread"
# marks a decided value whose distance to the threshold is smaller than the standard deviation
# over seeds: with so few seeds, such a verdict (pass or not) is not settled by these runs.


# %%
def spread_rows(claim_map, grid):
    rows = []
    for claim in claim_map.values():
        rec, seeds = claim.record, claim.record.get("seeds")
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


spread = pd.DataFrame(
    spread_rows(claims, f"η = {P.lr:g}") + spread_rows(sens_claims, f"η = {SENSITIVITY_LR:g}")
)
if len(spread):
    display(spread.set_index(["grid", "claim"]))
    within = spread[spread["margin < spread"] == "yes"]
    split = spread[~spread["holds on"].str.split("/").map(lambda x: x[0] in ("0", x[1]))]
else:
    within = split = spread
    print("No grid with two or more seeds: no spread to show.")
run.glue("tokens-margin-within-spread", ", ".join(within.claim) or "none")
run.glue("tokens-seeds-split", ", ".join(split.claim) or "none")

# %% [markdown]
# Claims whose margin is smaller than the seed spread: {glue:text}`tokens-margin-within-spread`.
# Claims on which the seeds disagree (the predicate holds on some seeds' grids and not on
# others): {glue:text}`tokens-seeds-split`. Their verdicts rest on the seed average of a few
# runs per cell; more seeds per cell would settle them.

# %% [markdown]
# ## Deviations from the printed paper
#
# Every choice where this chapter's experiment differs from what the paper prints, what the
# released code does, and whether the claims are also tested under the printed choice.
#
# | choice | printed in the paper | released code (`bn_gen.py`) | this chapter | tested under the printed choice? |
# |---|---|---|---|---|
# | learning rate $\eta$ | $2\times10^{-3}$ (Sec. 5) | $10^{-2}$ | $2\times10^{-3}$ (required claims); $10^{-2}$ (claims `tokens-lr0.01-*`) | yes: the required claims use it |
# | temperature $\tau$ | not printed for Sec. 5 | 0.1 | 0.1 | (nothing printed) |
# | score of a linear filter | $\cos$ (Eqs. 16, 180) | $\lvert\cdot\rvert$ of the score | $\lvert\cos\rvert$: $\mathbf{w}$ and $-\mathbf{w}$ are the same linear pattern | yes, below ("printed") |
# | score of an $x^2$ filter | $\cos$ | (no $x^2$ in the released model) | $\cos$, as printed and as the released code scores every non-linear $h$ | yes, and with $\lvert\cos\rvert$ below ("sign-symmetric"): $x^2$ is as sign-symmetric as linear |
# | prefactor of $\chi_\pm(R_k)$ | $1/P$ (Eqs. 16, 181; for $\chi_-$ a sum over $d-P$ tokens, which can exceed 1) | mean over the set | mean over the set | yes, below ("printed") |
# | denominator | $\lVert\mathbf{w}\rVert\,\lVert\mathbf{u}\rVert$ | $\lVert\mathbf{w}\rVert + \max(\max\lvert\mathbf{w}^\top\hat{\mathbf{u}}\rvert/1000, 10^{-6})$ | as printed | the released one too, below and in "Which scoring" |
# | $R_k^g$ | the candidates of $R_k$ | the tokens some generator fixes at $R_k$ | as released (a candidate no generator uses is noise) | no: with $G = 40$ generators the two sets differ rarely |
# | BatchNorm moments | per batch; the analysis (App. D, Eqs. 164-165) pools the $2N$ samples of both views | per view (two forward calls) | per view, as released | yes: the BatchNorm runs of Fig. 11 and Table 1 retrained with pooled moments, below ("BatchNorm moments pooled over both views") |
#
# **Prediction** (informational checks of the scoring choices, declared before the measurement):
# every claim's predicate gives the same verdict under each other scoring as under the book's:
# the released normaliser, $\lvert\cos\rvert$ for both sign-symmetric activations (linear and
# $x^2$), and the printed Eqs. 16/181 (signed cosine for every activation, $1/P$ prefactor). The
# paper-scale grids are re-scored where their tables carry the extra scores (committed grids
# written before a scoring was added lack its columns and are skipped, which the table says); the
# live run always carries all of them.

# %%
SCORINGS = {
    "book": ("chi_plus", "chi_minus"),
    "released": ("chi_plus_released", "chi_minus_released"),
    "sign-symmetric": ("chi_plus_symmetric", "chi_minus_symmetric"),
    "printed": ("chi_plus_printed", "chi_minus_printed"),
}


def rescored(tables, scoring):
    """The four tables with χ̄± replaced by ``scoring``'s, and the figures whose tables carry them."""
    cp, cm = SCORINGS[scoring]
    out, have = [], set()
    for fig, t in zip(FIGURES, tables):
        if len(t) and cp in t.columns:
            out.append(t.assign(chi_plus=t[cp], chi_minus=t[cm]))
            have.add(fig)
        else:
            out.append(t)
    return out, have


scoring_checks = {
    sc: run.expect(
        f"tokens-{sc}-scoring-same-verdicts",
        source="issue 13 §5, issue 18 item 4; Tian 2023, Eqs. 16, 180-181; released bn_gen.py check_result",
        statement=f"Every claim's predicate has the same verdict under the {sc} scoring as under the book's, "
        "on every grid that carries the scores (the paper-scale grids at both η where they do, and the live "
        f"{run.profile} run)",
        check=is_true(),
        kind="check",
        required=False,
    )
    for sc in ("released", "sign-symmetric", "printed")
}
live_by_fig = [live_table[live_table.figure == f].reset_index(drop=True) for f in FIGURES]
grids = {
    f"live {run.profile}, η = {P.lr:g}": live_by_fig,
    f"paper scale, η = {P.lr:g}": [table_for(f) for f in FIGURES],
    f"paper scale, η = {SENSITIVITY_LR:g}": [
        sens_artifacts[f].table if sens_artifacts[f] is not None else empty for f in FIGURES
    ],
}
if run.profile == "full":
    del grids[f"live {run.profile}, η = {P.lr:g}"]  # the paper-scale grid at P.lr is the live run
scoring_rows, same = [], {sc: [] for sc in scoring_checks}
for grid_name, tables in grids.items():
    if not any(len(t) for t in tables):
        continue
    values, stored = {}, {}
    for sc in SCORINGS:
        tabs, stored[sc] = rescored(tables, sc)
        values[sc] = grid_predicates(*tabs)
    for cid, key, _, _, check, _, _ in CLAIMS:
        row = dict(grid=grid_name, claim=f"tokens-{cid}", check=check.description)
        ok = {sc: NEEDS[cid] <= stored[sc] for sc in SCORINGS}
        if not ok["book"]:
            continue
        for sc in SCORINGS:
            row[sc] = rounded(values[sc][key]) if ok[sc] else "(not stored)"
        base = bool(check(values["book"][key]))
        for sc in scoring_checks:
            if ok[sc]:
                agree = bool(check(values[sc][key])) == base
                same[sc].append(agree)
                if not agree:
                    row[sc] = f"{row[sc]} (verdict differs)"
        scoring_rows.append(row)
scoring_table = pd.DataFrame(scoring_rows).set_index(["grid", "claim"])
display(scoring_table)
for sc, claim in scoring_checks.items():
    claim.measure(bool(all(same[sc])) if same[sc] else float("nan"))
run.glue(
    "tokens-scoring-differs",
    "; ".join(
        f"{c} on {g} under the {sc} scoring"
        for (g, c), r in scoring_table.iterrows()
        for sc in scoring_checks
        if "differs" in str(r[sc])
    )
    or "none",
)


def scoring_cell(grid_name, cid, scoring):
    """One entry of the table above, as text ("n/a" when that grid is not in this run)."""
    key = (grid_name, f"tokens-{cid}")
    return str(scoring_table.loc[key, scoring]) if key in scoring_table.index else "n/a"


for tag, lr_value in (("lr1", P.lr), ("lr2", SENSITIVITY_LR)):
    name = f"paper scale, η = {lr_value:g}"
    run.glue(f"tokens-printed-p1-{tag}", scoring_cell(name, "p1-linear-vs-relu", "printed"))
    run.glue(f"tokens-printed-linear-flat-{tag}", scoring_cell(name, "linear-flat-in-beta", "printed"))
    run.glue(f"tokens-symmetric-lowest-{tag}", scoring_cell(name, "relu-lowest-chi-minus", "sign-symmetric"))

# %% [markdown]
# Verdicts that change with the scoring: {glue:text}`tokens-scoring-differs`.
#
# At paper scale, the printed signed cosine gives $\bar\chi_+(\text{linear}) - \bar\chi_+(\text{ReLU})$ at
# $P = 1$ of {glue:text}`tokens-printed-p1-lr1` at $\eta =$ {glue:text}`tokens-fig5-lr1` and
# {glue:text}`tokens-printed-p1-lr2` at $\eta = 10^{-2}$ (the paper: linear works well at $P=1$). A linear
# filter that learned $-\mathbf{u}_a$ is as good as one that learned $\mathbf{u}_a$, and the signed
# cosine scores it near $-1$: Fig. 9 was most likely scored with $\lvert\cos\rvert$ for linear, as the
# released code does, which is why the book does too. The spread of linear $\bar\chi_+$ over $\beta$
# under the printed scoring: {glue:text}`tokens-printed-linear-flat-lr1` and
# {glue:text}`tokens-printed-linear-flat-lr2`. With $\lvert\cos\rvert$ for $x^2$ as well, the activation with
# the lowest grid-mean $\bar\chi_-$ is {glue:text}`tokens-symmetric-lowest-lr1` at
# $\eta =$ {glue:text}`tokens-fig5-lr1` and {glue:text}`tokens-symmetric-lowest-lr2` at $\eta = 10^{-2}$.
# At $\eta = 10^{-2}$, where `tokens-lr0.01-relu-lowest-chi-minus` is not reproduced, the re-scoring
# accounts for $x^2$'s place below ReLU (a sign-symmetric activation scored with the signed cosine),
# not for the activation that stays below ReLU under $\lvert\cos\rvert$; we have not identified why,
# so that claim carries no explanation and is recorded as failed (it is informational).

# %% [markdown]
# ### BatchNorm moments pooled over both views
#
# The analysis of BatchNorm (App. D, Eqs. 164-165) writes the batch moments over the $2N$ samples
# of both views; the released code, and the grids above, normalize each view with its own moments
# (two forward calls). To test whether the choice matters, the BatchNorm runs of Fig. 11 and
# Table 1 were trained again with pooled moments (the `pooled-*` variants of
# `nlcl.tian.rf_network`; the token table engine computes them exactly as autograd does, which the
# tests check for every activation, variant and loss), at both learning rates, 5 seeds, everything
# else as in the paper-scale grids:
# `nlcl train-grid --figures fig11 table1 --seeds 0 1 2 3 4 --bn-moments pooled --prefix tian-tokens-full-bnpooled`
# (and `--lr 0.01 --prefix tian-tokens-full-lr0.01-bnpooled`). Runs without BatchNorm do not depend
# on the choice: Fig. 11's no-BN cells are the per-view grid's, on the same seeds. Both profiles
# read these committed grids (the full profile does not retrain them): the `tokens-bnpooled-*` and
# `tokens-lr0.01-bnpooled-*` verdicts are read from `results/tian-tokens-full-bnpooled-*.json` and
# `results/tian-tokens-full-lr0.01-bnpooled-*.json`, except the $\zeta = 10$ BatchNorm claim at
# $\eta = 2\times10^{-3}$ in the full profile, whose no-BN runs come from this run's per-view grid.
#
# **Prediction** (declared before the pooled grids were trained): the three BatchNorm claims are
# evaluated with the same predicates and tolerances on the pooled grids, as informational claims
# `tokens-bnpooled-*` (η = 2e-3) and `tokens-lr0.01-bnpooled-*` (η = 1e-2); the required claims
# stay on the released code's per-view moments. If the moments matter, a verdict differs between
# the two columns of the table below. A pooled claim at η = 2e-3 carries the not-reproduced
# explanation of its per-view counterpart (it describes the same grid: filters unconverged at
# 2e-3), with the same prediction tested on the pooled grids (its bet on η = 1e-2 on the pooled grid
# at 1e-2), and fails where that prediction does not hold; the pooled claims at 1e-2 carry none.

# %%
BN_CLAIMS = [c for c in CLAIMS if c[6] in ("fig11", "table1")]
# (artifact prefix, η, the per-view tables at that η and their committed files, and the tag of the
# same pooled grid at η = 1e-2, on which the explanation of a pooled claim at 2e-3 bets: a pooled
# claim carries its per-view counterpart's explanation, which describes the same grid)
POOLED = {
    "bnpooled": ("tian-tokens-full-bnpooled", 2e-3, main_tables, main_files, "lr0.01-bnpooled"),
    "lr0.01-bnpooled": ("tian-tokens-full-lr0.01-bnpooled", SENSITIVITY_LR, sens_tables, sens_files, None),
}


def load_pooled(prefix, fig, lr):
    """The committed pooled-moments grid ``<prefix>-<fig>`` (BatchNorm runs only), or None."""
    name = f"{prefix}-{fig}"
    try:
        stored_seeds = results.load(name).meta["parameters"]["seeds"]
        params = {**grid_parameters(5000, lr, stored_seeds, bn_moments="pooled"), "figure": fig}
        return results.load(name, params=params)
    except (FileNotFoundError, results.ArtifactMismatch) as err:
        print(f"{name}: no usable artifact ({str(err)[:160]})")
        return None


def per_view_names(t):
    """A pooled table with the per-view variant names, which grid_predicates and table1 read."""
    return t.assign(bn=t.bn.str.removeprefix("pooled-"))


pooled_claims, pooled_values, pooled_rows, pooled_t1 = {}, {}, [], {}
for tag, (prefix, lr_value, view_tables, view_files, fast) in POOLED.items():
    arts = {fig: load_pooled(prefix, fig, lr_value) for fig in ("fig11", "table1")}
    where = (
        f"pooled moments, η = {lr_value:g}, "
        + "; ".join(
            f"{a.label()}, seeds {sorted(a.table.seed.unique().tolist())}" for a in arts.values() if a
        )
        if all(arts.values())
        else f"pooled moments, η = {lr_value:g}: artifact missing"
    )
    pooled_claims[tag] = {
        cid: run.expect(
            f"tokens-{tag}-{cid}",
            source=f"{source}; App. D, Eqs. 164-165 (moments over both views)",
            statement=f"{statement} ({where}).",
            check=check,
            paper=f"{paper} (BatchNorm moments over the 2N samples of both views)",
            required=False,
            not_reproduced=grid_explanation(cid, tag, fast) if fast else None,
        )
        for cid, _key, source, statement, check, paper, fig in BN_CLAIMS
    }
    if not all(arts.values()):
        continue
    v9, v10, v11, vt1 = view_tables
    seeds_pooled = sorted(set(arts["fig11"].table.seed) & set(arts["table1"].table.seed))
    # the per-view grid's no-BN runs of Fig. 11 on the pooled grid's seeds
    no_bn = v11[(v11.bn == "none") & v11.seed.isin(seeds_pooled)]
    common = [c for c in no_bn.columns if c in arts["fig11"].table.columns]
    p11 = pd.concat([no_bn[common], per_view_names(arts["fig11"].table)[common]], ignore_index=True)
    pt1 = per_view_names(arts["table1"].table)
    pooled_tabs = [v9, v10, p11, pt1]
    # the per-view grid restricted to the same seeds, for a like-for-like comparison
    view_same = [t[t.seed.isin(seeds_pooled)] if len(t) else t for t in view_tables]
    files = {
        "fig11": artifact_files(arts["fig11"]) + view_files["fig11"] if view_files["fig11"] else None,
        "table1": artifact_files(arts["table1"]),
    }
    pooled_values[tag] = (grid_predicates(*pooled_tabs), grid_predicates_per_seed(*pooled_tabs), files)
    values_p, values_v = pooled_values[tag][0], grid_predicates(*view_same)
    for cid, key, _, _, check, _, _ in BN_CLAIMS:
        pooled_rows.append(
            {
                "η": f"{lr_value:g}",
                "claim": f"tokens-{cid}",
                "check": check.description,
                "per view (released)": rounded(values_v[key]),
                "pooled (App. D)": rounded(values_p[key]),
                "same verdict": bool(check(values_v[key])) == bool(check(values_p[key])),
                "seeds": len(seeds_pooled),
            }
        )
    pooled_t1[lr_value] = (table1(vt1[vt1.seed.isin(seeds_pooled)])[0], table1(pt1)[0])
# the explanations' diagnostics first (a claim at 2e-3 bets on the pooled grid at 1e-2), then the claims
for tag, (*_, fast) in POOLED.items():
    if tag in pooled_values and fast:
        diagnose(tag, pooled_values[tag][0], "own", BN_CLAIMS)
    if fast in pooled_values:
        diagnose(fast, pooled_values[fast][0], "fast", BN_CLAIMS)
for tag, (values_p, per_seed_p, files) in pooled_values.items():
    for cid, key, *_, fig in BN_CLAIMS:
        pooled_claims[tag][cid].measure(
            rounded(values_p[key]), per_seed=seed_values(per_seed_p, key), read_from=read_from(files, {fig})
        )
pooled_table = pd.DataFrame(pooled_rows)
if len(pooled_table):
    display(pooled_table.set_index(["η", "claim"]))
    run.glue(
        "tokens-pooled-differs",
        ", ".join(f"{r.claim} at η = {r['η']}" for _, r in pooled_table.iterrows() if not r["same verdict"])
        or "none",
    )
else:
    run.glue("tokens-pooled-differs", "not measured (no pooled grid committed)")

# %% [markdown]
# Verdicts that differ between per-view and pooled moments: {glue:text}`tokens-pooled-differs`.
# Table 1 cell by cell: the mean $\bar\chi_+$ over the same seeds with pooled moments minus that
# with per-view moments (rows $(\beta, P)$, columns the four backprop variants):

# %%
if pooled_t1:
    fig_pooled, axes = plt.subplots(
        1, len(pooled_t1), figsize=(6 * len(pooled_t1), 4), squeeze=False, layout="constrained"
    )
    for ax, (lr_value, (tv, tp)) in zip(axes[0], pooled_t1.items()):
        m = tv.merge(tp, on=["beta", "P", "bn"], suffixes=("_view", "_pooled"))
        diff = (
            m.pivot(index=["beta", "P"], columns="bn", values="chi_plus_mean_pooled")
            .sub(m.pivot(index=["beta", "P"], columns="bn", values="chi_plus_mean_view"))[list(VARIANT)]
            .rename(columns=VARIANT)
        )
        sns.heatmap(diff, annot=True, fmt="+.2f", center=0, cmap="vlag", ax=ax, cbar=False)
        ax.set_title(f"Table 1, η = {lr_value:g}: χ̄+ pooled − per view")
        ax.set_xlabel("backprop through")
        ax.set_ylabel(r"$(\beta, P)$")
    plt.show()
else:
    print("No pooled grid committed.")

# %% [markdown]
# ## Speed
#
# The trainer's speed is measured by `make bench` (`nlcl bench`), not by tests. The
# numbers below are the committed benchmark records — `results/tian-tokens-bench-cpu.json` (the
# table engine, one worker process per core, the whole grid) and, for comparison,
# `results/tian-tokens-bench-cpu-autograd.json` (the per-sample network differentiated by autograd,
# three stacks, `--quick`) — then this build's live run and the timing notes of the artifacts.

# %%


bench_glue = dict(device="n/a", projected="n/a", dense="n/a", engine="n/a", peak="n/a", workers="n/a")
benches = {}  # one column per committed benchmark record
for name, bench in results.records("tian-tokens-bench-").items():
    benches[name] = {k: v for k, v in bench.items() if not isinstance(v, dict)}
    if name == "tian-tokens-bench-cpu":
        bench_glue = dict(
            device=bench["device"],
            projected=f"{bench['projected_full_grid_min_wall']:.1f}",
            dense=f"{100 * bench['fraction_of_peak']:.0f}%",
            engine=f"{100 * bench['fraction_of_peak_engine']:.0f}%",
            peak=f"{bench['matmul_peak_gflops']:.0f}",
            workers=str(bench.get("workers", 1)),
        )
if benches:
    display(pd.DataFrame(benches).rename_axis("nlcl.tian.tokens.bench"))
for key, value in bench_glue.items():
    run.glue(f"tokens-bench-{key}", value)
print(f"live {run.profile} run: {live.run_steps_per_s:.0f} run-steps/s on {run.device_name}")
for name, arts in (("η = 2e-3", artifacts), ("η = 1e-2", sens_artifacts)):
    for fig in FIGURES:
        if arts[fig] is not None:
            print(f"{name}, {fig}: {arts[fig].meta['notes']}")

# %% [markdown]
# The committed benchmark ({glue:text}`tokens-bench-device`, {glue:text}`tokens-bench-workers` worker
# processes) projects the full grid at {glue:text}`tokens-bench-projected` minutes of wall time. Counted
# in the FLOPs of the per-sample network, the trainer runs at {glue:text}`tokens-bench-dense` of the
# matmul peak measured in the same run ({glue:text}`tokens-bench-peak` GFLOP/s per core); counted in
# the FLOPs the table engine actually performs, at {glue:text}`tokens-bench-engine`: the step is
# bound by memory traffic (the gather and scatter between tables and samples, the InfoNCE
# softmax), not by arithmetic.
#
# ## Summary
#
# At the paper's stated $\eta=2\times10^{-3}$ (complete grid, 5 seeds; required claims, except ReLU's
# growth with $\beta$, informational since 2026-11-26): at
# $P=1,\beta=1$ linear minus ReLU $\bar\chi_+$ is {glue:text}`tokens-p1-linear-vs-relu`; ReLU beats
# linear in a fraction {glue:text}`tokens-relu-beats-linear` of the $P>1,\beta\ge2$ cells; across
# $\beta$ ReLU's $\bar\chi_+$ changes by {glue:text}`tokens-relu-grows-with-beta` and linear's by
# {glue:text}`tokens-linear-flat-in-beta`; InfoNCE minus quadratic (ReLU) is
# {glue:text}`tokens-infonce-beats-quadratic`; the lowest $\bar\chi_-$ belongs to
# {glue:text}`tokens-relu-lowest-chi-minus`; BatchNorm minus no BatchNorm at $\zeta=10$ is
# {glue:text}`tokens-bn-helps-at-zeta10`; not backpropagating $\sigma^2$ wins a fraction
# {glue:text}`tokens-table1-no-var-backprop` of the Table 1 comparisons, and our Table 1 differs from
# the paper's by {glue:text}`tokens-table1-vs-paper` on average.
#
# At the released code's $\eta=10^{-2}$ (same grid, informational claims): ReLU's gain across
# $\beta$ is {glue:text}`tokens-lr0.01-relu-grows-with-beta`, linear's change
# {glue:text}`tokens-lr0.01-linear-flat-in-beta`, InfoNCE minus quadratic
# {glue:text}`tokens-lr0.01-infonce-beats-quadratic`, BatchNorm minus none at $\zeta=10$
# {glue:text}`tokens-lr0.01-bn-helps-at-zeta10`, and Table 1 is within
# {glue:text}`tokens-lr0.01-table1-vs-paper` of the paper's on average. The verdicts, with the
# tolerances declared above, are in the claims table below.
#
# The finding is the learning rate. On the committed grids, the results that hold at both rates
# are the robust ones: linear is best at $P=1$, ReLU beats linear once $P>1$ and $\beta\ge2$, and
# not backpropagating $\sigma^2$ is at least as good as backpropagating it. The claims about trends
# in $\beta$, about the loss and about BatchNorm fail at the stated $2\times10^{-3}$, where 5000
# minibatches leave the filters near their initialization, and hold at $10^{-2}$ (the side-by-side
# table in "Measuring the claims") — except ReLU's gain across $\beta$, which with five seeds at
# $10^{-2}$ is {glue:text}`tokens-lr0.01-relu-grows-with-beta` against the declared 0.1: it passed
# at 0.105 with the first three seeds, a margin inside the seed spread, which is why seeds 3 and 4
# were added (see "Seed spread of the grid claims"); ReLU's χ̄+ grows with $\beta$ at that rate, by
# a little less than the threshold we declared. Our Table 1 at $10^{-2}$ is close to the published one, which
# suggests that the paper's grid was trained at the released code's rate. ReLU having the lowest
# $\bar\chi_-$ holds at neither rate; {doc}`tian-two-layer-theory` tests global modulation directly
# (Theorems 5-6).
#
# **What's next.** {doc}`tian-two-layer-theory` checks the dynamics behind these curves
# (Lemma 4, Theorems 4-6, Corollary 3) directly against autograd.

# %%
run.finish()
