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
# # Nonlinearity creates local optima: the landscape on a circle (Tian 2023, Fig. 8)
#
# **Overview.** {cite:t}`tian2023nonlinearity` argues that a *linear* contrastive learner can only
# find one pattern (the top principal direction), while a *nonlinear* one sees a landscape with many
# local optima, one per pattern in the data (Sec. 3; App. E.1). The smallest experiment that shows it
# is a single unit-norm filter $\mathbf{w} = (\cos\theta, \sin\theta)^\top$ on nine points of the unit
# circle: plot the energy $\mathcal{E}_\alpha(\theta)$ and count its local maxima.
#
# **Prerequisites.** Sec. 2 of the paper (the contrastive covariance, Eq. 3) and Sec. 3 (Eq. 5);
# Appendix E.1 for this experiment. The chapter {doc}`tian-one-layer` develops the theory (LMEs,
# Lemma 3, Theorems 1–3) behind it.
#
# **Expected run time.** {glue:text}`run-time`

# %% [markdown]
# ## The result
#
# With per-filter normalization $\|\mathbf{w}\|_2 = 1$, the one-layer network $f = h(\mathbf{w}^\top\mathbf{x})$
# maximizes (Eq. 5)
#
# $$\mathcal{E}_\alpha(\mathbf{w}) = \tfrac12\, \mathbb{C}_\alpha\big[h(\mathbf{w}^\top \mathbf{x})\big],\qquad
# \mathbb{C}_\alpha[a] = \frac{1}{2N^2}\sum_{i,j}\alpha_{ij}\big[(a[i]-a[j])^2 - (a[i]-a[i'])^2\big]
# \quad\text{(Eq. 3)}.$$
#
# Here $\alpha_{ij}\equiv 1$ (uniform pairwise importance, i.e. the quadratic loss) and there is no
# augmentation, so $a[i'] = a[i]$, the second term vanishes and $\mathbb{C}_\alpha[a]$ is the
# variance of $a$ over the batch. Hence:
#
# * **linear** $h(x) = x$: $\mathcal{E}(\mathbf{w}) = \tfrac12\mathbf{w}^\top \mathrm{Cov}[\mathbf{x}]\,\mathbf{w}$,
#   a quadratic form on the circle. Unless the covariance is isotropic it has exactly two maxima,
#   at $\pm\boldsymbol{\phi}_1$, the top principal direction;
# * **ReLU** $h(x) = \max(x, 0)$: $\mathcal{E}(\mathbf{w}) = \tfrac12 \mathbf{w}^\top \mathbb{C}_\alpha[\tilde{\mathbf{x}}^{\mathbf{w}}]\mathbf{w}$
#   with the gated input $\tilde{\mathbf{x}}^{\mathbf{w}} = \mathbf{x}\,\mathbb{1}[\mathbf{w}^\top\mathbf{x} > 0]$ (Eq. 6):
#   the matrix changes whenever $\mathbf{w}$ crosses the normal of a data point, and each region
#   between crossings can hold its own maximum.
#
# ## What it predicts, and how we check it
#
# On the paper's nine data points at angles $\{-\tfrac{4\pi}{5}, -\tfrac{\pi}{2}, -\tfrac{2\pi}{5},
# -\tfrac{\pi}{6}, 0, \tfrac{\pi}{5}, \tfrac{2\pi}{5}, \tfrac{3\pi}{5}, \tfrac{4\pi}{5}\}$, the ReLU
# landscape has more local maxima than all PCA directions together could give in 2-D ($2\times 2 = 4$),
# and they are not mutually orthogonal, unlike eigenvectors of one matrix; the linear landscape has
# only the pair $\pm\boldsymbol{\phi}_1$, which we compare with an eigendecomposition of the
# covariance:
#
# ```{nlcl-claims} fig8-relu-maxima fig8-linear-maxima fig8-linear-at-pca fig8-relu-not-orthogonal
# ```
#
# Local maxima are counted on a periodic grid of $\theta$ with `scipy.signal.find_peaks` (a plateau
# counts once).
#
# **Seeds.** The experiment is deterministic: the nine points are fixed, $\alpha$ is uniform, there is
# no augmentation and the energy is evaluated exactly on a grid, so each claim is one measurement (the
# `seed` parameter is unused). Its robustness check is a grid ten times coarser instead. The claims
# are required in the paper's setting (ReLU, the nine angles) and reported otherwise.

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"  # "ci" (small sizes, CPU) or "full" (finer grid)
seed: int = 0  # random seed (this chapter is deterministic; kept for uniformity)
device: str = "auto"  # "auto", "cpu" or "cuda" (the computation is tiny, in numpy)
activation: str = "relu"  # compared with linear; one of nlcl.core.activations
angles: list | None = None  # data angles (radians); None takes the paper's nine
n_grid: int | None = None  # θ grid points on [-π, π); None takes the profile's size

