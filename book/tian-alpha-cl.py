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
# # Contrastive covariance and α-CL (Tian 2023, Sec. 2)
#
# **Overview.** {cite:t}`tian2023nonlinearity` studies contrastive learning through one object, the
# *contrastive covariance* $\mathbb{C}_\alpha$ (Eq. 3), and one energy,
# $\mathcal{E}_\alpha = \tfrac12\operatorname{tr}\mathbb{C}_\alpha[\mathbf{f}]$, maximized by gradient ascent with
# the pairwise importance $\alpha$ held fixed (α-CL, Eq. 2). This chapter checks the four facts the
# rest of the paper stands on:
#
# 1. InfoNCE {cite:p}`oord2018representation` (Eq. 1) *is* an α-CL: its gradient is the gradient of
#    an α-CL energy, with an explicit $\alpha$ and an exact constant.
# 2. The Gaussian pairwise importance has kernel structure (Lemma 1), with an explicit nonnegative
#    feature map.
# 3. For large batches $\mathbb{C}_\alpha$ becomes a sum of ordinary variances of the conditional mean
#    (Lemma 2, Corollary 1), at the Monte Carlo rate $N^{-1/2}$.
# 4. For a one-layer network with homogeneous activation, the gradient flow on the sphere is
#    $\dot{\mathbf{w}} = P^\perp_{\mathbf{w}} A(\mathbf{w})\mathbf{w}$ (Lemma 3) — and this fails without homogeneity.
#
# **Seeds.** Sections 1, 2 and 4 test identities that hold for *every* input, measured as the worst
# case over many random draws (networks, batches, sample pairs, directions). Section 3 (Lemma 2) is a
# large-batch limit of a random quantity, so its claims are measured on `n_seeds` independent
# repetitions of the whole study (a new mixture, feature map and batches per seed), each decided by a
# seed rule declared in the ledger.
#
# **Prerequisites.** Sec. 2 of the paper (Eqs. 1–4, Lemmas 1–2), Sec. 3 up to Lemma 3, App. A.1 and B.2.
# The helpers live in `nlcl.tian.contrastive` (Eq. 3, α families), `nlcl.tian.losses` (Eq. 1) and
# `nlcl.tian.landscape` (Lemma 3).
#
# **Expected run time.** {glue:text}`run-time` `ci` runs 3 seeds of the Lemma 2 study; `full` 5 seeds, with N up
# to 4096.

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"  # "ci" (small sizes, CPU) or "full" (larger batches, more trials)
seed: int = 0  # base random seed (networks, data, batches)
device: str = "auto"  # "auto", "cpu" or "cuda" (this chapter uses the CPU, float64)
tau: float = 0.5  # temperature τ of InfoNCE and of the Gaussian α
eps: float = 0.5  # ε of InfoNCE (Eq. 1); 0 gives the usual InfoNCE
alpha: str = "gaussian"  # α family of Lemmas 2 and 3 (nlcl.tian.contrastive)
activations: list | None = None  # Lemma 3 figure's activations; None: all
n_trials: int | None = None  # random networks/batches (InfoNCE), draws (Cor. 1)
batch_n: int | None = None  # samples N per batch (InfoNCE identity, Lemma 3)
n_max: int | None = None  # largest batch size N of the Lemma 2 study
n_repeats: int | None = None  # independent batches per N in the Lemma 2 study
n_seeds: int | None = None  # repetitions of the Lemma 2 study (mixture, features)

# %% tags=["hide-cell"]
import nlcl

run = nlcl.start(
    "tian-alpha-cl",
    globals(),
    spec={
        "tau": {"range": [0.01, 100.0]},
        "eps": {"range": [0.0, 100.0]},
        "alpha": {"choices": ["uniform", "gaussian", "infonce"]},
        "activations": {
            "length": [1, 7],
            "items": {
                "type": "str",
                "choices": [
                    "linear",
                    "relu",
                    "leaky_relu",
                    "quadratic",
                    "monomial",
                    "sigmoid",
                    "tanh",
                ],
            },
        },
        "n_trials": {"range": [1, 100_000], "ci": 32, "full": 256},
        "batch_n": {"range": [2, 4096], "ci": 16, "full": 64},
        "n_max": {"range": [64, 1_000_000], "ci": 1024, "full": 4096},
        "n_repeats": {"range": [2, 100_000], "ci": 16, "full": 64},
        "n_seeds": {"range": [2, 100], "ci": 3, "full": 5},
    },
)
P = run.params

