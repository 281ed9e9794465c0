"""Token tables: an exact, fast training step of the two-layer RF network on token data.

On the synthetic token task of Tian (2023), Sec. 5, the input of RF k is one of n_tokens
embeddings, x_k = u_a.  Everything the network computes per sample at RF k is then a function of
(k, a) alone, so a training step can work on per-RF *token tables* instead of per-sample tensors:

* pre-activations  P[k, a, m] = w_kmᵀ u_a                     (Sec. 4, Eq. 109; K·n_tokens·M values)
* activations      H = h(P)                                     (the nonlinearity on the table)
* BatchNorm        per view v, with c_{kva} = #{n : a_{n,k} = a} the token counts of the batch,
                   μ = Σ_a (c/N) H,  σ² = Σ_a (c/N) (H − μ)²,  Y = (H − μ)/√(σ² + ε)
                   (App. D, Eqs. 164-165: the batch statistics are count-weighted table sums);
                   the ``pooled-*`` variants use the counts of both views, (c_{k1a} + c_{k2a}) / 2N,
                   so μ, σ² and Y are the same for both views
* top layer        Z[k, v, a] = Σ_m Y[k, v, a, m] v_km ∈ R^{d_out}
* output           o_n = Σ_k Z[k, v, a_{n,k}],  f_n = o_n / ‖o_n‖

The backward pass runs in the same table space (the gradient reaching a table entry is the sum
of the per-sample gradients of the samples that carry that token; the BatchNorm backward uses the
count weights).  Work per step is O(K · n_tokens · M · d_out) instead of O(N · K · M · d_out):
with N = 2 × 128 samples and n_tokens = 20 it is about 13× less than the per-sample network, and
the result is the same number up to floating-point rounding (unit-tested against autograd on
:class:`nlcl.tian.rf_network.TwoLayerRF`, for every activation, BatchNorm variant and loss).

:func:`token_step` returns the per-run loss and the gradients of W and V; :func:`nlcl.tian.tokens.training.train_batched`
uses it for :class:`~nlcl.tian.tokens.world.TokenBatch` inputs (``engine="tables"``, the default for them).
Losses are those of :func:`nlcl.tian.losses.contrastive_loss` (InfoNCE and the uniform-α quadratic
loss, Tian 2023, Eq. 1 and Sec. 2), evaluated and differentiated in closed form here
(:func:`_loss_and_grad`; its value and gradients are unit-tested against autograd through
:func:`nlcl.tian.losses.contrastive_loss`).  Explained in ``book/tian-tokens.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nlcl.core.validate import ParameterError, choice
from nlcl.tian.losses import LOSSES
from nlcl.tian.rf_network import BN_BACKPROP, BN_POOLED, TwoLayerRF, segments
from nlcl.tian.tokens.world import TokenBatch

__all__ = ["token_counts", "token_step"]

_EPS_NORMALIZE = 1e-12  # torch.nn.functional.normalize's eps


def token_counts(
    index: torch.Tensor, n_tokens: int, views: int, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Token counts c[r, k, v, a] = #{n in view v : index[r, n, k] = a} of a batch (R, views·N, K).

    The sufficient statistic of a token batch for the BatchNorm moments (Tian 2023, App. D,
    Eqs. 164-165): μ_v = Σ_a c_va h_a / N.  Returns (R, K, views, n_tokens).
    """
    if index.ndim != 3 or index.shape[1] % views:
        raise ParameterError(
            f"index has shape {tuple(index.shape)}; expected (R, views·N, K) with views={views}"
        )
    R, VN, K = index.shape
    N = VN // views
    c = torch.zeros(R, K, views, n_tokens, dtype=dtype, device=index.device)
    src = torch.ones((), dtype=dtype, device=index.device).expand(R, K, views, N)
    return c.scatter_add_(3, index.reshape(R, views, N, K).permute(0, 3, 1, 2), src)