# %% tags=["hide-cell"]
import nlcl

run = nlcl.start(
    "tian-fig8-landscape",
    globals(),
    spec={
        "activation": {
            "choices": [
                "linear",
                "relu",
                "leaky_relu",
                "quadratic",
                "monomial",
                "sigmoid",
                "tanh",
            ],
            "paper": "relu",
            "source": "Tian 2023, App. E.1 (h is ReLU)",
        },
        "angles": {
            "length": [2, 1000],
            "items": {"type": "float", "range": [-10.0, 10.0]},
            "paper": None,
            "source": "Tian 2023, App. E.1 (the nine data angles)",
        },
        "n_grid": {"range": [16, 10_000_000], "ci": 3600, "full": 36000},
    },
)
P = run.params

# %% tags=["hide-cell"]
import matplotlib.pyplot as plt
import numpy as np
from scipy.signal import peak_prominences

from nlcl.tian.circle_landscape import angular_distance, plot_circle_landscape
from nlcl.tian.landscape import energy_on_circle, periodic_local_maxima
from nlcl.tian.latent_data import points_on_circle

# %% [markdown]
# The paper's nine data angles, unless the `angles` parameter gives others.

# %%
PAPER_ANGLES = [
    -4 * np.pi / 5,
    -np.pi / 2,
    -2 * np.pi / 5,
    -np.pi / 6,
    0.0,
    np.pi / 5,
    2 * np.pi / 5,
    3 * np.pi / 5,
    4 * np.pi / 5,
]

data_angles = np.asarray(PAPER_ANGLES if P.angles is None else P.angles, dtype=float)

# %% [markdown]
# The claims, declared before anything is measured. They live in the chapter's claims ledger,
# `book/claims/tian-fig8-landscape.yaml` (statement, source, check, the paper's value, when they are
# required); the check of the linear maxima's position is two steps of the $\theta$ grid.

# %%
grid_step = 2 * np.pi / P.n_grid
run.show_ledger(two_grid_steps=2 * grid_step)

# %% [markdown]
# ## The experiment
#
# `nlcl.tian.landscape.energy_on_circle` evaluates $\mathcal{E}_\alpha(\theta)$ for all grid angles at
# once (uniform $\alpha$, no augmentation); `periodic_local_maxima` finds the maxima on the periodic
# grid.
#
# ```{nlcl-source} nlcl.tian.latent_data.points_on_circle nlcl.tian.landscape.energy_on_circle nlcl.tian.landscape.periodic_local_maxima
# ```

# %%
x = points_on_circle(data_angles)
thetas = np.linspace(-np.pi, np.pi, P.n_grid, endpoint=False)
activations = dict.fromkeys([P.activation, "linear"])
energies = {act: energy_on_circle(x, thetas, act) for act in activations}
maxima = {act: thetas[periodic_local_maxima(e)] for act, e in energies.items()}

# %% [markdown]
# The linear prediction: the top principal direction $\pm\boldsymbol{\phi}_1$, by
# eigendecomposition of the data covariance, and the largest angular distance of a linear
# maximum from it.
#
# ```{nlcl-source} nlcl.tian.circle_landscape.angular_distance
# ```

# %%
cov = np.cov(x.T, bias=True)
phi1 = np.linalg.eigh(cov)[1][:, -1]
phi1_angles = np.array([np.arctan2(phi1[1], phi1[0]), np.arctan2(-phi1[1], -phi1[0])])
lin_error = (
    float(max(angular_distance(m, phi1_angles).min() for m in maxima["linear"]))
    if len(maxima["linear"])
    else float("inf")
)

# %% [markdown]
# The pairs of nonlinear maxima that are neither orthogonal nor (anti)parallel.

# %%
w_max = np.stack([np.cos(maxima[P.activation]), np.sin(maxima[P.activation])], axis=1)
cos = np.abs(w_max @ w_max.T)[np.triu_indices(len(w_max), k=1)]
n_oblique = int(np.sum((cos > 0.05) & (cos < 0.95)))
run.glue("fig8-n-pairs", len(cos))
run.glue("fig8-oblique-fraction", float(n_oblique / max(len(cos), 1)))

# %% [markdown]
# Robustness: the count on a grid ten times coarser, and the smallest prominence of a maximum
# relative to the largest energy.