# %% tags=["hide-cell"]
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from nlcl.core.activations import ACTIVATIONS, get_activation
from nlcl.tian.alpha_cl import (
    bias_z,
    corollary1_study,
    lemma2_study,
    lemma3_relative_error,
    relative_difference_per_trial,
    truncation_errors,
)
from nlcl.tian.alpha_cl_plots import (
    plot_infonce_identity,
    plot_lemma1,
    plot_lemma2,
    plot_lemma3,
)
from nlcl.tian.contrastive import (
    energy,
    gaussian_alpha,
    half_sq_dists,
    infonce_alpha,
    make_alpha,
    stack_views,
)
from nlcl.tian.losses import alpha_cl_loss, info_nce

# %% [markdown]
# The claims, declared before anything is measured. They live in the chapter's claims ledger,
# `book/claims/tian-alpha-cl.yaml` (statement, source, check, the paper's value, seed rule and
# revisions). The Lemma 3 claims cover every activation of
# `nlcl.core.activations`; the `activations` parameter picks the ones the Lemma 3 figure shows.

# %%
run.show_ledger()

# %% [markdown]
# One random stream for Sections 1, 2 and 4 (the Lemma 2 study draws its own, per seed).

# %%
rng = np.random.default_rng(run.seed)

# %% [markdown]
# ## 1. InfoNCE is an α-CL
#
# **The result.** Write $d^2_{ij} = \tfrac12\|\mathbf{f}_i - \mathbf{f}_j\|^2$ and
# $d^2_i = \tfrac12\|\mathbf{f}_i - \mathbf{f}_{i'}\|^2$. InfoNCE (Eq. 1) can be rewritten
# $L = \tau\sum_i \log\big(\epsilon + \sum_{j\ne i} e^{(d^2_i - d^2_{ij})/\tau}\big)$, and differentiating gives
#
# $$\nabla_\theta L = -\nabla_\theta \sum_i\sum_{j\ne i}\alpha_{ij}\,(d^2_{ij} - d^2_i),\qquad
# \alpha_{ij} = \frac{e^{-d^2_{ij}/\tau}}{\epsilon\, e^{-d^2_i/\tau} + \sum_{k\ne i} e^{-d^2_{ik}/\tau}}\ \text{held fixed.}$$
#
# Since $\operatorname{tr}[(\mathbf{f}_i-\mathbf{f}_j)(\mathbf{f}_i-\mathbf{f}_j)^\top] = \|\mathbf{f}_i-\mathbf{f}_j\|^2 = 2d^2_{ij}$,
# Eq. 3 gives $\operatorname{tr}\mathbb{C}_\alpha[\mathbf{f}] = \frac{1}{N^2}\sum_{ij}\alpha_{ij}(d^2_{ij}-d^2_i)$, so with
# $\alpha_{ii} = 0$ the surrogate is **exactly $2N^2\,\mathcal{E}_\alpha$**: $\nabla_\theta L = -2N^2\,\nabla_\theta\mathcal{E}_{\mathrm{sg}(\alpha)}$.
#
# **Prediction.** Both statements are identities, so on random two-layer ReLU networks and random
# batches (float64) the two gradients, and the surrogate and $2N^2\mathcal{E}_\alpha$, agree to
# floating-point precision for every τ and ε:
#
# ```{nlcl-claims} alphacl-infonce-gradient alphacl-energy-constant
# ```
#
# $T$ independent random networks $f(\mathbf{x}) = W_2\,\mathrm{relu}(W_1\mathbf{x})$ are
# evaluated side by side (the leading dimension is the trial); the second view of each sample
# is a perturbed copy.

