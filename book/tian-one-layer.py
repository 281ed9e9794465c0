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
# # One layer: nonlinearity creates local optima (Tian 2023, Sec. 3)
#
# **Overview.** For one layer $f_k = h(\mathbf{w}_k^\top\mathbf{x})$ with unit-norm filters the α-CL energy
# decouples over filters (Eq. 5), and each filter follows $\dot{\mathbf{w}} = P^\perp_\mathbf{w}A(\mathbf{w})\mathbf{w}$ with
# $A(\mathbf{w}) = \mathbb{C}_\alpha[\tilde{\mathbf{x}}^\mathbf{w}]$ (Lemma 3, checked in {doc}`tian-alpha-cl`). With linear $h$,
# $A$ is constant and every filter ends at its top eigenvector — one pattern. With a nonlinear
# homogeneous $h$, $A(\mathbf{w})$ depends on $\mathbf{w}$ and each *locally maximal eigenvector* (LME,
# Def. 3) is a candidate optimum, one per pattern. This chapter reproduces:
#
# 5. the closed forms of $A(\mathbf{u}_m)$ in the latent categorical and latent summation models
#    (Eqs. 8–9) and the LME threshold $q_m < (3-\sqrt5)/2$;
# 6. stability of LMEs when $\lambda_{\mathrm{gap}} > \rho$ (Theorem 1), the factor $z_0(\alpha_g)\le 1$ of
#    Corollary 2, and distinct optima under uniform vs Gaussian α;
# 7. power iteration on nearly orthogonal patterns (Theorem 3, Fig. 1 right);
# 8. more nodes, more patterns — for ReLU, not for linear (Sec. 3, 3.3);
# 9. rotation augmentation removes local optima that are not invariant (App. B.5), with a continuous
#    rotation group acting on data it does not leave invariant.
#
# The landscape on a circle (App. E.1, Fig. 8) is in {doc}`tian-fig8-landscape`.
#
# **Prerequisites.** {doc}`tian-alpha-cl` (Eq. 3, Lemmas 2–3); Tian 2023 Sec. 3, App. B.1, B.3–B.5.
#
# **Expected run time.** `ci` profile: about 2 minutes on a 2-core CPU; `full`: several minutes.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about two minutes) or "full" (larger samples, more initializations)
seed: int = 0  # base random seed (data, initializations)
device: str = "auto"  # "auto", "cpu" or "cuda" (this chapter computes on the CPU in float64)
activation: str = "relu"  # the nonlinear activation (one of nlcl.core.activations.ACTIVATIONS, homogeneous)
q: float = 0.2  # P[y_m > 0] of the latent summation model (Sec. 3.1)
n_patterns: int = 5  # number M of latent patterns u_m
dim: int = 8  # input dimension d, at least n_patterns
tau: float = 0.5  # temperature of the Gaussian α (Lemma 1, Corollary 2)
alpha: str = "uniform"  # α family for training filters in Sec. 8: "uniform" or "gaussian"
eps_list: list | None = None  # ‖UᵀU − I‖₂ values for Theorem 3; None takes [0, 0.05, 0.1, 0.2]
n_samples: int | None = None  # Monte Carlo samples for A(u_m) (Eqs. 8-9)
n_train: int | None = None  # training samples for counting optima and for K filters (Sec. 6, 8)
n_stab: int | None = None  # samples for the LME stability study of Theorem 1 (Sec. 6)
n_init: int | None = None  # random initializations for counting optima (Sec. 6)
k_max: int | None = None  # largest number of filters K (Sec. 8)
n_seeds: int | None = None  # independent seeds, vectorized (Sec. 8)
steps: int | None = None  # gradient-ascent steps of the dynamics
n_grid: int | None = None  # θ grid for the rotation-augmentation landscape (Sec. 9)
n_cases: int | None = None  # random latent-summation cases for Theorem 1's two-sided test (Sec. 6)
n_theory_seeds: int | None = None  # independent data seeds for the Theorem 2 bound (Sec. 6)
n_sphere: int | None = None  # polar rows of the sphere grid for App. B.5 with a continuous group (Sec. 9)

# %%
import nlcl

run = nlcl.start(
    "tian-one-layer",
    globals(),
    spec={
        "activation": {"choices": ["relu", "leaky_relu", "quadratic", "monomial"], "paper": "relu"},
        "q": {"range": [0.001, 0.999], "paper": 0.2},
        "n_patterns": {"range": [1, 1000]},
        "dim": {"range": ["n_patterns", 10_000]},
        "tau": {"range": [0.01, 100.0]},
        "alpha": {"choices": ["uniform", "gaussian"]},
        "eps_list": {"length": [1, 20], "items": {"type": "float", "range": [0.0, 0.999]}},
        "n_samples": {"range": [100, 100_000_000], "ci": 40000, "full": 400000},
        "n_train": {"range": [10, 1_000_000], "ci": 300, "full": 400},
        "n_stab": {"range": [10, 10_000_000], "ci": 2000, "full": 8000},
        "n_init": {"range": [1, 100_000], "ci": 32, "full": 96},
        "k_max": {"range": [1, 100_000], "ci": 32, "full": 64},
        "n_seeds": {"range": [1, 1000], "ci": 4, "full": 10},
        "steps": {"range": [1, 1_000_000], "ci": 200, "full": 400},
        "n_grid": {"range": [16, 10_000_000], "ci": 1440, "full": 7200},
        "n_cases": {"range": [2, 10_000], "ci": 12, "full": 25},
        "n_theory_seeds": {"range": [2, 1000], "ci": 3, "full": 5},
        "n_sphere": {"range": [8, 2000], "ci": 48, "full": 96},
    },
)
P = run.params

# %%
import matplotlib.pyplot as plt
import numpy as np
from scipy import optimize

from nlcl.core.activations import get_activation
from nlcl.harness.claims import (
    NotReproduced,
    Revision,
    at_least,
    at_most,
    between,
    check_on_mean,
    exactly,
    greater_than,
    holds_on_fraction,
    less_than,
    mean_plus_2se_below,
)
from nlcl.tian.augmentation import grid_strict_maxima, rotation_augmented_energy, sphere_grid
from nlcl.tian.contrastive import gaussian_alpha, stack_views
from nlcl.tian.landscape import (
    distinct_directions,
    eigengap,
    filter_energy,
    gate_matrix,
    is_lme,
    local_roughness,
    periodic_local_maxima,
    population_gate_matrix,
    power_iteration,
    train_filters,
)
from nlcl.tian.latent_data import (
    FIG8_ANGLES,
    latent_categorical,
    latent_summation,
    latent_summation_support,
    nearly_orthonormal_basis,
    points_on_circle,
    rotate_2d,
)
from nlcl.tian.local_theory import (
    critical_point_diagnostics,
    eq11_radius,
    eq11_sup_omega,
    gaussian_alpha_roughness,
    kappa_estimate,
    lipschitz_estimate,
    mixture_plane_density_max,
    perturbation_growth,
    roughness_jacobian,
    theorem2_bound,
)

eps_values = [0.0, 0.05, 0.1, 0.2] if P.eps_list is None else [float(e) for e in P.eps_list]
rng = np.random.default_rng(run.seed)
M, d, act = P.n_patterns, P.dim, P.activation
Q_STAR = (3 - np.sqrt(5)) / 2
paper_relu = run.at_paper("activation")  # Sec. 3.1 computes Eqs. 8-9 for ReLU

# %% [markdown]
# ## 5. Eqs. 8–9: $A(\mathbf{u}_m)$ in closed form, and the LME threshold
#
# **The result.** With orthonormal $U = [\mathbf{u}_1..\mathbf{u}_M]$, no augmentation, uniform α and ReLU
# (Sec. 3.1, App. B.1):
#
# * latent categorical, $\mathbf{x} = \mathbf{u}_y$: $A(\mathbf{u}_m) = p_m(1-p_m)\,\mathbf{u}_m\mathbf{u}_m^\top$ (Eq. 8), so every
#   $\mathbf{u}_m$ is an LME;
# * latent summation, $\mathbf{x} = U\mathbf{y}$ with standardized Bernoulli $y_m$ of $\Pr[y_m>0] = q_m$:
#   $A(\mathbf{u}_m) = (1-q_m)^2\mathbf{u}_m\mathbf{u}_m^\top + q_m(I - \mathbf{u}_m\mathbf{u}_m^\top)$ (Eq. 9; with $d > M$ the identity is
#   $UU^\top$, the identity on the span of the patterns, since $\mathbf{x}$ has no variance outside it), so $\mathbf{u}_m$ is an LME iff
#   $(1-q_m)^2 > q_m$, i.e. $q_m < (3-\sqrt5)/2 \approx 0.382$.
#
# **Prediction and tolerance.** (a) A Monte Carlo $A(\mathbf{u}_m)$ from `n_samples` samples matches
# Eq. 8 and Eq. 9 to relative Frobenius error $\le 5\%$ (the sampling error is $O(N^{-1/2})$, well
# below that at these sizes). (b) The exact $A(\mathbf{u}_m)$ obtained by enumerating all $2^M$ latent
# states matches Eq. 9 to $10^{-12}$. (c) Sweeping $q$, the numerically located LME threshold is
# within $\pm 0.01$ of $(3-\sqrt5)/2$. Required with ReLU (the paper's setting).

# %%
c_eq8 = run.expect(
    "eq8-categorical",
    source="Tian 2023, Eq. 8",
    statement="Monte Carlo A(u_m) in the latent categorical model vs p_m(1−p_m)u_m u_mᵀ: largest relative error.",
    check=at_most(0.05),
    paper="closed form",
    required=paper_relu,
)
c_eq9 = run.expect(
    "eq9-summation-mc",
    source="Tian 2023, Eq. 9",
    statement="Monte Carlo A(u_m) in the latent summation model vs Eq. 9: largest relative error.",
    check=at_most(0.05),
    paper="closed form",
    required=paper_relu,
)
c_eq9x = run.expect(
    "eq9-summation-exact",
    source="Tian 2023, Eq. 9 (App. B.1)",
    statement="Exact A(u_m) (all 2^M latent states) vs Eq. 9: largest absolute error.",
    check=at_most(1e-12),
    paper="closed form",
    required=paper_relu,
)
c_qstar = run.expect(
    "eq9-lme-threshold",
    source="Tian 2023, Sec. 3.1 (after Eq. 9)",
    statement="The largest q for which u_m is an LME (numerically located) — compared with (3 − √5)/2.",
    check=between(Q_STAR - 0.01, Q_STAR + 0.01),
    paper="(3 − √5)/2 ≈ 0.382",
    required=paper_relu,
)

# %%
U = nearly_orthonormal_basis(d, M, rng=rng)
outer = np.einsum("im,jm->mij", U, U)  # u_m u_mᵀ, (M, d, d)


def rel_err(a, b):
    return np.linalg.norm(a - b, axis=(-1, -2)) / np.linalg.norm(b, axis=(-1, -2))


probs_cat = rng.dirichlet(np.full(M, 4.0))
x_cat, _ = latent_categorical(P.n_samples, U, probs_cat, rng=rng)
a_cat = gate_matrix(stack_views(x_cat, x_cat), U.T, act)  # A(u_m) for all m at once
eq8 = (probs_cat * (1 - probs_cat))[:, None, None] * outer
x_sum, _ = latent_summation(P.n_samples, U, P.q, rng=rng)
a_sum = gate_matrix(stack_views(x_sum, x_sum), U.T, act)
eq9 = (1 - P.q) ** 2 * outer + P.q * (U @ U.T - outer)  # I of Eq. 9 = identity on span(U) when d > M
atoms, atom_p, _ = latent_summation_support(U, P.q)
a_exact = population_gate_matrix(atoms, atom_p, U.T, act)


def lme_margin(qv):
    """u_1's Rayleigh quotient minus the largest eigenvalue on its orthogonal complement (exact A)."""
    at, ap, _ = latent_summation_support(U, qv)
    a1 = population_gate_matrix(at, ap, U[:, 0], act)
    perp = np.eye(d) - np.outer(U[:, 0], U[:, 0])
    return U[:, 0] @ a1 @ U[:, 0] - np.linalg.eigvalsh(perp @ a1 @ perp)[-1]


q_grid = np.linspace(0.02, 0.9, 89)
lme_flags = np.array(
    [
        bool(
            is_lme(
                lambda w, qv=qv: population_gate_matrix(*latent_summation_support(U, qv)[:2], w, act),
                U[:, 0],
                tol=1e-9,
            )
        )
        for qv in q_grid
    ]
)
margins = np.array([lme_margin(qv) for qv in q_grid])
sign_change = np.nonzero(np.diff(np.sign(margins)))[0]
q_star = (
    float(optimize.brentq(lme_margin, q_grid[sign_change[0]], q_grid[sign_change[0] + 1], xtol=1e-12))
    if sign_change.size
    else float("nan")
)

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.6, height=3.6)
ax = axes[0, 0]
ax.plot(q_grid, (1 - q_grid) ** 2, label=r"$(1-q)^2$: eigenvalue of $\mathbf{u}_m$ (Eq. 9)")
ax.plot(q_grid, q_grid, label=r"$q$: eigenvalue on $\mathbf{u}_m^\perp$ (Eq. 9)")
ax.plot(q_grid, margins, "k.", ms=3, label="exact margin (enumeration)")
ax.axvline(Q_STAR, color="0.5", ls=":", label=r"$(3-\sqrt{5})/2$")
ax.axhline(0, color="0.7", lw=0.8)
ax.set_xlabel("$q_m = \\Pr[y_m > 0]$")
ax.set_ylabel("eigenvalue / margin")
ax.set_title(f"Latent summation, h = {act}: LME iff margin > 0")
ax.legend(fontsize="x-small")
ax = axes[0, 1]
ax.bar(np.arange(M) - 0.2, rel_err(a_cat, eq8), width=0.4, label="categorical (Eq. 8)")
ax.bar(np.arange(M) + 0.2, rel_err(a_sum, eq9), width=0.4, label="summation (Eq. 9)")
ax.set_xlabel("pattern $m$")
ax.set_ylabel(r"$\|A_{\mathrm{MC}}(\mathbf{u}_m) - A_{\mathrm{Eq}}\|_F / \|A_{\mathrm{Eq}}\|_F$")
ax.set_title(f"Monte Carlo, N = {P.n_samples}")
ax.legend(fontsize="small")
plt.show()

