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
# 9. rotation augmentation removes local optima that are not invariant (App. B.5).
#
# The landscape on a circle (App. E.1, Fig. 8) is in {doc}`tian-fig8-landscape`.
#
# **Prerequisites.** {doc}`tian-alpha-cl` (Eq. 3, Lemmas 2–3); Tian 2023 Sec. 3, App. B.1, B.3–B.5.
#
# **Expected run time.** `ci` profile: about 1 minute on a 2-core CPU; `full`: several minutes.

# %% tags=["parameters"]
profile: str = "ci"  # "ci" (CPU, about a minute) or "full" (larger samples, more initializations)
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
)
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
    eq11_sup_omega,
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
# (c) From `n_init` random initializations, Gaussian α reaches at least as many distinct stable
# optima as uniform α on the same data (reported counts; required with ReLU, the paper's setting).
# A filter counts when it is alive (some sample on its active side) and moves less than 0.01 in 50
# further steps; distinct optima are clusters at cosine 0.99.
# (d) The roughness at the LMEs is lower with Gaussian α than with uniform α (ratio $\le 1$; our
# reading of Corollary 2, which bounds $\rho$ rather than computing it — not required).

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
    source="Tian 2023, Sec. 3.2 (after Corollary 2)",
    statement="Distinct stable optima from random inits: Gaussian α minus uniform α (same data, same inits).",
    check=at_least(0),
    paper="Gaussian α ≥ uniform α",
    required=paper_relu,
)
c_rough = run.expect(
    "cor2-roughness-ratio",
    source="Tian 2023, Theorem 2 / Corollary 2",
    statement="Scale-free roughness: mean ρ/λ_gap over the LMEs with Gaussian α / the same with uniform α "
    "(same n_train samples, α held at w*).",
    check=at_most(1.0),
    paper="bound ratio z_0 ≤ 1",
    required=False,
    not_reproduced=NotReproduced(
        "Corollary 2 bounds ρ(α_g) through z_0 ≤ 1 (cor2-z0) but does not compute it: the bound does not "
        "force the roughness relative to the eigengap down. On this data the Gaussian α shrinks λ_gap "
        "more than ρ, so the scale-free roughness is larger under Gaussian α (the raw ratio "
        "cor2-raw-roughness-ratio is below 1 only because α_g ≤ 1 shrinks A(w) as a whole).",
        profiles=("ci",),
        expected=lambda m: m > 1.0,
        evidence="glued cor2-raw-roughness-ratio against this ratio; cor2-z0",
    ),
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
# uniform vs Gaussian α on the same first n_train samples (a Gaussian α is N×N per LME)
xr = xs[: P.n_train]
vr = stack_views(xr, xr)
alpha_at_star = gaussian_alpha(get_activation(act)(w_star @ xr.T)[..., None], P.tau)  # held fixed (sg)
rho_ur = local_roughness(lambda w: gate_matrix(vr, w, act), w_star, radius=0.02, rng=rng)
rho_g = local_roughness(lambda w: gate_matrix(vr, w, act, alpha_at_star), w_star, radius=0.02, rng=rng)
# the unnormalized α_g ≤ 1 also shrinks A(w) as a whole; ρ/λ_gap compares the stability margins
gap_ur = eigengap(gate_matrix(vr, w_star, act))[1]
gap_g = eigengap(gate_matrix(vr, w_star, act, alpha_at_star))[1]
run.glue("cor2-raw-roughness-ratio", float(np.mean(rho_g) / np.mean(rho_ur)))

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
c_rough.measure(float(np.mean(rho_g / gap_g) / np.mean(rho_ur / gap_ur)))

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
# **Prediction and tolerance.** Over `n_theory_seeds` independent data sets: (a) the largest
# $\rho(\mathbf{w}_*)/\text{bound}$ over the LMEs is $\le 1$ for uniform α and (b) for Gaussian α, on every
# seed (a bound admits no exception). (c) The scale-free comparison of the two α: the bound ratio is
# $z_0 \le 1$, so the paper expects the Gaussian α to be *less* rough; relative to the stability
# margin that means the mean of $\rho/\lambda_{\mathrm{gap}}$ under Gaussian α divided by the same under
# uniform α is $\le 1$ (holds on ≥ 80% of seeds; $\rho/\lambda_{\mathrm{gap}}$ does not change when α is
# rescaled, so the unnormalized $\alpha_g \le 1$ does not bias it). Required with ReLU.

# %%
c_b2u = run.expect(
    "thm2-bound-uniform",
    source="Tian 2023, Theorem 2 (Eq. 93, Eq. 95)",
    statement="Uniform α: largest ρ(w*) / (C₀³ vol(C₀)/π · r(w*, α_u)) over the LMEs, per data seed.",
    check=at_most(1.0),
    decide=holds_on_fraction(1.0),
    paper="ρ ≤ bound",
    required=paper_relu,
)
c_b2g = run.expect(
    "thm2-bound-gaussian",
    source="Tian 2023, Theorem 2 / Corollary 2 (Eq. 99)",
    statement="Gaussian α: largest ρ(w*) / (C₀³ vol(C₀)/π · z₀(α_g) r(w*, α_u)) over the LMEs, per data seed.",
    check=at_most(1.0),
    decide=holds_on_fraction(1.0),
    paper="ρ ≤ bound",
    required=paper_relu,
)
c_b2sf = run.expect(
    "thm2-alpha-scale-free",
    source="Tian 2023, Theorem 2 / Corollary 2 (Sec. 3.2)",
    statement="Mean ρ/λ_gap over the LMEs, Gaussian α over uniform α, per data seed (holds on ≥ 80% of seeds).",
    check=at_most(1.0),
    decide=holds_on_fraction(0.8),
    paper="Gaussian α less rough (bound ratio z₀ ≤ 1)",
    required=paper_relu,
    not_reproduced=NotReproduced(
        "Observed in the first full-profile run (5 data seeds, commit 5807e9a): the ratio is below 1 on "
        "only 3 of 5 seeds (1.12, 0.26, 0.61, 0.19, 2.12; mean 0.86, sd 0.79). Gaussian α is less rough on "
        "average, but the seed-to-seed spread of ρ/λ_gap at the LMEs of a 400-sample draw is larger than the "
        "effect, so the paper's reading of Corollary 2 (Gaussian α gives fewer, smoother optima) does not hold "
        "seed by seed at paper scale. The ci profile (3 data seeds per run) shows the same: in a ci sweep over "
        "base seeds 0–4 the claim held at seed 0 only; the per-seed ratios ranged from 0.12 to 3.85, on both "
        "sides of 1 in every failing run (run means 0.79, 1.34, 0.52, 1.48).",
        profiles=("ci", "full"),
        # the explanation: no consistent direction, the ratios fall on both sides of 1
        expected=lambda m: min(b2["scale_free"]) < 1.0 < max(b2["scale_free"]),
        evidence="the per-seed values in the claims table (seeds column), the right panel of the Theorem 2 "
        "figure and the ci seed sweep on the reproducibility page",
    ),
    revised=[
        Revision(
            "not reproduced in full only, expected mean < 1",
            "not reproduced in ci and full; expected: per-seed ratios on both sides of 1",
            "a ci sweep over base seeds 0–4 failed the claim at seeds 1–4 with run means 0.52–1.48, so the "
            "full-profile observation (spread larger than the effect) holds at ci size too, and the mean is "
            "not the explanation's content",
            "2026-11-25",
        )
    ],
)

# %%
NOISE6 = 0.2
atoms6, atom_p6, _ = latent_summation_support(U, P.q)
b2 = {"uniform": [], "gaussian": [], "scale_free": [], "slack": [], "z0": []}
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
    gap_bu = eigengap(gate_matrix(vb, wb, act))[1]
    gap_bg = eigengap(gate_matrix(vb, wb, act, ab))[1]
    c0 = float(np.linalg.norm(xb, axis=1).max())
    r_u = np.array([mixture_plane_density_max(atoms6, atom_p6, NOISE6, w)[0] for w in wb])
    z0_b = np.exp(-(get_activation(act)(wb @ xb.T) ** 2) / (2 * P.tau)).mean(-1)
    bound_u = np.array([theorem2_bound(c0, d, r) for r in r_u])
    bound_g = z0_b * bound_u
    sel = lme_b if lme_b.any() else np.ones_like(lme_b)
    b2["uniform"].append(float((rho_bu / bound_u)[sel].max()))
    b2["gaussian"].append(float((rho_bg / bound_g)[sel].max()))
    b2["scale_free"].append(float(np.mean((rho_bg / gap_bg)[sel]) / np.mean((rho_bu / gap_bu)[sel])))
    b2["slack"].append(float((bound_u / np.maximum(rho_bu, 1e-300))[sel].min()))
    b2["z0"].append(float(z0_b[sel].mean()))
run.glue("thm2-c0", f"{c0:.2f}")
run.glue("thm2-slack", f"{min(b2['slack']):.1e}")
run.glue("thm2-z0-mean", f"{np.mean(b2['z0']):.3f}")

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
    label=r"measured: $\overline{\rho/\lambda_{gap}}$ ratio",
)
ax.plot(np.arange(P.n_theory_seeds), b2["z0"], "s", label=r"bound ratio $z_0(\alpha_g)$")
ax.axhline(1, color="k", ls="--", lw=1)
ax.set_xlabel("data seed")
ax.set_ylabel(r"Gaussian $\alpha$ / uniform $\alpha$")
ax.set_title("Scale-free comparison of the two α")
ax.legend(fontsize="small")
plt.show()

