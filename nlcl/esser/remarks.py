"""Esser et al. (2024), Remarks 2-3 and the p-positive / q-negative construction of C̃, made testable.

* **Remark 1** (multivariate regression = independent univariate regressions): under the squared
  loss, Lemma 1 makes every output component of a kernel machine (or an infinitely wide network)
  evolve on its own.  :func:`regression_decoupling` trains a two-layer ReLU network in NTK
  parameterisation on z-dimensional labels jointly and, from the same weights, once per output on
  that output's labels alone, and returns how far the two are apart.
* **Remark 2** (other losses): for a linear model u(x) = Θx the paper argues that InfoNCE behaves
  like loss (1) — its output dimensions decouple, hence collapse — while the spectral contrastive
  loss of HaoChen et al. (2021) keeps them coupled through the terms u(x_i)ᵀu(x_i⁻).
  :func:`infonce_loss` and :func:`spectral_loss` implement both; :func:`rowwise_training_gap`
  measures coupling directly: training all z output rows of Θ jointly vs each row on its own (for a
  decoupled loss the two coincide); :func:`gradient_coupling` does the same for one gradient.
* **Remark 3** (fixed projectors): u(x) = AΘx with a fixed A ∈ ℝʳˣᶻ.  Gradient flow on
  Tr(AΘCΘᵀAᵀ) is Θ̇ = −2AᵀAΘC; :func:`projector_collapse_rate` is the rate at which the second
  output-covariance eigenvalue dies relative to the first, 4(a₁|c₁| − a₂|c₂|) for d = 2 inputs
  (a the eigenvalues of AᵀA, c the negative eigenvalues of C; derived in the chapter).
* **p positives and q negatives per anchor** (the paper's C̃ after Eq. 7): in expectation, for
  i.i.d. anchors and negatives and positives x + ε,
  E[C̃] = n(q μμᵀ − p E[xxᵀ]) (:func:`expected_pair_matrix`): negatives enter only through the
  mean μ.  :func:`sample_pair_matrices` draws C̃ over fresh samples.

Explained in the chapter ``book/esser-collapse.py`` (section "Remarks 2 and 3").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from nlcl.core.tensors import as_tensor
from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
)
from nlcl.esser.infonce_grad import InfoNCE
from nlcl.esser.losses import pair_matrix

__all__ = [
    "regression_decoupling",
    "infonce_loss",
    "spectral_loss",
    "rowwise_training_gap",
    "gradient_coupling",
    "projector_collapse_rate",
    "expected_pair_matrix",
    "sample_pair_matrices",
]


def _views(x: Any, *others: Any) -> list[torch.Tensor]:
    out = [as_tensor("x", x, torch.float64)]
    for i, o in enumerate(others):
        out.append(as_tensor(f"view {i + 1}", o, torch.float64))
    if out[0].dim() != 2 or any(o.shape != out[0].shape for o in out):
        raise ParameterError(f"the views must share one shape (n, d); got {[tuple(o.shape) for o in out]}")
    return out


def _theta(theta: torch.Tensor, d: int) -> torch.Tensor:
    if theta.dim() < 2 or theta.shape[-1] != d:
        raise ParameterError(f"theta has shape {tuple(theta.shape)}; expected (..., z, {d})")
    return theta


# networks per chunk of :func:`_regression_descent`: about this many (point, hidden unit) entries, so
# one chunk's activations stay in a core's cache (one chunk of all S at the widths where they do)
_CHUNK_ENTRIES = 1 << 17


def _descent_chunks(S: int, n: int, h: int) -> list[slice]:
    """Slices of the S networks, about ``_CHUNK_ENTRIES`` entries each and never one network alone.

    A batch of one network takes another matrix-vector kernel for ``act @ A`` (z = 1) than a batch of
    two or more, which rounds differently; with chunks of at least two every network's arithmetic is
    that of the single batch of S (bit for bit on the AMD EPYC where it was measured; the test allows
    float64 rounding, since equal bits across batch sizes are the BLAS's, not promised).
    """
    per = max(2, _CHUNK_ENTRIES // max(n * h, 1))
    starts = list(range(0, S, per))
    if len(starts) > 1 and S - starts[-1] == 1:
        starts.pop()  # merge a last chunk of one network into the one before
    return [slice(a, b) for a, b in zip(starts, starts[1:] + [S])]


def _descend_networks(
    x: torch.Tensor, y: torch.Tensor, W: torch.Tensor, A: torch.Tensor, lr: float, steps: int, hidden: bool
) -> torch.Tensor:
    """Gradient descent of :func:`_regression_descent` for one batch of networks; final outputs.

    Each step: g_u = (relu(Wx)ᵀA/√h − y)/n, A ← A − η relu(Wx) g_u/√h and, with ``hidden``,
    W ← W − η [(g_u Aᵀ) ⊙ 1(Wx > 0)/√h]ᵀ x, in that order of roundings.  Without ``hidden`` W is
    fixed, so relu(Wx) is computed once.
    """
    W, A = W.clone(), A.clone()
    n, root_h = x.shape[0], math.sqrt(W.shape[1])
    act = mask = None
    for _ in range(steps):
        if hidden or act is None:
            pre = x @ W.transpose(-1, -2)  # (S, n, h)
            mask = pre > 0 if hidden else None
            act = pre.relu_()
        g_u = (act @ A / root_h - y) / n  # dL/du (S, n, z)
        g_A = act.transpose(-1, -2) @ g_u / root_h
        if hidden:
            g_pre = (g_u @ A.transpose(-1, -2)).mul_(mask).div_(root_h)
            W = W - g_pre.transpose(-1, -2).mul_(lr) @ x
        A = A - lr * g_A
    return torch.relu(x @ W.transpose(-1, -2)) @ A / root_h


def _regression_descent(
    x: torch.Tensor, y: torch.Tensor, W: torch.Tensor, A: torch.Tensor, lr: float, steps: int, hidden: bool
) -> torch.Tensor:
    """Full-batch gradient descent on ½ mean_i ‖u(x_i) − y_i‖², u = Aᵀrelu(Wx)/√h; final outputs (S, n, z).

    The S networks are independent and are trained in cache-sized chunks (:func:`_descent_chunks`).
    """
    S, h = W.shape[:2]
    outs = [
        _descend_networks(x, y[c] if y.dim() == 3 else y, W[c], A[c], lr, steps, hidden)
        for c in _descent_chunks(S, x.shape[0], h)
    ]
    out = torch.cat(outs)
    if not bool(torch.isfinite(out).all()):
        raise NonFiniteError(f"regression gradient descent became non-finite; lower lr={lr}")
    return out


def regression_decoupling(
    x: Any, y: Any, W: Any, A: Any, *, lr: float, steps: int, train_hidden: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Multivariate regression trained jointly vs as z univariate regressions; (gap, joint, separate).

    Esser et al. (2024), Remark 1 (a consequence of Lemma 1 applied to Eq. 3): under the squared
    loss L = ½ Σ_i ‖u(x_i) − y_i‖² each output component u_l of a kernel machine, or of an infinitely
    wide network, evolves on its own, so a z-variate regression can be solved as z univariate ones.
    The model is the two-layer ReLU network u(x) = Aᵀrelu(Wx)/√h of :mod:`nlcl.esser.ntk` (W (S, h, d),
    A (S, h, z): S initialisations).  *Joint*: all z outputs trained together on y (n, z) by
    full-batch gradient descent on ½ mean_i ‖u(x_i) − y_i‖² (step ``lr``, ``steps`` steps).
    *Separate*: for each l, the network with the same W and the single output column A[:, :, l]
    trained on y[:, l] alone.  ``train_hidden=False`` trains A only: the random-feature kernel machine
    ψ(x) = relu(Wx)/√h, for which the two coincide exactly (Lemma 1's kernel case).  Returns
    ``gap`` (S,) = ‖U_joint − U_sep‖_F / ‖U_joint − U_0‖_F (the difference relative to what training
    changed; U the outputs on x; where training changed nothing, ‖U_joint − U_sep‖_F itself), and the
    final outputs U_joint, U_sep (S, n, z).  Chapter
    ``book/esser-collapse.py`` (section "Remark 1").

    Raises
    ------
    ParameterError
        On bad shapes or non-positive ``lr``; NonFiniteError if the descent diverges.
    """
    lr, steps = positive_float("lr", lr), nonneg_int("steps", steps)
    x = as_tensor("x", x, torch.float64)
    y = as_tensor("y", y, torch.float64)
    W, A = as_tensor("W", W, torch.float64), as_tensor("A", A, torch.float64)
    if x.dim() != 2 or y.dim() != 2 or y.shape[0] != x.shape[0]:
        raise ParameterError(f"x {tuple(x.shape)} and y {tuple(y.shape)} must be (n, d) and (n, z)")
    if W.dim() != 3 or A.dim() != 3 or W.shape[:2] != A.shape[:2] or W.shape[2] != x.shape[1]:
        raise ParameterError(
            f"W {tuple(W.shape)} and A {tuple(A.shape)} must be (S, h, d={x.shape[1]}) and (S, h, z) with the same (S, h)"
        )
    if A.shape[2] != y.shape[1]:
        raise ParameterError(f"A has {A.shape[2]} outputs but y has {y.shape[1]} columns")
    S, z = W.shape[0], A.shape[2]
    u0 = torch.relu(x @ W.transpose(-1, -2)) @ A / math.sqrt(W.shape[1])
    joint = _regression_descent(x, y, W, A, lr, steps, train_hidden)
    # the z univariate problems as S·z networks of one output each, trained in one batch
    W_sep = W.repeat_interleave(z, dim=0)  # (S·z, h, d): network (s, l) at index s·z + l
    A_sep = A.transpose(-1, -2).reshape(S * z, -1, 1)  # column l of A[s]
    y_sep = y.T.repeat(S, 1)[:, :, None]  # (S·z, n, 1): labels y[:, l]
    sep = _regression_descent(x, y_sep, W_sep, A_sep, lr, steps, train_hidden).reshape(S, z, -1)
    sep = sep.transpose(-1, -2)  # (S, n, z)
    diff, change = torch.linalg.matrix_norm(joint - sep), torch.linalg.matrix_norm(joint - u0)
    # an initialisation whose features are all zero (every ReLU dead) is not changed by training:
    # both runs stay at U_0, so there is no difference to compare (gap 0, not 0/0)
    gap = torch.where(change > 0, diff / change.clamp_min(torch.finfo(change.dtype).tiny), diff)
    return gap, joint, sep


def infonce_loss(theta: torch.Tensor, x: Any, x_pos: Any, *, temperature: float = 1.0) -> torch.Tensor:
    """InfoNCE of the linear model u = Θx with dot-product similarity, one loss per leading index.

    L = mean_i [ −s_ii + log Σ_j exp(s_ij) ],  s_ij = u(x_i)·u(x_j⁺)/τ: anchor i, its positive, and
    the other anchors' positives as negatives (van den Oord et al. 2018; Esser et al. 2024,
    Remark 2).  theta (..., z, d) → (...).  Its gradient is in closed form
    (:class:`nlcl.esser.infonce_grad.InfoNCE`).  Chapter ``book/esser-collapse.py``.
    """
    x, x_pos = _views(x, x_pos)
    theta = _theta(theta, x.shape[1])
    tau = positive_float("temperature", temperature)
    return InfoNCE.apply(theta, x, x_pos, tau)


def spectral_loss(theta: torch.Tensor, x: Any, x_pos: Any, x_neg: Any) -> torch.Tensor:
    """Spectral contrastive loss of the linear model u = Θx, one loss per leading index.

    L = mean_i [ −2 u(x_i)·u(x_i⁺) + (u(x_i)·u(x_i⁻))² ] (HaoChen et al. 2021, with the paper's one
    negative per anchor; Esser et al. 2024, Remark 2).  theta (..., z, d) → (...).  Chapter
    ``book/esser-collapse.py``.
    """
    x, x_pos, x_neg = _views(x, x_pos, x_neg)
    theta = _theta(theta, x.shape[1])
    u, up, un = (v.to(theta.dtype) @ theta.transpose(-1, -2) for v in (x, x_pos, x_neg))
    return (-2 * (u * up).sum(-1) + (u * un).sum(-1) ** 2).mean(-1)


def _descend(
    loss_fn: Callable[[torch.Tensor], torch.Tensor],
    theta: torch.Tensor,
    lr: float,
    steps: int,
    observe: Callable[[torch.Tensor], torch.Tensor] | None = None,
    record_every: int = 1,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    theta = theta.detach().clone()
    seen = []
    for t in range(steps + 1):
        if observe is not None and (t % record_every == 0 or t == steps):
            with torch.no_grad():
                seen.append(observe(theta))
        if t == steps:
            break
        leaf = theta.requires_grad_(True)
        loss = loss_fn(leaf)
        (grad,) = torch.autograd.grad(loss.sum(), leaf)
        theta = (leaf - lr * grad).detach()
        if not bool(torch.isfinite(theta).all()):
            raise NonFiniteError(f"gradient descent became non-finite at step {t + 1}; lower lr={lr}")
    return theta, seen


def rowwise_training_gap(
    loss_fn: Callable[[torch.Tensor], torch.Tensor],
    theta0: torch.Tensor,
    *,
    lr: float,
    steps: int,
    observe: Callable[[torch.Tensor], torch.Tensor] | None = None,
    record_every: int = 1,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Train Θ (S, z, d) jointly, and each of its z rows alone; return (gap, joint, rowwise, observed).

    ``loss_fn(theta)`` maps (S, k, d) to the S losses for any number k of output rows.  If the loss
    decouples across output dimensions (Esser et al. 2024, Lemma 1 / Proposition 1: each u_l has its
    own dynamics), joint and row-by-row training coincide and ``gap`` = ‖Θ_joint − Θ_rowwise‖_F /
    ‖Θ_joint‖_F (S,) is 0; coupling (Remark 2: the spectral loss) makes it order one.  Plain
    gradient descent with step ``lr``.  ``observe(theta)`` of the joint run is recorded every
    ``record_every`` steps and at the end, stacked as ``observed`` (T, ...), else None.  Chapter
    ``book/esser-collapse.py``.
    """
    lr, steps = positive_float("lr", lr), nonneg_int("steps", steps)
    record_every = positive_int("record_every", record_every)
    theta0 = as_tensor("theta0", theta0)
    if theta0.dim() != 3:
        raise ParameterError(f"theta0 has shape {tuple(theta0.shape)}; expected (S, z, d)")
    joint, seen = _descend(loss_fn, theta0, lr, steps, observe, record_every)
    rowwise = torch.cat(
        [_descend(loss_fn, theta0[:, l : l + 1], lr, steps)[0] for l in range(theta0.shape[1])], dim=1
    )
    gap = torch.linalg.matrix_norm(joint - rowwise) / torch.linalg.matrix_norm(joint)
    return gap, joint, rowwise, (torch.stack(seen) if seen else None)


def gradient_coupling(loss_fn: Callable[[torch.Tensor], torch.Tensor], theta: torch.Tensor) -> torch.Tensor:
    """‖∇L(Θ) − [∇L(θ_1); …; ∇L(θ_z)]‖_F / ‖∇L(Θ)‖_F: how much one row's gradient depends on the others.

    Zero for a loss that decouples across output rows (Esser et al. 2024, Proposition 1); for
    InfoNCE it is O(‖Θ‖²) at small outputs (Remark 2: "the simplified loss closely resembles (1)").
    theta (S, z, d) → (S,).  Chapter ``book/esser-collapse.py``.
    """
    theta = as_tensor("theta", theta).detach()
    if theta.dim() != 3:
        raise ParameterError(f"theta has shape {tuple(theta.shape)}; expected (S, z, d)")

    def grad(th: torch.Tensor) -> torch.Tensor:
        leaf = th.clone().requires_grad_(True)
        return torch.autograd.grad(loss_fn(leaf).sum(), leaf)[0]

    joint = grad(theta)
    rows = torch.cat([grad(theta[:, l : l + 1]) for l in range(theta.shape[1])], dim=1)
    return torch.linalg.matrix_norm(joint - rows) / torch.linalg.matrix_norm(joint)


def projector_collapse_rate(A: Any, C: Any, *, lr: float | None = None) -> float:
    """Predicted decay rate of λ₂/λ₁ of Cov[AΘx] under Θ̇ = −2AᵀAΘC, for inputs of dimension d = 2.

    With a₁ ≥ a₂ the two largest eigenvalues of AᵀA and c₁ ≤ c₂ < 0 the eigenvalues of C, the
    output map AΘ(t) = Σ_km e^{−2t a_k c_m} A p_k p_kᵀ Θ₀ v_m v_mᵀ has σ₁ ∝ e^{2t a₁|c₁|} and
    σ₁σ₂ ∝ e^{2t(a₁|c₁| + a₂|c₂|)}, so λ₂/λ₁ = (σ₂/σ₁)² ∝ e^{−4t(a₁|c₁| − a₂|c₂|)}.  With ``lr``
    = η, the rate of gradient descent instead, per unit time t = step·η: each step multiplies the
    (k, m) term by 1 + 2ηa_k|c_m|, so the rate is 2[log(1 + 2ηa₁|c₁|) − log(1 + 2ηa₂|c₂|)]/η.  Both
    are asymptotic rates (late times).  Esser et al.
    (2024), Remark 3 (fixed projector; our derivation of its rate); chapter ``book/esser-collapse.py``.

    Raises
    ------
    ParameterError
        If C is not 2 × 2 symmetric with two negative eigenvalues, or AᵀA has rank < 1.
    """
    A, C = as_tensor("A", A, torch.float64), as_tensor("C", C, torch.float64)
    if C.shape != (2, 2) or not torch.allclose(C, C.T) or A.dim() != 2 or A.shape[1] < 2:
        raise ParameterError(
            f"C must be a symmetric 2x2 matrix and A (r, z) with z >= 2; got C {tuple(C.shape)}, A {tuple(A.shape)}"
        )
    c = torch.linalg.eigvalsh(C)
    if bool((c >= 0).any()):
        raise ParameterError(f"C has eigenvalues {c.tolist()}; the rate formula needs both negative")
    a = torch.linalg.eigvalsh(A.T @ A).flip(0)
    if lr is None:
        return float(4 * (a[0] * c[0].abs() - a[1] * c[1].abs()))
    eta = positive_float("lr", lr)
    first, second = 1 + 2 * eta * a[0] * c[0].abs(), 1 + 2 * eta * a[1] * c[1].abs()
    return float(2 * (torch.log(first) - torch.log(second)) / eta)


def expected_pair_matrix(
    mean: Any, second_moment: Any, *, p: int = 1, q: int = 1, n: int = 1
) -> torch.Tensor:
    """E[C̃] = n(q μμᵀ − p E[xxᵀ]) for p positives x + ε and q independent negatives per anchor.

    Esser et al. (2024), the p/q construction after Eq. 7: C̃ = Σ_i (Σ_j x_i x_ij⁻ᵀ − Σ_j x_i x_ij⁺ᵀ)
    with x_ij⁻ independent draws of x and x_ij⁺ = x_i + ε_ij, ε zero-mean and independent of x.
    (For p = q = 1 the paper prints −n E[xxᵀ], which drops the n μμᵀ term.)  Chapter
    ``book/esser-collapse.py``.
    """
    mu = as_tensor("mean", mean, torch.float64)
    second = as_tensor("second_moment", second_moment, torch.float64)
    if mu.dim() != 1 or second.shape != (mu.shape[0], mu.shape[0]):
        raise ParameterError(
            f"mean {tuple(mu.shape)} and second_moment {tuple(second.shape)} must be (d,) and (d, d)"
        )
    p, q, n = positive_int("p", p), nonneg_int("q", q), positive_int("n", n)
    return n * (q * torch.outer(mu, mu) - p * second)


def sample_pair_matrices(
    sampler: Callable[[int, np.random.RandomState], np.ndarray],
    *,
    n: int,
    p: int,
    q: int,
    noise_var: float,
    reps: int,
    seed: int = 0,
) -> torch.Tensor:
    """C̃ (:func:`nlcl.esser.losses.pair_matrix`) over ``reps`` fresh samples, (reps, d, d).

    Each repetition draws n anchors, n·q independent negatives and n·p positives x + ε with
    ε ~ N(0, ``noise_var``·I); ``sampler(k, rng)`` returns k points (k, d).  The Monte-Carlo side of
    :func:`expected_pair_matrix`; chapter ``book/esser-collapse.py``.
    """
    n, p, q, reps = (
        positive_int("n", n),
        positive_int("p", p),
        positive_int("q", q),
        positive_int("reps", reps),
    )
    noise_var = nonneg_float("noise_var", noise_var)
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(reps):
        x = np.asarray(sampler(n, rng), dtype=np.float64)
        d = x.shape[1]
        neg = np.asarray(sampler(n * q, rng), dtype=np.float64).reshape(n, q, d)
        pos = x[:, None, :] + np.sqrt(noise_var) * rng.standard_normal((n, p, d))
        out.append(pair_matrix(x, pos, neg, loss="contrastive", reduction="sum"))
    return torch.stack(out)