c_eq8.measure(float(rel_err(a_cat, eq8).max()))
c_eq9.measure(float(rel_err(a_sum, eq9).max()))
c_eq9x.measure(float(np.abs(a_exact - eq9).max()))
c_qstar.measure(q_star)
run.glue("eq9-lme-grid-consistent", bool(np.all(lme_flags == (margins > 0))))

# %% [markdown]
# ## 6. Stability of LMEs (Theorem 1) and the effect of α (Theorem 2, Corollary 2)
#
# **The result.** An LME $\mathbf{w}_*$ is stable if $\lambda_{\mathrm{gap}}(\mathbf{w}_*) > \rho(\mathbf{w}_*)$, where $\rho$ is
# the local roughness, $\|(A(\mathbf{v}) - A(\mathbf{w}))\mathbf{w}\| \le \rho\|\mathbf{v}-\mathbf{w}\| + O(\|\mathbf{v}-\mathbf{w}\|^2)$
# (Theorem 1). For ReLU the roughness is bounded by the adjusted data density on the plane
# $\mathbf{w}_*^\top\mathbf{x} = 0$ (Theorem 2), and the Gaussian $\alpha_g = e^{-(h(\mathbf{w}^\top\mathbf{x}_i)-h(\mathbf{w}^\top\mathbf{x}_j))^2/2\tau}$
# multiplies that bound by $z_0(\alpha_g) = \mathbb{E}[e^{-h^2(\mathbf{w}_*^\top\mathbf{x})/2\tau}] \le 1$ (Corollary 2), from which the
# paper concludes that Gaussian α (normalized: InfoNCE) keeps more optima than uniform α.
#
# **Setting.** Latent summation data plus isotropic noise of standard deviation 0.2 (so that
# data sit near every plane and $\rho > 0$), no augmentation. The stability study uses `n_stab`
# samples (ρ is a large-batch quantity); counting optima from random initializations with the
# Gaussian α, which costs $O(N^2)$ per filter and step, uses `n_train`. LMEs: power
# iteration from each $\mathbf{u}_m$ (uniform α). $\rho$ is estimated from 64 random tangent
# perturbations of size 0.02; stability is tested by perturbing each LME in 16 random
# directions by 0.1 rad and running the dynamics for `steps` steps.
#
# **Prediction and tolerance.** (a) Every LME with $\lambda_{\mathrm{gap}} > \rho$ is stable: all
# perturbations shrink below half their size (fraction $= 1$). (b) $z_0(\alpha_g) \le 1$ at every LME.
# (c) From `n_init` random initializations, Gaussian α reaches *more* distinct stable optima than
# uniform α on the same data (the difference is $> 0$: a tie would not be "more"; reported counts;
# required with ReLU, the paper's setting). A filter counts when it is alive (some sample on its
# active side) and moves less than 0.01 in 50 further steps; distinct optima are clusters at cosine 0.99.
# (d) Corollary 2 compares $r(\mathbf{w}_*, \alpha_g) = z_0\,r(\mathbf{w}_*, \alpha_u)$ at one critical point $\mathbf{w}_*$, and the
# roughness it bounds is that of the Gaussian-α dynamics, so $\mathbf{w}_*$ must be a critical point *of the
# Gaussian α*: we run the Gaussian-α dynamics (α re-evaluated at every step, stop-gradient; 300
# scale-free steps) from each LME of the `n_train` subsample and keep the points where
# $\|P^\perp_\mathbf{w}A_g(\mathbf{w})\mathbf{w}\| \le 10^{-3}\max|\lambda(A_g)|$ (critical points). There, with α held at $\mathbf{w}_*$ and
# the same 64 random directions for both α, the scale-free roughness $\rho/\lambda_1(A)$ (unchanged when α is rescaled) under Gaussian α is at most the
# same under uniform α (ratio of the means $\le 1$; our reading of Corollary 2, which bounds $\rho$ rather
# than computing it — not required). The perturbation radius is 0.02 or, where fewer than 5 samples lie
# within that angle of the plane $\mathbf{w}_*^\top\mathbf{x} = 0$, 1.5 times the angle of the 5th nearest: a sample's ReLU
# $A(\mathbf{w})$ is piecewise constant, so below the spacing of the data near the plane both ρ are exactly 0
# (found at base seed 1, where every Gaussian-α critical point had no sample within 0.02 of its plane and
# the ratio was 0/0; Theorem 2's ρ is an $N \to \infty$ quantity). $\lambda_1$ and not $\lambda_{\mathrm{gap}}$: Theorem 1's margin
# $\lambda_{\mathrm{gap}}$ is the stability margin of an LME only, and the Gaussian-α critical points need not be LMEs
# (tested in the Theorem 2 section).

# %%
c_stable = run.expect(
    "thm1-stable-lmes",
    source="Tian 2023, Theorem 1",
    statement="Fraction of (LME, perturbation) pairs with λ_gap > ρ whose perturbation decays under the dynamics.",
    check=exactly(1.0),
    paper="stable",
    required=True,
)
c_z0 = run.expect(
    "cor2-z0",
    kind="check",
    source="Tian 2023, Corollary 2",
    statement="z_0(α_g) = E[exp(−h²(w*ᵀx)/2τ)] at the LMEs (largest value).",
    check=at_most(1.0),
    paper="≤ 1",
)
c_count = run.expect(
    "cor2-gaussian-more-optima",
    source="Tian 2023, Sec. 3.2 (after Corollary 2), Sec. 5 (“more and deeper local optima”)",
    statement="Distinct stable optima from random inits: Gaussian α minus uniform α (same data, same inits).",
    check=greater_than(0),
    paper="Gaussian α > uniform α",
    required=paper_relu,
    revised=[
        Revision(
            "≥ 0",
            "> 0",
            "the paper says Gaussian α gives *more* optima; a tie (0) passed the old check without supporting "
            "that (issue 27). Tightened, not loosened: every recorded run measured 6–12",
            "2026-11-26",
        )
    ],
)
c_rough = run.expect(
    "cor2-roughness-ratio",
    source="Tian 2023, Theorem 2 / Corollary 2",
    statement="At the Gaussian-α critical points of the n_train subsample (found by the Gaussian-α dynamics, "
    "α held at w*): mean ρ/λ₁(A) with Gaussian α over the same with uniform α.",
    check=at_most(1.0),
    paper="bound ratio z_0 ≤ 1",
    required=False,
    revised=[
        Revision(
            "mean ρ/λ_gap with Gaussian α over uniform α at the uniform-α LMEs; not reproduced in ci "
            "(expected: ratio > 1)",
            "the same comparison at critical points of the Gaussian-α dynamics, scale-free by λ₁; no explanation",
            "at the uniform-α LMEs |cos(w*, φ₁(A_g(w*)))| was 0.001–0.067: they are not critical points of the "
            "Gaussian α, so the ratio said nothing about Corollary 2, which compares r at one w* (issue 27)",
            "2026-11-26",
        )
    ],
)

# %%
x6, _ = latent_summation(P.n_train, U, P.q, rng=rng)
x6 = x6 + 0.2 * rng.standard_normal(x6.shape)
v6 = stack_views(x6, x6)


def alpha_gauss(w):
    """Gaussian α of Corollary 2 at filter(s) w: g = h(wᵀx0) on the un-augmented samples."""
    return gaussian_alpha(get_activation(act)(w @ x6.T)[..., None], P.tau)


def a_uniform(w):
    return gate_matrix(v6, w, act)


def a_gaussian(w):
    return gate_matrix(v6, w, act, alpha_gauss)


# Theorem 1 study on its own, larger sample: ρ is a large-batch quantity (Theorem 2 takes N → ∞)
xs, _ = latent_summation(P.n_stab, U, P.q, rng=rng)
xs = xs + 0.2 * rng.standard_normal(xs.shape)
vs = stack_views(xs, xs)


def a_stab(w):
    return gate_matrix(vs, w, act)


w_star = power_iteration(a_stab, U.T, steps=200)[-1]
lme = is_lme(a_stab, w_star, tol=1e-6)
lam1, gap, _ = eigengap(a_stab(w_star))
rho_u = local_roughness(a_stab, w_star, radius=0.02, rng=rng)
z0 = np.exp(-(get_activation(act)(w_star @ xs.T) ** 2) / (2 * P.tau)).mean(-1)
# uniform vs Gaussian α on the first n_train samples (a Gaussian α is N×N per filter), at the critical
# points of the Gaussian-α dynamics started from the LMEs of this subsample
xr = xs[: P.n_train]
w_r = power_iteration(lambda w: gate_matrix(stack_views(xr, xr), w, act), w_star, steps=100)[-1]
g6 = gaussian_alpha_roughness(xr, act, P.tau, w_r, rng=rng)
ok6 = g6["settled"]
# the unnormalized α_g ≤ 1 also shrinks A(w) as a whole; ρ/λ₁ does not change when α is rescaled
rough6 = (
    float(np.mean((g6["rho_g"] / g6["lam1_g"])[ok6]) / np.mean((g6["rho_u"] / g6["lam1_u"])[ok6]))
    if ok6.any()
    else float("nan")
)
run.glue("cor2-raw-roughness-ratio", float(np.mean(g6["rho_g"][ok6]) / np.mean(g6["rho_u"][ok6])))
run.glue("cor2-n-critical", f"{int(ok6.sum())} of {len(ok6)}")

n_pert = 16
tangent = rng.standard_normal((n_pert,) + w_star.shape)
tangent -= (tangent * w_star).sum(-1, keepdims=True) * w_star
tangent /= np.linalg.norm(tangent, axis=-1, keepdims=True)
w_pert = np.cos(0.1) * w_star + np.sin(0.1) * tangent  # (n_pert, M, d)
w_back = train_filters(a_stab, w_pert, lr=0.5, steps=P.steps)
dist0 = np.linalg.norm(w_pert - w_star, axis=-1)
dist1 = np.linalg.norm(w_back - w_star, axis=-1)
decayed = dist1 < 0.5 * dist0
sufficient = lme & (gap > rho_u)
frac_stable = float(decayed[:, sufficient].mean()) if sufficient.any() else float("nan")

w_init = rng.standard_normal((P.n_init, d))
counts = {}
finals = {}
for fam, fn in (("uniform", a_uniform), ("gaussian", a_gaussian)):
    # scale_free: the Gaussian A is smaller overall; dividing the step by λ_1 changes time, not optima
    w_fin = train_filters(fn, w_init, lr=0.5, steps=P.steps, scale_free=True)
    w_more = train_filters(fn, w_fin, lr=0.5, steps=50, scale_free=True)
    settled = np.linalg.norm(w_more - w_fin, axis=-1) < 0.01  # stays put for 50 more steps: stable
    alive = filter_energy(v6, w_fin, act) > 1e-8  # dead filters (all data on the inactive side) excluded
    keep = alive & settled
    counts[fam] = distinct_directions(w_fin[keep], cos_tol=0.99)[0]
    finals[fam] = w_fin[keep]
    run.glue(f"cor2-settled-{fam}", int(keep.sum()))
run.glue("cor2-count-uniform", counts["uniform"])
run.glue("cor2-count-gaussian", counts["gaussian"])
run.glue("thm1-n-sufficient", int(sufficient.sum()))

fig, axes = nlcl.core.plotting.subplots(1, 3, width=3.7, height=3.4)
ax = axes[0, 0]
ax.scatter(rho_u, gap, c=["C2" if s else "C3" for s in sufficient])
lim = max(rho_u.max(), gap.max()) * 1.1
ax.plot([0, lim], [0, lim], "k--", lw=1, label=r"$\lambda_{\mathrm{gap}} = \rho$")
ax.set_xlabel(r"local roughness $\rho(\mathbf{w}_*)$")
ax.set_ylabel(r"$\lambda_{\mathrm{gap}}(\mathbf{w}_*)$")
ax.set_title("Theorem 1 at the LMEs")
ax.legend(fontsize="small")
ax = axes[0, 1]
ax.semilogy(np.arange(M), dist0.mean(0), "o", label="initial")
ax.semilogy(np.arange(M), dist1.max(0) + 1e-16, "s", label=f"after {P.steps} steps (max)")
ax.set_xlabel("LME near pattern $m$")
ax.set_ylabel(r"$\|\mathbf{w} - \mathbf{w}_*\|$")
ax.set_title("Perturbations decay")
ax.legend(fontsize="small")
ax = axes[0, 2]
ax.bar(["uniform α", "Gaussian α"], [counts["uniform"], counts["gaussian"]], color=["C0", "C1"])
ax.set_ylabel("distinct stable optima")
ax.set_title(f"{P.n_init} random initializations")
plt.show()