def _loss_and_grad(f1: torch.Tensor, f2: torch.Tensor, loss: str, tau: torch.Tensor):
    """Per-run loss (r,) and its gradients wrt f1, f2 (r, N, d) (Tian 2023, Eq. 1; Sec. 2).

    The value is :func:`nlcl.tian.losses.contrastive_loss` (same formula, evaluated with the
    softmax kept for the backward); the gradients are its derivatives in closed form.
    """
    N = f1.shape[1]
    t = tau.reshape(-1, 1, 1)
    pos = (f1 * f2).sum(-1)  # (r, N)
    if loss == "infonce":
        # logits: s_ij = f1_iᵀf1_j off the diagonal, the positive f1_iᵀf2_i on it, over τ
        logits = torch.matmul(f1, f1.transpose(1, 2))
        logits.diagonal(dim1=1, dim2=2).copy_(pos)
        logits.div_(t)
        mx = logits.amax(2, keepdim=True)
        G = logits.sub_(mx).exp_()
        Zs = G.sum(2, keepdim=True)
        value = (Zs.log() + mx).squeeze(2).sub_(pos / t[:, :, 0]).mean(1)
        G.div_(Zs * (N * t))  # softmax / (Nτ) = ∂value/∂logit·τ
        gd = G.diagonal(dim1=1, dim2=2) - 1.0 / (N * t[:, :, 0])  # ∂/∂pos_i
        G.diagonal(dim1=1, dim2=2).zero_()  # ∂/∂s_ij, i ≠ j
        df2 = gd[:, :, None] * f1
        df1 = torch.matmul(G + G.transpose(1, 2), f1).addcmul_(gd[:, :, None], f2)
        return value, df1, df2
    g = f1.sum(1, keepdim=True)  # (r, 1, d)
    value = (-pos.mean(1) + ((g * g).sum((1, 2)) - (f1 * f1).sum((1, 2))) / N**2) / tau
    df1 = (-f2 / N + 2.0 * (g - f1) / N**2) / t
    df2 = -f1 / (N * t)
    return value, df1, df2


