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
# {cite:t}`tian2023nonlinearity` trains a two-layer network with $K$ disjoint receptive fields
# (RFs) on synthetic token sequences and measures whether the low-layer filters
# $\mathbf{w}_{km}$ learn the tokens that matter. The paper claims that (i) with several relevant
# tokens per RF ($P>1$) a nonlinear (ReLU) network specializes its filters to different tokens and
# profits from over-parameterization $\beta$, while a linear network cannot (Theorem 4); (ii) tokens
# that are not part of any global pattern are *not* learned (global modulation, Theorems 5-6); (iii)
# InfoNCE learns better than the quadratic loss (Corollary 2); and (iv) with strongly non-uniform
# input norms, BatchNorm {cite:p}`ioffe2015batch` helps, best when the gradient does not flow
# through the batch variance (App. D, Table 1). This chapter reproduces Figs. 4/9, 10, 11, 5 and
# Table 1, and compares its trainer and scoring with the paper's released code {cite:p}`luckmatters`.
#
# **Prerequisites.** Tian 2023, Sec. 4 (two-layer setting), Sec. 5 and App. E.2; the theory is in
# {doc}`tian-two-layer-theory`. The matching scores $\bar\chi_\pm$ are Eqs. 16 and 181.
#
# **Expected run time.** {glue:text}`run-time` The timed builds start with an empty compiler cache,
# so these times include compiling the fused training step. `ci` trains a reduced grid (2000 steps,
# one seed) plus Fig. 5 at 5000 steps and reads the paper-scale grids from `results/`; `full` trains
# the paper's grid (960 runs × 5000 steps), and `-p workers 2` shares it between two cores.

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
# $2\times10^{-3}$ (Sec. 5), temperature $\tau=0.1$ (the released code). Losses: InfoNCE
# {cite:p}`oord2018representation` (Eq. 1 with $\epsilon=1$, the released code's cross-entropy) and
# the quadratic loss (uniform $\alpha$).
#
# **Engine.** On token data every quantity the network computes at RF $k$ depends only on the
# token there, so the training step computes the loss and its exact gradients on per-RF token
# tables (BatchNorm moments are count-weighted table sums) instead of per sample: the same numbers
# up to rounding (unit-tested against autograd for every activation, BatchNorm variant and loss),
# while the top layer's work shrinks by the factor $2N/d = 256/20 \approx 13$. The live grid runs
# that step compiled (`engine="fused"`, one `torch.compile` graph per stack layout, tested equal to
# the eager tables to rounding); `-p engine tables` runs the eager step. The Fig. 5 curves (few
# runs, scored during training) use the eager step.
#
# **Scores (Eqs. 16, 181).** $\chi_+(R_k)$ averages over $a\in R_k^g$ the best cosine between a filter
# and $\mathbf{u}_a$; $\chi_-(R_k)$ the same over $a\notin R_k^g$ (we average over the $d-P$ such
# tokens, where Eq. 181 prints a $1/P$ prefactor); $\bar\chi_\pm$ average over RFs. For linear $h$
# we use $|\cos|$. $R_k^g$ counts the candidates that some generator actually uses. The released
# code divides by a slightly different normaliser; "Which scoring" below compares the two.

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"  # "ci" (reduced grid, CPU) or "full" (the paper's grid)
seed: int = 0  # base seed: runs use seeds seed, seed+1, ...
device: str = "auto"  # "auto", "cpu" or "cuda"
lr: float = 2e-3  # SGD learning rate (paper: 2e-3)
tau: float = 0.1  # InfoNCE / quadratic temperature (released code: 0.1)
steps: int | None = None  # minibatches per run; None: the profile's (paper: 5000)
n_seeds: int | None = None  # seeds per grid cell; None: the profile's (paper: 3)
betas: list | None = None  # over-parameterizations β; None: the profile's list
Ps: list | None = None  # candidates per RF P; None: the profile's list
zetas: list | None = None  # non-uniformities ζ of Fig. 11; None: the profile's list
fig5_steps: int | None = None  # minibatches for the Fig. 5 weights; None: the profile's
curve_seeds: int | None = None  # seeds (≥ 2) of Fig. 5 and the curves; None: profile's
workers: int = 1  # CPU processes for the live grid (full profile: the number of cores)
engine: str = "fused"  # the live grid's step: "fused" (compiled) or "tables" (eager)

# %% tags=["hide-cell"]
import nlcl

run = nlcl.start(
    "tian-tokens",
    globals(),
    spec={
        "lr": {"range": [1e-6, 10.0], "paper": 2e-3, "source": "Tian 2023, Sec. 5"},
        "tau": {"range": [0.01, 100.0], "paper": 0.1, "source": "released code"},
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
        "curve_seeds": {"range": [2, 100], "ci": 3, "full": 5},
        "workers": {"range": [1, 256]},
        "engine": {"choices": ["fused", "tables"]},
    },
)
P = run.params

# %% tags=["hide-cell"]
import matplotlib.pyplot as plt
import pandas as pd

from nlcl.harness import results
from nlcl.harness.ledger import ledger_path, make_check, read_ledger
from nlcl.tian.plots import plot_filters
from nlcl.tian.tokens import chapter as tokens
from nlcl.tian.tokens import figures, oracle_tables, paper_scale
from nlcl.tian.tokens.chapter import ACT_LABEL
from nlcl.tian.tokens.grid import (
    TokenRun,
    grid_parameters,
    paper_grid,
    runs_from_table,
    train_token_runs,
)
from nlcl.tian.tokens.metrics import grid_predicates, grid_predicates_per_seed
from nlcl.tian.tokens.paper_scale import FIGURES, SENSITIVITY_LR
from nlcl.tian.tokens.world import make_token_worlds

# %% [markdown]
# ## What the paper predicts
#
# The claims are declared in the ledger before anything is trained, and evaluated on the
# **paper-scale** grids (the committed full-profile results, or this run when it is itself the
# full profile); the live `ci` run below only illustrates the trends. A claim is *required* when
# those results are in the paper's setting (learning rate $2\times10^{-3}$, $\tau=0.1$, 5000 steps,
# the full $\beta\times P$ grid).
#
# * **Specialization (Theorem 4, Fig. 9).** With one candidate per RF ($P=1$) there is one pattern to
#   learn and a linear network does as well as ReLU. With $P>1$ a linear network's filters all
#   converge to the same dominant pattern, while ReLU filters can specialize to different tokens:
#   ReLU should beat linear, and gain from more filters (larger $\beta$), where linear stays flat.
# * **Global modulation (Theorems 5-6).** Tokens that no generator uses should not be learned:
#   ReLU should have the lowest $\bar\chi_-$ of the five activations.
# * **The loss (Corollary 2, Fig. 10).** InfoNCE's pairwise importance focuses on hard negatives, so
#   it should learn the candidates at least as well as the quadratic loss.
# * **BatchNorm (App. D, Fig. 11, Table 1).** With strongly non-uniform token norms ($\zeta=10$)
#   BatchNorm should help, and not backpropagating through $\sigma^2$ should be at least as good as
#   backpropagating it; our Table 1 is also compared with the paper's values.
# * **The filters (Fig. 5).** At $P=3$, $\beta=5$ the ReLU filters of every RF should each
#   concentrate on one candidate token, together covering all of $R_k^g$, and the linear filters
#   should not (claims in the Fig. 5 section, on live runs in every profile).
#
# ```{nlcl-claims} tokens-p1-linear-vs-relu tokens-relu-beats-linear tokens-relu-grows-with-beta tokens-linear-flat-in-beta tokens-relu-lowest-chi-minus tokens-infonce-beats-quadratic tokens-bn-helps-at-zeta10 tokens-table1-no-var-backprop tokens-table1-vs-paper
# ```
#
# **Seeds.** Each predicate is decided, as the paper's figures are drawn, on cells that average
# five seeds (the paper uses 3). The same quantity on each seed's grid alone is recorded beside
# it: the spread over seeds, the fraction of seeds on which the predicate holds, and a flag where
# the margin to the threshold is smaller than the seed spread (see "Seed spread of the grid
# claims").
#
# **Learning rate.** The paper states $\eta=2\times10^{-3}$; its released code uses $10^{-2}$. The
# same predicates, with the same tolerances, are evaluated on a second paper-scale grid trained at
# $\eta=10^{-2}$ (claims `tokens-lr0.01-*`, informational).
#
# **Where the verdicts come from.** At $\eta = 2\times10^{-3}$ the tables the claims are measured
# on are, in this run, {glue:text}`tokens-computed-main`. The `tokens-lr0.01-*` verdicts are read in
# both profiles from the committed grids at $10^{-2}$; each claim's record says where it was
# computed, and the claims table at the end shows it.
#
# **Not-reproduced explanations.** Where a claim fails, its explanation in the ledger covers the
# failure only if a prediction it makes holds, tested on diagnostics measured in this run before
# the claim. The unconverged filters at $\eta = 2\times10^{-3}$ would predict that the claim's own
# predicate holds on the same grid at $\eta=10^{-2}$, but that grid is read from a committed
# artifact, which no run can contradict, and ReLU's rank in $\bar\chi_-$ comes from the grid that
# names the lowest activation. The required grid claims therefore carry no explanation and fail
# where they fail. ReLU's growth with $\beta$ does not hold at $\eta=10^{-2}$ either
# ({glue:text}`tokens-lr0.01-relu-grows-with-beta`), so `tokens-relu-grows-with-beta` is
# informational and recorded as failed.

