"""Wide two-layer networks and their neural tangent kernel: Esser et al. (2024), Lemma 1 and Eqs. 3-5.

Lemma 1 says that for a kernel machine, and for an infinitely wide network at initialisation (the
neural tangent kernel, NTK, of Jacot et al. 2018), the gradients of different output components are
orthogonal, ⟨∇u_l(x), ∇u_j(x')⟩ = 0 for l ≠ j, and equal the kernel k(x, x') for l = j.  The output
dynamics of the SSL losses (Eqs. 4-5) then decouple: every output component follows the same
kernel dynamics (Remark 1, Proposition 1).

The network here is the two-layer ReLU network in NTK parameterisation,

    u(x) = Aᵀ relu(W x) / √h,    W ∈ ℝʰˣᵈ, A ∈ ℝʰˣᶻ with i.i.d. N(0, 1) entries,

whose finite-width tangent kernel (:func:`empirical_ntk`) is

    Θ_lj(x, x') = δ_lj · (1/h) Σ_k relu(w_k·x) relu(w_k·x')  +  (x·x') · (1/h) Σ_k a_kl a_kj 1[w_k·x > 0] 1[w_k·x' > 0],

and whose infinite-width limit (:func:`relu_ntk`) is δ_lj·Θ(x, x') with the arc-cosine kernels of
Cho & Saul (2009): Θ(x, x') = ‖x‖‖x'‖(sin θ + (π − θ) cos θ)/(2π) + (x·x')(π − θ)/(2π).

For the contrastive loss (1) or the non-contrastive loss (2) on the points P = [x; x⁺] (the
negatives are a permutation of the anchors), the loss is a quadratic form in the outputs,
L = Σ_l u_lᵀ B u_l (:func:`ssl_quadratic_form`), so gradient descent on the network changes the
outputs by −2η Σ_j Θ_lj B u_j (Eq. 5) and the kernel prediction is u_l ← u_l − 2η K B u_l for every
component l separately (:func:`kernel_output_dynamics`).  :func:`lemma1_sweep` measures, width by
width, how far the network is from that prediction.

Explained in the chapter ``book/esser-collapse.py`` (section "Lemma 1").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from nlcl.core.blocks import axis_blocks
from nlcl.core.tensors import as_tensor
from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    choice,
    nonneg_int,
    positive_float,
    positive_int,
)

__all__ = [
    "relu_ntk",
    "empirical_ntk",
    "init_ntk_network",
    "network_output",
    "ssl_quadratic_form",
    "kernel_output_dynamics",
    "train_network_outputs",
    "ntk_block_statistics",
    "growth_rate",
    "lemma1_sweep",
]


def _points(name: str, x: Any) -> torch.Tensor:
    x = as_tensor(name, x, torch.float64)
    if x.dim() != 2:
        raise ParameterError(f"{name} has shape {tuple(x.shape)}; expected (n, d)")
    return x


def relu_ntk(x: Any, y: Any) -> torch.Tensor:
    """Infinite-width NTK Θ(x, y) of :func:`network_output` (ReLU, NTK parameterisation), (n, m).

    Θ(x, y) = ‖x‖‖y‖(sin θ + (π − θ)cos θ)/(2π) + (x·y)(π − θ)/(2π), θ the angle between x and y:
    the kernel k of Esser et al. (2024), Lemma 1 ("kernel case"), for this network.  Zero vectors
    have Θ = 0 with every point.  Chapter ``book/esser-collapse.py``.
    """
    x, y = _points("x", x), _points("y", y)
    if x.shape[1] != y.shape[1]:
        raise ParameterError(f"x {tuple(x.shape)} and y {tuple(y.shape)} must have the same dimension d")
    nx, ny = x.norm(dim=1), y.norm(dim=1)
    dot = x @ y.T
    norms = nx[:, None] * ny[None, :]
    cos = torch.where(norms > 0, dot / norms.clamp_min(1e-300), torch.zeros_like(dot)).clamp(-1.0, 1.0)
    theta = torch.arccos(cos)
    k1 = norms * (torch.sin(theta) + (math.pi - theta) * cos) / (2 * math.pi)
    k0 = (math.pi - theta) / (2 * math.pi)
    return k1 + dot * k0


def _weights(W: torch.Tensor, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    W, A = as_tensor("W", W), as_tensor("A", A)
    if W.dim() != 3 or A.dim() != 3 or W.shape[:2] != A.shape[:2]:
        raise ParameterError(
            f"W {tuple(W.shape)} and A {tuple(A.shape)} must be (S, h, d) and (S, h, z) with the same (S, h)"
        )
    return W, A


def init_ntk_network(
    n_init: int,
    h: int,
    d: int,
    z: int,
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_init`` networks of width ``h``: W (S, h, d) and A (S, h, z) with i.i.d. N(0, 1) entries.

    The NTK initialisation of Jacot et al. (2018) used by Esser et al. (2024), Lemma 1; W is drawn
    before A.  Chapter ``book/esser-collapse.py``.
    """
    n_init, h, d, z = (positive_int(k, v) for k, v in (("n_init", n_init), ("h", h), ("d", d), ("z", z)))
    W = torch.randn((n_init, h, d), generator=generator, dtype=dtype)
    A = torch.randn((n_init, h, z), generator=generator, dtype=dtype)
    return W, A


