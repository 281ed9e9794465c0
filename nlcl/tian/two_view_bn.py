"""BatchNorm with two augmented views: Lemma 6 (Eq. 166) and Corollary 3 of Tian (2023), App. D.

App. D computes the BatchNorm moments over *all* 2N rows of a batch (the views x[i] and x[i'],
Eqs. 164-165). With one view per sample the pooled and per-view moments coincide; here the two views
share a sample's latent class and tokens but carry independent noise (the augmentation), and the
second view may be multiplied by a ``gain`` (an augmentation applied to one branch only), so that
pooled and per-view moments differ. Stacked views x (2N, K, d) as in
:func:`nlcl.tian.contrastive.contrastive_covariance`. Chapter ``book/tian-two-layer-theory.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError
from nlcl.tian.contrastive import contrastive_covariance, energy
from nlcl.tian.two_layer_theory import (
    _check_run_shapes,
    _gate_inputs,
    gated_inputs,
    hidden_and_gated,
    hidden_two_layer,
    latent_token_draw,
    project_out,
    theorem5_from_moments,
)

__all__ = [
    "bn_moments",
    "corollary3_two_view",
    "energy_bn",
    "lemma6_dynamics",
    "two_view_binary_tokens",
    "two_view_velocity",
]


def two_view_binary_tokens(
    n: int,
    K: int,
    d: int,
    *,
    generator: torch.Generator,
    scales: Sequence[float] | None = None,
    gain: float = 1.0,
    p1: float = 0.4,
    noise: float = 0.3,
    rf_major: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two views of the binary conditional-independence model of Theorem 5 (Tian 2023, App. C.3, D).

    A latent z ~ Bernoulli(``p1``) and one token per RF from a z-dependent distribution, as in
    :func:`nlcl.tian.two_layer_theory.binary_latent_tokens`, are shared by both views of a sample;
    each view adds its own Gaussian noise of std ``noise`` (the augmentation), the second view is
    multiplied by ``gain`` and both by the per-RF ``scales``. Given z the RFs stay independent in
    each view and across views (Assumption 2). Returns x (2n, K, d) float64 (rows 0..n-1 the first
    views) and z (n,) bool. ``rf_major``: x is stored RF by RF, a (2n, K, d) view of a (K, 2n, d)
    tensor (the same values; products with W over the rows of each RF then read it in order).
    """
    if not gain > 0:
        raise ParameterError(f"gain must be > 0, got {gain!r}")
    z, onehot = latent_token_draw(n, K, d, generator=generator, p1=p1)
    # written in place into the stacked x: the same products and sums as onehot + noise·ε, gain·(…)
    if rf_major:
        x = torch.empty((K, 2 * n, d), dtype=onehot.dtype).transpose(0, 1)
    else:
        x = torch.empty((2 * n, K, d), dtype=onehot.dtype)
    torch.add(onehot, torch.randn(n, K, d, generator=generator).mul_(noise), out=x[:n])
    torch.add(onehot, torch.randn(n, K, d, generator=generator).mul_(noise), out=x[n:]).mul_(gain)
    if scales is not None:
        x.mul_(torch.as_tensor(scales, dtype=x.dtype)[None, :, None])
    return x, z


def bn_moments(f: torch.Tensor, pooled: bool = True, eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor]:
    """BatchNorm mean and variance + ``eps`` of f (2N, m), one row per sample (Tian 2023, Eqs. 164-165).

    ``pooled=True``: over all 2N rows (App. D); ``False``: over each view's N rows separately (as
    when the two views go through the network in separate forward passes). Returns (μ, σ²), each
    (2N, m), row i holding the moments that normalize row i. The variance is biased.
    """
    if f.shape[0] % 2:
        raise ParameterError(f"f has {f.shape[0]} rows; two views need an even number")
    if pooled:
        mu, var = f.mean(0, keepdim=True), f.var(0, unbiased=False, keepdim=True)
        return mu.expand_as(f), var.expand_as(f) + eps
    n = f.shape[0] // 2
    parts = [bn_moments(p, True, eps) for p in (f[:n], f[n:])]
    return torch.cat([parts[0][0], parts[1][0]]), torch.cat([parts[0][1], parts[1][1]])


def energy_bn(
    W: torch.Tensor,
    V: torch.Tensor,
    x: torch.Tensor,
    activation: str = "relu",
    alpha: torch.Tensor | None = None,
    pooled: bool = True,
    eps: float = 1e-5,
) -> torch.Tensor:
    """½ tr C_α[V f^bn] with mean-backprop BatchNorm (Def. 5): gradients flow through μ, not σ².

    The autograd side of Lemma 6. ``V`` (d_out, KM), ``x`` (2N, K, d), ``alpha`` (N, N) or None.
    """
    f = hidden_two_layer(W, x, activation)
    mu, var = bn_moments(f, pooled, eps)
    return energy((f - mu) * torch.rsqrt(var.detach()) @ V.T, alpha)