c_stable.measure(frac_stable)
c_z0.measure(float(z0.max()))
c_count.measure(int(counts["gaussian"] - counts["uniform"]))
c_rough.measure(rough6)

# %% [markdown]
# ### Theorem 2: the roughness bound, computed
#
# **The result.** For ReLU, inputs bounded by $\|\mathbf{x}\|_2 \le C_0$, an α with kernel structure and
# $N \to \infty$ (Theorem 2, Eq. 93):
#
# $$\rho(\mathbf{w}_*) \le \frac{C_0^3\,\mathrm{vol}(C_0)}{\pi}\, r(\mathbf{w}_*, \alpha),\qquad
# r(\mathbf{w}, \alpha) = \sum_l z_l^2(\alpha) \max_{\mathbf{w}^\top\mathbf{x}=0} \tilde p_l(\mathbf{x};\alpha).$$
#
# Every constant, for the data of this section (latent summation plus isotropic noise of std
# $\sigma = 0.2$): $p_D$ is the Gaussian mixture $\sum_{\mathbf{y}} \Pr[\mathbf{y}]\,\mathcal{N}(U\mathbf{y}, \sigma^2 I)$ over the $2^M$
# latent states; $C_0$ is the largest $\|\mathbf{x}\|_2$ of the sample (the noise is unbounded, so the bound is
# applied to the sample at hand); $\mathrm{vol}(C_0) = \pi^{d/2}C_0^d/\Gamma(d/2+1)$, the volume of the $d$-ball (Eq. 78);
# for uniform α, $r = \max_{\mathbf{w}_*^\top\mathbf{x}=0} p_D(\mathbf{x})$ (Eq. 95), found by mean-shift within the plane;
# for the Gaussian α of Corollary 2, $r(\alpha_g) = z_0(\alpha_g)\,r(\alpha_u)$ (Eq. 99). The measured $\rho$ is the
# estimate of Sec. 6 on `n_train` samples (α held at $\mathbf{w}_*$), at the LMEs found by power iteration.
#
# **The bound is not tested here, only computed.** Its hypotheses do not hold in this setting: the
# Gaussian noise is unbounded, so no $C_0$ bounds the population, and $C_0$ (the sample's largest norm)
# and the density (the population mixture's) describe different distributions. And it cannot fail
# at these sizes: $C_0^3\mathrm{vol}(C_0)/\pi$ grows like $C_0^{d+3}$ in $d = 8$ while $\max p_D$ on the plane is
# that of components of standard deviation 0.2, so the bound exceeds ρ by many orders of magnitude
# (the slack is printed below). (a) and (b) are therefore checks of our computation (kind *check*,
# $\rho/\text{bound} \le 1$ on every seed), not reproductions.
#
# **Corollary 2 at critical points of the Gaussian α.** Corollary 2 compares
# $r(\mathbf{w}_*, \alpha_g) = z_0(\alpha_g)\,r(\mathbf{w}_*, \alpha_u)$ at one critical point, and the LMEs of uniform α are not
# critical points of the Gaussian α (there $|\cos(\mathbf{w}_*, \phi_1(A_g(\mathbf{w}_*)))|$ ranges over
# {glue:text}`cor2-uniform-lme-top-cos` in this run). On each data seed we run the Gaussian-α dynamics (α re-evaluated at every step) from
# each uniform-α LME, keep the end points that are critical points ($\|P^\perp_\mathbf{w}A_g\mathbf{w}\| \le
# 10^{-3}\max|\lambda(A_g)|$), and there compare $\rho/\lambda_1(A)$ with α held at $\mathbf{w}_*$, Gaussian over uniform.
#
# **Prediction and tolerance.** Over `n_theory_seeds` independent data sets:
# (c) (a check of the method) at least half of the Gaussian-α runs end at a critical point, on every seed;
# (d) the scale-free roughness ratio, Gaussian over uniform, at those critical points is $\le 1$ (holds
# on ≥ 80% of seeds; the bound ratio $z_0 \le 1$; required with ReLU) — in this setting $z_0 \approx 0.8$, a
# small predicted effect;
# (e) Theorem 1 and the reading of Corollary 2 as "more stable optima" concern LMEs (Def. 3): the
# Gaussian-α critical points are LMEs of $A_g$, $|\cos(\mathbf{w}_*, \phi_1(A_g(\mathbf{w}_*)))| \ge 1 - 10^{-6}$, for a
# fraction $\ge 0.8$ of them (our reading, not required);
# (f) **the $z_0 \ll 1$ regime.** With latent summation data $\mathbf{x} = U\mathbf{y} + \mathbf{b} + $ noise shifted by
# $\mathbf{b} = \sum_m \mathbf{u}_m$ (most samples on the positive side of each filter near a pattern, the case the paper
# names after Corollary 2) and $\tau = 0.02$ (Gaussian-α dynamics from each $\mathbf{u}_m$, 600 steps), $z_0$ is
# far below 1 (its value is printed below), and Corollary 2 predicts a much smaller roughness under Gaussian α: the ratio of (d) is below 1 by more than the seed spread, mean + 2 s.e.
# over seeds $< 1$ (required with ReLU).

# %%
c_b2u = run.expect(
    "thm2-bound-uniform",
    kind="check",
    source="Tian 2023, Theorem 2 (Eq. 93, Eq. 95)",
    statement="Uniform α: largest ρ(w*) / (C₀³ vol(C₀)/π · r(w*, α_u)) over the LMEs, per data seed. Not a test of "
    "Theorem 2: its hypotheses fail here (unbounded noise; C₀ from the sample, density from the population) and "
    "the bound exceeds ρ by many orders of magnitude (the slack, glued thm2-slack, is printed in the text).",
    check=at_most(1.0),
    decide=holds_on_fraction(1.0),
    paper="ρ ≤ bound",
    revised=[
        Revision(
            "a required reproduction",
            "a check whose statement names the slack",
            "measured/bound was about 6e-9 (slack 10⁸) and the bound's hypotheses do not hold here, so the claim "
            "could not fail (issue 27)",
            "2026-11-26",
        )
    ],
)
c_b2g = run.expect(
    "thm2-bound-gaussian",
    kind="check",
    source="Tian 2023, Theorem 2 / Corollary 2 (Eq. 99)",
    statement="Gaussian α: largest ρ(w*) / (C₀³ vol(C₀)/π · z₀(α_g) r(w*, α_u)) over the LMEs, per data seed. Not a "
    "test: the same hypotheses fail and the same slack of many orders of magnitude as thm2-bound-uniform.",
    check=at_most(1.0),
    decide=holds_on_fraction(1.0),
    paper="ρ ≤ bound",
    revised=[
        Revision(
            "a required reproduction",
            "a check whose statement names the slack",
            "as thm2-bound-uniform: it could not fail (issue 27)",
            "2026-11-26",
        )
    ],
)
c_gcrit = run.expect(
    "cor2-gaussian-critical",
    kind="check",
    source="Tian 2023, Lemma 3 (critical points of Eq. 7 with the Gaussian α of Corollary 2)",
    statement="Fraction of Gaussian-α runs (from each uniform-α LME; in the z₀ ≪ 1 setting from each u_m) that "
    "end at a critical point (‖P⊥A_g(w)w‖ ≤ 1e-3 max|λ(A_g)|), the smaller of the two settings, per data seed "
    "(the comparisons are made at those points).",
    check=at_least(0.5),
    decide=holds_on_fraction(1.0),
    paper="(method)",
)
c_b2sf = run.expect(
    "thm2-alpha-scale-free",
    source="Tian 2023, Theorem 2 / Corollary 2 (Sec. 3.2)",
    statement="At the critical points of the Gaussian-α dynamics (α held at w*): mean ρ/λ₁(A) with Gaussian α over "
    "the same with uniform α, per data seed (holds on ≥ 80% of seeds).",
    check=at_most(1.0),
    decide=holds_on_fraction(0.8),
    paper="Gaussian α less rough (bound ratio z₀ ≤ 1)",
    required=paper_relu,
    revised=[
        Revision(
            "not reproduced in full only, expected mean < 1",
            "not reproduced in ci and full; expected: per-seed ratios on both sides of 1",
            "a ci sweep over base seeds 0–4 failed the claim at seeds 1–4 with run means 0.52–1.48, so the "
            "full-profile observation (spread larger than the effect) holds at ci size too, and the mean is "
            "not the explanation's content",
            "2026-11-25",
        ),
        Revision(
            "mean ρ/λ_gap, Gaussian α over uniform α, at the uniform-α LMEs; not reproduced (ratios on both "
            "sides of 1)",
            "mean ρ/λ₁, Gaussian α over uniform α, at the same critical points of the Gaussian-α dynamics; "
            "no explanation",
            "the uniform-α LMEs are not critical points of the Gaussian α (|cos(w*, φ₁(A_g))| 0.001–0.067), "
            "and Corollary 2 compares the two α at one critical point (issue 27); the tolerance is unchanged",
            "2026-11-26",
        ),
    ],
    not_reproduced=NotReproduced(
        "In this setting z₀ ≈ 0.8: the predicted effect is small. Corollary 2 bounds the unnormalized roughness, "
        "r(α_g) = z₀ r(α_u); the raw ratio ρ(α_g)/ρ(α_u) follows it, but the scale-free ratio also divides by "
        "λ₁(A_g)/λ₁(A_u), and the unnormalized α_g ≤ 1 shrinks λ₁ about as much as ρ, so on some data seeds the "
        "scale-free ratio exceeds 1. Observed before the first sweep, in a script repeating this loop at base "
        "seed 3: scale-free ratios 0.93, 0.84, 1.61 with raw ratios 0.45, 0.38, 0.24 (base seeds 0–2: all "
        "scale-free ratios 0.53–0.89). The explanation holds only if the raw ratio is below 1 on every data seed.",
        profiles=("ci", "full"),
        expected=lambda m: max(b2["raw"]) < 1.0,
        diagnostics=("thm2-raw-ratio-max",),
        evidence="glued thm2-raw-ratio-max; the per-seed values in the claims table",
    ),
)
c_glme = run.expect(
    "cor2-gaussian-cp-lme",
    source="Tian 2023, Def. 3 / Theorem 1 / Corollary 2 (our reading)",
    statement="Fraction of the Gaussian-α critical points (all data seeds) that are LMEs of A_g: "
    "|cos(w*, φ₁(A_g(w*)))| ≥ 1 − 1e-6.",
    check=at_least(0.8),
    paper="(Theorem 1's stability argument is about LMEs)",
    required=False,
    not_reproduced=NotReproduced(
        "Observed while building this claim (development runs, base seeds 0–3, τ = 0.5 and 0.05): the "
        "Gaussian-α dynamics settles at eigenvectors of A_g(w*) that are not the top one — |cos(w*, φ₁)| < 0.01, "
        "w* the eigenvector of the 5th largest eigenvalue. The Gaussian α evaluated at w down-weights the pairs "
        "that differ along w, which suppresses A_g's variance along w itself; the points are stable because α "
        "moves with w, which Theorem 1 (α held fixed) does not describe. The explanation holds only if every "
        "Gaussian-α critical point is an eigenvector of A_g (|cos| ≥ 0.999 with some φ_j) other than the top one.",
        profiles=("ci", "full"),
        expected=lambda m: bool(np.all(cp_eig_cos >= 0.999) and np.all(cp_rank >= 1)),
        evidence="the glued cor2-cp-ranks and cor2-cp-top-cos (Theorem 2 section)",
    ),
)
c_small = run.expect(
    "cor2-small-z0-roughness",
    source="Tian 2023, Corollary 2 (z₀ ≪ 1 ⇒ r(α_g) ≪ r(α_u)) and the remark after it",
    statement="Shifted data (b = Σ u_m), τ = 0.02: mean ρ/λ₁ with Gaussian α over uniform α at the Gaussian-α "
    "critical points, per data seed; mean + 2 s.e. over seeds below 1.",
    check=at_most(1.0),
    decide=mean_plus_2se_below(1.0),
    paper="z₀ ≪ 1 ⇒ Gaussian α much less rough",
    required=paper_relu,
)

# %%
NOISE6 = 0.2
atoms6, atom_p6, _ = latent_summation_support(U, P.q)
b2 = {
    k: [] for k in ("uniform", "gaussian", "scale_free", "raw", "slack", "z0", "settled", "small", "small_z0")
}
cp_rank, cp_eig_cos, cp_top_cos, uni_top_cos = [], [], [], []
OFFSET_Z0, TAU_Z0 = 1.0, 0.02  # the z₀ ≪ 1 setting (f)


def scale_free_ratio(g):
    """Mean ρ/λ₁ with Gaussian α over the same with uniform α, at the settled Gaussian-α critical points."""
    ok = g["settled"]
    if not ok.any():
        return float("nan")
    return float(np.mean((g["rho_g"] / g["lam1_g"])[ok]) / np.mean((g["rho_u"] / g["lam1_u"])[ok]))


