"""The one-layer landscape of α-CL: gated inputs, A(w), dynamics, power iteration, LMEs.

Tian (2023), Sec. 3. A node f = h(wᵀx) with ‖w‖ = 1 has energy E_α(w) = ½ C_α[h(wᵀx)]
(Eq. 5). For homogeneous h (Assumption 1) h(wᵀx) = wᵀ x̃ʷ with the gated input
x̃ʷ = x · gate(wᵀx) (Eq. 6), so E_α(w) = ½ wᵀA(w)w with A(w) := C_α[x̃ʷ], and the projected
gradient flow is ẇ = P⊥_w A(w) w (Lemma 3, Eq. 7; times the homogeneity degree p for x^p).
Critical points are *locally maximal eigenvectors* (LMEs, Def. 3), found by power iteration
(Eq. PI, Thm. 3); an LME is stable when λ_gap > ρ (Thm. 1).

Batches of views are stacked (…, 2N, d) as in :func:`nlcl.tian.contrastive.contrastive_covariance`;
every function is vectorized over leading dimensions of ``w`` (many filters, seeds, angles).
Explained in ``book/tian-one-layer.py`` (and ``book/tian-fig8-landscape.py`` for the circle).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy import signal
from scipy.cluster import hierarchy

from nlcl.core.activations import Activation, get_activation
from nlcl.core.blocks import axis_blocks
from nlcl.tian.contrastive import contrastive_covariance, energy, stack_views

__all__ = [
    "energy_on_circle",
    "periodic_local_maxima",
    "gated_input",
    "gate_matrix",
    "FeatureAlpha",
    "GATE_CHUNK_ELEMENTS",
    "filter_energy",
    "riemannian_gradient",
    "one_layer_velocity",
    "population_gate_matrix",
    "train_filters",
    "power_iteration",
    "eigengap",
    "is_lme",
    "local_roughness",
    "distinct_directions",
]

AlphaSpec = Any  # None, an (…, N, N) array, or a callable w -> (…, N, N)


def _act(activation: str | Activation) -> Activation:
    return get_activation(activation)


def _views(x: Any, name: str = "views") -> np.ndarray | torch.Tensor:
    if isinstance(x, torch.Tensor):
        v = x if x.is_floating_point() else x.double()
    else:
        v = np.asarray(x, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] < 2 or v.shape[0] % 2:
        raise ValueError(
            f"{name} must be a stacked batch of shape (2N, d) with N >= 1, got shape {tuple(v.shape)}"
        )
    return v


def _unit(w: Any, d: int, name: str = "w") -> Any:
    if isinstance(w, torch.Tensor):
        w = w if w.is_floating_point() else w.double()
        nrm = torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    else:
        w = np.asarray(w, dtype=np.float64)
        nrm = np.linalg.norm(w, axis=-1, keepdims=True)
    if w.ndim < 1 or w.shape[-1] != d:
        raise ValueError(f"{name} must have shape (..., d) with d={d}, got shape {tuple(w.shape)}")
    if (nrm == 0).any():
        raise ValueError(f"{name} must be nonzero (it is normalized to the unit sphere)")
    return w / nrm


#: float64 elements (gated views and α) of one chunk of filters in :func:`gate_matrix`: about
#: 1 MiB, so that a chunk stays in a core's cache through the passes over it
GATE_CHUNK_ELEMENTS = 2**17


class FeatureAlpha:
    """An α that is a function of per-sample features of the filter: α(w) = ``alpha_of(features(w))``,
    ``features`` w (…, d) → (…, N), ``alpha_of`` (…, N) → (…, N, N), elementwise over the leading
    dimensions (e.g. the Gaussian α of Corollary 2 of g = h(wᵀx)).

    A callable of w like any other; :func:`gate_matrix` takes the features of all filters at once
    and forms α from them a chunk of filters at a time (the same numbers).
    """

    def __init__(self, features: Callable[[Any], Any], alpha_of: Callable[[Any], Any]) -> None:
        self.features, self.alpha_of = features, alpha_of

    def __call__(self, w: Any) -> Any:
        return self.alpha_of(self.features(w))


def _alpha(alpha: AlphaSpec, w: Any) -> Any:
    return alpha(w) if callable(alpha) else alpha


def energy_on_circle(points: Any, thetas: Any, activation: str | Activation, alpha: Any = None) -> np.ndarray:
    """E_α(θ) = ½ C_α[h(wᵀx)] for w = (cos θ, sin θ) without augmentation (Tian 2023, App. E.1, Fig. 8).

    Parameters
    ----------
    points: (n, 2) data on (or off) the unit circle; both views equal the point (x[i'] = x[i]),
        so the positive-pair term of Eq. 3 vanishes.
    thetas: (G,) angles of w.
    activation: a name from :data:`nlcl.core.activations.ACTIVATIONS` or an Activation.
    alpha: (n, n) pairwise importance, default uniform.

    Returns
    -------
    (G,) float64 energies, computed for all G angles at once.
    """
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != 2 or x.shape[0] < 1:
        raise ValueError(f"points must have shape (n, 2) with n >= 1, got shape {x.shape}")
    th = np.asarray(thetas, dtype=np.float64)
    if th.ndim != 1:
        raise ValueError(f"thetas must be a 1-D array, got shape {th.shape}")
    w = np.stack([np.cos(th), np.sin(th)], axis=-1)
    return np.asarray(filter_energy(stack_views(x, x), w, activation, alpha), dtype=np.float64)


def periodic_local_maxima(values: Any, prominence: float | None = None) -> np.ndarray:
    """Indices of the strict local maxima of a periodic 1-D sample (e.g. E_α(θ) on a θ grid).

    Uses :func:`scipy.signal.find_peaks` on a three-fold tiled copy so that maxima across the
    wrap-around are found; a plateau counts once (its middle sample), a constant array has none.
    ``prominence`` (optional, absolute) drops maxima that rise less than that above their
    surroundings, e.g. round-off ripples on a curve that is constant in exact arithmetic.
    Returns a sorted int array of indices into ``values``.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"values must be a 1-D array, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    n = v.size
    if n < 3:
        return np.zeros(0, dtype=int)
    peaks, _ = signal.find_peaks(np.tile(v, 3), prominence=prominence)
    mid = peaks[(peaks >= n) & (peaks < 2 * n)] - n
    return np.unique(mid).astype(int)


def gated_input(
    x: Any, w: Any, activation: str | Activation, zero_tol: float = 1e-12, x_norm: Any = None
) -> Any:
    """Gated input x̃ʷ = x · gate(wᵀx) (Tian 2023, Eq. 6).

    ``x``: (n, d) (or (…, n, d)), ``w``: (…, d), broadcast → (…, n, d). For homogeneous h,
    h(wᵀx) = wᵀx̃ʷ exactly (see :meth:`nlcl.core.activations.Activation.gate`). Pre-activations with
    |wᵀx| ≤ ``zero_tol``·‖w‖‖x‖ are set to exactly 0, so that samples lying on the hyperplane
    wᵀx = 0 (e.g. x = u_k, w = u_m in Eqs. 8-9) get the paper's gate h'(0) = 0 (App. B.1)
    instead of one decided by rounding. ``x_norm``: ‖x‖ per row, if already computed (numpy).
    """
    act = _act(activation)
    u = (x @ w[..., None])[..., 0]
    if zero_tol > 0:
        if isinstance(u, torch.Tensor):
            scale = torch.linalg.vector_norm(x, dim=-1) * torch.linalg.vector_norm(w, dim=-1)[..., None]
            u = torch.where(u.abs() <= zero_tol * scale, torch.zeros_like(u), u)
        else:
            x_norm = np.linalg.norm(x, axis=-1) if x_norm is None else x_norm
            scale = x_norm * np.linalg.norm(w, axis=-1)[..., None]
            u = np.where(np.abs(u) <= zero_tol * scale, 0.0, u)
    return x * act.gate(u)[..., None]


def gate_matrix(views: Any, w: Any, activation: str | Activation, alpha: AlphaSpec = None) -> Any:
    """A(w) = C_α[x̃ʷ] (Tian 2023, Sec. 3, Lemma 3), for w of shape (…, d) → (…, d, d).

    ``views`` is the stacked (2N, d) batch of Eq. 3 (both views gated by the same w);
    ``alpha`` an (…, N, N) array, a callable of w (a :class:`FeatureAlpha` is formed a chunk of
    filters at a time), or None (uniform). With numpy inputs the filters are taken
    :data:`GATE_CHUNK_ELEMENTS` at a time (the same operations on each filter as on all at once).
    """
    v = _views(views)
    w = _unit(w, v.shape[-1])
    if isinstance(v, torch.Tensor) or isinstance(w, torch.Tensor) or w.ndim < 2:
        return contrastive_covariance(gated_input(v, w, activation), alpha=_alpha(alpha, w))
    n, d = v.shape[0] // 2, v.shape[1]
    lead = w.shape[:-1]
    idx = None  # per filter, its α among the leading indices of an α array
    if isinstance(alpha, FeatureAlpha):
        alpha, feat = alpha.alpha_of, alpha.features(w).reshape(-1, n)  # features of all w at once
    elif alpha is not None:
        alpha = np.asarray(_alpha(alpha, w), dtype=np.float64)
        if alpha.ndim > 2:
            k = np.arange(int(np.prod(alpha.shape[:-2]))).reshape(alpha.shape[:-2])
            try:
                idx, alpha = np.broadcast_to(k, lead).ravel(), alpha.reshape(-1, n, n)
            except ValueError:  # α has more leading dimensions than w: all filters at once
                return contrastive_covariance(gated_input(v, w, activation), alpha=alpha)
    wf = w.reshape(-1, d)
    size = 2 * n * d + (n * n if alpha is not None else 0)
    out, x_norm = np.empty((wf.shape[0], d, d)), np.linalg.norm(v, axis=-1)
    for c in axis_blocks(wf.shape[0], size, GATE_CHUNK_ELEMENTS):
        a_c = alpha(feat[c]) if callable(alpha) else (alpha if idx is None else alpha[idx[c]])
        out[c] = contrastive_covariance(gated_input(v, wf[c], activation, x_norm=x_norm), alpha=a_c)
    return out.reshape(lead + (d, d))


def filter_energy(views: Any, w: Any, activation: str | Activation, alpha: AlphaSpec = None) -> Any:
    """E_α(w) = ½ C_α[h(wᵀx)] of one node (Tian 2023, Eq. 5), w of shape (…, d) → (…).

    ``w`` is used as given (not normalized), so autograd through it gives the Euclidean gradient.
    """
    v = _views(views)
    act = _act(activation)
    if isinstance(w, torch.Tensor) and not isinstance(v, torch.Tensor):
        v = torch.as_tensor(v, dtype=w.dtype)
    f = act((v @ w[..., None])[..., 0])[..., None]
    return energy(f, _alpha(alpha, w))


def riemannian_gradient(views: Any, w: Any, activation: str | Activation, alpha: AlphaSpec = None) -> Any:
    """P⊥_w ∇_w E_α(w) by torch autograd, the left side of Lemma 3 (Tian 2023, Eq. 7).

    ``w`` (…, d) is normalized first; α (if a callable) is evaluated at w and held fixed
    (stop-gradient, Eq. 2). Returns a float64 numpy array (…, d).
    """
    v = torch.as_tensor(np.asarray(_views(views)), dtype=torch.float64)
    w = torch.as_tensor(np.asarray(_unit(np.asarray(w, dtype=np.float64), v.shape[-1])), dtype=torch.float64)
    alpha = _alpha(alpha, w.detach().numpy())
    alpha = None if alpha is None else torch.as_tensor(np.asarray(alpha), dtype=torch.float64)
    w = w.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(filter_energy(v, w, activation, alpha).sum(), w)
    w = w.detach()
    return (grad - (grad * w).sum(-1, keepdim=True) * w).numpy()


def one_layer_velocity(views: Any, w: Any, activation: str | Activation, alpha: AlphaSpec = None) -> Any:
    """The right side of Lemma 3: k · P⊥_w A(w) w, k the homogeneity degree (Tian 2023, Eq. 7).

    k = 1 for linear/ReLU/LeakyReLU (the paper's statement); k = p for h(x) = x^p. For
    non-homogeneous activations this is the paper's formula with x̃ʷ = x h'(wᵀx), which is *not*
    the gradient (Lemma 3 needs Assumption 1).
    """
    v = _views(views)
    w = _unit(w, v.shape[-1])
    aw = (gate_matrix(v, w, activation, alpha) @ w[..., None])[..., 0]
    return _act(activation).degree * (aw - (aw * w).sum(-1, keepdims=True) * w)


def population_gate_matrix(atoms: Any, probs: Any, w: Any, activation: str | Activation) -> np.ndarray:
    """A(w) = V[x̃ʷ] for a discrete x (no augmentation, uniform α, N → ∞; Tian 2023, Cor. 1, Eqs. 8-9).

    ``atoms`` (K, d) with probabilities ``probs`` (K,) (e.g. from
    :func:`nlcl.tian.latent_data.latent_summation_support`); ``w`` (…, d) → (…, d, d). Exact, no sampling.
    """
    x = np.asarray(atoms, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    if x.ndim != 2 or p.shape != (x.shape[0],):
        raise ValueError(f"atoms must be (K, d) and probs (K,), got {x.shape} and {p.shape}")
    w = _unit(w, x.shape[-1])
    g = gated_input(x, w, activation)
    m = np.einsum("k,...ki->...i", p, g)
    return np.einsum("k,...ki,...kj->...ij", p, g, g) - m[..., :, None] * m[..., None, :]


def train_filters(
    a_fn: Callable[[np.ndarray], np.ndarray],
    w0: Any,
    lr: float = 0.5,
    steps: int = 500,
    tol: float = 0.0,
    scale_free: bool = False,
) -> np.ndarray:
    """Projected gradient ascent of E_α on the unit sphere for many independent filters (Eqs. 5, 7).

    w ← normalize(w + lr · P⊥_w A(w) w), the Euler discretization of Lemma 3 with per-filter
    normalization (Sec. 3). With ``scale_free`` the step is divided by λ_1(A(w)) (a per-filter
    change of time scale that keeps the fixed points and their stability), so that α families
    whose A differ by an overall factor (uniform vs Gaussian α) converge at comparable speed. ``a_fn`` maps w (…, d) to A(w) (…, d, d), e.g.
    ``lambda w: gate_matrix(views, w, "relu", alpha)`` (a Gaussian α re-evaluated at the current
    filter inside ``a_fn`` is held fixed within a step: stop-gradient, Eq. 2). ``w0`` (…, d):
    every leading index is an independent filter (K nodes, seeds, …). Stops early when every
    filter moves less than ``tol``. Raises ValueError if an iterate becomes non-finite.
    """
    if not (np.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a positive finite float, got {lr!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a nonnegative integer, got {steps!r}")
    w0 = np.asarray(w0, dtype=np.float64)
    w = _unit(w0, w0.shape[-1], "w0")
    for _ in range(int(steps)):
        a = a_fn(w)
        aw = (a @ w[..., None])[..., 0]
        scale = np.maximum(np.linalg.eigvalsh(a)[..., -1:], 1e-300) if scale_free else 1.0
        with np.errstate(over="ignore", invalid="ignore"):
            step = w + lr * (aw - (aw * w).sum(-1, keepdims=True) * w) / scale
            nrm = np.linalg.norm(step, axis=-1, keepdims=True)
        if not (np.all(np.isfinite(step)) and np.all(np.isfinite(nrm)) and np.all(nrm > 0)):
            raise ValueError("train_filters: non-finite weights (NaN/inf) during training; lower lr")
        w_new = step / nrm
        moved = np.max(np.linalg.norm(w_new - w, axis=-1))
        w = w_new
        if moved < tol:
            break
    return w


def power_iteration(
    a_fn: Callable[[np.ndarray], np.ndarray],
    w0: Any,
    steps: int = 50,
    shift: bool = True,
) -> np.ndarray:
    """Power iteration w(t+1) = A(w(t)) w(t) / ‖A(w(t)) w(t)‖ (Tian 2023, Eq. PI, Thm. 3).

    ``a_fn`` maps w (…, d) to A(w) (…, d, d); ``w0`` (…, d) → trajectory (steps + 1, …, d). With
    ``shift`` the iteration uses Â(w) = A(w) - λ_min(w) I + 1e-12 I, which has the same
    eigenvectors and fixed points (App. B.4, Eq. 104) and keeps the iteration well defined
    when A(w) is not PD.
    """
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be a nonnegative integer, got {steps!r}")
    w0 = np.asarray(w0, dtype=np.float64)
    w = _unit(w0, w0.shape[-1], "w0")
    traj = [w]
    eye = np.eye(w.shape[-1])
    for _ in range(int(steps)):
        a = a_fn(w)
        if shift:
            a = a - (np.linalg.eigvalsh(a)[..., :1, None] - 1e-12) * eye
        aw = (a @ w[..., None])[..., 0]
        nrm = np.linalg.norm(aw, axis=-1, keepdims=True)
        if np.any(nrm == 0) or not np.all(np.isfinite(aw)):
            raise ValueError("power_iteration: A(w) w vanished or is non-finite; try shift=True")
        w = aw / nrm
        traj.append(w)
    return np.stack(traj)


def eigengap(a: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(λ_1, λ_gap = λ_1 - λ_2, φ_1) of symmetric matrices (…, d, d) (Tian 2023, Sec. 3.2 notation)."""
    a = np.asarray(a, dtype=np.float64)
    vals, vecs = np.linalg.eigh(a)
    return vals[..., -1], vals[..., -1] - vals[..., -2], vecs[..., :, -1]


def is_lme(a_fn: Callable[[np.ndarray], np.ndarray], w: Any, tol: float = 1e-6) -> np.ndarray:
    """Whether w is a locally maximal eigenvector of A(w) (Tian 2023, Def. 3), to tolerance ``tol``.

    True when |φ_1(w)ᵀw| ≥ 1 - tol (w is the top eigenvector of A(w)) and λ_gap(w) > tol·|λ_1|
    (the top eigenvalue is distinct). ``a_fn`` maps w (…, d) to A(w); returns bool (…).
    """
    w = np.asarray(w, dtype=np.float64)
    w = _unit(w, w.shape[-1])
    lam1, gap, phi = eigengap(a_fn(w))
    return (np.abs((phi * w).sum(-1)) >= 1 - tol) & (gap > tol * np.abs(lam1))


def local_roughness(
    a_fn: Callable[[np.ndarray], np.ndarray],
    w: Any,
    radius: float = 1e-2,
    n_dirs: int = 64,
    rng: Any = None,
    chunk: int = 8,
) -> np.ndarray:
    """Estimate of the local roughness ρ(w) (Tian 2023, Sec. 3.2, Thm. 1).

    ρ(w) is the smallest scalar with ‖(A(v) - A(w)) w‖ ≤ ρ ‖v - w‖ + O(‖v - w‖²) near w. We
    sample ``n_dirs`` random tangent directions at geodesic distance ``radius`` and return the
    largest ratio ‖(A(v) - A(w))w‖ / ‖v - w‖ (a lower estimate of the sup that tightens with more
    directions). ``a_fn`` maps (…, d) to A (…, d, d) with α held fixed (stop-gradient): build it
    with α evaluated at w, not at v. Directions are evaluated ``chunk`` at a time to bound memory.
    w: (…, d) → (…).
    """
    from nlcl.tian.latent_data import as_rng

    w = np.asarray(w, dtype=np.float64)
    w = _unit(w, w.shape[-1])
    u = as_rng(rng).standard_normal((n_dirs,) + w.shape)
    u = u - (u * w).sum(-1, keepdims=True) * w
    u = u / np.linalg.norm(u, axis=-1, keepdims=True)
    vv = np.cos(radius) * w + np.sin(radius) * u
    a_w = a_fn(w)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    a_v = np.concatenate([a_fn(vv[i : i + chunk]) for i in range(0, n_dirs, int(chunk))])
    num = np.linalg.norm(((a_v - a_w) @ w[..., None])[..., 0], axis=-1)
    den = np.linalg.norm(vv - w, axis=-1)
    return (num / den).max(axis=0)


def distinct_directions(w: Any, cos_tol: float = 0.99) -> tuple[int, np.ndarray]:
    """Cluster unit vectors (n, d) into distinct directions (complete linkage on 1 - cos).

    Two filters belong to the same optimum when their cosine exceeds ``cos_tol``. Returns
    (number of clusters, labels of shape (n,)). Used to count distinct local optima reached from
    random initializations (Sec. 3.2 / 3.3).
    """
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2:
        raise ValueError(f"w must have shape (n, d), got {w.shape}")
    if not (-1 < cos_tol < 1):
        raise ValueError(f"cos_tol must lie in (-1, 1), got {cos_tol!r}")
    if w.shape[0] == 0:
        return 0, np.zeros(0, dtype=int)
    if w.shape[0] == 1:
        return 1, np.ones(1, dtype=int)
    w = w / np.linalg.norm(w, axis=-1, keepdims=True)
    dist = np.clip(1 - w @ w.T, 0, 2)
    iu = np.triu_indices(w.shape[0], 1)
    labels = hierarchy.fcluster(
        hierarchy.linkage(dist[iu], method="complete"), t=1 - cos_tol, criterion="distance"
    )
    return int(labels.max()), labels