# %% [markdown]
# The committed paper-scale grids are loaded first: in the `ci` profile the grids at this run's
# $\eta$, in every profile the grids at $\eta = 10^{-2}$. A claim on a figure is required when this
# run is in the paper's setting and that figure's table is the complete paper grid.
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.load_artifact
# ```

# %% tags=["hide-input"]
seeds = [run.seed + i for i in range(P.n_seeds)]
artifacts = (
    {
        fig: paper_scale.load_artifact(results, "tian-tokens-full", fig, P.lr)
        for fig in FIGURES
    }
    if run.profile == "ci"
    else {fig: None for fig in FIGURES}
)
sens_artifacts = {
    fig: paper_scale.load_artifact(
        results, "tian-tokens-full-lr0.01", fig, SENSITIVITY_LR
    )
    for fig in FIGURES
}

# %% [markdown]
# In the full profile, the committed extra seeds that join this run's own grid:
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.load_extra_for_live
# ```

# %% tags=["hide-input"]
extra_live = {
    fig: paper_scale.load_extra_for_live(results, fig, P.lr, P.steps, seeds)
    if run.profile == "full"
    else None
    for fig in FIGURES
}
claim_source = {
    fig: "artifact" if artifacts[fig] is not None else "live" for fig in FIGURES
}

# %% [markdown]
# Whether a table is the complete paper grid, and where it comes from:
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.describe nlcl.tian.tokens.paper_scale.is_complete
# ```

# %% tags=["hide-input"]
complete = {
    fig: artifacts[fig] is not None
    and paper_scale.is_complete(artifacts[fig].table, fig, P.lr, P.tau)
    for fig in FIGURES
}
required = {
    fig: run.paper_setting and (complete[fig] or run.profile == "full")
    for fig in FIGURES
}
run.glue(
    "tokens-artifact-fig9",
    paper_scale.describe(artifacts["fig9"], "fig9", run.profile, short=True),
)

# %% [markdown]
# The ledger, declared before anything is measured:

# %%
run.show_ledger(
    required_fig9=required["fig9"],
    required_fig10=required["fig10"],
    required_fig11=required["fig11"],
    required_table1=required["table1"],
)

# %% [markdown]
# ## The live run
#
# The grid lists the runs of the four experiments; the trainer runs them in stacks of equal $M$,
# each stack one vectorized computation over its runs (different activations, losses, BatchNorm
# variants, $P$, $\zeta$ and seeds side by side). A run's data and initialization depend only on
# its own seed, so the stacking changes the results only through float rounding (which a few
# sigmoid runs amplify over 5000 steps).
#
# ```{nlcl-source} nlcl.tian.tokens.grid.paper_grid nlcl.tian.tokens.grid.train_token_runs nlcl.tian.tokens.grid.runs_from_table
# ```

# %%
grid = paper_grid(
    FIGURES, seeds=seeds, betas=P.betas, Ps=P.Ps, zetas=P.zetas, lr=P.lr, tau=P.tau
)
live = train_token_runs(
    runs_from_table(grid),
    P.steps,
    device=run.device,
    workers=P.workers,
    engine=P.engine,
)
live_table = grid[["figure"]].join(live.table)

# %%
run.glue("tokens-live-runs", len(live_table))
run.glue("tokens-live-wall", round(live.wall_s, 1))
run.glue("tokens-live-rate", round(live.run_steps_per_s))
print(
    f"{len(live_table)} runs x {P.steps} steps in {live.wall_s:.1f} s "
    f"({live.run_steps_per_s:.0f} run-steps/s on {run.device_name})"
)

# %% [markdown]
# In the full profile the live grid is the paper-scale grid: it is saved as the artifacts
# `results/tian-tokens-full-<figure>.json` that the `ci` profile reads.
#
# ```{nlcl-source} nlcl.tian.tokens.grid.grid_parameters
# ```

# %% tags=["hide-input"]
if run.profile == "full":
    for fig in FIGURES:
        live_fig = live_table[live_table.figure == fig].reset_index(drop=True)
        extent = (
            "complete"
            if paper_scale.is_complete(live_fig, fig, P.lr, P.tau)
            else "PARTIAL"
        )
        run.artifact(
            f"tian-tokens-full-{fig}",
            lambda: live_fig,  # noqa: B023 - called at once, inside this iteration
            params={**grid_parameters(P.steps, P.lr, seeds), "figure": fig},
            notes=f"{extent} grid, written by book/tian-tokens.py --profile full",
        )

# %% [markdown]
# The live run: {glue:text}`tokens-live-runs` runs in {glue:text}`tokens-live-wall` s
# ({glue:text}`tokens-live-rate` run-steps per second).
#
# ## Figure 9 (Fig. 4, top row): InfoNCE, five activations
#
# $\bar\chi_+$ (top) and $\bar\chi_-$ (bottom) against $\beta$, one line per $P$, mean ± std over
# seeds; sigmoid is the non-homogeneous control. First the live run, then (in the `ci` profile)
# the paper-scale artifact.
#
# ```{nlcl-source} nlcl.tian.tokens.figures.beta_curves
# ```

# %%
title = f"Fig. 9, InfoNCE — live {run.profile} run"
figures.beta_curves(live_table, "fig9", "activation", ACT_LABEL.get, title)
plt.show()

# %%
if artifacts["fig9"] is not None:
    where = paper_scale.describe(artifacts["fig9"], "fig9", run.profile, short=True)
    figures.beta_curves(
        artifacts["fig9"].table,
        "fig9",
        "activation",
        ACT_LABEL.get,
        f"Fig. 9, InfoNCE — {where}",
    )
    plt.show()

# %% [markdown]
# ## Figure 10: the quadratic loss

# %%
title = f"Fig. 10, quadratic loss — live {run.profile} run"
figures.beta_curves(live_table, "fig10", "activation", ACT_LABEL.get, title)
plt.show()

# %%
if artifacts["fig10"] is not None:
    where = paper_scale.describe(artifacts["fig10"], "fig10", run.profile, short=True)
    title = f"Fig. 10, quadratic loss — {where}"
    figures.beta_curves(
        artifacts["fig10"].table, "fig10", "activation", ACT_LABEL.get, title
    )
    plt.show()

# %% [markdown]
# ## Figure 11: BatchNorm under non-uniformity ζ (ReLU, InfoNCE)
#
# One column per $(\zeta, \text{BN})$; "vanilla" BatchNorm backpropagates through both batch
# statistics.
#
# ```{nlcl-source} nlcl.tian.tokens.figures.fig11_curves
# ```

