"""The two-layer receptive-field network of Tian (2023), Sec. 4 / Fig. 2(a), batched over runs.

K disjoint receptive fields (RFs) R_k with input x_k ∈ R^d each feed M filters w_km; the hidden
layer f_1 = [h(w_kmᵀ x_k)]_{km} ∈ R^{KM} optionally goes through BatchNorm (App. D / E.2), then
a top linear layer V ∈ R^{d_out × KM}; the output is ℓ2-normalized (as in the paper's released
code), f = V f_1 / ‖V f_1‖.

Every tensor carries a leading *run* axis R: ``W`` is (R, K, M, d) and ``V`` is (R, d_out, KM),
so many (configuration, seed) runs with the same shapes train in one vectorized computation.
Runs in one stack may differ in activation and BatchNorm variant (contiguous *segments* of runs
share them).  Inputs are dense tensors x (R, N, K, d) (e.g. image patches, App. E.3) or the
sparse :class:`nlcl.tian.tokens.world.TokenBatch` of the token task (Sec. 5).

BatchNorm variants (App. E.2, Table 1), forward pass identical, gradient through (μ_k, σ_k²):

========== ======= ========
name       μ_k     σ_k²
========== ======= ========
none       (no BatchNorm)
vanilla    yes     yes
mean       yes     no      (the paper's mean-backprop BatchNorm, Def. 5)
var        no      yes
detached   no      no
========== ======= ========

Where the moments come from: the four names above take (μ_k, σ_k²) *per view* (x and x' are
two forward calls, as in the paper's released code); the same four with the prefix ``pooled-``
(``pooled-vanilla``, ``pooled-mean``, ``pooled-var``, ``pooled-detached``) take them over the 2N
samples of both views together, as the analysis of App. D (Eqs. 164-165) writes the batch.

Explained in the chapters ``book/tian-tokens.py`` and ``book/tian-two-layer-theory.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError, choice, positive_int
from nlcl.tian.tokens.world import TokenBatch

__all__ = [
    "BN_VARIANTS",
    "BN_BACKPROP",
    "BN_POOLED",
    "ACTIVATIONS_2LAYER",
    "rf_preactivation",
    "split_receptive_fields",
    "batch_norm",
    "TwoLayerRF",
    "segments",
]

#: BatchNorm variants: name → (backprop through μ_k, backprop through σ_k²); None = no BN.
BN_BACKPROP: dict[str, tuple[bool, bool] | None] = {
    "none": None,
    "vanilla": (True, True),
    "mean": (True, False),
    "var": (False, True),
    "detached": (False, False),
}
BN_BACKPROP.update({f"pooled-{name}": spec for name, spec in list(BN_BACKPROP.items()) if spec is not None})
#: The variants whose moments pool the 2N samples of both views (App. D, Eqs. 164-165).
BN_POOLED: frozenset[str] = frozenset(name for name in BN_BACKPROP if name.startswith("pooled-"))
BN_VARIANTS: tuple[str, ...] = tuple(BN_BACKPROP)

#: Activations used in the two-layer experiments (Fig. 9/10): four homogeneous + sigmoid control.
ACTIVATIONS_2LAYER: tuple[str, ...] = ("linear", "relu", "leaky_relu", "quadratic", "sigmoid")


class _RowGather(torch.autograd.Function):
    """rows = table[index]; backward is one ``index_add_`` (faster than embedding's on CPU)."""

    @staticmethod
    def forward(ctx, table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(index)
        ctx.n_rows = table.shape[0]
        return table.index_select(0, index)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: D102
        (index,) = ctx.saved_tensors
        out = torch.zeros(ctx.n_rows, grad.shape[1], dtype=grad.dtype, device=grad.device)
        return out.index_add_(0, index, grad.contiguous()), None


def rf_preactivation(W: torch.Tensor, x: torch.Tensor | TokenBatch) -> torch.Tensor:
    """Pre-activations y[r, n, k, m] = w_kmᵀ x_k[n] of all RFs (Tian 2023, Sec. 4, Eq. 109).

    ``W`` is (R, K, M, d); ``x`` is dense (R, N, K, d) or a :class:`~nlcl.tian.tokens.world.TokenBatch`, for
    which y = (W Eᵀ)[k, m, a] is gathered at the token a of each RF (exact, no one-hot matmul).
    Returns (R, N, K, M).
    """
    if W.ndim != 4:
        raise ParameterError(f"W has shape {tuple(W.shape)}; expected (R, K, M, d)")
    R, K, M, d = W.shape
    if isinstance(x, TokenBatch):
        idx, E = x.index, x.embedding
        if idx.ndim != 3 or idx.shape[0] != R or idx.shape[2] != K or E.shape[0] != R or E.shape[2] != d:
            raise ParameterError(
                f"TokenBatch index {tuple(idx.shape)} / embedding {tuple(E.shape)} do not match W {tuple(W.shape)}; "
                "expected (R, N, K) and (R, n_tokens, d)"
            )
        n_tok = E.shape[1]
        WE = torch.einsum("rkmd,rad->rkam", W, E).reshape(R * K * n_tok, M)  # rows (r, k, a)
        N = idx.shape[1]
        off = (
            torch.arange(R, device=idx.device)[:, None, None] * K
            + torch.arange(K, device=idx.device)[None, None, :]
        ) * n_tok
        flat = (idx + off).reshape(-1)
        return _RowGather.apply(WE, flat).reshape(R, N, K, M)
    if x.ndim != 4 or x.shape[0] != R or x.shape[2] != K or x.shape[3] != d:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected (R={R}, N, K={K}, d={d})")
    # (R, K, N, d) @ (R, K, d, M) → (R, K, N, M)
    return torch.matmul(x.transpose(1, 2), W.transpose(2, 3)).transpose(1, 2)


def split_receptive_fields(images: torch.Tensor, rows: int = 2, cols: int = 2) -> torch.Tensor:
    """Cut images (..., H, W) into rows × cols disjoint receptive fields → (..., K, d).

    K = rows·cols RFs in row-major order (upper left, upper right, ...), each flattened to
    d = (H/rows)(W/cols): the 4 RFs of 14×14 = 196 pixels on 28×28 MNIST of Tian (2023),
    App. E.3 / Fig. 2(b).  The result feeds :class:`TwoLayerRF` as dense input x.
    """
    rows, cols = positive_int("rows", rows), positive_int("cols", cols)
    if images.ndim < 2 or images.shape[-2] % rows or images.shape[-1] % cols:
        raise ParameterError(
            f"images has shape {tuple(images.shape)}; expected (..., H, W) with H divisible by rows={rows} "
            f"and W by cols={cols}"
        )
    H, Wd = images.shape[-2:]
    h, w = H // rows, Wd // cols
    x = images.reshape(*images.shape[:-2], rows, h, cols, w).movedim(-3, -2)  # (..., rows, cols, h, w)
    return x.reshape(*images.shape[:-2], rows * cols, h * w)


def batch_norm(
    h: torch.Tensor, backprop_mean: bool = True, backprop_var: bool = True, eps: float = 1e-5
) -> torch.Tensor:
    """BatchNorm without affine parameters over axis −2, with selective backprop (App. D, E.2).

    f^bn = (f − μ) / sqrt(σ² + eps) with batch mean μ and biased batch variance σ² (Eqs. 164-165);
    ``backprop_mean=False`` / ``backprop_var=False`` stop the gradient through μ / σ² (Def. 5 is
    ``backprop_mean=True, backprop_var=False``).  The forward value does not depend on the flags.
    """
    mu = h.mean(dim=-2, keepdim=True)
    var = h.var(dim=-2, unbiased=False, keepdim=True)
    if not backprop_mean:
        mu = mu.detach()
    if not backprop_var:
        var = var.detach()
    return (h - mu) * torch.rsqrt(var + eps)


def segments(labels: Sequence) -> list[tuple[slice, object]]:
    """Maximal contiguous runs of equal labels, as (slice, label) pairs."""
    out: list[tuple[slice, object]] = []
    start = 0
    for i in range(1, len(labels) + 1):
        if i == len(labels) or labels[i] != labels[start]:
            out.append((slice(start, i), labels[start]))
            start = i
    return out


def _per_run(name: str, value, R: int) -> list:
    if isinstance(value, (str, type(None))) or not isinstance(value, Sequence):
        return [value] * R
    value = list(value)
    if len(value) != R:
        raise ParameterError(f"{name} has {len(value)} entries; expected 1 or n_runs={R}")
    return value


@dataclass
class _Forward:
    pre: torch.Tensor  # (R, N, K, M) pre-activations w_kmᵀ x_k
    hidden: torch.Tensor  # (R, N, KM) f_1 (after activation, before BN)
    normalized: torch.Tensor  # (R, N, KM) input to V (after BN if any)
    out: torch.Tensor  # (R, N, d_out) V f_1 (before ℓ2 normalization)
    f: torch.Tensor  # (R, N, d_out) ℓ2-normalized output


class TwoLayerRF:
    """Two-layer network with K disjoint RFs, M filters per RF, stacked over R runs (Sec. 4).

    Parameters
    ----------
    n_runs: R, number of stacked runs.
    K, d, M: RFs, input dimension per RF, filters per RF.
    out_dim: d_out of the top layer V (the released code uses 20).
    activation: one name of :data:`ACTIVATIONS_2LAYER` (any of :data:`nlcl.core.activations.ACTIVATIONS`
        works) or one per run.
    bn: one of :data:`BN_VARIANTS` or one per run.
    seeds: per-run initialization seeds (default 0..R−1).  W ~ U(±1/√d), V ~ U(±1/√(KM)), torch's
        ``nn.Linear`` default used by the paper's code; a run's initialization depends only on
        its seed.
    normalize_output: ℓ2-normalize the output (the paper's setting).
    """

    def __init__(
        self,
        n_runs: int,
        K: int,
        d: int,
        M: int,
        out_dim: int = 20,
        activation: str | Sequence[str] = "relu",
        bn: str | Sequence[str] = "none",
        seeds: Sequence[int] | None = None,
        *,
        normalize_output: bool = True,
        bn_eps: float = 1e-5,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ) -> None:
        R = positive_int("n_runs", n_runs)
        self.K, self.d, self.M = positive_int("K", K), positive_int("d", d), positive_int("M", M)
        self.out_dim = positive_int("out_dim", out_dim)
        self.activations = _per_run("activation", activation, R)
        for a in self.activations:
            get_activation(a)
        self.bn = [choice("bn", b, BN_VARIANTS) for b in _per_run("bn", bn, R)]
        seeds = list(range(R)) if seeds is None else [int(s) for s in seeds]
        if len(seeds) != R:
            raise ParameterError(f"seeds has {len(seeds)} entries; expected n_runs={R}")
        self.seeds = seeds
        self.normalize_output = bool(normalize_output)
        self.bn_eps = float(bn_eps)
        self.device = torch.device(device)
        KM = self.K * self.M
        W = torch.empty(R, self.K, self.M, self.d, dtype=torch.float64)
        V = torch.empty(R, self.out_dim, KM, dtype=torch.float64)
        for r, s in enumerate(seeds):
            gen = torch.Generator().manual_seed(int(s) * 1_000_003 + 7)
            W[r].uniform_(-1 / math.sqrt(self.d), 1 / math.sqrt(self.d), generator=gen)
            V[r].uniform_(-1 / math.sqrt(KM), 1 / math.sqrt(KM), generator=gen)
        self.W = W.to(dtype=dtype, device=self.device).requires_grad_(True)
        self.V = V.to(dtype=dtype, device=self.device).requires_grad_(True)
        self._segments = segments(list(zip(self.activations, self.bn)))
        self._acts = {a: get_activation(a) for a in set(self.activations)}

    @property
    def n_runs(self) -> int:
        """R, the number of stacked runs."""
        return int(self.W.shape[0])

    def parameters(self) -> list[torch.Tensor]:
        """[W, V], the trainable tensors."""
        return [self.W, self.V]

    def forward_all(self, x: torch.Tensor | TokenBatch, views: int = 1) -> _Forward:
        """All intermediate quantities of the forward pass (Sec. 4, Eq. 109; App. D, Eq. 164).

        ``views`` splits the N samples into that many equal groups (e.g. x and x' stacked) whose
        BatchNorm statistics are computed separately, as when each view is a forward call; the
        ``pooled-*`` variants (:data:`BN_POOLED`) take their statistics over all N samples instead.
        """
        views = positive_int("views", views)
        pre = rf_preactivation(self.W, x)
        R, N, K, M = pre.shape
        if N % views:
            raise ParameterError(f"views={views} does not divide the batch size N={N}")
        hid, nrm = [], []
        for sl, (act, bn) in self._segments:
            h = self._acts[act](pre[sl]).reshape(-1, N, K * M)
            hid.append(h)
            spec = BN_BACKPROP[bn]
            if spec is not None:
                groups = 1 if bn in BN_POOLED else views
                hv = h.reshape(h.shape[0], groups, N // groups, K * M)
                h = batch_norm(hv, spec[0], spec[1], self.bn_eps).reshape(h.shape)
            nrm.append(h)
        hidden = hid[0] if len(hid) == 1 else torch.cat(hid, 0)
        normalized = nrm[0] if len(nrm) == 1 else torch.cat(nrm, 0)
        out = torch.bmm(normalized, self.V.transpose(1, 2))
        f = torch.nn.functional.normalize(out, dim=-1) if self.normalize_output else out
        return _Forward(pre, hidden, normalized, out, f)

    def __call__(self, x: torch.Tensor | TokenBatch, views: int = 1) -> torch.Tensor:
        """The output f (R, N, d_out), ℓ2-normalized unless ``normalize_output=False``."""
        return self.forward_all(x, views).f

    def filters(self) -> torch.Tensor:
        """The low-layer filters w_km as a detached (R, K, M, d) tensor."""
        return self.W.detach()

    def state(self) -> dict[str, torch.Tensor]:
        """Detached CPU copies of W and V."""
        return {"W": self.W.detach().cpu().clone(), "V": self.V.detach().cpu().clone()}