# %%
T, N, d_in, hidden, d_out = P.n_trials, P.batch_n, 6, 16, 4
W1 = torch.randn(T, 1, hidden, d_in, dtype=torch.float64, requires_grad=True)
W2 = torch.randn(T, 1, d_out, hidden, dtype=torch.float64, requires_grad=True)
x = torch.randn(T, 2, N, d_in, dtype=torch.float64)
x[:, 1] = x[:, 0] + 0.3 * torch.randn(T, N, d_in, dtype=torch.float64)
f = torch.relu(x @ W1.transpose(-1, -2)) @ W2.transpose(-1, -2)  # (T, 2, N, d_out)
f1, f2 = f[:, 0], f[:, 1]

# %% [markdown]
# InfoNCE is summed over the trials (each trial's gradient sees only its own loss); the InfoNCE
# α is detached (the stop-gradient) and plugged into the α-CL loss.
#
# ```{nlcl-source} nlcl.tian.contrastive.infonce_alpha nlcl.tian.alpha_cl.relative_difference_per_trial nlcl.tian.losses.info_nce nlcl.tian.losses.alpha_cl_loss
# ```

# %%
loss_nce = info_nce(f1, f2, P.tau, P.eps).sum()
g_nce = torch.autograd.grad(loss_nce, (W1, W2), retain_graph=True)
a_nce = infonce_alpha(f1, f2, P.tau, P.eps)  # (T, N, N), detached: stop-gradient
loss_acl = alpha_cl_loss(f1, f2, a_nce).sum()
g_acl = torch.autograd.grad(loss_acl, (W1, W2), retain_graph=True)
rel_grad = relative_difference_per_trial(g_nce, g_acl)

# %% [markdown]
# The constant: the surrogate against $2N^2\mathcal{E}_\alpha$ (Eq. 3).
#
# ```{nlcl-source} nlcl.tian.contrastive.half_sq_dists nlcl.tian.contrastive.energy nlcl.tian.contrastive.stack_views
# ```

# %%
d_ij, d_i = half_sq_dists(f1.detach()), 0.5 * ((f1 - f2).detach() ** 2).sum(-1)
surrogate = (a_nce * (d_ij - d_i[..., None])).sum((-1, -2))
two_n2_e = 2 * N**2 * energy(stack_views(f1.detach(), f2.detach()), a_nce)
rel_const = ((surrogate - two_n2_e).abs() / surrogate.abs()).numpy()

# %% [markdown]
# The figure: the two gradients entry by entry, and the relative difference per network.
#
# ```{nlcl-source} nlcl.tian.alpha_cl_plots.plot_infonce_identity
# ```

# %%
plot_infonce_identity(g_nce, g_acl, rel_grad, rel_const, tau=P.tau, eps=P.eps, n=N)
plt.show()

# %%
run.claim("alphacl-infonce-gradient").measure(float(rel_grad.max()))
run.claim("alphacl-energy-constant").measure(float(rel_const.max()))

# %% [markdown]
# ## 2. Lemma 1: the Gaussian α is a kernel
#
# **The result.** $\alpha_{ij} = \exp(-\|\mathbf{g}(\mathbf{x}_0[i]) - \mathbf{g}(\mathbf{x}_0[j])\|^2/2\tau)$ computed on
# *un-augmented* samples factors as $\phi(\mathbf{x}_0[i])^\top\phi(\mathbf{x}_0[j])$ with a nonnegative
# feature map (App. A.1, Eqs. 17–22): shift $\mathbf{y} = \mathbf{g} - \mathbf{v} \ge 0$, then
# $\phi = e^{-\|\mathbf{y}\|^2/2\tau}\,[1, \tau^{-1/2}\mathbf{y}, \tfrac{1}{\sqrt{2!}}\mathrm{AllChoose}(\tau^{-1/2}\mathbf{y}, 2), \dots]$.
#
# **Prediction.** We take the 1-D $g = h(\mathbf{w}^\top\mathbf{x}_0)$ of Corollary 2 (ReLU, random data and
# $\mathbf{w}$). (a) A kernel's Gram matrix is PSD. (b) Truncating $\phi$ at order $K$ leaves exactly
# $\alpha_{ij}\,\Pr[\mathrm{Poisson}(y_iy_j/\tau) > K]$ (the tail of the series of $e^{s}$), so the
# measured truncation error must match this prediction at every $K$, and (c) at the order $K^\star$
# where the predicted error becomes negligible the feature map reproduces $\alpha$:
#
# ```{nlcl-claims} lemma1-gram-psd lemma1-truncation-law lemma1-feature-map
# ```
#
# The Gaussian α on the 1-D feature $g$:
#
# ```{nlcl-source} nlcl.tian.contrastive.gaussian_alpha
# ```