# %%
figures.fig11_curves(live_table, f"Fig. 11 — live {run.profile} run")
plt.show()
if artifacts["fig11"] is not None:
    where = paper_scale.describe(artifacts["fig11"], "fig11", run.profile, short=True)
    figures.fig11_curves(artifacts["fig11"].table, f"Fig. 11 — {where}")
    plt.show()

# %% [markdown]
# ## Table 1: which BatchNorm statistics to backpropagate (ζ = 10)
#
# Columns: backprop through $\mu_k$ (yes/no) × through $\sigma_k^2$ (yes/no). Each cell shows our
# mean ± std, the paper's value, and the difference (ours − paper).
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.table1
# ```

# %%
live_t1, live_t1_wide = tokens.table1(live_table)
print(f"Table 1 — live {run.profile} run")
display(live_t1_wide)
if artifacts["table1"] is not None:
    art_t1, art_t1_wide = tokens.table1(artifacts["table1"].table)
    print(
        f"Table 1 — {paper_scale.describe(artifacts['table1'], 'table1', run.profile)}"
    )
    display(art_t1_wide)

# %% [markdown]
# ## Figure 5: the learned filters at P = 3, β = 5, and the learning rate
#
# One heat map per RF (rows: the $M=15$ filters, columns: the 20 tokens; ticks mark $R_k^g$; each
# filter scaled to unit max-abs), ReLU and linear with the same seed and data, InfoNCE, trained for
# {glue:text}`tokens-fig5-steps` minibatches. The paper states $\eta = 2\times10^{-3}$; its released
# configuration uses $10^{-2}$, so we train and show both (the first seed of the training-curve runs
# below: one stack).
#
# ```{nlcl-source} nlcl.tian.tokens.grid.TokenRun
# ```

# %%
fig5_lrs = list(dict.fromkeys([P.lr, SENSITIVITY_LR]))
curve_seed_list = [run.seed + i for i in range(P.curve_seeds)]
curve_runs = [
    TokenRun(a, beta=5, P=3, seed=s, lr=l, tau=P.tau)
    for l in fig5_lrs
    for a in ("relu", "linear")
    for s in curve_seed_list
]
# Fig. 5 shows the first seed
fig5_index = [i for i, r in enumerate(curve_runs) if r.seed == run.seed]

# %% [markdown]
# The token worlds (embeddings, candidates and generators) of those runs:
#
# ```{nlcl-source} nlcl.tian.tokens.world.make_token_worlds
# ```

# %%
CURVE_EVERY = max(1, P.fig5_steps // 50)
fig5 = train_token_runs(
    curve_runs,
    P.fig5_steps,
    device=run.device,
    keep_weights=range(len(curve_runs)),
    record_every=CURVE_EVERY,
)
world5 = make_token_worlds([run.seed], 3)
run.glue("tokens-fig5-steps", P.fig5_steps)

# %% [markdown]
# The end scores of the Fig. 5 runs at both learning rates (the first seed), then the filters.

# %% tags=["hide-input"]
t5 = fig5.table
for tag, lr_value in (("lr1", P.lr), ("lr2", SENSITIVITY_LR)):
    for act_name in ("relu", "linear"):
        pick = (t5.activation == act_name) & (t5.lr == lr_value) & (t5.seed == run.seed)
        row = t5[pick].iloc[0]
        run.glue(
            f"tokens-fig5-{act_name}-{tag}-chi-plus", round(float(row.chi_plus), 3)
        )
        run.glue(
            f"tokens-fig5-{act_name}-{tag}-chi-minus", round(float(row.chi_minus), 3)
        )
run.glue("tokens-fig5-lr1", f"{P.lr:g}")

# %% [markdown]
# The filter heat maps:
#
# ```{nlcl-source} nlcl.tian.plots.plot_filters
# ```

# %%
for i in fig5_index:
    r, row = curve_runs[i], fig5.table.iloc[i]
    name = {"relu": "ReLU", "linear": "linear"}[r.activation]
    scores = f"χ̄+ = {row.chi_plus:.2f}, χ̄− = {row.chi_minus:.2f}"
    title = f"Fig. 5, {name}, η = {r.lr:g}: {scores}"
    plot_filters(fig5.weights[i], world5.relevant[0], title=title)
    plt.show()
display(
    fig5.table.iloc[fig5_index][["activation", "lr", "chi_plus", "chi_minus"]].round(3)
)

# %% [markdown]
# With this run's $\eta =$ {glue:text}`tokens-fig5-lr1` (the paper's $2\times10^{-3}$ by default): ReLU
# $\bar\chi_+ =$ {glue:text}`tokens-fig5-relu-lr1-chi-plus` ($\bar\chi_- =$
# {glue:text}`tokens-fig5-relu-lr1-chi-minus`), linear $\bar\chi_+ =$ {glue:text}`tokens-fig5-linear-lr1-chi-plus`.
# With $\eta = 10^{-2}$: ReLU $\bar\chi_+ =$ {glue:text}`tokens-fig5-relu-lr2-chi-plus` ($\bar\chi_- =$
# {glue:text}`tokens-fig5-relu-lr2-chi-minus`), linear $\bar\chi_+ =$ {glue:text}`tokens-fig5-linear-lr2-chi-plus`.
#
# ### What Fig. 5 shows, measured
#
# The caption reads: "With ReLU activation, learned weights clearly capture the 3 candidate tokens
# within $R_k^g$ at each RF $R_k$, while linear activation cannot." A filter captures token $a$ when
# most of its squared norm lies on $\mathbf{u}_a$, $\cos^2(\mathbf{w}_{km}, \mathbf{u}_a) > \tfrac12$: the
# embeddings are orthonormal, so $a$ is then the one dominant token of its row in the heat map (for
# linear, $|\cos|$). The brightest cell of a row is not enough: a filter spread over the three
# candidates still has one of them on top. Per seed of the runs above, the share of the pairs
# $(R_k, a \in R_k^g)$ captured by some filter of $R_k$; the paper's reading is a share of 1 for
# ReLU (every candidate, every RF) and below 1 for linear, at each learning rate:
#
# ```{nlcl-claims} tokens-fig5-relu-captures tokens-fig5-linear-cannot tokens-lr0.01-fig5-relu-captures tokens-lr0.01-fig5-linear-cannot
# ```
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.fig5_capture nlcl.tian.tokens.metrics.candidates_captured
# ```

# %%
cap5 = tokens.fig5_capture(curve_runs, fig5.weights)
display(cap5.round(3))
share5 = {
    (a, lr_value): cap5[(cap5.activation == a) & (cap5.lr == lr_value)]
    for a in ("relu", "linear")
    for lr_value in (P.lr, SENSITIVITY_LR)
}
relu_fast = share5["relu", SENSITIVITY_LR]
run.diagnostic("fig5_relu_weakest_lr0_01", float(relu_fast.weakest.min()))
run.glue("tokens-fig5-weakest-relu-lr2", round(float(relu_fast.weakest.min()), 3))

# %%
run.claim("tokens-fig5-relu-captures").measure_seeds(share5["relu", P.lr].share)
run.claim("tokens-fig5-linear-cannot").measure_seeds(share5["linear", P.lr].share)
lin_fast = share5["linear", SENSITIVITY_LR].share
run.claim("tokens-lr0.01-fig5-relu-captures").measure_seeds(relu_fast.share)
run.claim("tokens-lr0.01-fig5-linear-cannot").measure_seeds(lin_fast)

# %% [markdown]
# The share is the mean over seeds; the weakest ReLU match at $\eta = 10^{-2}$, over candidates, RFs
# and seeds, is {glue:text}`tokens-fig5-weakest-relu-lr2` (a candidate is captured above
# $1/\sqrt2 \approx 0.707$). ReLU at $\eta =$ {glue:text}`tokens-fig5-lr1` captures
# {glue:text}`tokens-fig5-relu-captures:.2f` of the candidates, linear
# {glue:text}`tokens-fig5-linear-cannot:.2f`; at $\eta = 10^{-2}$, {glue:text}`tokens-lr0.01-fig5-relu-captures:.2f`
# and {glue:text}`tokens-lr0.01-fig5-linear-cannot:.2f`.
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
    fig5.table[["activation", "lr", "seed"]],
    left_on="run",
    right_index=True,
    validate="many_to_one",
)
curves["η"] = curves.lr.map(lambda v: f"{v:g}")
curves["activation"] = curves.activation.map({"relu": "ReLU", "linear": "linear"})

