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
# # Two-layer dynamics: colinearity, global modulation and BatchNorm (Tian 2023, Sec. 4, App. C-D)
#
# **Overview.** For a two-layer network with $K$ disjoint receptive fields (RFs), $M$ filters
# $\mathbf{w}_{km}$ per RF and a top layer $V$, Tian (2023) writes the contrastive training
# dynamics in closed form (Lemma 4, Eq. 12), proves that a *linear* network cannot specialize its
# filters (Theorem 4: the gradients within an RF are colinear, and critical points connect to
# identical filters), derives the *global modulation* of the low layer by the top layer for a
# binary latent variable (Theorem 5, Eq. 15) and shows that modulation enlarges the attractive
# basin of the modulated pattern (Theorem 6). With BatchNorm the effective RF variances become
# uniform, so weak RFs are no longer learned slowly (App. D, Corollary 3), with moments pooled over both views
# of a batch (Eqs. 164-165, Lemma 6); the basin probability of a modulated pattern is Eqs. 155-157. Each statement is
# checked numerically below, against autograd wherever possible.
#
# **Prerequisites.** Tian 2023 Sec. 2 (contrastive covariance $\mathbb{C}_\alpha$, Eq. 3), Sec. 4,
# App. C and D. The experiments these results explain are in {doc}`tian-tokens`.
#
# **Expected run time.** `ci` profile: about a minute on a 2-core CPU; `full`: about ten minutes.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about a minute) or "full" (larger samples)
seed: int = 0  # random seed of data and weights
device: str = "cpu"  # the computations are small float64 linear algebra on the CPU
activation: str = "relu"  # nonlinearity compared with linear; a homogeneous activation
n_samples: int | None = (
    None  # samples of the binary-latent model (Theorem 5, Corollary 3), None takes the profile's size
)
n_init: int | None = (
    None  # random initializations per modulation strength (Theorem 6), None takes the profile's size
)
n_seeds: int | None = None  # independent data seeds (Lemma 5, Eq. 146 winners, Corollary 3)

# %%
import nlcl

run = nlcl.start(
    "tian-two-layer-theory",
    globals(),
    spec={
        "activation": {"choices": ["relu", "leaky_relu", "quadratic", "monomial"], "paper": "relu"},
        "n_samples": {"range": [1000, 100_000_000], "ci": 100_000, "full": 1_000_000},
        "n_init": {"range": [10, 10_000_000], "ci": 1000, "full": 10_000},
        "n_seeds": {"range": [2, 1000], "ci": 3, "full": 5},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from nlcl.core.activations import get_activation
from nlcl.harness.claims import (
    NotReproduced,
    Revision,
    at_least,
    at_most,
    between,
    holds_on_fraction,
    is_true,
)
from nlcl.tian.contrastive import infonce_alpha, split_views
from nlcl.tian.tokens.world import make_token_worlds, sample_views
from nlcl.tian.two_layer_theory import (
    binary_latent_tokens,
    blowup_time,
    blowup_winners,
    corollary3_prediction,
    energy_two_layer,
    eq147_solution,
    hidden_two_layer,
    lemma4_dynamics,
    lemma5_decomposition,
    modulated_basin_fractions,
    theorem5_prediction,
    top_mode_velocity,
)

act = get_activation(P.activation)
paper_setting = run.paper_setting
gen = torch.Generator().manual_seed(seed)
torch.set_default_dtype(torch.float64)

# %% [markdown]
# ## Lemma 4: the closed-form dynamics equal autograd
#
# With the energy $\mathcal{E}_\alpha = \tfrac12\operatorname{tr}\mathbb{C}_\alpha[V\mathbf{f}_1]$ and $\alpha$ held
# fixed (the stop-gradient of Eq. 2), Lemma 4 states
#
# $$\dot V = V\,\mathbb{C}_\alpha[\mathbf{f}_1],\qquad
# \dot{\mathbf{w}} = \big[(S\otimes \mathbf{1}_d\mathbf{1}_d^\top)\circ \mathbb{C}_\alpha[\tilde{\mathbf{x}}]\big]\mathbf{w},
# \qquad S = V^\top V,$$
#
# (before the projection $P^\perp_{\mathbf{w}}$ of the per-filter normalization). **Prediction:**
# on a random batch with InfoNCE's $\alpha$, the closed forms equal autograd's gradients to
# float64 round-off: the largest relative difference is at most $10^{-10}$, for linear and for
# {glue:text}`theory-activation`.

# %%
run.glue("theory-activation", P.activation)
c_lemma4 = run.expect(
    "lemma4-closed-form",
    source="Tian 2023, Lemma 4 / Eq. 12",
    statement=f"max relative difference between Eq. 12 and autograd (linear and {P.activation}).",
    check=at_most(1e-10),
    paper="equality",
    required=paper_setting,
)

K, M, d, N, d_out = 4, 3, 5, 32, 6
x4 = torch.randn(2 * N, K, d, generator=gen)
errs = {}
for a in ("linear", P.activation):
    W = torch.randn(K, M, d, generator=gen).requires_grad_()
    V = torch.randn(d_out, K * M, generator=gen).requires_grad_()
    f1, f2 = split_views(hidden_two_layer(W, x4, a) @ V.T)
    alpha = infonce_alpha(f1, f2, tau=0.5)
    gW, gV = torch.autograd.grad(energy_two_layer(W, V, x4, a, alpha), [W, V])
    Vdot, Wdot = lemma4_dynamics(W.detach(), V.detach(), x4, a, alpha)
    errs[a] = max(
        ((gV - Vdot).abs().max() / gV.abs().max()).item(), ((gW - Wdot).abs().max() / gW.abs().max()).item()
    )
print({a: f"{e:.1e}" for a, e in errs.items()})
c_lemma4.measure(float(max(errs.values())))

# %% [markdown]
# ## Theorem 4: linear filters move together
#
# If the top layer has converged, $S = \mathbf{s}\mathbf{s}^\top$ with $\mathbf{s}$ the top eigenvector
# of $\mathbb{C}_\alpha[\mathbf{f}_1]$, and with linear $h$ every filter of RF $k$ moves along the
# same direction: $\dot{\mathbf{w}}_{km} = s_{km}\mathbf{b}_k(W, V)$ (Eq. 14). **Predictions** on a
# batch of the token task of {doc}`tian-tokens` ($K=10$, $M=4$, $P=3$):
#
# 1. linear: the smallest $|\cos|$ between two filter gradients of the same RF is $\ge 1-10^{-9}$;
# 2. {glue:text}`theory-activation`: the gradients are not colinear, the median $|\cos|$ over pairs is $\le 0.9$;
# 3. (Theorem 4.2) with $s_{k1}=s_{k2}$, from a critical point with distinct filters there is a path
#    of critical points to identical weights: the swapped point $W'^*$ is critical by symmetry and
#    $\mathbf{b}_k$ is linear in $W$ (Eq. 163). We do not construct the critical point: we **find** it, as
#    the minimiser of $\|\nabla_W\mathcal{E}\|^2$ nearest to a random $W_0$ with distinct filters, among the
#    weights whose network output has mean 1 over the batch ($\nabla_W\mathcal{E}$ and the mean output are linear
#    in $W$ for the linear network, so this is a least-squares problem, solved exactly with a pseudo-inverse). The prediction is on the whole path
#    $cW^* + (1-c)W_{\mathrm{same}}$, $c\in[0,1]$, from the found point ($c = 1$) to identical weights
#    $\mathbf{w}_{k1} = \mathbf{w}_{k2} = (\mathbf{w}^*_{k1}+\mathbf{w}^*_{k2})/2$ ($c = 0$, the midpoint of $W^*$ and
#    $W'^*$): the linear network's gradient norm relative to its norm at a random $W$ stays $\le 10^{-10}$ (it
#    fails if the optimisation did not reach a critical point). A check that the premise holds: the found
#    point has distinct filters (smallest $\|\mathbf{w}^*_{k1}-\mathbf{w}^*_{k2}\|$ over RFs $\ge 0.1$) and a non-zero
#    output (RMS $\ge 0.1$). The same path is *not* critical for
#    {glue:text}`theory-activation` (relative gradient norm $\ge 10^{-3}$ somewhere on it). (Replaces a
#    construction from the Hessian's null eigenvector, which was critical by construction.)

# %%
c_col_lin = run.expect(
    "thm4-linear-colinear",
    source="Tian 2023, Theorem 4 (1) / Eq. 14",
    statement="linear: min |cos| between gradients of two filters of one RF.",
    check=at_least(1 - 1e-9),
    paper="|cos| = 1",
    required=paper_setting,
)
c_col_nl = run.expect(
    "thm4-nonlinear-not-colinear",
    source="Tian 2023, Sec. 4.1",
    statement=f"{P.activation}: median |cos| between gradients of two filters of one RF.",
    check=at_most(0.9),
    paper="diverse directions",
    required=paper_setting,
)
c_path_lin = run.expect(
    "thm4-linear-critical-path",
    source="Tian 2023, Theorem 4 (2)",
    statement="linear: max relative gradient norm along the path from a critical point found by minimising "
    "‖∇E‖² (mean output 1, nearest to a random start) to identical weights.",
    check=at_most(1e-10),
    paper="a path of critical points",
    required=paper_setting,
    revised=[
        Revision(
            from_="path from the Hessian's smallest-|λ| eigenvector (critical by construction)",
            to="path from a critical point found by minimising ‖∇E‖² from a random W₀ (with mean output 1; "
            "distinct filters and non-zero output checked by thm4-found-point-distinct)",
            reason="issue 26 item 3: the constructed start made the gradient ≈ 0 by construction (2.6e-16 at "
            "every seed); the found critical point can fail to be critical, distinct or non-trivial",
            date="2026-11-26",
        )
    ],
)
c_found = run.expect(
    "thm4-found-point-distinct",
    kind="check",
    source="Tian 2023, Theorem 4 (2)",
    statement="min(smallest distance between the two filters of an RF, output RMS) at the found critical point: "
    "the premise of Theorem 4 (2), distinct filters and a non-zero network.",
    check=at_least(0.1),
    paper="a critical point with distinct filters",
    required=paper_setting,
    revised=[
        Revision(
            from_="the critical point nearest to W₀",
            to="the critical point nearest to W₀ with mean network output 1",
            reason="first ci run: the nearest critical point had output RMS 0.0015 (filters 0.1+ apart): every "
            "critical point computes a constant (see the finding below), and the nearest one keeps only the small "
            "projection of W₀ on the per-RF constants; the threshold 0.1 is unchanged",
            date="2026-11-26",
        )
    ],
)
c_path_nl = run.expect(
    "thm4-nonlinear-path-not-critical",
    source="Tian 2023, Sec. 4.1",
    statement=f"{P.activation}: max relative gradient norm along the same path.",
    check=at_least(1e-3),
    paper="(linear only)",
    required=paper_setting,
)

world = make_token_worlds([seed], 3)
xa, xb, _ = sample_views(world, 0, 512, dtype=torch.float64)
x_tok = torch.cat([xa.dense()[0], xb.dense()[0]], 0)  # (2N, K, d) stacked views
Kt, Mt, dt = world.K, 4, world.n_tokens


def grads_at(W, a, s):
    """∂E/∂W with V = sᵀ (d_out = 1), uniform α."""
    W = W.clone().requires_grad_()
    (g,) = torch.autograd.grad(energy_two_layer(W, s[None, :], x_tok, a), W)
    return g


def top_s(W, a):
    from nlcl.tian.contrastive import contrastive_covariance

    C = contrastive_covariance(hidden_two_layer(W, x_tok, a))
    return torch.linalg.eigh(C)[1][:, -1]


W0 = torch.randn(Kt, Mt, dt, generator=gen) / dt**0.5
pair_cos = {}
for a in ("linear", P.activation):
    g = grads_at(W0, a, top_s(W0, a))
    gn = torch.nn.functional.normalize(g, dim=-1)
    cosm = (gn @ gn.transpose(1, 2)).abs()
    iu = torch.triu_indices(Mt, Mt, 1)
    pair_cos[a] = cosm[:, iu[0], iu[1]].flatten()
print({a: (round(v.min().item(), 12), round(v.median().item(), 3)) for a, v in pair_cos.items()})
c_col_lin.measure(float(pair_cos["linear"].min()))
c_col_nl.measure(round(float(pair_cos[P.activation].median()), 3))

# Theorem 4 (2): s equal within each RF (the swapped W'* is then critical too).
s_sym = torch.repeat_interleave(torch.rand(Kt, generator=gen) + 0.5, 2)
s_sym = s_sym / s_sym.norm()
# random start W_0: filters a_k ± r_k (a_k from a generator of its own, so that `gen` draws what it drew before)
a_init = torch.randn(Kt, 1, dt, generator=torch.Generator().manual_seed(70_000 + seed)) / dt**0.5
r_dist = torch.randn(Kt, dt, generator=gen).to(x_tok.dtype) / dt**0.5
W_init = a_init + torch.stack([r_dist, -r_dist], 1)  # distinct filters


def energy_W(W_flat):
    """Linear energy with V = s_symᵀ as a function of the flattened W (K, 2, d)."""
    return energy_two_layer(W_flat.reshape(Kt, 2, dt), s_sym[None, :].to(W_flat), x_tok, "linear")


# ∇E = H W for the quadratic linear energy: minimise ‖∇E‖² (= 0) with mean output 1, nearest to W_init
H = torch.autograd.functional.hessian(energy_W, W_init.reshape(-1))
c_mean = (s_sym.reshape(Kt, 2, 1) * x_tok.mean(0)[:, None, :]).reshape(1, -1)  # mean output = c_mean · W
B = torch.cat([H, c_mean])
rhs = torch.cat([torch.zeros(len(H)), torch.ones(1)])
W_star = (W_init.reshape(-1) + torch.linalg.pinv(B, rtol=1e-10) @ (rhs - B @ W_init.reshape(-1))).reshape(
    Kt, 2, dt
)
W_same = W_star.mean(1, keepdim=True).expand(-1, 2, -1)  # midpoint of W* and its swap W'*: identical filters
out_star = hidden_two_layer(W_star, x_tok, "linear") @ s_sym.to(x_tok.dtype)
out_rms = float(out_star.pow(2).mean().sqrt())
filter_gap = float((W_star[:, 0] - W_star[:, 1]).norm(dim=-1).min())
run.glue("thm4-output-rms", out_rms)
run.glue("thm4-output-std", float(out_star.std() / out_star.pow(2).mean().sqrt()))
run.glue("thm4-filter-distance", filter_gap)
run.glue("thm4-start-distance", float((W_star - W_init).norm() / W_init.norm()))
cs = torch.linspace(0, 1, 21)
ref = {a: grads_at(torch.randn(Kt, 2, dt, generator=gen), a, s_sym).norm() for a in ("linear", P.activation)}
path = {
    a: torch.stack([grads_at(c * W_star + (1 - c) * W_same, a, s_sym).norm() / ref[a] for c in cs])
    for a in ("linear", P.activation)
}
c_path_lin.measure(float(path["linear"].max()))
c_found.measure(round(min(filter_gap, out_rms), 4))
c_path_nl.measure(round(float(path[P.activation].max()), 4))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
for a, v in pair_cos.items():
    ax1.hist(v.numpy(), bins=30, range=(0, 1), alpha=0.7, label=a)
ax1.set_xlabel(r"$|\cos\angle(\dot{\mathbf{w}}_{km}, \dot{\mathbf{w}}_{km'})|$, same RF $k$")
ax1.set_ylabel("filter pairs")
ax1.set_title("Theorem 4 (1): gradient colinearity")
ax1.legend()
for a, v in path.items():
    ax2.semilogy(cs.numpy(), v.clamp(min=1e-18).numpy(), marker="o", ms=3, label=a)
ax2.set_xlabel(r"$c$ on the path $cW^* + (1-c)W_{\mathrm{same}}$")
ax2.set_ylabel(r"$\|\nabla_W \mathcal{E}\|$ / norm at a random $W$")
ax2.set_title("Theorem 4 (2): path to identical weights")
ax2.legend()
plt.show()

# %% [markdown]
# The critical point of Theorem 4 (2), found from $W_0$ (it moved by {glue:text}`thm4-start-distance:.2f` of
# $\|W_0\|$): its two filters of each RF are at least {glue:text}`thm4-filter-distance:.2f` apart and the network
# output has RMS {glue:text}`thm4-output-rms:.3f`. **A finding about the statement:** that output is constant over the
# batch (its standard deviation is {glue:text}`thm4-output-std:.1e` of its RMS). With one-hot tokens the only
# directions without contrastive variance are the per-RF constants $\mathbf{1}_d$ (each $\mathbf{x}_k$ sums to 1),
# so $\mathbf{b}_k = 0$ forces $\mathbf{u}_k = \sum_m s_{km}\mathbf{w}_{km} \propto \mathbf{1}_d$: every critical
# point of the linear network on this task computes a constant, however distinct its filters are. Theorem 4 (2)
# holds, but its premise is met only by networks that have learned nothing.

# %% [markdown]
# ## Theorem 5: global modulation for a binary latent variable (C = 2, M = 1)
#
# Data: a latent $z\in\{0,1\}$ ($p_1 = 0.4$); given $z$, each of $K=4$ RFs independently shows one of
# $d=6$ tokens from a $z$-dependent distribution, plus Gaussian noise (std 0.3): the conditional
# independence of Assumption 2. No augmentation, uniform $\alpha$, so $\mathbb{C}_\alpha$ is the
# sample covariance. With the top layer at its fixed point ($V=\mathbf{s}^\top$, $\mathbf{s}$ the
# top eigenvector of $\mathbb{V}[\mathbf{f}_1]$), Theorem 5 predicts
# $\dot{\mathbf{w}}_k = P^\perp_{\mathbf{w}_k}(s_k^2A_k + \delta_k\Delta_k\Delta_k^\top)\mathbf{w}_k$ with
# $s_k$ from the Bunch–Nielsen–Sorensen formula (Eq. 139) and $\delta_k \ge 0$ (Eq. 143).
# **Predictions** ({glue:text}`theory-n-samples` samples): the BNS vector agrees with the top
# eigenvector ($|\cos| \ge 0.999$); the predicted $\dot{\mathbf{w}}$ matches autograd to a relative
# error $\le 0.05$ (the gap is the finite-sample violation of conditional independence); every
# $\delta_k \ge 0$.

# %%
run.glue("theory-n-samples", P.n_samples)
c_bns = run.expect(
    "thm5-bns-eigenvector",
    kind="check",
    source="Tian 2023, Eq. 139 (Bunch et al. 1978)",
    statement="|cos| between the BNS vector s and the top eigenvector of V[f_1].",
    check=at_least(0.999),
    paper="equal",
    required=paper_setting,
)
c_thm5 = run.expect(
    "thm5-matches-autograd",
    source="Tian 2023, Theorem 5 / Eq. 15",
    statement="relative error ‖ẇ_pred − ẇ_autograd‖ / ‖ẇ_autograd‖.",
    check=at_most(0.05),
    paper="equality (population)",
    required=paper_setting,
)
c_delta = run.expect(
    "thm5-delta-nonnegative",
    kind="check",
    source="Tian 2023, Theorem 5 / Eq. 143",
    statement="all modulation coefficients δ_k ≥ 0.",
    check=is_true(),
    paper="δ_k ≥ 0",
    required=paper_setting,
)


x5, z5 = binary_latent_tokens(P.n_samples, 4, 6, generator=gen)
W5 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=gen), dim=-1)
pred = theorem5_prediction(W5, x5, z5, P.activation)
auto, s_eig = top_mode_velocity(W5, x5, P.activation)
c_bns.measure(round(float((pred["s"] @ s_eig).abs()), 6))
rel = float((pred["wdot"] - auto).norm() / auto.norm())
c_thm5.measure(round(rel, 4))
c_delta.measure(bool((pred["delta"] >= 0).all()))
print("s (BNS):", pred["s"].numpy().round(3), " δ:", pred["delta"].numpy().round(4))