c_b2u.measure_seeds(b2["uniform"])
c_b2g.measure_seeds(b2["gaussian"])
c_b2sf.measure_seeds(b2["scale_free"])

# %% [markdown]
# The bound holds with a slack of at least {glue:text}`thm2-slack` (bound / measured ρ, smallest over LMEs and
# seeds; $C_0$ = {glue:text}`thm2-c0` on the last seed): the factor $C_0^3\mathrm{vol}(C_0)$ in $d$ = 8 dimensions and the
# maximum of a density with $\sigma = 0.2$ make it far from tight, so it does not explain which LMEs are
# stable. The bound ratio $z_0(\alpha_g)$ (mean {glue:text}`thm2-z0-mean`) predicts a smoother landscape under
# Gaussian α; the measured, scale-free ratio is the claim `thm2-alpha-scale-free` above. It is measured at
# LMEs of the very sample on which ρ and $\lambda_{\mathrm{gap}}$ are computed. The older claim
# `cor2-roughness-ratio` (Sec. 6) uses the LMEs of the larger `n_stab` sample evaluated on an `n_train`
# subsample, where they are not exact fixed points; the two need not agree, and where they disagree the
# present one is the faithful reading of Theorem 2 (which bounds ρ at a critical point $\mathbf{w}_*$).
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
# angle is $O(\varepsilon)$ and $1-\cos = O(\varepsilon^2)$). Required when every $q_m$ is below the threshold and
# $\varepsilon \le 0.2$.