# %% [markdown]
# The training curves:
#
# ```{nlcl-source} nlcl.tian.tokens.figures.training_curves
# ```

# %%
run.glue("tokens-curve-seeds", P.curve_seeds)
run.glue("tokens-curve-every", CURVE_EVERY)
figures.training_curves(curves)
plt.show()

# %% [markdown]
# Per activation and learning rate (means over seeds): $\bar\chi_+$ untrained, at the last
# record before the final fifth of training and at the end, the share of the $\bar\chi_+$
# gain made in that last fifth, and the loss at the start and at the end.
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.curve_summary
# ```

# %% tags=["hide-input"]
T = P.fig5_steps
curve_table, late = tokens.curve_summary(curves, T)
display(curve_table.round(3))

# %% tags=["hide-input"]
for (act, lr_text), r in curve_table.iterrows():
    act_tag = "relu" if act == "ReLU" else "linear"
    tag = f"{act_tag}-{'lr1' if float(lr_text) == P.lr else 'lr2'}"
    share = r["share of the χ̄+ gain in the last fifth"]
    run.glue(f"tokens-curve-{tag}-init", round(float(r["χ̄+ untrained"]), 3))
    run.glue(f"tokens-curve-{tag}-end", round(float(r[f"χ̄+ at {T}"]), 3))
    run.glue(f"tokens-curve-{tag}-late-share", round(float(share), 2))
    late_gain = r[f"χ̄+ at {T}"] - r[f"χ̄+ at {late}"]
    run.glue(f"tokens-curve-{tag}-late-gain", round(float(late_gain), 3))
    run.glue(f"tokens-curve-{tag}-loss-end", round(float(r[f"loss at {T}"]), 3))
run.glue(
    "tokens-curve-loss-init", round(float(curve_table["loss untrained"].mean()), 2)
)
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
# Compare the two end losses, and the last-fifth gains with the gap between the two end values of
# $\bar\chi_+$. When the end losses are about equal, the objective's value does not tell the two
# rates apart: what differs is how specialized the filters are when the loss levels off, so "not
# converged" is true of the filters (their $\bar\chi_+$ still creeps up, at a rate that would need
# many times 5000 minibatches to close the gap) rather than of the loss. Why the larger rate
# reaches filters with much higher $\bar\chi_+$ at the same loss is not established here. A
# candidate we have not tested: weight decay acts through the product $\eta\lambda$, five times
# larger at $10^{-2}$, and shrinking the components of a filter that the loss does not need is what
# raises its cosine with its token.

# %% [markdown]
# ## Learning-rate sensitivity: the paper-scale grid at η = 10⁻²
#
# The same grid trained at the released code's $\eta=10^{-2}$, with seeds
# {glue:text}`tokens-lr0.01-seeds` (committed in `results/tian-tokens-full-lr0.01-*`): Fig. 9,
# Fig. 11 and Table 1, then every claim's quantity at both learning rates side by side.

# %%
sens_seeds = ", ".join(
    f"{fig}: {sorted(a.table.seed.unique().tolist())}"
    for fig, a in sens_artifacts.items()
    if a is not None
)
run.glue("tokens-lr0.01-seeds", sens_seeds or "none (no artifact)")

# %%
for fig in ("fig9", "fig10"):
    if sens_artifacts[fig] is not None:
        where = paper_scale.describe(sens_artifacts[fig], fig, run.profile, short=True)
        name = "Fig. 9, InfoNCE" if fig == "fig9" else "Fig. 10, quadratic loss"
        title = f"{name} — {where}"
        figures.beta_curves(
            sens_artifacts[fig].table, fig, "activation", ACT_LABEL.get, title
        )
        plt.show()

# %%
if sens_artifacts["fig11"] is not None:
    where = paper_scale.describe(
        sens_artifacts["fig11"], "fig11", run.profile, short=True
    )
    figures.fig11_curves(sens_artifacts["fig11"].table, f"Fig. 11 — {where}")
    plt.show()
if sens_artifacts["table1"] is not None:
    _, sens_t1_wide = tokens.table1(sens_artifacts["table1"].table)
    print(
        "Table 1 —",
        paper_scale.describe(sens_artifacts["table1"], "table1", run.profile),
    )
    display(sens_t1_wide)

# %% [markdown]
# ## Which scoring: $\bar\chi_-$ in the book and in the released code
#
# **The book's scoring** (`normaliser="cosine"`, the default): $\chi_-(R_k)$ averages, over the
# tokens $a$ that no generator fixes at $R_k$, the best cosine $\max_m \cos(\mathbf{w}_{km},
# \mathbf{u}_a)$, with $|\cos|$ for linear $h$:
#
# $$\chi_-(R_k) = \frac{1}{|\bar R_k^g|}\sum_{a\notin R_k^g} \max_m
# \frac{\mathbf{w}_{km}^\top\hat{\mathbf{u}}_a}{\|\mathbf{w}_{km}\|}.$$
#
# **The released code's scoring** (`check_result` calling `compute_score` in
# `ssl/real-dataset/bn_gen.py` of {cite:t}`luckmatters`) uses the same tokens, averages and maximum
# over filters, but a different denominator:
#
# $$\frac{\mathbf{w}_{km}^\top\hat{\mathbf{u}}_a}{\|\mathbf{w}_{km}\| + \max\big(\max_{m',b}
# |\mathbf{w}_{km'}^\top\hat{\mathbf{u}}_b|/1000,\ 10^{-6}\big)}$$
#
# (`normaliser="released"`). The two agree when the filters of an RF have comparable norms. They
# differ when weight decay has shrunk some filters to about a thousandth of the RF's largest
# weight: such a filter can still have a cosine near 1 with a token that no generator uses, and
# the released ratio discounts it. Under the quadratic loss many filters decay this way. **The book
# reports the cosine** (Eq. 181 is a cosine); the released score is shown beside it.
#
# **The released trainer, run independently.** `tests/oracle/released_trainer.py` re-implements
# the released trainer literally and shares no code with nlcl; given the same generators, batches
# and initial weights, nlcl's trainer ends with the same weights to $10^{-9}$. With their own
# seeds, the two are compared as distributions on a grid of five activations × BN {none, mean} ×
# {InfoNCE, quadratic} at the released README's configuration ($P=5$, $\beta=5$,
# $d_\text{out}=50$, $\eta=0.02$, 5000 steps, $\zeta=1$). The committed record
# `results/tian-tokens-oracle.json` holds both trainers' runs, every run scored both ways; this
# chapter only reads it. A cell agrees when the means differ by at most
# $\max(0.02,\ 2\sqrt{\text{se}_\text{oracle}^2+\text{se}_\text{nlcl}^2})$ for both $\bar\chi_+$ and
# $\bar\chi_-$.
#
# If the difference between the book's $\bar\chi_-$ and the released code's comes from the scoring
# and not from the trainer, then the released normaliser reproduces `check_result`, nlcl scored
# like the oracle agrees with it in the five quadratic-loss cells where the two scorings differ
# most (BN mean with $x^2$; no BN with ReLU, LeakyReLU, linear and $x^2$), the book's cosine lifts
# $\bar\chi_-$ above the oracle's there, and most of the whole grid agrees:
#
# ```{nlcl-claims} tokens-released-normaliser-is-check-result tokens-oracle-bold-cells-agree-released-scoring tokens-oracle-bold-cells-cosine-gap tokens-oracle-grid-agrees-released-scoring
# ```
#
# The cells, their bars and the table:
#
# ```{nlcl-source} nlcl.tian.tokens.oracle_tables.oracle_cells nlcl.tian.tokens.figures.oracle_bars nlcl.tian.tokens.oracle_tables.oracle_table
# ```