# %% [markdown]
# ## Lemma 5 and Fig. 6: the variance decomposition
#
# Under conditional independence (Assumption 2) the covariance of the gated inputs of all RFs splits
# into a block-diagonal part and a rank-one part for $C = 2$ (Lemma 5, Eq. 120):
# $\mathbb{V}[\tilde{\mathbf{x}}] = \mathrm{diag}_k[L_k] + p_0p_1\Delta\Delta^\top$, with
# $L_k = \mathbb{E}_z\mathbb{V}[\tilde{\mathbf{x}}_k|z]$ and $\Delta = \mathbb{E}[\tilde{\mathbf{x}}|z=1] - \mathbb{E}[\tilde{\mathbf{x}}|z=0]$. By the
# law of total variance the sample covariance differs from the right side exactly by the off-diagonal
# blocks of the within-class covariance, which conditional independence makes zero in the population;
# in a sample they are sampling noise. We take $K = 4$ RFs, $M = 2$ random filters per RF, the binary
# model of Theorem 5, and $N$ from $10^3$ up to `n_samples`, over `n_seeds` data seeds. A control that can
# fail: the same model plus one Gaussian vector (std 0.3) shared by all RFs of a sample, which breaks
# Assumption 2.
#
# **Prediction and tolerance.** (a) The relative residual $\|\mathbb{V}[\tilde{\mathbf{x}}] - \mathrm{diag}_k[L_k] -
# p_0p_1\Delta\Delta^\top\|_F/\|\mathbb{V}[\tilde{\mathbf{x}}]\|_F$ vanishes like sampling noise: its log-log slope in $N$
# lies in $[-0.7, -0.3]$ (rate $N^{-1/2}$), on ≥ 80% of seeds. (b) A check that the test can fail: with
# the shared vector the residual at the largest $N$ is ≥ 10 times the conditionally independent one.

# %%
c_l5 = run.expect(
    "lemma5-residual-rate",
    source="Tian 2023, Lemma 5 (Eq. 120) / Fig. 6",
    statement="Log-log slope of the relative residual of Eq. 120 against N, per data seed.",
    check=between(-0.7, -0.3),
    decide=holds_on_fraction(0.8),
    paper="exact in the population",
    required=paper_setting,
)
c_l5c = run.expect(
    "lemma5-control-fails",
    kind="check",
    source="Tian 2023, Lemma 5 / Assumption 2",
    statement="Residual at the largest N with a vector shared by all RFs over the residual without (mean over seeds).",
    check=at_least(10.0),
    paper="(needs conditional independence)",
)

