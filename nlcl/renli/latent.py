"""Exact low-dimensional dynamics of the linear learners of Ren & Li (2023): the *latent* engine.

**Why it is exact.**  In the reconstructed data model (``ren-li-setup.md``; Ren & Li, Eq. 1) every
input lies in the column space of the data map ``B_A = [M_A, H_A]`` (d × k, ``k = r + r_ξ``):
``x_A = B_A w_A`` with the latent sign vector ``w_A = (z, ξ_A) ∈ {±1}^k``.  The learner's output
``W_A x_A = K_A w_A`` depends on ``W_A`` only through ``K_A = W_A B_A`` (m × k), and the SGD
gradient of any loss of the outputs is ``∂L/∂W_A = Σ_i g_i x_iᵀ = (∂L/∂K_A) B_Aᵀ``
(``∂L/∂K_A = Σ_i g_i w_iᵀ``).  One SGD step ``W_A ← W_A − η ∂L/∂W_A`` is therefore, exactly,

    Y_A ← Y_A − η ∂L/∂K_A,     K_A = K_A(0) + Y_A D_A,     W_A = W_A(0) + Y_A B_Aᵀ,

with ``D_A = B_Aᵀ B_A = diag(σ_A², ν²)`` (k × k).  The same holds for B.  So training never needs
the ambient dimension ``d``: the state is ``Y`` (m × k), ``W`` is rebuilt only for snapshots.  The
loss itself needs only the Gram blocks ``K_Aᵀ K_A``, ``K_Bᵀ K_B``, ``K_Aᵀ K_B`` (k × k):

* the batch normalisation (Eq. 2): ``s_A² = mean_i w_iᵀ (K_Aᵀ K_A) w_i``;
* the similarities ``S_ij = ⟨f_A(x_A,i), f_B(x_B,j)⟩ = w_A,iᵀ (K_Aᵀ K_B) w_B,j / (s_A s_B)``, an
  ``n × n`` matrix built with ``O(n² k)`` work instead of ``O(n² m)``;
* the losses (Eqs. 3-4) are functions of ``S`` (:func:`similarity_loss`).

The metrics of Fig. 1 read ``U_A = W_A M_A = K_A[:, :r]`` and ``W_A H_A = K_A[:, r:]``.  The
reference implementation in the ambient dimension is :func:`nlcl.renli.simulation.train` with
``engine="direct"``; the tests check that both agree to 1e-9 in float64.  Chapter
``book/renli-simulation.py``.
"""

from __future__ import annotations

import math

import torch

from nlcl.core.blocks import axis_blocks
from nlcl.core.validate import ParameterError

__all__ = [
    "data_maps",
    "latent_loss",
    "latent_similarity",
    "negative_pair_term",
    "RUN_CHUNK_ELEMENTS",
    "similarity_loss",
]

_EPS = 1e-12  # the same constant as nlcl.renli.model.normalize_batch


#: Elements per run chunk of the memory-bound passes over (R, n, n) tensors (E of the negative-pair
#: term, the alignment metric's distances): about 1 MiB in float32, several times faster than the
#: whole batch; every run is computed by the same kernels, so the results do not depend on it.
RUN_CHUNK_ELEMENTS = 1 << 18