for s_ in range(P.n_theory_seeds):
    rng_s = np.random.default_rng([run.seed, 2, s_])
    xb, _ = latent_summation(P.n_train, U, P.q, rng=rng_s)
    xb = xb + NOISE6 * rng_s.standard_normal(xb.shape)
    vb = stack_views(xb, xb)
    wb = power_iteration(lambda w: gate_matrix(vb, w, act), U.T, steps=100)[-1]
    lme_b = is_lme(lambda w: gate_matrix(vb, w, act), wb, tol=1e-6)
    ab = gaussian_alpha(get_activation(act)(wb @ xb.T)[..., None], P.tau)  # α_g held at w*
    rho_bu = local_roughness(lambda w: gate_matrix(vb, w, act), wb, radius=0.02, rng=rng_s)
    rho_bg = local_roughness(lambda w: gate_matrix(vb, w, act, ab), wb, radius=0.02, rng=rng_s)
    c0 = float(np.linalg.norm(xb, axis=1).max())
    r_u = np.array([mixture_plane_density_max(atoms6, atom_p6, NOISE6, w)[0] for w in wb])
    z0_b = np.exp(-(get_activation(act)(wb @ xb.T) ** 2) / (2 * P.tau)).mean(-1)
    bound_u = np.array([theorem2_bound(c0, d, r) for r in r_u])
    bound_g = z0_b * bound_u
    sel = lme_b if lme_b.any() else np.ones_like(lme_b)
    b2["uniform"].append(float((rho_bu / bound_u)[sel].max()))
    b2["gaussian"].append(float((rho_bg / bound_g)[sel].max()))
    uni_top_cos += list(  # how far the uniform-α LMEs are from being critical points of the Gaussian α
        critical_point_diagnostics(
            lambda w: gate_matrix(
                vb, w, act, lambda w_: gaussian_alpha(get_activation(act)(w_ @ xb.T)[..., None], P.tau)
            ),
            wb[sel],
        )["top_cos"]
    )
    gb = gaussian_alpha_roughness(xb, act, P.tau, wb, rng=rng_s)  # Corollary 2 at Gaussian-α critical points
    b2["settled"].append(float(gb["settled"].mean()))  # the small-z₀ setting's fraction is added below
    b2["scale_free"].append(scale_free_ratio(gb))
    b2["raw"].append(float(np.mean(gb["rho_g"][gb["settled"]]) / np.mean(gb["rho_u"][gb["settled"]])))
    cp_rank += list(gb["rank"][gb["settled"]])
    cp_eig_cos += list(gb["eig_cos"][gb["settled"]])
    cp_top_cos += list(gb["top_cos"][gb["settled"]])
    # (f) the z₀ ≪ 1 setting: the same kind of data shifted along Σ u_m, a small τ
    xz, _ = latent_summation(P.n_train, U, P.q, rng=rng_s)
    xz = xz + OFFSET_Z0 * U.sum(1) + NOISE6 * rng_s.standard_normal(xz.shape)
    gz = gaussian_alpha_roughness(xz, act, TAU_Z0, U.T, steps=600, rng=rng_s)  # from each u_m
    b2["small"].append(scale_free_ratio(gz))
    b2["settled"][-1] = min(b2["settled"][-1], float(gz["settled"].mean()))
    b2["small_z0"].append(float(gz["z0"][gz["settled"]].mean()) if gz["settled"].any() else float("nan"))
    b2["slack"].append(float((bound_u / np.maximum(rho_bu, 1e-300))[sel].min()))
    b2["z0"].append(float(gb["z0"][gb["settled"]].mean()) if gb["settled"].any() else float("nan"))
run.glue("thm2-c0", f"{c0:.2f}")
run.glue("thm2-slack", f"{min(b2['slack']):.1e}")
run.glue("thm2-z0-mean", f"{np.nanmean(b2['z0']):.3f}")
cp_rank, cp_eig_cos, cp_top_cos = np.array(cp_rank), np.array(cp_eig_cos), np.array(cp_top_cos)
run.glue("cor2-cp-ranks", ", ".join(f"{r}: {int((cp_rank == r).sum())}" for r in np.unique(cp_rank)))
run.glue("cor2-cp-top-cos", f"{cp_top_cos.max():.3f}" if cp_top_cos.size else "none")
run.glue("cor2-uniform-lme-top-cos", f"{min(uni_top_cos):.3f}–{max(uni_top_cos):.3f}")
run.glue("thm2-raw-ratio-max", f"{max(b2['raw']):.3f}")
run.glue("cor2-small-z0-mean", f"{np.nanmean(b2['small_z0']):.3f}")

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.4, height=3.4)
ax = axes[0, 0]
ax.semilogy(np.arange(P.n_theory_seeds), b2["uniform"], "o", label=r"uniform $\alpha$")
ax.semilogy(np.arange(P.n_theory_seeds), b2["gaussian"], "s", label=r"Gaussian $\alpha$")
ax.axhline(1, color="k", ls="--", lw=1, label="bound")
ax.set_xlabel("data seed")
ax.set_ylabel(r"$\max_{\mathbf{w}_*}\ \rho(\mathbf{w}_*)$ / Theorem 2 bound")
ax.set_title("Theorem 2 (Eq. 93)")
ax.legend(fontsize="small")
ax = axes[0, 1]
ax.plot(
    np.arange(P.n_theory_seeds),
    b2["scale_free"],
    "o",
    label=r"measured: $\overline{\rho/\lambda_1}$ ratio",
)
ax.plot(np.arange(P.n_theory_seeds), b2["z0"], "s", label=r"bound ratio $z_0(\alpha_g)$")
ax.plot(np.arange(P.n_theory_seeds), b2["small"], "^", label=r"measured, $z_0 \ll 1$ setting")
ax.plot(np.arange(P.n_theory_seeds), b2["small_z0"], "v", label=r"$z_0$, $z_0 \ll 1$ setting")
ax.axhline(1, color="k", ls="--", lw=1)
ax.set_yscale("log")
ax.set_xlabel("data seed")
ax.set_ylabel(r"Gaussian $\alpha$ / uniform $\alpha$")
ax.set_title("At Gaussian-α critical points")
ax.legend(fontsize="small")
plt.show()

c_b2u.measure_seeds(b2["uniform"])
c_b2g.measure_seeds(b2["gaussian"])
c_gcrit.measure_seeds(b2["settled"])
run.diagnostic("thm2-raw-ratio-max", float(max(b2["raw"])))
c_b2sf.measure_seeds(b2["scale_free"])
c_glme.measure(float((cp_top_cos >= 1 - 1e-6).mean()) if cp_top_cos.size else float("nan"))
c_small.measure_seeds(b2["small"])

# %% [markdown]
# The bound exceeds the measured ρ by a factor of at least {glue:text}`thm2-slack` (bound / ρ, smallest over LMEs
# and seeds; $C_0$ = {glue:text}`thm2-c0` on the last seed): the factor $C_0^3\mathrm{vol}(C_0)$ in $d$ = 8 dimensions and
# the maximum of a density with $\sigma = 0.2$ make it far from tight, so it does not explain which LMEs
# are stable, and the two bound claims are checks. A setting where the bound could fail would need a
# bounded support with the same distribution for $C_0$ and the density; with a density that is not
# concentrated (so that the slack is not astronomical) the ReLU patterns stop being LMEs, and we have not
# built one.
#
# At the Gaussian-α critical points ({glue:text}`cor2-n-critical` in Sec. 6; on every data seed here the fraction
# is the check `cor2-gaussian-critical`), $z_0(\alpha_g)$ averages {glue:text}`thm2-z0-mean` and the measured scale-free
# ratio is the claim `thm2-alpha-scale-free`; the raw ratio $\bar\rho(\alpha_g)/\bar\rho(\alpha_u)$, which is what the
# corollary's $r(\alpha_g) = z_0 r(\alpha_u)$ scales, is at most {glue:text}`thm2-raw-ratio-max` over the data seeds.
# With the shifted data and $\tau = 0.02$, $z_0$ averages
# {glue:text}`cor2-small-z0-mean` and the ratio is the claim `cor2-small-z0-roughness`. The Gaussian-α critical
# points are eigenvectors of $A_g(\mathbf{w}_*)$, with eigenvalue ranks (0 = top: an LME; rank: count)
# {glue:text}`cor2-cp-ranks` and largest $|\cos(\mathbf{w}_*, \phi_1(A_g(\mathbf{w}_*)))|$ = {glue:text}`cor2-cp-top-cos`: what
# the Gaussian α keeps are not LMEs in the sense of Def. 3, so Theorem 1's test $\lambda_{\mathrm{gap}} > \rho$,
# which Corollary 2's "fewer optima removed" relies on, does not apply to them.
#
# ### Theorem 1 on both sides of $\lambda_{\mathrm{gap}} = \rho$
#
# Theorem 1 is a sufficient condition, and every LME above has $\lambda_{\mathrm{gap}} > \rho$: that tests
# nothing against instability. A family in which both cases occur: the quadratic activation
# $h(x) = x^2$ (so $A(\mathbf{w})$ is smooth and $\rho$ is the norm of a derivative, computed by central
# differences) on the exact latent summation model ($2^M$ atoms, no sampling) with $M = 4$, $d = 6$, a
# nearly orthonormal $U$ ($\|U^\top U - I\|_2 = 0.1$) and per-pattern $q_m \sim \mathrm{U}[0.1, 0.27]$, `n_cases`
# random cases. For orthonormal $U$ one finds $A(\mathbf{u}_m) = \mathbb{V}[y_m^2]\mathbf{u}_m\mathbf{u}_m^\top + (I - \mathbf{u}_m\mathbf{u}_m^\top)$ on the span
# and $\rho(\mathbf{u}_m) = 1$, so $\mathbf{u}_m$ is an LME for $q_m < (5-\sqrt5)/10 \approx 0.276$ but has $\lambda_{\mathrm{gap}} > \rho$ only for
# $q_m < (3-\sqrt3)/6 \approx 0.211$: the range of $q_m$ straddles the condition. The critical point next to each
# $\mathbf{u}_m$ is found by root finding on $P^\perp_\mathbf{w}A(\mathbf{w})\mathbf{w} = 0$; it is perturbed by 0.01 rad in 4 random tangent
# directions and the dynamics (Eq. 7, step 0.5/λ₁) runs 300 steps: *stable* when every perturbation
# shrinks, *unstable* otherwise.
#
# **Prediction and tolerance.** (a) Theorem 1: every LME with $\lambda_{\mathrm{gap}} > \rho$ is stable
# (fraction $= 1$). (b) The test is discriminating (a check): at least 3 LMEs on each side. (c) Beyond
# the theorem (which does not claim the converse; Sec. 3.2 reads lower ρ as more optima): the LMEs
# with $\lambda_{\mathrm{gap}} \le \rho$ are unstable, fraction $\ge 0.9$ (not required).

# %%
c_t1s = run.expect(
    "thm1-two-sided-stable",
    source="Tian 2023, Theorem 1",
    statement="x², exact latent summation: fraction of LMEs with λ_gap > ρ whose perturbations all decay.",
    check=exactly(1.0),
    paper="stable",
    required=True,
)
c_t1d = run.expect(
    "thm1-two-sided-cases",
    kind="check",
    source="Tian 2023, Theorem 1",
    statement="Number of LMEs on the smaller side of λ_gap = ρ (the test is discriminating).",
    check=at_least(3),
    paper="(design)",
)
c_t1u = run.expect(
    "thm1-two-sided-unstable",
    source="Tian 2023, Sec. 3.2 (after Theorem 1)",
    statement="x², exact latent summation: fraction of LMEs with λ_gap ≤ ρ that are unstable.",
    check=at_least(0.9),
    paper="(converse not claimed)",
    required=False,
)

# %%
M1, d1 = 4, 6


def critical_point_near(a_fn, w0):
    """Root of P⊥_w A(w) w on the sphere, started at w0 (scipy.optimize.root)."""

    def resid(w):
        nrm = np.linalg.norm(w)
        u = w / nrm
        aw = a_fn(u) @ u
        return aw - (aw @ u) * u + (nrm - 1) * u

    sol = optimize.root(resid, w0, tol=1e-13)
    return sol.x / np.linalg.norm(sol.x)


t1 = []  # (case, m, q_m, is LME, λ_gap, ρ, largest growth)
for case in range(P.n_cases):
    rng_c = np.random.default_rng([run.seed, 1, case])
    q_c = rng_c.uniform(0.1, 0.27, M1)
    U_c = nearly_orthonormal_basis(d1, M1, 0.1, rng=rng_c)
    at_c, ap_c, _ = latent_summation_support(U_c, q_c)

    def a_c(w, at_c=at_c, ap_c=ap_c):
        return population_gate_matrix(at_c, ap_c, w, "quadratic")

    w_c = np.array([critical_point_near(a_c, U_c[:, m]) for m in range(M1)])
    lme_c = is_lme(a_c, w_c, tol=1e-6)
    gap_c = eigengap(a_c(w_c))[1]
    rho_c = roughness_jacobian(a_c, w_c)
    growth = perturbation_growth(a_c, w_c, angle=0.01, n_dirs=4, lr=0.5, steps=300, rng=rng_c).max(0)
    t1 += [(case, m, q_c[m], bool(lme_c[m]), gap_c[m], rho_c[m], growth[m]) for m in range(M1)]