# %%
n_grid5 = np.unique(np.geomspace(1000, P.n_samples, 5).astype(int))
res5 = {"ci": np.zeros((P.n_seeds, len(n_grid5))), "shared": np.zeros((P.n_seeds, len(n_grid5)))}
for s_ in range(P.n_seeds):
    for kind, shared in (("ci", 0.0), ("shared", 0.3)):
        g5 = torch.Generator().manual_seed(10_000 * (s_ + 1) + seed)
        x5b, z5b = binary_latent_tokens(int(n_grid5[-1]), 4, 6, generator=g5, shared_noise=shared)
        W5b = torch.randn(4, 2, 6, generator=g5)
        for j, n in enumerate(n_grid5):
            res5[kind][s_, j] = lemma5_decomposition(W5b, x5b[:n], z5b[:n], P.activation)["residual"]
        if s_ == 0 and kind == "ci":
            dec5 = lemma5_decomposition(W5b, x5b, z5b, P.activation)
slopes5 = [float(np.polyfit(np.log(n_grid5), np.log(r), 1)[0]) for r in res5["ci"]]
run.glue("lemma5-residual-largest", f"{res5['ci'][:, -1].mean():.1e}")

fig, axes = plt.subplots(1, 5, figsize=(15, 3.0), gridspec_kw={"width_ratios": [1, 1, 1, 1, 1.4]})
vmax = float(dec5["V"].abs().max())
resid5 = dec5["V"] - dec5["L"] - dec5["between"]
for ax, (name, mat) in zip(
    axes[:4],
    [
        (r"$\mathbb{V}[\tilde{\mathbf{x}}]$", dec5["V"]),
        (r"$\mathrm{diag}_k[L_k]$", dec5["L"]),
        (r"$p_0p_1\Delta\Delta^\top$", dec5["between"]),
        ("residual", resid5),
    ],
):
    ax.imshow(mat.numpy(), cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    ax.set_title(name)
    ax.set_xticks([])
    ax.set_yticks([])
ax = axes[4]
for kind, lab in (("ci", "Assumption 2 holds"), ("shared", "shared vector (violated)")):
    ax.loglog(n_grid5, res5[kind].mean(0), "o-", label=lab)
ax.loglog(n_grid5, res5["ci"].mean(0)[0] * (n_grid5 / n_grid5[0]) ** -0.5, "k:", label=r"$N^{-1/2}$")
ax.set_xlabel("samples $N$")
ax.set_ylabel("relative residual of Eq. 120")
ax.legend(fontsize="small")
fig.suptitle(f"Lemma 5 / Fig. 6 (K = 4, M = 2, N = {n_grid5[-1]}; same color scale)")
plt.show()

c_l5.measure_seeds(slopes5)
c_l5c.measure(float((res5["shared"][:, -1] / res5["ci"][:, -1]).mean()))

# %% [markdown]
# At the largest $N$ the residual is {glue:text}`lemma5-residual-largest` of $\|\mathbb{V}[\tilde{\mathbf{x}}]\|_F$ (mean
# over seeds); the off-diagonal blocks of the sample covariance are sampling noise, as Lemma 5 says.

# %% [markdown]
# ## Theorem 6: modulation enlarges the attractive basin
#
# Take the structural form $A(\mathbf{w}) = \sum_l g(\mathbf{u}_l^\top\mathbf{w})\mathbf{u}_l\mathbf{u}_l^\top$ with
# $g(y) = y + 1.5$ (linear, increasing, positive on the sphere) in $d = 8$ dimensions and add the
# modulation $c\,\mathbf{u}_1\mathbf{u}_1^\top$. We integrate $\dot{\mathbf{w}} = P^\perp_{\mathbf{w}}(A(\mathbf{w}) +
# c\mathbf{u}_1\mathbf{u}_1^\top)\mathbf{w}$ (`scipy.integrate.solve_ivp`) from
# {glue:text}`theory-n-init` uniform random unit initializations and count those converging to
# $\mathbf{u}_1$. **Predictions:** the fraction increases monotonically with $c\in\{0, 0.25, 0.5, 1\}$,
# and the increase from $c=0$ to $c=1$ is at least 0.1. (Without modulation each of the $d$ positive
# directions is equally likely; App. C.3 estimates $\mathbb{P} = 1/d$.)

# %%
run.glue("theory-n-init", P.n_init)
c_mono = run.expect(
    "thm6-basin-grows",
    source="Tian 2023, Theorem 6",
    statement="P[w → u_1] increases monotonically with the modulation c.",
    check=is_true(),
    paper="larger basin for c > 0",
    required=paper_setting,
)
c_gain = run.expect(
    "thm6-basin-gain",
    source="Tian 2023, Theorem 6 / Eq. 155",
    statement="P[w → u_1](c = 1) − P[w → u_1](c = 0).",
    check=at_least(0.1),
    paper="positive modulation raises P[E_l]",
    required=paper_setting,
)
c_grid = [0.0, 0.25, 0.5, 1.0]
fracs = modulated_basin_fractions(8, c_grid, n_init=P.n_init, seed=seed)
c_mono.measure(bool(all(b > a for a, b in zip(fracs, fracs[1:]))))
c_gain.measure(round(fracs[-1] - fracs[0], 3))
run.glue("theory-p0", round(fracs[0], 3))

fig, ax = plt.subplots(figsize=(4.6, 3.2))
ax.plot(c_grid, fracs, marker="o", label="Monte Carlo")
ax.axhline(1 / 8, ls=":", color="0.5", label="$1/d$")
ax.set_xlabel("modulation $c$")
ax.set_ylabel(r"$\mathbb{P}[\mathbf{w}\to\mathbf{u}_1]$")
ax.set_title("Theorem 6: attractive basin of $\\mathbf{u}_1$")
ax.legend()
plt.show()

# %% [markdown]
# Without modulation the fraction is {glue:text}`theory-p0` (compare $1/d = 0.125$).

# %% [markdown]
# ## Eq. 146 and Fig. 7: finite-time blow-up, and the winner of Theorem 6
#
# In the basis $\{\mathbf{u}_l\}$ and without the normalization, each coordinate follows
# $\dot y_l = (y_l + b_l)y_l$ with $b_l > 0$ (Eq. 146; $b_l = b + c$ for the modulated pattern), solved by
# $y/(y+b) = y(0)/(y(0)+b)\,e^{bt}$ (Eq. 147). **Statements (Fig. 7):** $y = -b$ is stable and $y = 0$ unstable;
# for $y(0) < 0$, $y(t) \to -b$; for $y(0) > 0$ the solution blows up at $t^* = \ln(1 + b/y(0))/b$ (Eq. 150).
# Theorem 6's proof then names the winner of the *normalized* dynamics $l^* = \arg\min_l t_l^*$.
#
# **Predictions and tolerances.** (a) and (b) are checks of our integration against the paper's own closed
# form (Eq. 147 solves Eq. 146 exactly, so they cannot contradict the paper; kind "check"). (a) Integrating Eq. 146 numerically (`solve_ivp`, RK45, rtol $10^{-10}$,
# stopped at $y = 10^8$) for $b \in \{0.5, 1.5, 2.5\}$ and $y(0) \in \{0.05, 0.2, 1, 3\}$, the blow-up time
# matches $t^*$ to relative error $\le 10^{-3}$ (the stop at $10^8$ instead of ∞ costs $\approx 10^{-8}/b$). (b) For
# $y(0) \in \{-0.05, -1, -2\}$ (above $-b$) and $-3$ (below $-b$, which also converges to $-b$ from
# below), $|y(T) + b| \le 10^{-6}$ at $T = 40$. (c) In the normalized $d = 8$ dynamics of Theorem 6 ($b = 1.5$,
# $c \in \{0, 0.5, 1\}$, `n_init`/2 initializations per c, `n_seeds` seeds), the coordinate the run converges to is
# $\arg\min_l t_l^*$ computed from $\mathbf{w}(0)$: fraction $\ge 0.9$ of the runs, on ≥ 80% of seeds.

# %%
c_t146 = run.expect(
    "eq146-blowup-time",
    kind="check",
    source="Tian 2023, Eq. 150 / Fig. 7",
    statement="Largest relative error of the numerical blow-up time of Eq. 146 against t* = ln(1 + b/y(0))/b.",
    check=at_most(1e-3),
    paper="t* = ln(1 + b/y(0))/b",
    required=paper_setting,
)
c_neg146 = run.expect(
    "eq146-negative-converges",
    kind="check",
    source="Tian 2023, Eq. 146 / Fig. 7",
    statement="Largest |y(T) + b| at T = 40 from y(0) < 0.",
    check=at_most(1e-6),
    paper="y → −b (stable critical point)",
    required=paper_setting,
)
c_win = run.expect(
    "thm6-winner-argmin-tstar",
    source="Tian 2023, Theorem 6 proof (Eqs. 148-150)",
    statement="Fraction of converged runs of the normalized dynamics whose limit is argmin_l t_l*, per seed.",
    check=at_least(0.9),
    decide=holds_on_fraction(0.8),
    paper="l* = argmin_l t_l* is the winner",
    required=paper_setting,
    not_reproduced=NotReproduced(
        "Observed in the first ci run of this claim: on every seed the rule names the limit of the "
        "normalized dynamics in about 88 % of the runs, not ≥ 90 %. Eq. 148 compares y_l/y_l' of the "
        "unnormalized Eq. 146, but the normalized flow feeds the normalized ŷ_l into g(·), so the blow-up "
        "times of Eq. 150 rank the coordinates only approximately; the misses are runs whose two smallest "
        "t_l* are close (glued thm6-winner-close-misses). The first full-profile run (5 seeds, 5000 "
        "initializations per c) gave the same: 0.874 on average, below 0.9 on every seed.",
        profiles=("ci", "full"),
        expected=lambda m: 0.7 <= m < 0.9 and np.median(miss_close) < np.median(hit_close),
        diagnostics=("thm6-winner-close-misses", "thm6-winner-close-hits"),
        evidence="the per-seed fractions in the claim record; glued thm6-winner-close-misses and "
        "thm6-winner-close-hits (the explanation applies only if the misses' t* ratio is below the hits')",
    ),
)

# %%
from scipy.integrate import solve_ivp  # noqa: E402


def blow(t, y):
    """Event: y reaches 1e8 (the blow-up, stopped at a finite value)."""
    return y[0] - 1e8


blow.terminal = True
b_grid, y_pos, y_neg = [0.5, 1.5, 2.5], [0.05, 0.2, 1.0, 3.0], [-0.05, -1.0, -2.0, -3.0]
err146, neg146, curves146 = [], [], {}
for b in b_grid:
    for y0 in y_pos:
        sol = solve_ivp(
            lambda t, y, b=b: (y + b) * y,
            (0, 100),
            [y0],
            events=blow,
            rtol=1e-10,
            atol=1e-12,
            dense_output=True,
        )
        t_num = float(sol.t_events[0][0])
        err146.append(abs(t_num - float(blowup_time(y0, b))) / float(blowup_time(y0, b)))
        if b == 1.5:
            curves146[y0] = sol
    for y0 in y_neg:
        sol = solve_ivp(
            lambda t, y, b=b: (y + b) * y, (0, 40), [y0], rtol=1e-10, atol=1e-12, dense_output=True
        )
        neg146.append(abs(sol.y[0, -1] + b))
        if b == 1.5:
            curves146[y0] = sol
t_chk = np.linspace(0, 0.9 * float(blowup_time(0.2, 1.5)), 50)
y_chk = eq147_solution(0.2, 1.5, t_chk)
run.glue(
    "eq146-closed-form-vs-ode",
    f"{np.abs(y_chk - curves146[0.2].sol(t_chk)[0]).max() / np.abs(y_chk).max():.1e}",
)

win_frac, miss_close, hit_close = [], [], []
for s_ in range(P.n_seeds):
    agree, total = 0, 0
    for cc in (0.0, 0.5, 1.0):
        pred_w, act_w = blowup_winners(8, cc, b=1.5, n_init=max(P.n_init // 2, 10), seed=1000 * s_ + 7 + seed)
        ok = act_w >= 0
        agree += int((pred_w[ok] == act_w[ok]).sum())
        total += int(ok.sum())
        # how close were the two smallest t* in the runs the rule missed? (the same initializations)
        w0_ = np.random.default_rng(1000 * s_ + 7 + seed).standard_normal((max(P.n_init // 2, 10), 8))
        w0_ /= np.linalg.norm(w0_, axis=1, keepdims=True)
        bl_ = np.full(8, 1.5)
        bl_[0] += cc
        ts_ = np.sort(blowup_time(w0_, bl_[None, :]), axis=1)
        miss = ok & (pred_w != act_w)
        miss_close += list(ts_[miss, 1] / ts_[miss, 0])
        hit_close += list(ts_[ok & ~miss, 1] / ts_[ok & ~miss, 0])
    win_frac.append(agree / total)
run.glue("thm6-winner-close-misses", f"{np.median(miss_close):.2f}" if miss_close else "n/a")
run.glue("thm6-winner-close-hits", f"{np.median(hit_close):.2f}" if hit_close else "n/a")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
yy = np.linspace(-3, 1.5, 200)
ax1.plot(yy, (yy + 1.5) * yy, "k")
ax1.axhline(0, color="0.7", lw=0.8)
ax1.plot([-1.5], [0], "o", color="C2", label="stable $y = -b$")
ax1.plot([0], [0], "o", mfc="w", color="C3", label="unstable $y = 0$")
ax1.set_xlabel("$y_l$")
ax1.set_ylabel(r"$\dot y_l = (y_l + b_l) y_l$")
ax1.set_title("Eq. 146, $b_l$ = 1.5")
ax1.legend(fontsize="small")
for y0, sol in curves146.items():
    ax2.plot(sol.t, np.clip(sol.y[0], -4, 20), label=f"$y(0)$ = {y0:g}")
    if y0 > 0:
        ax2.axvline(float(blowup_time(y0, 1.5)), color="0.6", ls=":", lw=0.8)
ax2.set_xlim(0, 6)
ax2.set_ylim(-4, 20)
ax2.set_xlabel("$t$ (dotted: $t^*$ of Eq. 150)")
ax2.set_ylabel("$y_l(t)$")
ax2.set_title("Fig. 7: blow-up for $y(0) > 0$, convergence to $-b$ otherwise")
ax2.legend(fontsize="x-small", ncol=2)
plt.show()

c_t146.measure(float(max(err146)))
c_neg146.measure(float(max(neg146)))
run.diagnostic("thm6-winner-close-misses", float(np.median(miss_close)) if miss_close else float("nan"))
run.diagnostic("thm6-winner-close-hits", float(np.median(hit_close)) if hit_close else float("nan"))
c_win.measure_seeds(win_frac)

# %% [markdown]
# The closed form (Eq. 147) and the integrated trajectory agree to {glue:text}`eq146-closed-form-vs-ode` (relative) up to
# $0.9\,t^*$. The rule "the first coordinate to blow up wins" is a heuristic for the normalized dynamics:
# the normalization feeds $\hat y_l$, not $y_l$, into $g$, so the ratio argument of Eq. 148 holds only
# approximately; `thm6-winner-argmin-tstar` measures how often it names the right winner. In the runs it
# misses, the second smallest $t_l^*$ is only a factor {glue:text}`thm6-winner-close-misses` (median) above the smallest,
# against {glue:text}`thm6-winner-close-hits` in the runs it names correctly: the explanation's prediction (misses are
# close calls) is part of its predicate.

# %% [markdown]
# ## Corollary 3 (App. D): BatchNorm equalizes the receptive fields
#
# Scale the $K=4$ RFs of the binary model by $0.1, 1, 3, 10$. Without BatchNorm the conditional
# variances $d_k = \mathbf{w}_k^\top L_k\mathbf{w}_k$ (Eq. 135) differ by the squared scales; with
# BatchNorm, $d_k^{bn} = d_k/\sigma_k^2 = 1/(1 + p_0p_1(b_k/\sqrt{d_k})^2)$ is scale-free. **Predictions:**
# (i) $\max_k d_k/\min_k d_k \ge 100$ but $\max_k d^{bn}_k/\min_k d^{bn}_k \le 3$; (ii) the slowest
# RF's speed $\|\dot{\mathbf{w}}_k\|$ relative to the fastest is $\le 0.01$ without BatchNorm (autograd);
# (iii) with BatchNorm the factor that App. D blames for the slowdown, $\lambda^{bn} - d_k^{bn}$ (in both
# $(s_k^{bn})^2$ and $\delta_k^{bn}$), "becomes almost constant across different receptive fields": its
# largest over its smallest value across RFs is $\le 3$ (the tolerance of (i)).
#
# The earlier version of (iii) asked the BN *speeds* $\|\dot{\mathbf{w}}_k\|$ to be within a factor 10; they are
# not (the ratio is glued as `cor3-bn-speed-ratio` below), because the speed also carries $s_k^{bn} \propto
# b_k^{bn}/(\lambda^{bn} - d_k^{bn})$: an RF whose filter separates the classes poorly ($b_k/\sqrt{d_k}$ small)
# moves slowly with or without BN, at any input scale. App. D does not claim equal speeds, only that the
# *scale* no longer slows an RF down (claims `cor3-no-bn-slow` and `cor3-bn-scale-free`) and that
# $\lambda^{bn} - d_k^{bn}$ is nearly constant; the claim now tests that statement (a revision, recorded).

# %%
c_dbn = run.expect(
    "cor3-dbn-uniform",
    source="Tian 2023, App. D / Corollary 3",
    statement="max/min ratio of d_k^bn across RFs (scales 0.1-10; d_k ratio shown for contrast).",
    check=at_most(3.0),
    paper="d_k^bn nearly uniform",
    required=paper_setting,
)
c_slow = run.expect(
    "cor3-no-bn-slow",
    source="Tian 2023, App. D",
    statement="without BN: slowest/fastest RF speed ‖ẇ_k‖.",
    check=at_most(0.01),
    paper="RFs with small d_k learn slowly",
    required=paper_setting,
)
c_fast = run.expect(
    "cor3-bn-not-slow",
    source="Tian 2023, App. D (Remarks after Corollary 3)",
    statement="mean-backprop BN: max_k (λ^bn − d_k^bn) / min_k (λ^bn − d_k^bn) across RFs (closed form, Eqs. 175-179).",
    check=at_most(3.0),
    paper="λ^bn − d_k^bn almost constant across RFs",
    required=paper_setting,
    revised=[
        Revision(
            from_="slowest/fastest BN speed ‖ẇ_k‖ ≥ 0.1",
            to="max/min (λ^bn − d_k^bn) ≤ 3",
            reason="the speed ratio (0.072 at seed 0) mixes in each RF's discriminability b_k/√d_k, which App. D "
            "does not claim to equalize (the unit-scale ratio without BN, 0.001, is as small); the "
            "paper's statement is about λ^bn − d_k^bn, and the threshold is that of cor3-dbn-uniform",
            date="2026-11-25",
        )
    ],
)
c_free = run.expect(
    "cor3-bn-scale-free",
    source="Tian 2023, App. D / Corollary 3",
    statement="max relative difference of the per-RF BN speeds between scaled (0.1-10) and unit-scale inputs.",
    check=at_most(0.05),
    paper="d_k^bn independent of the input magnitude",
    required=paper_setting,
    not_reproduced=NotReproduced(
        "BatchNorm's ε = 1e-5 (torch's default, used by the paper's code) is not negligible against "
        "the batch variance of the 0.1-scaled RF (about 6e-4): σ_k² + ε breaks the exact scale "
        "invariance of Corollary 3, which assumes ε = 0. With ε = 1e-12 the same difference is "
        "glued below as cor3-scale-free-eps0 (first order in ε again: about 1e-7 of the difference at ε = 1e-5). "
        "Observed in ci and in the first full run (0.062 with n_samples = 1000000). The explanation predicts that the "
        "difference is first order in ε: it applies only if the difference at ε = 1e-6 is 0.05-0.2 of that at "
        "ε = 1e-5 (0.1 predicted) and the difference at ε = 1e-12 is at most 1e-6 of it (1e-7 predicted).",
        profiles=("ci", "full"),
        expected=lambda m: (
            scale_free_diag["eps0"] <= 1e-6 * m and 0.05 <= scale_free_diag["eps_ratio"] <= 0.2
        ),
        diagnostics=("cor3-scale-free-eps0", "cor3-scale-free-eps-ratio"),
        evidence="glued cor3-scale-free-eps0 (the same difference with ε = 1e-12) and cor3-scale-free-eps-ratio "
        "(the difference at ε = 1e-6 over that at ε = 1e-5; first order in ε predicts 0.1, accepted in [0.05, 0.2])",
    ),
)
scales = [0.1, 1.0, 3.0, 10.0]
xs, zs = binary_latent_tokens(P.n_samples, 4, 6, generator=gen, scales=scales)
Ws = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=gen), dim=-1)
pr = theorem5_prediction(Ws, xs, zs, P.activation)
f1s = hidden_two_layer(Ws, xs, P.activation)
sigma2 = f1s.var(0, unbiased=False)
d_bn = pr["d"] / sigma2
ratio_d = float(pr["d"].max() / pr["d"].min())
ratio_dbn = float(d_bn.max() / d_bn.min())
run.glue("cor3-d-ratio", f"{ratio_d:.3g}")
c_dbn.measure(round(ratio_dbn, 3))
speed_plain = top_mode_velocity(Ws, xs, P.activation)[0].norm(dim=-1)
speed_bn = top_mode_velocity(Ws, xs, P.activation, bn=(True, False))[0].norm(dim=-1)
c_slow.measure(float(f"{(speed_plain.min() / speed_plain.max()).item():.3g}"))
run.glue("cor3-bn-speed-ratio", round(float(speed_bn.min() / speed_bn.max()), 3))
pr_bn = corollary3_prediction(Ws, xs, zs, P.activation, eps=1e-5)
gap_bn = pr_bn["lam"] - pr_bn["d"]
gap_plain = pr["lam"] - pr["d"]
c_fast.measure(round(float(gap_bn.max() / gap_bn.min()), 3))
run.glue("cor3-no-bn-gap-ratio", f"{float(gap_plain.max() / gap_plain.min()):.3g}")
x_unit = xs / torch.as_tensor(scales)[None, :, None]
speed_bn_unit = top_mode_velocity(Ws, x_unit, P.activation, bn=(True, False))[0].norm(dim=-1)
speed_unit = top_mode_velocity(Ws, x_unit, P.activation)[0].norm(dim=-1)


def bn_speeds(x, eps):
    return top_mode_velocity(Ws, x, P.activation, bn=(True, False, eps))[0].norm(dim=-1)


def scale_gap(eps):
    """max_k relative difference of the BN speeds between scaled and unit-scale inputs at BatchNorm ε."""
    return float(((bn_speeds(xs, eps) - bn_speeds(x_unit, eps)).abs() / bn_speeds(x_unit, eps)).max())


scale_free_diag = {"eps0": scale_gap(1e-12), "eps_ratio": scale_gap(1e-6) / scale_gap(1e-5)}
run.glue("cor3-scale-free-eps0", f"{scale_free_diag['eps0']:.1e}")
run.glue("cor3-scale-free-eps-ratio", round(scale_free_diag["eps_ratio"], 3))
run.diagnostic("cor3-scale-free-eps0", float(scale_free_diag["eps0"]))
run.diagnostic("cor3-scale-free-eps-ratio", float(scale_free_diag["eps_ratio"]))
c_free.measure(round(float(((speed_bn - speed_bn_unit).abs() / speed_bn_unit).max()), 4))
run.glue("cor3-baseline-ratio", round(float(speed_unit.min() / speed_unit.max()), 3))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.2))
ax1.bar(np.arange(4) - 0.2, (pr["d"] / pr["d"].max()).numpy(), 0.4, label="$d_k$ (no BN)")
ax1.bar(np.arange(4) + 0.2, (d_bn / d_bn.max()).numpy(), 0.4, label="$d_k^{bn}$")
ax1.set_yscale("log")
ax1.set_xticks(range(4), [f"scale {s:g}" for s in scales])
ax1.set_ylabel("relative to the largest")
ax1.set_title("Corollary 3: effective variances")
ax1.legend()
ax2.bar(np.arange(4) - 0.2, (speed_plain / speed_plain.max()).numpy(), 0.4, label="no BN")
ax2.bar(np.arange(4) + 0.2, (speed_bn / speed_bn.max()).numpy(), 0.4, label="mean-backprop BN")
ax2.set_yscale("log")
ax2.set_xticks(range(4), [f"scale {s:g}" for s in scales])
ax2.set_ylabel(r"$\|\dot{\mathbf{w}}_k\|$ / fastest RF")
ax2.set_title("Learning speed per RF (autograd)")
ax2.legend()
plt.show()

# %% [markdown]
# Without BatchNorm the $d_k$ span a factor {glue:text}`cor3-d-ratio`. At unit scales and without
# BatchNorm, the slowest RF moves at {glue:text}`cor3-baseline-ratio` of the fastest, and with BatchNorm at
# {glue:text}`cor3-bn-speed-ratio`: this spread, set by how discriminative each RF's filter is, is what remains
# with BatchNorm. The factor App. D is about, $\lambda - d_k$, spans {glue:text}`cor3-no-bn-gap-ratio` without
# BatchNorm (claim `cor3-bn-not-slow` gives its spread with BatchNorm). With a BatchNorm
# $\epsilon$ of $10^{-12}$ instead of $10^{-5}$, the BN speeds on scaled and unit-scale inputs differ by
# {glue:text}`cor3-scale-free-eps0` (relative): the scale invariance of Corollary 3 is exact up to $\epsilon$. The
# explanation of `cor3-bn-scale-free` predicts more than that: the difference is first order in $\epsilon$ (for the
# 0.1-scaled RF $\epsilon/\sigma_k^2 \approx 0.02$), so at $\epsilon = 10^{-6}$ it is about a tenth of that at $10^{-5}$
# (measured ratio {glue:text}`cor3-scale-free-eps-ratio`; the explanation applies only within $[0.05, 0.2]$) and at
# $\epsilon = 10^{-12}$ about $10^{-7}$ of it (applies only if $\le 10^{-6}$ of it). (A first version of this predicate
# read the $\epsilon = 10^{-12}$ difference as round-off, $\le 10^{-8}$ absolute; the first run measured about $10^{-8}$,
# which is the first-order size, so the bound was restated relative to the $\epsilon = 10^{-5}$ difference.)
#
# ### Corollary 3 (1)-(3) in closed form against the experiment
#
# The App. D experiment: the scaled binary model, BatchNorm right after $\mathbf{f}$ with its moments
# pooled over all $2N$ samples of the batch (Eqs. 164-165; here without augmentation the two views
# coincide, so the $2N$ rows are the $N$ samples twice and pooling equals the per-view moments), mean-backprop
# (Def. 5), $\epsilon = 10^{-5}$ as in torch (the closed form uses the same $\sigma_k^2 + \epsilon$), `n_seeds` data
# seeds of `n_samples` samples. The closed form (`corollary3_prediction`): $A_k^{bn}$, $d_k^{bn}$, $\Delta_k^{bn}$
# of Eqs. 175-177 from conditional sample moments, $\lambda^{bn}$ from the secular equation of
# $D^{bn} + p_0p_1\mathbf{b}^{bn}\mathbf{b}^{bn\top}$ (Lemma 5), $\mathbf{s}^{bn}$ and $\delta_k^{bn}$ of part (2) and Eq. 179. The
# experiment: the top eigenpair of the sample $\mathbb{V}[\mathbf{f}_1^{bn}]$ and autograd's $P^\perp\partial\mathcal{E}/\partial\mathbf{w}_k$
# through the BatchNorm layer (`top_mode_velocity`).
#
# **Predictions and tolerances** (each on ≥ 80% of seeds). (1) $\lambda^{bn}_{\text{sample}} - \max_k d_k^{bn} \ge 0$, a
# check: it holds for any sample moments (the diagonal of $\mathbb{V}[\mathbf{f}_1^{bn}]$ is $d_k^{bn} + p_0p_1(b_k^{bn})^2$ by
# the law of total variance, and the top eigenvalue is at least the largest diagonal entry); its value is the
# eigengap used by the explanations of (2) and (3).
# (2) $|\cos(\mathbf{s}^{bn}, \text{top eigenvector of } \mathbb{V}[\mathbf{f}_1^{bn}])| \ge 0.999$ (the tolerance of
# `thm5-bns-eigenvector`). (3) $\|\dot{\mathbf{w}}_{\text{Eq. 178}} - \dot{\mathbf{w}}_{\text{autograd}}\|/\|\dot{\mathbf{w}}_{\text{autograd}}\| \le 0.05$
# (the tolerance of `thm5-matches-autograd`). At ci size ($10^5$ samples) parts (2) and (3) fail on the data
# seeds whose eigengap $\lambda^{bn} - \max_k d_k^{bn}$ is small (a ci sweep over base seeds; numbers in the claims'
# notes): there they are declared *not reproduced* in ci, and only if every failing seed has a smaller
# eigengap than every passing one, the explanation's own prediction.

# %%
c_c31 = run.expect(
    "cor3-part1-lambda",
    kind="check",
    source="Tian 2023, Corollary 3 (1)",
    statement="λ^bn (top eigenvalue of the sample V[f_1^bn]) − max_k d_k^bn, per seed.",
    check=at_least(0.0),
    decide=holds_on_fraction(0.8),
    paper="λ^bn ≥ max_k d_k^bn",
    required=paper_setting,
)
EIGENGAP_EXPLANATION = Revision(
    "part 2: not reproduced in ci with expected mean |cos| ≥ 0.99; part 3: no explanation",
    "both: not reproduced in ci (n_samples = 100000) where every failing seed has a smaller eigengap "
    "than every passing seed",
    "a ci sweep over base seeds 0–4 failed parts 2 and 3 on the data seeds with the smallest eigengaps "
    "(part 2 mean 0.974 at seed 2, below the old expectation); the explanation now tests its own content",
    "2026-11-25",
)
c_c32 = run.expect(
    "cor3-part2-eigenvector",
    source="Tian 2023, Corollary 3 (2)",
    statement="|cos| between the closed-form s^bn and the top eigenvector of the sample V[f_1^bn], per seed.",
    check=at_least(0.999),
    decide=holds_on_fraction(0.8),
    paper="s^bn ∝ w_kᵀΔ_k^bn / (λ^bn − d_k^bn)",
    required=paper_setting,
    not_reproduced=NotReproduced(
        "Observed in the first ci run of this claim (n_samples = 100000): two of three seeds agree to "
        "|cos| ≥ 0.9998, the third reaches 0.995. That seed has the smallest eigengap λ^bn − max_k d_k^bn "
        "(part 1, 0.04 against 0.2 for the others), where the top eigenvector of the sample V[f_1^bn] is most "
        "sensitive to the O(N^(-1/2)) cross-RF covariances that Lemma 5 sets to zero. A ci sweep over base "
        "seeds 0–4 (15 data seeds) showed the same at seeds 1 and 2: |cos| 0.9927 and 0.9227 on the seeds "
        "with eigengaps 0.018 and 0.015, the smallest of their runs. The full profile (10⁶ samples) passes.",
        profiles=("ci",),
        setting={"n_samples": 100_000},
        expected=lambda m: fails_at_smallest_gaps([v >= 0.999 for v in c3["p2"]]),
        diagnostics=("cor3-eigengaps", "cor3-part2-cos"),
        evidence="the per-seed table printed under the Corollary 3 (1)-(3) cell (parts 1 and 2 side by side)",
    ),
    revised=[EIGENGAP_EXPLANATION],
)
c_c33 = run.expect(
    "cor3-part3-dynamics",
    source="Tian 2023, Corollary 3 (3), Eqs. 178-179",
    statement="‖ẇ(Eq. 178) − ẇ(autograd, mean-backprop BN)‖ / ‖ẇ(autograd)‖, per seed.",
    check=at_most(0.05),
    decide=holds_on_fraction(0.8),
    paper="equality (population)",
    required=paper_setting,
    not_reproduced=NotReproduced(
        "Observed in a ci sweep over base seeds 0–4 (n_samples = 100000, 15 data seeds): the relative error "
        "was 0.068 and 0.204 on the two seeds with the smallest eigengaps λ^bn − max_k d_k^bn (0.018, 0.015) "
        "and at most 0.05 on the others; Eq. 178 divides by λ^bn − d_k^bn, so the O(N^(-1/2)) sampling error "
        "of the moments is amplified where the gap is small. The full profile (10⁶ samples) passes.",
        profiles=("ci",),
        setting={"n_samples": 100_000},
        expected=lambda m: fails_at_smallest_gaps([v <= 0.05 for v in c3["p3"]]),
        diagnostics=("cor3-eigengaps", "cor3-part3-err"),
        evidence="the per-seed table printed under the Corollary 3 (1)-(3) cell (parts 1 and 3 side by side)",
    ),
    revised=[EIGENGAP_EXPLANATION],
)


def fails_at_smallest_gaps(ok):
    """The explanation of cor3-part2/part3: every seed that fails has a smaller eigengap (part 1) than
    every seed that passes (a parameter-free prediction that can fail)."""
    gaps = c3["p1"]
    bad = [g for g, o in zip(gaps, ok) if not o]
    good = [g for g, o in zip(gaps, ok) if o]
    return bool(bad) and (not good or max(bad) < min(good))


# %%
from nlcl.tian.rf_network import batch_norm  # noqa: E402

c3 = {"p1": [], "p2": [], "p3": []}
for s_ in range(P.n_seeds):
    g3 = torch.Generator().manual_seed(20_000 * (s_ + 1) + seed)
    x3, z3 = binary_latent_tokens(P.n_samples, 4, 6, generator=g3, scales=scales)
    W3 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g3), dim=-1)
    cf = corollary3_prediction(W3, x3, z3, P.activation, eps=1e-5)
    fbn = batch_norm(hidden_two_layer(W3, x3, P.activation), True, False, 1e-5)
    lam_s, vec_s = torch.linalg.eigh(torch.cov(fbn.T, correction=0))
    auto3, _ = top_mode_velocity(W3, x3, P.activation, bn=(True, False, 1e-5))
    c3["p1"].append(float(lam_s[-1] - cf["d"].max()))
    c3["p2"].append(float((cf["s"] @ vec_s[:, -1]).abs()))
    c3["p3"].append(float((cf["wdot"] - auto3).norm() / auto3.norm()))