# %%
oracle_record = results.records("tian-tokens-oracle").get("tian-tokens-oracle")
ORACLE_FILE = (
    "results/tian-tokens-oracle.json"  # both profiles read the committed record
)
ORACLE_GLUE = ("status", "differ", "x2bn-oracle", "x2bn-cosine", "x2bn-released")
if oracle_record is None:
    print(
        "results/tian-tokens-oracle.json is missing: run tests/oracle/compare_oracle.py"
    )
    for g in ORACLE_GLUE + ("bold-before", "bold-after"):
        run.glue(f"tokens-oracle-{g}", "n/a")
else:
    oc = oracle_tables.oracle_cells(oracle_record)
    bold = oc[oc.bold]
    display(oracle_tables.oracle_table(oc, oracle_record))
    figures.oracle_bars(bold)
    plt.show()

# %% [markdown]
# The four checks, read from the committed record:

# %%
if oracle_record is not None:
    max_diff = float(oracle_record["nlcl_released_scoring_max_abs_diff"])
    n_agree = int(bold.verdict_released.str.startswith("agrees").sum())
    gap = float((bold.nlcl_cosine_chi_minus - bold.oracle_chi_minus).mean())
    agree = round(float(oc.verdict_released.str.startswith("agrees").mean()), 3)
    run.claim("tokens-released-normaliser-is-check-result").measure(
        max_diff, read_from=ORACLE_FILE
    )
    run.claim("tokens-oracle-bold-cells-agree-released-scoring").measure(
        n_agree, read_from=ORACLE_FILE
    )
    run.claim("tokens-oracle-bold-cells-cosine-gap").measure(
        round(gap, 3), read_from=ORACLE_FILE
    )
    run.claim("tokens-oracle-grid-agrees-released-scoring").measure(
        agree, read_from=ORACLE_FILE
    )

# %% tags=["hide-input"]
if oracle_record is not None:
    is_x2bn = (
        (oc.loss == "quadratic") & (oc.bn == "mean") & (oc.activation == "quadratic")
    )
    x2 = oc[is_x2bn].iloc[0]
    run.glue("tokens-oracle-status", oracle_record["status"])
    differ = oc[~oc.verdict_released.str.startswith("agrees")]
    differ_text = "; ".join(
        f"{c} ({n} oracle seeds)" for c, n in zip(differ.cell, differ.n_oracle)
    )
    run.glue("tokens-oracle-differ", differ_text or "none")
    run.glue(
        "tokens-oracle-x2bn-oracle", f"{x2.oracle_chi_minus:.3f} ({x2.n_oracle} seeds)"
    )
    run.glue("tokens-oracle-x2bn-cosine", f"{x2.nlcl_cosine_chi_minus:.3f}")
    run.glue("tokens-oracle-x2bn-released", f"{x2.nlcl_released_chi_minus:.3f}")
    run.glue("tokens-oracle-bold-before", f"{gap:+.3f}")
    after = float((bold.nlcl_released_chi_minus - bold.oracle_chi_minus).mean())
    run.glue("tokens-oracle-bold-after", f"{after:+.3f}")

# %% [markdown]
# In the quadratic-loss, BN-mean, $x^2$ cell the oracle's $\bar\chi_-$ is
# {glue:text}`tokens-oracle-x2bn-oracle`; nlcl's is {glue:text}`tokens-oracle-x2bn-cosine` with the
# book's cosine and {glue:text}`tokens-oracle-x2bn-released` with the released normaliser. Over the
# five quadratic-loss cells, nlcl minus oracle in $\bar\chi_-$ is {glue:text}`tokens-oracle-bold-before`
# on average with the cosine and {glue:text}`tokens-oracle-bold-after` with the released normaliser.
# The record's status: {glue:text}`tokens-oracle-status`. Cells where nlcl, scored like the
# oracle, does not agree with it: {glue:text}`tokens-oracle-differ`.

# %% [markdown]
# **Do the remaining differences replicate?** Every cell that differs under the released scoring
# is trained again by both trainers at the fresh seeds 5–9, which no run of the record used. The
# difference *replicates* when, on the fresh seeds alone, the cell differs again by the same rule,
# in a score that differed in the record, with the same sign. Twenty cells × two scores compared
# at about two standard errors give a couple of differences by chance, so the prediction is that
# none replicates:
#
# ```{nlcl-claims} tokens-oracle-differences-replicate
# ```
#
# ```{nlcl-source} nlcl.tian.tokens.oracle_tables.replication_rows nlcl.tian.tokens.oracle_tables.cell_name
# ```

# %%
replication = results.records("tian-tokens-oracle-replication").get(
    "tian-tokens-oracle-replication"
)
REPLICATION_FILE = "results/tian-tokens-oracle-replication.json"
if replication is None or oracle_record is None:
    print(f"{REPLICATION_FILE} is missing: run tests/oracle/replicate_differing.py")
    run.glue("tokens-oracle-replicates", "n/a")
    run.glue("tokens-oracle-same-sign", "n/a")
else:
    rep_rows, same_sign = oracle_tables.replication_rows(replication)
    rep_table = pd.DataFrame(rep_rows)
    display(rep_table.set_index(["cell", "score"]) if rep_rows else "no differing cell")
    run.glue("tokens-oracle-same-sign", ", ".join(same_sign) or "none")
    replicating = [c for c in replication["cells"] if c["replicates"]]
    run.claim("tokens-oracle-differences-replicate").measure(
        len(replicating), read_from=REPLICATION_FILE
    )
    names = "; ".join(
        oracle_tables.cell_name(c["loss"], c["bn"], c["activation"])
        for c in replicating
    )
    run.glue(
        "tokens-oracle-replicates", names or f"none of {len(replication['cells'])}"
    )

# %% [markdown]
# Cells whose difference replicates at fresh seeds: {glue:text}`tokens-oracle-replicates`.
# Differences that keep their sign on the fresh seeds, though within the tolerance there (a
# systematic difference smaller than the tolerance is not excluded by ten seeds):
# {glue:text}`tokens-oracle-same-sign`.
#
# **Finding.** In the quadratic-loss cells the $\bar\chi_-$ gap closes once the trainers are scored
# alike (nlcl − oracle, mean over the five cells: {glue:text}`tokens-oracle-bold-before` with the
# cosine, {glue:text}`tokens-oracle-bold-after` with the released normaliser): most of the gap is
# the denominator, not the model, the data or the update. The paper's Eq. 181 is a cosine, which
# the book keeps, so under the quadratic loss the book's $\bar\chi_-$ is higher than what the
# released code prints for the same weights; $\bar\chi_+$ moves much less, because the filters that
# match candidate tokens are the large ones.

# %% [markdown]
# ## Measuring the claims
#
# Every claim's quantity is computed from the four result tables (cells averaged over seeds), and
# on each seed's grid alone for the spread. At $\eta = 2\times10^{-3}$ the tables are
# {glue:text}`tokens-computed-main`; at $\eta = 10^{-2}$ they are read from the committed grid in
# every profile. The diagnostics that the explanations' predictions test are given first, then the
# claims are measured; the table after the claims lists each prediction, its diagnostic and
# whether it held.
#
# ```{nlcl-source} nlcl.tian.tokens.metrics.grid_predicates_per_seed nlcl.tian.tokens.paper_scale.table_for nlcl.tian.tokens.metrics.grid_predicates
# ```

# %% tags=["hide-input"]
main_tables = [
    paper_scale.table_for(f, claim_source, artifacts, live_table, extra_live)
    for f in FIGURES
]
empty = pd.DataFrame(columns=live_table.columns)
sens_tables = [
    sens_artifacts[f].table if sens_artifacts[f] is not None else empty for f in FIGURES
]
main_values, sens_values = grid_predicates(*main_tables), grid_predicates(*sens_tables)
main_per_seed = grid_predicates_per_seed(*main_tables)
sens_per_seed = grid_predicates_per_seed(*sens_tables)

# %% [markdown]
# The files each claim is read from, as the claim records state them:
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.computed_text nlcl.tian.tokens.paper_scale.computed_main_text nlcl.tian.tokens.paper_scale.artifact_files
# ```