def lemma6_dynamics(
    W: torch.Tensor,
    V: torch.Tensor,
    x: torch.Tensor,
    activation: str = "relu",
    alpha: torch.Tensor | None = None,
    pooled: bool = True,
    eps: float = 1e-5,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Lemma 6 (Tian 2023, Eq. 166): V̇ = V C_α[f^bn], ẇ = [(S ⊗ 1_d1_dᵀ) ∘ C_α[x̃^bn]] w, S = VᵀV.

    x̃^bn_km = x̃_km/σ_km with σ from :func:`bn_moments` (pooled over the 2N rows, Eq. 165, or per
    view). For any M and fixed α; the proof drops C_α[·, μσ⁻¹] and C_α[·, ∂μ/∂w], which vanish when
    μ and σ are the same for every row (pooled). Returns (V̇, Ẇ) without the projection P⊥.
    """
    K, M, d = W.shape
    f = hidden_two_layer(W, x, activation)
    mu, var = bn_moments(f, pooled, eps)
    fbn = (f - mu) * torch.rsqrt(var)
    xt = gated_inputs(W, x, activation).reshape(x.shape[0], K * M, d) * torch.rsqrt(var)[..., None]
    C = contrastive_covariance(xt.reshape(x.shape[0], -1), alpha=alpha)
    big = torch.kron(V.T @ V, torch.ones(d, d, dtype=W.dtype)) * C
    Wdot = get_activation(activation).degree * (big @ W.reshape(-1)).reshape(K, M, d)
    return V @ contrastive_covariance(fbn, alpha=alpha), Wdot


def two_view_velocity(
    W: torch.Tensor, x: torch.Tensor, activation: str = "relu", bn: str | None = "pooled", eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The App. D experiment with two views: P⊥ ∂E/∂w_k with V = sᵀ, s the top eigenvector of C_α[f^bn].

    Uniform α; ``bn`` is "pooled" (Eqs. 164-165), "view" (per-view moments) or None (no BatchNorm);
    mean-backprop (Def. 5). ``W`` (K, 1, d). Returns (ẇ (K, d), s (K,), C_α[f^bn] (K, K)).
    """
    Wr = W.clone().requires_grad_()
    return _velocity(W, Wr, hidden_two_layer(Wr, x, activation), bn, eps)


def _velocity(
    W: torch.Tensor, Wr: torch.Tensor, f: torch.Tensor, bn: str | None, eps: float, retain: bool = False
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:func:`two_view_velocity` from f_1 = h(Wr x) with ``Wr`` a copy of ``W`` requiring grad; ``retain``
    keeps the graph of f_1 for another velocity from the same forward pass (:class:`TwoViewPass`)."""
    if bn not in ("pooled", "view", None):
        raise ParameterError(f"bn={bn!r}; allowed: 'pooled', 'view', None")
    if bn is not None:
        mu, var = bn_moments(f, bn == "pooled", eps)
        f = (f - mu) * torch.rsqrt(var.detach())
    C = contrastive_covariance(f)
    s = torch.linalg.eigh(C.detach())[1][:, -1]
    (g,) = torch.autograd.grad(0.5 * s @ C @ s, Wr, retain_graph=retain)
    return project_out(W[:, 0], g[:, 0]), s, C.detach()


class TwoViewPass:
    """One forward pass of the two-layer network on stacked views x (2N, K, d) (Tian 2023, Eq. 109 and
    Eq. 6), shared by several two-view velocities (Lemma 6's experiment, :func:`two_view_velocity`) and
    the closed form of Corollary 3 (:func:`corollary3_two_view`) on the same (W, x).

    The pre-activations w_kᵀx_k are computed once, with W as a leaf requiring grad, and each velocity
    differentiates its own energy through that graph: the same operations on the same values as
    separate calls, so the same numbers, with one product with x instead of one per call.
    """

    def __init__(self, W: torch.Tensor, x: torch.Tensor, activation: str = "relu"):
        _check_run_shapes(W, x)
        self.W, self.x, self.act = W, x, get_activation(activation)
        self.Wr = W.clone().requires_grad_()
        self._pre = torch.einsum("nkd,kmd->nkm", x, self.Wr)
        self.f = self.act(self._pre).reshape(x.shape[0], -1)  # f_1 with its graph
        self._gated = None

    def velocity(self, bn: str | None, eps: float = 1e-5, retain: bool = True):
        """:func:`two_view_velocity` (W, x, activation, bn, eps); ``retain=False`` on the last one."""
        return _velocity(self.W, self.Wr, self.f, bn, eps, retain)

    def hidden_and_gated(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(f_1, x̃) as :func:`~nlcl.tian.two_layer_theory.hidden_and_gated`, without a graph; x̃ made once.

        For M = 1, x̃_k = x_k · gate(w_kᵀx_k) is returned as (2N, K, d) in the memory layout of x (an
        RF-major x gives an RF-major x̃): the same products, read and written in order."""
        if self._gated is None:
            pre = self._pre.detach()
            if pre.shape[-1] == 1:
                gate = self.act.gate(pre)  # (2N, K, 1)
                out = torch.empty_like(self.x, dtype=torch.result_type(gate, self.x))
                self._gated = torch.mul(gate, self.x, out=out)
            else:
                self._gated = _gate_inputs(self.act, pre, self.x)
        return self.f.detach(), self._gated


def corollary3_two_view(
    W: torch.Tensor,
    x: torch.Tensor,
    z: torch.Tensor,
    activation: str = "relu",
    pooled: bool = True,
    eps: float = 1e-5,
) -> dict:
    """Corollary 3 (Tian 2023, Eqs. 175-179) for two views, with C_α (uniform α) in place of V.

    With x̃^bn_k = x̃_k/σ_k (moments of :func:`bn_moments`): A_k^bn = C_α[x̃_k^bn] (the moment the
    dynamics of Lemma 6 carries), Δ_k^bn the difference of the class means of x̃_k^bn over both views,
    and L_k^bn = A_k^bn − p₀p₁Δ_k^bnΔ_k^bnᵀ, so that d_k^bn + p₀p₁(b_k^bn)² is the diagonal of
    C_α[f^bn] exactly. Parts (1)-(3) then follow from :func:`theorem5_from_moments`: they hold if the
    off-diagonal of C_α[f^bn] is p₀p₁ b^bn b^bnᵀ (Lemma 5). With no augmentation this is
    :func:`nlcl.tian.two_layer_theory.corollary3_prediction`. Returns its dict plus ``sigma2`` (2N, K).
    """
    return _corollary3_two_view(W, x, z, activation, pooled, eps)[0]


def _uniform_contrastive_covariance(a: torch.Tensor) -> torch.Tensor:
    """C_α[a] (Tian 2023, Eq. 3) with uniform α for a (..., 2N, d): the operations of
    :func:`nlcl.tian.contrastive.contrastive_covariance` with b = a, whose column sums and a1 − a2
    it takes once instead of twice (the same numbers)."""
    n = a.shape[-2] // 2
    a1, a2 = a[..., :n, :], a[..., n:, :]
    sa = a1.sum(-2)
    inter = 2 * n * (a1.mT @ a1) - 2 * (sa[..., :, None] * sa[..., None, :])
    da = a1 - a2
    return (inter - n * (da.mT @ da)) / (2.0 * n * n)


def _corollary3_two_view(
    W: torch.Tensor,
    x: torch.Tensor,
    z: torch.Tensor,
    activation: str,
    pooled: bool,
    eps: float,
    hidden: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[dict, torch.Tensor, torch.Tensor]:
    """:func:`corollary3_two_view`, with the hidden layer f and its BatchNorm mean μ (:func:`bn_moments`).

    ``hidden``: (f_1, x̃) of (W, x) if already at hand (:meth:`TwoViewPass.hidden_and_gated`); left
    unchanged."""
    if W.ndim != 3 or W.shape[1] != 1:
        raise ParameterError(f"W has shape {tuple(W.shape)}; Corollary 3 needs M = 1: (K, 1, d)")
    z = torch.as_tensor(z).to(torch.bool)
    K, _, d = W.shape
    n = x.shape[0] // 2
    if z.shape != (n,):
        raise ParameterError(f"z has shape {tuple(z.shape)}; expected ({n},), one class per sample")
    f, xt = hidden_and_gated(W, x, activation) if hidden is None else hidden
    mu, var = bn_moments(f, pooled, eps)
    # x̃^bn = x̃ σ⁻¹ written as K blocks (2N, d), one per RF: the same products, and C_α[x̃_k^bn] then
    # reads a contiguous block (the same numbers as from the strided column of a row-major x̃^bn)
    xt = torch.mul(
        xt.reshape(2 * n, K, d),
        torch.rsqrt(var)[..., None],
        out=torch.empty((K, 2 * n, d), dtype=xt.dtype).transpose(0, 1),
    )
    A = _uniform_contrastive_covariance(xt.transpose(0, 1))
    zz = torch.cat([z, z])
    Delta = xt[zz].mean(0) - xt[~zz].mean(0)
    p1 = z.double().mean().item()
    p0 = 1 - p1
    if not 0 < p1 < 1:
        raise ParameterError("z must contain both classes (Corollary 3 needs C = 2)")
    L = A - p0 * p1 * torch.einsum("ki,kj->kij", Delta, Delta)
    out = theorem5_from_moments(W[:, 0, :], A, L, Delta, p0, p1)
    out["sigma2"] = var
    return out, f, mu