def token_step(
    model: TwoLayerRF,
    x: TokenBatch,
    loss: str | Sequence[str],
    tau: float | torch.Tensor,
    views: int = 2,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-run contrastive loss and its gradients (∂/∂W, ∂/∂V) on a token batch, in table space.

    ``x`` holds the two views stacked along the sample axis (``index`` (R, 2N, K), as
    :func:`nlcl.tian.tokens.training.train_batched` passes them); BatchNorm statistics are per view
    (over both views for the ``pooled-*`` variants).  The
    values equal ``contrastive_loss(model(x.dense(), views=2) …)`` and its autograd gradients up
    to rounding (Tian 2023, Sec. 4 Eq. 109, App. D Eqs. 164-165, Eq. 1).  ``loss`` is one name of
    :data:`nlcl.tian.losses.LOSSES` or one per run; ``tau`` a float or a per-run tensor (R,).
    Returns (loss (R,), dW (R, K, M, d), dV (R, d_out, KM)); W and V are not modified.
    """

    if views != 2:
        raise ParameterError(f"views={views}; the contrastive token step takes the two views x, x' (views=2)")
    W, Vw = model.W.detach(), model.V.detach()
    R, K, M, d = W.shape
    O = Vw.shape[1]
    idx, E = x.index, x.embedding
    if idx.ndim != 3 or idx.shape[0] != R or idx.shape[2] != K or E.shape[0] != R or E.shape[2] != d:
        raise ParameterError(
            f"TokenBatch index {tuple(idx.shape)} / embedding {tuple(E.shape)} do not match W {tuple(W.shape)}; "
            "expected (R, 2N, K) and (R, n_tokens, d)"
        )
    if idx.shape[1] % 2:
        raise ParameterError(f"the batch has {idx.shape[1]} samples; expected 2N (both views stacked)")
    losses = [loss] * R if isinstance(loss, str) else list(loss)
    if len(losses) != R:
        raise ParameterError(f"loss has {len(losses)} entries; expected 1 or n_runs={R}")
    for name in losses:
        choice("loss", name, LOSSES)
    tau_t = torch.as_tensor(tau, dtype=W.dtype, device=W.device).reshape(-1).expand(R)
    T = E.shape[1]
    N = idx.shape[1] // 2
    E = E.to(W.dtype)

    # ---- forward, in table space ------------------------------------------------------------
    # The token task's embeddings are diagonal (u_a = ‖u_a‖ e_a): then w_kmᵀ u_a = ‖u_a‖ w_km[a].
    scale = None
    if T == d:
        dg = E.diagonal(dim1=1, dim2=2)
        if torch.equal(E, torch.diag_embed(dg)):
            scale = dg[:, None, :, None]  # (R, 1, T, 1)
    if scale is not None:
        Pre = (W.transpose(2, 3) * scale).contiguous()  # (R, K, T, M): w_kmᵀ u_a
    else:
        Pre = torch.matmul(E[:, None], W.transpose(2, 3))
    Y = torch.empty(R, K, 2, T, M, dtype=W.dtype, device=W.device)
    counts = None
    bn_saved = {}
    for sl, (act, bn) in model._segments:
        h = model._acts[act](Pre[sl])[:, :, None]  # h(w_kmᵀ u_a), the same for both views
        spec = BN_BACKPROP[bn]
        if spec is None:
            Y[sl] = h
            continue
        if counts is None:
            counts = token_counts(idx, T, 2, W.dtype)[..., None] / N  # (R, K, 2, T, 1)
        p = counts[sl]
        if bn in BN_POOLED:  # one set of moments for both views: weights (c₁ + c₂) / 2N
            p = p.mean(2, keepdim=True)
        mu = (p * h).sum(3, keepdim=True)
        c = h - mu
        s = torch.rsqrt((p * c * c).sum(3, keepdim=True) + model.bn_eps)
        Y[sl] = c * s
        bn_saved[sl.start] = (s, p)
    Vk = Vw.reshape(R, O, K, M).permute(0, 2, 3, 1)  # (R, K, M, O): v_km
    Z = torch.matmul(Y.reshape(R, K, 2 * T, M), Vk)  # (R, K, 2T, O)
    # o_n = Σ_k Z[k, v, a_{n,k}]: rows ((r K + k) 2 + v) T + a of Z
    ar = torch.arange
    off = (
        (ar(R, device=idx.device)[:, None, None, None] * K + ar(K, device=idx.device)) * 2
        + ar(2, device=idx.device)[None, :, None, None]
    ) * T
    iv = idx.reshape(R, 2, N, K)
    flat = (iv + off).reshape(R * 2 * N, K)
    # the same rows in (K, R·2N) order for the backward scatter, without a transpose copy
    flat_t = torch.empty(K, R, 2, N, dtype=flat.dtype, device=flat.device)
    torch.add(iv.permute(3, 0, 1, 2), off.permute(3, 0, 1, 2), out=flat_t)
    flat_t = flat_t.reshape(K, R * 2 * N)
    out = torch.nn.functional.embedding_bag(flat, Z.reshape(-1, O), mode="sum").reshape(R, 2, N, O)
    if model.normalize_output:
        norm = out.norm(dim=-1, keepdim=True)
        f = out / norm.clamp_min(_EPS_NORMALIZE)
    else:
        f = out

    # ---- loss and its gradient ----------------------------------------------------------------
    value = torch.empty(R, dtype=W.dtype, device=W.device)
    df = torch.empty_like(f)
    for sl, name in segments(losses):
        v, d1, d2 = _loss_and_grad(f[sl, 0], f[sl, 1], name, tau_t[sl])
        value[sl], df[sl, 0], df[sl, 1] = v, d1, d2

    # ---- backward ---------------------------------------------------------------------------------
    if model.normalize_output:  # f = o / max(‖o‖, eps), as torch.nn.functional.normalize
        radial = (f * df).sum(-1, keepdim=True) * (norm >= _EPS_NORMALIZE)
        dout = (df - f * radial).div_(norm.clamp_min(_EPS_NORMALIZE))
    else:
        dout = df
    # ∂Z[row] = Σ over the (n, k) with flat[n, k] = row of ∂o_n, one RF k at a time (the rows of
    # different k are disjoint; one index_add_ per k avoids materializing ∂o repeated K times)
    dZ = torch.zeros(R * K * 2 * T, O, dtype=W.dtype, device=W.device)
    src = dout.reshape(R * 2 * N, O)
    for k in range(K):
        dZ.index_add_(0, flat_t[k], src)
    dZ = dZ.reshape(R, K, 2 * T, O)
    Yf = Y.reshape(R, K, 2 * T, M)
    dV = torch.matmul(dZ.transpose(2, 3), Yf).permute(0, 2, 1, 3).reshape(R, O, K * M)  # (R, O, KM)
    dY = torch.matmul(dZ, Vk.transpose(2, 3)).reshape(R, K, 2, T, M)
    dH = torch.empty_like(Pre)
    for sl, (act, bn) in model._segments:
        spec = BN_BACKPROP[bn]
        dy = dY[sl]
        if spec is None:
            dh = dy.sum(2)
        else:
            s, p = bn_saved[sl.start]
            y = Y[sl]
            if bn in BN_POOLED:  # y is shared by the views: its gradient is the sum of theirs
                y, dy = y[:, :, :1], dy.sum(2, keepdim=True)
            dc = dy * s
            if spec[0]:  # through μ
                dc = dc - p * (s * dy.sum(3, keepdim=True))
            if spec[1]:  # through σ²
                dc = dc - p * y * (s * (dy * y).sum(3, keepdim=True))
            dh = dc.sum(2)
        dH[sl] = dh * model._acts[act].derivative(Pre[sl])
    if scale is not None:  # ∂W[k, m, a] = ‖u_a‖ ∂P[k, a, m]
        dW = (dH * scale).transpose(2, 3).contiguous()
    else:
        dW = torch.matmul(dH.transpose(2, 3), E[:, None])  # (R, K, M, d)
    return value, dW, dV