# %%
n_lemma1 = 48
x0 = rng.standard_normal((n_lemma1, 3))
w_dir = rng.standard_normal(3)
w_dir /= np.linalg.norm(w_dir)
g0 = np.maximum(x0 @ w_dir, 0.0)  # g = h(wᵀx0), ReLU: the α_g of Corollary 2
alpha_g = gaussian_alpha(g0, P.tau)
eig = np.linalg.eigvalsh(alpha_g)

# %% [markdown]
# The truncation error at every order $K$ up to $K^\star$, measured and predicted by the
# Poisson tail (`nlcl.tian.alpha_cl.truncation_errors`).
#
# ```{nlcl-source} nlcl.tian.alpha_cl.truncation_errors
# ```

# %%
k_star, ks, measured_err, predicted = truncation_errors(g0, P.tau)
dev = np.abs(measured_err - predicted).max()
run.glue("lemma1-k-star", k_star)

# %% [markdown]
# The figure: the truncation error against its Poisson-tail prediction, and the Gram spectrum.
#
# ```{nlcl-source} nlcl.tian.alpha_cl_plots.plot_lemma1
# ```

# %%
plot_lemma1(ks, measured_err, predicted, eig, tau=P.tau)
plt.show()

# %%
run.claim("lemma1-gram-psd").measure(float(eig.min() / eig.max()))
run.claim("lemma1-truncation-law").measure(float(dev))
run.claim("lemma1-feature-map").measure(float(np.abs(measured_err[-1]).max()))

# %% [markdown]
# ## 3. Lemma 2: contrastive covariance → variance of the conditional mean
#
# **The result.** If α has kernel structure, then as $N\to\infty$
# $\mathbb{C}_\alpha[\mathbf{g}(\mathbf{x})] \to \sum_l z_l^2\,\mathbb{V}_{\mathbf{x}_0\sim\tilde p_l}\big[\mathbb{E}_{\mathbf{x}\sim p_{\mathrm{aug}}(\cdot|\mathbf{x}_0)}[\mathbf{g}(\mathbf{x})\,|\,\mathbf{x}_0]\big]$ (Eq. 4).
# For uniform α this is $\mathbb{V}[\mathbb{E}[\mathbf{g}|\mathbf{x}_0]]$: the inter-sample term of Eq. 3 tends to the total variance
# $\mathbb{V}[\mathbf{g}]$ and the positive-pair term to $\mathbb{E}[\mathbb{V}[\mathbf{g}|\mathbf{x}_0]]$, and the law of total
# variance closes the gap. Before summing over the kernel's features, the proof (Eqs. 26–41)
# gives a limit that only needs $\mathcal{K}(\mathbf{x}_0, \mathbf{y}_0)$; for a discrete $\mathbf{x}_0$ it is a finite sum
# (`nlcl.tian.contrastive.population_contrastive_covariance`).
#
# **Setting.** A mixture: $\mathbf{x}_0$ takes 4 values in $\mathbb{R}^3$; an augmentation adds
# $\sigma\boldsymbol{\xi}$ with $\boldsymbol{\xi}$ uniform on $\{\pm\mathbf{e}_1, \pm\mathbf{e}_2, \pm\mathbf{e}_3\}$, so every conditional moment
# is an exact finite average; $\mathbf{g}(\mathbf{x}) = \mathrm{ReLU}(G\mathbf{x})\in\mathbb{R}^2$ for a fixed random $G$. The
# α family is the `alpha` parameter (Gaussian α uses $\mathcal{K}(\mathbf{a},\mathbf{b}) = e^{-\|\mathbf{a}-\mathbf{b}\|^2/2\tau}$ on
# $\mathbf{x}_0$; the InfoNCE α has no kernel structure, so there the study falls back to the Gaussian α).
#
# **What the paper states.** Lemma 2 states the limit only: no rate and no error at any finite
# $N$. The error $\mathbb{C}_\alpha - \mathbb{C}_\infty$ at finite $N$ has a systematic part (the bias
# of the mean over batches, which vanishes if the limit is right) and a fluctuating part (which
# shrinks as $N$ grows). We test the two separately, in units that do not depend on the Monte Carlo
# constant of the mixture.
#
# **Prediction.** (a) For uniform α the closed-form limit equals
# $\mathbb{V}[\mathbf{g}] - \mathbb{E}[\mathbb{V}[\mathbf{g}|\mathbf{x}_0]]$ computed independently (a check of our
# code). (b) The fluctuations shrink at the Monte Carlo rate: the RMS relative error
# $\|\mathbb{C}_\alpha - \mathbb{C}_\infty\|_F/\|\mathbb{C}_\infty\|_F$ over `n_repeats` batches falls as
# $N^{-1/2}$ (a log–log slope of $-1/2$). (c) The limit is $\mathbb{C}_\infty$: at the largest $N$ the
# mean of $\mathbb{C}_\alpha[\mathbf{g}]$ over the batches agrees with $\mathbb{C}_\infty$ within its Monte
# Carlo standard error, $z = (\overline{\mathbb{C}}_\alpha - \mathbb{C}_\infty)/(\mathrm{sd}/\sqrt{R})$ on the
# three entries of the symmetric $2\times 2$ matrix. With the few batches of the `ci` profile this
# z-test has heavy tails and little power, so (c) is decided at paper scale. The RMS relative error at
# the largest $N$ is reported for information: it depends on the mixture's Monte Carlo constant, and
# the paper states no value for it.
#
# ```{nlcl-claims} lemma2-total-variance lemma2-rate lemma2-largest-n lemma2-rms-largest-n
# ```