# %%
coarse = np.linspace(-np.pi, np.pi, max(P.n_grid // 10, 8), endpoint=False)
n_coarse = len(periodic_local_maxima(energy_on_circle(x, coarse, P.activation)))
e_act = energies[P.activation]
idx = periodic_local_maxima(e_act)
prominence = (
    peak_prominences(np.tile(e_act, 3), idx + len(e_act))[0] / e_act.max()
    if len(idx)
    else np.array([np.nan])
)
run.glue("fig8-n-coarse", n_coarse)
run.glue("fig8-min-prominence", float(prominence.min()))

# %% [markdown]
# ## Figure 8
#
# Both curves are scaled so that their maximum is 1, as in the paper; dotted vertical lines mark
# the data points. The right panel shows the same maxima as directions in the plane.
#
# ```{nlcl-source} nlcl.tian.circle_landscape.plot_circle_landscape
# ```

# %%
plot_circle_landscape(energies, maxima, thetas, x, data_angles)
plt.show()

# %% [markdown]
# ## Claim checks

# %%
run.claim("fig8-relu-maxima").measure(len(maxima[P.activation]))
run.claim("fig8-linear-maxima").measure(len(maxima["linear"]))
run.claim("fig8-linear-at-pca").measure(lin_error)
run.claim("fig8-relu-not-orthogonal").measure(n_oblique)

# %% [markdown]
# ## What we learned
#
# The ReLU energy has {glue:text}`fig8-relu-maxima` local maxima on the circle, against
# {glue:text}`fig8-linear-maxima` for the linear one, which sit at the top principal direction (largest
# angular error {glue:text}`fig8-linear-at-pca:.2e` radians). Of the {glue:text}`fig8-n-pairs` pairs of
# ReLU maxima, {glue:text}`fig8-relu-not-orthogonal` are neither orthogonal nor antipodal (a fraction of
# {glue:text}`fig8-oblique-fraction:.2f`): the nonlinear optima are not the eigenvectors of any one
# matrix. The count does not depend on the grid: a grid ten times coarser finds
# {glue:text}`fig8-n-coarse` maxima. Some maxima are shallow (the smallest rises
# {glue:text}`fig8-min-prominence:.1e` of the maximum energy above its surroundings) but they are genuine
# kinks of the piecewise-quadratic energy, not grid noise. Each maximum of the ReLU curve sits
# between two consecutive normals of data points, where the gated covariance
# $\mathbb{C}_\alpha[\tilde{\mathbf{x}}^\mathbf{w}]$ is constant and its top eigenvector is a fixed point
# of the dynamics (a *locally maximal eigenvector*, Definition 3).
#
# **What's next.** {doc}`tian-one-layer` explains *why*: Lemma 3's dynamics, locally maximal
# eigenvectors and when they are stable.

# %%
run.finish()

# %% [markdown]
# ## Try it yourself
#
# 1. Give the filter a leaky ReLU, which is still piecewise linear but keeps a small slope (0.05) on
#    the negative side:
#    `nlcl run tian-fig8-landscape -p activation leaky_relu`. Does the gating argument (a new matrix
#    each time $\mathbf{w}$ crosses a normal) still produce many oblique maxima in Figure 8?
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: `fig8-relu-maxima` = 8 (pass),
#    `fig8-linear-maxima` = 2 (pass), `fig8-linear-at-pca` = 7.5e-4 rad (pass) and
#    `fig8-relu-not-orthogonal` = 25 oblique pairs (pass); the claims are reported, not required,
#    outside the paper's setting. A leaky ReLU still changes slope at each normal, so the landscape
#    keeps one maximum per region, as with ReLU.
#    :::
#
# 2. Take the even nonlinearity $h(x) = x^2$: `nlcl run tian-fig8-landscape -p activation quadratic`.
#    The energy is then a quartic form in $\mathbf{w}$, smooth everywhere: how many maxima does it
#    have, and are they oblique?
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: `fig8-relu-maxima` = 4 (fail against
#    ≥ 8, not required) and `fig8-relu-not-orthogonal` = 0 (fail, not required); the linear claims
#    pass as before (2 maxima, 7.5e-4 rad from $\pm\boldsymbol{\phi}_1$). Without kinks there are no
#    regions to hold extra maxima: the smooth quartic has two antipodal pairs, orthogonal to each
#    other, as a PCA-like landscape would.
#    :::
#
# 3. Take a smooth, odd, saturating nonlinearity: `nlcl run tian-fig8-landscape -p activation tanh`.
#
#    :::{dropdown} Answer
#    Measured by the book at the ci profile, seed 0, on CPU: `fig8-relu-maxima` = 2 (fail against
#    ≥ 8, not required) and `fig8-relu-not-orthogonal` = 0 (fail, not required); the linear claims
#    pass. On projections $\mathbf{w}^\top\mathbf{x} \in [-1, 1]$, $\tanh$ is smooth, odd and
#    monotone, and its landscape keeps the linear one's single pair of maxima: the many local optima
#    come from the kinks of a gating nonlinearity.
#    :::

# %% [markdown]
# ## References
#
# - {cite:t}`tian2023nonlinearity` ([arXiv:2206.01342](https://arxiv.org/abs/2206.01342),
#   [OpenReview](https://openreview.net/forum?id=s130rTE3U_X)): the energy $\mathcal{E}_\alpha$ (Eqs. 3, 5,
#   6), the nine-point experiment of App. E.1 and Figure 8, and the claims this chapter checks.