print({k: np.round(v, 4).tolist() for k, v in c3.items()})
run.diagnostic("cor3-eigengaps", list(c3["p1"]))  # per data seed: what the explanations of parts 2-3 test
run.diagnostic("cor3-part2-cos", list(c3["p2"]))
run.diagnostic("cor3-part3-err", list(c3["p3"]))
c_c31.measure_seeds(c3["p1"])
c_c32.measure_seeds(c3["p2"])
c_c33.measure_seeds(c3["p3"])

# %% [markdown]
# ## Two augmented views: BatchNorm moments pooled over $2N$ (Eqs. 164-165, Lemma 6, Corollary 3)
#
# App. D normalizes with moments pooled over **all $2N$ rows** of a batch, both views of every sample.
# Above there is one view, so pooled and per-view moments coincide and the pooling is untested. Here each
# sample of the scaled binary model (scales 0.1, 1, 3, 10) gets two views that share its class $z$ and its
# tokens but carry independent noise (std 0.3, the augmentation), and the second view is multiplied by a
# gain $\gamma = 2$ (an augmentation applied to one branch only): its variance is $\gamma^2$ times the first view's, so
# the pooled $\sigma_k^2$ differs from the per-view ones (`two_view_binary_tokens`, `bn_moments` in
# `nlcl.tian.two_view_bn`). The contrastive covariance is that of Eq. 3 with uniform $\alpha$; with two views it is
# not the variance (Assumption 2's "no augmentation" does not hold), so Corollary 3 is taken with $\mathbb{C}_\alpha$ in
# place of $\mathbb{V}$: $A_k^{bn} = \mathbb{C}_\alpha[\tilde{\mathbf{x}}_k^{bn}]$ (the moment Lemma 6 carries), $\Delta_k^{bn}$ the
# class-mean difference over both views, $d_k^{bn}$ the rest of the diagonal of $\mathbb{C}_\alpha[\mathbf{f}^{bn}]$
# (`corollary3_two_view`); with one view this is the closed form above.
#
# **Predictions** (declared before the first run of this section):
#
# * (Lemma 6, any $M$) Eq. 166 with the pooled $\sigma_k$ equals autograd through mean-backprop BatchNorm (InfoNCE's
#   $\alpha$, $M = 3$, linear and {glue:text}`theory-activation`): relative difference $\le 10^{-10}$. The proof drops
#   $\mathbb{C}_\alpha[\cdot, \mu_k\sigma_k^{-1}]$ and $\mathbb{C}_\alpha[\cdot, \partial\mu_k/\partial\mathbf{w}_k]$ because the moments are the same
#   for every row; with per-view moments they are not, and Eq. 166 misses autograd by $\ge 10^{-3}$ (a check that
#   the test can fail, and that the pooling matters).
# * (Corollary 3 (1)-(3), pooled, $\gamma = 2$, `n_seeds` data seeds, each on ≥ 80% of seeds) (1) $\lambda^{bn} -
#   \max_k d_k^{bn} \ge 0$ (a check: true for any moments, as above); (2) $|\cos(\mathbf{s}^{bn}, \text{top eigenvector
#   of } \mathbb{C}_\alpha[\mathbf{f}^{bn}])| \ge 0.999$; (3) Eq. 178 against autograd, relative error $\le 0.05$ (the
#   tolerances of the one-view claims).
# * (App. D's speed statement: BatchNorm "won't lead to slowness") the slowest RF's speed over the fastest's,
#   with pooled BatchNorm on the scaled inputs, is at least a third (the factor of `cor3-dbn-uniform`) of the same
#   ratio without BatchNorm on the unit-scale inputs, where no RF is slowed by its scale; on ≥ 80% of seeds.
#
# **What our derivation says about (2)-(3).** Conditional independence makes the off-diagonal of
# $\mathbb{C}_\alpha[\mathbf{f}^{bn}]$ equal to $p_0p_1 b^{(1)}_k b^{(1)}_{k'} - \tfrac12\mathbb{E}_z[m_k(z)m_{k'}(z)]$, with $b^{(1)}$ the
# class difference in the first view and $m_k(z) = \mathbb{E}[f^{bn}_k - f^{bn\prime}_k \mid z]$ the difference between the
# views. Pooled moments subtract the same $\mu_k$ from both views, so for $\gamma \ne 1$, $m_k(z) = (1-\gamma)
# \mathbb{E}[f_k \mid z]/\sigma_k \ne 0$ and the rank-one form behind (2)-(3) breaks; per-view moments map both views
# of a homogeneous $h$ to the same distribution, $m = 0$, and the rank-one form holds. If (2)-(3) fail, the
# explanation applies only when the same closed form with **per-view** moments (network and formula) is closer to
# the experiment than the pooled one on every seed, in both parts, and the view term $\tfrac12\mathbb{E}_z[mm^\top]$ is at
# least a tenth of the off-diagonal of $\mathbb{C}_\alpha[\mathbf{f}^{bn}]$ (Frobenius norms): diagnostics computed below. (First
# declared as "per-view passes both tolerances on ≥ 80% of seeds"; a ci run at base seed 2 gave a per-view $|\cos|$ of
# 0.9968 on one data seed, the small-sample eigenvector sensitivity of `cor3-part2-eigenvector`, so the condition now
# compares per-view with pooled instead of with the tolerance: a revision, recorded on both claims.)