def network_output(x: Any, W: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """u(x) = Aᵀ relu(W x)/√h for every network: x (n, d) → (S, n, z).  Chapter ``book/esser-collapse.py``."""
    W, A = _weights(W, A)
    x = _points("x", x).to(W.dtype)
    if x.shape[1] != W.shape[2]:
        raise ParameterError(f"x has shape {tuple(x.shape)}; its last dimension must be d={W.shape[2]}")
    return torch.relu(x @ W.transpose(-1, -2)) @ A / math.sqrt(W.shape[1])


def empirical_ntk(x: Any, y: Any, W: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """Finite-width tangent kernel Θ_lj(x_a, y_b) = ⟨∇u_l(x_a), ∇u_j(y_b)⟩ of every network, (S, z, z, n, m).

    The gradient inner products of Esser et al. (2024), Eq. 3 and Lemma 1, for the parameters
    Θ = (W, A) of :func:`network_output` (closed form above; tested against autograd).  Chapter
    ``book/esser-collapse.py``.
    """
    W, A = _weights(W, A)
    x, y = _points("x", x).to(W.dtype), _points("y", y).to(W.dtype)
    h, z = W.shape[1], A.shape[2]
    px, py = x @ W.transpose(-1, -2), y @ W.transpose(-1, -2)  # (S, n, h), (S, m, h)
    feat = torch.relu(px) @ torch.relu(py).transpose(-1, -2) / h  # (S, n, m)
    At = A.transpose(-1, -2)[:, :, None, :]  # (S, z, 1, h)
    gx = (px > 0).to(W.dtype)[:, None] * At  # (S, z, n, h)
    gy = (py > 0).to(W.dtype)[:, None] * At  # (S, z, m, h)
    cross = torch.einsum("slnk,sjmk->sljnm", gx, gy) / h * (x @ y.T)
    return cross + torch.eye(z, dtype=W.dtype)[None, :, :, None, None] * feat[:, None, None]


def ssl_quadratic_form(perm: Any, *, loss: str = "contrastive", reduction: str = "mean") -> torch.Tensor:
    """The symmetric matrix B (2n, 2n) with L = Σ_l u_lᵀ B u_l on the points P = [x; x⁺].

    u_l holds the l-th output on the n anchors and then on their n positives; the negative of
    anchor i is anchor ``perm[i]`` (:func:`nlcl.esser.losses.make_pairs`).  Contrastive loss
    (Esser et al. 2024, Eq. 1): L = Σ_i u(x_i)ᵀ(u(x_perm(i)) − u(x_i⁺)); non-contrastive (Eq. 2):
    L = −Σ_i u(x_i)ᵀu(x_i⁺); ``reduction="mean"`` divides by n.  Chapter ``book/esser-collapse.py``.
    """
    choice("loss", loss, ("contrastive", "non_contrastive"))
    choice("reduction", reduction, ("sum", "mean"))
    perm = torch.as_tensor(perm)
    n = perm.shape[0] if perm.dim() == 1 else -1
    if perm.dim() != 1 or n < 2 or not torch.equal(torch.sort(perm).values, torch.arange(n)):
        raise ParameterError(f"perm must be a permutation of 0..n-1 with n >= 2, got {perm.tolist()!r}"[:200])
    B = torch.zeros(2 * n, 2 * n, dtype=torch.float64)
    idx = torch.arange(n)
    B[idx, n + idx] -= 1.0
    if loss == "contrastive":
        B[idx, perm] += 1.0
    B = (B + B.T) / 2
    return B / n if reduction == "mean" else B


def growth_rate(K: torch.Tensor, B: torch.Tensor) -> float:
    """Largest eigenvalue of −2KB: the fastest exponential growth rate of the kernel output dynamics.

    u̇ = −2KBu (Esser et al. 2024, Remark 1 and Eq. 5 with Θ_lj = δ_lj K).  K must be symmetric
    positive semi-definite; −2KB then has real eigenvalues (those of −2K^½BK^½).  Chapter
    ``book/esser-collapse.py``.
    """
    K, B = as_tensor("K", K, torch.float64), as_tensor("B", B, torch.float64)
    if K.dim() != 2 or K.shape != B.shape or K.shape[0] != K.shape[1]:
        raise ParameterError(
            f"K {tuple(K.shape)} and B {tuple(B.shape)} must be square and of the same shape"
        )
    ev, V = torch.linalg.eigh((K + K.T) / 2)
    root = V @ torch.diag(ev.clamp_min(0).sqrt()) @ V.T
    return float(torch.linalg.eigvalsh(-2 * root @ ((B + B.T) / 2) @ root)[-1])


def kernel_output_dynamics(
    K: torch.Tensor, B: torch.Tensor, u0: torch.Tensor, *, lr: float, steps: int, record_every: int = 1
) -> tuple[np.ndarray, torch.Tensor]:
    """The kernel prediction of the outputs: u_l ← u_l − 2η K B u_l for every component l separately.

    The discrete-time version of the decoupled output dynamics (Esser et al. 2024, Lemma 1 and
    Remark 1 applied to Eq. 5), with the same step η as the network's gradient descent.  ``u0``
    (..., 2n, z); returns the recorded steps and the outputs (T, ..., 2n, z).  Chapter
    ``book/esser-collapse.py``.
    """
    lr, steps, record_every = (
        positive_float("lr", lr),
        nonneg_int("steps", steps),
        positive_int("record_every", record_every),
    )
    K, B = as_tensor("K", K, torch.float64), as_tensor("B", B, torch.float64)
    u = as_tensor("u0", u0).to(K.dtype).clone()
    if u.dim() < 2 or u.shape[-2] != K.shape[0]:
        raise ParameterError(f"u0 has shape {tuple(u.shape)}; expected (..., {K.shape[0]}, z)")
    step_map = torch.eye(K.shape[0], dtype=K.dtype) - 2 * lr * K @ B
    rec_t, rec_u = [0], [u.clone()]
    for t in range(1, steps + 1):
        u = step_map @ u
        if t % record_every == 0 or t == steps:
            rec_t.append(t)
            rec_u.append(u.clone())
    return np.asarray(rec_t), torch.stack(rec_u)


#: Elements (S · 2n · columns) of one block of hidden units in :func:`train_network_outputs`: 2 MB
#: in float32, so that a block's activations stay in cache (measured on the 2-core CPU at the
#: chapter's widest width, h = 32768, S = 10, 2n = 128, float32: 75 ms per step, against 92 ms
#: with 2¹⁷, 82 ms with 2²⁰ and 158 ms with 2²²).
HIDDEN_BLOCK_ELEMENTS = 1 << 19


def train_network_outputs(
    P: Any,
    B: torch.Tensor,
    W: torch.Tensor,
    A: torch.Tensor,
    *,
    lr: float,
    steps: int,
    record_every: int = 1,
    on_nonfinite: str = "raise",
) -> tuple[np.ndarray, torch.Tensor] | tuple[np.ndarray, torch.Tensor, np.ndarray]:
    """Full-batch gradient descent on L = Σ_l u_lᵀBu_l for every network; the outputs on P over time.

    The finite-width dynamics of Esser et al. (2024), Eqs. 4-5 (here driven by the parameter
    gradient, computed in closed form).  P (2n, d) are the points of :func:`ssl_quadratic_form`.
    Returns the recorded steps and the outputs (T, S, 2n, z).

    The unconstrained SSL losses are unbounded below: a narrow network that leaves the lazy regime
    can blow up in finite time (its outputs overflow; the blow-up time does not depend on the step
    size, so it is the gradient flow's, not a discretisation artefact).  ``on_nonfinite="raise"``
    (default) raises; ``on_nonfinite="mark"`` records it instead: the outputs are checked at every
    step, a network whose outputs are no longer finite stops training, its recorded outputs are
    +inf from then on, and a third array ``diverged_at`` (S,) gives the step at which each network
    diverged (−1: never).  The other networks are unaffected (every network is trained separately).

    Wide networks are computed in blocks of hidden units (:data:`HIDDEN_BLOCK_ELEMENTS`): the
    outputs are summed block by block, so they equal the unblocked computation up to rounding (the
    order of the sum over h), and the gradients and updates of each unit are the same formulas.

    Raises
    ------
    ParameterError
        On bad shapes or ``on_nonfinite``.
    NonFiniteError
        When an output becomes non-finite and ``on_nonfinite="raise"`` (lower ``lr``·``steps``).

    Chapter ``book/esser-collapse.py``.
    """
    lr, steps, record_every = (
        positive_float("lr", lr),
        nonneg_int("steps", steps),
        positive_int("record_every", record_every),
    )
    choice("on_nonfinite", on_nonfinite, ("raise", "mark"))
    W, A = _weights(W, A)
    W, A = W.clone(), A.clone()
    P = _points("P", P).to(W.dtype)
    B = as_tensor("B", B).to(W.dtype)
    if B.shape != (P.shape[0], P.shape[0]):
        raise ParameterError(f"B has shape {tuple(B.shape)}; expected ({P.shape[0]}, {P.shape[0]})")
    root_h = math.sqrt(W.shape[1])
    Bs = (B + B.T) / 2

    # Hidden units in blocks of columns small enough to stay in cache (the (S, 2n, h) activations of
    # a wide network are hundreds of MB, and a step is a handful of passes over them); one block
    # (h ≤ block width) is the plain computation.  Only u = Σ_blocks relu(P W_bᵀ) A_b / √h is summed
    # over blocks; every gradient entry belongs to one hidden unit and so to one block.  Products
    # are taken in the orientation whose result is wide ((S, z, block), not (S, block, z)): the
    # batched kernels are several times faster that way round.
    blocks = axis_blocks(W.shape[1], W.shape[0] * P.shape[0], HIDDEN_BLOCK_ELEMENTS)

    def outputs() -> tuple[torch.Tensor, torch.Tensor | None]:
        """u (S, 2n, z), and with one block its activations relu(P Wᵀ) (for the step)."""
        if len(blocks) == 1:
            act = (P @ W.mT).relu_()  # (S, 2n, h)
            return (A.mT @ act.mT).mT / root_h, act
        u = A[:, blocks[0]].mT @ torch.relu_(W[:, blocks[0]] @ P.T)  # (S, z, 2n)
        for b in blocks[1:]:
            u += A[:, b].mT @ torch.relu_(W[:, b] @ P.T)
        return u.mT / root_h, None

    # The gradient in closed form: with g = ∂L/∂u / √h (S, 2n, z) and D = 1[P Wᵀ > 0],
    # ∂L/∂A = relu(P Wᵀ)ᵀ g and ∂L/∂W[k, :] = Σ_l A[k, l] Σ_r D[r, k] g[r, l] P[r, :]: the inner sum
    # is the (S, z·d, block) product (g ⊙ P)ᵀ D, so no (S, 2n, h) gradient tensor is formed.
    d, z = P.shape[1], A.shape[2]
    current = outputs()  # the outputs at the start of the next step (reused after a record)
    u = current[0]
    rec_t, rec_u = [0], [u.clone()]
    if on_nonfinite == "mark":
        diverged_at = np.full(W.shape[0], -1)
        alive = torch.ones(W.shape[0], dtype=torch.bool)
    for t in range(1, steps + 1):
        u, act_all = current if current is not None else outputs()
        current = None
        if on_nonfinite == "mark" and t > 1:  # u after step t − 1
            bad = alive & ~torch.isfinite(u).flatten(1).all(1)
            if bool(bad.any()):
                diverged_at[bad.numpy()] = t - 1
                alive &= ~bad
        g = 2 * Bs @ u / root_h  # dL/du / √h
        Y = (g[..., :, None] * P[:, None, :]).flatten(2)  # (S, 2n, z·d): g[r, l] P[r, :]
        frozen = on_nonfinite == "mark" and not bool(alive.all())
        keep = alive.to(W.dtype)[:, None, None] if frozen else None
        for b in blocks:
            Wb, Ab = W[:, b], A[:, b]  # views: the updates below write into W and A
            act = act_all if act_all is not None else (P @ Wb.mT).relu_()  # (S, 2n, block)
            g_A = (g.mT @ act).mT  # (S, block, z)
            inner = (Y.mT @ act.sign_()).view(act.shape[0], z, d, -1)  # D = sign(relu) = 1[pre > 0]
            g_W = (inner * Ab.mT[:, :, None, :]).sum(dim=1).mT  # (S, block, d)
            if frozen:
                g_W, g_A = torch.nan_to_num(g_W) * keep, torch.nan_to_num(g_A) * keep
            Wb -= lr * g_W
            Ab -= lr * g_A
        if t % record_every == 0 or t == steps:
            current = outputs()
            u = current[0]
            if on_nonfinite == "mark":
                bad = alive & ~torch.isfinite(u).flatten(1).all(1)
                diverged_at[bad.numpy()] = t
                alive &= ~bad
                u = torch.where(alive[:, None, None], u, torch.full_like(u, float("inf")))
            elif not bool(torch.isfinite(u).all()):
                raise NonFiniteError(
                    f"the network outputs became non-finite at step {t}; lower lr={lr} or steps={steps}"
                )
            rec_t.append(t)
            rec_u.append(u.clone())
    if on_nonfinite == "mark":
        return np.asarray(rec_t), torch.stack(rec_u), diverged_at
    return np.asarray(rec_t), torch.stack(rec_u)


def ntk_block_statistics(theta: torch.Tensor, K: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """How far a finite-width kernel Θ (S, z, z, n, m) is from Lemma 1's δ_lj·K.

    Returns (off, diag), each (S,): ``off`` = mean over l ≠ j of ‖Θ_lj‖_F divided by the mean over l
    of ‖Θ_ll‖_F (0 in the limit), ``diag`` = mean over l of ‖Θ_ll − K‖_F / ‖K‖_F.  Needs z ≥ 2 for
    ``off`` (NaN otherwise).  Esser et al. (2024), Lemma 1; chapter ``book/esser-collapse.py``.
    """
    theta, K = as_tensor("theta", theta), as_tensor("K", K).to(theta.dtype)
    if theta.dim() != 5 or theta.shape[1] != theta.shape[2] or theta.shape[-2:] != K.shape:
        raise ParameterError(
            f"theta {tuple(theta.shape)} must be (S, z, z, n, m) and K {tuple(K.shape)} (n, m)"
        )
    z = theta.shape[1]
    norms = torch.linalg.matrix_norm(theta)  # (S, z, z)
    eye = torch.eye(z, dtype=torch.bool)
    diag_norm = norms[:, eye].mean(1)
    off = norms[:, ~eye].mean(1) / diag_norm if z > 1 else torch.full_like(diag_norm, float("nan"))
    diag = torch.linalg.matrix_norm(theta[:, eye] - K).mean(1) / torch.linalg.matrix_norm(K)
    return off, diag


def lemma1_sweep(
    P: Any,
    B: torch.Tensor,
    *,
    widths: Sequence[int],
    n_init: int,
    z: int,
    lr: float,
    steps: int,
    record_every: int = 1,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Lemma 1 width by width: kernel blocks at initialisation and the output dynamics vs the kernel's.

    For every width h: ``n_init`` networks (:func:`init_ntk_network`, generator seeded with
    ``seed + h``) are trained by :func:`train_network_outputs`; the kernel prediction
    (:func:`kernel_output_dynamics` with K = :func:`relu_ntk` (P, P)) starts from the same outputs.
    Returns two tables: ``kernel`` (h, init, off, diag) from :func:`ntk_block_statistics`, and
    ``dynamics`` (h, init, step, error, norm, diverged) with error = ‖u_net − u_kernel‖_F/‖u_kernel‖_F
    and norm = ‖u_kernel‖_F/‖u_kernel(0)‖_F at each recorded step.  A network whose outputs blow up
    (``on_nonfinite="mark"`` of :func:`train_network_outputs`) is kept, never dropped: its error is
    +inf from the recorded step at which it diverged, and ``diverged`` is true on all its rows.  Esser et al. (2024), Lemma 1 and
    Eqs. 4-5; chapter ``book/esser-collapse.py``.
    """
    P = _points("P", P)
    widths = [positive_int("widths[i]", int(h)) for h in widths]
    if not widths:
        raise ParameterError("widths=[] is not allowed; give at least one width")
    K = relu_ntk(P, P)
    kernel_rows, dyn_rows = [], []
    for h in widths:
        gen = torch.Generator().manual_seed(int(seed) + h)
        W, A = init_ntk_network(n_init, h, P.shape[1], z, generator=gen, dtype=dtype)
        off, diag = ntk_block_statistics(empirical_ntk(P, P, W, A), K)
        for s in range(n_init):
            kernel_rows.append(dict(h=h, init=s, off=float(off[s]), diag=float(diag[s])))
        t_net, u_net, diverged_at = train_network_outputs(
            P, B, W, A, lr=lr, steps=steps, record_every=record_every, on_nonfinite="mark"
        )
        _, u_ker = kernel_output_dynamics(
            K, B, u_net[0].to(torch.float64), lr=lr, steps=steps, record_every=record_every
        )
        err = torch.linalg.matrix_norm(u_net.to(torch.float64) - u_ker) / torch.linalg.matrix_norm(u_ker)
        err = torch.nan_to_num(
            err, nan=float("inf"), posinf=float("inf")
        )  # a diverged network is infinitely far
        growth = torch.linalg.matrix_norm(u_ker) / torch.linalg.matrix_norm(u_ker[0])
        for i, t in enumerate(t_net):
            for s in range(n_init):
                dyn_rows.append(
                    dict(
                        h=h,
                        init=s,
                        step=int(t),
                        error=float(err[i, s]),
                        norm=float(growth[i, s]),
                        diverged=bool(diverged_at[s] >= 0),
                    )
                )
    return pd.DataFrame(kernel_rows), pd.DataFrame(dyn_rows)
