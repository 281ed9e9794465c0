"""Closed-form two-layer dynamics of Tian (2023), Sec. 4, App. C and D, for one run.

Inputs are stacked views x (2N, K, d) as in :func:`nlcl.tian.contrastive.contrastive_covariance`
(rows 0..N-1 are x[i], N..2N-1 are x[i']). Explained in the chapter ``book/tian-two-layer-theory.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from nlcl.core.activations import get_activation
from nlcl.core.validate import ParameterError, positive_int
from nlcl.tian.rf_network import batch_norm

__all__ = [
    "binary_latent_tokens",
    "latent_token_draw",
    "blowup_time",
    "blowup_winners",
    "corollary3_prediction",
    "eq147_solution",
    "lemma5_decomposition",
    "energy_two_layer",
    "gated_inputs",
    "hidden_and_gated",
    "hidden_two_layer",
    "lemma4_dynamics",
    "modulated_basin_fractions",
    "project_out",
    "rk45_final",
    "theorem5_from_moments",
    "theorem5_prediction",
    "top_mode_velocity",
]


def _check_run_shapes(W: torch.Tensor, x: torch.Tensor) -> None:
    if W.ndim != 3 or x.ndim != 3 or x.shape[1:] != (W.shape[0], W.shape[2]):
        raise ParameterError(f"W {tuple(W.shape)} and x {tuple(x.shape)} must be (K, M, d) and (n, K, d)")


def _gate_inputs(act, pre: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x̃ (n, KMd) from the pre-activations w_kmᵀx_k (n, K, M) (Eq. 6).

    The product is written straight into a row-major (n, K, M, d) tensor: broadcasting alone lays it
    out as (K, n, M, d), which the reshape then copies (the same values, one pass more)."""
    gate = act.gate(pre)[..., None]
    if gate.requires_grad or x.requires_grad:  # out= does not record a graph
        return (gate * x[:, :, None, :]).reshape(x.shape[0], -1)
    n, K, M = pre.shape
    out = torch.empty((n, K, M, x.shape[-1]), dtype=torch.result_type(gate, x), device=x.device)
    return torch.mul(gate, x[:, :, None, :], out=out).reshape(n, -1)