# %%
from nlcl.tian.two_view_bn import (  # noqa: E402
    bn_moments,
    corollary3_two_view,
    energy_bn,
    lemma6_dynamics,
    two_view_binary_tokens,
    two_view_velocity,
)

c_l6 = run.expect(
    "lemma6-pooled-bn",
    source="Tian 2023, Lemma 6 / Eq. 166",
    statement=f"two views (gain 2), M = 3, InfoNCE α: max relative difference between Eq. 166 with BatchNorm "
    f"moments pooled over 2N and autograd (linear and {P.activation}).",
    check=at_most(1e-10),
    paper="equality",
    required=paper_setting,
)
c_l6v = run.expect(
    "lemma6-per-view-control",
    kind="check",
    source="Tian 2023, Lemma 6 proof (Eqs. 169-171)",
    statement="the same with per-view moments: min over the activations of the max relative difference.",
    check=at_least(1e-3),
    paper="(needs moments shared by the 2N rows)",
)
c_2v_differ = run.expect(
    "bn2v-pooled-differs",
    kind="check",
    source="Tian 2023, Eqs. 164-165",
    statement="max_k |σ_k²(pooled over 2N) / σ_k²(first view) − 1|: the setting is not the one-view one.",
    check=at_least(0.5),
    paper="(setting)",
)
TWO_VIEW_WHY = NotReproduced(
    "Predicted by the derivation above before the first run: with views of different gain, moments pooled over "
    "2N leave a view-dependent mean m_k(z) in f^bn, whose term ½E_z[m mᵀ] in the off-diagonal of C_α[f^bn] breaks "
    "the rank-one form of Lemma 5 that parts (2) and (3) rest on. Per-view moments remove it (m = 0 for a "
    "homogeneous h and a gain).",
    profiles=("ci", "full"),
    expected=lambda m: per_view_closer() and min(cor2v["view_share"]) >= 0.1,
    diagnostics=("cor3-2view-per-view-closer", "cor3-2view-view-share-min"),
    evidence="per-seed table of the two-view cell: parts (2)-(3) with per-view moments and the view term's share",
)
TWO_VIEW_REVISION = Revision(
    "explanation applies if per-view moments pass both tolerances on ≥ 80% of seeds",
    "explanation applies if per-view moments are closer than pooled ones on every seed, in both parts",
    "ci run at base seed 2: per-view |cos| 0.9968 on one data seed (small-sample eigenvector sensitivity, as in "
    "cor3-part2-eigenvector), while pooled gave 0.88; the threshold of the claims is unchanged",
    "2026-11-26",
)
c_2v1 = run.expect(
    "cor3-2view-part1",
    kind="check",
    source="Tian 2023, Corollary 3 (1)",
    statement="two views, pooled BN: λ^bn − max_k d_k^bn, per seed.",
    check=at_least(0.0),
    decide=holds_on_fraction(0.8),
    paper="λ^bn ≥ max_k d_k^bn",
    required=paper_setting,
)
c_2v2 = run.expect(
    "cor3-2view-part2",
    source="Tian 2023, Corollary 3 (2), App. D (Eqs. 164-165)",
    statement="two views (gain 2), pooled BN: |cos| between s^bn and the top eigenvector of C_α[f^bn], per seed.",
    check=at_least(0.999),
    decide=holds_on_fraction(0.8),
    paper="s^bn ∝ w_kᵀΔ_k^bn / (λ^bn − d_k^bn)",
    required=paper_setting,
    not_reproduced=TWO_VIEW_WHY,
    revised=[TWO_VIEW_REVISION],
)
c_2v3 = run.expect(
    "cor3-2view-part3",
    source="Tian 2023, Corollary 3 (3), App. D (Eqs. 164-165)",
    statement="two views (gain 2), pooled BN: ‖ẇ(Eq. 178) − ẇ(autograd)‖ / ‖ẇ(autograd)‖, per seed.",
    check=at_most(0.05),
    decide=holds_on_fraction(0.8),
    paper="equality (population)",
    required=paper_setting,
    not_reproduced=TWO_VIEW_WHY,
    revised=[TWO_VIEW_REVISION],
)
c_2v_speed = run.expect(
    "cor3-2view-bn-not-slow",
    source="Tian 2023, App. D (Remarks after Corollary 3)",
    statement="two views, pooled BN on scaled inputs: (slowest/fastest RF speed) / (the same without BN on "
    "unit-scale inputs), per seed.",
    check=at_least(1 / 3),
    decide=holds_on_fraction(0.8),
    paper="BatchNorm won't lead to slowness of feature learning",
    required=paper_setting,
    not_reproduced=NotReproduced(
        "Observed in ci runs at base seeds 1 and 2 (one data seed of three each: 0.18 and 0.27). The ratio compares "
        "two spreads of about 1e-3 whose slowest RF differs between the networks: the spread comes from how "
        "discriminative each RF's filter is, which BatchNorm does not equalize and App. D does not claim to. "
        "Predicted: the scale itself slows no RF with BatchNorm, i.e. on every data seed each RF's BN speed on the "
        "scaled inputs is at least a third of its BN speed on unit-scale inputs (without BN the 0.1-scaled RF "
        "falls far below).",
        profiles=("ci", "full"),
        expected=lambda m: min(cor2v["scale_effect"]) >= 1 / 3,
        diagnostics=("cor3-2view-scale-effect",),
        evidence="column scale_effect of the per-seed table (min_k BN speed scaled / BN speed unit-scale); glued "
        "cor3-2view-scale-effect-no-bn for the same without BN",
    ),
)