t1 = np.array(t1, dtype=float)
is_l, above, stable = t1[:, 3] > 0, t1[:, 4] > t1[:, 5], t1[:, 6] < 1
counts_t1 = {
    (a, s): int((is_l & (above == a) & (stable == s)).sum()) for a in (True, False) for s in (True, False)
}
print(
    "LMEs: λ_gap > ρ: stable",
    counts_t1[True, True],
    "unstable",
    counts_t1[True, False],
    "| λ_gap ≤ ρ: stable",
    counts_t1[False, True],
    "unstable",
    counts_t1[False, False],
    "| critical points that are not LMEs:",
    int((~is_l).sum()),
    "(unstable:",
    int((~is_l & ~stable).sum()),
    ")",
)
run.glue("thm1-two-sided-n", int(is_l.sum()))

fig, ax = plt.subplots(figsize=(5.4, 4.0))
for sel, mk, lab in (
    (is_l & stable, "o", "LME, perturbations decay"),
    (is_l & ~stable, "x", "LME, perturbations grow"),
    (~is_l, "^", "critical point, not an LME"),
):
    ax.scatter(t1[sel, 5], t1[sel, 4], marker=mk, label=lab)
lim = max(t1[:, 4].max(), t1[:, 5].max()) * 1.05
ax.plot([0, lim], [0, lim], "k--", lw=1, label=r"$\lambda_{\mathrm{gap}} = \rho$")
ax.set_xlabel(r"local roughness $\rho(\mathbf{w}_*)$")
ax.set_ylabel(r"$\lambda_{\mathrm{gap}}(\mathbf{w}_*)$")
ax.set_yscale("symlog", linthresh=0.1)
ax.set_title(rf"Theorem 1, $h(x) = x^2$: {P.n_cases} cases × {M1} patterns")
ax.legend(fontsize="x-small")
plt.show()

n_above = counts_t1[True, True] + counts_t1[True, False]
n_below = counts_t1[False, True] + counts_t1[False, False]
c_t1s.measure(counts_t1[True, True] / n_above if n_above else float("nan"))
c_t1d.measure(min(n_above, n_below))
c_t1u.measure(counts_t1[False, False] / n_below if n_below else float("nan"))

# %% [markdown]
# ## 7. Theorem 3 and Fig. 1 (right): power iteration on nearly orthogonal patterns
#
# **The result.** If $U$ is only nearly orthonormal, $\|U^\top U - I\|_2 = \varepsilon > 0$, the $\mathbf{u}_m$ are no
# longer exact LMEs, but power iteration (Eq. PI) started at $\mathbf{w}(0) = \mathbf{u}_m$ still converges to a
# critical point $\mathbf{w}_*$ in a neighbourhood $B_\gamma$ of $\mathbf{u}_m$ when the irregularity is small (Theorem 3).
#
# **Prediction and tolerance.** In the latent summation model (exact $A$ by enumeration, $q$ as set)
# for each $\varepsilon$ in `eps_list`: (a) the step $\|\mathbf{w}(t+1)-\mathbf{w}(t)\|$ falls below $10^{-10}$ within 200
# iterations for every $m$ (convergence); (b) the fixed point stays close to its pattern,
# $1 - \cos(\mathbf{w}_*, \mathbf{u}_m) \le \varepsilon$ (a bound we declare: the perturbation of $A$ is $O(\varepsilon)$, so the
# angle is $O(\varepsilon)$ and $1-\cos = O(\varepsilon^2)$). **Both are outside Theorem 3's hypothesis** and
# informational (not required): with ReLU on discrete data $A(\mathbf{w})$ jumps, $L = \infty$ and Eq. 11
# cannot hold (next subsection); the theorem says nothing here, so neither outcome confirms or contradicts
# it. Theorem 3 itself is tested where Eq. 11 holds, at the end of this section.

