"""The experiments of Tian (2023), Sec. 2, as functions: InfoNCE as α-CL, Lemmas 1-3 measured.

The chapter ``book/tian-alpha-cl.py`` checks the facts the paper stands on; the reusable parts of
its experiments live here:

* :func:`relative_difference_per_trial` — ‖g − g'‖ / ‖g‖ per trial for gradients of many networks
  trained side by side (the InfoNCE gradient against the α-CL gradient, Eqs. 1-2);
* :func:`truncation_errors` — the error of the Lemma 1 feature map truncated at order K, measured
  and predicted (α_ij · Pr[Poisson(y_i y_j / τ) > K], App. A.1, Eqs. 19-22);
* :func:`lemma2_study` — one repetition of the Lemma 2 convergence study (Eq. 4) on a random
  mixture with a finite augmentation, and :func:`bias_z`, the bias of the mean over batches in
  Monte Carlo standard errors;
* :func:`corollary1_study` — Corollary 1 with a non-uniform (Gaussian) α and no augmentation:
  Eq. 3 on a batch whose empirical distribution is the population, against Σ_l z_l² V_{p̃_l}[g]
  built from Lemma 1's feature map;
* :func:`lemma3_relative_error` — the gap between autograd's projected gradient and
  P⊥_w A(w) w (Lemma 3, Eq. 7).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from scipy import stats

from nlcl.core.activations import Activation
from nlcl.core.validate import ParameterError
from nlcl.tian.contrastive import (
    contrastive_covariance,
    gaussian_alpha,
    gaussian_feature_map,
    population_contrastive_covariance,
    stack_views,
)
from nlcl.tian.landscape import one_layer_velocity, riemannian_gradient

__all__ = [
    "relative_difference_per_trial",
    "truncation_errors",
    "lemma2_study",
    "bias_z",
    "corollary1_study",
    "lemma3_relative_error",
]


def relative_difference_per_trial(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> np.ndarray:
    """‖a − b‖ / ‖a‖ per trial, the norms taken over all tensors of ``a`` and ``b`` together.

    ``a`` and ``b`` are gradients of the same parameters (each tensor has the trial as its leading
    dimension), e.g. ∇InfoNCE (Tian 2023, Eq. 1) and the gradient of the α-CL surrogate
    −Σ_i Σ_{j≠i} sg(α_ij)(d²_ij − d²_i) (Eq. 2). Returns a numpy array, one value per trial.
    """
    num = torch.sqrt(sum(((x - y) ** 2).flatten(1).sum(1) for x, y in zip(a, b)))
    den = torch.sqrt(sum((x**2).flatten(1).sum(1) for x in a))
    return (num / den).numpy()


def truncation_errors(
    g0: np.ndarray, tau: float, max_order: int = 200, target: float = 1e-10
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """The Lemma 1 feature map truncated at order K = 0, 1, ..., K*: measured and predicted error.

    α_ij = exp(−(g_i − g_j)²/2τ) (1-D ``g0``, Tian 2023, Lemma 1) factors as φ(x_i)ᵀφ(x_j) with the
    feature map of App. A.1 (Eqs. 17-22). With y = g − min g and s_ij = y_i y_j / τ, dropping the
    orders above K leaves exactly α_ij · Pr[Poisson(s_ij) > K] (the tail of e^s). K* is the first
    order ≤ ``max_order`` whose predicted error is below ``target`` everywhere (``max_order`` if
    none). Returns ``(k_star, ks, measured, predicted)`` with ``measured[k] = α − φ_≤k φ_≤kᵀ`` and
    ``predicted[k]`` the Poisson tail, both of shape (K* + 1, N, N).
    """
    g0 = np.asarray(g0, dtype=float)
    if g0.ndim != 1:
        raise ParameterError(f"g0: a 1-D array of g on the samples is needed, got shape {g0.shape}")
    alpha_g = gaussian_alpha(g0, tau)
    y = g0 - g0.min()
    s = np.outer(y, y) / tau
    orders = np.arange(0, max_order + 1)
    predicted = alpha_g[None] * stats.poisson.sf(orders[:, None, None], s[None])
    k_star = (
        int(orders[np.argmax(predicted.max(axis=(1, 2)) < target)])
        if (predicted.max(axis=(1, 2)) < target).any()
        else int(orders[-1])
    )
    ks = np.arange(0, k_star + 1)
    phi = gaussian_feature_map(g0, tau, order=k_star)  # columns: order 0, 1, ..., K*
    measured = np.stack([alpha_g - phi[:, : k + 1] @ phi[:, : k + 1].T for k in ks])
    return k_star, ks, measured, predicted[: k_star + 1]


def lemma2_study(
    rng: np.random.Generator, ns: np.ndarray, n_repeats: int, family: str, tau: float
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One repetition of the Lemma 2 study (Tian 2023, Lemma 2, Eq. 4): mixture, features, batches.

    x0 takes 4 random values in R³ (Dirichlet(3) weights); the augmentation adds 0.5·ξ with ξ
    uniform on {±e1, ±e2, ±e3}; g(x) = ReLU(Gx) ∈ R² for a random G. ``family`` is "uniform" or
    "gaussian" (kernel e^{−‖a−b‖²/2τ} on x0). For each N in ``ns`` the contrastive covariance C_α[g]
    (Eq. 3) is computed on ``n_repeats`` independent batches and compared with the limit C_∞
    (:func:`~nlcl.tian.contrastive.population_contrastive_covariance`).

    Returns the law-of-total-variance gap (uniform limit against V[g] − E[V[g|x0]], Eqs. 31-42),
    the RMS relative error ‖C_α − C_∞‖_F / ‖C_∞‖_F per N, the ``n_repeats`` matrices C_α[g] at the
    largest N, and C_∞.
    """
    if family not in ("uniform", "gaussian"):
        raise ParameterError(f"family={family!r}: Lemma 2 needs kernel structure; 'uniform' or 'gaussian'")
    sigma = 0.5
    centers = rng.standard_normal((4, 3))
    probs = rng.dirichlet(np.full(4, 3.0))
    G = rng.standard_normal((2, 3))
    xi = np.concatenate([np.eye(3), -np.eye(3)])  # the 6 augmentation offsets

    def g_of(z):
        return np.maximum(z @ G.T, 0.0)

    g_all = g_of(centers[:, None, :] + sigma * xi[None])  # (4 atoms, 6 offsets, 2)
    cond_mean = g_all.mean(1)
    cond_cov = np.einsum("kvi,kvj->kij", g_all - cond_mean[:, None], g_all - cond_mean[:, None]) / xi.shape[0]
    kernel = None if family == "uniform" else gaussian_alpha(centers, tau)
    c_inf = population_contrastive_covariance(probs, cond_mean, cond_cov, kernel)

    flat_g, flat_p = g_all.reshape(-1, 2), np.repeat(probs, xi.shape[0]) / xi.shape[0]
    mean_g = flat_p @ flat_g
    total_var = np.einsum("k,ki,kj->ij", flat_p, flat_g - mean_g, flat_g - mean_g)
    within = np.einsum("k,kij->ij", probs, cond_cov)  # E[V[g | x0]]
    ltv_gap = np.abs(
        population_contrastive_covariance(probs, cond_mean, cond_cov) - (total_var - within)
    ).max()

    rms, c_last = [], None
    # one N×N buffer for α, reused by every batch (no page faults on a fresh 128 MB per batch)
    buf = None if kernel is None else np.empty(int(max(ns, default=0)) ** 2)
    for n in ns:  # the draws of a chunk of repeats at a time, as before (same RNG stream)
        chunk = max(1, min(n_repeats, 2**23 // int(n) ** 2))
        c_ns = []
        for start in range(0, n_repeats, chunk):
            r = min(chunk, n_repeats - start)
            atoms = rng.choice(4, size=(r, n), p=probs)
            x0_b = centers[atoms]
            offs = xi[rng.integers(0, xi.shape[0], size=(r, 2, n))]
            views = stack_views(g_of(x0_b + sigma * offs[:, 0]), g_of(x0_b + sigma * offs[:, 1]))
            # x0 takes 4 values, so the Gaussian α of the batch is the kernel on the atoms (equal to
            # make_alpha("gaussian", n, g0=x0_b, tau=tau) up to rounding, without its N² distances
            # and exponentials)
            if kernel is None:
                c_ns.append(contrastive_covariance(views))
            else:
                c_ns.append(_atom_kernel_covariance(views, atoms, kernel, buf[: n * n].reshape(n, n)))
        c_ns = np.concatenate(c_ns)  # (n_repeats, 2, 2)
        errs = np.linalg.norm(c_ns - c_inf, axis=(-1, -2)) / np.linalg.norm(c_inf)
        rms.append(float(np.sqrt(np.mean(errs**2))))
        c_last = c_ns
    return float(ltv_gap), np.array(rms), c_last, c_inf


def _atom_kernel_covariance(
    views: np.ndarray, atoms: np.ndarray, kernel: np.ndarray, buf: np.ndarray
) -> np.ndarray:
    """C_α[g] (Tian 2023, Eq. 3) of each batch for α_ij = K[a_i, a_j], x0[i] the atom a_i.

    Bit for bit ``contrastive_covariance(views, alpha=kernel[atoms[:, :, None], atoms[:, None, :]])``
    (``views`` (R, 2N, d), ``atoms`` (R, N)): the same operations in the same order, but the row
    sums r_i = Σ_j α_ij take 4 values (row a_i of K[:, a], the same pairwise sums over j) and so do
    the column sums c_j = Σ_i α_ij (column a_j of K[a, :], the same sequential sums over i), so
    neither is summed N times; α itself is needed only by the two products α g and αᵀ g, and is
    copied row by row (rows of K[:, a]) into ``buf`` (N, N) one batch at a time.
    """
    n = atoms.shape[-1]
    out = np.empty((len(atoms), views.shape[-1], views.shape[-1]))
    for b, (v, at) in enumerate(zip(views, atoms)):
        k_rows = np.ascontiguousarray(kernel[:, at])  # (4, N): row k is K[k, a_j], j = 1..N
        alpha = np.take(k_rows, at, axis=0, out=buf, mode="clip")  # α_ij = K[a_i, a_j]
        r, c = k_rows.sum(-1)[at], kernel[at].sum(-2)[at]
        a1, a2 = v[:n], v[n:]
        da = a1 - a2  # both sides of the intra-view term (the two views of g are the same g)
        inter = (a1 * (r + c)[:, None]).T @ a1 - a1.T @ (alpha @ a1) - a1.T @ (alpha.T @ a1)
        intra = (da * r[:, None]).T @ da
        out[b] = (inter - intra) / (2.0 * n * n)
    return out


def bias_z(c_ns: np.ndarray, c_inf: np.ndarray) -> float:
    """Largest |z| over the entries (i ≤ j) of the mean over repeats against the limit.

    z = (mean_r C_r − C_∞) / (sd_r / √R) per entry of the symmetric matrices ``c_ns`` (R, k, k):
    the bias of the mean in Monte Carlo standard errors (Tian 2023, Lemma 2: the limit is C_∞).
    An entry that is exactly constant (a ReLU feature never active) has no noise: its z is 0 if
    the mean equals the limit (to 1e-12) and ∞ otherwise.
    """
    iu = np.triu_indices(c_inf.shape[0])
    se = c_ns.std(0, ddof=1)[iu] / np.sqrt(len(c_ns))
    dev = np.abs(c_ns.mean(0)[iu] - c_inf[iu])
    return float(
        np.max(np.where(se > 0, dev / np.where(se > 0, se, 1.0), np.where(dev > 1e-12, np.inf, 0.0)))
    )


def corollary1_study(
    rng: np.random.Generator,
    tau: float,
    n_draws: int,
    n_atoms: int = 6,
    max_count: int = 40,
    order: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Corollary 1 (Tian 2023) with a Gaussian α and no augmentation, exactly, on ``n_draws`` random draws.

    Per draw: ``n_atoms`` values x0 ∈ R³ (standard normal) with counts n_k uniform on
    {1, …, ``max_count``}, N = Σ n_k, p_k = n_k/N; g(x) = ReLU(Gx) ∈ R² for a random G; the Gaussian
    α of Lemma 1 on the scalar s(x0) = vᵀx0 rescaled to [0, 1], α_ij = exp(−(s_i − s_j)²/2τ).

    * Left: C_α[g] by Eq. 3 on the batch holding every x0 n_k times, with x' = x (no augmentation).
      Its empirical distribution is p, so the double sum is the population expectation
      ½ E[K(x0, y0)(g(x0) − g(y0))(g(x0) − g(y0))ᵀ] (the i = j terms are 0): the N → ∞ limit.
    * Right: Σ_l z_l² V_{p̃_l}[g] (:func:`adjusted_variance_sum`) with the
      feature map of Lemma 1 truncated at ``order`` (:func:`~nlcl.tian.contrastive.gaussian_feature_map`;
      its tail α·Pr[Poisson(s_i s_j/τ) > order] must be below 1e-14, else ValueError).

    Returns per draw the relative error ‖left − right‖_F/‖right‖_F and the relative distance
    min_c ‖left − c V_p[g]‖_F/‖left‖_F of left from the uniform-α value V_p[g] (Corollary 1 with
    α ≡ 1): how far the non-uniform α moves the limit.
    """
    errs, dist = [], []
    for _ in range(int(n_draws)):
        x0 = rng.standard_normal((n_atoms, 3))
        counts = rng.integers(1, max_count + 1, n_atoms)
        G = rng.standard_normal((2, 3))
        v = rng.standard_normal(3)
        s = x0 @ v
        s = (s - s.min()) / (s.max() - s.min())
        if stats.poisson.sf(order, s.max() ** 2 / tau) > 1e-14:
            raise ValueError(f"order={order} leaves a truncation tail above 1e-14 at tau={tau}")
        g_atoms = np.maximum(x0 @ G.T, 0.0)
        atom = np.repeat(np.arange(n_atoms), counts)  # the batch: atom k n_k times
        g_batch = g_atoms[atom]
        left = contrastive_covariance(stack_views(g_batch, g_batch), alpha=gaussian_alpha(s[atom], tau))
        p = counts / counts.sum()
        phi = gaussian_feature_map(s, tau, order=order, shift=0.0)
        right = adjusted_variance_sum(p, phi, g_atoms)
        errs.append(np.linalg.norm(left - right) / np.linalg.norm(right))
        m = p @ g_atoms
        var = np.einsum("k,ki,kj->ij", p, g_atoms - m, g_atoms - m)  # V_p[g]
        c = (left * var).sum() / (var * var).sum()
        dist.append(np.linalg.norm(left - c * var) / np.linalg.norm(left))
    return np.array(errs), np.array(dist)


def lemma3_relative_error(views: Any, w: Any, activation: str | Activation, alpha: Any) -> float:
    """max_w ‖P⊥∇E_α − k P⊥A(w)w‖ / max_w ‖P⊥∇E_α‖ over the unit filters ``w`` (Tian 2023, Lemma 3).

    The Riemannian gradient of E_α (autograd, :func:`~nlcl.tian.landscape.riemannian_gradient`)
    against the Lemma 3 velocity (Eq. 7, :func:`~nlcl.tian.landscape.one_layer_velocity`, with the
    homogeneity degree k): round-off for homogeneous h (Assumption 1), not small otherwise.
    """
    riem = riemannian_gradient(views, w, activation, alpha)
    vel = one_layer_velocity(views, w, activation, alpha)
    return float(np.linalg.norm(riem - vel, axis=-1).max() / np.linalg.norm(riem, axis=-1).max())


def adjusted_variance_sum(probs: Any, phi: Any, g: Any) -> np.ndarray:
    """Σ_l z_l² V_{x0 ~ p̃_l}[g(x0)] for a discrete x0 (Tian 2023, Corollary 1; Def. 2).

    x0 takes K values with probabilities ``probs`` (K,); ``phi`` (K, D) is a nonnegative feature map
    of the kernel, α = K(x0, y0) = φ(x0)ᵀφ(y0) (Def. 1), at those values; ``g`` (K, d) the feature
    g(x0). Per component l: z_l = Σ_k p_k φ_l(k) (Def. 2's normalizer), the adjusted distribution
    p̃_l(k) = p_k φ_l(k)/z_l, and the variance of g under it; components with z_l = 0 add nothing.
    Corollary 1: with no augmentation C_α[g] → this sum as N → ∞. Only numpy; returns (d, d).
    """
    p = np.asarray(probs, dtype=np.float64)
    f = np.asarray(phi, dtype=np.float64)
    gk = np.asarray(g, dtype=np.float64)
    if p.ndim != 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be a probability vector, got {p!r}")
    if f.ndim != 2 or f.shape[0] != p.shape[0] or np.any(f < 0):
        raise ValueError(f"phi must be a nonnegative (K, D) array with K={p.shape[0]}, got shape {f.shape}")
    if gk.ndim != 2 or gk.shape[0] != p.shape[0]:
        raise ValueError(f"g must have shape (K, d) with K={p.shape[0]}, got {gk.shape}")
    out = np.zeros((gk.shape[1], gk.shape[1]))
    for l in range(f.shape[1]):
        w = p * f[:, l]  # z_l p̃_l(k)
        z = w.sum()
        if z <= 0:
            continue
        pt = w / z
        m = pt @ gk
        out += z**2 * (np.einsum("k,ki,kj->ij", pt, gk, gk) - np.outer(m, m))
    return out