# %% [markdown]
# The InfoNCE α has no kernel structure: with `alpha = "infonce"` the study uses the Gaussian α.
# Each seed's study (`nlcl.tian.alpha_cl.lemma2_study`) draws a new mixture, feature map and
# batches from its own stream (stream 2: Lemma 2 only).
#
# ```{nlcl-source} nlcl.tian.alpha_cl.lemma2_study
# ```

# %%
lemma2_family = P.alpha if P.alpha in ("uniform", "gaussian") else "gaussian"
ns = 2 ** np.arange(4, int(np.log2(P.n_max)) + 1)
seeds2 = [run.seed + s for s in range(P.n_seeds)]
studies = [
    lemma2_study(np.random.default_rng([2, s]), ns, P.n_repeats, lemma2_family, P.tau)
    for s in seeds2
]

# %% [markdown]
# Per seed: the law-of-total-variance gap, the RMS error per $N$ with its log–log fit
# (rows [slope, intercept]), and the bias at the largest $N$ in standard errors.
#
# ```{nlcl-source} nlcl.tian.alpha_cl.bias_z
# ```

# %%
ltv_gaps = np.array([st[0] for st in studies])
rms_all = np.stack([st[1] for st in studies])  # (seeds, len(ns))
fits = np.array([np.polyfit(np.log(ns), np.log(r), 1) for r in rms_all])
z_all = np.array([bias_z(st[2], st[3]) for st in studies])

# %% [markdown]
# The figure: the RMS relative error against $N$ per seed, and the bias at the largest $N$.
#
# ```{nlcl-source} nlcl.tian.alpha_cl_plots.plot_lemma2
# ```

# %%
plot_lemma2(
    ns, seeds2, rms_all, fits, z_all, family=lemma2_family, n_repeats=P.n_repeats
)
plt.show()

# %%
display(
    pd.DataFrame(
        {
            "slope of RMS error vs N": fits[:, 0],
            f"RMS rel. error at N = {ns[-1]}": rms_all[:, -1],
            "largest |z| at N_max": z_all,
            "LTV gap (uniform α)": ltv_gaps,
        },
        index=pd.Index(seeds2, name="seed"),
    ).round(4)
)

# %%
run.claim("lemma2-total-variance").measure(float(ltv_gaps.max()))
run.claim("lemma2-rate").measure_seeds(fits[:, 0])
run.claim("lemma2-largest-n").measure_seeds(z_all)
run.claim("lemma2-rms-largest-n").measure_seeds(rms_all[:, -1])