# %%
c_pi_conv = run.expect(
    "thm3-pi-converges",
    source="Tian 2023, Theorem 3 / Fig. 1 (right)",
    statement="Outside Theorem 3's hypothesis (L = ∞ with ReLU on discrete data; informational): largest final PI "
    "step ‖w(t+1) − w(t)‖ after 200 iterations, over m and ε.",
    check=at_most(1e-10),
    paper="converges (where Eq. 11 holds)",
    required=False,
    revised=[
        Revision(
            "required when q < (3−√5)/2 − 0.05 and ε ≤ 0.2",
            "informational (required=False), labelled outside the hypothesis",
            "Eq. 11 holds in none of these cases (L = ∞ for ReLU on discrete data), so the claim cannot test "
            "Theorem 3; the theorem is tested where Eq. 11 holds (thm3-converges-where-eq11) (issue 27)",
            "2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "Theorem 3 assumes A(w) Lipschitz (constant L); with the discrete latent-summation data and ReLU, A(w) "
        "is piecewise constant and jumps when a data atom crosses the plane wᵀx = 0, so L is infinite. "
        "Evidence: in the seed-0 ci run, at ε = 0.2 one pattern's iteration settles into a 2-cycle with a "
        "constant step of about 8e-3 while an atom sits at |wᵀx| ≈ 0.009 from the plane; the other "
        "patterns and all smaller ε converge to round-off, and the cycle stays next to u_m "
        "(claim thm3-fixed-point-near-um). The first full-profile run (commit 5807e9a) shows the same: "
        "largest final step 7.9e-3.",
        profiles=("ci", "full"),
        expected=lambda m: m < 0.05,  # a small 2-cycle, not a divergence
        evidence="claim thm3-fixed-point-near-um and the power-iteration figure of Sec. 7",
    ),
)
c_pi_close = run.expect(
    "thm3-fixed-point-near-um",
    source="Tian 2023, Theorem 3",
    statement="Outside Theorem 3's hypothesis (informational): largest (1 − cos(w*, u_m)) / ε over m and ε > 0 "
    "(fixed point within the declared O(ε) bound).",
    check=at_most(1.0),
    paper="w* ∈ B_γ near u_m",
    required=False,
    revised=[
        Revision(
            "required when q < (3−√5)/2 − 0.05 and ε ≤ 0.2",
            "informational (required=False), labelled outside the hypothesis",
            "as thm3-pi-converges: Eq. 11 does not hold for ReLU on discrete data (issue 27)",
            "2026-11-26",
        )
    ],
)

# %%
pi_steps = 200
fig, ax = plt.subplots(figsize=(5.6, 3.8))
final_step, closeness = [], []
for k, e in enumerate(eps_values):
    U_e = nearly_orthonormal_basis(d, M, e, rng=np.random.default_rng(run.seed + 100 + k))
    at, ap, _ = latent_summation_support(U_e, P.q)
    traj = power_iteration(lambda w: population_gate_matrix(at, ap, w, act), U_e.T, steps=pi_steps)
    step = np.linalg.norm(np.diff(traj, axis=0), axis=-1)  # (steps, M)
    final_step.append(step[-1].max())
    cos_m = np.abs((traj[-1] * U_e.T).sum(-1))
    if e > 0:
        closeness.append(((1 - cos_m) / e).max())
    ax.semilogy(
        np.arange(1, pi_steps + 1), step.max(-1) + 1e-18, label=rf"$\varepsilon$ = {e:g} (max over m)"
    )
ax.set_xlabel("iteration $t$")
ax.set_ylabel(r"$\|\mathbf{w}(t+1) - \mathbf{w}(t)\|_2$")
ax.set_title(rf"Power iteration from $\mathbf{{u}}_m$, latent summation, $q$ = {P.q}")
ax.set_ylim(1e-18, 2)
ax.legend(fontsize="small")
plt.show()

c_pi_conv.measure(float(max(final_step)))
c_pi_close.measure(float(max(closeness)) if closeness else float("nan"))

# %% [markdown]
# ### Theorem 3's hypothesis: the irregularity ω and Eq. 11
#
# Theorem 3 needs $\sup_{\mathbf{w}\in B_\gamma}\omega(\mathbf{w}) \le \gamma < 1$ (Eq. 11), with
# $\omega = \mu + 2\kappa L^2(1+\mu c) + 2L\lambda_{\mathrm{gap}}^{-1}\sqrt{\mu(1+\mu c)}$ and
# $\mu = \tfrac12(1+c)c^{-2}(1-\lambda_{\mathrm{gap}}/\lambda_1)^2$ (Def. 4, Eq. 10), $L$ the Lipschitz constant of
# $A(\mathbf{w})$ on the sphere and $\kappa$ the eigenvector bound of Lemma 9. For the ReLU data above
# $A(\mathbf{w})$ is piecewise constant and jumps when an atom crosses the plane $\mathbf{w}^\top\mathbf{x} = 0$, so
# $L = \infty$, $\omega = \infty$ and Eq. 11 never holds: Theorem 3 says nothing about the power
# iteration of the figure above (the 2-cycle noted at `thm3-pi-converges` is not a counterexample).
# The closest faithful version with finite $L$ is the same latent summation data ($q$ as set, the same
# $U$ for each ε) with the smooth $h(x) = x^2$. $L$ is estimated as the largest
# $\|A(\mathbf{w}) - A(\mathbf{w}')\|_2/\|\mathbf{w}-\mathbf{w}'\|$ over 256 random pairs at distance $10^{-4}$ on the sphere, $\kappa$ as the
# largest ratio of Eq. 191 over 64 pairs within 0.05 rad of the patterns; $\omega$ uses the shifted
# positive definite $\hat A$ of Eq. 104 (same eigenvectors and gaps). For each pattern and each γ of a grid
# in (0, 1), $B_\gamma$ (Eq. 103) is sampled with 32 points. Both estimates are lower bounds of the true
# sup, so a failure of Eq. 11 found this way is conclusive.
#
# **Prediction and tolerance.** Sec. 3.3: "for the two cases in Sec. 3.1, if $U$ is only approximately
# orthogonal ... Theorem 3 tells that multiple local optima close to $\mathbf{u}_m$ still exist": Eq. 11 holds
# for some $\gamma < 1$ in every case (ε ∈ `eps_list`, every $m$), fraction $= 1$. Where it fails we report
# whether power iteration (1000 steps) converges anyway (step $< 10^{-8}$).

# %%
c_eq11 = run.expect(
    "thm3-eq11-holds",
    source="Tian 2023, Theorem 3 / Eq. 11 (Def. 4, Eq. 10)",
    statement="x², latent summation: fraction of (ε, m) with sup_{B_γ} ω ≤ γ for some γ < 1 (L, κ estimated).",
    check=at_least(1.0),
    paper="Eq. 11 holds for approximately orthogonal U",
    required=True,
    revised=[
        Revision(
            from_="explanation predicts fraction < 0.5",
            to="explanation predicts fraction < 0.5 and Eq. 11 fails at ε = 0 (excess > 0), diagnostic "
            "thm3-eq11-margin-eps0",
            reason="issue 26: an explanation of a required claim must predict something narrower than its failure",
            date="2026-11-26",
        )
    ],
    not_reproduced=NotReproduced(
        "Observed in the first ci run of this claim: Eq. 11 fails in every case, even at ε = 0 where u_m is "
        "an exact LME (c = 1): there the excess sup ω − γ is about 3.5 at the best γ, because the global "
        "constants enter as 2κL² + 2L/λ_gap·√(μ(1+μ)) with L ≈ 2 (of the order of λ_gap = 1.25) and κ ≈ 0.3, "
        "which alone exceed 1. Power iteration converged in all 20 cases anyway: the printed condition is "
        "sufficient and far from necessary, not a description of when the iteration works. The computation "
        "uses no profile size (exact enumeration), so it is the same in the full profile. The explanation "
        "holds only if Eq. 11 fails for every m at ε = 0 (smallest excess min_γ(sup ω − γ) over m > 0; the "
        "smallest ε of eps_list if 0 is not among them) and in most cases overall (fraction < 0.5).",
        profiles=("ci", "full"),
        expected=lambda m: m < 0.5 and eq11_margin_eps0 > 0,
        diagnostics=("thm3-eq11-margin-eps0",),
        evidence="the table of L, κ and min_γ(sup ω − γ) printed under the Eq. 11 cell; glued thm3-eq11-margin-min",
    ),
)

# %%
gammas11 = np.linspace(0.05, 0.95, 19)
eq11_rows = []
for k, e in enumerate(eps_values):
    U_e = nearly_orthonormal_basis(d, M, e, rng=np.random.default_rng(run.seed + 100 + k))  # Sec. 7's U
    at, ap, _ = latent_summation_support(U_e, P.q)

    def a_quad(w, at=at, ap=ap):
        return population_gate_matrix(at, ap, w, "quadratic")

    rng_e = np.random.default_rng([run.seed, 3, k])
    L_e = lipschitz_estimate(a_quad, n_points=256, dim=d, radius=1e-4, rng=rng_e)
    kap_e = kappa_estimate(a_quad, U_e.T, radius=0.05, n_pairs=64, rng=rng_e)
    traj = power_iteration(a_quad, U_e.T, steps=1000)
    step = np.linalg.norm(traj[-1] - traj[-2], axis=-1)
    for m in range(M):
        sup_om = eq11_sup_omega(a_quad, U_e[:, m], gammas11, L_e, kap_e, n_points=32, rng=rng_e)
        eq11_rows.append((e, m, L_e, kap_e, float((sup_om - gammas11).min()), step[m]))
eq11_rows = np.array(eq11_rows)
holds11 = eq11_rows[:, 4] <= 0
conv11 = eq11_rows[:, 5] < 1e-8
print("ε      L      κ     min_γ(sup ω − γ) over m   PI converged (of M)")
for e in eps_values:
    r = eq11_rows[eq11_rows[:, 0] == e]
    print(
        f"{e:<5g} {r[0, 2]:6.2f} {r[0, 3]:6.3f}   {r[:, 4].min():8.2f} … {r[:, 4].max():6.2f}          {int((r[:, 5] < 1e-8).sum())}"
    )
run.glue("thm3-eq11-margin-min", f"{eq11_rows[:, 4].min():.2f}")
run.glue("thm3-eq11-n-fail", int((~holds11).sum()))
run.glue("thm3-eq11-fail-converged", int((~holds11 & conv11).sum()))
run.glue("thm3-eq11-n-hold", int(holds11.sum()))
run.glue("thm3-eq11-hold-converged", int((holds11 & conv11).sum()))
# the explanation's prediction: the global constants alone break Eq. 11 even where u_m is an exact LME (ε = 0)
eq11_margin_eps0 = float(eq11_rows[eq11_rows[:, 0] == min(eps_values), 4].min())
run.diagnostic("thm3-eq11-margin-eps0", eq11_margin_eps0)
c_eq11.measure(float(holds11.mean()))

# %% [markdown]
# Eq. 11 holds in {glue:text}`thm3-eq11-n-hold` cases (power iteration converged in
# {glue:text}`thm3-eq11-hold-converged` of them); it fails in {glue:text}`thm3-eq11-n-fail`, where the smallest
# excess $\sup\omega - \gamma$ is {glue:text}`thm3-eq11-margin-min`. Where it fails, power iteration still converged
# in {glue:text}`thm3-eq11-fail-converged` cases: the condition is sufficient and, with a global $L$ and
# $\kappa$ entering as $2\kappa L^2$ and $2L/\lambda_{\mathrm{gap}}$, far from necessary.
#
# ### Theorem 3 where Eq. 11 holds
#
# Eq. 11 needs $L$ and $\kappa L^2$ small against $\lambda_{\mathrm{gap}}$, and $\mu$ small: $c_0$ close to 1 and
# $\lambda_2/\lambda_1$ small. A smooth activation close to linear gives that: $h = \tanh$ on small inputs, with
# $A(\mathbf{w}) = \mathbb{V}[\mathbf{x}\,h'(\mathbf{w}^\top\mathbf{x})]$ (the paper's $\tilde{\mathbf{x}}^\mathbf{w}$; Theorem 3 is a statement about the power
# iteration on a Lipschitz $A(\mathbf{w})$ and does not use homogeneity), on the exact latent summation model
# ($q$ as set, the $U$ of each ε above) with one strong pattern, $\mathbf{x} = 0.3\,U\operatorname{diag}(1, 0.2, \ldots, 0.2)\mathbf{y}$.
# For each $(\varepsilon, m)$, $L$, $\kappa$ and $\sup_{B_\gamma}\omega$ are estimated as above, and the smallest γ of the grid
# with $\sup\omega \le \gamma$ (if any) fixes $B_\gamma$. (The sampled sup is a lower estimate, so "Eq. 11 holds" is
# itself an estimate; we say so rather than claim it proven.)
#
# **Prediction and tolerance.** (a) Design check: Eq. 11 holds in at least one case per ε. (b) Theorem 3:
# in every case where it holds, power iteration from $\mathbf{u}_m$ (1000 steps) converges (final step
# $\le 10^{-10}$) to a critical point ($\|P^\perp_\mathbf{w}A\mathbf{w}\| \le 10^{-8}\lambda_1$) inside $B_\gamma$ (Eq. 103, to round-off
# $10^{-12}$: at ε = 0, $c_0 = 1$ and $B_\gamma$ is the single point $\mathbf{u}_m$): fraction $= 1$, required.

# %%
c_t3n = run.expect(
    "thm3-eq11-positive-cases",
    kind="check",
    source="Tian 2023, Theorem 3 / Eq. 11",
    statement="tanh on small inputs: smallest over ε of the number of patterns m for which Eq. 11 holds "
    "(sampled sup ω ≤ γ for some γ of the grid).",
    check=at_least(1),
    paper="(design: the hypothesis is met somewhere)",
)
c_t3c = run.expect(
    "thm3-converges-where-eq11",
    source="Tian 2023, Theorem 3",
    statement="tanh on small inputs: fraction of the (ε, m) with Eq. 11 for which power iteration from u_m "
    "converges (final step ≤ 1e-10) to a critical point (‖P⊥A w‖ ≤ 1e-8 λ₁) inside B_γ.",
    check=exactly(1.0),
    paper="PI converges to a critical point w* ∈ B_γ",
    required=True,
)

# %%
strength3 = 0.3 * np.r_[1.0, np.full(M - 1, 0.2)]
t3 = []  # (ε, m, holds, converged into B_γ as a critical point)
for k, e in enumerate(eps_values):
    U_e = nearly_orthonormal_basis(d, M, e, rng=np.random.default_rng(run.seed + 100 + k))  # Sec. 7's U
    _, ap, y_at = latent_summation_support(U_e, P.q)
    at3 = (y_at * strength3) @ U_e.T

    def a_tanh(w, at3=at3, ap=ap):
        return population_gate_matrix(at3, ap, w, "tanh")

    rng_e = np.random.default_rng([run.seed, 4, k])
    L_e = lipschitz_estimate(a_tanh, n_points=256, dim=d, radius=1e-4, rng=rng_e)
    kap_e = kappa_estimate(a_tanh, U_e.T, radius=0.05, n_pairs=64, rng=rng_e)
    traj = power_iteration(a_tanh, U_e.T, steps=1000)
    step = np.linalg.norm(traj[-1] - traj[-2], axis=-1)
    diag_end = critical_point_diagnostics(a_tanh, traj[-1])
    c0_e = critical_point_diagnostics(a_tanh, U_e.T)["top_cos"]
    for m in range(M):
        sup_om = eq11_sup_omega(a_tanh, U_e[:, m], gammas11, L_e, kap_e, n_points=32, rng=rng_e)
        ok_g = gammas11[sup_om <= gammas11]
        dist = np.linalg.norm(traj[-1, m] - U_e[:, m])  # B_γ of Eq. 103, to round-off (at ε = 0 it is {u_m})
        inside = bool(ok_g.size) and dist <= eq11_radius(ok_g[0], c0_e[m]) + 1e-12
        conv = step[m] <= 1e-10 and diag_end["residual"][m] <= 1e-8
        t3.append((e, m, bool(ok_g.size), bool(inside and conv)))
t3 = np.array(t3, dtype=float)
holds3 = t3[:, 2] > 0
run.glue("thm3-tanh-n-hold", f"{int(holds3.sum())} of {len(t3)}")
run.glue(
    "thm3-tanh-hold-m",
    ", ".join(
        f"ε = {e:g}: m ∈ {{{', '.join(str(int(m) + 1) for m in t3[(t3[:, 0] == e) & holds3, 1])}}}"
        for e in eps_values
    ),
)
c_t3n.measure(int(min(holds3[t3[:, 0] == e].sum() for e in eps_values)))
c_t3c.measure(float(t3[holds3, 3].mean()) if holds3.any() else float("nan"))

# %% [markdown]
# Eq. 11 holds in {glue:text}`thm3-tanh-n-hold` cases ({glue:text}`thm3-tanh-hold-m`): the strong pattern, whose
# $c_0$ is close to 1 and whose $\lambda_2/\lambda_1$ is small. For the weak patterns $c_0 = |\mathbf{u}_m^\top\phi_1(\mathbf{u}_m)|$ is
# small, $\mu \propto c_0^{-2}$ is large and the theorem gives nothing — as it should: near-linear $h$ has
# essentially one critical point, the top principal direction (Sec. 8).

# %% [markdown]
# ## 8. More nodes, more patterns
#
# **The result.** Filters evolve independently (Eq. 5), so $K$ filters from $K$ random
# initializations sample the basins of the landscape. With linear $h$ there is one optimum (up to
# sign), the top principal direction, whatever $K$ is; with a nonlinear $h$ each pattern has its own
# LME, and more filters collect more of them (Sec. 3, Sec. 3.3, Fig. 1 left).
#
# **Setting.** Latent summation with pattern strengths $s_m$ from 1 down to 0.6,
# $\mathbf{x} = U\operatorname{diag}(s)\mathbf{y}$ (so the data covariance has a unique top direction $\mathbf{u}_1$), `n_train`
# samples, the chosen α family, `k_max` filters per seed and `n_seeds` seeds trained at once; the
# first $K$ filters of a run form the $K$-filter network. A pattern is recovered when some filter
# has $|\cos(\mathbf{w}_k, \mathbf{u}_m)| \ge 0.95$.
#
# **Prediction and tolerance.** (a) Linear: one optimum, the top principal direction $\mathbf{v}_1$ of the
# training sample (the top eigenvector of the constant matrix $\mathbb{C}_\alpha[\mathbf{x}]$): every filter, for every
# $K$ and seed, ends with $|\cos(\mathbf{w}_k, \mathbf{v}_1)| \ge 0.95$, so at most one pattern is recovered
# (required with uniform α, where $\mathbb{C}_\alpha[\mathbf{x}]$ is a constant matrix; a Gaussian α that depends on
# $\mathbf{w}$ breaks that argument). In the population $\mathbf{v}_1 = \mathbf{u}_1$; in a sample of `n_train`
# points with $s_2/s_1 = 0.9$ it can tilt away from $\mathbf{u}_1$ (until 2026-11-25 the claim counted patterns
# $\mathbf{u}_m$ recovered, which failed at base seed 3 where the tilted $\mathbf{v}_1$ matches no pattern; the
# revision is recorded in the claim). The prediction is about the optimum, which a run reaches only
# if it is long enough for the sample's eigengap: found after the revision, at base seed 2 the
# relative eigengap is 0.057 and `steps` steps leave the filters between $\mathbf{v}_1$ and $\mathbf{v}_2$. The
# claim's not-reproduced explanation covers exactly that case (every filter in
# $\operatorname{span}(\mathbf{v}_1, \mathbf{v}_2)$ and a predicted decay $e^{-\eta(\lambda_1-\lambda_2)\,\text{steps}} \ge 10^{-3}$,
# both computed in the run and shown in the summary); any other failure fails the claim.
# (b) Nonlinear: at $K$ = `k_max`, at least $M-1$ patterns recovered on average over seeds (all $M$
# are LMEs here: $s_m^2(1-q)^2 > q$); (c) more than with $K = 1$. Required with ReLU at $q = 0.2$.

# %%
paper8 = run.at_paper("activation", "q")
c_lin = run.expect(
    "nodes-linear-one-pattern",
    source="Tian 2023, Sec. 3 (linear case), Fig. 1 (b)",
    statement="Linear h: smallest |cos| between a trained linear filter (any K, any seed) and the top "
    "principal direction v₁ of the training sample (top eigenvector of the constant C_α[x]).",
    check=at_least(0.95),
    paper="1 optimum (top PCA direction)",
    required=P.alpha == "uniform",
    revised=[
        Revision(
            "largest number of patterns u_m recovered (|cos| ≥ 0.95) over K and seeds = 1",
            "smallest |cos(w_k, v₁)| over linear filters and seeds ≥ 0.95, v₁ the sample's top principal "
            "direction (the patterns recovered stay in the figure and the text)",
            "the paper's statement is one optimum, the top principal direction, which equals u₁ only in the "
            "population; a ci sweep over base seeds 0–4 measured 0 patterns at seed 3, whose training sample "
            "has a top principal direction away from every u_m",
            "2026-11-25",
        ),
        Revision(
            "no not-reproduced explanation",
            "not reproduced where the filters have not converged (all in span(v₁, v₂), predicted "
            "decay exp(−η(λ₁−λ₂)·steps) ≥ 1e-3)",
            "a ci sweep over base seeds 0–4 measured 0.653 at seed 2, whose sample has a relative eigengap "
            "(λ₁−λ₂)/λ₁ of 0.057; the tolerance is unchanged",
            "2026-11-26",
        ),
    ],
    not_reproduced=NotReproduced(
        "the linear filters have not finished converging to v₁: with uniform α the dynamics are a "
        "projected power iteration on the constant matrix C_α[x], whose angle to v₁ shrinks like "
        "exp(−η(λ₁−λ₂)t) once a filter is in span(v₁, v₂); at base seed 2 of the ci sweep the sample's "
        "relative eigengap is 0.057, the predicted decay over the run 8.7e-3, every filter lies in "
        "span(v₁, v₂) and the smallest |cos(w, v₁)| is 0.653 (at seed 0: gap 0.218, decay 7.5e-11, 1.000). "
        "The explanation holds only if every linear filter lies in span(v₁, v₂) (fraction ≥ 0.99) and the "
        "predicted decay is at least 1e-3",
        profiles=("ci", "full"),
        expected=lambda m: float(lin_top2.min()) >= 0.99 and lin_decay >= 1e-3,
        diagnostics=("nodes-linear-top2", "nodes-linear-decay"),
        evidence="glued diagnostics nodes-linear-gap, nodes-linear-decay, nodes-linear-top2 (section 8)",
    ),
)
c_many = run.expect(
    "nodes-relu-kmax",
    source="Tian 2023, Sec. 3 / 3.3, Fig. 1 (c)",
    statement=f"{act}: mean number of patterns recovered at K = k_max (of M = {M}).",
    check=at_least(M - 1),
    paper="more nodes → more patterns",
    required=paper8,
    decide=check_on_mean(),
    not_reproduced=NotReproduced(
        "Finite-sample effect on the weakest pattern. With s_5 = 0.6 and q = 0.2 the LME margin of u_5 "
        "is s_5²(1−q)² − q·s_1² ≈ 0.03 in the population (exact enumeration: u_5 is an LME with a basin "
        "of about 4 % of random initializations), below the O(N^(-1/2)) sampling error of A(w) at "
        "n_train = 300–400 samples; in our runs u_5 was recovered by no seed, so the mean sits at or "
        "just below M − 1 (3.8 with 10 seeds in the full profile, where one seed also missed a second "
        "pattern). The trend with K (claim nodes-relu-grows) and the linear collapse reproduce.",
        profiles=("full",),
        expected=lambda m: m >= M - 2,  # only the weakest pattern (or one more) missed
        evidence="the Fig. 1 (c) reproduction (mean ± sd over seeds)",
    )
    if P.n_train <= 400
    else None,
)
c_more = run.expect(
    "nodes-relu-grows",
    source="Tian 2023, Sec. 3",
    statement=f"{act}: patterns recovered at K = k_max minus at K = 1, per seed; holds on ≥ 80% of seeds.",
    check=greater_than(0),
    decide=holds_on_fraction(0.8),
    paper="more nodes → more patterns",
    required=paper8,
)

# %%
strength = np.linspace(1.0, 0.6, M)
y8 = latent_summation(P.n_train, np.eye(M), P.q, rng=rng)[1]
x8 = (y8 * strength) @ U.T
v8 = stack_views(x8, x8)
w0_8 = rng.standard_normal((P.n_seeds, P.k_max, d))
ks = np.unique(np.r_[2 ** np.arange(int(np.log2(P.k_max)) + 1), P.k_max])
recovered = {}
for h in (act, "linear"):
    if P.alpha == "gaussian":
        fn = lambda w, h=h: gate_matrix(
            v8, w, h, lambda w_: gaussian_alpha(get_activation(h)(w_ @ x8.T)[..., None], P.tau)
        )  # noqa: E731
    else:
        fn = lambda w, h=h: gate_matrix(v8, w, h)  # noqa: E731
    w_fin = train_filters(fn, w0_8, lr=0.5, steps=P.steps)
    if h == "linear":
        lam8, vec8 = np.linalg.eigh(gate_matrix(v8, w0_8[0, 0], "linear"))  # uniform α: A(w) = C_α[x], any w
        v1 = vec8[:, -1]
        lin_cos = np.abs(w_fin @ v1) / np.linalg.norm(w_fin, axis=-1)  # (seeds, K)
        # convergence diagnostics: near span(v₁, v₂) the angle to v₁ shrinks like exp(−η(λ₁−λ₂)t)
        lin_top2 = np.linalg.norm(w_fin @ vec8[:, -2:], axis=-1) / np.linalg.norm(w_fin, axis=-1)
        lin_decay = float(np.exp(-0.5 * (lam8[-1] - lam8[-2]) * P.steps))
    hit = np.abs(w_fin @ U) >= 0.95  # (seeds, K, M)
    recovered[h] = np.stack([hit[:, :k].any(1).sum(-1) for k in ks], axis=1)  # (seeds, len(ks))

fig, ax = plt.subplots(figsize=(5.4, 3.8))
for h, style in ((act, "o-"), ("linear", "s--")):
    r = recovered[h]
    ax.errorbar(ks, r.mean(0), yerr=r.std(0), fmt=style, capsize=3, label=f"h = {h}")
ax.axhline(M, color="0.6", ls=":", label=f"all M = {M} patterns")
ax.set_xscale("log", base=2)
ax.set_xlabel("number of filters $K$")
ax.set_ylabel(r"patterns $\mathbf{u}_m$ recovered ($|\cos| \geq 0.95$)")
ax.set_title(f"{P.alpha} α, q = {P.q}, mean ± sd over {P.n_seeds} seeds")
ax.legend()
plt.show()

run.glue("nodes-linear-max-patterns", int(recovered["linear"].max()))
run.glue("nodes-linear-v1-u1", round(float(np.abs(v1 @ U[:, 0])), 3))
run.glue("nodes-linear-gap", f"{(lam8[-1] - lam8[-2]) / lam8[-1]:.3f}")
run.glue("nodes-linear-decay", f"{lin_decay:.1e}")
run.glue("nodes-linear-top2", round(float(lin_top2.min()), 4))
run.diagnostic("nodes-linear-top2", float(lin_top2.min()))
run.diagnostic("nodes-linear-decay", lin_decay)
c_lin.measure(float(lin_cos.min()))
c_many.measure_seeds(recovered[act][:, -1].astype(float))
c_more.measure_seeds((recovered[act][:, -1] - recovered[act][:, 0]).astype(float))

# %% [markdown]
# ## 9. Appendix B.5: rotation augmentation removes non-invariant optima
#
# **The result.** With augmentation $\mathbf{x} = R(t)\mathbf{x}_0$, $t$ uniform over a one-parameter rotation
# group, Lemma 2 makes the energy $2\mathcal{E}_\alpha(\mathbf{w}) \to \sum_l z_l^2\mathbb{V}_{\tilde p_l}[b(\mathbf{w}|\mathbf{x}_0)]$ with
# $b(\mathbf{w}|\mathbf{x}_0) = \mathbb{E}_t[h(\mathbf{w}^\top R(t)\mathbf{x}_0)]$ (Eq. 105), and $b(R(t')\mathbf{w}|\mathbf{x}_0) = b(\mathbf{w}|\mathbf{x}_0)$:
# the energy is invariant under the group, so a $\mathbf{w}$ that the group moves cannot be a strict
# local optimum (Eqs. 107–108).
#
# **Setting.** The nine points of App. E.1 in the plane, uniform α, ReLU (or the chosen
# activation), and augmentation by rotations $t\sim\mathrm{U}[-\beta, \beta]$. $\beta = \pi$ is the full group
# SO(2), which moves every $\mathbf{w}$; $\beta < \pi$ is not a group and is shown as an interpolation. The
# expectation over $t$ is a 2048-point midpoint rule.
#
# **Prediction and tolerance.** (a) Without augmentation ($\beta = 0$) the energy has the many
# maxima of Fig. 8 ($\ge 8$ for ReLU). (b) With $\beta = \pi$ it is constant in $\mathbf{w}$: its range
# $\max_\theta - \min_\theta$ is at most $10^{-6}$ of the largest energy without augmentation (the
# quadrature error), and no local maximum rises more than $10^{-6}$ of that scale above its
# surroundings — zero local optima. (For these unit-norm points and a positively homogeneous $h$
# the full group even makes every $b(\mathbf{w}|\mathbf{x}_0)$ the same number, so $\mathcal{E}_\alpha \equiv 0$: the
# rotation identifies all samples. Normalizing by the un-augmented scale keeps the check meaningful.)
# Both are identities of the construction (kind *check*): with the full group and unit-norm points
# the energy is zero whatever the data.
#
# **A finite rotation group (outside the appendix's hypothesis; informational).** With $t$ uniform on
# the cyclic group $C_n = \{2\pi j/n\}$ ($n = 2, 3, 4, 6$) the nine points are *not* invariant and the energy
# is not zero; Eqs. 107–108 make it invariant under rotating $\mathbf{w}$ by $2\pi/n$. B.5's argument, however,
# needs *small* group elements ($\|R(t') - I\|$ small, a Lie group): a finite group has none, so it only
# makes the energy periodic and the appendix predicts nothing about the number of optima. We report the
# number of orbits of local maxima under $C_n$ against the maxima without augmentation (fewer would be
# the appendix's conclusion carried over) and the energy's range, as an exploration (not required), with
# the invariance as a check. B.5 as stated is tested next, with a continuous group.
# %%
c_b5_cn = run.expect(
    "b5-cyclic-fewer-optima",
    source="Tian 2023, App. B.5 (Eqs. 105–108), finite group C_n — outside its hypothesis (no small elements)",
    statement=f"Informational, outside B.5's hypothesis: {act}: largest over n ∈ {{2, 3, 4, 6}} of (orbits of local "
    "maxima under C_n augmentation) − (local maxima without augmentation).",
    check=less_than(0),
    paper="(B.5 needs a Lie group; no prediction for C_n)",
    required=False,
    revised=[
        Revision(
            "required with ReLU; not reproduced (C3 leaves more orbits), expected: measured > 0",
            "informational (required=False), labelled outside B.5's hypothesis; no explanation",
            "B.5's argument uses small group elements, which C_n lacks, so the claim did not test the appendix; "
            "the explanation's predicate was the failure condition itself (issue 27). B.5 is now tested with a "
            "continuous group (b5-so2-*)",
            "2026-11-26",
        )
    ],
)
c_b5_cn_inv = run.expect(
    "b5-cyclic-invariant",
    kind="check",
    source="Tian 2023, App. B.5 (Eqs. 107–108)",
    statement=f"{act}: max over n of max_θ |E_n(θ + 2π/n) − E_n(θ)| relative to max E_α without augmentation.",
    check=at_most(1e-10),
    paper="invariant under the group",
)
c_b5_cn_flat = run.expect(
    "b5-cyclic-not-flat",
    kind="check",
    source="Tian 2023, App. B.5",
    statement=f"Informational: {act}: smallest over n of the range of E_n(θ), relative to max E_α without "
    "augmentation (whether the C_n counts are counts of more than ripples).",
    check=at_least(1e-3),
    paper="(non-trivial test: the energy is not identically zero)",
    required=False,
    revised=[
        Revision(
            "required check; not reproduced (C3 range 0.086 %), expected: 0 < measured < 1e-3",
            "informational (required=False); no explanation",
            "it qualifies the finite-group exploration, which is now informational; the explanation's predicate "
            "was the failure condition itself (issue 27)",
            "2026-11-26",
        )
    ],
)
c_b5_flat = run.expect(
    "b5-full-rotation-flat",
    kind="check",
    source="Tian 2023, App. B.5 (Eqs. 105–108)",
    statement=f"{act}, β = π (full rotation group): (max − min) of E_α(θ) relative to max E_α at β = 0.",
    check=at_most(1e-6),
    paper="invariant ⇒ constant",
)
c_b5_count = run.expect(
    "b5-full-rotation-maxima",
    kind="check",
    source="Tian 2023, App. B.5",
    statement=f"{act}, β = π: local maxima with prominence above 1e-6 of the maximal energy at β = 0.",
    check=exactly(0),
    paper="non-invariant optima removed",
)

# %%
x9 = points_on_circle(FIG8_ANGLES)
thetas = np.linspace(-np.pi, np.pi, P.n_grid, endpoint=False)
w9 = np.stack([np.cos(thetas), np.sin(thetas)], -1)
n_t = 2048
h9 = get_activation(act)
betas = np.linspace(0, np.pi, 13)
curves = {}
for beta in betas:
    t = (np.arange(n_t) + 0.5) / n_t * 2 * beta - beta  # midpoint rule on [-β, β]
    xt = rotate_2d(x9[:, None, :], t[None, :])  # (n, T, 2)
    b = h9(np.einsum("gd,ntd->gnt", w9, xt)).mean(-1)  # b(w|x0) = E_t h(wᵀR(t)x0), (G, n)
    e = 0.5 * b.var(-1)  # Eq. 105, uniform α: ½ V_{x0}[b(w|x0)]
    curves[beta] = e
e_scale = np.abs(curves[betas[0]]).max()  # the un-augmented energy scale
n_max9 = [len(periodic_local_maxima(curves[beta], prominence=1e-6 * e_scale)) for beta in betas]
e_full = curves[betas[-1]]

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.6, height=3.6)
ax = axes[0, 0]
for beta in betas[[0, 3, 6, 12]]:
    ax.plot(thetas, curves[beta] / curves[betas[0]].max(), label=rf"$\beta$ = {beta / np.pi:.2f}$\pi$")
