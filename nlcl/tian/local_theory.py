"""Quantitative local theory of the one-layer dynamics (Tian 2023, Sec. 3.2-3.3, App. B.3-B.4).

* Theorem 2's bound on the local roughness, ρ(w*) ≤ C₀³ vol(C₀)/π · r(w*, α), with the adjusted
  density of an isotropic Gaussian mixture on the plane w*ᵀx = 0 (:func:`ball_volume`,
  :func:`mixture_plane_density_max`, :func:`theorem2_bound`);
* the local roughness of a smooth A(w) by central differences (:func:`roughness_jacobian`) and the
  growth of perturbations under the dynamics (:func:`perturbation_growth`), to test Theorem 1 on
  both sides of λ_gap = ρ;
* which eigenvector of A(w) a point is, and how far it is from a critical point
  (:func:`critical_point_diagnostics`), to tell critical points from LMEs (Lemma 3, Def. 3), and
  Corollary 2's comparison of the two α at critical points of the Gaussian α
  (:func:`gaussian_alpha_roughness`);
* the irregularity ω(w) of Def. 4 / Eq. 10, estimates of L and κ (Lemma 9), and the condition of
  Eq. 11 on the neighbourhood B_γ (:func:`irregularity`, :func:`lipschitz_estimate`,
  :func:`kappa_estimate`, :func:`eq11_sup_omega`), also with L and κ taken on B_γ itself, where
  the proof of Theorem 3 applies them (:func:`eq11_sup_omega_on_cap`).

Explained in the chapter ``book/tian-one-layer.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import gamma as gamma_fn
from math import pi
from typing import Any

import numpy as np

from nlcl.core.activations import Activation, get_activation
from nlcl.core.validate import ParameterError
from nlcl.tian.latent_data import as_rng

__all__ = [
    "ball_volume",
    "critical_point_diagnostics",
    "gaussian_alpha_roughness",
    "eq11_radius",
    "eq11_sup_omega",
    "eq11_sup_omega_on_cap",
    "feature_gaussian_alpha",
    "irregularity",
    "kappa_estimate",
    "lipschitz_estimate",
    "mixture_plane_density_max",
    "perturbation_growth",
    "roughness_jacobian",
    "theorem2_bound",
]

AFn = Callable[[np.ndarray], np.ndarray]


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
    return v


def _unit_rows(w, name: str = "w") -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.ndim < 1 or w.shape[-1] < 2:
        raise ParameterError(f"{name} must have shape (..., d) with d ≥ 2, got {w.shape}")
    n = np.linalg.norm(w, axis=-1, keepdims=True)
    if not np.all(np.isfinite(w)) or np.any(n == 0):
        raise ParameterError(f"{name} must be finite and non-zero")
    return w / n


def ball_volume(dim: int, radius: float) -> float:
    """vol(C₀): volume of the d-dimensional ball of radius C₀, π^{d/2} C₀^d / Γ(d/2 + 1) (Tian 2023, Eq. 78)."""
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise ParameterError(f"dim must be a positive integer, got {dim!r}")
    radius = _positive("radius", radius)
    return float(pi ** (dim / 2) * radius**dim / gamma_fn(dim / 2 + 1))


def theorem2_bound(c0: float, dim: int, r: float) -> float:
    """Right side of Theorem 2 (Tian 2023, Eq. 93): C₀³ vol(C₀) / π · r(w*, α).

    ``c0`` bounds the input norm (‖x‖ ≤ C₀), ``dim`` is d, ``r`` = Σ_l z_l² max_{w*ᵀx=0} p̃_l(x; α)
    (for uniform α the data density's maximum on the plane, Eq. 95; for the Gaussian α of
    Corollary 2, z₀(α_g) times it, Eq. 99).
    """
    c0 = _positive("c0", c0)
    r = float(r)
    if not (np.isfinite(r) and r >= 0):
        raise ParameterError(f"r must be a finite non-negative number, got {r!r}")
    return c0**3 * ball_volume(dim, c0) / pi * r


def _mixture_density(x: np.ndarray, centers: np.ndarray, weights: np.ndarray, sigma: float) -> np.ndarray:
    d = centers.shape[1]
    sq = ((x[:, None, :] - centers[None]) ** 2).sum(-1)  # (n, C)
    return (weights[None] * np.exp(-sq / (2 * sigma**2))).sum(-1) / (2 * pi * sigma**2) ** (d / 2)


def mixture_plane_density_max(
    centers, weights, sigma: float, w, n_iter: int = 100
) -> tuple[float, np.ndarray]:
    """max_{wᵀx = 0} p_D(x) for p_D = Σ_c π_c N(μ_c, σ²I) (Tian 2023, Thm. 2: r(w, α_u), Eq. 95).

    Restricted to the plane, each component is again an isotropic Gaussian centred at the
    projection of μ_c, scaled by exp(−(wᵀμ_c)²/2σ²); the maximum is found by mean-shift
    (fixed-point) iterations within the plane started from every projected centre (each step
    increases the density). Returns (the maximal density, its location).
    """
    centers = np.atleast_2d(np.asarray(centers, dtype=np.float64))
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (centers.shape[0],) or np.any(weights < 0) or not np.isclose(weights.sum(), 1.0):
        raise ParameterError("weights must be non-negative, sum to 1, one per row of centers")
    sigma = _positive("sigma", sigma)
    w = _unit_rows(w)
    if w.shape != (centers.shape[1],):
        raise ParameterError(f"w must be one vector of dimension {centers.shape[1]}, got {w.shape}")
    proj = centers - np.outer(centers @ w, w)
    x = proj.copy()
    for _ in range(int(n_iter)):
        sq = ((x[:, None, :] - proj[None]) ** 2).sum(-1)
        k = weights[None] * np.exp(-((centers @ w) ** 2)[None] / (2 * sigma**2) - sq / (2 * sigma**2))
        x = (k @ proj) / np.maximum(k.sum(-1, keepdims=True), 1e-300)
    dens = _mixture_density(x, centers, weights, sigma)
    i = int(np.argmax(dens))
    return float(dens[i]), x[i]


def _tangent_basis(w: np.ndarray) -> np.ndarray:
    """Orthonormal basis (d−1, d) of the tangent space w⊥."""
    d = w.shape[0]
    q, _ = np.linalg.qr(np.column_stack([w, np.eye(d)]))
    return q[:, 1:d].T


def roughness_jacobian(a_fn: AFn, w, h: float = 1e-5) -> np.ndarray:
    """Local roughness ρ(w) of a smooth A(w) (Tian 2023, Sec. 3.2, used by Thm. 1).

    ρ(w) is the smallest scalar with ‖(A(v) − A(w))w‖ ≤ ρ‖v − w‖ + O(‖v − w‖²); for a
    differentiable A it is the operator norm of u ↦ (dA_w[u]) w on the tangent space w⊥,
    computed here by central differences along an orthonormal tangent basis (v on the sphere).
    ``w`` (…, d) → (…). For a piecewise-constant A (ReLU on discrete data) use
    :func:`nlcl.tian.landscape.local_roughness` instead.
    """
    h = _positive("h", h)
    w = _unit_rows(w)
    flat = w.reshape(-1, w.shape[-1])
    out = np.empty(len(flat))
    for i, wi in enumerate(flat):
        basis = _tangent_basis(wi)  # (d-1, d)
        vp = np.cos(h) * wi + np.sin(h) * basis
        vm = np.cos(h) * wi - np.sin(h) * basis
        jac = ((a_fn(vp) - a_fn(vm)) @ wi) / (2 * h)  # (d-1, d): column j = dA[e_j] w
        out[i] = np.linalg.norm(jac, 2)
    return out.reshape(w.shape[:-1])


def critical_point_diagnostics(a_fn: AFn, w) -> dict[str, np.ndarray]:
    """Is w a critical point of ẇ = P⊥_w A(w) w, and is it an LME? (Tian 2023, Lemma 3, Def. 3).

    For ``w`` (…, d) returns arrays (…): ``residual`` = ‖P⊥_w A(w) w‖ / max|λ(A(w))| (0 at a
    critical point, invariant under rescaling A), ``rank`` = j of the eigenvector φ_{j+1}(w) of A(w)
    closest to w (0: the top eigenvector, as Def. 3 requires), ``eig_cos`` = |cos(w, φ_{rank+1})|,
    ``top_cos`` = |cos(w, φ₁(w))|, ``lam1`` = λ₁(A(w)). A critical point is an eigenvector of A(w)
    (``eig_cos`` = 1); it is an LME when that eigenvector is the top one (``rank`` = 0).
    """
    w = _unit_rows(w)
    a = np.asarray(a_fn(w), dtype=np.float64)
    if a.shape != w.shape + (w.shape[-1],):
        raise ParameterError(
            f"a_fn must map w {w.shape} to matrices {w.shape + (w.shape[-1],)}, got {a.shape}"
        )
    lam, phi = np.linalg.eigh(a)
    aw = (a @ w[..., None])[..., 0]
    res = aw - (aw * w).sum(-1, keepdims=True) * w
    scale = np.maximum(np.abs(lam).max(-1), 1e-300)
    cos = np.abs(np.einsum("...i,...ij->...j", w, phi))  # (…, d), ascending eigenvalues
    j = cos.argmax(-1)
    return {
        "residual": np.linalg.norm(res, axis=-1) / scale,
        "rank": w.shape[-1] - 1 - j,
        "eig_cos": cos.max(-1),
        "top_cos": cos[..., -1],
        "lam1": lam[..., -1],
    }


def _count_arg(name: str, value, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= high:
        raise ParameterError(f"{name} must be an integer in [1, {high}], got {value!r}")
    return int(value)


def feature_gaussian_alpha(g, tau: float) -> np.ndarray:
    """Corollary 2's α_g of a scalar feature: α_ij = exp(−(g_i − g_j)²/2τ), g (…, N) → (…, N, N).

    Lemma 1's Gaussian α (:func:`nlcl.tian.contrastive.gaussian_alpha`) for a 1-D feature such as
    g = h(wᵀx), equal to ``gaussian_alpha(g[..., None], tau)`` up to rounding: the differences
    are taken directly instead of through the Gram matrix, which for one dimension is a batch of
    outer products and most of the cost of the Gaussian-α dynamics (``book/tian-one-layer.py``).
    """
    tau = _positive("tau", tau)
    g = np.asarray(g, dtype=np.float64)
    if g.ndim < 1:
        raise ParameterError(f"g must have shape (..., N), got a scalar {g!r}")
    d = g[..., :, None] - g[..., None, :]
    np.multiply(d, d, out=d)
    np.divide(d, -2.0 * tau, out=d)
    return np.exp(d, out=d)


def gaussian_alpha_roughness(
    x,
    activation: str,
    tau: float,
    w0,
    steps: int = 300,
    lr: float = 0.5,
    radius: float = 0.02,
    tol: float = 1e-3,
    rng=None,
    min_crossing: int = 5,
) -> dict[str, np.ndarray]:
    """Roughness of uniform and Gaussian α at critical points of the Gaussian α (Tian 2023, Cor. 2, Eqs. 96-100).

    On samples ``x`` (N, d) without augmentation, the Gaussian-α dynamics ẇ = P⊥_w A_g(w) w (α_g of
    Corollary 2 re-evaluated at every step, stop-gradient; ``steps`` scale-free Euler steps of size
    ``lr``) runs from each row of ``w0``. At the end point w* (with α_g held at w*, as Eq. 96 does)
    it returns ``w``, ``settled`` (:func:`critical_point_diagnostics` residual ≤ ``tol``: a critical
    point), the diagnostics ``rank``/``top_cos``/``eig_cos`` of A_g(w*) (rank 0: an LME, Def. 3),
    ``z0`` = mean exp(−h²(w*ᵀx)/2τ) (Eq. 100), ``rho_g``/``rho_u`` (:func:`nlcl.tian.landscape.local_roughness`
    with the same random directions) and ``lam1_g``/``lam1_u``. ρ/λ₁ does not change when α is rescaled.

    With ReLU a sample's A(w) is piecewise constant: below the angle of the samples nearest to the
    plane w*ᵀx = 0 both ρ are exactly 0 (Theorem 2's ρ is an N → ∞ quantity). The perturbation radius
    at each w* is therefore max(``radius``, 1.5 × the angle to the plane of its ``min_crossing``-th
    nearest sample), returned as ``radius``.
    """
    from nlcl.core.activations import get_activation
    from nlcl.tian.contrastive import stack_views
    from nlcl.tian.landscape import FeatureAlpha, local_roughness, train_filters
    from nlcl.tian.one_layer_gate import same_view_gate_fn as gate_fn

    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ParameterError(f"x must be (N, d) samples, got shape {x.shape}")
    tau = _positive("tau", tau)
    h = get_activation(activation)
    v = stack_views(x, x)

    alpha_g = FeatureAlpha(lambda w: h(w @ x.T), lambda g: feature_gaussian_alpha(g, tau))

    a_g, a_u = gate_fn(v, activation, alpha_g), gate_fn(v, activation)  # A_g(w), A_u(w) (Lemma 3)

    w0 = _unit_rows(w0, "w0")
    if w0.ndim != 2 or w0.shape[1] != x.shape[1]:
        raise ParameterError(f"w0 must be (K, {x.shape[1]}) starting filters, got shape {w0.shape}")
    w = train_filters(a_g, w0, lr=lr, steps=steps, scale_free=True)
    diag = critical_point_diagnostics(a_g, w)
    held = alpha_g(w)  # α_g at w*, held fixed
    seed = int(as_rng(rng).integers(2**62))
    k = _count_arg("min_crossing", min_crossing, len(x))
    ang = np.sort(np.arcsin(np.abs(w @ x.T) / np.linalg.norm(x, axis=-1).clip(1e-300)), axis=-1)[..., k - 1]
    rad = np.maximum(_positive("radius", radius), 1.5 * ang)
    rho_g = np.array(
        [
            local_roughness(gate_fn(v, activation, held[i]), wi, radius=r, rng=seed)
            for i, (wi, r) in enumerate(zip(w, rad))
        ]
    )
    rho_u = np.array([local_roughness(a_u, wi, radius=r, rng=seed) for wi, r in zip(w, rad)])
    return {
        "w": w,
        "settled": diag["residual"] <= tol,
        **{k: diag[k] for k in ("residual", "rank", "top_cos", "eig_cos")},
        "radius": rad,
        "z0": np.exp(-(h(w @ x.T) ** 2) / (2 * tau)).mean(-1),
        "rho_g": rho_g,
        "rho_u": rho_u,
        "lam1_g": diag["lam1"],
        "lam1_u": np.linalg.eigvalsh(a_u(w))[..., -1],
    }


def perturbation_growth(
    a_fn: AFn,
    w_star,
    angle: float = 0.01,
    n_dirs: int = 8,
    lr: float = 0.1,
    steps: int = 2000,
    rng=None,
    scale_free: bool = True,
) -> np.ndarray:
    """‖w(T) − w*‖ / ‖w(0) − w*‖ for perturbations of a fixed point under Eq. 7 (Tian 2023, Thm. 1).

    Each of ``n_dirs`` random tangent directions tilts ``w_star`` (…, d) by ``angle`` radians;
    the projected dynamics ẇ = P⊥_w A(w) w is integrated by :func:`nlcl.tian.landscape.train_filters`
    (``steps`` Euler steps of size ``lr``; with ``scale_free`` each step is divided by λ₁(A(w)), a
    change of time scale that keeps fixed points and their stability and keeps the Euler scheme
    stable for any overall scale of A). A ratio below 1 means the perturbation decayed
    (stable), above 1 that it grew. Returns (n_dirs, …).
    """
    from nlcl.tian.landscape import train_filters

    angle = _positive("angle", angle)
    w_star = _unit_rows(w_star, "w_star")
    u = as_rng(rng).standard_normal((int(n_dirs),) + w_star.shape)
    u -= (u * w_star).sum(-1, keepdims=True) * w_star
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    w0 = np.cos(angle) * w_star + np.sin(angle) * u
    wt = train_filters(a_fn, w0, lr=lr, steps=steps, scale_free=scale_free)
    return np.linalg.norm(wt - w_star, axis=-1) / np.linalg.norm(w0 - w_star, axis=-1)


def irregularity(c, lam1, gap, lipschitz, kappa) -> np.ndarray:
    """Irregularity ω(w) of Def. 4 (Tian 2023, Eq. 10).

    μ = ½(1 + c) c⁻² (1 − λ_gap/λ₁)², ω = μ + 2κL²(1 + μc) + 2L λ_gap⁻¹ √(μ(1 + μc)), with
    c = wᵀφ₁(w) (correlation function), λ₁ and λ_gap of A(w), L the Lipschitz constant of A on the
    sphere and κ the eigenvector bound of Lemma 9. Broadcasts; c = 0 or λ_gap = 0 gives ω = ∞.
    """
    c, lam1, gap = (np.asarray(a, dtype=np.float64) for a in (c, lam1, gap))
    lipschitz, kappa = float(lipschitz), float(kappa)
    if lipschitz < 0 or kappa < 0:
        raise ParameterError(f"lipschitz and kappa must be ≥ 0, got {lipschitz!r}, {kappa!r}")
    if np.any(lam1 <= 0):
        raise ParameterError("lam1 must be positive (Theorem 3 assumes A(w) positive definite, App. B.4)")
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = 0.5 * (1 + c) / c**2 * (1 - gap / lam1) ** 2
        nu = 2 * kappa * lipschitz**2 * (1 + mu * c) + 2 * lipschitz / gap * np.sqrt(mu * (1 + mu * c))
        om = mu + nu
    return np.where((c == 0) | (gap <= 0), np.inf, om)


def _sphere_pairs(w: np.ndarray, radius: float, rng) -> np.ndarray:
    u = rng.standard_normal(w.shape)
    u -= (u * w).sum(-1, keepdims=True) * w
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    return np.cos(radius) * w + np.sin(radius) * u


def lipschitz_estimate(
    a_fn: AFn, n_points: int = 256, dim: int | None = None, base=None, radius: float = 1e-3, rng=None
) -> float:
    """Lower estimate of L, the Lipschitz constant of A(w) on the unit sphere (Tian 2023, Sec. 3.3).

    max ‖A(w) − A(w')‖₂ / ‖w − w'‖ over pairs at geodesic distance ``radius``: ``n_points`` base
    points w uniform on the sphere of dimension ``dim`` (or the rows of ``base``), each with one
    random partner. For a differentiable A this tends to sup_w ‖dA_w‖ as ``radius`` → 0; for a
    piecewise-constant A (ReLU on discrete data) it grows like 1/radius: L = ∞.
    """
    rng = as_rng(rng)
    radius = _positive("radius", radius)
    if base is None:
        if dim is None:
            raise ParameterError("lipschitz_estimate needs dim (or base points)")
        base = rng.standard_normal((int(n_points), int(dim)))
    w = _unit_rows(base, "base")
    v = _sphere_pairs(w, radius, rng)
    diff = a_fn(v) - a_fn(w)
    return float((np.linalg.norm(diff, ord=2, axis=(-2, -1)) / np.linalg.norm(v - w, axis=-1)).max())


def kappa_estimate(a_fn: AFn, base, radius: float = 0.05, n_pairs: int = 64, rng=None) -> float:
    """Lower estimate of κ, the second-order eigenvector bound of Lemma 9 (Tian 2023, Eq. 191).

    max ‖φ₁' − (φ₁ + Δφ₁)‖ / ‖δA‖₂² over pairs (w, w'), w from the rows of ``base`` and w' at
    geodesic distance up to ``radius``, with Δφ₁ = Σ_{j>1} φ_jᵀ δA φ₁/(λ₁ − λ_j) φ_j (Eq. 190) and
    φ₁' signed to agree with φ₁.
    """
    rng = as_rng(rng)
    radius = _positive("radius", radius)
    base = _unit_rows(base, "base")
    w = base[rng.integers(0, len(base), int(n_pairs))]
    u = rng.standard_normal(w.shape)
    u -= (u * w).sum(-1, keepdims=True) * w
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    th = rng.uniform(0, radius, (len(w), 1))
    v = np.cos(th) * w + np.sin(th) * u
    return _kappa_ratio(a_fn, w, v)


def _kappa_ratio(a_fn: AFn, w: np.ndarray, v: np.ndarray) -> float:
    """max ‖φ₁' − (φ₁ + Δφ₁)‖ / ‖δA‖₂² over the pairs (w, v) of rows (Eqs. 190-191)."""
    a, a2 = a_fn(w), a_fn(v)
    lam, phi = np.linalg.eigh(a)
    lam2, phi2 = np.linalg.eigh(a2)
    p1, p1b = phi[..., :, -1], phi2[..., :, -1]
    p1b = p1b * np.sign((p1 * p1b).sum(-1, keepdims=True) + 1e-300)
    da = a2 - a
    coef = np.einsum("nij,nik,nk->nj", phi, da, p1)[:, :-1] / (lam[:, -1:] - lam[:, :-1])
    dphi = np.einsum("nij,nj->ni", phi[..., :, :-1], coef)
    err = np.linalg.norm(p1b - (p1 + dphi), axis=-1)
    den = np.linalg.norm(da, ord=2, axis=(-2, -1)) ** 2
    ok = den > 1e-24
    return float((err[ok] / den[ok]).max()) if ok.any() else 0.0


def eq11_radius(gamma: float, c0: float) -> float:
    """Radius of B_γ = {w : ‖w − w(0)‖ ≤ √(2(1+γ)(1−c₀)) / (1 − √γ)} (Tian 2023, Eqs. 103-104, 204)."""
    if not 0 < gamma < 1:
        raise ParameterError(f"gamma must lie in (0, 1), got {gamma!r}")
    return float(np.sqrt(2 * (1 + gamma) * max(1 - c0, 0.0)) / (1 - np.sqrt(gamma)))


def _shifted_stats(a_fn: AFn, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(c, λ₁, λ₁ − λ₂) of the shifted Â(w) = A(w) − λ_min I + 10⁻¹²I at unit rows ``w`` (Tian 2023,
    App. B.4, Eq. 104: positive definite, with the eigenvectors and gaps of A); c = |φ₁ᵀw|."""
    lam, phi = np.linalg.eigh(a_fn(w))
    lam = lam - lam[..., :1] + 1e-12
    c = np.abs((phi[..., :, -1] * w).sum(-1))
    return c, lam[..., -1], lam[..., -1] - lam[..., -2]


def _sample_cap(rng: np.random.Generator, w0: np.ndarray, rad: float, n: int) -> np.ndarray:
    """``w0`` and ``n`` points of the cap around it of chordal radius ``rad`` (B_γ of Eq. 11): uniform
    random angles up to the cap's, in random tangent directions; (n + 1, d)."""
    theta_max = np.pi if rad >= 2 else 2 * np.arcsin(rad / 2)
    u = rng.standard_normal((n, w0.shape[0]))
    u -= np.outer(u @ w0, w0)
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    th = rng.uniform(0, theta_max, (n, 1))
    return np.vstack([w0[None], np.cos(th) * w0 + np.sin(th) * u])


def eq11_sup_omega(
    a_fn: AFn,
    w0,
    gammas: Sequence[float],
    lipschitz: float,
    kappa: float,
    n_points: int = 64,
    rng=None,
) -> np.ndarray:
    """sup_{w ∈ B_γ} ω(w) for each γ (the left side of Tian 2023, Eq. 11), by sampling B_γ.

    B_γ is the cap around ``w0`` of chordal radius :func:`eq11_radius` (γ, c₀ = c(w0)); it is
    sampled with w0 itself and ``n_points`` points at uniform random angles in random tangent
    directions. ω uses the shifted, positive definite Â(w) = A(w) − λ_min I + 10⁻¹²I (App. B.4,
    Eq. 104), whose eigenvectors and gaps are those of A. Eq. 11 holds for γ when the returned
    value is ≤ γ (a sampled sup is a lower estimate: failure is conclusive, success is not).
    """
    rng = as_rng(rng)
    w0 = _unit_rows(w0, "w0")
    if w0.ndim != 1:
        raise ParameterError("w0 must be one vector (d,)")

    c0 = float(_shifted_stats(a_fn, w0[None])[0][0])
    out = []
    for g in gammas:
        rad = eq11_radius(float(g), c0)
        pts = _sample_cap(rng, w0, rad, int(n_points))
        c, lam1, gap = _shifted_stats(a_fn, pts)
        out.append(float(irregularity(c, lam1, gap, lipschitz, kappa).max()))
    return np.array(out)


def eq11_sup_omega_on_cap(
    a_fn: AFn,
    w0,
    gammas: Sequence[float],
    n_points: int = 32,
    radius: float = 1e-4,
    global_lipschitz: float | None = None,
    rng=None,
) -> dict[str, np.ndarray]:
    """Eq. 11 with L and κ estimated on B_γ itself (Tian 2023, Thm. 3; Lemma 10, Eqs. 194-200; Lemma 11).

    Theorem 3 states Eq. 11 with L the Lipschitz constant of A(w) on the whole sphere, but its proof
    applies L and κ only to consecutive iterates w(t), w(t+1), which the induction of Lemma 11 keeps
    in B_γ (Eqs. 206-212) before Lemma 10 uses them (Eq. 200: ‖δA(t)‖ ≤ L‖δw(t)‖; Eq. 194: κ of
    Lemma 9 for δA(t)). So the constants of B_γ suffice (our reading of the proof). For each γ the
    cap B_γ around ``w0`` (chordal radius :func:`eq11_radius`, c₀ = c(w0)) is sampled as in
    :func:`eq11_sup_omega` (``w0`` and ``n_points`` points at uniform random angles); L_γ is the
    largest ‖A(v) − A(w)‖₂/‖v − w‖ over the sampled points w with a partner v at geodesic distance
    ``radius``, κ_γ the largest ratio of Eq. 191 over those pairs and over random pairs of sampled
    points; ω (Eq. 10, on the shifted Â of Eq. 104) is evaluated with L_γ and κ_γ at every sampled
    point. Both constants are lower estimates, so a failure of Eq. 11 found this way is conclusive.

    Returns, per γ: ``sup_omega`` (the left side of Eq. 11), ``sup_nu`` (the largest ν = ω − μ of
    Eq. 193 over the points: the part of ω that comes from A varying on B_γ), ``lipschitz`` (L_γ), ``kappa`` (κ_γ),
    ``radius`` (of B_γ) and, when ``global_lipschitz`` (the paper's L, e.g. from
    :func:`lipschitz_estimate` over the sphere) is given, ``sup_omega_global`` with it in place of L_γ.
    """
    rng = as_rng(rng)
    w0 = _unit_rows(w0, "w0")
    if w0.ndim != 1:
        raise ParameterError("w0 must be one vector (d,)")
    radius = _positive("radius", radius)
    n = _count_arg("n_points", n_points, 1_000_000)

    c0 = float(_shifted_stats(a_fn, w0[None])[0][0])
    keys = ("sup_omega", "sup_nu", "lipschitz", "kappa", "radius") + (
        ("sup_omega_global",) if global_lipschitz is not None else ()
    )
    out: dict[str, list[float]] = {k: [] for k in keys}
    for g in gammas:
        rad = eq11_radius(float(g), c0)
        pts = _sample_cap(rng, w0, rad, n)
        near = _sphere_pairs(pts, radius, rng)
        lip = float(
            (
                np.linalg.norm(a_fn(near) - a_fn(pts), ord=2, axis=(-2, -1))
                / np.linalg.norm(near - pts, axis=-1)
            ).max()
        )
        far = pts[rng.permutation(len(pts))]
        kap = max(_kappa_ratio(a_fn, pts, near), _kappa_ratio(a_fn, pts, far))
        c, lam1, gap = _shifted_stats(a_fn, pts)
        out["sup_omega"].append(float(irregularity(c, lam1, gap, lip, kap).max()))
        out["sup_nu"].append(
            float((irregularity(c, lam1, gap, lip, kap) - irregularity(c, lam1, gap, 0.0, 0.0)).max())
        )
        out["lipschitz"].append(lip)
        out["kappa"].append(kap)
        out["radius"].append(rad)
        if global_lipschitz is not None:
            out["sup_omega_global"].append(
                float(irregularity(c, lam1, gap, float(global_lipschitz), kap).max())
            )
    return {k: np.array(v) for k, v in out.items()}


def noisy_population_gate_matrix(
    atoms: Any, probs: Any, sigma: float, w: Any, activation: str | Activation = "relu"
) -> np.ndarray:
    """A(w) = V[x̃ʷ] for x = a + σz, a a discrete atom, z ~ N(0, I) (Tian 2023, Cor. 1, Eqs. 6-7).

    The population matrix of :func:`nlcl.tian.landscape.population_gate_matrix` with every atom blurred by isotropic
    Gaussian noise, in closed form, for the homogeneous piecewise-linear activations (Assumption 1):
    ReLU and LeakyReLU, gate(t) = 1 for t > 0 and β below (β = 0 for ReLU). With g = 1(wᵀx > 0),
    x̃ = x(β + (1 − β)g), so E[x̃] = βE[x] + (1 − β)E[xg] and E[x̃x̃ᵀ] = β²E[xxᵀ] + (1 − β²)E[xxᵀg];
    per atom, with s = wᵀa/σ (‖w‖ = 1), Φ and φ the normal cdf and density (truncated-normal moments):

    E[xg] = aΦ(s) + σφ(s)w,  E[xxᵀg] = aaᵀΦ(s) + σφ(s)(awᵀ + waᵀ) + σ²(Φ(s)I − sφ(s)wwᵀ).

    Unlike the atoms alone (A piecewise constant, Lipschitz constant L = ∞), A(w) is smooth in w, as
    Theorem 3 assumes. ``atoms`` (K, d), ``probs`` (K,), ``w`` (…, d) → (…, d, d).
    """
    from scipy.special import ndtr

    x = np.asarray(atoms, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    if x.ndim != 2 or p.shape != (x.shape[0],):
        raise ValueError(f"atoms must be (K, d) and probs (K,), got {x.shape} and {p.shape}")
    sigma = float(sigma)
    if not (np.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a positive finite float, got {sigma!r}")
    act = get_activation(activation)
    if act.name not in ("relu", "leaky_relu"):
        raise ValueError(f"activation must be relu or leaky_relu (piecewise linear), got {act.name!r}")
    beta = act.slope if act.name == "leaky_relu" else 0.0
    d = x.shape[1]
    w = np.asarray(w, dtype=np.float64)
    if w.ndim < 1 or w.shape[-1] != d:
        raise ValueError(f"w must have shape (..., d) with d={d}, got shape {w.shape}")
    norm = np.linalg.norm(w, axis=-1, keepdims=True)
    if (norm == 0).any():
        raise ValueError("w must be nonzero (it is normalized to the unit sphere)")
    w = w / norm
    s = (w @ x.T) / sigma  # (…, K)
    cdf, pdf = ndtr(s), np.exp(-0.5 * s**2) / np.sqrt(2 * np.pi)
    pa = p * pdf  # (…, K)
    a_pdf = pa @ x  # Σ p φ(s) a, (…, d)
    ww = w[..., :, None] * w[..., None, :]
    exg = (p * cdf) @ x + sigma * pa.sum(-1)[..., None] * w
    exxg = (
        np.einsum("...k,ki,kj->...ij", p * cdf, x, x)
        + sigma * (a_pdf[..., :, None] * w[..., None, :] + w[..., :, None] * a_pdf[..., None, :])
        + sigma**2 * ((p * cdf).sum(-1)[..., None, None] * np.eye(d) - (pa * s).sum(-1)[..., None, None] * ww)
    )
    ex = p @ x
    exx = np.einsum("k,ki,kj->ij", p, x, x) + sigma**2 * np.eye(d)
    mean = beta * ex + (1 - beta) * exg
    return beta**2 * exx + (1 - beta**2) * exxg - mean[..., :, None] * mean[..., None, :]