def per_view_closer():
    """The explanation's first condition: on every seed, per-view moments bring both parts closer than pooled ones."""
    return all(
        1 - vc < 1 - c and ve < e
        for c, e, vc, ve in zip(cor2v["p2"], cor2v["p3"], cor2v["view_p2"], cor2v["view_p3"])
    )


# %% [markdown]
# Lemma 6 against autograd on one batch of $N = 64$ two-view samples:

# %%
g6 = torch.Generator().manual_seed(30_000 + seed)
x6, _ = two_view_binary_tokens(64, 4, 6, generator=g6, scales=scales, gain=2.0)
W6 = torch.randn(4, 3, 6, generator=g6).requires_grad_()
V6 = torch.randn(5, 12, generator=g6).requires_grad_()
l6 = {}
for a in ("linear", P.activation):
    f1_6, f2_6 = split_views(hidden_two_layer(W6, x6, a) @ V6.T)
    al6 = infonce_alpha(f1_6, f2_6, tau=0.5).detach()
    for pooled in (True, False):
        gW6, gV6 = torch.autograd.grad(energy_bn(W6, V6, x6, a, al6, pooled), [W6, V6])
        Vd6, Wd6 = lemma6_dynamics(W6.detach(), V6.detach(), x6, a, al6, pooled)
        l6[a, pooled] = max(
            float((gW6 - Wd6).abs().max() / gW6.abs().max()), float((gV6 - Vd6).abs().max() / gV6.abs().max())
        )