ax.set_xlabel(r"$\theta$, $\mathbf{w} = [\cos\theta, \sin\theta]^\top$")
ax.set_ylabel(r"$\mathcal{E}_\alpha(\theta)$ / max at $\beta = 0$")
ax.set_title("Energy with rotation augmentation")
ax.legend(fontsize="small")
ax = axes[0, 1]
ax.plot(betas / np.pi, n_max9, "o-")
ax.set_xlabel(r"rotation range $\beta/\pi$ ($t \sim \mathrm{U}[-\beta, \beta]$)")
ax.set_ylabel("local maxima of $\\mathcal{E}_\\alpha(\\theta)$")
ax.set_title(f"h = {act}, nine points of App. E.1")
plt.show()

# %% [markdown]
# Only the two ends of the sweep are predictions: between them $[-\beta, \beta]$ is not a group, the
# energy is smoothed but not invariant, and the count of maxima need not fall monotonically (the
# nearly flat curves close to $\beta = \pi$ still carry small ripples). Only the full group removes
# every non-invariant optimum — in the plane, every optimum.

# %%
cyclic = {}
for n_rot in (2, 3, 4, 6):
    xt = rotate_2d(x9[:, None, :], 2 * np.pi * np.arange(n_rot)[None, :] / n_rot)  # (n, n_rot, 2)
    e_n = 0.5 * h9(np.einsum("gd,ntd->gnt", w9, xt)).mean(-1).var(-1)  # Eq. 105 with t uniform on C_n
    shift = P.n_grid // n_rot  # 2π/n in grid steps (exact when n divides n_grid)
    n_peaks = len(periodic_local_maxima(e_n, prominence=1e-6 * e_scale))
    cyclic[n_rot] = dict(
        orbits=n_peaks / n_rot,
        invariance=float(np.abs(np.roll(e_n, -shift) - e_n).max() / e_scale)
        if P.n_grid % n_rot == 0
        else np.nan,
        range=float((e_n.max() - e_n.min()) / e_scale),
    )
