"""The normalizations inside the heads of :mod:`nlcl.renli.heads`, batched over ``R`` runs.

BatchNorm (Ioffe & Szegedy 2015, Alg. 1: ``γ (h − μ_B)/sqrt(σ²_B + ε) + β`` with the batch mean and
biased batch variance, running statistics with momentum and the unbiased variance) and the output
normalization of Ren & Li (2023), Eq. 2 extended to outputs with a mean.  Each comes in two forms:
over a batch of ``n`` rows, and over a *table* of ``C`` distinct rows of which row ``c`` appears
``w_c`` times in the batch (``Σ_c w_c = n``).  The weighted statistics ``μ = Σ_c w_c h_c / n`` and
``σ² = Σ_c w_c (h_c − μ)² / n`` are those of the batch with its repeated rows written out, and every
row's output depends only on the row and the statistics, so running the heads on the table and
gathering the rows at the end gives the batch's outputs (up to rounding) at the cost of ``C`` rows:
the captions chapter draws 256 images per step whose captions come from a table of 50.  Chapter
``renli-mnist-captions``.
"""

from __future__ import annotations

import torch

from nlcl.renli.model import _EPS

__all__ = ["batch_norm_columns", "batch_norm_rows", "normalize_output"]

_BN_EPS = 1e-5  # torch.nn.BatchNorm1d's ε


def batch_norm_columns(heads: torch.nn.Module, h: torch.Tensor, layer: int) -> torch.Tensor:
    """BatchNorm of ``h`` (R, w, n) over its last dimension (unit ``k`` of run ``i`` over the batch).

    One ``torch.nn.functional.batch_norm`` over the ``R·w`` channels of the contiguous (1, R·w, n)
    view (its fused kernels: a few passes instead of autograd through ~20 elementwise ops), with the
    parameters ``bn_gamma{layer}``, ``bn_beta{layer}`` (R, w) and the buffers
    ``running_mean{layer}``, ``running_var{layer}`` of ``heads`` (updated in place in training mode,
    momentum ``heads.momentum``, unbiased variance), like ``torch.nn.BatchNorm1d``.
    """
    R, w, n = h.shape
    return torch.nn.functional.batch_norm(
        h.reshape(1, R * w, n),
        getattr(heads, f"running_mean{layer}").view(-1),
        getattr(heads, f"running_var{layer}").view(-1),
        getattr(heads, f"bn_gamma{layer}").reshape(-1),
        getattr(heads, f"bn_beta{layer}").reshape(-1),
        training=heads.training,
        momentum=heads.momentum,
        eps=_BN_EPS,
    ).view(R, w, n)


def batch_norm_rows(
    heads: torch.nn.Module, h: torch.Tensor, layer: int, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """BatchNorm of ``h`` (R, C, w) over its rows, each row ``c`` counted ``weights[:, c]`` times.

    ``weights`` (R, C) (counts summing to the batch size ``n`` per run) gives the batch statistics
    ``μ = Σ_c w_c h_c / n`` and ``σ² = Σ_c w_c (h_c − μ)² / n`` (two passes); ``None`` counts every row
    once.  Running statistics as in :func:`batch_norm_columns` (the variance times ``n/(n−1)``); in
    evaluation mode they replace the batch's.
    """
    rm, rv = getattr(heads, f"running_mean{layer}"), getattr(heads, f"running_var{layer}")
    if heads.training:
        mean, centred, var, n = _weighted_moments(h, weights)
        with torch.no_grad():
            rm.lerp_(mean.detach(), heads.momentum)
            rv.lerp_(var.detach() * n / max(n - 1, 1), heads.momentum)
    else:
        centred, var = h - rm[:, None], rv
    h = centred / torch.sqrt(var[:, None] + _BN_EPS)
    return h * getattr(heads, f"bn_gamma{layer}")[:, None] + getattr(heads, f"bn_beta{layer}")[:, None]


def _weighted_moments(h: torch.Tensor, weights: torch.Tensor | None):
    """Mean (R, w), centred rows, biased variance (R, w) and the batch size of rows ``h`` (R, C, w)."""
    if weights is None:
        n = h.shape[1]
        mean = h.mean(1)
        centred = h - mean[:, None]
        return mean, centred, (centred * centred).mean(1), n
    n = float(weights[0].sum())
    w = weights[..., None] / n
    mean = (w * h).sum(1)
    centred = h - mean[:, None]
    return mean, centred, (w * centred * centred).sum(1), n


def normalize_output(
    heads: torch.nn.Module, h: torch.Tensor, weights: torch.Tensor | None = None
) -> torch.Tensor:
    """Centre the rows of ``h`` (R, C, d) over the batch and divide by ``sqrt(mean_batch ||h − mean h||²)``.

    Ren & Li (2023), Eq. 2 extended to outputs with a mean (:func:`~nlcl.renli.model.normalize_batch`),
    with row ``c`` counted ``weights[:, c]`` times (``None``: once).  In training mode the batch's mean
    and scale update ``heads.out_mean`` and ``heads.out_scale2`` (momentum ``heads.momentum``); in
    evaluation mode those replace them.
    """
    if heads.training:
        mean, centred, var, _ = _weighted_moments(h, weights)
        scale2 = var.sum(-1)
        with torch.no_grad():
            heads.out_mean.lerp_(mean.detach(), heads.momentum)
            heads.out_scale2.lerp_(scale2.detach(), heads.momentum)
        return centred / torch.sqrt(scale2 + _EPS)[:, None, None]
    return (h - heads.out_mean[:, None]) / torch.sqrt(heads.out_scale2 + _EPS)[:, None, None]