print({f"{a}, {'pooled' if p else 'per view'}": f"{e:.1e}" for (a, p), e in l6.items()})
c_l6.measure(max(v for (a, p), v in l6.items() if p))
c_l6v.measure(min(v for (a, p), v in l6.items() if not p))

# %% [markdown]
# Corollary 3 and the speeds, `n_seeds` data seeds of `n_samples` two-view samples (pooled and per-view moments;
# exchangeable views, $\gamma = 1$, for contrast):


# %%
def cor3_two_view_run(x, z, W, pooled):
    """Parts (1)-(3) of Corollary 3 on two views: eigengap, |cos|, relative error, and the view term's share."""
    cf = corollary3_two_view(W, x, z, P.activation, pooled=pooled)
    auto, s_top, C = two_view_velocity(W, x, P.activation, bn="pooled" if pooled else "view")
    f = hidden_two_layer(W, x, P.activation)
    mu, var = bn_moments(f, pooled)
    fbn = (f - mu) * torch.rsqrt(var)
    n = len(z)
    dv = fbn[:n] - fbn[n:]
    m_z = torch.stack([dv[z].mean(0), dv[~z].mean(0)])  # m_k(z) for z = 1, 0
    view_term = 0.5 * (cf["p1"] * torch.outer(m_z[0], m_z[0]) + cf["p0"] * torch.outer(m_z[1], m_z[1]))
    off = 1 - torch.eye(len(s_top))
    return {
        "p1": float(torch.linalg.eigvalsh(C)[-1] - cf["d"].max()),
        "p2": float((cf["s"] @ s_top).abs()),
        "p3": float((cf["wdot"] - auto).norm() / auto.norm()),
        "share": float((view_term * off).norm() / (C * off).norm()),
    }


def speed_ratio(x, W, bn):
    v = two_view_velocity(W, x, P.activation, bn=bn)[0].norm(dim=-1)
    return float(v.min() / v.max())


cor2v = {
    k: []
    for k in (
        "p1",
        "p2",
        "p3",
        "view_p2",
        "view_p3",
        "view_share",
        "exch_p2",
        "exch_p3",
        "speed",
        "scale_effect",
    )
}
scale_no_bn = []
sig_ratio = []
for s_ in range(P.n_seeds):
    g7 = torch.Generator().manual_seed(40_000 * (s_ + 1) + seed)
    x7, z7 = two_view_binary_tokens(P.n_samples, 4, 6, generator=g7, scales=scales, gain=2.0)
    W7 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g7), dim=-1)
    pooled_r, view_r = cor3_two_view_run(x7, z7, W7, True), cor3_two_view_run(x7, z7, W7, False)
    for k in ("p1", "p2", "p3"):
        cor2v[k].append(pooled_r[k])
    cor2v["view_p2"].append(view_r["p2"])
    cor2v["view_p3"].append(view_r["p3"])
    cor2v["view_share"].append(pooled_r["share"])
    x7e, z7e = two_view_binary_tokens(P.n_samples, 4, 6, generator=g7, scales=scales, gain=1.0)
    exch = cor3_two_view_run(x7e, z7e, W7, True)
    cor2v["exch_p2"].append(exch["p2"])
    cor2v["exch_p3"].append(exch["p3"])
    x7u = x7 / torch.as_tensor(scales)[None, :, None]
    cor2v["speed"].append(speed_ratio(x7, W7, "pooled") / speed_ratio(x7u, W7, None))
    v_rf = {
        (bn, u): two_view_velocity(W7, xx, P.activation, bn=bn)[0].norm(dim=-1)
        for bn in ("pooled", None)
        for u, xx in ((False, x7), (True, x7u))
    }
    cor2v["scale_effect"].append(float((v_rf["pooled", False] / v_rf["pooled", True]).min()))
    scale_no_bn.append(float((v_rf[None, False] / v_rf[None, True]).min()))
    f7 = hidden_two_layer(W7, x7, P.activation)
    sig_ratio.append(float((bn_moments(f7, True)[1][0] / bn_moments(f7, False)[1][0] - 1).abs().max()))
display(pd.DataFrame(cor2v).round(4).rename_axis("data seed"))
c_2v_differ.measure(round(min(sig_ratio), 3))
run.diagnostic("cor3-2view-per-view-closer", per_view_closer())
run.diagnostic("cor3-2view-view-share-min", float(min(cor2v["view_share"])))
run.diagnostic("cor3-2view-scale-effect", float(min(cor2v["scale_effect"])))
c_2v1.measure_seeds(cor2v["p1"])
c_2v2.measure_seeds(cor2v["p2"])
c_2v3.measure_seeds(cor2v["p3"])
c_2v_speed.measure_seeds(cor2v["speed"])
run.glue("cor3-2view-exch-p2", f"{np.mean(cor2v['exch_p2']):.4f}")
run.glue("cor3-2view-exch-p3", f"{np.mean(cor2v['exch_p3']):.3f}")
run.glue("cor3-2view-view-p2", f"{np.mean(cor2v['view_p2']):.4f}")
run.glue("cor3-2view-view-p3", f"{np.mean(cor2v['view_p3']):.3f}")
run.glue("cor3-2view-share", f"{np.mean(cor2v['view_share']):.2f}")
run.glue("cor3-2view-scale-effect", f"{min(cor2v['scale_effect']):.2f}")
run.glue("cor3-2view-scale-effect-no-bn", f"{min(scale_no_bn):.1e}")

# %% [markdown]
# With exchangeable views ($\gamma = 1$) the pooled closed form matches: mean $|\cos|$ {glue:text}`cor3-2view-exch-p2`, mean
# relative error {glue:text}`cor3-2view-exch-p3`. With $\gamma = 2$ and per-view moments: {glue:text}`cor3-2view-view-p2` and
# {glue:text}`cor3-2view-view-p3`. The view term $\tfrac12\mathbb{E}_z[mm^\top]$ makes up {glue:text}`cor3-2view-share` (mean) of the
# off-diagonal of $\mathbb{C}_\alpha[\mathbf{f}^{bn}]$ with pooled moments and $\gamma = 2$. **Finding.** Pooling over $2N$ is what
# makes Lemma 6 exact (per-view moments miss autograd), and it is also what breaks Corollary 3 (2)-(3) when the views
# differ in scale: the pooled normalization leaves each view's mean in $\mathbf{f}^{bn}$, a second term in the
# off-diagonal of $\mathbb{C}_\alpha[\mathbf{f}^{bn}]$ that the corollary does not have. Per-view moments restore the corollary
# but not Lemma 6's form. With one view, or exchangeable views, both coincide and the question does not arise.
# App. D's speed statement, as declared (`cor3-2view-bn-not-slow`), compares the spread of speeds across RFs with the
# spread of a unit-scale network without BatchNorm; what the scale does is cleaner: with BatchNorm no RF's speed on the
# scaled inputs falls below {glue:text}`cor3-2view-scale-effect` of its speed on unit-scale inputs, without BatchNorm the
# 0.1-scaled RF falls to {glue:text}`cor3-2view-scale-effect-no-bn` of it.

# %% [markdown]
# ## Eqs. 155-157: the basin probability of a modulated pattern
#
# The Remark after Theorem 6 models the initial coordinates $y_l(0)$ by independent $Y_l \sim U[-1, 1]$ and the
# effect of modulation by an additive advantage $\epsilon_l$: $\mathbf{w} \to \mathbf{u}_l$ (event $E_l$) when $Y_l \ge 0$ and
# $Y_l + \epsilon_l \ge \max_{l'\neq l}(Y_{l'} + \epsilon_{l'})$. Eq. 155 integrates $\mathbb{P}[E_l]$ when only $\epsilon_l \ne 0$; Eq. 156
# bounds the most modulated coordinate from below by $(\epsilon_{c(1)} - \epsilon_{c(2)})/2$, Eq. 157 the others from above. The
# consequences the paper draws: no modulation gives $\mathbb{P} \approx 1/d$; positive modulation gives $\mathbb{P} \ge \epsilon_l/2$,
# *independent of $d$*; negative modulation gives $\mathbb{P} \le (1 + \epsilon_l/2)^d/d$, *exponentially small in $d$*.
#
# **Why Eq. 155 cannot be compared with the dynamics as printed.** $\epsilon_l$ is not defined in terms of the
# modulation $c$ (or $b_l$) of Theorem 6; and the model's law is not that of the dynamics: the coordinates of a
# uniform random unit vector are neither uniform on $[-1, 1]$ nor independent, and the winner of the
# normalized flow is decided by $t_l^* = \ln(1 + b_l/y_l(0))/b_l$ (Eq. 150), not by $y_l(0) + \epsilon_l$. So we test the
# formulas within their model (checks: Monte Carlo against the closed forms; the printed first case of Eq. 155,
# "$\epsilon_l > 1$", is read as its integral, $1/2$) and the paper's two $d$-dependence statements, which need no
# $\epsilon$, against the normalized dynamics of Theorem 6 (`modulated_basin_fractions`, $b = 1.5$, modulation $c = \pm 0.5$
# on $\mathbf{u}_1$, `n_init` initializations for each $d \in \{4, 8, 16, 32\}$).
#
# **Predictions and tolerances.** (a) Eq. 155 against Monte Carlo ($d = 8$, $\epsilon \in \{-0.9, \dots, 1.2\}$, `n_init`
# × 100 draws): largest difference $\le 5$ standard errors. (b) Eqs. 156 and 157 against Monte Carlo on 20 random
# $\boldsymbol{\epsilon} \sim U[-1, 1]^8$ and 7 whose top gap $\epsilon_{c(1)} - \epsilon_{c(2)}$ is set from 0.1 to 1.8: no bound violated by
# more than 5 standard errors (Eq. 156 is a claim of the paper that can fail; Eq. 157 a check). (c) Positive modulation, independent
# of $d$: $\mathbb{P}[\mathbf{w}\to\mathbf{u}_1]$ at $d = 32$ is at least half of that at $d = 4$ (a $1/d$ law would give $1/8$). (d) Negative
# modulation, exponentially small: $d\,\mathbb{P}[\mathbf{w}\to\mathbf{u}_1]$ at $d = 32$ is at most half of that at $d = 4$ (without
# modulation $d\,\mathbb{P} = 1$ at every $d$, by symmetry).