# %%
pi_ok = P.q < Q_STAR - 0.05 and max(eps_values) <= 0.2
c_pi_conv = run.expect(
    "thm3-pi-converges",
    source="Tian 2023, Theorem 3 / Fig. 1 (right)",
    statement="Largest final PI step ‖w(t+1) − w(t)‖ after 200 iterations, over m and ε.",
    check=at_most(1e-10),
    paper="converges",
    required=pi_ok,
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
    statement="Largest (1 − cos(w*, u_m)) / ε over m and ε > 0 (fixed point within the declared O(ε) bound).",
    check=at_most(1.0),
    paper="w* ∈ B_γ near u_m",
    required=pi_ok,
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
    not_reproduced=NotReproduced(
        "Observed in the first ci run of this claim: Eq. 11 fails in every case, even at ε = 0 where u_m is "
        "an exact LME (c = 1): there the excess sup ω − γ is about 3.5 at the best γ, because the global "
        "constants enter as 2κL² + 2L/λ_gap·√(μ(1+μ)) with L ≈ 2 (of the order of λ_gap = 1.25) and κ ≈ 0.3, "
        "which alone exceed 1. Power iteration converged in all 20 cases anyway: the printed condition is "
        "sufficient and far from necessary, not a description of when the iteration works. The computation "
        "uses no profile size (exact enumeration), so it is the same in the full profile.",
        profiles=("ci", "full"),
        expected=lambda m: m < 0.5,
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
c_eq11.measure(float(holds11.mean()))

# %% [markdown]
# Eq. 11 holds in {glue:text}`thm3-eq11-n-hold` cases (power iteration converged in
# {glue:text}`thm3-eq11-hold-converged` of them); it fails in {glue:text}`thm3-eq11-n-fail`, where the smallest
# excess $\sup\omega - \gamma$ is {glue:text}`thm3-eq11-margin-min`. Where it fails, power iteration still converged
# in {glue:text}`thm3-eq11-fail-converged` cases: the condition is sufficient and, with a global $L$ and
# $\kappa$ entering as $2\kappa L^2$ and $2L/\lambda_{\mathrm{gap}}$, far from necessary.

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
# **A version that can fail: a finite rotation group.** With $t$ uniform on the cyclic group
# $C_n = \{2\pi j/n\}$ ($n = 2, 3, 4, 6$) the nine points are *not* invariant, the energy is not zero,
# and Eqs. 107–108 (which only use that $R^{-1}(t)R(t')$ is again a group element drawn uniformly)
# make it invariant under rotating $\mathbf{w}$ by $2\pi/n$. Appendix B.5's conclusion — augmentation
# removes local optima that are not invariant, "leaving more informative local optima" — predicts
# **fewer distinct optima**: the number of orbits of local maxima under $C_n$ (maxima per period
# $2\pi/n$) is smaller than the number of maxima without augmentation, for every $n$ (required with
# ReLU). Checks: the energy is $C_n$-invariant to $10^{-10}$ of its scale, and not flat (range
# $\ge 10^{-3}$ of the un-augmented scale).

# %%
c_b5_cn = run.expect(
    "b5-cyclic-fewer-optima",
    source="Tian 2023, App. B.5 (Eqs. 105–108), finite group C_n",
    statement=f"{act}: largest over n ∈ {{2, 3, 4, 6}} of (orbits of local maxima under C_n augmentation) − "
    "(local maxima without augmentation).",
    check=less_than(0),
    paper="augmentation removes non-invariant optima",
    required=paper_relu,
    not_reproduced=NotReproduced(
        "Observed in the first ci run of this (new) claim: C2, C4 and C6 leave fewer orbits of maxima "
        "than the 9 maxima without augmentation, but C3 leaves more (12). C3 nearly symmetrizes the nine "
        "points of App. E.1: its energy range is below 0.1 % of the un-augmented scale (b5-cyclic-not-flat), "
        "and what is counted there are ripples. B.5's argument needs *small* group elements (a Lie group); "
        "a finite group only makes the energy periodic, and does not by itself remove optima. The first "
        "full-profile run (commit 5807e9a, finer grid) counts the same: 3 more orbits than allowed.",
        profiles=("ci", "full"),
        expected=lambda m: m > 0,
        evidence="the per-n table printed below the claims cell and the glued b5-cyclic-orbits",
    ),
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
    statement=f"{act}: smallest over n of the range of E_n(θ), relative to max E_α without augmentation.",
    check=at_least(1e-3),
    paper="(non-trivial test: the energy is not identically zero)",
    not_reproduced=NotReproduced(
        "Observed in the first ci run: with C3 (and C6, which for ReLU gives the same energy) the nine "
        "points of App. E.1 are nearly invariant, and the range of the energy is 0.086 % of the "
        "un-augmented scale, below the 0.1 % declared; the energy is not zero (C2 and C4 keep 9 % and 0.4 %), "
        "but the C3 count of b5-cyclic-fewer-optima is a count of ripples. The first full-profile run "
        "(commit 5807e9a, finer grid) measures the same 0.087 %.",
        profiles=("ci", "full"),
        expected=lambda m: 0 < m < 1e-3,
        evidence="the per-n table printed below the claims cell",
    ),
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
#   {glue:text}`cor2-count-gaussian` ({glue:text}`cor2-settled-gaussian` settled filters). The raw ratio of mean
#   roughness $\bar\rho(\alpha_g)/\bar\rho(\alpha_u)$ is {glue:text}`cor2-raw-roughness-ratio:.3f`, but that is
#   mostly scale — the unnormalized $\alpha_g \le 1$ shrinks $A$ as a whole. The claim is the scale-free
#   ratio of mean $\rho/\lambda_{\mathrm{gap}}$ under the two α, {glue:text}`cor2-roughness-ratio:.3f`: above 1
#   means the landscape is *rougher* relative to its eigengap under Gaussian α, not smoother.
# * Theorem 2's bound holds with a slack of at least {glue:text}`thm2-slack` (ρ/bound, mean over seeds:
#   {glue:text}`thm2-bound-uniform:.1e` for uniform α, {glue:text}`thm2-bound-gaussian:.1e` for Gaussian α); the
#   scale-free comparison of the two α gives {glue:text}`thm2-alpha-scale-free:.2f` (Gaussian over uniform).
# * Theorem 1 on both sides of $\lambda_{\mathrm{gap}} = \rho$ ({glue:text}`thm1-two-sided-n` LMEs, $h = x^2$): the
#   fraction of LMEs with $\lambda_{\mathrm{gap}} > \rho$ that are stable is {glue:text}`thm1-two-sided-stable`, and
#   of LMEs with $\lambda_{\mathrm{gap}} \le \rho$ that are unstable {glue:text}`thm1-two-sided-unstable`.
# * Eq. 11 (Theorem 3's hypothesis) holds in a fraction {glue:text}`thm3-eq11-holds` of the $x^2$ cases.
# * Power iteration converges near each pattern for every ε (largest final step
#   {glue:text}`thm3-pi-converges:.1e`; largest $(1-\cos)/\varepsilon$ = {glue:text}`thm3-fixed-point-near-um:.3f`).
# * With the nonlinearity, {glue:text}`nodes-relu-kmax:.2f` patterns are recovered on average at the
#   largest $K$; the linear network recovers at most {glue:text}`nodes-linear-max-patterns`: all its filters
#   end on the sample's top principal direction ($|\cos| \ge$ {glue:text}`nodes-linear-one-pattern:.3f`), which is
#   at $|\cos| =$ {glue:text}`nodes-linear-v1-u1` from $\mathbf{u}_1$. (Convergence: the sample's relative
#   eigengap $(\lambda_1-\lambda_2)/\lambda_1$ is {glue:text}`nodes-linear-gap`, so the angle to $\mathbf{v}_1$ is predicted
#   to shrink by a factor {glue:text}`nodes-linear-decay` over the run; the smallest fraction of a linear
#   filter in $\operatorname{span}(\mathbf{v}_1, \mathbf{v}_2)$ is {glue:text}`nodes-linear-top2`.)
# * Full rotation augmentation flattens the landscape (relative range {glue:text}`b5-full-rotation-flat:.1e`,
#   {glue:text}`b5-full-rotation-maxima` maxima, against {glue:text}`b5-no-augmentation-maxima` without) — an
#   identity of the construction. With a finite rotation group the energy is not flat and the orbits of
#   local maxima are {glue:text}`b5-cyclic-orbits` (against {glue:text}`b5-no-augmentation-maxima` maxima without
#   augmentation; claim `b5-cyclic-fewer-optima` = {glue:text}`b5-cyclic-fewer-optima`).
#
# **What's next.** {doc}`tian-fig8-landscape` draws the one-filter landscape on the circle; the
# two-layer chapters of this part study how a top layer chooses among these local patterns
# (global modulation, Sec. 4).

# %%
run.finish()
