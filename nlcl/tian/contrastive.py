"""Contrastive covariance C_α, the α-CL energy and the pairwise-importance families α.

Tian (2023), Sec. 2. A batch holds 2N views stacked as rows: rows 0..N-1 are the views x[i],
rows N..2N-1 the views x[i'] of the same N samples. For representations a, b of these views the
*contrastive covariance* is (Eq. 3)

    C_α[a, b] = 1/(2N²) Σ_{i,j=1..N} α_ij [ (a[i]-a[j])(b[i]-b[j])ᵀ - (a[i]-a[i'])(b[i]-b[i'])ᵀ ],

and the α-CL energy is E_α = ½ tr C_α[f] (Eq. 2). The double sum runs over *all* (i, j),
literally as in Eq. 3, so a diagonal α_ii weighs the positive-pair term of sample i. The proof of
Lemma 2 (Eqs. 23-24) and the InfoNCE α exclude j = i: pass an α with zero diagonal for that
convention (:func:`infonce_alpha` does). With uniform α the two differ by O(1/N).

Pairwise importance families (Sec. 2, Lemma 1):

* :func:`uniform_alpha` — α_ij ≡ 1, the quadratic loss;
* :func:`gaussian_alpha` — α_ij = exp(-‖g(x0[i]) - g(x0[j])‖²/2τ) on un-augmented samples
  (Lemma 1), with its explicit nonnegative feature map :func:`gaussian_feature_map` (Eqs. 20-22);
* :func:`infonce_alpha` — the stop-gradient α of InfoNCE (Eq. 1), the Gaussian α of the
  augmented views normalized per row.

All functions accept numpy arrays or torch tensors (same type out) with arbitrary leading batch
dimensions. Explained in ``book/tian-alpha-cl.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from nlcl.core.tensors import is_torch, like

__all__ = [
    "split_views",
    "stack_views",
    "contrastive_covariance",
    "energy",
    "uniform_alpha",
    "gaussian_alpha",
    "gaussian_feature_map",
    "half_sq_dists",
    "infonce_alpha",
    "make_alpha",
    "population_contrastive_covariance",
    "ALPHA_FAMILIES",
]

#: Names of the pairwise-importance families (used by chapters as a parameter).
ALPHA_FAMILIES: tuple[str, ...] = ("uniform", "gaussian", "infonce")


def _as_float(a: Any, name: str) -> Any:
    if is_torch(a):
        return a if a.is_floating_point() else a.double()
    a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    return a.astype(np.float64) if a.dtype.kind != "f" else a


def split_views(a: Any, name: str = "a") -> tuple[Any, Any]:
    """Split a stacked batch (..., 2N, d) into the views (x[i], x[i']), each (..., N, d) (Sec. 2)."""
    if a.ndim < 2:
        raise ValueError(f"{name} must have shape (..., 2N, d), got shape {tuple(a.shape)}")
    n2 = a.shape[-2]
    if n2 < 2 or n2 % 2:
        raise ValueError(f"{name} must stack an even number 2N >= 2 of views along axis -2, got {n2}")
    n = n2 // 2
    return a[..., :n, :], a[..., n:, :]


def stack_views(first: Any, second: Any) -> Any:
    """Stack the views x[i] and x[i'] (each (..., N, d)) into the (..., 2N, d) batch of Eq. 3."""
    if tuple(first.shape) != tuple(second.shape):
        raise ValueError(
            f"the two views must have equal shapes, got {tuple(first.shape)} and {tuple(second.shape)}"
        )
    if is_torch(first):
        return torch.cat([first, like(second, first)], dim=-2)
    return np.concatenate([np.asarray(first), np.asarray(second)], axis=-2)


def _check_alpha(alpha: Any, n: int, ref: Any) -> Any:
    if alpha is None:
        return None
    alpha = like(alpha, ref)
    if alpha.ndim < 2 or tuple(alpha.shape[-2:]) != (n, n):
        raise ValueError(f"alpha must have shape (..., N, N) with N={n}, got shape {tuple(alpha.shape)}")
    return alpha


def _t(x: Any) -> Any:
    return x.swapaxes(-1, -2)


def contrastive_covariance(a: Any, b: Any = None, alpha: Any = None) -> Any:
    """Contrastive covariance C_α[a, b] of Tian 2023, Eq. 3 (chapter ``tian-alpha-cl``).

    Parameters
    ----------
    a, b:
        Representations of a stacked batch of 2N views, shape (..., 2N, d) and (..., 2N, d');
        rows 0..N-1 are x[i], rows N..2N-1 the paired views x[i']. ``b=None`` means ``b = a``
        (C_α[a] := C_α[a, a]).
    alpha:
        Pairwise importance, shape (..., N, N), broadcast against the leading dimensions of a.
        ``None`` is uniform α ≡ 1 (quadratic loss). The sum runs over all (i, j) as in Eq. 3.

    Returns
    -------
    The (..., d, d') matrix, of the type of ``a`` (numpy or torch). Bilinear in (a, b), with
    C_α[a, b]ᵀ = C_α[b, a] (any α), hence symmetric when b = a, and
    uᵀ C_α[a, b] v = C_α[a u, b v] for fixed vectors u, v (App. B.2).

    Notes
    -----
    Computed without the O(N²d²) double sum: with r_i = Σ_j α_ij, c_j = Σ_i α_ij,
    Σ_ij α_ij (a_i - a_j)(b_i - b_j)ᵀ = aᵀ(diag(r + c) - α - αᵀ) b over the first views, and the
    positive-pair term is Σ_i r_i (a_i - a_i')(b_i - b_i')ᵀ.
    """
    a = _as_float(a, "a")
    b = a if b is None else _as_float(like(b, a) if is_torch(a) != is_torch(b) else b, "b")
    a1, a2 = split_views(a, "a")
    b1, b2 = split_views(b, "b")
    if b.shape[-2] != a.shape[-2]:
        raise ValueError(f"a and b must hold the same 2N views, got {a.shape[-2]} and {b.shape[-2]} rows")
    n = a1.shape[-2]
    alpha = _check_alpha(alpha, n, a)
    da, db = a1 - a2, b1 - b2
    if alpha is None:
        sa, sb = a1.sum(-2)[..., :, None], b1.sum(-2)[..., None, :]
        inter = 2 * n * (_t(a1) @ b1) - 2 * (sa * sb)
        intra = n * (_t(da) @ db)
    else:
        r, c = alpha.sum(-1), alpha.sum(-2)
        inter = _t(a1 * (r + c)[..., None]) @ b1 - _t(a1) @ (alpha @ b1) - _t(a1) @ (_t(alpha) @ b1)
        intra = _t(da * r[..., None]) @ db
    return (inter - intra) / (2.0 * n * n)


def energy(f: Any, alpha: Any = None) -> Any:
    """α-CL energy E_α = ½ tr C_α[f] (Tian 2023, Eq. 2 and Eq. 3; chapter ``tian-alpha-cl``).

    ``f`` is (..., 2N, d) stacked as in :func:`contrastive_covariance`; returns shape (...).
    Equivalently E_α = 1/(2N²) Σ_ij α_ij (d²_ij - d²_i) with d²_ij = ½‖f[i] - f[j]‖² and
    d²_i = ½‖f[i] - f[i']‖². Computed in O(N²d) without forming the d×d matrix.
    """
    f = _as_float(f, "f")
    f1, f2 = split_views(f, "f")
    n = f1.shape[-2]
    alpha = _check_alpha(alpha, n, f)
    sq = (f1 * f1).sum(-1)
    dpos = ((f1 - f2) ** 2).sum(-1)
    gram = f1 @ _t(f1)
    if alpha is None:
        inter = 2 * n * sq.sum(-1) - 2 * gram.sum(-1).sum(-1)
        intra = n * dpos.sum(-1)
    else:
        r, c = alpha.sum(-1), alpha.sum(-2)
        inter = ((r + c) * sq).sum(-1) - 2 * (alpha * gram).sum(-1).sum(-1)
        intra = (r * dpos).sum(-1)
    return (inter - intra) / (4.0 * n * n)


def uniform_alpha(n: int, like: Any = None) -> Any:
    """Uniform pairwise importance α_ij ≡ 1 (quadratic loss; Tian 2023, Sec. 2), shape (n, n).

    Returned as float64 numpy, or matching ``like``'s type/dtype/device when given.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    out = np.ones((int(n), int(n)))
    return out if like is None else like(out, like)


def _check_tau(tau: float) -> float:
    tau = float(tau)
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau must be a positive finite float, got {tau!r}")
    return tau


def _sq_dists(x: Any, y: Any) -> Any:
    """‖x_i - y_j‖² for (..., N, k) and (..., M, k), via the Gram matrix, clamped at 0."""
    g = x @ _t(y)
    sx, sy = (x * x).sum(-1), (y * y).sum(-1)
    d = sx[..., :, None] + sy[..., None, :] - 2 * g
    return d.clamp(min=0) if is_torch(d) else np.maximum(d, 0)


def half_sq_dists(f: Any) -> Any:
    """d²_ij = ½‖f[i] - f[j]‖² for f of shape (..., N, d) → (..., N, N) (Tian 2023, Sec. 2)."""
    f = _as_float(f, "f")
    if f.ndim < 2:
        raise ValueError(f"f must have shape (..., N, d), got shape {tuple(f.shape)}")
    return 0.5 * _sq_dists(f, f)


def gaussian_alpha(g0: Any, tau: float) -> Any:
    """Gaussian pairwise importance α_ij = exp(-‖g(x0[i]) - g(x0[j])‖²/2τ) (Tian 2023, Lemma 1).

    ``g0`` holds g evaluated on the *un-augmented* samples, shape (..., N) or (..., N, k)
    (a 1-D feature such as h(wᵀx0) in Corollary 2 may be passed as (..., N)). Returns
    (..., N, N), symmetric, unit diagonal, positive semi-definite.
    """
    tau = _check_tau(tau)
    g0 = _as_float(g0, "g0")
    if g0.ndim < 1:
        raise ValueError("g0 must have shape (..., N) or (..., N, k), got a scalar")
    if g0.ndim == 1:
        g0 = g0[:, None]
    d = _sq_dists(g0, g0)
    return torch.exp(-d / (2 * tau)) if is_torch(d) else np.exp(-d / (2 * tau))


def gaussian_feature_map(g0: Any, tau: float, order: int, shift: Any = None) -> Any:
    """Truncated nonnegative feature map φ of the Gaussian α (Tian 2023, proof of Lemma 1, Eqs. 20-22).

    φ(x) = exp(-‖y‖²/2τ) [1, τ^{-1/2} y, AllChoose(τ^{-1/2} y, 2)/√2!, …, AllChoose(τ^{-1/2} y, K)/√K!]
    with y = g(x) - v ≥ 0, truncated at order K = ``order``; AllChoose(y, k) lists all d^k
    products y_{i1}⋯y_{ik} (a k-fold Kronecker power). Then φ(x_i)ᵀφ(x_j) → α_ij as K → ∞,
    from below, with truncation error exp(-(‖y_i‖²+‖y_j‖²)/2τ) Σ_{k>K} (y_iᵀy_j/τ)^k/k!.

    Parameters
    ----------
    g0: (..., N) or (..., N, k) features of the un-augmented samples.
    tau: temperature τ > 0.
    order: truncation order K ≥ 0 (feature dimension Σ_{k≤K} k_dim^k).
    shift: the vector v (shape (k,)); default the componentwise minimum of g0 over the batch,
        which makes y ≥ 0 and hence φ ≥ 0 (Def. 1).

    Returns
    -------
    (..., N, D) nonnegative features.
    """
    tau = _check_tau(tau)
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 0:
        raise ValueError(f"order must be a nonnegative integer, got {order!r}")
    g0 = _as_float(g0, "g0")
    if g0.ndim == 1:
        g0 = g0[:, None]
    k_dim = int(g0.shape[-1])
    dim = sum(k_dim**k for k in range(int(order) + 1))
    if dim > 10**6:
        raise ValueError(
            f"order={order} with {k_dim}-dimensional g gives feature dimension {dim} > 10**6; lower the order"
        )
    torch_in = is_torch(g0)
    x = g0.detach().cpu().double().numpy() if torch_in else np.asarray(g0, dtype=np.float64)
    if shift is None:
        v = x.min(axis=tuple(range(x.ndim - 1)))
    else:
        v = np.asarray(shift.detach().cpu() if is_torch(shift) else shift, dtype=np.float64)
    y = x - v
    if np.any(y < -1e-12):
        raise ValueError("shift must be a componentwise lower bound of g0 (Lemma 1 needs y = g - v >= 0)")
    y = np.maximum(y, 0.0)
    z = y / math.sqrt(tau)
    # the prefactor exp(-‖y‖²/2τ) goes in first, so that no intermediate overflows
    term = np.exp(-(y**2).sum(-1, keepdims=True) / (2 * tau))
    feats = [term]
    for k in range(1, int(order) + 1):  # term_k = prefactor · AllChoose(z, k)/√k!, = term_{k-1} ⊗ z/√k
        term = (term[..., :, None] * (z / math.sqrt(k))[..., None, :]).reshape(y.shape[:-1] + (-1,))
        feats.append(term)
    phi = np.concatenate(feats, axis=-1)
    return torch.as_tensor(phi, dtype=g0.dtype, device=g0.device) if torch_in else phi


def infonce_alpha(f1: Any, f2: Any, tau: float, eps: float = 0.0, stop_gradient: bool = True) -> Any:
    """The pairwise importance under which InfoNCE is an α-CL (Tian 2023, Sec. 2 and Eq. 1).

    α_ij = exp(-d²_ij/τ) / (ε exp(-d²_i/τ) + Σ_{k≠i} exp(-d²_ik/τ)) for j ≠ i and α_ii = 0, with
    d²_ij = ½‖f1[i] - f1[j]‖² and d²_i = ½‖f1[i] - f2[i]‖². With it held fixed,
    ∇_θ InfoNCE = -∇_θ Σ_i Σ_{j≠i} α_ij (d²_ij - d²_i) = -2N² ∇_θ E_α (see
    :func:`nlcl.tian.losses.info_nce`). ``f1``, ``f2``: (..., N, d) → (..., N, N), row-stochastic
    when ε = 0. Computed with log-sum-exp for stability; detached when ``stop_gradient``.
    """
    tau = _check_tau(tau)
    eps = float(eps)
    if not (eps >= 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be a nonnegative finite float, got {eps!r}")
    torch_in = is_torch(f1)
    t1 = f1 if torch_in else torch.as_tensor(np.asarray(f1, dtype=np.float64))
    t2 = like(f2, t1) if torch_in else torch.as_tensor(np.asarray(f2, dtype=np.float64))
    if t1.ndim < 2 or tuple(t1.shape) != tuple(t2.shape):
        raise ValueError(
            f"f1 and f2 must both have shape (..., N, d), got {tuple(t1.shape)} and {tuple(t2.shape)}"
        )
    n = t1.shape[-2]
    if n < 2:
        raise ValueError(f"InfoNCE needs N >= 2 samples, got N={n}")
    d_ij = half_sq_dists(t1)
    d_i = 0.5 * ((t1 - t2) ** 2).sum(-1)
    eye = torch.eye(n, dtype=torch.bool, device=t1.device)
    logits = (-d_ij / tau).masked_fill(eye, float("-inf"))
    parts = [logits]
    if eps > 0:
        parts.append((math.log(eps) - d_i / tau)[..., None])
    log_den = torch.logsumexp(torch.cat(parts, dim=-1), dim=-1, keepdim=True)
    alpha = torch.exp(logits - log_den)
    if stop_gradient:
        alpha = alpha.detach()
    return alpha if torch_in else alpha.numpy()


def make_alpha(
    family: str, n: int, *, f1: Any = None, f2: Any = None, g0: Any = None, tau: float = 1.0, eps: float = 0.0
) -> Any:
    """Pairwise importance of a named family (Tian 2023, Sec. 2 and Lemma 1), shape (…, N, N).

    * ``"uniform"`` — α ≡ 1 (quadratic loss); needs ``n``.
    * ``"gaussian"`` — :func:`gaussian_alpha` of ``g0`` (features of un-augmented samples) at ``tau``.
    * ``"infonce"`` — :func:`infonce_alpha` of the views ``f1``, ``f2`` at ``tau``, ``eps``.

    The result matches the array type of the features it is computed from (numpy for uniform).
    """
    if family not in ALPHA_FAMILIES:
        raise ValueError(f"unknown alpha family {family!r}; allowed: {', '.join(ALPHA_FAMILIES)}")
    if family == "uniform":
        return uniform_alpha(n)
    if family == "gaussian":
        if g0 is None:
            raise ValueError("alpha family 'gaussian' needs g0 (features of the un-augmented samples)")
        return gaussian_alpha(g0, tau)
    if f1 is None or f2 is None:
        raise ValueError("alpha family 'infonce' needs the two views' representations f1 and f2")
    return infonce_alpha(f1, f2, tau, eps)


def population_contrastive_covariance(
    probs: Any, cond_mean: Any, cond_cov: Any, kernel: Any = None
) -> np.ndarray:
    """Large-batch limit of C_α[g] for a discrete x0 (Tian 2023, Lemma 2 / Eq. 4; proof Eqs. 26-41).

    x0 takes K values with probabilities ``probs`` (K,); given x0 = k the augmented feature g(x)
    has mean ``cond_mean[k]`` (K, d) and covariance ``cond_cov[k]`` (K, d, d); α_ij =
    K(x0[i], x0[j]) with ``kernel`` (K, K) (default 1, uniform α). As N → ∞,

        C_α[g] → ½ Σ_kl p_k p_l K_kl (S_k + S_l - m_k m_lᵀ - m_l m_kᵀ) - Σ_k p_k (Σ_l K_kl p_l) Σ_k,

    with S_k = Σ_k + m_k m_kᵀ. For a kernel with nonnegative feature map φ this equals
    Σ_l z_l² V_{x0~p̃_l}[E[g|x0]] (Eq. 4); for uniform α it is V[E[g|x0]], the between-sample
    variance of the law of total variance. Returns a (d, d) float64 array.
    """
    p = np.asarray(probs, dtype=np.float64)
    m = np.asarray(cond_mean, dtype=np.float64)
    s = np.asarray(cond_cov, dtype=np.float64)
    k = p.shape[0] if p.ndim == 1 else -1
    if p.ndim != 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be a probability vector, got {p!r}")
    if m.ndim != 2 or m.shape[0] != k:
        raise ValueError(f"cond_mean must have shape (K, d) with K={k}, got {m.shape}")
    d = m.shape[1]
    if s.shape != (k, d, d):
        raise ValueError(f"cond_cov must have shape (K, d, d) = {(k, d, d)}, got {s.shape}")
    kern = np.ones((k, k)) if kernel is None else np.asarray(kernel, dtype=np.float64)
    if kern.shape != (k, k):
        raise ValueError(f"kernel must have shape (K, K) = {(k, k)}, got {kern.shape}")
    w = p[:, None] * p[None, :] * kern
    second = s + m[:, :, None] * m[:, None, :]
    inter = 0.5 * (np.einsum("kl,kij->ij", w, second) + np.einsum("kl,lij->ij", w, second))
    inter -= 0.5 * (np.einsum("kl,ki,lj->ij", w, m, m) + np.einsum("kl,li,kj->ij", w, m, m))
    intra = np.einsum("k,kij->ij", p * (kern @ p), s)
    return inter - intra