# %% [markdown]
# ### Corollary 1: no augmentation, a non-uniform α
#
# **The result.** Without augmentation, $p_{\mathrm{aug}}(\mathbf{x}|\mathbf{x}_0) = \delta(\mathbf{x}-\mathbf{x}_0)$,
# Eq. 4 becomes $\mathbb{C}_\alpha[\mathbf{g}] \to \sum_l z_l^2\,\mathbb{V}_{\tilde p_l}[\mathbf{g}]$ (Corollary 1):
# a sum of ordinary variances, each under the data density reweighted by one feature $\phi_l$ of the
# kernel, $\tilde p_l = \phi_l\,p_{\mathbb{D}}/z_l$ with $z_l = \int\phi_l\,p_{\mathbb{D}}$ (Def. 2). The study
# above tests the limit in its kernel form; this is the feature form, with a non-uniform α.
#
# **Setting.** $\mathbf{x}_0$ takes 6 random values in $\mathbb{R}^3$ with probabilities $n_k/N$ (random
# counts $n_k$), $\mathbf{g}(\mathbf{x}) = \mathrm{ReLU}(G\mathbf{x})$, and α is the Gaussian α of Lemma 1 on a
# scalar feature $s(\mathbf{x}_0)$ scaled to $[0, 1]$, at temperature τ. The batch holds each value $n_k$
# times and is its own second view, so its empirical distribution is the population: Eq. 3 on it
# *is* the $N \to \infty$ limit (the $i = j$ terms vanish). The right side is built independently, from
# the feature map of Lemma 1 (Eqs. 20–22, truncated where its tail is below $10^{-14}$) and the
# adjusted distributions $\tilde p_l$.
#
# **Prediction.** The two sides agree to round-off in each of `n_trials` random draws. The check can
# tell a wrong form apart: the non-uniform α moves the limit away from the uniform-α value
# $\mathbb{V}[\mathbf{g}]$ by far more than round-off (printed below).
#
# ```{nlcl-claims} cor1-gaussian-no-augmentation
# ```
#
# ```{nlcl-source} nlcl.tian.alpha_cl.corollary1_study nlcl.tian.alpha_cl.adjusted_variance_sum
# ```

# %%
cor1_rng = np.random.default_rng([5, run.seed])
cor1_err, cor1_dist = corollary1_study(cor1_rng, P.tau, P.n_trials)
run.glue("cor1-dist-median", f"{np.median(cor1_dist):.2g}")
run.glue("cor1-dist-min", f"{cor1_dist.min():.1e}")
print(
    f"{len(cor1_err)} draws: largest relative error {cor1_err.max():.1e}; distance of "
    f"C_α[g] from a multiple of V[g]: median {np.median(cor1_dist):.2g}, "
    f"smallest {cor1_dist.min():.1e}"
)
run.claim("cor1-gaussian-no-augmentation").measure(float(cor1_err.max()))

# %% [markdown]
# The relative distance of the limit from the nearest multiple of $\mathbb{V}[\mathbf{g}]$ is
# {glue:text}`cor1-dist-median` in the median draw (smallest {glue:text}`cor1-dist-min`): with a
# non-uniform α the contrastive covariance is a different matrix, not a rescaled variance, and
# Corollary 1's sum of reweighted variances accounts for it.