# %% tags=["hide-input"]
main_files = {
    f: paper_scale.artifact_files(artifacts[f])
    if claim_source[f] == "artifact"
    else None
    for f in FIGURES
}
sens_files = {
    f: paper_scale.artifact_files(a) if a is not None else None
    for f, a in sens_artifacts.items()
}
texts = {
    fig: paper_scale.computed_text(fig, main_files, seeds, extra_live)
    for fig in FIGURES
}
joined = {  # the committed extra seeds pooled with this run's own grid (full profile)
    f: paper_scale.artifact_files(extra_live[f])
    if extra_live[f] is not None and main_files[f] is None
    else None
    for f in FIGURES
}
run.glue("tokens-computed-main", paper_scale.computed_main_text(texts))

# %% [markdown]
# The diagnostics the explanations' predictions test: on the claims' own grid at
# $\eta = $ {glue:text}`tokens-fig5-lr1`, and on the same grid at $\eta = 10^{-2}$.
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.rounded
# ```

# %%
run.diagnostic("table1_minus_paper", tokens.rounded(main_values["table1_minus_paper"]))
run.diagnostic("lr0_01_table1_vs_paper", tokens.rounded(sens_values["table1_vs_paper"]))

# %% [markdown]
# The claims at $\eta = $ {glue:text}`tokens-fig5-lr1` (`tokens-*`) and at $\eta = 10^{-2}$
# (`tokens-lr0.01-*`):
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.grid_measurements
# ```

# %%
main = tokens.grid_measurements(main_values, main_per_seed, main_files, joined)
sens = tokens.grid_measurements(sens_values, sens_per_seed, sens_files)
run.claim("tokens-p1-linear-vs-relu").measure(**main["p1-linear-vs-relu"])
run.claim("tokens-lr0.01-p1-linear-vs-relu").measure(**sens["p1-linear-vs-relu"])
run.claim("tokens-relu-beats-linear").measure(**main["relu-beats-linear"])
run.claim("tokens-lr0.01-relu-beats-linear").measure(**sens["relu-beats-linear"])
run.claim("tokens-relu-grows-with-beta").measure(**main["relu-grows-with-beta"])
run.claim("tokens-lr0.01-relu-grows-with-beta").measure(**sens["relu-grows-with-beta"])
run.claim("tokens-linear-flat-in-beta").measure(**main["linear-flat-in-beta"])
run.claim("tokens-lr0.01-linear-flat-in-beta").measure(**sens["linear-flat-in-beta"])

# %%
run.claim("tokens-infonce-beats-quadratic").measure(**main["infonce-beats-quadratic"])
run.claim("tokens-lr0.01-infonce-beats-quadratic").measure(
    **sens["infonce-beats-quadratic"]
)
run.claim("tokens-relu-lowest-chi-minus").measure(**main["relu-lowest-chi-minus"])
run.claim("tokens-lr0.01-relu-lowest-chi-minus").measure(
    **sens["relu-lowest-chi-minus"]
)
run.claim("tokens-bn-helps-at-zeta10").measure(**main["bn-helps-at-zeta10"])
run.claim("tokens-lr0.01-bn-helps-at-zeta10").measure(**sens["bn-helps-at-zeta10"])
run.claim("tokens-table1-no-var-backprop").measure(**main["table1-no-var-backprop"])
run.claim("tokens-lr0.01-table1-no-var-backprop").measure(
    **sens["table1-no-var-backprop"]
)
run.claim("tokens-table1-vs-paper").measure(**main["table1-vs-paper"])
run.claim("tokens-lr0.01-table1-vs-paper").measure(**sens["table1-vs-paper"])

# %% [markdown]
# Every claim's quantity at both learning rates side by side, then each prediction of the
# explanations at $\eta = $ {glue:text}`tokens-fig5-lr1`, its diagnostic and whether it held.
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.grid_checks
# ```

# %%
ledger_claims = read_ledger(ledger_path("tian-tokens")).claims
checks = tokens.grid_checks(ledger_claims, make_check)
side_by_side = pd.DataFrame(
    [
        {
            "claim": f"tokens-{cid}",
            "check": checks[cid].description,
            f"η = {P.lr:g}": main[cid]["measured"],
            f"η = {SENSITIVITY_LR:g}": sens[cid]["measured"],
        }
        for cid in checks
    ]
).set_index("claim")
display(side_by_side)

# %% [markdown]
# The predictions of the not-reproduced explanations, row by row:
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.prediction_rows
# ```

# %%
grid_ids = [f"tokens-{cid}" for cid in checks]
sens_ids = [f"tokens-lr0.01-{cid}" for cid in checks]
records, diagnostics = run.registry.records, run.registry.diagnostics
predictions = tokens.prediction_rows(
    records, grid_ids, diagnostics, ledger_claims, make_check
)
display(pd.DataFrame(predictions).set_index(["claim", "quantity"]))

# %% [markdown]
# ### Seed spread of the grid claims
#
# Each claim's quantity on each seed's grid alone, beside the value decided on the seed-averaged
# cells. "holds on" counts the seeds whose own grid satisfies the predicate; "margin < spread"
# marks a decided value whose distance to the threshold is smaller than the standard deviation
# over seeds: with so few seeds, such a verdict (pass or not) is not settled by these runs.
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.spread_rows
# ```

# %%
spread = pd.DataFrame(
    tokens.spread_rows(run.registry.records, grid_ids, f"η = {P.lr:g}")
    + tokens.spread_rows(run.registry.records, sens_ids, f"η = {SENSITIVITY_LR:g}")
)
if len(spread):
    display(spread.set_index(["grid", "claim"]))
    within = spread[spread["margin < spread"] == "yes"]
    split = spread[
        ~spread["holds on"].str.split("/").map(lambda x: x[0] in ("0", x[1]))
    ]
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
# If the paper's claims are about the networks and not about how they are scored, every claim's
# predicate gives the same verdict under each other scoring as under the book's: the released
# normaliser, $\lvert\cos\rvert$ for both sign-symmetric activations (linear and $x^2$), and the
# printed Eqs. 16/181 (signed cosine for every activation, $1/P$ prefactor). The paper-scale grids
# are re-scored where their tables carry the extra scores (a grid without a scoring's columns is
# skipped, which the table says); the live run always carries all of them.
#
# ```{nlcl-claims} tokens-released-scoring-same-verdicts tokens-sign-symmetric-scoring-same-verdicts tokens-printed-scoring-same-verdicts
# ```

# %%
live_by_fig = [
    live_table[live_table.figure == f].reset_index(drop=True) for f in FIGURES
]
grids = {
    f"live {run.profile}, η = {P.lr:g}": live_by_fig,
    f"paper scale, η = {P.lr:g}": main_tables,
    f"paper scale, η = {SENSITIVITY_LR:g}": sens_tables,
}
if run.profile == "full":
    del grids[
        f"live {run.profile}, η = {P.lr:g}"
    ]  # the paper-scale grid is the live run

# %% [markdown]
# Every claim's quantity under each scoring:
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.scoring_comparison
# ```

# %%
OTHER_SCORINGS = ("released", "sign-symmetric", "printed")
scoring_table, same = tokens.scoring_comparison(grids, checks, OTHER_SCORINGS)
display(scoring_table)

# %% [markdown]
# The three checks: each other scoring gives every claim the book's verdict (NaN where no grid
# carries the scores).

# %%
same_released = bool(all(same["released"])) if same["released"] else float("nan")
same_symmetric = (
    bool(all(same["sign-symmetric"])) if same["sign-symmetric"] else float("nan")
)
same_printed = bool(all(same["printed"])) if same["printed"] else float("nan")
run.claim("tokens-released-scoring-same-verdicts").measure(same_released)
run.claim("tokens-sign-symmetric-scoring-same-verdicts").measure(same_symmetric)
run.claim("tokens-printed-scoring-same-verdicts").measure(same_printed)

# %% tags=["hide-input"]
differs = "; ".join(
    f"{c} on {g} under the {sc} scoring"
    for (g, c), r in scoring_table.iterrows()
    for sc in OTHER_SCORINGS
    if "differs" in str(r[sc])
)
run.glue("tokens-scoring-differs", differs or "none")

