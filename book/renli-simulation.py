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
# # Positive pairs align, negative pairs balance: the linear simulation (Ren & Li 2023, Fig. 1)
#
# **Overview.** Ren & Li (2023) train two linear encoders, one per modality, on pairs that share a
# latent signal whose directions have *unequal* strengths (condition number $\kappa$). Their
# Theorem 4.3 says: the non-contrastive loss (positive pairs only) aligns the two modalities but
# leaves the representation *unbalanced* (the condition number of $U_A = W_A M_A$ stays of order
# $\kappa$ and even grows), while the contrastive loss, run in two stages (small inverse temperature
# $\beta$, then $\beta = O(1)$), first behaves like the non-contrastive one (stage 1) and then uses
# the negative pairs to bring the condition number to $\approx 1$ (stage 2). This chapter runs that
# simulation (their Fig. 1), checks that stage 1 ≈ non-contrastive, and sweeps $\kappa$ and $\lambda$.
#
# **Prerequisites.** Ren & Li 2023, Sec. 3 (setup), Sec. 4 (Defs. 4.1–4.2, Thm. 4.3), Sec. 5
# (Stage 1 / Stage 2, Lemmas 5.1 and 5.3). No earlier chapter is needed.
#
# **Expected run time.** `ci` profile: about 1 minute on a 2-core CPU; `full` (the sizes of the
# reconstruction's prototype, $m = 512$, batch 512, 1500 + 1500 steps): about half an hour on a CPU,
# a minute on a GPU.
#
# ```{important}
# **This chapter implements a reconstruction.** The stored copy of the paper lost every formula, so
# the model, the losses and the metrics below are reconstructed from the paper's prose and one
# surviving sentence of its ICLR submission (`shared/papers/ren-li-setup.md`). We test the paper's
# *qualitative* claims, not its lost constants. The reconstructed choices are:
#
# 1. **Data model** (Eq. 1): $x_A = M_A z + H_A\xi_A$, $x_B = M_B z + H_B\xi_B$ in $\mathbb{R}^d$ with
#    $z\in\{\pm1\}^r$ shared by a positive pair and independent noises $\xi_A,\xi_B\in\{\pm1\}^{r_\xi}$,
#    all uniform.
# 2. $M_A = Q_A\,\mathrm{diag}(\sigma_A)$, $Q_A$ with orthonormal columns (QR of a Gaussian matrix);
#    $\sigma_A$ **evenly spaced on $[1,\kappa]$**; $\sigma_B$ a random permutation of $\sigma_A$, $Q_B$
#    independent of $Q_A$.
# 3. $H_A = \nu\cdot$(orthonormal columns orthogonal to $Q_A$), $\nu = 0.3$; likewise $H_B$.
# 4. **Learners** (Eq. 2): $f_A(x) = W_A x/\sqrt{\mathrm{mean}_{\rm batch}\|W_A x\|^2}$ (one scalar per
#    batch: unit *expected* norm), $W_A, W_B\in\mathbb{R}^{m\times d}$ with i.i.d. $N(0, 1/d)$ entries.
# 5. **Losses** (Eqs. 3–4): $L_{NC} = -\mathbb{E}\langle f_A(x_A), f_B(x_B)\rangle$ and, with
#    $S_{ij} = \langle f_A(x_{A,i}), f_B(x_{B,j})\rangle$,
#    $L_C = L_{NC} + \frac{\lambda}{\beta}\cdot\frac12\Big[\mathbb{E}_i\log\mathrm{mean}_{j\ne i}e^{\beta S_{ij}}
#    + \mathbb{E}_j\log\mathrm{mean}_{i\ne j}e^{\beta S_{ij}}\Big]$.
# 6. **Training** (Alg. 3.1): plain SGD (learning rate 2) on fresh batches; contrastive runs use
#    $\beta_1 = 0.05$ for stage 1 and $\beta_2 = 2$ for stage 2; non-contrastive runs
#    ($\lambda = 0$, which makes $L_C = L_{NC}$ exactly) take the same number of steps.
# 7. **Metrics**: the alignment score (Def. 4.1) is the fraction of (positive, negative) pairs with
#    $\|f_A(x_{A,i}) - f_B(x_{B,i})\| < \|f_A(x_{A,i}) - f_B(x_{B,j})\|$, on a fixed evaluation batch;
#    the condition number of $U_A = W_A M_A$ is $\sigma_{\max}/\sigma_{\min}$ over its $r$ singular
#    values; the **stable rank** (Def. 4.2) of the output covariance is
#    $\mathrm{srank}(\Sigma) = \operatorname{tr}\Sigma/\lambda_{\max}(\Sigma)$ with the population covariance
#    $\Sigma = \mathrm{Cov}(W_A x_A) = U_AU_A^\top + V_AV_A^\top$, $V_A = W_AH_A$ (the scalar
#    normalization does not change it); the noise-to-signal ratio is $\|W_AH_A\|_F/\|W_AM_A\|_F$.
# 8. **Sizes** of the `full` profile: $d = 64$, $r = r_\xi = 8$, $m = 512$, batch 512, 1500 + 1500
#    steps (those of the reconstruction's prototype; the paper's own sizes are lost).
# ```

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about a minute) or "full" (the reconstruction's sizes)
seed: int = 0  # base random seed; run k of a configuration uses seed + k
device: str = "auto"  # "auto", "cpu" or "cuda"
kappa: float = 4.0  # condition number κ of the signal in the main experiment (results 1 and 2)
kappas: list | None = None  # κ values of the sweep (result 3); None takes [2, kappa, 8]
lam: float = 1.0  # strength λ of the negative pairs in the contrastive runs
lams: list | None = None  # λ values of the sweep (result 3); None takes [0.25, 0.5, lam, 2]
beta1: float = 0.05  # inverse temperature β of stage 1
beta2: float = 2.0  # inverse temperature β of stage 2
beta1s: list | None = None  # stage-1 β values compared in result 2; None takes [0.01, beta1, 0.2]
lr: float = 2.0  # SGD learning rate
d: int = 64  # input dimension d
r: int = 8  # latent signal dimension r
r_xi: int = 8  # latent noise dimension r_ξ
nu: float = 0.3  # noise scale ν
width: int | None = None  # width m of the linear learners; None takes the profile's size
batch_size: int | None = None  # pairs per SGD step; None takes the profile's size
steps_stage1: int | None = None  # steps of stage 1 (at beta1); None takes the profile's size
steps_stage2: int | None = None  # steps of stage 2 (at beta2); None takes the profile's size
n_seeds: int | None = None  # seeds per configuration; None takes the profile's size
log_every: int | None = None  # steps between metric evaluations; None takes the profile's size
eval_size: int | None = None  # held-out pairs for the metrics; None takes the profile's size
lemma_pairs: int | None = None  # fresh pairs per alignment score in the Lemmas 4.4-4.5 section; None: profile
track_widths: list | None = (
    None  # widths m of the finite-width tracking section; None takes the profile's list
)
track_seeds: int | None = None  # seeds (data models) of the tracking section; None takes the profile's size
track_steps: int | None = None  # population-loss steps per stage in the tracking section; None: profile
track_batch: int = 64  # pairs per step of the finite-batch tracking runs (and 4x that for the noise scaling)

# %%
import nlcl

run = nlcl.start(
    "renli-simulation",
    globals(),
    spec={
        "kappa": {"range": [1.0, 1000.0], "paper": 4.0},
        "kappas": {"length": [1, 20], "items": {"type": "float", "range": [1.0, 1000.0]}},
        "lam": {"range": [1e-6, 1000.0], "paper": 1.0},
        "lams": {"length": [1, 20], "items": {"type": "float", "range": [1e-6, 1000.0]}},
        "beta1": {"range": [1e-6, 1000.0], "paper": 0.05},
        "beta2": {"range": [1e-6, 1000.0], "paper": 2.0},
        "beta1s": {"length": [1, 20], "items": {"type": "float", "range": [1e-6, 1000.0]}},
        "lr": {"range": [1e-6, 1e6], "paper": 2.0},
        "d": {"range": [2, 4096], "paper": 64},
        "r": {"range": [1, "d"], "paper": 8},
        "r_xi": {"range": [1, "d"], "paper": 8},
        "nu": {"range": [0.0, 100.0], "paper": 0.3},
        "width": {"range": [1, 8192], "ci": 128, "full": 512},
        "batch_size": {"range": [2, 65_536], "ci": 128, "full": 512},
        "steps_stage1": {"range": [1, 1_000_000], "ci": 300, "full": 1500},
        "steps_stage2": {"range": [1, 1_000_000], "ci": 500, "full": 1500},
        "n_seeds": {"range": [2, 100], "ci": 3, "full": 5},
        "log_every": {"range": [1, 1_000_000], "ci": 20, "full": 50},
        "eval_size": {"range": [2, 65_536], "ci": 256, "full": 512},
        "lemma_pairs": {"range": [2, 65_536], "ci": 512, "full": 1024},
        "track_widths": {
            "length": [2, 20],
            "items": {"type": "int", "range": [16, 1_000_000]},
            "ci": [64, 256, 1024, 4096],
            "full": [64, 256, 1024, 4096, 16384, 65536],
        },
        "track_seeds": {"range": [1, 100], "ci": 3, "full": 5},
        "track_steps": {"range": [1, 1_000_000], "ci": 300, "full": 600},
        "track_batch": {"range": [2, 4096], "paper": 64},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from nlcl.harness.claims import (
    NotReproduced,
    Revision,
    at_least,
    at_most,
    between,
    check_on_mean,
    check_on_pooled,
    greater_than,
    holds_on_fraction,
    is_true,
    less_than,
)
from nlcl.renli.metrics import relative_deviation
from nlcl.renli.simulation import train_configs

# Every tensor of this chapter is small (k × k Gram matrices, n × n similarities with k = r + r_ξ):
# one CPU thread is enough, and on a busy machine two threads that wait for each other are many
# times slower (measured at the ci sizes: 11 ms against 470 ms of CPU time per SGD step). One thread
# also makes the numbers independent of the machine's core count. (No effect on a GPU's kernels.)
torch.set_num_threads(1)

KAPPAS = sorted({2.0, float(P.kappa), 8.0} if P.kappas is None else {float(k) for k in P.kappas})
LAMS = sorted({0.25, 0.5, float(P.lam), 2.0} if P.lams is None else {float(v) for v in P.lams})
BETA1S = sorted({0.01, float(P.beta1), 0.2} if P.beta1s is None else {float(b) for b in P.beta1s})
SEEDS = [seed + k for k in range(P.n_seeds)]
# The claims are required in the reconstruction's setting (the prototype of ren-li-setup.md);
# with other parameters they are measured and reported but not required.
paper_setting = run.paper_setting
print(f"κ sweep {KAPPAS}, λ sweep {LAMS}, stage-1 β {BETA1S}, seeds {SEEDS}; paper setting: {paper_setting}")

# An explanation of a required claim's failure predicts diagnostics: quantities this run measures
# before the claim (their values are stored in the claim's record). DIAG keeps them for the predicates.
DIAG: dict = {}


def diagnose(name, value):
    """Provide the diagnostic ``name`` to the harness and to the explanations' predicates."""
    DIAG[name] = value
    run.diagnostic(name, value)


# %% [markdown]
# ## The runs
#
# All runs of the chapter are trained together, vectorized over a *run* axis (`nlcl.renli.simulation.train`):
# each run is one (seed, $\kappa$, $\lambda$, $\beta_1$) configuration and draws its data model, its
# initialization and its batches from its own generator, so a non-contrastive run and a contrastive run
# with the same seed and $\kappa$ see the same data and start from the same weights. The table lists
# the groups: `main` (non-contrastive and contrastive for every $\kappa$), `lambda` (other $\lambda$ at
# the main $\kappa$), `beta` (other stage-1 $\beta$ at the main $\kappa$).

# %%
rows = []
for s in SEEDS:
    for k in KAPPAS:
        rows.append(dict(group="main", method="non-contrastive", seed=s, kappa=k, lam=0.0, beta1=P.beta1))
        rows.append(dict(group="main", method="contrastive", seed=s, kappa=k, lam=P.lam, beta1=P.beta1))
    for v in LAMS:
        if v != P.lam:
            rows.append(
                dict(group="lambda", method="contrastive", seed=s, kappa=P.kappa, lam=v, beta1=P.beta1)
            )
    for b in BETA1S:
        if b != P.beta1:
            rows.append(dict(group="beta", method="contrastive", seed=s, kappa=P.kappa, lam=P.lam, beta1=b))
configs = pd.DataFrame(rows).assign(beta2=P.beta2)
configs.groupby(["group", "method"]).size().rename("runs").to_frame()

# %% [markdown]
# ## Result 1: both losses align; only the negative pairs balance (their Fig. 1)
#
# **Prediction** (Thm. 4.3, Lemmas 5.1 and 5.3; claims 1–4 of the reconstruction), at $\kappa$ =
# `kappa` and $\lambda$ = `lam`. Every claim of this chapter is measured on each of the `n_seeds`
# seeds (3 in `ci`, 5 in `full`; seed $s$ draws its own data model, initialisation and batches) and
# the report shows the mean, the spread and the fraction of seeds on which it holds. **Seed rule:** a
# claim that was stated for the worst seed ("smallest/largest over seeds") must hold **on every
# seed**; a claim stated for the median must hold on **≥ 80% of the seeds** (stricter than the
# median it replaces):
#
# 1. both methods align: final alignment score **≥ 0.95** (with $r = 8$ a negative pair shares the
#    anchor's $z$ with probability $2^{-8}$, which caps the score just below 1);
# 2. non-contrastive: the condition number of $U_A$ **grows after alignment** (final / value at the
#    first evaluation with alignment ≥ 0.95 is **> 1**), and the representation is **not balanced**:
#    final stable rank **≤ r/2**;
# 3. contrastive, end of stage 2: condition number **≤ 1.25** ("≈ 1") and stable rank **≥ 0.85 r**
#    (it cannot exceed $r$ by much: the noise directions carry little variance);
# 4. the noise-to-signal ratio **decreases** over training in every run of both methods
#    (final / initial **< 1**; per seed, the largest ratio over its main runs of every $\kappa$ and
#    both methods).

# %%
src = "Ren & Li 2023, Thm. 4.3 / Fig. 1"
c_align_nc = run.expect(
    "renli-align-nc",
    source=src,
    check=at_least(0.95),
    paper="aligned (≈ 1)",
    statement="Non-contrastive training aligns: final alignment score per seed (every seed must).",
    decide=holds_on_fraction(1.0),
    revised=[
        Revision(
            "(none before the prototype)",
            "≥ 0.95",
            "set with the prototype of ren-li-setup.md in view (prototype alignment ≈ 0.998); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    required=paper_setting,
)
c_align_c = run.expect(
    "renli-align-c",
    source=src,
    check=at_least(0.95),
    paper="aligned (≈ 1)",
    statement="Contrastive training aligns (and keeps it in stage 2): final alignment score per seed (every seed must).",
    decide=holds_on_fraction(1.0),
    revised=[
        Revision(
            "(none before the prototype)",
            "≥ 0.95",
            "set with the prototype of ren-li-setup.md in view (prototype alignment ≈ 0.998); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    required=paper_setting,
)
c_nc_grow = run.expect(
    "renli-nc-cond-grows",
    source="Ren & Li 2023, Lemma 5.1 / Fig. 1",
    statement="Non-contrastive: κ(U_A) grows while aligned; ratio final / at alignment per seed (every seed must).",
    decide=holds_on_fraction(1.0),
    check=greater_than(1.0),
    paper="grows",
    required=paper_setting,
)
c_nc_srank = run.expect(
    "renli-nc-unbalanced",
    source="Ren & Li 2023, Thm. 4.3(a)",
    statement="Non-contrastive: not balanced; final stable rank per seed (≤ r/2, every seed must).",
    decide=holds_on_fraction(1.0),
    check=at_most(P.r / 2),
    revised=[
        Revision(
            "(none before the prototype)",
            "≤ r/2",
            "set with the prototype of ren-li-setup.md in view (prototype stable rank ≈ 3.6 of 8, i.e. 0.45 r); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    paper="srank < r",
    required=paper_setting,
)
c_c_cond = run.expect(
    "renli-c-cond",
    source="Ren & Li 2023, Lemma 5.3 / Fig. 1",
    statement="Contrastive, end of stage 2: condition number of U_A per seed (every seed must).",
    decide=holds_on_fraction(1.0),
    check=at_most(1.25),
    revised=[
        Revision(
            "(none before the prototype)",
            "≤ 1.25",
            "set with the prototype of ren-li-setup.md in view (prototype condition number ≈ 1.02); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    paper="≈ 1",
    required=paper_setting,
)
c_c_srank = run.expect(
    "renli-c-srank",
    source="Ren & Li 2023, Thm. 4.3(b)",
    statement="Contrastive, end of stage 2: stable rank per seed (≥ 0.85 r, every seed must).",
    decide=holds_on_fraction(1.0),
    check=at_least(0.85 * P.r),
    revised=[
        Revision(
            "(none before the prototype)",
            "≥ 0.85 r",
            "set with the prototype of ren-li-setup.md in view (prototype stable rank ≈ 7.5 of 8, i.e. 0.94 r); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    paper="srank ≈ r",
    required=paper_setting,
)
c_nsr = run.expect(
    "renli-nsr-decreases",
    source="Ren & Li 2023, Lemmas 5.1 and 5.3",
    statement="The noise-to-signal ratio decreases: per seed, the largest final/initial ratio over its main runs (every κ, both methods; every seed must).",
    decide=holds_on_fraction(1.0),
    check=less_than(1.0),
    paper="small",
    required=paper_setting,
    revised=[
        Revision(
            "explained while the mean ratio stays below 1.5",
            "explained where four diagnostics look as the mechanism says (main κ below 1; every run at or "
            "above 1 contrastive, below 1 at the end of stage 1 and still falling at the end)",
            "issue 26: a band m < 1.5 against < 1 absorbs any failure; the prediction now tests the "
            "mechanism the explanation names (the β switch raises the ratio of contrastive runs, which "
            "have not returned within the fixed stage 2)",
            "2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "On some seeds the largest final/initial ratio over the main runs of all κ exceeds 1 (ci sweep "
        "over base seeds 0–4: means 0.95–1.01; full profile: 1.02–1.20 per seed). Mechanism: in a "
        "contrastive run the switch to β₂ raises the ratio (right panel): stage 2 balances U_A = W_A M_A "
        "by amplifying its weak signal directions relative to the strong ones, and within the fixed "
        "stage-2 length the ratio has not always returned below its starting value; the paper's "
        "statement is asymptotic (inverse-polynomially small after enough steps). Predicted "
        "(diagnostics): at the main κ every run ends below its initial ratio; every run that ends at "
        "or above it is contrastive (a non-contrastive run has no β switch), was below it at the end "
        "of stage 1, and is still falling over the last fifth of stage 2.",
        profiles=("ci", "full"),
        diagnostics=(
            "nsr-main-kappa-max",
            "nsr-failing-contrastive",
            "nsr-failing-below-at-stage1",
            "nsr-failing-still-falling",
        ),
        expected=lambda m: (
            DIAG["nsr-main-kappa-max"] < 1
            and DIAG["nsr-failing-contrastive"] == 1
            and DIAG["nsr-failing-below-at-stage1"] == 1
            and DIAG["nsr-failing-still-falling"] == 1
        ),
        evidence="the table of final/initial ratios per seed, κ and method; right panel of the Fig. 1 reproduction",
    ),
)

# %%
hist = train_configs(
    configs,
    d=P.d,
    r=P.r,
    r_xi=P.r_xi,
    nu=P.nu,
    device=run.device,
    width=P.width,
    steps_stage1=P.steps_stage1,
    steps_stage2=P.steps_stage2,
    lr=P.lr,
    batch_size=P.batch_size,
    eval_size=P.eval_size,
    log_every=P.log_every,
)
df = hist.frame()
S1, TOTAL = hist.steps_stage1, int(hist.steps[-1])
main = df[(df.group == "main") & (df.kappa == P.kappa)]
final = df[df.step == TOTAL]
init = df[df.step == 0].set_index("run")


def ratio_after_alignment(g):
    """Final condition number / condition number at the first evaluation with alignment ≥ 0.95."""
    aligned = g[g.alignment >= 0.95]
    return np.nan if aligned.empty else g.condition_number.iloc[-1] / aligned.condition_number.iloc[0]


main_final = final[(final.group == "main") & (final.kappa == P.kappa)]
nc_final, c_final = (main_final[main_final.method == m] for m in ("non-contrastive", "contrastive"))
grow = (
    main[main.method == "non-contrastive"].groupby("run").apply(ratio_after_alignment, include_groups=False)
)
runs_seed = hist.runs.seed
main_all_final = final[final.group == "main"].set_index("run")
nsr_ratio = main_all_final.noise_to_signal / init.loc[main_all_final.index, "noise_to_signal"]

# %% [markdown]
# The four metrics over training at $\kappa$ = `kappa` (one thin line per seed, the dotted line marks
# the switch from $\beta_1$ to $\beta_2$; the non-contrastive runs use the same steps):

# %%
labels = {
    "alignment": "alignment score",
    "condition_number": r"condition number $\kappa(U_A)$",
    "stable_rank": r"stable rank $\mathrm{tr}\,\Sigma/\lambda_{\max}(\Sigma)$",
    "noise_to_signal": r"$\|W_AH_A\|_F/\|W_AM_A\|_F$",
}
fig, axes = nlcl.core.plotting.subplots(1, 4, width=3.6, height=3.0)
for ax, (metric, label) in zip(axes[0], labels.items()):
    nlcl.core.plotting.training_curves(
        ax,
        main,
        metric,
        xlabel="SGD step $t$",
        ylabel=label,
        boundary=S1,
        hue="method",
        units="seed",
        estimator=None,
        lw=1.2,
        hue_order=["non-contrastive", "contrastive"],
        legend=metric == "alignment",
    )
axes[0][2].axhline(P.r, color="0.3", ls="--", lw=0.8)
axes[0][2].annotate("$r$", (TOTAL, P.r), ha="right", va="bottom")
axes[0][1].set_yscale("log")
axes[0][3].set_yscale("log")
fig.suptitle(
    rf"Ren & Li Fig. 1 (reconstruction): $\kappa={P.kappa:g}$, $\lambda={P.lam:g}$, "
    rf"$\beta$: {P.beta1:g} → {P.beta2:g}, $m={P.width}$"
)
plt.show()

# %% [markdown]
# The same curves for every $\kappa$ of the sweep (condition number and stable rank; one line per seed):

# %%
main_k = df[df.group == "main"]
fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.8, height=3.2)
for ax, metric in zip(axes[0], ("condition_number", "stable_rank")):
    nlcl.core.plotting.training_curves(
        ax,
        main_k,
        metric,
        xlabel="SGD step $t$",
        ylabel=labels[metric],
        boundary=S1,
        hue="kappa",
        style="method",
        units="seed",
        estimator=None,
        palette="viridis",
        lw=1.1,
        legend=metric == "condition_number",
        style_order=["non-contrastive", "contrastive"],
    )
axes[0][0].set_yscale("log")
axes[0][0].legend(fontsize="x-small", ncol=2)
plt.show()

# %%
by_seed = lambda t, col: t.set_index("seed")[col].sort_index().tolist()  # noqa: E731
c_align_nc.measure_seeds(by_seed(nc_final, "alignment"))
c_align_c.measure_seeds(by_seed(c_final, "alignment"))
c_nc_grow.measure_seeds(grow.groupby(runs_seed.loc[grow.index]).min().sort_index().tolist())
c_nc_srank.measure_seeds(by_seed(nc_final, "stable_rank"))
c_c_cond.measure_seeds(by_seed(c_final, "condition_number"))
c_c_srank.measure_seeds(by_seed(c_final, "stable_rank"))
nsr_seed = nsr_ratio.groupby(main_all_final.seed).max().sort_index()
# the explanation's diagnostics: the runs that end at or above their initial ratio, and how
failing_nsr = nsr_ratio.index[nsr_ratio >= 1]
nsr_at = lambda step: df[df.step == step].set_index("run").noise_to_signal  # noqa: E731
late_step = int(
    hist.steps[hist.steps <= TOTAL - (TOTAL - S1) // 5].max()
)  # a fifth of stage 2 before the end
frac = lambda ok: float(np.mean(ok)) if len(ok) else 1.0  # noqa: E731  (no failing run: nothing to explain)
diagnose("nsr-main-kappa-max", float(nsr_ratio[main_all_final.kappa == P.kappa].max()))
diagnose("nsr-failing-contrastive", frac(main_all_final.loc[failing_nsr, "method"] == "contrastive"))
diagnose(
    "nsr-failing-below-at-stage1",
    frac(nsr_at(S1).loc[failing_nsr] < init.loc[failing_nsr, "noise_to_signal"]),
)
diagnose(
    "nsr-failing-still-falling",
    frac(nsr_at(TOTAL).loc[failing_nsr] < nsr_at(late_step).loc[failing_nsr]),
)
c_nsr.measure_seeds(nsr_seed.tolist())
run.glue("renli-nsr-max", float(nsr_seed.max()))
display(
    pd.DataFrame(
        {
            "ratio": nsr_ratio,
            "seed": main_all_final.seed,
            "kappa": main_all_final.kappa,
            "method": main_all_final.method,
        }
    )
    .pivot_table(index="seed", columns=["method", "kappa"], values="ratio")
    .round(3)
)
run.glue("renli-nsr-fraction", f"{int((nsr_seed < 1).sum())} of {len(nsr_seed)}")
run.glue("renli-align-min", float(min(nc_final.alignment.min(), c_final.alignment.min())))
run.glue("renli-nc-cond-grows-min", float(grow.min()))
run.glue("renli-nc-unbalanced-max", float(nc_final.stable_rank.max()))
run.glue("renli-c-cond-max", float(c_final.condition_number.max()))
run.glue("renli-c-srank-min", float(c_final.stable_rank.min()))
run.glue("renli-nsr-main-kappa-max", float(nsr_ratio[main_all_final.kappa == P.kappa].max()))
run.glue("renli-nc-cond-final", float(nc_final.condition_number.median()))
run.glue("renli-c-srank-median", float(c_final.stable_rank.median()))

# %% [markdown]
# ## Result 2: stage 1 ≈ non-contrastive
#
# For small $\beta$, $\frac{\lambda}{\beta}\log\mathrm{mean}_j e^{\beta S_{ij}} = \lambda\,\mathrm{mean}_j S_{ij}
# + \frac{\lambda\beta}{2}\mathrm{Var}_j S_{ij} + O(\lambda\beta^2)$, and the first term averages to
# $\approx 0$ because the outputs have zero mean. So stage 1 follows the non-contrastive dynamics up to
# a perturbation of relative size $O(\lambda\beta_1)$ (Sec. 5.3, Lemma B.9). We quantify the distance
# between a contrastive and a non-contrastive run with the same seed, data, batches and initialization
# by the relative deviation of the weights at the end of stage 1,
#
# $$\delta(\beta_1) = \frac{\|W^{C}(t_1) - W^{NC}(t_1)\|_F}{\|W^{NC}(t_1) - W(0)\|_F},\qquad W = [W_A, W_B],$$
#
# (how far the two runs part, relative to how far the non-contrastive run travelled).
#
# **Prediction**, at $\kappa$ = `kappa`, per seed: $\delta(\beta_1 = 0.05)$ **≤ 0.1**
# ($2\lambda\beta_1$: the first-order size with a factor-2 margin; on ≥ 80% of the seeds); $\delta$
# **increases with $\beta_1$** (every seed); and it shrinks with $\beta_1$ at least half as fast as the
# linear prediction: $\delta(0.01)/\delta(0.05)$ **≤ 0.5** (linear: 0.2; the margin leaves room for the
# $\beta$-independent batch-noise term of order $\lambda/n$; on ≥ 80% of the seeds).

# %%
src2 = "Ren & Li 2023, Sec. 5.3 / Lemma B.9"
c_dev = run.expect(
    "renli-stage1-deviation",
    source=src2,
    statement=f"Relative weight deviation δ(β₁={P.beta1:g}) of contrastive from non-contrastive at the end of stage 1, per seed (on ≥ 80% of seeds).",
    decide=holds_on_fraction(0.8),
    check=at_most(2 * P.lam * P.beta1),
    paper="≈ 0 (O(λβ))",
    required=paper_setting and 0.01 in BETA1S,
    revised=[
        Revision(
            "explained while δ ≤ 10 × 2λβ₁",
            "explained where the condition-number diagnostics look as the mechanism says (gap within 2λβ₁ "
            "at alignment, contrastive κ lower and further apart at the end of stage 1)",
            "issue 26: a factor-10 band absorbs almost any failure; the prediction now tests the "
            "mechanism the explanation names (the runs part after alignment, in the balancing direction)",
            "2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "δ exceeds 2λβ₁ on every seed (ci sweep over base seeds 0–4: means 0.18–0.28; full: 0.12–0.43 per "
        "seed), although it scales roughly linearly with β₁ (renli-stage1-scaling). Mechanism: the "
        "first-order argument bounds the *gradient* perturbation by O(λβ₁) relative to the "
        "non-contrastive gradient, but once the pair is aligned (within the first tens of steps) the "
        "non-contrastive gradient nearly vanishes, so the balancing term λβ₁/2·Var(S) is no longer small "
        "relative to it and the two runs drift apart over a long stage 1, in the balancing direction. The "
        "paper ends stage 1 as soon as the pair is aligned; our stage 1 has a fixed length. Predicted "
        "(diagnostics on the condition number of U_A, which the metrics log at every evaluation, while "
        "the weights are kept only at the ends of the stages): at the non-contrastive run's first "
        "evaluation with alignment ≥ 0.95 the relative gap |κ_C − κ_NC|/κ_NC is at most 2λβ₁ on every "
        "seed, and at the end of stage 1 the contrastive κ is below the non-contrastive one and further "
        "from it than at alignment on every seed.",
        profiles=("ci", "full"),
        diagnostics=("stage1-cond-gap-at-alignment", "stage1-drift-balances"),
        expected=lambda m: (
            DIAG["stage1-cond-gap-at-alignment"] <= 2 * P.lam * P.beta1 and DIAG["stage1-drift-balances"] == 1
        ),
        evidence="the per-seed table of δ below and the condition numbers of the left panel",
    ),
)
c_dev_mono = run.expect(
    "renli-stage1-monotone",
    source=src2,
    statement="δ(β₁) increases with β₁, per seed (every seed must).",
    decide=holds_on_fraction(1.0),
    check=is_true(),
    paper="O(λβ)",
    required=paper_setting and 0.01 in BETA1S,
)
c_dev_ratio = run.expect(
    "renli-stage1-scaling",
    source=src2,
    statement=f"δ(0.01)/δ({P.beta1:g}) per seed (linear in β₁: {0.01 / P.beta1:.2g}; on ≥ 80% of seeds).",
    decide=holds_on_fraction(0.8),
    check=at_most(0.5),
    paper="O(λβ)",
    required=paper_setting and 0.01 in BETA1S,
)

# %%
runs = hist.runs
stage1 = {k: torch.cat([hist.W_A[k], hist.W_B[k]], dim=-1) for k in ("init", "stage1")}
ref = {
    (row.seed): i
    for i, row in runs.iterrows()
    if row.group == "main" and row.kappa == P.kappa and row.lam == 0
}
dev_rows = []
for i, row in runs.iterrows():
    if (
        row.kappa == P.kappa
        and row.lam == P.lam
        and row.method == "contrastive"
        and row.group in ("main", "beta")
    ):
        j = ref[row.seed]
        delta = relative_deviation(stage1["stage1"][i], stage1["stage1"][j], stage1["init"][j])
        dev_rows.append(dict(seed=row.seed, beta1=row.beta1, delta=float(delta)))
dev = pd.DataFrame(dev_rows).sort_values(["seed", "beta1"])
dev_med = dev.groupby("beta1").delta.median()
monotone = dev.groupby("seed").delta.apply(lambda s: bool(np.all(np.diff(s.values) > 0))).sort_index()
display(dev.pivot(index="seed", columns="beta1", values="delta").round(4))

# the condition-number trajectories during stage 1 (same seeds): largest relative gap to non-contrastive
s1 = df[(df.kappa == P.kappa) & (df.step <= S1) & (df.lam.isin([0.0, P.lam]))]
piv = s1.pivot_table(index=["seed", "step"], columns=["lam", "beta1"], values="condition_number")
gap = {
    b: float(((piv[(P.lam, b)] - piv[(0.0, P.beta1)]).abs() / piv[(0.0, P.beta1)]).max())
    for b in BETA1S
    if (P.lam, b) in piv.columns
}

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.6, height=3.2)
ax = axes[0][0]
nlcl.core.plotting.training_curves(
    ax,
    s1.assign(curve=np.where(s1.lam == 0, "non-contrastive", "contrastive, β₁=" + s1.beta1.astype(str))),
    "condition_number",
    xlabel="SGD step $t$ (stage 1)",
    ylabel=r"condition number $\kappa(U_A)$",
    hue="curve",
    units="seed",
    estimator=None,
    lw=1.1,
)
ax.legend(fontsize="small")
ax = axes[0][1]
sns.lineplot(data=dev, x="beta1", y="delta", units="seed", estimator=None, marker="o", ax=ax)
bb = np.array(BETA1S)
ax.plot(bb, dev_med.loc[P.beta1] * bb / P.beta1, "k--", lw=0.8, label=r"$\propto\beta_1$")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel(r"stage-1 inverse temperature $\beta_1$")
ax.set_ylabel(r"relative deviation $\delta(\beta_1)$ at $t_1$")
ax.legend()
plt.show()

# %%
dev_table = dev.pivot(index="seed", columns="beta1", values="delta").sort_index()
# the explanation's diagnostics: the relative condition-number gap at alignment and at the end of stage 1
al_nc = s1[s1.lam == 0].pivot_table(index="seed", columns="step", values="alignment")
rel_gap = (piv[(P.lam, P.beta1)] - piv[(0.0, P.beta1)]) / piv[(0.0, P.beta1)]  # (seed, step)
gap_align, gap_end = {}, {}
for s_, row_ in al_nc.iterrows():
    t_align = row_.index[row_.values >= 0.95]
    t_align = int(t_align[0]) if len(t_align) else S1
    gap_align[s_], gap_end[s_] = float(rel_gap.loc[(s_, t_align)]), float(rel_gap.loc[(s_, S1)])
diagnose("stage1-cond-gap-at-alignment", max(abs(v) for v in gap_align.values()))
diagnose(
    "stage1-drift-balances",
    float(np.mean([gap_end[s_] < 0 and abs(gap_end[s_]) > abs(gap_align[s_]) for s_ in gap_end])),
)
c_dev.measure_seeds(dev_table[P.beta1].tolist())
c_dev_mono.measure_seeds(monotone.tolist())
if 0.01 in BETA1S:
    c_dev_ratio.measure_seeds((dev_table[0.01] / dev_table[P.beta1]).tolist())
else:
    c_dev_ratio.measure(float("nan"))
run.glue("renli-stage1-deviation-median", float(dev_med.loc[P.beta1]))
run.glue("renli-stage1-cond-gap", gap[P.beta1])

# %% [markdown]
# ## Result 3: how the final balance depends on $\kappa$ and $\lambda$
#
# **Prediction.** Without negative pairs the final condition number is of order $\kappa$ (Thm. 4.3(a):
# there are inputs for which it stays $\Theta(\kappa)$): it **increases with $\kappa$** (per seed, on
# ≥ 80% of the seeds). With negative pairs, stage 2 brings it to $\approx 1$ whatever $\kappa$: **≤ 1.25
# for every $\kappa$ of the sweep** (per seed the largest over $\kappa$; every seed). The balancing force
# of stage 2 is proportional to $\lambda$ (the gradient of the second term of $L_C$), so a larger
# $\lambda$ balances faster: the number of stage-2 steps until $\kappa(U_A) \le 1.5$ is
# **non-increasing in $\lambda$** (per seed, on ≥ 80% of the seeds).

# %%
src3 = "Ren & Li 2023, Thm. 4.3 / Lemma 5.3"
c_k_nc = run.expect(
    "renli-kappa-nc-increasing",
    source=src3,
    statement="Non-contrastive final κ(U_A) increases with κ, per seed (on ≥ 80% of seeds).",
    decide=holds_on_fraction(0.8),
    check=is_true(),
    paper="Θ(κ)",
    required=paper_setting,
)
c_k_c = run.expect(
    "renli-kappa-c-balanced",
    source=src3,
    statement="Contrastive final κ(U_A): per seed the largest over every κ of the sweep (every seed must).",
    decide=holds_on_fraction(1.0),
    check=at_most(1.25),
    revised=[
        Revision(
            "(none before the prototype)",
            "≤ 1.25",
            "set with the prototype of ren-li-setup.md in view (prototype condition number ≈ 1.02); the threshold sits next to that value",
            "2026-11-21",
        )
    ],
    paper="≈ 1",
    required=paper_setting,
)
c_lam = run.expect(
    "renli-lambda-speed",
    source=src3,
    statement="Stage-2 steps until κ(U_A) ≤ 1.5 are non-increasing in λ, per seed (on ≥ 80% of seeds); "
    "two λ that both never reach 1.5 within stage 2 are a tie.",
    decide=holds_on_fraction(0.8),
    check=is_true(),
    paper="negative pairs balance",
    required=paper_setting,
    revised=[
        Revision(
            "non-increasing tested as np.diff(steps) ≤ 0",
            "non-increasing tested as steps[λ_next] ≤ steps[λ] (∞ ≤ ∞ holds)",
            "issue 26 finding (held-out failures at 2 of 3 seeds), investigated at development seeds only: "
            "a λ whose run never reaches κ(U_A) ≤ 1.5 within stage 2 gets ∞ steps, and np.diff of two "
            "infinities is NaN, so NaN ≤ 0 made the check fail whenever the two smallest λ both missed "
            "the threshold, although 'non-increasing' holds for them (a tie). At development seed 3 the "
            "smallest λ = 0.25 already misses it (κ(U_A) = 1.5 is not reached in 500 ci steps); a data "
            "seed on which λ = 0.5 misses it too would fail for that reason alone. The measurement now "
            "tests the statement; a data seed where a larger λ is slower still fails",
            "2026-11-26",
        )
    ],
)

# %%
sweep_k = final[final.group == "main"]
by_k = sweep_k.groupby(["method", "kappa"])[["condition_number", "stable_rank"]].median()
nc_increasing = bool(np.all(np.diff(by_k.loc["non-contrastive"].condition_number.values) > 0))
c_worst = float(sweep_k[sweep_k.method == "contrastive"].condition_number.max())

lam_runs = df[(df.kappa == P.kappa) & (df.lam > 0) & (df.beta1 == P.beta1) & (df.step >= S1)]


def steps_to_balance(g, threshold=1.5):
    hit = g[g.condition_number <= threshold]
    return np.inf if hit.empty else float(hit.step.iloc[0] - S1)


t_bal = (
    lam_runs.groupby(["lam", "seed"]).apply(steps_to_balance, include_groups=False).groupby("lam").median()
)


def non_increasing(v):
    """Each value ≤ the previous one; ∞ ≤ ∞ holds (np.diff of two infinities would be NaN)."""
    v = np.asarray(v, dtype=float)
    return bool(np.all(v[1:] <= v[:-1]))


lam_monotone = non_increasing(t_bal.values)
lam_final = (
    final[(final.kappa == P.kappa) & (final.beta1 == P.beta1)]
    .groupby("lam")[["condition_number", "stable_rank"]]
    .median()
)
display(by_k.round(3))
display(pd.concat([lam_final, t_bal.rename("stage-2 steps to κ(U_A) ≤ 1.5")], axis=1).round(3))

fig, axes = nlcl.core.plotting.subplots(1, 3, width=3.8, height=3.1)
for ax, metric in zip(axes[0][:2], ("condition_number", "stable_rank")):
    sns.lineplot(
        data=sweep_k,
        x="kappa",
        y=metric,
        hue="method",
        marker="o",
        errorbar=("pi", 100),
        ax=ax,
        hue_order=["non-contrastive", "contrastive"],
        legend=metric == "condition_number",
    )
    ax.set_xlabel(r"signal condition number $\kappa$")
    ax.set_ylabel("final " + labels[metric])
axes[0][1].axhline(P.r, color="0.3", ls="--", lw=0.8)
ax = axes[0][2]
lam_curves = df[(df.kappa == P.kappa) & (df.beta1 == P.beta1)]
nlcl.core.plotting.training_curves(
    ax,
    lam_curves,
    "condition_number",
    xlabel="SGD step $t$",
    ylabel=r"$\kappa(U_A)$ (median over seeds)",
    boundary=S1,
    hue="lam",
    palette="viridis",
    errorbar=None,
)
ax.set_yscale("log")
ax.legend(title=r"$\lambda$", fontsize="small")
plt.show()

# %%
nc_by_seed = sweep_k[sweep_k.method == "non-contrastive"].sort_values("kappa").groupby("seed")
c_k_nc.measure_seeds(
    nc_by_seed.condition_number.apply(lambda v: bool(np.all(np.diff(v.values) > 0))).sort_index().tolist()
)
c_k_c.measure_seeds(
    sweep_k[sweep_k.method == "contrastive"].groupby("seed").condition_number.max().sort_index().tolist()
)
t_bal_seed = lam_runs.groupby(["seed", "lam"]).apply(steps_to_balance, include_groups=False)
c_lam.measure_seeds(
    t_bal_seed.groupby(level="seed").apply(lambda v: non_increasing(v.values)).sort_index().tolist()
)
run.glue("renli-kappa-nc-increasing-median", nc_increasing)
run.glue("renli-kappa-c-max", c_worst)

# %% [markdown]
# **Held-out findings (issue 26), investigated at the development seeds only.** At two held-out base
# seeds `renli-kappa-c-balanced` measured 1.59 and 1.62, and `lemma44-final-contrastive` failed with it;
# at the development seeds the largest final $\kappa(U_A)$ is about 1.15. The measured quantity is the
# condition number after a *fixed* stage 2 (500 steps in `ci`), and how long stage 2 needs depends on
# where stage 1 left it. The table gives, for every contrastive main run, $\kappa(U_A)$ at the end of
# stage 1, the stage-2 steps until $\kappa(U_A)\le1.25$ and the final value; the fitted line below
# says how many steps each e-fold of the stage-1 condition number costs. A data seed or initialisation
# that leaves stage 1 with a condition number far above the development seeds' (the infinite-width
# section shows stage-1 condition numbers that vary by a factor of several across data seeds) ends
# stage 2 before it has balanced. The claim measures what it states (the end of a stage of fixed
# length; Lemma 5.3's length is "polynomially many" steps with lost constants), so it is left as it is,
# and its held-out failures stand as findings. `renli-lambda-speed` had a measurement error that makes
# it fail in exactly this situation: two $\lambda$ whose runs both miss $\kappa(U_A)\le1.5$ within stage 2
# tie at ∞ steps, and the old test (`np.diff` of two infinities is NaN) counted the tie as a violation;
# corrected (see its revision). Whether that was the cause at the held-out seeds is not checked here
# (we do not run them).

# %%
stage2_rows = []
for (s_, k_), g in df[(df.group == "main") & (df.method == "contrastive")].groupby(["seed", "kappa"]):
    hit = g[(g.step >= S1) & (g.condition_number <= 1.25)]
    stage2_rows.append(
        dict(
            seed=s_,
            kappa=k_,
            kappa_end_stage1=float(g[g.step == S1].condition_number.iloc[0]),
            steps_to_1_25=float(hit.step.iloc[0] - S1) if len(hit) else np.inf,
            kappa_final=float(g.condition_number.iloc[-1]),
        )
    )
stage2_time = pd.DataFrame(stage2_rows)
reached = stage2_time[np.isfinite(stage2_time.steps_to_1_25)]
efold_cost, offset = np.polyfit(np.log(reached.kappa_end_stage1), reached.steps_to_1_25, 1)
run.glue("renli-stage2-efold-steps", round(float(efold_cost)))
run.glue("renli-stage2-kappa1-limit", round(float(np.exp((TOTAL - S1 - offset) / efold_cost)), 1))
run.glue("renli-stage2-kappa1-max", round(float(stage2_time.kappa_end_stage1.max()), 1))
stage2_time.round(3)

# %% [markdown]
# Each e-fold of $\kappa(U_A)$ at the end of stage 1 costs about {glue:text}`renli-stage2-efold-steps`
# stage-2 steps to reach 1.25; extrapolated, a run would miss 1.25 at the end of this stage 2 from a
# stage-1 condition number of about {glue:text}`renli-stage2-kappa1-limit` (the largest here:
# {glue:text}`renli-stage2-kappa1-max`). That extrapolation is far outside the development data, so it
# locates the sensitivity rather than explaining the held-out values.

# %% [markdown]
# ## Lemmas 4.4 and 4.5: sufficient conditions for alignment and for balance
#
# Ren & Li close Sec. 4 with two sufficient conditions. **Lemma 4.4**: if the noise parts are small for
# both modalities, $U_A\approx U_B$, and the condition number of $U_A$ is bounded ("so that the smallest
# singular value of $U_A$ is still large after normalization"), the representations are aligned.
# **Lemma 4.5**: if the model is aligned and the condition number of $U_A$ is close to 1, the
# representations are balanced. Their constants are lost with the formulas, so the lemmas cannot be
# tested as printed; we test the closest faithful versions, with constants we derive for the
# reconstructed model (population normalisation $s_A^2 = \|U_A\|_F^2 + \|V_A\|_F^2$, $\tilde U = U/s$,
# $\tilde V = V/s$, so $f_A(x) = \tilde U_Az + \tilde V_A\xi_A$; `nlcl.renli.lemmas`):
#
# * **Lemma 4.4 (explicit).** With $\varepsilon_A = \sqrt{r_\xi}\|\tilde V_A\|_2$, $\varepsilon_B$ likewise,
#   $\delta = \sqrt r\|\tilde U_A - \tilde U_B\|_2$ and $K^* = \|\tilde U_A\|_F/(\sqrt r(\delta+\varepsilon_A+\varepsilon_B))$:
#   if $\kappa(U_A) < K^*$ then $\sigma_{\min}(\tilde U_A) > \delta+\varepsilon_A+\varepsilon_B$. For a positive
#   pair, $\|f_A - f_B\| \le \delta+\varepsilon_A+\varepsilon_B$; for a negative pair with $z_j\ne z_i$,
#   $\|f_{A,i} - f_{B,j}\| \ge \|\tilde U_A(z_i - z_j)\| - (\delta+\varepsilon_A+\varepsilon_B) \ge 2\sigma_{\min}(\tilde U_A) - (\ldots)$.
#   So every such pair is ranked correctly and the alignment score is at least the fraction of pairs
#   with $z_i\ne z_j$ ($1 - 2^{-r}$ in expectation).
# * **Lemma 4.5 (explicit).** $\operatorname{srank}(\mathrm{Cov} f_A) \ge (1 + (r-1)/\kappa^2)/(1+\eta)$ with
#   $\kappa = \kappa(U_A)$ and $\eta = \|\tilde V_A\|_2^2/\sigma_{\max}(\tilde U_A)^2$; hence
#   $\kappa \le \kappa^*(\epsilon) = \sqrt{(r-1)/((1-\epsilon)r(1+\eta)-1)}$ guarantees the balance
#   $\operatorname{srank}\ge(1-\epsilon)r$. We take $\epsilon = 0.15$, the balance criterion of result 1
#   ($\kappa^*\approx 1.10$ for $r = 8$).
#
# Both implications are inequalities of our own derivation: on every state we evaluate they are
# **checks** of that derivation (claims 1–2). What can fail, and what the paper says, is whether
# training *reaches* the lemmas' hypotheses — Lemma 5.1 says the end of stage 1 satisfies the
# conditions that, "by Lemma 4.4", make the model aligned; Lemma 5.3 says stage 2 brings the condition
# number close to 1 — and whether the hypotheses matter. States: the main runs (every $\kappa$ of the
# sweep, `n_seeds` seeds, both methods) at initialisation, at the end of stage 1 and at the end;
# alignment measured on `lemma_pairs` fresh pairs with the population normalisation.
#
# **Predictions.**
#
# 1. (check) every state that satisfies the explicit Lemma 4.4 has alignment ≥ its fraction of pairs
#    with distinct latents; 2. (check) every state has $\operatorname{srank}$ ≥ the Lemma 4.5 bound;
# 3. Lemma 5.1 + 4.4: at the end of stage 1 every run satisfies the explicit Lemma 4.4. Few do (an
#    exploratory `ci` run: 1 of 12): the worst-case noise terms $\varepsilon$ exceed the normalised
#    $\sigma_{\min}(\tilde U_A)$ although every run is aligned (score 0.998). Declared not reproduced; the
#    explanation predicts that every failing run is aligned (score ≥ 0.95) and satisfies the condition
#    with its noise terms removed ($\kappa(U_A) < \|\tilde U_A\|_F/(\sqrt r\,\delta)$), so the noise, not the
#    misalignment, is what breaks it;
# 4. Lemma 5.3 + 4.4: at the end of stage 2 every contrastive run satisfies the explicit Lemma 4.4;
# 5. Lemma 5.3 + 4.5: at the end of stage 2 every contrastive run satisfies $\kappa(U_A)\le\kappa^*(0.15)$.
#    The exploratory `ci` run found 4 of 6 (the others end at $\kappa\approx1.11$–$1.13$ after 500
#    stage-2 steps while already balanced, srank ≥ 7.2); declared not reproduced in `ci`, predicting
#    that every failing run is balanced (srank ≥ 0.85 r) with $\kappa(U_A) \le 1.25$;
# 6. "a condition-number-reducing stage is necessary" (after Lemma 4.5): no state at initialisation or
#    at the end of non-contrastive training satisfies $\kappa(U_A)\le\kappa^*(0.15)$, and none of them is
#    balanced (fraction 0);
# 7. a case where the third condition ($U_A\approx U_B$) fails without being made to, and the conclusion
#    with it: the initial states. $W_A$ and $W_B$ are independent, so $\delta$ is large; and since
#    $W_B\mapsto-W_B$ leaves their distribution unchanged and reverses every cross term
#    $\langle f_A, f_B\rangle$, a positive pair is ranked first about as often as a negative one: alignment
#    **≤ 0.6** on every run (≈ ½; the margin is for the finite width and the `lemma_pairs` pairs;
#    informational since the first run measured 0.603 on one state: the symmetry fixes the mean over
#    initialisations, not each one's score), and, required, **< 0.95** (not aligned) with the condition
#    failing on every run (a run where it held would count as a failure). (Until 2026-11-26 this case
#    was a hand-made sign flip $\tilde U_B\to-\tilde U_B$ of trained states.)
# 8. the paper's own example of an aligned but unbalanced model (our reading of it: both modalities map
#    $z$ to the scalar $\sum_k 2^{k-1}z_k$ along one direction, $\kappa(U_A) = \infty$): alignment equal to
#    the fraction of distinct-latent pairs (≥ 0.99) and stable rank 1 (≤ 1.01). Lemma 4.4's condition
#    fails here, yet the model is aligned: the conditions are sufficient, not necessary.

# %%
from nlcl.harness.claims import between, holds_on_fraction
from nlcl.renli.lemmas import (
    alignment_condition,
    balance_condition,
    balance_kappa_threshold,
    binary_code_maps,
    normalized_maps,
    population_alignment,
)
from nlcl.renli.model import make_data

src_l = "Ren & Li 2023, Lemma 4.4 (explicit constants: ours)"
c_l44_check = run.expect(
    "lemma44-implies-aligned",
    kind="check",
    source=src_l + " — check of our derivation",
    statement="Smallest (alignment − fraction of distinct-latent pairs) over all states satisfying the explicit Lemma 4.4.",
    check=at_least(-1e-12),
    paper="aligned",
)
c_l45_check = run.expect(
    "lemma45-bound",
    kind="check",
    source="Ren & Li 2023, Lemma 4.5 (explicit constants: ours) — check of our derivation",
    statement="Smallest srank − (1 + (r−1)/κ²)/(1 + η) over all states.",
    check=at_least(-1e-9),
    paper="balanced when κ ≈ 1",
)
c_l44_s1 = run.expect(
    "lemma44-stage1-holds",
    source="Ren & Li 2023, Lemma 5.1 with Lemma 4.4",
    statement="Per run (both methods): the end-of-stage-1 state satisfies the explicit Lemma 4.4 (every run must).",
    check=is_true(),
    decide=holds_on_fraction(1.0),
    paper="(9) holds, aligned by Lemma 4.4",
    required=paper_setting,
    revised=[
        Revision(
            "explained wherever it fails in ci or full (no prediction)",
            "explained where the failing runs are aligned (score ≥ 0.95) and satisfy the condition "
            "without its noise terms",
            "issue 26: the explanation had no expected and so covered any failure; the prediction now "
            "tests the mechanism it names (the worst-case noise terms, not the misalignment, break the "
            "condition of aligned runs)",
            "2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "Few runs satisfy the explicit Lemma 4.4 at the end of stage 1 (ci sweep over base seeds 0–4: "
        "0 or 1 of 18 runs; full: 9 of 30), although every run is aligned (score 0.998). Mechanism: the "
        "worst-case noise bound ε_A + ε_B = √r_ξ(‖Ṽ_A‖₂ + ‖Ṽ_B‖₂) ≈ 0.1–0.17 after the fixed stage 1 "
        "is larger than σ_min(Ũ_A) once κ(U_A) is a few, while the misalignment δ is an order of "
        "magnitude smaller; the paper's noise ratio is inverse-polynomially small only after a long "
        "enough stage 1. Predicted (diagnostics): every failing run is aligned (smallest score ≥ 0.95), "
        "and every failing run satisfies the condition with its noise terms removed "
        "(κ(U_A) < ‖Ũ_A‖_F/(√r δ)).",
        profiles=("ci", "full"),
        diagnostics=("lemma44-s1-failing-alignment-min", "lemma44-s1-failing-noise-free-holds"),
        expected=lambda m: (
            DIAG["lemma44-s1-failing-alignment-min"] >= 0.95
            and DIAG["lemma44-s1-failing-noise-free-holds"] == 1
        ),
        evidence="the lemma table (κ against the bound K* at the end of stage 1, smallest alignment) and the left panel of the lemma figure",
    ),
)
c_l44_end = run.expect(
    "lemma44-final-contrastive",
    source="Ren & Li 2023, Lemma 5.3 with Lemma 4.4",
    statement="Per contrastive run: the end-of-stage-2 state satisfies the explicit Lemma 4.4 (every run must).",
    check=is_true(),
    decide=holds_on_fraction(1.0),
    paper="aligned",
    required=paper_setting,
)
c_l45_end = run.expect(
    "lemma45-final-contrastive",
    source="Ren & Li 2023, Lemma 5.3 with Lemma 4.5",
    statement="Per contrastive run: κ(U_A) ≤ κ*(0.15) at the end of stage 2 (every run must).",
    check=is_true(),
    decide=holds_on_fraction(1.0),
    paper="κ close to 1, balanced",
    required=paper_setting,
    revised=[
        Revision(
            "explained in ci by a bare string (no prediction)",
            "explained in ci where every failing run is balanced (srank ≥ 0.85 r) and within result 1's "
            "≈ 1 (κ(U_A) ≤ 1.25)",
            "issue 26: a bare string covers any failure; the prediction now tests what the explanation "
            "says (the failing runs are balanced, with κ just above κ*)",
            "2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "ci profile (batch 128, 500 stage-2 steps; sweep over base seeds 0–4: 6 or 7 of 9 runs): the "
        "runs at the largest κ end at κ(U_A) ≈ 1.10–1.15 > κ* ≈ 1.10 while already balanced (srank ≥ 7.1 "
        "≥ 0.85 r). Over the last 100 stage-2 steps κ(U_A) moves up and down by a few percent at a floor "
        "set by the SGD noise of batch 128 instead of still falling; with batch 512 (full) the floor is ≈ 1.02 and every run "
        "passes. The explicit condition is stricter than the conclusion. Predicted (diagnostics): every "
        "failing run is balanced (smallest srank ≥ 0.85 r) and within result 1's tolerance for ≈ 1 "
        "(largest κ(U_A) ≤ 1.25).",
        profiles=("ci",),
        diagnostics=("lemma45-end-failing-srank-min", "lemma45-end-failing-kappa-max"),
        expected=lambda m: (
            DIAG["lemma45-end-failing-srank-min"] >= 0.85 * P.r
            and DIAG["lemma45-end-failing-kappa-max"] <= 1.25
        ),
        evidence="the lemma table (κ and srank at the end of stage 2) and the right panel of the lemma figure",
    ),
)
c_l45_nec = run.expect(
    "lemma45-reducing-stage-necessary",
    source="Ren & Li 2023, remark after Lemma 4.5",
    statement="Per state at initialisation and at the end of non-contrastive training: κ(U_A) > κ*(0.15) and srank < 0.85 r (every state must).",
    check=is_true(),
    decide=holds_on_fraction(1.0),
    paper="κ(U_A) not close to 1 at initialisation",
    required=paper_setting,
)
c_l44_init = run.expect(
    "lemma44-init-fails",
    source="Ren & Li 2023, Lemma 4.4 (third condition violated at initialisation)",
    statement="Initial states (independent W_A, W_B): Lemma 4.4's condition fails (κ(U_A) ≥ K*) and the "
    "state is not aligned (score < 0.95, result 1's criterion), per run (every run must; a run whose "
    "condition holds counts as 1).",
    check=less_than(0.95),
    decide=holds_on_fraction(1.0),
    paper="(condition needed)",
    required=paper_setting,
    revised=[
        Revision(
            "lemma44-misaligned-fails: contrastive end states with Ũ_B → −Ũ_B, alignment < 0.05",
            "lemma44-init-fails: the initial states, where the condition fails without being made to",
            "issue 27 item 7: the sign flip was a hand-made violation; at initialisation W_A and W_B are "
            "independent, so U_A ≉ U_B without any construction",
            "2026-11-26",
        ),
        Revision(
            "≤ 0.6 per run (required)",
            "< 0.95 per run (required; the conclusion 'aligned' fails); ≤ 0.6 kept as the informational "
            "claim lemma44-init-chance",
            "the first run (ci, seed 0) measured 0.603 on one initial state against ≤ 0.6: the symmetry "
            "argument behind 0.6 fixes the mean over initialisations at ½, not each initialisation's "
            "score, whose spread at width 128 is larger than the margin we had allowed. The required "
            "claim now tests the lemma's conclusion; the failed sharper prediction stays visible",
            "2026-11-26",
        ),
    ],
)
c_l44_chance = run.expect(
    "lemma44-init-chance",
    source="Ren & Li 2023, Lemma 4.4 (third condition violated at initialisation)",
    statement="Initial states: alignment score ≤ 0.6 per run (≈ ½ by the W_B ↦ −W_B symmetry; every run must).",
    check=at_most(0.6),
    decide=holds_on_fraction(1.0),
    paper="(condition needed)",
    required=False,
    revised=[
        Revision(
            "(required, as lemma44-init-fails)",
            "informational",
            "declared before the first run with a margin for width and sampling; that run (ci, seed 0) "
            "measured 0.603 on one initial state: the symmetry fixes the mean over initialisations, not "
            "each one's score. Kept with its original threshold as a prediction that failed",
            "2026-11-26",
        )
    ],
)
c_ex_al = run.expect(
    "renli-example-aligned",
    source="Ren & Li 2023, example after Def. 4.2 (our reading)",
    statement="Binary-code model (rank one, κ = ∞): alignment score.",
    check=at_least(0.99),
    paper="aligned",
)
c_ex_sr = run.expect(
    "renli-example-unbalanced",
    source="Ren & Li 2023, example after Def. 4.2 (our reading)",
    statement="Binary-code model: stable rank of Cov f_A.",
    check=at_most(1.01),
    paper="not balanced",
)

# %%
l_gen = torch.Generator().manual_seed(seed + 50)
main_pos = np.flatnonzero((hist.runs.group == "main").to_numpy())
main_idx = torch.as_tensor(main_pos)
main_runs = hist.runs.iloc[main_pos]
l_data = make_data(
    P.d,
    P.r,
    P.r_xi,
    main_runs.kappa.tolist(),
    main_runs.seed.astype(int).tolist(),
    nu=P.nu,
    dtype=torch.float64,
)
kstar = float(balance_kappa_threshold(P.r, 0.15))
lemma_rows = []
for stage in ("init", "stage1", "final"):
    maps = normalized_maps(hist.W_A[stage][main_idx].double(), hist.W_B[stage][main_idx].double(), l_data)
    a_cond = alignment_condition(*maps)
    b_cond = balance_condition(maps[0], maps[1], eps=0.15)
    score, distinct = population_alignment(*maps, n=P.lemma_pairs, generator=l_gen)
    for i, (_, row) in enumerate(main_runs.iterrows()):
        lemma_rows.append(
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
lemmas = pd.DataFrame(lemma_rows)
example = binary_code_maps(P.r, P.r_xi, P.width)
ex_score, ex_distinct = population_alignment(*example, n=P.lemma_pairs, generator=l_gen)
ex_cond = alignment_condition(*example)
ex_bal = balance_condition(example[0], example[1], eps=0.15)
designed = pd.DataFrame(
    [
        dict(
            stage="example",
            method="binary code",
            kappa=float(ex_cond["kappa"]),
            kappa_bound=float(ex_cond["kappa_bound"]),
            holds_44=bool(ex_cond["holds"]),
            alignment=float(ex_score),
            distinct=float(ex_distinct),
            holds_45=bool(ex_bal["holds"]),
            srank=float(ex_bal["srank"]),
            srank_bound=float(ex_bal["srank_bound"]),
        )
    ]
)
all_states = pd.concat([lemmas, designed], ignore_index=True)
holding = all_states[all_states.holds_44]
c_l44_check.measure(float((holding.alignment - holding.distinct).min()) if len(holding) else float("nan"))
c_l45_check.measure(float((all_states.srank - all_states.srank_bound).min()))
s1 = lemmas[lemmas.stage == "stage1"]
end_c = lemmas[(lemmas.stage == "final") & (lemmas.method == "contrastive")]
# the explanations' diagnostics: what the failing runs look like
s1_fail = s1[~s1.holds_44]
diagnose("lemma44-s1-failing-alignment-min", float(s1_fail.alignment.min()) if len(s1_fail) else 1.0)
diagnose(
    "lemma44-s1-failing-noise-free-holds",
    float((s1_fail.kappa < s1_fail.kappa_bound_noise_free).mean()) if len(s1_fail) else 1.0,
)
end_fail = end_c[~end_c.holds_45]
diagnose("lemma45-end-failing-srank-min", float(end_fail.srank.min()) if len(end_fail) else float(P.r))
diagnose("lemma45-end-failing-kappa-max", float(end_fail.kappa.max()) if len(end_fail) else 1.0)
c_l44_s1.measure_seeds(s1.holds_44.tolist())
c_l44_end.measure_seeds(end_c.holds_44.tolist())
c_l45_end.measure_seeds(end_c.holds_45.tolist())
no_stage = lemmas[
    (lemmas.stage == "init") | ((lemmas.stage == "final") & (lemmas.method == "non-contrastive"))
]
c_l45_nec.measure_seeds((~no_stage.holds_45 & (no_stage.srank < 0.85 * P.r)).tolist())
init_states = lemmas[lemmas.stage == "init"]
# a run whose condition holds at initialisation would not be a case of the condition failing: it counts as 1
c_l44_init.measure_seeds(np.where(init_states.holds_44, 1.0, init_states.alignment).tolist())
c_l44_chance.measure_seeds(init_states.alignment.tolist())
run.glue("lemma44-init-align-max", float(init_states.alignment.max()))
run.glue("lemma44-init-delta-min", float(init_states.delta.min()))
run.glue(
    "lemma45-nec-count",
    f"{int((no_stage.holds_45 | (no_stage.srank >= 0.85 * P.r)).sum())} of {len(no_stage)}",
)
c_ex_al.measure(float(ex_score))
c_ex_sr.measure(float(ex_bal["srank"]))
run.glue("lemma-kappa-star", round(kstar, 3))
run.glue("lemma44-s1-count", f"{int(s1.holds_44.sum())} of {len(s1)}")
run.glue("lemma45-end-count", f"{int(end_c.holds_45.sum())} of {len(end_c)}")
run.glue("lemma-s1-align-min", round(float(s1.alignment.min()), 4))
(
    lemmas.groupby(["stage", "method"])[
        ["kappa", "kappa_bound", "holds_44", "alignment", "holds_45", "srank"]
    ]
    .agg(["min", "max"])
    .round(3)
)

# %%
fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.6, height=3.4)
ax = axes[0, 0]
markers = {"init": "o", "stage1": "s", "final": "D"}
for (stage, method), g in lemmas.groupby(["stage", "method"]):
    ax.scatter(
        g.kappa / g.kappa_bound,
        g.alignment,
        marker=markers[stage],
        color="C0" if method == "non-contrastive" else "C1",
        s=22,
        label=f"{method}, {stage}",
    )
ax.axvline(1.0, color="k", ls=":", lw=1)
ax.axhline(float(lemmas.distinct.mean()), color="0.5", ls="--", lw=0.8)
ax.set_xscale("log")
ax.set_xlabel(r"$\kappa(U_A)/K^*$ (Lemma 4.4 holds left of 1)")
ax.set_ylabel("alignment score (Def. 4.1)")
ax.legend(fontsize="x-small", ncol=2)
ax = axes[0, 1]
kk = np.linspace(1.0, max(2.0, float(lemmas.kappa.max())), 200)
ax.plot(kk, 1 + (P.r - 1) / kk**2, "k-", lw=1, label=r"bound $1 + (r-1)/\kappa^2$ ($\eta = 0$)")
for (stage, method), g in lemmas.groupby(["stage", "method"]):
    ax.scatter(
        g.kappa, g.srank, marker=markers[stage], color="C0" if method == "non-contrastive" else "C1", s=22
    )
ax.axvline(kstar, color="k", ls=":", lw=1)
ax.axhline(0.85 * P.r, color="0.5", ls="--", lw=0.8)
ax.set_xscale("log")
ax.set_xlabel(r"$\kappa(U_A)$ (Lemma 4.5 holds left of $\kappa^*$)")
ax.set_ylabel(r"stable rank of $\mathrm{Cov}\,f_A$")
ax.legend(fontsize="x-small")
plt.show()

# %% [markdown]
# Both implications hold on every state we evaluated (claims {glue:text}`lemma44-implies-aligned:.3g` and
# {glue:text}`lemma45-bound:.3g`, checks of our derivation). Whether training reaches their hypotheses is
# the informative part: at the end of stage 1, {glue:text}`lemma44-s1-count` runs satisfy the explicit
# Lemma 4.4 although every run is aligned (smallest score {glue:text}`lemma-s1-align-min`): the
# worst-case noise bound is far more pessimistic than the typical noise, so the lemma certifies
# alignment only late. At the end of stage 2 the contrastive runs satisfy it
# (fraction {glue:text}`lemma44-final-contrastive:.2f`), and {glue:text}`lemma45-end-count` satisfy the
# explicit Lemma 4.5 ($\kappa^*$ = {glue:text}`lemma-kappa-star`), while all are balanced by result 1: a
# sufficient condition, stricter than its conclusion. No initial or non-contrastive end state is
# close to balanced ({glue:text}`lemma45-nec-count` states are), which is the paper's
# point that a condition-number-reducing stage is necessary. At initialisation the third condition
# fails on its own (smallest $\delta$ {glue:text}`lemma44-init-delta-min:.2f`) and so does the alignment
# (largest score {glue:text}`lemma44-init-align-max:.3f`, about the ½ of an unrelated pair of maps),
# and the paper's example is aligned ({glue:text}`renli-example-aligned:.3f`) with stable rank
# {glue:text}`renli-example-unbalanced:.2f` although its condition number is infinite.
#
# ## Finite width tracks infinite width (Lemmas 5.1–5.3)
#
# The proofs follow the *infinite-width* dynamics and then show that a polynomially wide network tracks
# them through both stages ("the finite-width dynamics closely track the infinite-width one", Lemmas 5.1
# and 5.3; the Gronwall-type Lemma 5.2 keeps the error from blowing up). The rate is not stated. To
# test it we train the learners on the **population** loss, as the proofs do (their footnote 4), so
# that the width is the only source of error (`nlcl.renli.tracking`):
#
# * the loss depends on $W_A, W_B$ only through the Gram matrix $G$ of the columns of
#   $[W_AM_A, W_AH_A, W_BM_B, W_BH_B]/\sqrt m$; with uniform signs the contrastive expectation is exact,
#   $\log\mathbb E_{x_B'}e^{\beta\langle f_A, f_B'\rangle} = \sum_k\log\cosh(\beta(w^\top\tilde G_{AB})_k)$, averaged over
#   the $2^{r+r_\xi}$ latent sign vectors $w$ of $x_A$;
# * gradient descent on $W$ with the step rescaled by $m$ ("so that $U$ does not shrink with $m$") moves
#   $G$ by the closed recursion $G\leftarrow T^\top GT$, $T = I - \eta(S+S^\top)D$, $S = \partial\mathcal L/\partial G$,
#   $D = \mathrm{diag}(\sigma^2, \nu^2)$: the width enters only through $G(0) = D/d + O(m^{-1/2})$, and its
#   limit $D/d$ (orthogonal columns, the paper's Eq. 7) starts the infinite-width dynamics.
#
# **Setting.** $d = 16$, $r = r_\xi = 4$ (so that the $2^8$ sign vectors can be enumerated), $\kappa$ =
# `kappa`, $\nu$ = `nu`, $\lambda$ = `lam`, $\beta$: `beta1` → `beta2`, step `lr`, `track_steps` steps per
# stage, widths `track_widths`, `track_seeds` seeds (each with its own data model, and the infinite-width
# run of that data model). The error is the relative Frobenius distance between the normalised Gram
# matrices (the quantities the loss sees) of the width-$m$ run and the infinite-width run, maximised over
# each stage; $\kappa(U_A)$ is compared the same way.
#
# **Predictions** (our rate: $G(0)$ fluctuates like $m^{-1/2}$, and a tracking error that does not blow up
# keeps that rate):
#
# 1. (check) the Gram recursion is the learner: gradient descent on $W$ at width `track_widths[0]` and the
#    recursion from its $G(0)$ agree to $10^{-9}$;
# 2. stage 1 (Lemma 5.1): log-log slope of the largest error against $m$ in $[-0.7, -0.3]$ (slope per seed,
#    the check applied to the mean over seeds);
# 3. stage 2 (Lemma 5.3): the same, in $[-0.7, -0.3]$; 4. the condition number: slope of
#    $\max_t|\kappa_m-\kappa_\infty|/\kappa_\infty$ in $[-0.7, -0.3]$ (*failed in our first run* at −0.74,
#    slightly too fast; kept, with the numbers in its note);
# 5. the infinite-width dynamics do what the lemmas say: at the end of stage 1 the signal columns of the
#    two modalities are aligned (smallest cosine ≥ 0.99), and — Lemma 5.1's last sentence and Lemma B.17
#    are existential ("there exists a [data model] such that ... the condition number is Θ(κ)") — *some*
#    data seed has $\kappa/2\le\kappa_\infty\le2\kappa$ (until 2026-11-26 we required it of every seed,
#    a universal reading that issue 27 corrected; B.17's own construction is lost). Note that the
#    infinite-width dynamics see a data seed only through $D$, i.e. through the permutation that maps
#    $\sigma_A$ to $\sigma_B$ (24 of them for $r = 4$), so two data seeds can give the same infinite-width
#    run (data seeds 1 and 2 do); 6. at the end of stage 2, $\kappa_\infty\le1.05$;
#    7. the noise-to-signal ratio ends below its initial value.
#
# A window at one $\kappa$ does not test $\Theta(\kappa)$, whose constants the paper leaves open. Added on
# 2026-11-25, after a ci sweep over base seeds had failed prediction 5 at three of five base seeds (numbers in
# the claim's note): 8. (informational) the infinite-width stage 1 run at $\kappa/2$, $\kappa$ and $2\kappa$
# gives a log-log slope of $\kappa_\infty$ against $\kappa$ in $[0.7, 1.3]$ (mean over seeds).

# %%
from nlcl.core.fits import loglog_slope
from nlcl.renli.tracking import (
    gram_condition_number,
    gram_noise_to_signal,
    gram_trajectory,
    infinite_width_gram,
    initial_gram,
    input_scales,
    normalized_gram,
    population_loss,
    tracking_error,
    train_population,
)

TRACK_WIDTHS = list(P.track_widths)
src_t = "Ren & Li 2023, Lemmas 5.1–5.3"
c_tr_check = run.expect(
    "tracking-learner-is-gram",
    kind="check",
    source="our derivation (Gram recursion) — check",
    statement="max |G_learner − G_recursion| over 20 steps at the smallest width.",
    check=at_most(1e-9),
    paper="(not in the paper)",
)
c_tr_s1 = run.expect(
    "tracking-stage1-rate",
    source=src_t + " (Lemma 5.1)",
    statement="Log-log slope vs m of the largest stage-1 distance to the infinite-width run, per seed; the mean over seeds decides.",
    decide=check_on_mean(),
    revised=[
        Revision(
            "log-log slope of the seed-mean error",
            "mean of the per-seed log-log slopes (same range)",
            "issue 13 §3: the claim is measured per seed (measure_seeds) so that the report shows the spread; the statistic changed, the range did not; changed after earlier runs of the slope of the mean had been seen",
            "2026-11-25",
        )
    ],
    check=between(-0.7, -0.3),
    paper="finite width tracks infinite width",
)
c_tr_s2 = run.expect(
    "tracking-stage2-rate",
    source=src_t + " (Lemma 5.3)",
    statement="Log-log slope vs m of the largest stage-2 distance to the infinite-width run, per seed; the mean over seeds decides.",
    decide=check_on_mean(),
    revised=[
        Revision(
            "log-log slope of the seed-mean error",
            "mean of the per-seed log-log slopes (same range)",
            "issue 13 §3: the claim is measured per seed (measure_seeds) so that the report shows the spread; the statistic changed, the range did not; changed after earlier runs of the slope of the mean had been seen",
            "2026-11-25",
        )
    ],
    check=between(-0.7, -0.3),
    paper="finite width tracks infinite width",
)
c_tr_cond = run.expect(
    "tracking-condition-rate",
    source=src_t,
    statement="Log-log slope vs m of max_t |κ_m − κ_∞|/κ_∞ over both stages, per seed; the mean over seeds decides.",
    decide=check_on_mean(),
    revised=[
        Revision(
            "log-log slope of the seed-mean error",
            "mean of the per-seed log-log slopes (same range)",
            "issue 13 §3: the claim is measured per seed (measure_seeds) so that the report shows the spread; the statistic changed, the range did not; changed after earlier runs of the slope of the mean had been seen",
            "2026-11-25",
        )
    ],
    check=between(-0.7, -0.3),
    paper="finite width tracks infinite width",
    not_reproduced=NotReproduced(
        "ci (four widths; sweep over base seeds 0–4: means −0.81 to −0.36, three of five below −0.7): the "
        "error of κ shrinks faster than m^(−1/2) between the widths 64 and 4096 on some seeds, because at "
        "the smallest width the run is far from the limit (its condition-number error is beyond the "
        "linear response whose slope is −½, and the small-width point pulls the fitted line down). "
        "Predicted (diagnostic): without the smallest width the mean per-seed slope lies in [−0.7, −0.3].",
        profiles=("ci",),
        diagnostics=("tracking-condition-slope-without-smallest",),
        expected=lambda m: -0.7 <= DIAG["tracking-condition-slope-without-smallest"] <= -0.3,
        evidence="the right panel of the tracking figure (largest relative error against m)",
    ),
)
c_inf_align = run.expect(
    "infinite-stage1-aligned",
    source="Ren & Li 2023, Sec. 5.2–5.3 / Lemma 5.1",
    statement="Infinite width, end of stage 1: smallest cosine between matching signal columns of U_A and U_B, per seed (every seed must).",
    check=at_least(0.99),
    decide=holds_on_fraction(1.0),
    paper="aligned",
)
STAGE1_SWEEP = Revision(
    "not reproduced in full only, while the seed mean stays in [½, 2]",
    "not reproduced in ci and full wherever the same run measures κ∞ growing faster than κ "
    "(infinite-stage1-kappa-scaling above 1.3)",
    "a ci sweep over base seeds 0–4 failed the claim at seeds 2, 3, 4 (run means 2.67–4.66, per-seed up "
    "to 6.9); an exploratory infinite-width run over 10 data seeds and κ = 2, 4, 8 showed κ∞/κ at the end "
    "of stage 1 growing with κ (up to 2.3, 6.9, 11.7): the ratio depends on how far κ grows after "
    "alignment, which the claim infinite-stage1-kappa-scaling now measures",
    "2026-11-25",
)
EXISTENTIAL = Revision(
    "κ∞/κ within [½, 2] on every data seed (explained where κ∞ grows faster than κ)",
    "κ∞/κ within [½, 2] on at least one data seed: the smallest |log₂(κ∞/κ)| over seeds ≤ 1",
    "issue 27 item 7: Lemma 5.1's last sentence and Lemma B.17 are existential ('there exists a "
    "[data model] satisfying the assumptions of Theorem 4.3 such that, at the end of Stage 1, the "
    "condition number is Θ(κ)'); the universal part of Lemma 5.1, Eq. (9), is an upper bound whose "
    "constants are lost. B.17's construction is lost too, so the data seeds of this run stand in for "
    "the choice of data model. Changed after the development sweep had shown κ∞/κ between 0.58 and 6.9 "
    "across data seeds",
    "2026-11-26",
)
c_inf_cond1 = run.expect(
    "infinite-stage1-condition",
    source="Ren & Li 2023, Lemma 5.1 / Lemma B.17",
    statement="Infinite width, end of stage 1: some data seed has κ∞/κ within [½, 2] (the smallest "
    "|log₂(κ∞/κ)| over the data seeds is ≤ 1; per seed |log₂(κ∞/κ)| is recorded).",
    check=at_most(1.0),
    decide=check_on_pooled(),
    paper="Θ(κ) for some data model",
    revised=[STAGE1_SWEEP, EXISTENTIAL],
    not_reproduced=NotReproduced(
        "With three data seeds an existential statement can miss: at development base seed 4 (data seeds "
        "4–6) every seed left stage 1 above 2κ (κ∞/κ = 4.9, 2.1, 6.9). Mechanism: in this reconstruction "
        "κ∞ at the end of stage 1 grows faster than κ (it rises after alignment by a seed-dependent "
        "factor that grows with κ), so at κ = 4 most data seeds overshoot 2κ. Predicted (diagnostic): "
        "the same run measures the κ-scaling slope of infinite-stage1-kappa-scaling above 1.3.",
        profiles=("ci", "full"),
        diagnostics=("infinite-stage1-kappa-scaling-mean",),
        expected=lambda m: DIAG["infinite-stage1-kappa-scaling-mean"] > 1.3,
        evidence="claim infinite-stage1-kappa-scaling, the per-seed κ∞ at the end of stage 1 (glue "
        "infinite-stage1-kappa) and the left panel of the tracking figure",
    ),
)
c_inf_scaling = run.expect(
    "infinite-stage1-kappa-scaling",
    source="Ren & Li 2023, Lemma 5.1 / Lemma B.17",
    statement="Infinite width, end of stage 1: log-log slope of κ∞ against κ ∈ {κ/2, κ, 2κ}, per seed; "
    "Θ(κ) means slope ≈ 1 (in [0.7, 1.3]); the mean over seeds decides.",
    check=between(0.7, 1.3),
    decide=check_on_mean(),
    paper="Θ(κ)",
    required=False,
    revised=[
        Revision(
            "(no claim)",
            "slope in [0.7, 1.3], informational",
            "added after an exploratory infinite-width run (10 data seeds, κ = 2, 4, 8, 300 steps) had shown "
            "κ∞/κ growing with κ; this is the test of Θ(κ) that a window at one κ is not",
            "2026-11-25",
        )
    ],
)
c_inf_cond2 = run.expect(
    "infinite-stage2-balanced",
    source="Ren & Li 2023, Lemma 5.3",
    statement="Infinite width, end of stage 2: κ∞ per seed (every seed must).",
    check=at_most(1.05),
    decide=holds_on_fraction(1.0),
    paper="≈ 1",
    revised=[
        Revision(
            "(no explanation)",
            "not reproduced in ci (track_steps = 300) where every failing seed's κ∞ is still falling",
            "a ci sweep over base seeds 0–4 failed the claim at seed 4: one data seed ended stage 2 at "
            "κ∞ = 1.69, down from 2.81 five records earlier (the seed with the largest κ∞ after stage 1)",
            "2026-11-25",
        )
    ],
    not_reproduced=NotReproduced(
        "Stage 2 is too short at ci size for the seed that leaves stage 1 with the largest condition "
        "number: in a ci sweep over base seeds 0–4 one data seed ended at κ∞ = 1.69, still falling "
        "(2.81 five records earlier); with the full profile's 600 steps per stage every seed balances. "
        "Predicted (diagnostic): every seed above 1.05 is still falling over the last five records.",
        profiles=("ci",),
        setting={"track_steps": 300},
        diagnostics=("infinite-stage2-failing-still-falling",),
        expected=lambda m: DIAG["infinite-stage2-failing-still-falling"] == 1,
        evidence="the per-seed final κ∞ (glue infinite-kappa-end-max) and the left panel of the tracking figure",
    ),
)


c_inf_nsr = run.expect(
    "infinite-noise-decreases",
    source="Ren & Li 2023, Lemmas 5.1 and 5.3",
    statement="Infinite width: final/initial noise-to-signal ratio per seed (every seed must).",
    check=less_than(1.0),
    decide=holds_on_fraction(1.0),
    paper="small",
)

# %%
TR = dict(d=16, r=4, r_xi=4)
track_seeds = [seed + k for k in range(P.track_seeds)]
t_data = make_data(TR["d"], TR["r"], TR["r_xi"], P.kappa, track_seeds, nu=P.nu, dtype=torch.float64)
G_starts = [infinite_width_gram(t_data)] + [initial_gram(t_data, m)[0] for m in TRACK_WIDTHS]
t_steps, G_all = gram_trajectory(
    torch.cat(G_starts),
    input_scales(t_data).repeat(len(G_starts), 1),
    r=TR["r"],
    r_xi=TR["r_xi"],
    lam=P.lam,
    steps_stage1=P.track_steps,
    steps_stage2=P.track_steps,
    lr=P.lr,
    beta1=P.beta1,
    beta2=P.beta2,
    record_every=max(P.track_steps // 30, 1),
)
S_t = len(track_seeds)
G_all = G_all.reshape(len(t_steps), len(G_starts), S_t, *G_all.shape[-2:])  # (T, 1 + widths, seeds, ·, ·)
G_inf = G_all[:, 0]
stage1 = torch.as_tensor(t_steps <= P.track_steps)
stage2 = torch.as_tensor(t_steps >= P.track_steps)
kappa_inf = gram_condition_number(G_inf, TR["r"], TR["r_xi"])
track_rows = []
for j, m in enumerate(TRACK_WIDTHS):
    err = tracking_error(G_all[:, j + 1], G_inf, TR["r"], TR["r_xi"])  # (T, seeds)
    kap = gram_condition_number(G_all[:, j + 1], TR["r"], TR["r_xi"])
    cerr = (kap - kappa_inf).abs() / kappa_inf
    for s in range(S_t):
        track_rows.append(
            dict(
                m=m,
                seed=track_seeds[s],
                stage1=float(err[stage1, s].max()),
                stage2=float(err[stage2, s].max()),
                condition=float(cerr[:, s].max()),
            )
        )
track = pd.DataFrame(track_rows)
for key, claim in (("stage1", c_tr_s1), ("stage2", c_tr_s2), ("condition", c_tr_cond)):
    table = track.pivot(index="m", columns="seed", values=key)
    per_seed = [loglog_slope(table.index, table[s]) for s in table.columns]
    if key == "condition":  # the explanation's diagnostic: the same slope without the smallest width
        rest = table.iloc[1:]
        diagnose(
            "tracking-condition-slope-without-smallest",
            float(np.mean([loglog_slope(rest.index, rest[s]) for s in rest.columns]))
            if len(rest) >= 2
            else float("nan"),
        )
    claim.measure_seeds(per_seed)
    run.glue(
        f"tracking-{key}-spread",
        f"per seed: mean {np.mean(per_seed):.2f}, range [{min(per_seed):.2f}, {max(per_seed):.2f}], "
        f"{sum(-0.7 <= v <= -0.3 for v in per_seed)}/{len(per_seed)} in [−0.7, −0.3]",
    )
# the learner itself vs the recursion, at the smallest width
G0_small, (Wa0, Wb0) = initial_gram(t_data, TRACK_WIDTHS[0])
kw = dict(lam=P.lam, steps_stage1=10, steps_stage2=10, lr=P.lr, beta1=P.beta1, beta2=P.beta2)
_, G_learner, _ = train_population(Wa0, Wb0, t_data, **kw)
_, G_recursion = gram_trajectory(G0_small, input_scales(t_data), r=TR["r"], r_xi=TR["r_xi"], **kw)
c_tr_check.measure(float((G_learner - G_recursion).abs().max()))
i1 = int(np.flatnonzero(t_steps == P.track_steps)[0])
Gn = normalized_gram(G_inf[i1], TR["r"], TR["r_xi"])
K_t = TR["r"] + TR["r_xi"]
cos = (
    torch.diagonal(Gn[:, : TR["r"], K_t : K_t + TR["r"]], dim1=-2, dim2=-1)
    / (
        torch.diagonal(Gn[:, : TR["r"], : TR["r"]], dim1=-2, dim2=-1)
        * torch.diagonal(Gn[:, K_t : K_t + TR["r"], K_t : K_t + TR["r"]], dim1=-2, dim2=-1)
    ).sqrt()
)
c_inf_align.measure_seeds(cos.min(dim=-1).values.tolist())
# κ∞ when the pair first aligns (all cosines ≥ 0.99), per seed; the end of stage 1 if it never does
Gn_t = normalized_gram(G_inf[: i1 + 1], TR["r"], TR["r_xi"])
cos_t = (
    torch.diagonal(Gn_t[..., : TR["r"], K_t : K_t + TR["r"]], dim1=-2, dim2=-1)
    / (
        torch.diagonal(Gn_t[..., : TR["r"], : TR["r"]], dim1=-2, dim2=-1)
        * torch.diagonal(Gn_t[..., K_t : K_t + TR["r"], K_t : K_t + TR["r"]], dim1=-2, dim2=-1)
    ).sqrt()
).amin(-1)  # (T1, seeds)
aligned = cos_t >= 0.99
i_align = torch.where(aligned.any(0), aligned.int().argmax(0), torch.tensor(i1))
kappa_align = kappa_inf[i_align, torch.arange(S_t)]
run.glue("infinite-align-kappa", ", ".join(f"{float(v):.2f}" for v in kappa_align))
# Θ(κ): the same infinite-width stage 1 at κ/2 and 2κ
kappa_grid = [P.kappa / 2, P.kappa, 2 * P.kappa]
kappa_end1 = []
for kap_ in kappa_grid:
    d_ = make_data(TR["d"], TR["r"], TR["r_xi"], kap_, track_seeds, nu=P.nu, dtype=torch.float64)
    _, G_ = gram_trajectory(
        infinite_width_gram(d_),
        input_scales(d_),
        r=TR["r"],
        r_xi=TR["r_xi"],
        lam=P.lam,
        steps_stage1=P.track_steps,
        steps_stage2=0,
        lr=P.lr,
        beta1=P.beta1,
        beta2=P.beta2,
        record_every=P.track_steps,
    )
    kappa_end1.append(gram_condition_number(G_[-1], TR["r"], TR["r_xi"]).reshape(S_t))
kappa_end1 = torch.stack(kappa_end1)  # (κ values, seeds)
kappa_slopes = [loglog_slope(np.array(kappa_grid), kappa_end1[:, s_].numpy()) for s_ in range(S_t)]
kappa_scaling_mean = float(np.mean(kappa_slopes))
c_inf_scaling.measure_seeds(kappa_slopes)
run.glue(
    "infinite-stage1-by-kappa",
    "; ".join(
        f"κ = {k_:g}: κ∞/κ " + ", ".join(f"{float(v) / k_:.2f}" for v in kappa_end1[j])
        for j, k_ in enumerate(kappa_grid)
    ),
)
ratio1 = kappa_inf[i1] / P.kappa
diagnose("infinite-stage1-kappa-scaling-mean", kappa_scaling_mean)
log2_ratio1 = [abs(float(np.log2(v))) for v in ratio1]
c_inf_cond1.measure(min(log2_ratio1), per_seed=log2_ratio1)
bad_end = kappa_inf[-1] > 1.05
diagnose(
    "infinite-stage2-failing-still-falling",
    float((kappa_inf[-1][bad_end] < kappa_inf[-6][bad_end]).double().mean()) if bool(bad_end.any()) else 1.0,
)
c_inf_cond2.measure_seeds(kappa_inf[-1].tolist())
nsr_inf = gram_noise_to_signal(G_inf, TR["r"], TR["r_xi"])
c_inf_nsr.measure_seeds((nsr_inf[-1] / nsr_inf[0]).tolist())
run.glue("infinite-cos-min", float(cos.min()))
run.glue("infinite-kappa-end-max", float(kappa_inf[-1].max()))
run.glue("infinite-stage1-kappa", ", ".join(f"{float(v):.2f}" for v in kappa_inf[i1]))
run.glue("tracking-widest-stage2", round(float(track[track.m == max(TRACK_WIDTHS)].stage2.mean()), 4))

# %%
fig, axes = nlcl.core.plotting.subplots(1, 3, width=3.8, height=3.2)
ax = axes[0, 0]
norm_m = plt.matplotlib.colors.LogNorm(min(TRACK_WIDTHS), max(TRACK_WIDTHS))
for j, m in enumerate(TRACK_WIDTHS):
    kap = gram_condition_number(G_all[:, j + 1, 0], TR["r"], TR["r_xi"])
    ax.plot(t_steps, kap, color=plt.cm.viridis(norm_m(m)), lw=1)
ax.plot(t_steps, kappa_inf[:, 0], "k--", lw=1.5, label=r"$m=\infty$")
ax.axvline(P.track_steps, color="0.5", ls=":", lw=1)
ax.set_yscale("log")
ax.set_xlabel("step $t$ (population loss)")
ax.set_ylabel(rf"$\kappa(U_A)$ (seed {track_seeds[0]})")
ax.legend(fontsize="small")
fig.colorbar(plt.cm.ScalarMappable(norm=norm_m, cmap="viridis"), ax=ax, label="width $m$")
ax = axes[0, 1]
for j, m in enumerate(TRACK_WIDTHS):
    err = tracking_error(G_all[:, j + 1], G_inf, TR["r"], TR["r_xi"]).mean(1)
    ax.plot(t_steps, err, color=plt.cm.viridis(norm_m(m)), lw=1)
ax.axvline(P.track_steps, color="0.5", ls=":", lw=1)
ax.set_yscale("log")
ax.set_xlabel("step $t$")
ax.set_ylabel(r"$\|\hat G_m-\hat G_\infty\|_F/\|\hat G_\infty\|_F$ (mean over seeds)")
ax = axes[0, 2]
for key, label in (("stage1", "stage 1"), ("stage2", "stage 2"), ("condition", r"$\kappa(U_A)$")):
    mean_ = track.groupby("m")[key].mean()
    ax.plot(mean_.index, mean_.values, "o-", label=label)
mm = np.array(TRACK_WIDTHS, dtype=float)
ax.plot(
    mm,
    track.groupby("m").stage1.mean().iloc[0] * np.sqrt(mm[0] / mm),
    "k:",
    lw=1,
    label=r"$\propto m^{-1/2}$",
)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("width $m$")
ax.set_ylabel("largest relative error")
ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# The width-$m$ learners follow the infinite-width dynamics through both stages with an error that
# shrinks at the central-limit rate: slopes {glue:text}`tracking-stage1-rate:.2f` in stage 1
# ({glue:text}`tracking-stage1-spread`), {glue:text}`tracking-stage2-rate:.2f` in stage 2
# ({glue:text}`tracking-stage2-spread`); for the condition number the slope is
# {glue:text}`tracking-condition-rate:.2f` ({glue:text}`tracking-condition-spread`; see its claim for
# the status of the predicted range). At the largest width the stage-2 error is
# {glue:text}`tracking-widest-stage2`. The relative error of the normalised Gram matrices does not grow
# during training — the balancing of stage 2 even contracts it — as Lemma 5.2's coupling argument says;
# the next section measures the amplification of the raw error itself. The infinite-width
# dynamics themselves align in stage 1 (smallest cosine {glue:text}`infinite-cos-min:.4f`) with
# a condition number that is *not* simply of order $\kappa$: at the end of stage 1 it is
# {glue:text}`infinite-stage1-kappa` for $\kappa$ = `kappa` (at alignment: {glue:text}`infinite-align-kappa`),
# and it rises during stage 1 by a seed-dependent amount that grows with $\kappa$ (κ∞/κ at the end
# of stage 1: {glue:text}`infinite-stage1-by-kappa`; fitted slope of $\log\kappa_\infty$ against $\log\kappa$
# {glue:text}`infinite-stage1-kappa-scaling:.2f`, where $\Theta(\kappa)$ means 1). The dynamics balance in
# stage 2 (largest final $\kappa_\infty$ {glue:text}`infinite-kappa-end-max:.4f`).
# The recursion is the learner (check: {glue:text}`tracking-learner-is-gram:.1e`).

# %% [markdown]
# ## What the width does, what finite batches do, and how much the error is amplified (Lemma 5.2)
#
# **Why the width enters only through $G(0)$, with or without batches.** The closure above holds for
# *any* loss that depends on the outputs only through their inner products: a minibatch loss with the
# batch normalisation of Eq. 2 is a function of $G$ and of the batch's latent signs
# ($\langle W_Ax_{A,i}, W_Bx_{B,j}\rangle/m = w_{A,i}^\top G_{AB}w_{B,j}$ with $w = (z, \xi)$;
# `nlcl.renli.minibatch.batch_loss`), so gradient descent on $W$ is again $G\leftarrow T^\top GT$. In this
# linear model no loss, finite batch or finite sample lets the width act after initialisation: a
# width-$m$ run *is* the infinite-width map started from a perturbed $G(0)$. What the proofs must
# control is therefore (i) how the dynamics amplify that initial perturbation (the Taylor expansion
# around the infinite-width trajectory, whose growth Lemma 5.2's comparative Gronwall bound controls),
# and (ii) a second, width-independent error from finite batches ("polynomially many samples at each
# step", Thm. 4.3).
#
# **Amplification.** Lemma 5.2's bound is lost with its formula; what it bounds is the growth of the
# first-order error $e_t = J_{t-1}\cdots J_0\,\Delta G(0)$, $J_s$ the Jacobian of the step map along the
# infinite-width trajectory. We compute $e_t$ exactly to first order (a central difference of two
# trajectories, `nlcl.renli.minibatch.linear_response`) and compare it with the measured error
# $\Delta G_t = G_m(t) - G_\infty(t)$ (raw Gram matrices, Frobenius norm, same records as above).
#
# **Finite batches.** The same recursion on minibatches of `track_batch` pairs per step
# (`gram_batch_trajectory`), the same batches for every width of a data seed, compared with the
# *population* infinite-width run.
#
# **Predictions** (thresholds set after an exploratory run at data seeds 0–2 in the `ci` setting, which
# measured the ratios 1.02, 0.98, 1.03 for prediction 1; see the revisions):
#
# 1. the error is the amplified first-order error: at the widest width the measured amplification
#    $\max_t\|\Delta G_t\|/\|\Delta G_0\|$ over the first-order one $\max_t\|e_t\|/\|e_0\|$ lies in
#    **[0.9, 1.1]** (every seed);
# 2. the rest is of higher order: the remainder $\max_t\|\Delta G_t - e_t\|/\max_t\|\Delta G_t\|$ is
#    **smaller at the widest width than at the narrowest** (every seed); its log-log slope against $m$
#    (second order: $-\tfrac12$) in [−0.7, −0.3] is informational;
# 3. with finite batches the width no longer matters: the largest distance to the population
#    infinite-width run at the widest width over the same at infinite width (same batches) lies in
#    **[0.8, 1.25]** (every seed). At `ci` size (widest width 4096) this failed at development base seeds 3
#    and 4 on data seed 4, whose slow stage 2 amplifies the width's own error; declared not reproduced in
#    `ci`, predicting that on every failing seed the batch-free width error is at least a quarter of the
#    batch error;
# 4. (informational) that batch error falls like $n^{-1/2}$: at infinite width, the error with $4n$ pairs
#    over the error with $n$ pairs in [0.35, 0.65] (mean over seeds).

# %%
from nlcl.renli.minibatch import gram_batch_trajectory, linear_response, sample_signs

src_g = "Ren & Li 2023, Sec. 5.2 / Lemma 5.2 (first-order error and its amplification)"
EXPLORED = lambda what: Revision(  # noqa: E731
    "(no claim)",
    what,
    "issue 27 item 7: tracking with the amplification of the first-order error and with finite batches; "
    "the threshold was set after one exploratory run at data seeds 0–2 (ci setting)",
    "2026-11-26",
)
c_amp = run.expect(
    "tracking-first-order-amplification",
    source=src_g,
    statement="Widest width: measured error amplification max_t‖ΔG_t‖/‖ΔG_0‖ over the first-order "
    "amplification max_t‖e_t‖/‖e_0‖, per seed (every seed must).",
    check=between(0.9, 1.1),
    decide=holds_on_fraction(1.0),
    paper="finite width tracks the (Taylor-expanded) infinite-width dynamics",
    revised=[EXPLORED("ratio in [0.9, 1.1] at the widest width")],
)
c_rem = run.expect(
    "tracking-remainder-shrinks",
    source=src_g,
    statement="Remainder max_t‖ΔG_t − e_t‖/max_t‖ΔG_t‖: widest width over narrowest, per seed (< 1, every seed must).",
    check=less_than(1.0),
    decide=holds_on_fraction(1.0),
    paper="first-order errors dominate (Taylor expansion)",
    revised=[EXPLORED("ratio < 1")],
)
c_rem_rate = run.expect(
    "tracking-remainder-rate",
    source=src_g,
    statement="Log-log slope of the remainder against m, per seed; the mean over seeds decides.",
    check=between(-0.7, -0.3),
    decide=check_on_mean(),
    paper="second order: m^(−1/2) relative to first order",
    required=False,
    revised=[EXPLORED("slope in [−0.7, −0.3], informational")],
)
c_batch_width = run.expect(
    "tracking-batch-width-free",
    source="Ren & Li 2023, Thm. 4.3 (polynomially many samples per step) / Lemmas 5.1–5.3",
    statement=f"Batches of {P.track_batch} pairs: largest distance to the population infinite-width run, "
    "widest width over infinite width with the same batches, per seed (every seed must).",
    check=between(0.8, 1.25),
    decide=holds_on_fraction(1.0),
    paper="(width enters only at initialisation)",
    revised=[EXPLORED("ratio in [0.8, 1.25]")],
    not_reproduced=NotReproduced(
        "ci (widest width 4096): fails on data seed 4 at development base seeds 3 and 4 (1.31, 1.33), the "
        "data seed whose infinite-width stage 2 is slowest (infinite-stage2-balanced). Mechanism: there "
        "the dynamics amplify the initial width perturbation more, so at m = 4096 the width's own error "
        "is not small against the batch noise, and the two add. Predicted (diagnostic): on every failing "
        "seed the population (batch-free) tracking error at the widest width is at least a quarter of the "
        "batch error at infinite width (a ratio above 1.25 needs at least that much if the two errors "
        "add). Added after the development runs at base seeds 3 and 4 had failed.",
        profiles=("ci",),
        diagnostics=("tracking-batch-failing-width-share",),
        expected=lambda m: DIAG["tracking-batch-failing-width-share"] >= 0.25,
        evidence="the table of amplification, remainder and batch errors per width and seed",
    ),
)
c_batch_noise = run.expect(
    "tracking-batch-noise-scaling",
    source="Ren & Li 2023, Thm. 4.3 (polynomially many samples per step)",
    statement=f"Infinite width: largest distance to the population run with {4 * P.track_batch} pairs per "
    f"step over the same with {P.track_batch}, per seed; the mean over seeds decides (n^(−1/2): 0.5).",
    check=between(0.35, 0.65),
    decide=check_on_mean(),
    paper="(sampling error)",
    required=False,
    revised=[EXPLORED("ratio in [0.35, 0.65], informational")],
)

# %%
rec_every = max(P.track_steps // 30, 1)
kw_t = dict(
    r=TR["r"],
    r_xi=TR["r_xi"],
    lam=P.lam,
    steps_stage1=P.track_steps,
    steps_stage2=P.track_steps,
    lr=P.lr,
    beta1=P.beta1,
    beta2=P.beta2,
    record_every=rec_every,
)
n_w = len(TRACK_WIDTHS)
D_t = input_scales(t_data)
G_inf0 = G_starts[0]
dG0 = torch.cat(G_starts[1:]) - G_inf0.repeat(n_w, 1, 1)  # (widths · seeds, 2K, 2K)
_, e_lin = linear_response(G_inf0.repeat(n_w, 1, 1), dG0, D_t.repeat(n_w, 1), **kw_t)
e_lin = e_lin.reshape(len(t_steps), n_w, S_t, *e_lin.shape[-2:])
dG = G_all[:, 1:] - G_inf[:, None]  # (T, widths, seeds, ·, ·)
norm_dG, norm_e = torch.linalg.matrix_norm(dG), torch.linalg.matrix_norm(e_lin)
amp_meas = norm_dG.max(0).values / norm_dG[0]  # (widths, seeds)
amp_lin = norm_e.max(0).values / norm_e[0]
remainder = torch.linalg.matrix_norm(dG - e_lin).max(0).values / norm_dG.max(0).values


def batch_stream(n, copies):
    """The batches of every seed for each step (one generator per run of the section), repeated for `copies` widths."""
    gen = torch.Generator().manual_seed(seed + 77)
    return lambda t: tuple(w.repeat(copies, 1, 1) for w in sample_signs(S_t, n, TR["r"], TR["r_xi"], gen))


_, G_batch = gram_batch_trajectory(
    torch.cat(G_starts), D_t.repeat(n_w + 1, 1), batch_stream(P.track_batch, n_w + 1), **kw_t
)
G_batch = G_batch.reshape(len(t_steps), n_w + 1, S_t, *G_batch.shape[-2:])
_, G_batch4 = gram_batch_trajectory(G_inf0, D_t, batch_stream(4 * P.track_batch, 1), **kw_t)
batch_err = tracking_error(G_batch, G_inf[:, None], TR["r"], TR["r_xi"]).max(0).values  # (1 + widths, seeds)
batch_err4 = tracking_error(G_batch4, G_inf, TR["r"], TR["r_xi"]).max(0).values  # (seeds,)
display(
    pd.DataFrame(
        {
            "m": np.repeat(TRACK_WIDTHS, S_t),
            "seed": track_seeds * n_w,
            "measured amplification": amp_meas.flatten().numpy(),
            "first-order amplification": amp_lin.flatten().numpy(),
            "remainder": remainder.flatten().numpy(),
            f"batch-{P.track_batch} error": batch_err[1:].flatten().numpy(),
        }
    ).round(4)
)

# %%
c_amp.measure_seeds((amp_meas[-1] / amp_lin[-1]).tolist())
c_rem.measure_seeds((remainder[-1] / remainder[0]).tolist())
c_rem_rate.measure_seeds(
    [loglog_slope(np.array(TRACK_WIDTHS, dtype=float), remainder[:, s_].numpy()) for s_ in range(S_t)]
)
pop_err_widest = tracking_error(G_all[:, -1], G_inf, TR["r"], TR["r_xi"]).max(0).values  # (seeds,)
width_ratio = batch_err[-1] / batch_err[0]
failing_batch = ~((width_ratio >= 0.8) & (width_ratio <= 1.25))
diagnose(
    "tracking-batch-failing-width-share",
    float((pop_err_widest / batch_err[0])[failing_batch].min()) if bool(failing_batch.any()) else 1.0,
)
c_batch_width.measure_seeds(width_ratio.tolist())
c_batch_noise.measure_seeds((batch_err4 / batch_err[0]).tolist())
run.glue("tracking-amplification-range", f"{float(amp_lin.min()):.0f}–{float(amp_lin.max()):.0f}")
gram_growth = torch.linalg.matrix_norm(G_inf).max(0).values / torch.linalg.matrix_norm(G_inf[0])
run.glue("tracking-gram-growth", f"{float(gram_growth.min()):.0f}–{float(gram_growth.max()):.0f}")
run.glue("tracking-batch-error-inf", ", ".join(f"{float(v):.3f}" for v in batch_err[0]))

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.2, height=3.2)
ax = axes[0, 0]
for j, m in enumerate(TRACK_WIDTHS):
    col = plt.cm.viridis(norm_m(m))
    ax.plot(t_steps, norm_dG[:, j, 0] / norm_dG[0, j, 0], color=col, lw=1.2)
    ax.plot(t_steps, norm_e[:, j, 0] / norm_e[0, j, 0], color=col, lw=1, ls="--")
ax.axvline(P.track_steps, color="0.5", ls=":", lw=1)
ax.set_yscale("log")
ax.set_xlabel("step $t$")
ax.set_ylabel(rf"$\|\Delta G_t\|/\|\Delta G_0\|$ (solid), first order (dashed); seed {track_seeds[0]}")
ax = axes[0, 1]
mm = np.array(TRACK_WIDTHS, dtype=float)
ax.plot(mm, remainder.mean(1), "o-", label="remainder (population)")
ax.plot(mm, batch_err[1:].mean(1), "s-", label=f"error, batches of {P.track_batch}")
ax.axhline(float(batch_err[0].mean()), color="0.4", ls="--", lw=1, label="infinite width, same batches")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("width $m$")
ax.set_ylabel("relative error (mean over seeds)")
ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# The finite-width error is the infinite-width dynamics' amplification of the initial perturbation:
# its norm grows by a factor {glue:text}`tracking-amplification-range` over the two stages while the
# infinite-width Gram matrix itself grows by {glue:text}`tracking-gram-growth` (the weights' scale is free
# under the normalisation, so much of that growth is scale, not error), with
# the measured amplification at the widest width {glue:text}`tracking-first-order-amplification:.2f` times
# the first-order one (mean over seeds), and a higher-order remainder that shrinks with the width
# (widest over narrowest {glue:text}`tracking-remainder-shrinks:.2f`; slope
# {glue:text}`tracking-remainder-rate:.2f`). With finite batches the width stops mattering: the batch
# noise (largest relative error {glue:text}`tracking-batch-error-inf` at infinite width) dominates, and
# the widest width is {glue:text}`tracking-batch-width-free:.2f` times as far from the population run as
# infinite width with the same batches. Quadrupling the batch multiplies that error by
# {glue:text}`tracking-batch-noise-scaling:.2f` on average (the $n^{-1/2}$ rate predicts 0.5).

# %% [markdown]
# ## Thm. 4.3(a): the non-contrastive loss stops at an aligned, unbalanced stationary point
#
# Thm. 4.3(a) says that with positive pairs only, Algorithm 3.1 "will converge to an approximate
# stationary point, at which the learned representations are aligned but not balanced". Every
# aligned, noise-free state ($\tilde U_A = \tilde U_B$, $\tilde V = 0$) is a global minimum of $L_{NC}$
# ($=-1$, whatever the singular values of $U_A$), so nothing in the loss pushes towards balance. We run
# the infinite-width population dynamics with $\lambda = 0$ (the tracking section's data models,
# $2\times$`track_steps` steps) and measure the scale-free gradient norm
# $\|\partial L/\partial X\,D^{1/2}\|_F\,\|X\|_F$ (`nlcl.renli.tracking.stationarity`; the loss is invariant
# under $G\to c^2G$, so this does not depend on the weights' free scale).
#
# **Predictions** (declared before this section's first run): per seed, (1) the gradient norm at the end
# is **≤ 1%** of its initial value (an approximate stationary point; every seed), and (2) at that point
# the representation is not balanced: stable rank of $\mathrm{Cov}\,f_A$ (from $G_{AA}$) **< 0.85 r**
# (result 1's balance criterion; every seed).

# %%
from nlcl.renli.tracking import stationarity

c_stat = run.expect(
    "thm43a-stationary",
    source="Ren & Li 2023, Thm. 4.3(a)",
    statement="Infinite width, λ = 0: scale-free gradient norm at the end over at the start, per seed (every seed must).",
    check=at_most(0.01),
    decide=holds_on_fraction(1.0),
    paper="approximate stationary point",
)
c_stat_bal = run.expect(
    "thm43a-stationary-unbalanced",
    source="Ren & Li 2023, Thm. 4.3(a)",
    statement="Infinite width, λ = 0, at the end: stable rank of Cov f_A per seed (< 0.85 r, every seed must).",
    check=less_than(0.85 * TR["r"]),
    decide=holds_on_fraction(1.0),
    paper="aligned but not balanced",
)

# %%
_, G_nc = gram_trajectory(
    G_inf0,
    D_t,
    r=TR["r"],
    r_xi=TR["r_xi"],
    lam=0.0,
    steps_stage1=2 * P.track_steps,
    steps_stage2=0,
    lr=P.lr,
    record_every=2 * P.track_steps,
)
stat = stationarity(G_nc, D_t.expand(G_nc.shape[0], *D_t.shape), TR["r"], TR["r_xi"], 0.0)  # (2, seeds)
ev_nc = torch.linalg.eigvalsh(G_nc[-1, :, :K_t, :K_t])
srank_nc = ev_nc.sum(-1) / ev_nc[..., -1]
loss_nc = population_loss(G_nc[-1], TR["r"], TR["r_xi"], 0.0, 1.0)
c_stat.measure_seeds((stat[-1] / stat[0]).tolist())
c_stat_bal.measure_seeds(srank_nc.tolist())
run.glue("thm43a-loss-gap", f"{float((loss_nc + 1).max()):.1e}")
run.glue(
    "thm43a-kappa", ", ".join(f"{float(v):.1f}" for v in gram_condition_number(G_nc[-1], TR["r"], TR["r_xi"]))
)

# %% [markdown]
# The non-contrastive dynamics slow down to a gradient norm {glue:text}`thm43a-stationary:.1e` times the
# initial one (mean over seeds), at a loss within {glue:text}`thm43a-loss-gap` of its minimum $-1$, with the
# condition number of $U_A$ at {glue:text}`thm43a-kappa` and a stable rank of
# {glue:text}`thm43a-stationary-unbalanced:.2f` of $r$ = 4: an aligned, unbalanced approximate stationary point.

# %% [markdown]
# ## What we learned
#
# In this reconstruction both losses align the two modalities (final alignment
# {glue:text}`renli-align-nc:.3f` without and {glue:text}`renli-align-c:.3f` with negative pairs, means
# over seeds; smallest single run {glue:text}`renli-align-min:.3f`). With
# positive pairs only, the condition number of $U_A = W_AM_A$ keeps growing after alignment (by a factor
# of at least {glue:text}`renli-nc-cond-grows-min:.2f`) and ends near {glue:text}`renli-nc-cond-final:.2f`; the
# stable rank of the representation stays at most {glue:text}`renli-nc-unbalanced-max:.2f` of $r$: aligned but
# not balanced. The negative pairs of stage 2 bring the condition number down to at most
# {glue:text}`renli-c-cond-max:.3f` and the stable rank up to at least {glue:text}`renli-c-srank-min:.2f` (median
# {glue:text}`renli-c-srank-median:.2f`) while the alignment is kept. The noise-to-signal ratio ends below its
# initial value in every main run at $\kappa$ = `kappa` (largest final/initial ratio
# {glue:text}`renli-nsr-main-kappa-max:.2f`); over every $\kappa$ of the sweep it does so on
# {glue:text}`renli-nsr-fraction` seeds (largest ratio {glue:text}`renli-nsr-max:.2f`; see the claim's
# verdict). Note that it starts small already ($\nu = 0.3$ against signal strengths in $[1,\kappa]$).
#
# Stage 1 tracks the non-contrastive run: at $\beta_1$ = `beta1` the weights part by a relative
# {glue:text}`renli-stage1-deviation-median:.3f` (median over seeds; the condition-number trajectories differ by at most
# {glue:text}`renli-stage1-cond-gap:.0%`), and the deviation shrinks with $\beta_1$
# ($\delta(0.01)/\delta(\beta_1)$ = {glue:text}`renli-stage1-scaling:.2f`, mean over seeds). The residual drift is the
# balancing term $\frac{\lambda\beta}{2}\mathrm{Var}\,S$ already at work: over a long stage 1 it lowers
# the condition number slowly, which the paper's analysis avoids by ending stage 1 as soon as the pair
# is aligned.
#
# With explicit constants, Lemmas 4.4 and 4.5 hold but are conservative: trained models are aligned and
# balanced well before the sufficient conditions certify it; at initialisation, where $U_A\not\approx U_B$ on
# its own, the alignment is near chance. The proofs' strategy checks out as far as this linear model can
# test it: the width enters only through the initial Gram matrix (with or without minibatches), the
# finite-width error is the first-order error amplified along the infinite-width trajectory (measured
# and first-order amplifications agree at the widest width, the remainder shrinks with $m$), and with
# finite batches the width-independent batch noise dominates. Without negative pairs the population
# dynamics stop at an aligned, unbalanced approximate stationary point (Thm. 4.3(a)). Several claims
# depend on the finite length of our stages (the noise-to-signal ratio at the largest $\kappa$, the
# balance at the end of a fixed stage 2), which the paper's polynomial step counts do not have.
#
# Try it yourself: `nlcl run renli-simulation -p kappa 10 -p lam 0.5` or `-p beta1 0.2` (claims are then
# reported but not required).
#
# **What's next.** {doc}`renli-mnist-captions` repeats the comparison on real images and captions with
# frozen encoders and trainable heads (their Fig. 2).

# %%
run.finish()