# %% [markdown]
# ## 4. Lemma 3: the one-layer dynamics, and why homogeneity matters
#
# **The result.** For one node $f = h(\mathbf{w}^\top\mathbf{x})$ with $\|\mathbf{w}\| = 1$ and α held fixed, homogeneity
# $h(x) = h'(x)x$ (Assumption 1) turns $h(\mathbf{w}^\top\mathbf{x})$ into $\mathbf{w}^\top\tilde{\mathbf{x}}^{\mathbf{w}}$ (Eq. 6), and the
# Riemannian gradient of $\mathcal{E}_\alpha$ on the sphere is $P^\perp_\mathbf{w} A(\mathbf{w})\mathbf{w}$ with
# $A(\mathbf{w}) = \mathbb{C}_\alpha[\tilde{\mathbf{x}}^\mathbf{w}]$ (Lemma 3, Eq. 7). For the monomial $x^p$ the gate is $x^{p-1} = h'/p$
# and the gradient picks up the factor $p$ (a rescaling of time; `nlcl.core.activations`). Without
# homogeneity the paper's $\tilde{\mathbf{x}}^\mathbf{w} = \mathbf{x}h'(\mathbf{w}^\top\mathbf{x})$ no longer reproduces the gradient.
#
# **Prediction.** On a random augmented batch with the chosen α family and 64 random unit $\mathbf{w}$
# ("monomial" is $x^3$ here, "quadratic" $x^2$), autograd's projected gradient and
# $p\,P^\perp_\mathbf{w}A(\mathbf{w})\mathbf{w}$ agree to round-off for every homogeneous activation, and
# differ visibly for sigmoid and tanh:
#
# ```{nlcl-claims} lemma3-linear lemma3-relu lemma3-leaky_relu lemma3-quadratic lemma3-monomial lemma3-fails-sigmoid lemma3-fails-tanh
# ```
#
# The batch, its two views and the α of the chosen family:
#
# ```{nlcl-source} nlcl.tian.contrastive.make_alpha
# ```

# %%
n3 = P.batch_n
x3 = rng.standard_normal((n3, 4))
views3 = stack_views(x3, x3 + 0.3 * rng.standard_normal((n3, 4)))
alpha3 = make_alpha(
    P.alpha, n3, f1=views3[:n3], f2=views3[n3:], g0=x3, tau=P.tau, eps=P.eps
)
w3 = rng.standard_normal((64, 4))

# %% [markdown]
# The gap for every activation ("monomial" as $x^3$: a degree other than 1 and 2).
#
# ```{nlcl-source} nlcl.tian.alpha_cl.lemma3_relative_error nlcl.core.activations.get_activation
# ```

# %%
rel3 = {
    name: lemma3_relative_error(
        views3, w3, get_activation(name, p=3) if name == "monomial" else name, alpha3
    )
    for name in ACTIVATIONS
}

# %% [markdown]
# The figure: the relative gap per activation, homogeneous or control.
#
# ```{nlcl-source} nlcl.tian.alpha_cl_plots.plot_lemma3
# ```

# %%
acts = list(ACTIVATIONS) if P.activations is None else list(P.activations)
homogeneous = {name: get_activation(name).homogeneous for name in acts}
plot_lemma3({name: rel3[name] for name in acts}, homogeneous, alpha=P.alpha)
plt.show()

# %%
run.claim("lemma3-linear").measure(rel3["linear"])
run.claim("lemma3-relu").measure(rel3["relu"])
run.claim("lemma3-leaky_relu").measure(rel3["leaky_relu"])
run.claim("lemma3-quadratic").measure(rel3["quadratic"])
run.claim("lemma3-monomial").measure(rel3["monomial"])
run.claim("lemma3-fails-sigmoid").measure(rel3["sigmoid"])
run.claim("lemma3-fails-tanh").measure(rel3["tanh"])

