"""A(w) = C_α[x̃ʷ] (Tian 2023, Lemma 3, Eq. 6) for the one-layer chapter's views, where both views
of every sample are the same point (``stack_views(x, x)``, the batches of Secs. 3.2 and 6-8).

With x[i'] = x[i] the gated views coincide, a₁ = a₂, so the positive-pair term of Eq. 3
(Σ_i r_i (a_i − a_i')(a_i − a_i')ᵀ) is an exact zero matrix, and only the first N rows need gating.
:func:`same_view_gate_matrix` computes the remaining operations of
:func:`nlcl.tian.landscape.gate_matrix` (:func:`nlcl.tian.landscape.gated_input`, then
:func:`nlcl.tian.contrastive.contrastive_covariance`) in the same order, on the same chunks of
filters, so the result is the same number (the dropped term is +0 and x − 0 = x); it skips the
second half of the views and the zero term, about half of the work of every step of Eq. 7.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nlcl.core.blocks import axis_blocks
from nlcl.tian.landscape import GATE_CHUNK_ELEMENTS, FeatureAlpha, gate_matrix, gated_input

__all__ = ["same_view_gate_fn", "same_view_gate_matrix", "same_views"]


def same_views(views: Any) -> bool:
    """Whether a stacked (2N, d) numpy batch is ``stack_views(x, x)``: both views of each sample equal."""
    if not isinstance(views, np.ndarray) or views.ndim != 2 or views.shape[0] % 2:
        return False
    n = views.shape[0] // 2
    return views.dtype == np.float64 and bool(np.array_equal(views[:n], views[n:]))


def same_view_gate_matrix(x: np.ndarray, w: np.ndarray, activation: str, alpha: Any = None) -> np.ndarray:
    """A(w) of :func:`nlcl.tian.landscape.gate_matrix` on ``stack_views(x, x)`` (Lemma 3, Eq. 3).

    ``x`` (N, d) float64; ``w`` (…, d) numpy, normalized here as there; ``alpha`` None (uniform),
    a :class:`~nlcl.tian.landscape.FeatureAlpha` or one (N, N) array for all filters. Per chunk:
    inter = 2N·a₁ᵀa₁ − 2·s sᵀ (uniform) or a₁ᵀdiag(r + c)a₁ − a₁ᵀ(α a₁) − a₁ᵀ(αᵀa₁), over 2N².
    """
    n, d = x.shape
    w = np.asarray(w, dtype=np.float64)
    nrm = np.linalg.norm(w, axis=-1, keepdims=True)
    if (nrm == 0).any():
        raise ValueError("w must be nonzero (it is normalized to the unit sphere)")
    w = w / nrm
    lead = w.shape[:-1]
    feat = None
    if isinstance(alpha, FeatureAlpha):
        alpha, feat = alpha.alpha_of, alpha.features(w).reshape(-1, n)
    wf = w.reshape(-1, d)
    size = 2 * n * d + (n * n if alpha is not None else 0)
    x_norm = np.linalg.norm(x, axis=-1)
    out = np.empty((wf.shape[0], d, d))
    for c in axis_blocks(wf.shape[0], size, GATE_CHUNK_ELEMENTS):
        a1 = gated_input(x, wf[c], activation, x_norm=x_norm)
        at = a1.swapaxes(-1, -2)
        if alpha is None:
            sa = a1.sum(-2)
            inter = 2 * n * (at @ a1) - 2 * (sa[..., :, None] * sa[..., None, :])
        else:
            a_c = alpha(feat[c]) if feat is not None else alpha
            r, cs = a_c.sum(-1), a_c.sum(-2)
            inter = (
                (a1 * (r + cs)[..., None]).swapaxes(-1, -2) @ a1
                - at @ (a_c @ a1)
                - at @ (a_c.swapaxes(-1, -2) @ a1)
            )
        out[c] = inter / (2.0 * n * n)
    return out.reshape(lead + (d, d))


def same_view_gate_fn(views: Any, activation: str, alpha: Any = None) -> Callable[[Any], Any]:
    """w ↦ A(w) on ``views`` (Lemma 3): :func:`same_view_gate_matrix` for numpy ``w`` when both views
    are equal (:func:`same_views`) and α is None, a FeatureAlpha or one (N, N) array, else
    :func:`nlcl.tian.landscape.gate_matrix`."""
    fast = same_views(views) and (
        alpha is None
        or isinstance(alpha, FeatureAlpha)
        or (isinstance(alpha, np.ndarray) and alpha.ndim == 2 and alpha.dtype == np.float64)
    )
    if not fast:
        return lambda w: gate_matrix(views, w, activation, alpha)
    x = np.ascontiguousarray(views[: views.shape[0] // 2])

    def a_fn(w: Any) -> Any:
        if not isinstance(w, np.ndarray) or w.ndim < 2:
            return gate_matrix(views, w, activation, alpha)
        return same_view_gate_matrix(x, w, activation, alpha)

    return a_fn