def data_maps(M: torch.Tensor, H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The data map ``B = [M, H]`` (..., d, k) and its Gram matrix ``D = Bᵀ B`` (..., k, k).

    ``x = B w`` with ``w = (z, ξ)`` (Ren & Li, Eq. 1); ``D = diag(σ², ν²)`` for the reconstructed
    model (orthogonal columns).  Chapter ``renli-simulation``.
    """
    B = torch.cat([M, H], dim=-1)
    return B, B.transpose(-1, -2) @ B


def _scaled_cross_gram(K_A, K_B, w_a, w_b) -> torch.Tensor:
    """``K_Aᵀ K_B / (s_A s_B)`` (R, k, k) with the batch normalisations ``s² = mean_i ||K w_i||² + ε``."""
    g_aa = K_A.transpose(-1, -2) @ K_A
    g_bb = K_B.transpose(-1, -2) @ K_B
    g_ab = K_A.transpose(-1, -2) @ K_B
    q_a = ((w_a @ g_aa) * w_a).sum(-1).mean(-1)  # mean_i ||W_A x_A,i||²
    q_b = ((w_b @ g_bb) * w_b).sum(-1).mean(-1)
    scale = (q_a + _EPS).sqrt() * (q_b + _EPS).sqrt()
    return g_ab / scale[:, None, None]


def latent_similarity(
    K_A: torch.Tensor, K_B: torch.Tensor, w_a: torch.Tensor, w_b: torch.Tensor
) -> torch.Tensor:
    """The batch similarity matrix ``S_ij = ⟨f_A(x_A,i), f_B(x_B,j)⟩`` from latent coordinates.

    ``f_A(x) = W_A x / sqrt(mean_batch ||W_A x||² + ε)`` (Ren & Li, Eq. 2, as
    :func:`nlcl.renli.model.representations`), with ``W_A x_A,i = K_A w_a,i``; computed through the
    k × k Gram blocks, never forming the m-dimensional outputs.  ``K_A, K_B`` (R, m, k),
    ``w_a, w_b`` (R, n, k) → (R, n, n).  Chapter ``renli-simulation``.
    """
    return (w_a @ _scaled_cross_gram(K_A, K_B, w_a, w_b)) @ w_b.transpose(-1, -2)


def latent_loss(
    K_A: torch.Tensor,
    K_B: torch.Tensor,
    w_a: torch.Tensor,
    w_b: torch.Tensor,
    lam: torch.Tensor,
    beta: torch.Tensor,
) -> torch.Tensor:
    """The contrastive loss of Ren & Li, Eq. 3 (reconstructed), from latent coordinates, per run.

    Equal to :func:`nlcl.renli.losses.contrastive_loss` of the representations
    ``f = K w / s`` (:func:`latent_similarity`), computed as :func:`similarity_loss` but cheaper:
    the positive term ``mean_i S_ii`` needs only ``O(n k)`` work, and the ``n × n`` similarity
    matrix is built only for the runs with ``λ > 0`` (for ``λ = 0`` the negative-pair term is
    exactly 0: the non-contrastive loss, Eq. 4).  ``K`` (R, m, k), ``w`` (R, n, k), ``lam`` and
    ``beta`` (R,) → (R,).  Chapter ``renli-simulation``.
    """
    lam = torch.as_tensor(lam, dtype=K_A.dtype, device=K_A.device).expand(K_A.shape[0])
    beta = torch.as_tensor(beta, dtype=K_A.dtype, device=K_A.device).expand(K_A.shape[0])
    P = w_a @ _scaled_cross_gram(K_A, K_B, w_a, w_b)  # (R, n, k): row i is f_A,i in B's latent frame
    loss = -(P * w_b).sum(-1).mean(-1)
    on = torch.nonzero(lam > 0).flatten()
    if on.numel() == 0:
        return loss
    if on.numel() == K_A.shape[0]:
        return loss + lam * _LatentNegativePairs.apply(P, w_b, beta.contiguous(), None) / (2.0 * beta)
    neg = _LatentNegativePairs.apply(P, w_b, beta[on].contiguous(), on)
    return loss.index_add(0, on, lam[on] * neg / (2.0 * beta[on]))


class _NegativePairs(torch.autograd.Function):
    """``Σ_rows + Σ_cols`` of ``mean log mean_{j≠i} exp(β S_ij)`` with a hand-written backward.

    Forward: ``E = exp(β S − c)`` once per run (diagonal excluded, ``c`` the run's largest
    off-diagonal ``β S_ij``), whose row and column sums give both log-sum-exps; ``E`` is saved.
    Backward: ``∂/∂S_ij = β/n · (softmax_row_i(j) + softmax_col_j(i)) = β/n · E_ij (1/rowsum_i +
    1/colsum_j)``, zero on the diagonal: one pass, no second exponential.  If a row or column sum
    falls below ``sqrt(tiny)`` (a row far below the run's maximum, possible only for large ``β``),
    the run is recomputed with a shift per row and per column (``torch.logsumexp``).
    """

    @staticmethod
    def forward(ctx, S: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:  # noqa: D102
        n = S.shape[-1]
        E = S * beta[:, None, None]
        E.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
        c = E.amax(dim=(-1, -2))
        E.sub_(c[:, None, None]).exp_()
        row, col = E.sum(-1), E.sum(-2)
        tiny = torch.finfo(S.dtype).tiny ** 0.5
        if bool((row.amin() < tiny) | (col.amin() < tiny)):  # rare: per-row/column shifts
            a = S * beta[:, None, None]
            a.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
            lse_r, lse_c = torch.logsumexp(a, dim=-1), torch.logsumexp(a, dim=-2)
            E = None
        else:
            lse_r, lse_c = row.log() + c[:, None], col.log() + c[:, None]
        ctx.save_for_backward(S, beta, lse_r, lse_c, row, col, E if E is not None else S.new_empty(0))
        ctx.stable = E is None
        log_mean = math.log(n - 1)
        return (lse_r - log_mean).mean(-1) + (lse_c - log_mean).mean(-1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: D102
        S, beta, lse_r, lse_c, row, col, E = ctx.saved_tensors
        n = S.shape[-1]
        if ctx.stable:
            a = S * beta[:, None, None]
            a.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
            out = (a - lse_r[:, :, None]).exp_()
            out += (a - lse_c[:, None, :]).exp_()
        else:
            out = E * (row.reciprocal()[:, :, None] + col.reciprocal()[:, None, :])
        out *= (grad * beta / n)[:, None, None]
        return out, None


class _LatentNegativePairs(torch.autograd.Function):
    """:class:`_NegativePairs` of ``S = P w_bᵀ``, differentiated with respect to ``P`` directly.

    With ``E`` as in :class:`_NegativePairs`, ``∂/∂P = β/n · [diag(1/rowsum) E w_b + E diag(1/colsum)
    w_b]``: one ``(n × n)·(n × 2k)`` product replaces every elementwise ``n × n`` pass of the
    backward.  Falls back to per-row/column shifts like :class:`_NegativePairs`.

    ``runs`` (a long tensor of run indices, or ``None`` for all) selects the runs whose term is
    computed (``beta`` holds one value per selected run); the gradient of the other runs is 0.
    The selected runs are read a chunk at a time, never gathered into an (R', n, k) copy: the
    numbers of ``apply(P[runs], w_b[runs], beta)``, bitwise (tests: test_latent.py).
    """

    @staticmethod
    def forward(ctx, P: torch.Tensor, w_b: torch.Tensor, beta: torch.Tensor, runs=None) -> torch.Tensor:  # noqa: D102
        n, k = P.shape[-2], w_b.shape[-1]
        R = P.shape[0] if runs is None else runs.numel()
        # A few runs at a time (chunks of about 1 MiB of E, one run at n = 512 in float32): E stays
        # in the cache through every pass (exp, sums, the backward product), where the (R, n, n)
        # batch went through memory ~8 times.  Batched products and reductions over a chunk of
        # runs are the batched ones over all runs, bitwise (tests: test_latent.py).  E and the
        # backward's right factor [w_b, w_b / colsum] reuse one buffer each over the chunks.
        need = ctx.needs_input_grad[0]
        c, row, col = P.new_empty(R), P.new_empty(R, n), P.new_empty(R, n)
        both = P.new_empty(R, n, 2 * k) if need else None
        blocks = axis_blocks(R, n * n, RUN_CHUNK_ELEMENTS)
        size = max(s.stop - s.start for s in blocks)
        E_buf = P.new_empty(size, n, n)
        W_buf = P.new_empty(size, n, 2 * k) if need else None
        for s in blocks:
            b = s.stop - s.start
            P_s, w_s = _chunk(P, runs, s), _chunk(w_b, runs, s)
            E = torch.bmm(P_s * beta[s][:, None, None], w_s.transpose(-1, -2), out=E_buf[:b])  # β S
            E.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
            torch.amax(E, dim=(-1, -2), out=c[s])
            E.sub_(c[s][:, None, None]).exp_()
            torch.sum(E, -1, out=row[s])
            torch.sum(E, -2, out=col[s])
            if need:  # the product of the backward while E is in the cache (the backward is linear in grad)
                W = W_buf[:b]
                W[..., :k] = w_s
                torch.div(w_s, col[s][:, :, None], out=W[..., k:])
                torch.bmm(E, W, out=both[s])
        tiny = torch.finfo(P.dtype).tiny ** 0.5
        ctx.stable = bool((row.amin() < tiny) | (col.amin() < tiny))
        ctx.runs, ctx.shape = runs, P.shape
        if ctx.stable:  # rare: per-row/column shifts, backward through S
            P_on, w_on = _chunk(P, runs, slice(None)), _chunk(w_b, runs, slice(None))
            a = (P_on * beta[:, None, None]) @ w_on.transpose(-1, -2)
            a.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
            lse_r, lse_c = torch.logsumexp(a, dim=-1), torch.logsumexp(a, dim=-2)
            ctx.save_for_backward(P_on, w_on, beta, lse_r, lse_c)
        else:
            lse_r, lse_c = row.log() + c[:, None], col.log() + c[:, None]
            ctx.save_for_backward(w_b, beta, row, both)
        log_mean = math.log(n - 1)
        return (lse_r - log_mean).mean(-1) + (lse_c - log_mean).mean(-1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: D102
        if ctx.stable:
            P, w_b, beta, lse_r, lse_c = ctx.saved_tensors
            n = P.shape[-2]
            a = (P * beta[:, None, None]) @ w_b.transpose(-1, -2)
            a.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
            dS = (a - lse_r[:, :, None]).exp_()
            dS += (a - lse_c[:, None, :]).exp_()
            dP = dS @ w_b
        else:
            w_b, beta, row, both = ctx.saved_tensors  # both = E [w_b, w_b / colsum] (R', n, 2k)
            n, k = both.shape[-2], w_b.shape[-1]
            dP = both[..., :k] / row[:, :, None] + both[..., k:]
        dP = dP * (grad * beta / n)[:, None, None]
        if ctx.runs is None:
            return dP, None, None, None
        # the gradient of P[runs] taken back to P (as indexing's backward: accumulate into zeros)
        return dP.new_zeros(ctx.shape).index_put_((ctx.runs,), dP, accumulate=True), None, None, None


def _chunk(x: torch.Tensor, runs: torch.Tensor | None, s: slice) -> torch.Tensor:
    """Rows ``s`` of ``x`` (``runs`` None) or of ``x[runs]``, contiguous, without gathering the rest."""
    return x[s] if runs is None else x.index_select(0, runs[s])


def negative_pair_term(S: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """``mean_i log mean_{j≠i} e^{β S_ij} + mean_j log mean_{i≠j} e^{β S_ij}`` per run (R, n, n) → (R,).

    The bracket of the contrastive loss, Ren & Li Eq. 3 (reconstructed), with a fused backward
    (:class:`_NegativePairs`).  ``beta`` (R,) positive.  Chapter ``renli-simulation``.
    """
    if S.dim() != 3 or S.shape[-1] != S.shape[-2] or S.shape[-1] < 2:
        raise ParameterError(f"S has shape {tuple(S.shape)}; expected (R, n, n) with n >= 2")
    beta = torch.as_tensor(beta, dtype=S.dtype, device=S.device).expand(S.shape[0]).contiguous()
    return _NegativePairs.apply(S, beta)


def similarity_loss(S: torch.Tensor, lam: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """The contrastive loss of Ren & Li, Eq. 3 (reconstructed), from the similarity matrix ``S``.

    ``L_C = −mean_i S_ii + (λ/β)·½ [mean_i log mean_{j≠i} e^{β S_ij} + mean_j log mean_{i≠j} e^{β S_ij}]``,
    equal to :func:`nlcl.renli.losses.contrastive_loss` of the representations whose similarities
    are ``S``.  The negative-pair term is computed only for runs with ``λ > 0`` (for ``λ = 0`` it
    contributes exactly 0: the non-contrastive loss, Eq. 4).  ``S`` (R, n, n), ``lam`` and
    ``beta`` (R,) → (R,).  Chapter ``renli-simulation``.
    """
    lam = torch.as_tensor(lam, dtype=S.dtype, device=S.device).expand(S.shape[0])
    beta = torch.as_tensor(beta, dtype=S.dtype, device=S.device).expand(S.shape[0])
    loss = -torch.diagonal(S, dim1=-2, dim2=-1).mean(-1)
    on = torch.nonzero(lam > 0).flatten()
    if on.numel() == 0:
        return loss
    if on.numel() == S.shape[0]:
        return loss + lam * negative_pair_term(S, beta) / (2.0 * beta)
    neg = negative_pair_term(S[on], beta[on])
    return loss.index_add(0, on, lam[on] * neg / (2.0 * beta[on]))