# %% [markdown]
# ## Summary
#
# * InfoNCE's gradient is the α-CL gradient with the InfoNCE α held fixed: the largest relative
#   difference over the random networks is {glue:text}`alphacl-infonce-gradient:.1e`, and the
#   surrogate equals $2N^2\mathcal{E}_\alpha$ (largest relative difference {glue:text}`alphacl-energy-constant:.1e`).
# * The Gaussian α is PSD (λ_min/λ_max = {glue:text}`lemma1-gram-psd:.1e`); the feature map of the proof
#   reproduces it, with a truncation error that *is* the Poisson tail of $e^{s}$ (deviation
#   {glue:text}`lemma1-truncation-law:.1e`), and error {glue:text}`lemma1-feature-map:.1e` at order
#   {glue:text}`lemma1-k-star`.
# * The empirical $\mathbb{C}_\alpha$ converges to the Lemma 2 limit: its fluctuations shrink with slope
#   {glue:text}`lemma2-rate:.2f` (mean over seeds), its mean at the largest batch sits within
#   {glue:text}`lemma2-largest-n:.2f` standard errors of $\mathbb{C}_\infty$ (largest $|z|$, mean over seeds),
#   and the RMS relative error there is {glue:text}`lemma2-rms-largest-n:.3f`; for uniform α the limit is
#   the law of total variance (gap {glue:text}`lemma2-total-variance:.1e`). Without augmentation and
#   with a Gaussian α, the limit is Corollary 1's sum of reweighted variances (largest relative error
#   {glue:text}`cor1-gaussian-no-augmentation:.1e`).
# * Lemma 3 holds to round-off for every homogeneous activation and fails for the controls — the
#   gated-input picture $h(\mathbf{w}^\top\mathbf{x}) = \mathbf{w}^\top\tilde{\mathbf{x}}^\mathbf{w}$ is what makes $A(\mathbf{w})$ the right object.
#
# **What's next.** {doc}`tian-one-layer` uses $A(\mathbf{w})$ to find the critical points of the one-layer
# dynamics (locally maximal eigenvectors), their stability, and how many patterns nonlinear
# filters learn; {doc}`tian-fig8-landscape` shows the landscape on a circle.

# %%
run.finish()

# %% [markdown]
# ## Try it yourself
#
# 1. Sharpen the Gaussian α: `nlcl run tian-alpha-cl -p tau 0.1`. A smaller τ makes
#    $e^{y_iy_j/\tau}$ a longer series, so the Lemma 1 feature map needs more orders $K^\star$; the
#    Lemma 2 limit should still hold. Look at the Lemma 1 figure and at the Lemma 2 claims.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: 16 of 17 claims pass. $K^\star$ = 55
#    (23 at the default τ = 0.5); `lemma1-truncation-law` = 1.8e-15 and `lemma1-feature-map` =
#    8.7e-11 (pass). Lemma 2: `lemma2-rate` = −0.55 (pass) and `lemma2-largest-n` = 1.15 (pass), but
#    `lemma2-rms-largest-n` = 3.7e3 (fail, informational). The limit is still right and the error
#    still falls as $N^{-1/2}$, but with a sharp kernel $\mathbb{C}_\infty$ is tiny against the batch
#    fluctuations, so the relative error at $N$ = 1024 is huge: the Monte Carlo constant, not the
#    lemma, depends on τ.
#    :::
#
# 2. Take uniform α, the quadratic loss: `nlcl run tian-alpha-cl -p alpha uniform`. The Lemma 2 limit
#    is then the variance of the conditional mean, the law of total variance (Eq. 4 with one term).
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: 16 of 17 claims pass.
#    `lemma2-total-variance` = 1.1e-15, `lemma2-rate` = −0.51 and `lemma2-largest-n` = 1.07 (all
#    pass); `lemma2-rms-largest-n` = 0.084 on the mean of the 3 seeds (fail, informational: it holds
#    on 2 of 3 seeds against the declared 80 %). The Lemma 3 identities hold to about 1e-15 with the
#    uniform α too. The relative error at the largest batch is about a fifth of the Gaussian α's (0.39
#    at the default setting): the rate is the same, the Monte Carlo constant is smaller.
#    :::
#
# 3. Drop the ε of Eq. 1 and use the usual InfoNCE: `nlcl run tian-alpha-cl -p eps 0`. Section 1's
#    identity should not care.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: `alphacl-infonce-gradient` = 5.2e-15 and
#    `alphacl-energy-constant` = 4.3e-15 (both pass); the other claims do not depend on ε. The InfoNCE
#    gradient is an α-CL gradient for every ε, ε only changes the α in its denominator.
#    :::

# %% [markdown]
# ## References
#
# - {cite:t}`tian2023nonlinearity` ([arXiv:2206.01342](https://arxiv.org/abs/2206.01342),
#   [OpenReview](https://openreview.net/forum?id=s130rTE3U_X)): α-CL and the contrastive covariance
#   (Eqs. 1–4, 6–7), Lemmas 1–3 and Corollaries 1–2 with their proofs (App. A.1, B.2), which this
#   chapter checks.
# - {cite:t}`oord2018representation`: the InfoNCE loss, which Section 1 rewrites as an α-CL.