# %% [markdown]
# The quantities under the printed and sign-symmetric scorings that the text below quotes:
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.scoring_cell
# ```

# %% tags=["hide-input"]
for tag, lr_value in (("lr1", P.lr), ("lr2", SENSITIVITY_LR)):
    name = f"paper scale, η = {lr_value:g}"
    p1 = tokens.scoring_cell(scoring_table, name, "p1-linear-vs-relu", "printed")
    flat = tokens.scoring_cell(scoring_table, name, "linear-flat-in-beta", "printed")
    lowest = tokens.scoring_cell(
        scoring_table, name, "relu-lowest-chi-minus", "sign-symmetric"
    )
    run.glue(f"tokens-printed-p1-{tag}", p1)
    run.glue(f"tokens-printed-linear-flat-{tag}", flat)
    run.glue(f"tokens-symmetric-lowest-{tag}", lowest)

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
# Table 1 are trained again with pooled moments (the `pooled-*` variants of the network; the token
# table engine computes them exactly as autograd does), at both learning rates, 5 seeds,
# everything else as in the paper-scale grids:
# `nlcl train-grid --figures fig11 table1 --seeds 0 1 2 3 4 --bn-moments pooled --prefix tian-tokens-full-bnpooled`
# (and `--lr 0.01 --prefix tian-tokens-full-lr0.01-bnpooled`). Runs without BatchNorm do not depend
# on the choice: Fig. 11's no-BN cells are the per-view grid's, on the same seeds. Both profiles
# read these committed grids.
#
# If the moments matter, a verdict differs between the two columns of the table below. The three
# BatchNorm claims are evaluated with the same predicates and tolerances on the pooled grids, as
# informational claims; the required claims stay on the released code's per-view moments. A pooled
# claim at $\eta = 2\times10^{-3}$ carries the not-reproduced explanation of its per-view
# counterpart (filters unconverged at that rate), with the same prediction tested on the pooled
# grids.
#
# ```{nlcl-claims} tokens-bnpooled-bn-helps-at-zeta10 tokens-bnpooled-table1-no-var-backprop tokens-bnpooled-table1-vs-paper tokens-lr0.01-bnpooled-bn-helps-at-zeta10 tokens-lr0.01-bnpooled-table1-no-var-backprop tokens-lr0.01-bnpooled-table1-vs-paper
# ```
#
# The committed pooled grids:
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.load_pooled
# ```

# %% tags=["hide-input"]
pooled_arts = {
    "bnpooled": {
        fig: paper_scale.load_pooled(results, "tian-tokens-full-bnpooled", fig, 2e-3)
        for fig in ("fig11", "table1")
    },
    "lr0.01-bnpooled": {
        fig: paper_scale.load_pooled(
            results, "tian-tokens-full-lr0.01-bnpooled", fig, SENSITIVITY_LR
        )
        for fig in ("fig11", "table1")
    },
}

# %% [markdown]
# Each pooled grid joined with the per-view runs it shares:
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.pooled_grids
# ```

# %% tags=["hide-input"]
pooled = {
    "bnpooled": tokens.pooled_grids(pooled_arts["bnpooled"], main_tables, main_files)
    if all(pooled_arts["bnpooled"].values())
    else None,
    "lr0.01-bnpooled": tokens.pooled_grids(
        pooled_arts["lr0.01-bnpooled"], sens_tables, sens_files
    )
    if all(pooled_arts["lr0.01-bnpooled"].values())
    else None,
}

# %% [markdown]
# The claims' quantities on the pooled grids, and on the per-view grids restricted to the same
# seeds for a like-for-like comparison:
#
# ```{nlcl-source} nlcl.tian.tokens.chapter.pooled_rows
# ```

# %%
POOLED_LR = {"bnpooled": 2e-3, "lr0.01-bnpooled": SENSITIVITY_LR}
pooled_values, pooled_rows_all, pooled_t1 = {}, [], {}
for tag, pg in pooled.items():
    if pg is None:
        continue
    values_p = grid_predicates(*pg["tables"])
    per_seed_p = grid_predicates_per_seed(*pg["tables"])
    pooled_values[tag] = (
        tokens.grid_measurements(values_p, per_seed_p, pg["files"]),
        values_p,
    )
    values_v = grid_predicates(*pg["view_same"])
    lr_value = POOLED_LR[tag]
    pooled_rows_all += tokens.pooled_rows(
        lr_value, values_v, values_p, checks, len(pg["seeds"])
    )
    vt1 = main_tables[3] if tag == "bnpooled" else sens_tables[3]
    view_t1 = tokens.table1(vt1[vt1.seed.isin(pg["seeds"])])[0]
    pooled_t1[lr_value] = (view_t1, tokens.table1(pg["tables"][3])[0])

# %% [markdown]
# The diagnostics of the pooled claims' explanations at $\eta = 2\times10^{-3}$ (their bets on
# the pooled grid itself and on the pooled grid at $\eta = 10^{-2}$), then the six claims:

# %%
if "bnpooled" in pooled_values:
    value = pooled_values["bnpooled"][1]["table1_minus_paper"]
    run.diagnostic("bnpooled_table1_minus_paper", tokens.rounded(value))
if "lr0.01-bnpooled" in pooled_values:
    fast = pooled_values["lr0.01-bnpooled"][1]
    bn_fast = tokens.rounded(fast["bn_minus_none_zeta10"])
    run.diagnostic("lr0_01_bnpooled_bn_minus_none_zeta10", bn_fast)
    run.diagnostic(
        "lr0_01_bnpooled_table1_vs_paper", tokens.rounded(fast["table1_vs_paper"])
    )

# %%
if "bnpooled" in pooled_values:
    pm = pooled_values["bnpooled"][0]
    run.claim("tokens-bnpooled-bn-helps-at-zeta10").measure(**pm["bn-helps-at-zeta10"])
    run.claim("tokens-bnpooled-table1-no-var-backprop").measure(
        **pm["table1-no-var-backprop"]
    )
    run.claim("tokens-bnpooled-table1-vs-paper").measure(**pm["table1-vs-paper"])

# %%
if "lr0.01-bnpooled" in pooled_values:
    pm = pooled_values["lr0.01-bnpooled"][0]
    run.claim("tokens-lr0.01-bnpooled-bn-helps-at-zeta10").measure(
        **pm["bn-helps-at-zeta10"]
    )
    run.claim("tokens-lr0.01-bnpooled-table1-no-var-backprop").measure(
        **pm["table1-no-var-backprop"]
    )
    run.claim("tokens-lr0.01-bnpooled-table1-vs-paper").measure(**pm["table1-vs-paper"])

# %%
pooled_table = pd.DataFrame(pooled_rows_all)
if len(pooled_table):
    display(pooled_table.set_index(["η", "claim"]))
    differs = ", ".join(
        f"{r.claim} at η = {r['η']}"
        for _, r in pooled_table.iterrows()
        if not r["same verdict"]
    )
    run.glue("tokens-pooled-differs", differs or "none")
else:
    run.glue("tokens-pooled-differs", "not measured (no pooled grid committed)")

# %% [markdown]
# Verdicts that differ between per-view and pooled moments: {glue:text}`tokens-pooled-differs`.
# Table 1 cell by cell: the mean $\bar\chi_+$ over the same seeds with pooled moments minus that
# with per-view moments (rows $(\beta, P)$, columns the four backprop variants):
#
# ```{nlcl-source} nlcl.tian.tokens.figures.pooled_table1_diff
# ```

# %%
if pooled_t1:
    figures.pooled_table1_diff(pooled_t1)
    plt.show()
else:
    print("No pooled grid committed.")

# %% [markdown]
# ## Speed
#
# The trainer's speed is measured by `make bench` (`nlcl bench`), not by tests. The numbers below
# are the committed benchmark records, `results/tian-tokens-bench-cpu.json` (the table engine, one
# worker process per core, the whole grid) and, for comparison,
# `results/tian-tokens-bench-cpu-autograd.json` (the per-sample network differentiated by autograd,
# three stacks), then this build's live run and the timing notes of the artifacts.
#
# ```{nlcl-source} nlcl.tian.tokens.paper_scale.bench_summary
# ```