print("C_n  orbits of maxima  invariance error  range / un-augmented scale")
for n_rot, c in cyclic.items():
    print(f"C{n_rot:<3d} {c['orbits']:16g}  {c['invariance']:15.1e}  {c['range']:.2e}")
run.glue("b5-no-augmentation-maxima", int(n_max9[0]))
run.glue("b5-cyclic-orbits", ", ".join(f"C{n}: {c['orbits']:g}" for n, c in cyclic.items()))
c_b5_cn.measure(float(max(c["orbits"] for c in cyclic.values()) - n_max9[0]))
c_b5_cn_inv.measure(float(max(c["invariance"] for c in cyclic.values())))
c_b5_cn_flat.measure(float(min(c["range"] for c in cyclic.values())))
c_b5_flat.measure(float((e_full.max() - e_full.min()) / e_scale))
c_b5_count.measure(int(n_max9[-1]))

# %% [markdown]
# ### App. B.5 as stated: a continuous group acting on data that are not invariant
#
# **Setting.** The nine points of App. E.1 lifted to $d = 3$ at different heights,
# $\mathbf{x}_0 = (\cos a_i, \sin a_i, z_i)$ with $z_i$ evenly spaced in $[-0.5, 0.5]$; augmentation by the rotations $R(t)$ of
# the $(x_1, x_2)$ plane, $t \sim \mathrm{U}[0, 2\pi)$: a one-dimensional Lie group with small elements, as B.5
# assumes, and the data are not invariant under it (the energy is not zero). The energy of Eq. 105
# (uniform α, the activation as set) is evaluated on a grid of the sphere, `n_sphere` polar angles
# (poles excluded) × 2`n_sphere` azimuths, with the expectation over $t$ a midpoint rule of 16`n_sphere`
# angles (an azimuth step is 8 quadrature steps, so the invariance of Eqs. 107–108 holds exactly on the grid).
# The group moves every $\mathbf{w}$ except $\pm\mathbf{e}_3$.
#
# **Prediction and tolerance.** B.5: a $\mathbf{w}$ with $R(t')\mathbf{w} \neq \mathbf{w}$ cannot be a local optimum, so
# (a) (checks of the construction) the augmented energy is invariant, $\max|\mathcal{E}(\theta, \phi) - \bar{\mathcal{E}}(\theta)| \le
# 10^{-10}$ of the un-augmented scale, and no grid point away from the poles is a strict local maximum
# (above its 8 neighbours by more than $10^{-12}$ of that scale); and it is not flat (range $\ge 10^{-3}$ of that
# scale). (b) "Augmentation removes local optima that are not invariant", leaving fewer: the number of
# orbits of local maxima with augmentation (local maxima of the profile $\bar{\mathcal{E}}(\theta)$, the first and
# last rows counting as the invariant poles) is smaller than the number of strict local maxima on the
# sphere without augmentation (difference $< 0$; required with ReLU).

# %%
c_so2_inv = run.expect(
    "b5-so2-invariant",
    kind="check",
    source="Tian 2023, App. B.5 (Eqs. 107–108)",
    statement=f"{act}, d = 3, SO(2) on (x₁, x₂): max over the grid of |E(θ, φ) − mean_φ E(θ, ·)| relative to the "
    "un-augmented max E.",
    check=at_most(1e-10),
    paper="invariant under the group",
)
c_so2_strict = run.expect(
    "b5-so2-no-moved-optima",
    kind="check",
    source="Tian 2023, App. B.5 (after Eq. 108)",
    statement=f"{act}, d = 3, SO(2) augmentation: strict local maxima on the sphere grid away from the poles "
    "(moved by the group).",
    check=exactly(0),
    paper="w with R(t')w ≠ w cannot be a local optimum",
)
c_so2_flat = run.expect(
    "b5-so2-not-flat",
    kind="check",
    source="Tian 2023, App. B.5",
    statement=f"{act}, d = 3, SO(2) augmentation: range of E on the sphere relative to the un-augmented max E.",
    check=at_least(1e-3),
    paper="(non-trivial test: the energy is not identically zero)",
)
c_so2_fewer = run.expect(
    "b5-so2-fewer-optima",
    source="Tian 2023, App. B.5 (“augmentation removes certain local optima”), continuous group",
    statement=f"{act}, d = 3: orbits of local maxima with SO(2) augmentation minus strict local maxima on the "
    "sphere without augmentation.",
    check=less_than(0),
    paper="augmentation removes non-invariant optima",
    required=paper_relu,
)

# %%
x_b5 = np.c_[points_on_circle(FIG8_ANGLES), np.linspace(-0.5, 0.5, len(FIG8_ANGLES))]
th_b5, ph_b5, w_b5 = sphere_grid(P.n_sphere, 2 * P.n_sphere)
e_plain = rotation_augmented_energy(x_b5, w_b5, act)  # no augmentation
e_so2 = rotation_augmented_energy(x_b5, w_b5, act, n_t=16 * P.n_sphere)
scale_b5 = np.abs(e_plain).max()
n_strict_plain = int(grid_strict_maxima(e_plain, tol=1e-12 * scale_b5).sum())
prof = e_so2.mean(1)  # E depends on θ only (Eqs. 107-108)
orbits = int(
    sum(
        (i == 0 or prof[i] > prof[i - 1]) and (i == len(prof) - 1 or prof[i] > prof[i + 1])
        for i in range(len(prof))
    )
)

fig, axes = nlcl.core.plotting.subplots(1, 2, width=4.6, height=3.4)
for ax, e, title in ((axes[0, 0], e_plain, "no augmentation"), (axes[0, 1], e_so2, "SO(2) augmentation")):
    im = ax.pcolormesh(np.degrees(ph_b5), np.degrees(th_b5), e / scale_b5, shading="auto")
    ax.set_xlabel(r"azimuth $\phi$ of $\mathbf{w}$ (degrees)")
    ax.set_ylabel(r"polar angle $\theta$ (degrees)")
    ax.set_title(f"{title}: E / max E (no aug.)")
    fig.colorbar(im, ax=ax)
mask = grid_strict_maxima(e_plain, tol=1e-12 * scale_b5)
ii, jj = np.nonzero(mask)
axes[0, 0].plot(np.degrees(ph_b5[jj]), np.degrees(th_b5[ii]), "r^", label="strict maxima")
axes[0, 0].legend(fontsize="x-small")
plt.show()

run.glue("b5-so2-plain-maxima", n_strict_plain)
run.glue("b5-so2-orbits", orbits)
c_so2_inv.measure(float(np.abs(e_so2 - prof[:, None]).max() / scale_b5))
c_so2_strict.measure(int(grid_strict_maxima(e_so2, tol=1e-12 * scale_b5).sum()))
c_so2_flat.measure(float((e_so2.max() - e_so2.min()) / scale_b5))
c_so2_fewer.measure(orbits - n_strict_plain)

# %% [markdown]
# ## Summary
#
# * Eqs. 8–9 hold: Monte Carlo errors {glue:text}`eq8-categorical:.3f` (categorical) and
#   {glue:text}`eq9-summation-mc:.3f` (summation), exact enumeration {glue:text}`eq9-summation-exact:.1e`;
#   the LME threshold sits at $q^\star$ = {glue:text}`eq9-lme-threshold:.4f`, against $(3-\sqrt5)/2$
#   (Def. 3 checked on the $q$ grid agrees with the sign of the margin: {glue:text}`eq9-lme-grid-consistent`).
# * At the {glue:text}`thm1-n-sufficient` LMEs with $\lambda_{\mathrm{gap}} > \rho$ the fraction of decaying
#   perturbations is {glue:text}`thm1-stable-lmes`; $z_0(\alpha_g)$ is at most {glue:text}`cor2-z0:.3f`.
#   From the same initializations, uniform α reached {glue:text}`cor2-count-uniform` distinct
#   stable optima ({glue:text}`cor2-settled-uniform` settled filters) and Gaussian α
#   {glue:text}`cor2-count-gaussian` ({glue:text}`cor2-settled-gaussian` settled filters). At the critical points of
#   the Gaussian-α dynamics ({glue:text}`cor2-n-critical`), the raw ratio of mean roughness
#   $\bar\rho(\alpha_g)/\bar\rho(\alpha_u)$ is {glue:text}`cor2-raw-roughness-ratio:.3f` (partly scale: the unnormalized
#   $\alpha_g \le 1$ shrinks $A$ as a whole) and the scale-free ratio of mean $\rho/\lambda_1$ is
#   {glue:text}`cor2-roughness-ratio:.3f`.
# * Theorem 2's bound exceeds ρ by a factor of at least {glue:text}`thm2-slack` (ρ/bound, mean over seeds:
#   {glue:text}`thm2-bound-uniform:.1e` for uniform α, {glue:text}`thm2-bound-gaussian:.1e` for Gaussian α) in a setting
#   outside its hypotheses: checks, not tests. Corollary 2 at Gaussian-α critical points: the scale-free
#   ratio, Gaussian over uniform, is {glue:text}`thm2-alpha-scale-free:.2f` where $z_0 \approx$ {glue:text}`thm2-z0-mean`, and
#   {glue:text}`cor2-small-z0-roughness:.3f` where $z_0 \approx$ {glue:text}`cor2-small-z0-mean` (shifted data, τ = 0.02). The
#   Gaussian-α critical points are not LMEs of $A_g$ (fraction {glue:text}`cor2-gaussian-cp-lme`; eigenvalue ranks
#   {glue:text}`cor2-cp-ranks`), so Theorem 1's stability test does not reach them.
# * Theorem 1 on both sides of $\lambda_{\mathrm{gap}} = \rho$ ({glue:text}`thm1-two-sided-n` LMEs, $h = x^2$): the
#   fraction of LMEs with $\lambda_{\mathrm{gap}} > \rho$ that are stable is {glue:text}`thm1-two-sided-stable`, and
#   of LMEs with $\lambda_{\mathrm{gap}} \le \rho$ that are unstable {glue:text}`thm1-two-sided-unstable`.
# * Eq. 11 (Theorem 3's hypothesis) holds in a fraction {glue:text}`thm3-eq11-holds` of the $x^2$ cases. With tanh
#   on small inputs it holds in {glue:text}`thm3-tanh-n-hold` cases, and there power iteration converges to a
#   critical point inside $B_\gamma$ in a fraction {glue:text}`thm3-converges-where-eq11` of them (Theorem 3).
# * Outside the hypothesis (ReLU, $L = \infty$; informational): power iteration near each pattern ends with a
#   largest final step {glue:text}`thm3-pi-converges:.1e`; largest $(1-\cos)/\varepsilon$ =
#   {glue:text}`thm3-fixed-point-near-um:.3f`.
# * With the nonlinearity, {glue:text}`nodes-relu-kmax:.2f` patterns are recovered on average at the
#   largest $K$; the linear network recovers at most {glue:text}`nodes-linear-max-patterns`: all its filters
#   end on the sample's top principal direction ($|\cos| \ge$ {glue:text}`nodes-linear-one-pattern:.3f`), which is
#   at $|\cos| =$ {glue:text}`nodes-linear-v1-u1` from $\mathbf{u}_1$. (Convergence: the sample's relative
#   eigengap $(\lambda_1-\lambda_2)/\lambda_1$ is {glue:text}`nodes-linear-gap`, so the angle to $\mathbf{v}_1$ is predicted
#   to shrink by a factor {glue:text}`nodes-linear-decay` over the run; the smallest fraction of a linear
#   filter in $\operatorname{span}(\mathbf{v}_1, \mathbf{v}_2)$ is {glue:text}`nodes-linear-top2`.)
# * Full rotation augmentation flattens the landscape (relative range {glue:text}`b5-full-rotation-flat:.1e`,
#   {glue:text}`b5-full-rotation-maxima` maxima, against {glue:text}`b5-no-augmentation-maxima` without) — an
#   identity of the construction. With the rotation group of a plane acting on three-dimensional points
#   that it does not leave invariant (B.5 as stated), the energy keeps a range of {glue:text}`b5-so2-not-flat:.2f` of
#   its scale and the {glue:text}`b5-so2-plain-maxima` strict maxima without augmentation become
#   {glue:text}`b5-so2-orbits` orbits of maxima, none of them a strict maximum the group moves. With a finite
#   rotation group (outside B.5's hypothesis, informational) the orbits of local maxima are
#   {glue:text}`b5-cyclic-orbits` (against {glue:text}`b5-no-augmentation-maxima` maxima without augmentation).
#
# **What's next.** {doc}`tian-fig8-landscape` draws the one-filter landscape on the circle; the
# two-layer chapters of this part study how a top layer chooses among these local patterns
# (global modulation, Sec. 4).

# %%
run.finish()