# %%
from nlcl.tian.basin_probability import (  # noqa: E402
    basin_event_mc,
    eq155_probability,
    eq156_lower_bound,
    eq157_upper_bound,
)

c_155 = run.expect(
    "eq155-closed-form",
    kind="check",
    source="Tian 2023, Eq. 155",
    statement="largest |Monte Carlo − Eq. 155| in standard errors (d = 8, ε from −0.9 to 1.2).",
    check=at_most(5.0),
    paper="the integral of Eq. 154",
)
c_156 = run.expect(
    "eq156-lower-bound",
    source="Tian 2023, Eq. 156",
    statement="largest violation of P[E_c(1)] ≥ (ε_c(1) − ε_c(2))/2 by Monte Carlo, in standard errors "
    "(d = 8; 20 random ε and 7 with the top gap from 0.1 to 1.8).",
    check=at_most(5.0),
    paper="P[E_c(1)] ≥ (ε_c(1) − ε_c(2))/2",
    not_reproduced=NotReproduced(
        "Observed in a ci run at base seed 1 (a first version of this check, on 20 random ε only, measured 14.7 "
        "standard errors). Eq. 156 carries over the positive-modulation bound P ≥ ε/2, which holds only for "
        "ε ≤ 1: for ε > 1 the event is just Y_l ≥ 0, so P = 1/2 < ε/2 (Eq. 155's first case). Predicted: every "
        "violation is at a top gap above 1, and the bound min(gap, 1)/2 is never violated.",
        profiles=("ci", "full"),
        expected=lambda m: eq156_diag["worst_small_gap"] <= 5 and eq156_diag["worst_capped"] <= 5,
        diagnostics=("eq156-worst-small-gap", "eq156-worst-capped"),
        evidence="glued eq156-worst-small-gap (the largest violation among ε with top gap ≤ 1) and "
        "eq156-worst-capped (the largest violation of min(gap, 1)/2)",
    ),
)
c_157 = run.expect(
    "eq157-upper-bound",
    kind="check",
    source="Tian 2023, Eq. 157",
    statement="largest violation of the upper bounds of Eq. 157 by Monte Carlo, in standard errors (the same ε).",
    check=at_most(5.0),
    paper="P[E_c(r)] ≤ min_{r'<r} (1 − (ε_c(r') − ε_c(r))/2)^{r'+1} / (r'+1)",
)
c_pos = run.expect(
    "eq155-positive-d-free",
    source="Tian 2023, App. C.3 (Remark, positive modulation)",
    statement="normalized dynamics, c = +0.5: P[w → u_1] at d = 32 over P[w → u_1] at d = 4.",
    check=at_least(0.5),
    paper="P[E_l] ≥ ε_l/2, independent of d",
    required=paper_setting,
)
c_neg = run.expect(
    "eq155-negative-decays",
    source="Tian 2023, App. C.3 (Remark, negative modulation)",
    statement="normalized dynamics, c = −0.5: d·P[w → u_1] at d = 32 over the same at d = 4.",
    check=at_most(0.5),
    paper="P[E_l] ≤ (1 + ε_l/2)^d / d, exponentially small in d",
    required=paper_setting,
)

rng155 = np.random.default_rng(50_000 + seed)
eps_grid = np.array([-0.9, -0.5, -0.2, 0.0, 0.2, 0.5, 0.9, 1.2])
E155 = np.zeros((len(eps_grid), 8))
E155[:, 0] = eps_grid
n_mc = 100 * P.n_init
p_mc = basin_event_mc(E155, n_mc, rng=rng155)[:, 0]
p_cf = eq155_probability(eps_grid, 8)
se = np.sqrt(np.maximum(p_cf * (1 - p_cf), 1 / n_mc) / n_mc)
c_155.measure(round(float((np.abs(p_mc - p_cf) / se).max()), 2))

eps_rand = rng155.uniform(-1, 1, size=(27, 8))
for j, gap in enumerate([0.1, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8]):  # designed top gaps, on both sides of 1
    eps_rand[20 + j, 0] = eps_rand[20 + j, 1:].max() + gap
p_rand = basin_event_mc(eps_rand, n_mc, rng=rng155)
se_r = np.sqrt(np.maximum(p_rand * (1 - p_rand), 1 / n_mc) / n_mc)
rows, top = np.arange(len(eps_rand)), eps_rand.argmax(1)
p_top, se_top, lb156 = p_rand[rows, top], se_r[rows, top], eq156_lower_bound(eps_rand)
viol156 = (lb156 - p_top) / se_top
gaps = 2 * lb156
eq156_diag = {
    "worst_small_gap": float(viol156[gaps <= 1].max()),
    "worst_capped": float(((np.minimum(gaps, 1) / 2 - p_top) / se_top).max()),
}
run.glue("eq156-worst-small-gap", round(eq156_diag["worst_small_gap"], 2))
run.glue("eq156-worst-capped", round(eq156_diag["worst_capped"], 2))
ub157 = eq157_upper_bound(eps_rand)
viol157 = np.where(np.isfinite(ub157), (p_rand - ub157) / se_r, -np.inf)
run.diagnostic("eq156-worst-small-gap", eq156_diag["worst_small_gap"])
run.diagnostic("eq156-worst-capped", eq156_diag["worst_capped"])
c_156.measure(round(float(viol156.max()), 2))
c_157.measure(round(float(viol157.max()), 2))

d_grid = [4, 8, 16, 32]
p_dyn = np.array(
    [modulated_basin_fractions(dd, [-0.5, 0.5], n_init=P.n_init, seed=60_000 + seed) for dd in d_grid]
)
c_pos.measure(round(float(p_dyn[-1, 1] / p_dyn[0, 1]), 3))
c_neg.measure(round(float(32 * p_dyn[-1, 0] / (4 * p_dyn[0, 0])), 3))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
ee = np.linspace(-0.95, 1.3, 200)
ax1.plot(ee, eq155_probability(ee, 8), "k", label="Eq. 155 ($d$ = 8)")
ax1.plot(eps_grid, p_mc, "o", label="Monte Carlo, $Y_l \\sim U[-1, 1]$")
ax1.set_xlabel(r"modulation factor $\epsilon_l$")
ax1.set_ylabel(r"$\mathbb{P}[E_l]$")
ax1.set_title("Eq. 155 within its model")
ax1.legend(fontsize="small")
for j, lab in enumerate(["$c = -0.5$", "$c = +0.5$"]):
    ax2.loglog(d_grid, p_dyn[:, j], "o-", label=lab)
ax2.loglog(d_grid, 1 / np.array(d_grid), "k:", label="$1/d$ (no modulation)")
ax2.set_xlabel("dimension $d$")
ax2.set_ylabel(r"$\mathbb{P}[\mathbf{w}\to\mathbf{u}_1]$ (normalized dynamics)")
ax2.set_title("Basin of the modulated pattern against $d$")
ax2.legend(fontsize="small")
plt.show()

# %% [markdown]
# Within its model Eq. 155 is the integral it claims to be. **Finding:** Eq. 156 is false when the gap
# $\epsilon_{c(1)} - \epsilon_{c(2)}$ exceeds 1: then $\mathbb{P}[E_{c(1)}] \le \mathbb{P}[Y_{c(1)} \ge 0] = 1/2$ while the bound asks for more. Its
# proof uses "positive modulation, $\mathbb{P} \ge \epsilon/2$", true only for $\epsilon \le 1$; the corrected bound
# $\min(\epsilon_{c(1)} - \epsilon_{c(2)}, 1)/2$ holds (largest violation {glue:text}`eq156-worst-capped` standard errors; among gaps
# $\le 1$, Eq. 156 itself: {glue:text}`eq156-worst-small-gap`). The right panel is the dynamics: the measured values of (c) and
# (d) are in the claims table.

# %% [markdown]
# ## Summary
#
# The closed-form two-layer dynamics of Lemma 4 agree with autograd to round-off; the linear
# network's filter gradients within an RF are exactly colinear and its swapped critical points
# are joined by critical paths, while a nonlinear network's are not (Theorem 4); the
# global-modulation formula of Theorem 5 matches autograd on a large sample of the
# conditional-independence model, with non-negative modulation; modulation enlarges the basin of
# the modulated pattern (Theorem 6); BatchNorm makes the effective RF variances uniform and removes
# the slowdown of weak RFs (App. D). The claims table below lists the measured values. On this task every critical point of
# the linear network computes a constant (one-hot tokens), so Theorem 4 (2)'s premise is met only by trivial networks.
#
# Lemma 5's decomposition holds up to sampling noise (the residual falls like $N^{-1/2}$: mean slope
# {glue:text}`lemma5-residual-rate:.2f`) and fails, as it should, when conditional independence is broken.
# Eq. 146 blows up at the $t^*$ of Eq. 150 (relative error {glue:text}`eq146-blowup-time:.1e`) and converges to
# $-b$ from negative starts; the rule "argmin $t^*$ wins" names the limit of the normalized dynamics in a
# fraction {glue:text}`thm6-winner-argmin-tstar:.2f` of the runs. Corollary 3's closed form with BatchNorm moments
# pooled over the batch matches the sample eigenvector (mean $|\cos|$ {glue:text}`cor3-part2-eigenvector:.4f`) and
# autograd (mean relative error {glue:text}`cor3-part3-dynamics:.3f`), and $\lambda^{bn} - d_k^{bn}$ varies by a factor
# {glue:text}`cor3-bn-not-slow:.2f` across RFs. With two views of different gain, Lemma 6 holds for $M = 3$ exactly when the
# BatchNorm moments are pooled over $2N$; Corollary 3 (2)-(3) fail with pooled moments, as the derivation predicts
# (mean $|\cos|$ {glue:text}`cor3-2view-part2:.3f`); the input scale slows no RF with BatchNorm, while the spread of speeds
# across RFs (claim `cor3-2view-bn-not-slow`) is set by the filters' discriminability. Eq. 155 is the integral it claims to
# be within its uniform model, Eq. 156 fails for gaps above 1, and the Remark's two $d$-dependence statements hold for the
# normalized dynamics; its $\epsilon_l$ has no definition in terms of the dynamics, so its numbers cannot be compared with
# them.
#
# **What's next.** {doc}`tian-tokens` trains these networks on the paper's token task and checks
# the consequences at the paper's scale.

# %%
run.finish()