# %%
benches, bench_glue = paper_scale.bench_summary(results)
if benches:
    display(pd.DataFrame(benches).rename_axis("nlcl.tian.tokens.bench"))
for key, value in bench_glue.items():
    run.glue(f"tokens-bench-{key}", value)

# %%
print(
    f"live {run.profile} run: {live.run_steps_per_s:.0f} run-steps/s",
    f"on {run.device_name}",
)
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

# %% [markdown]
# ## Summary
#
# At the paper's stated $\eta=2\times10^{-3}$ (complete grid, 5 seeds; required claims, except ReLU's
# growth with $\beta$, informational): at $P=1,\beta=1$ linear minus ReLU $\bar\chi_+$ is
# {glue:text}`tokens-p1-linear-vs-relu`; ReLU beats linear in a fraction
# {glue:text}`tokens-relu-beats-linear` of the $P>1,\beta\ge2$ cells; across $\beta$ ReLU's
# $\bar\chi_+$ changes by {glue:text}`tokens-relu-grows-with-beta` and linear's by
# {glue:text}`tokens-linear-flat-in-beta`; InfoNCE minus quadratic (ReLU) is
# {glue:text}`tokens-infonce-beats-quadratic`; the lowest $\bar\chi_-$ belongs to
# {glue:text}`tokens-relu-lowest-chi-minus`; BatchNorm minus no BatchNorm at $\zeta=10$ is
# {glue:text}`tokens-bn-helps-at-zeta10`; not backpropagating $\sigma^2$ wins a fraction
# {glue:text}`tokens-table1-no-var-backprop` of the Table 1 comparisons, and our Table 1 differs from
# the paper's by {glue:text}`tokens-table1-vs-paper` on average. In the Fig. 5 runs (live, this
# run's seeds) ReLU's filters capture a share {glue:text}`tokens-fig5-relu-captures:.2f` of the
# candidates and linear's {glue:text}`tokens-fig5-linear-cannot:.2f`.
#
# At the released code's $\eta=10^{-2}$ (same grid, informational claims): ReLU's gain across
# $\beta$ is {glue:text}`tokens-lr0.01-relu-grows-with-beta`, linear's change
# {glue:text}`tokens-lr0.01-linear-flat-in-beta`, InfoNCE minus quadratic
# {glue:text}`tokens-lr0.01-infonce-beats-quadratic`, BatchNorm minus none at $\zeta=10$
# {glue:text}`tokens-lr0.01-bn-helps-at-zeta10`, and Table 1 is within
# {glue:text}`tokens-lr0.01-table1-vs-paper` of the paper's on average; in the Fig. 5 runs ReLU
# captures {glue:text}`tokens-lr0.01-fig5-relu-captures:.2f` of the candidates and linear
# {glue:text}`tokens-lr0.01-fig5-linear-cannot:.2f`. The verdicts are in the claims table below.
#
# The finding is the learning rate. On the committed grids, the results that hold at both rates
# are the robust ones: linear is best at $P=1$, ReLU beats linear once $P>1$ and $\beta\ge2$, and
# not backpropagating $\sigma^2$ is at least as good as backpropagating it. The claims about trends
# in $\beta$, about the loss and about BatchNorm fail at the stated $2\times10^{-3}$, where 5000
# minibatches leave the filters near their initialization, and hold at $10^{-2}$ (the side-by-side
# table in "Measuring the claims"), except ReLU's gain across $\beta$: at $10^{-2}$ ReLU's
# $\bar\chi_+$ grows with $\beta$, by {glue:text}`tokens-lr0.01-relu-grows-with-beta`, near the
# declared threshold (its seed spread is in "Seed spread of the grid claims"). Our Table 1 at $10^{-2}$ is close to the published one, which
# suggests that the paper's grid was trained at the released code's rate. ReLU having the lowest
# $\bar\chi_-$ holds at neither rate; {doc}`tian-two-layer-theory` tests global modulation directly
# (Theorems 5-6).
#
# **What's next.** {doc}`tian-two-layer-theory` checks the dynamics behind these curves
# (Lemma 4, Theorems 4-6, Corollary 3) directly against autograd.

# %%
run.finish()

# %% [markdown]
# ## Try it yourself
#
# 1. Train the live grid at the released code's learning rate:
#    `nlcl run tian-tokens -p lr 0.01`. The committed grids of the `tokens-*` claims were trained
#    at $2\times10^{-3}$, so at another rate these claims are measured on this run's own reduced
#    grid (in `ci`: $\beta \in \{1, 5\}$, $P \in \{1, 3\}$, one seed, 2000 steps) and are
#    informational. If the failures at $2\times10^{-3}$ come from
#    unconverged filters, the claims about trends in $\beta$ and about the loss should now hold:
#    look at `tokens-relu-grows-with-beta`, `tokens-linear-flat-in-beta`,
#    `tokens-infonce-beats-quadratic` and `tokens-bn-helps-at-zeta10` in the claims table.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU, with `lr 0.01` (the `tokens-*` claims
#    computed on this run's reduced grid, all not required): `tokens-relu-grows-with-beta` 0.168
#    (pass), `tokens-linear-flat-in-beta` 0.087 (pass), `tokens-infonce-beats-quadratic` 0.082
#    (pass), `tokens-relu-beats-linear` 1.0 (pass), `tokens-p1-linear-vs-relu` 0.361 (pass),
#    `tokens-table1-vs-paper` 0.125 (pass), `tokens-table1-no-var-backprop` 1.0 (pass);
#    `tokens-relu-lowest-chi-minus` fails (sigmoid has the lowest $\bar\chi_-$) and
#    `tokens-bn-helps-at-zeta10` measures −0.111 (fails). At the faster rate ReLU
#    specializes and profits from $\beta$ even in 2000 steps, as Theorem 4 predicts; BatchNorm's
#    advantage at $\zeta = 10$ does not show on a one-seed reduced grid.
#    :::
#
# 2. Give the paper's learning rate five times the minibatches in the Fig. 5 runs:
#    `nlcl run tian-tokens -p fig5_steps 25000`. Then $\eta t$ at $\eta = 2\times10^{-3}$ equals
#    that of 5000 minibatches at $10^{-2}$. If the gap between the two rates is a matter of
#    training length, ReLU's $\bar\chi_+$ at $2\times10^{-3}$ should now approach what $10^{-2}$
#    reaches in 5000 steps: look at the training curves and the table after them. (The claims are
#    read from the committed grids and do not change.)
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0 (3 curve seeds), on CPU, with
#    `fig5_steps 25000`: at $\eta = 2\times10^{-3}$ ReLU's $\bar\chi_+$ goes from 0.346 (untrained)
#    to 0.907 at minibatch 20000 and 0.961 at 25000 (a share 0.087 of its gain in the last fifth);
#    at $10^{-2}$ it reaches 1.000 with no gain in the last fifth (in the `lr 0.01` run above,
#    $10^{-2}$ reached 0.980 after 5000). Linear ends at 0.819 and 0.860; the end losses are about
#    equal (ReLU 1.499 and 1.505). With the same $\eta t$ the paper's rate comes close to the
#    released rate's filters, so the slow specialization at $2\times10^{-3}$ is mostly a matter of
#    training length.
#    :::

# %% [markdown]
# ## References
#
# - {cite:t}`tian2023nonlinearity` ([arXiv:2206.01342](https://arxiv.org/abs/2206.01342),
#   [OpenReview](https://openreview.net/forum?id=s130rTE3U_X)): the token task, the two-layer
#   network, the scores $\bar\chi_\pm$ (Eqs. 16, 181), Theorems 4-6, Corollary 2, Figs. 4, 5 and
#   9-11, Table 1 and App. D / E.2.
# - {cite:t}`luckmatters`: the released code (`ssl/real-dataset/bn_gen.py`): its learning rate and
#   temperature, its scoring `check_result`, and the trainer re-implemented as the oracle.
# - {cite:t}`oord2018representation`: the InfoNCE loss.
# - {cite:t}`ioffe2015batch`: BatchNorm, whose variants Fig. 11 and Table 1 compare.