def hidden_two_layer(W: torch.Tensor, x: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """f_1 = [h(w_kmᵀ x_k)]_{km} of one run: ``W`` (K, M, d), ``x`` (n, K, d) → (n, KM) (Eq. 109)."""
    _check_run_shapes(W, x)
    return get_activation(activation)(torch.einsum("nkd,kmd->nkm", x, W)).reshape(x.shape[0], -1)


def energy_two_layer(
    W: torch.Tensor,
    V: torch.Tensor,
    x: torch.Tensor,
    activation: str = "relu",
    alpha: torch.Tensor | None = None,
) -> torch.Tensor:
    """α-CL energy E_α = ½ tr C_α[V f_1] of the two-layer network (Tian 2023, Eqs. 2-3, Sec. 4).

    ``V`` (d_out, KM); ``x`` (2N, K, d) stacked views; ``alpha`` (N, N) held fixed (None: uniform).
    Differentiable in W and V (the autograd side of Lemma 4).
    """
    from nlcl.tian.contrastive import energy

    return energy(hidden_two_layer(W, x, activation) @ V.T, alpha)


def gated_inputs(W: torch.Tensor, x: torch.Tensor, activation: str = "relu") -> torch.Tensor:
    """x̃_km = x_k · gate(w_kmᵀ x_k) stacked as (n, K·M·d) (Tian 2023, Eq. 6 and Sec. 4)."""
    return _gate_inputs(get_activation(activation), torch.einsum("nkd,kmd->nkm", x, W), x)


def hidden_and_gated(
    W: torch.Tensor, x: torch.Tensor, activation: str = "relu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """(:func:`hidden_two_layer`, :func:`gated_inputs`) of one run from a single pre-activation w_kmᵀx_k:
    the same values, one product with x less. Returns f_1 (n, KM) and x̃ (n, KMd)."""
    _check_run_shapes(W, x)
    act = get_activation(activation)
    pre = torch.einsum("nkd,kmd->nkm", x, W)
    return act(pre).reshape(x.shape[0], -1), _gate_inputs(act, pre, x)


def lemma4_dynamics(
    W: torch.Tensor,
    V: torch.Tensor,
    x: torch.Tensor,
    activation: str = "relu",
    alpha: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The closed-form gradients of Lemma 4 (Tian 2023, Eq. 12), without the projection P⊥_w.

    V̇ = V C_α[f_1] and ẇ = [(S ⊗ 1_d 1_dᵀ) ∘ C_α[x̃]] w with S = VᵀV, for a homogeneous
    activation (h = gate·x; for x^p the right side carries the degree p).  Returns (V̇ (d_out, KM), Ẇ (K, M, d)); they equal autograd's
    ∂E_α/∂V and ∂E_α/∂W of :func:`energy_two_layer` with α held fixed.
    """
    from nlcl.tian.contrastive import contrastive_covariance

    K, M, d = W.shape
    f1 = hidden_two_layer(W, x, activation)
    Vdot = V @ contrastive_covariance(f1, alpha=alpha)
    C = contrastive_covariance(gated_inputs(W, x, activation), alpha=alpha)  # (KMd, KMd)
    S = V.T @ V
    big = torch.kron(S, torch.ones(d, d, dtype=W.dtype, device=W.device)) * C
    # For h of homogeneity degree p (x^p), ∂h(wᵀx)/∂w = p x̃: the constant rescales time.
    Wdot = get_activation(activation).degree * (big @ W.reshape(-1)).reshape(K, M, d)
    return Vdot, Wdot


def project_out(w: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """P⊥_w g = g − w (wᵀg)/‖w‖² along the last axis (Tian 2023, Eq. 7 / Eq. 12)."""
    return g - w * (w * g).sum(-1, keepdim=True) / (w * w).sum(-1, keepdim=True)


def latent_token_draw(
    n: int, K: int, d: int, *, generator: torch.Generator, p1: float = 0.4
) -> tuple[torch.Tensor, torch.Tensor]:
    """The noise-free part of :func:`binary_latent_tokens` (Tian 2023, App. C.3): z ~ Bernoulli(``p1``)
    and, given z, one token per RF from π_{z,k} (uniform³, normalized), as one-hot float64 vectors.
    Returns z (n,) bool and the one-hot tokens (n, K, d); draws from ``generator`` in a fixed order."""
    z = torch.rand(n, generator=generator) < p1
    pis = torch.rand(2, K, d, generator=generator) ** 3
    pis = pis / pis.sum(-1, keepdim=True)
    tok = torch.where(
        z[:, None],
        torch.multinomial(pis[1], n, replacement=True, generator=generator).T,
        torch.multinomial(pis[0], n, replacement=True, generator=generator).T,
    )
    # one-hot written straight as float64 (the values of one_hot(tok, d).double(), one pass less)
    return z, torch.zeros(n, K, d, dtype=torch.float64).scatter_(-1, tok[..., None], 1.0)


def binary_latent_tokens(
    n: int,
    K: int,
    d: int,
    *,
    generator: torch.Generator,
    scales: Sequence[float] | None = None,
    p1: float = 0.4,
    noise: float = 0.3,
    shared_noise: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Samples of the C = 2 conditional-independence model of Theorem 5 (Tian 2023, Sec. 4, App. C.3).

    A latent class z ~ Bernoulli(``p1``); given z, the token at RF k is drawn from a random peaked
    distribution π_{z,k} (uniform³, normalized) independently across RFs; x_k is its one-hot
    vector over ``d`` tokens plus Gaussian noise of std ``noise``. ``scales`` (K,) multiplies
    each RF (the input magnitudes of Corollary 3). ``shared_noise`` > 0 adds one Gaussian vector of
    that std to every RF of a sample, which breaks conditional independence (Assumption 2) on
    purpose (a control for Lemma 5). Returns x (n, K, d) float64 and z (n,) bool.
    Chapter ``book/tian-two-layer-theory.py``.
    """
    z, onehot = latent_token_draw(n, K, d, generator=generator, p1=p1)
    # in place on fresh tensors: the same products and sums (a + b = b + a exactly), fewer passes
    x = onehot.add_(torch.randn(n, K, d, generator=generator).mul_(noise))
    if shared_noise < 0:
        raise ParameterError(f"shared_noise must be ≥ 0, got {shared_noise!r}")
    if shared_noise > 0:
        x = x.add_(torch.randn(n, 1, d, generator=generator).mul_(shared_noise))
    if scales is not None:
        x = x.mul_(torch.as_tensor(scales)[None, :, None])
    return x, z


def top_mode_velocity(
    W: torch.Tensor, x: torch.Tensor, activation: str = "relu", bn: tuple | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """P⊥ ∂E/∂w_k of each RF's first filter with V = sᵀ, s the top eigenvector of V[f_1] (Tian 2023, Eq. 7).

    The autograd side of Theorem 5 (Eq. 15) and Corollary 3: f_1 = h(Wx) (:func:`hidden_two_layer`),
    optionally BatchNormed by :func:`nlcl.tian.rf_network.batch_norm` with arguments ``bn``
    (backprop_mean, backprop_var[, eps]); E = ½ sᵀ V[f_1] s with s held fixed (Eq. 139).
    Returns (ẇ (K, d) for the first filter of each RF, s). Chapter ``book/tian-two-layer-theory.py``.
    """
    Wr = W.clone().requires_grad_()
    f1 = hidden_two_layer(Wr, x, activation)
    if bn is not None:
        f1 = batch_norm(f1, *bn)
    c = f1 - f1.mean(0)
    C = c.T @ c / len(f1)
    s = torch.linalg.eigh(C.detach())[1][:, -1]
    (g,) = torch.autograd.grad(0.5 * s @ C @ s, Wr)
    return project_out(W[:, 0], g[:, 0]), s


def theorem5_prediction(W: torch.Tensor, x: torch.Tensor, z: torch.Tensor, activation: str = "relu") -> dict:
    """Theorem 5 (Tian 2023, Eq. 15, App. C.3): predicted ẇ_k for C = 2 and M = 1.

    ``W`` (K, 1, d) unit filters, ``x`` (n, K, d) samples (no augmentation), ``z`` (n,) in {0, 1}.
    With sample moments: A_k = V[x̃_k], L_k = E_z V[x̃_k | z], Δ_k = E[x̃_k|z=1] − E[x̃_k|z=0],
    d_k = w_kᵀL_kw_k, b_k = w_kᵀΔ_k, λ the top eigenvalue of D + p₀p₁bbᵀ (secular equation),
    s_k = b_k / (Z(d_k − λ)) (Bunch–Nielsen–Sorensen, Eq. 139), δ_k (Eq. 143), and
    ẇ_k = P⊥(s_k² A_k + δ_k Δ_kΔ_kᵀ) w_k.  Returns a dict of these (tensors over k).
    """
    if W.ndim != 3 or W.shape[1] != 1:
        raise ParameterError(f"W has shape {tuple(W.shape)}; Theorem 5 needs M = 1: (K, 1, d)")
    z = torch.as_tensor(z).to(torch.bool)
    K, _, d = W.shape
    xt = gated_inputs(W, x, activation).reshape(x.shape[0], K, d)  # x̃_k
    return _theorem5_from_gated(W[:, 0, :], xt, z)


def _theorem5_from_gated(w: torch.Tensor, xt: torch.Tensor, z: torch.Tensor) -> dict:
    """Eqs. 134-143 from gated inputs x̃ (n, K, d), filters w (K, d) and the latent z (n,); ``xt`` is
    centred in place (spent: both callers made it for this call)."""
    p1 = z.double().mean().item()
    p0 = 1 - p1
    if not 0 < p1 < 1:
        raise ParameterError("z must contain both classes (Theorem 5 needs C = 2)")

    def cov_(a, mean):  # biased covariance over samples, per k: (K, d, d); centres a in place
        c = a.sub_(mean)
        return torch.einsum("nki,nkj->kij", c, c) / a.shape[0]

    x1, x0 = xt[z], xt[~z]  # each class selected once
    m1, m0 = x1.mean(0), x0.mean(0)
    A = cov_(xt, xt.mean(0))
    L = p0 * cov_(x0, m0) + p1 * cov_(x1, m1)
    Delta = m1 - m0  # (K, d)
    return theorem5_from_moments(w, A, L, Delta, p0, p1)


def theorem5_from_moments(
    w: torch.Tensor, A: torch.Tensor, L: torch.Tensor, Delta: torch.Tensor, p0: float, p1: float
) -> dict:
    """Eqs. 134-143 of Tian 2023 from the moments: filters w (K, d), A_k (K, d, d), L_k (K, d, d), Δ_k (K, d).

    d_k = w_kᵀL_kw_k, b_k = w_kᵀΔ_k, λ the top eigenvalue of D + p₀p₁bbᵀ, s (Eq. 139), δ_k (Eq. 143)
    and ẇ_k = P⊥(s_k² A_k + δ_k Δ_kΔ_kᵀ) w_k. Shared by :func:`theorem5_prediction` (sample moments)
    and :func:`nlcl.tian.two_view_bn.corollary3_two_view` (contrastive moments of two views).
    """
    dk = torch.einsum("ki,kij,kj->k", w, L, w)
    bk = (w * Delta).sum(-1)
    Vf = torch.diag(dk) + p0 * p1 * torch.outer(bk, bk)
    lam = torch.linalg.eigvalsh(Vf)[-1]
    s = bk / (dk - lam)
    Z = s.norm()
    s = s / Z
    tot = (bk**2 / (lam - dk)).sum()
    delta = p0 * p1 / (Z**2 * (lam - dk)) * (tot - bk**2 / (lam - dk))
    raw = s[:, None] ** 2 * torch.einsum("kij,kj->ki", A, w) + delta[:, None] * Delta * bk[:, None]
    return dict(
        A=A, L=L, Delta=Delta, d=dk, b=bk, lam=lam, s=s, delta=delta, p0=p0, p1=p1, wdot=project_out(w, raw)
    )


def corollary3_prediction(
    W: torch.Tensor, x: torch.Tensor, z: torch.Tensor, activation: str = "relu", eps: float = 0.0
) -> dict:
    """Corollary 3 (Tian 2023, App. D, Eqs. 175-179): Theorem 5 with mean-backprop BatchNorm.

    σ_k² is the BatchNorm variance of f_k = h(w_kᵀx_k) pooled over *all* rows of ``x`` (the 2N
    samples of a batch, Eqs. 164-165; biased), plus ``eps`` (0 in the corollary; torch's BatchNorm
    uses 1e-5). With x̃_k^bn = x̃_k/σ_k: A_k^bn = σ_k⁻²A_k, d_k^bn = σ_k⁻²d_k, Δ_k^bn = σ_k⁻¹Δ_k, and
    (1) λ^bn ≥ max_k d_k^bn, (2) s^bn ∝ [w_kᵀΔ_k^bn / (λ^bn − d_k^bn)], (3)
    ẇ_k = P⊥((s_k^bn)² A_k^bn + δ_k^bn Δ_k^bn Δ_k^bnᵀ) w_k. Returns the Theorem 5 dict of these
    quantities (keys as in :func:`theorem5_prediction`, for the BN network) plus ``sigma2``.
    """
    if W.ndim != 3 or W.shape[1] != 1:
        raise ParameterError(f"W has shape {tuple(W.shape)}; Corollary 3 needs M = 1: (K, 1, d)")
    if not (eps >= 0 and np.isfinite(eps)):
        raise ParameterError(f"eps must be a finite number ≥ 0, got {eps!r}")
    z = torch.as_tensor(z).to(torch.bool)
    K, _, d = W.shape
    f, xt = hidden_and_gated(W, x, activation)  # (2N, K), (2N, Kd)
    sigma2 = f.var(0, unbiased=False) + eps  # Eq. 165, pooled over the 2N samples
    xt = xt.reshape(x.shape[0], K, d).div_(sigma2.sqrt()[None, :, None])
    out = _theorem5_from_gated(W[:, 0, :], xt, z)
    out["sigma2"] = sigma2
    return out


def _centered_cov_(a: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    """Biased sample covariance (a − ā)ᵀ(a − ā)/n of the rows of ``a`` (n, m), ``mean`` = a.mean(0);
    centres ``a`` in place (the values of a − ā, without a copy of a): the caller's ``a`` is spent."""
    c = a.sub_(mean)
    return c.T @ c / a.shape[0]


def lemma5_decomposition(W: torch.Tensor, x: torch.Tensor, z: torch.Tensor, activation: str = "relu") -> dict:
    """Lemma 5 (Tian 2023, Eq. 120, Fig. 6) for C = 2: V[x̃] = diag_k[L_k] + p₀p₁ΔΔᵀ.

    ``W`` (K, M, d), ``x`` (n, K, d), ``z`` (n,) binary. With sample moments: ``V`` = V[x̃]
    (KMd × KMd), ``L`` = the block diagonal of E_z V[x̃|z] (blocks x̃_k of size Md, Eq. 124),
    ``between`` = p₀p₁ΔΔᵀ with Δ = E[x̃|z=1] − E[x̃|z=0] (Eqs. 130-133), and ``residual`` =
    ‖V − L − between‖_F / ‖V‖_F: the off-diagonal blocks of the within-class covariance, which
    conditional independence (Assumption 2) sets to zero in the population.
    """
    z = torch.as_tensor(z).to(torch.bool)
    p1 = z.double().mean().item()
    p0 = 1 - p1
    if not 0 < p1 < 1:
        raise ParameterError("z must contain both classes (Lemma 5 with C = 2)")
    K, M, d = W.shape
    xt = gated_inputs(W, x, activation)  # (n, KMd)
    x1, x0 = xt[z], xt[~z]  # each class selected once
    m1, m0 = x1.mean(0), x0.mean(0)
    V = _centered_cov_(xt, xt.mean(0))
    within = p0 * _centered_cov_(x0, m0) + p1 * _centered_cov_(x1, m1)
    mask = torch.block_diag(*[torch.ones(M * d, M * d, dtype=xt.dtype)] * K)
    L = within * mask
    Delta = m1 - m0
    between = p0 * p1 * torch.outer(Delta, Delta)
    residual = float((V - L - between).norm() / V.norm())
    return dict(V=V, L=L, between=between, Delta=Delta, p0=p0, p1=p1, residual=residual)


def blowup_time(y0, b) -> np.ndarray:
    """Critical time t* = ln(1 + b/y(0)) / b of ẏ = (y + b) y (Tian 2023, Eq. 150, Fig. 7).

    Finite for y(0) > 0 (finite-time blow-up); ∞ for y(0) ≤ 0 (y → −b or stays at 0). ``b`` > 0.
    """
    y0 = np.asarray(y0, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if np.any(~(b > 0)) or not np.all(np.isfinite(b)):
        raise ParameterError("b must be positive and finite (Eq. 146 has b_l > 0)")
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.log1p(b / np.where(y0 > 0, y0, 1.0)) / b
    return np.where(y0 > 0, t, np.inf)


def eq147_solution(y0, b, t) -> np.ndarray:
    """Closed-form solution of ẏ = (y + b) y: y/(y + b) = y(0)/(y(0) + b) · e^{bt} (Tian 2023, Eq. 147).

    y(t) = b K e^{bt} / (1 − K e^{bt}) with K = y(0)/(y(0) + b); valid for t < t* (Eq. 150).
    """
    y0, b, t = (np.asarray(a, dtype=np.float64) for a in (y0, b, t))
    if np.any(~(b > 0)):
        raise ParameterError("b must be positive (Eq. 146 has b_l > 0)")
    if np.any(y0 <= -b):
        raise ParameterError("y0 must be > −b (the stable point y = −b is the basin boundary of Eq. 147)")
    k = y0 / (y0 + b) * np.exp(b * t)
    return b * k / (1 - k)


def rk45_final(fun, y0: np.ndarray, t_max: float, *, rtol: float, atol: float) -> np.ndarray:
    """The final state of ``solve_ivp(fun, (0, t_max), y0, method="RK45", rtol=rtol, atol=atol)``
    (``.y[:, -1]``): the same RK45 steps, without keeping every step's state (for many initializations
    integrated at once, a large copy). On a failed step, the last state reached, as ``solve_ivp``."""
    from scipy.integrate import RK45

    solver = RK45(fun, 0.0, y0, float(t_max), rtol=rtol, atol=atol)
    while solver.status == "running":
        solver.step()
    return solver.y


def _tangent(w: np.ndarray, g: np.ndarray) -> np.ndarray:
    """g − w (wᵀg) row by row, in place of ``g``: P⊥_w g of the normalized dynamics, whose w stays
    on the unit sphere (Tian 2023, Eq. 7 with ‖w‖ = 1); the right-hand side of Theorem 6's ODEs."""
    wg = w * g
    g -= np.multiply(w, wg.sum(1, keepdims=True), out=wg)
    return g


def blowup_winners(
    d: int, c: float, *, b: float = 1.5, n_init: int = 500, t_max: float = 60.0, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 6's selection rule l* = argmin_l t_l* against the normalized dynamics (Tian 2023, Eqs. 146-150).

    With A(w) = Σ_l (u_lᵀw + b_l) u_l u_lᵀ, b_l = b + c·[l = 0], in the canonical basis, ``n_init``
    uniform unit initializations are integrated under ẇ = P⊥_w A(w) w (RK45, :func:`rk45_final`).
    Returns
    (predicted: argmin_l t_l*(y_l(0), b_l) of Eq. 150, actual: the coordinate the normalized run
    converges to, or −1 if none exceeds 0.9).
    """
    d = positive_int("d", d)
    n_init = positive_int("n_init", n_init)
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((n_init, d))
    w0 /= np.linalg.norm(w0, axis=1, keepdims=True)
    bl = np.full(d, float(b))
    bl[0] += float(c)
    predicted = np.argmin(blowup_time(w0, bl[None, :]), axis=1)

    def rhs(t, y):
        w = y.reshape(n_init, d)
        g = w + bl
        g *= w  # (w + b_l) w
        return _tangent(w, g).reshape(-1)

    wT = rk45_final(rhs, w0.reshape(-1), t_max, rtol=1e-6, atol=1e-8).reshape(n_init, d)
    actual = np.where(wT.max(1) > 0.9, wT.argmax(1), -1)
    return predicted, actual


def modulated_basin_fractions(
    d: int,
    cs: Sequence[float],
    *,
    b: float = 1.5,
    target: int = 0,
    n_init: int = 2000,
    t_max: float = 60.0,
    seed: int = 0,
    threshold: float = 0.9,
) -> list[float]:
    """Theorem 6 by Monte Carlo (Tian 2023, App. C.3): P[w → u_l] under ẇ = P⊥(A(w) + c u_l u_lᵀ) w.

    A(w) = Σ_l g(u_lᵀw) u_l u_lᵀ with g(y) = y + b (linear increasing, positive on [−1, 1] for
    b > 1) and {u_l} the canonical basis of R^d.  ``n_init`` uniform random unit initializations
    are integrated all at once with scipy's RK45 (:func:`rk45_final`: the final state of
    ``solve_ivp``); a run converges to u_target when its final target component exceeds
    ``threshold``.  Returns the fraction for each c.
    """
    d = positive_int("d", d)
    n_init = positive_int("n_init", n_init)
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((n_init, d))
    w0 /= np.linalg.norm(w0, axis=1, keepdims=True)
    out = []
    for c in cs:
        bonus = np.zeros(d)
        bonus[target] = float(c)

        def rhs(t, y):
            w = y.reshape(n_init, d)
            g = w + b
            g += bonus
            g *= w  # (A(w) + c u_l u_lᵀ) w in the u-basis
            return _tangent(w, g).reshape(-1)

        wT = rk45_final(rhs, w0.reshape(-1), t_max, rtol=1e-6, atol=1e-8).reshape(n_init, d)
        out.append(float((wT[:, target] > threshold).mean()))
    return out
