"""Output dynamics of linear SSL under orthogonality constraints (Esser et al. 2024, Theorems 2–3).

For u(x) = W₂ᵀW₁x with W₁ᵀW₁ = 𝕀_d, W₂ᵀW₂ = 𝕀_z, the loss Tr(W₂ᵀW₁CW₁ᵀW₂) (Definition 1) and
C = VΛVᵀ, the outputs on the eigenvectors, q = [u(v₁), …, u(v_d)]ᵀ ∈ ℝᵈˣᶻ, follow (Theorem 2, Eq. 9)

    q̊ = −2 [2Λq − Λq qᵀq − q qᵀΛq],

a width-independent ODE (the weights' flow is Ẇ = −(𝕀 − WWᵀ)∇_W L, the Grassmannian gradient
of the paper's proof). Its forward-Euler discretisation with step η is the paper's Eq. (12).
The loss is Tr(qᵀΛq), and a new point x̂ is embedded as u(x̂) = qᵀVᵀx̂.

Projected gradient descent with the polar projection (``nlcl.esser.constraints``) follows instead the
Stiefel gradient Ẇ₁ = −(∇ − W₁ sym(W₁ᵀ∇)) to first order in η, whose output dynamics is
(``metric="stiefel"``, derived like Eq. 9; see ``book/esser-grassmann.py``)

    q̊ = −[4Λq − Λq qᵀq − 3 q qᵀΛq].

Both have the same fixed points.  Theorem 3 (z = 1): if Λ ≻ 0 then q → 0; if λ_min < 0 then
q → ±e₁, the eigenvector of the smallest eigenvalue.  Explained in ``book/esser-grassmann.py``.

How fast (z = 1, our derivation from Eq. 9; :func:`theorem3_bounds`): for every j,
(q_j/q₁)˙ = −(λ_j − λ₁)(4 − 2|q|²)(q_j/q₁) and (|q|²)˙ = −8 qᵀΛq (1 − |q|²), so with |q| ≤ 1 the
ratios decay at a rate between 2(λ_j − λ₁) and 4(λ_j − λ₁) and logit|q|² grows at most at rate
−8λ₁: the limit of Theorem 3 is reached on the time scales 1/(λ₂ − λ₁) and 1/|λ₁|, times the log
of the initial ratios.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from scipy.integrate import solve_ivp

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
    "METRICS",
    "eigendecompose",
    "outputs_on_eigenvectors",
    "output_ode_rhs",
    "discretized_dynamics",
    "integrate_output_ode",
    "output_loss",
    "embed",
    "alignment",
    "theorem3_bounds",
]

#: Which output ODE: the paper's Eq. (9) ("grassmann") or the flow of polar-projected GD ("stiefel").
METRICS: tuple[str, ...] = ("grassmann", "stiefel")


def _lam(lam: Any, d: int | None = None) -> torch.Tensor:
    lam = as_tensor("lam", lam, torch.float64)
    if lam.dim() != 1 or (d is not None and lam.shape[0] != d):
        raise ParameterError(
            f"lam has shape {tuple(lam.shape)}; expected ({d if d is not None else 'd'},), the eigenvalues of C"
        )
    if not bool(torch.isfinite(lam).all()):
        raise ParameterError("lam has non-finite entries; the eigenvalues of C must be finite")
    return lam


def _q(q: Any) -> torch.Tensor:
    q = as_tensor("q", q, torch.float64)
    if q.dim() < 2:
        raise ParameterError(f"q has shape {tuple(q.shape)}; expected (..., d, z)")
    return q


def eigendecompose(C: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """C = VΛVᵀ with eigenvalues ascending (λ₁ the most negative) and V's columns the eigenvectors.

    ``C`` must be a symmetric (d, d) matrix (Definition 1; the basis of Theorem 2, Eq. 9). Returns (lam, V).
    Chapter ``book/esser-grassmann.py``.
    """
    C = as_tensor("C", C, torch.float64)
    if C.dim() != 2 or C.shape[0] != C.shape[1]:
        raise ParameterError(f"C has shape {tuple(C.shape)}; expected a square (d, d) matrix")
    if not torch.allclose(C, C.T, atol=1e-10 * max(1.0, float(C.abs().max()))):
        raise ParameterError("C is not symmetric; pass C = (C̃ + C̃ᵀ)/2 (nlcl.esser.collapse.loss_matrix)")
    lam, V = torch.linalg.eigh(C)
    return lam, V


def outputs_on_eigenvectors(W1: torch.Tensor, W2: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """q = [u(v₁), …, u(v_d)]ᵀ = VᵀW₁ᵀW₂ for u(x) = W₂ᵀW₁x (Theorem 2), shape (..., d, z).

    Chapter ``book/esser-grassmann.py``.
    """
    W1, W2, V = (
        as_tensor("W1", W1, torch.float64),
        as_tensor("W2", W2, torch.float64),
        as_tensor("V", V, torch.float64),
    )
    if W1.shape[:-1] != W2.shape[:-1] or V.shape != (W1.shape[-1], W1.shape[-1]):
        raise ParameterError(
            f"W1 {tuple(W1.shape)}, W2 {tuple(W2.shape)}, V {tuple(V.shape)} do not fit (..., h, d), (..., h, z), (d, d)"
        )
    return V.T @ (W1.transpose(-1, -2) @ W2)


def output_ode_rhs(q: Any, lam: Any, *, metric: str = "grassmann") -> torch.Tensor:
    """Right-hand side of the output dynamics (Esser et al. 2024, Theorem 2, Eq. 9).

    ``metric="grassmann"``: q̊ = −2[2Λq − Λq qᵀq − q qᵀΛq] (the paper).
    ``metric="stiefel"``: q̊ = −[4Λq − Λq qᵀq − 3 q qᵀΛq] (polar-projected gradient descent).

    Parameters
    ----------
    q:
        Outputs on the eigenvectors, shape (..., d, z).
    lam:
        Eigenvalues of C, shape (d,) (Λ = diag(lam)).

    Returns
    -------
    q̊ with the shape of q. Chapter ``book/esser-grassmann.py``.
    """
    choice("metric", metric, METRICS)
    q = _q(q)
    lam = _lam(lam, q.shape[-2])
    lq = lam[:, None] * q  # Λq
    qtq = q.transpose(-1, -2) @ q  # qᵀq (z×z)
    qtlq = q.transpose(-1, -2) @ lq  # qᵀΛq (z×z)
    if metric == "grassmann":
        return -2.0 * (2.0 * lq - lq @ qtq - q @ qtlq)
    return -(4.0 * lq - lq @ qtq - 3.0 * q @ qtlq)


def output_loss(q: Any, lam: Any) -> torch.Tensor:
    """Loss in output coordinates, Tr(qᵀΛq) = Tr(W₂ᵀW₁CW₁ᵀW₂) (Definition 1), shape (...)."""
    q = _q(q)
    lam = _lam(lam, q.shape[-2])
    return (lam[:, None] * q * q).sum(dim=(-2, -1))


def discretized_dynamics(
    q0: Any, lam: Any, *, lr: float, steps: int, record_every: int = 1, metric: str = "grassmann"
) -> tuple[np.ndarray, torch.Tensor]:
    """Iterate the paper's discretisation q_{t+1} = q_t + η q̊(q_t) (Esser et al. 2024, Eq. 12).

    Vectorised over the leading dims of ``q0`` (..., d, z). Returns (steps, trajectory) with
    trajectory of shape (T, ..., d, z) recorded every ``record_every`` steps (and at the end).

    Raises
    ------
    ValueError
        Bad arguments, or a non-finite iterate (names the step; lower ``lr``).

    Chapter ``book/esser-grassmann.py``.
    """
    lr = positive_float("lr", lr)
    steps = nonneg_int("steps", steps)
    record_every = positive_int("record_every", record_every)
    q = _q(q0).clone()
    lam = _lam(lam, q.shape[-2])
    rec_t, rec_q = [0], [q.clone()]
    for t in range(1, steps + 1):
        q = q + lr * output_ode_rhs(q, lam, metric=metric)
        if t % record_every == 0 or t == steps:
            if not bool(torch.isfinite(q).all()):
                raise NonFiniteError(
                    f"the discretised dynamics q became non-finite at step {t}; lower lr={lr}"
                )
            rec_t.append(t)
            rec_q.append(q.clone())
    return np.asarray(rec_t), torch.stack(rec_q)


def integrate_output_ode(
    q0: Any,
    lam: Any,
    t_eval: Any,
    *,
    metric: str = "grassmann",
    method: str = "RK45",
    rtol: float = 1e-8,
    atol: float = 1e-10,
) -> torch.Tensor:
    """Integrate Eq. (9) with :func:`scipy.integrate.solve_ivp`, all initialisations at once.

    Parameters
    ----------
    q0:
        Initial outputs (..., d, z); the leading dims are flattened into one state vector.
    lam:
        Eigenvalues of C, shape (d,).
    t_eval:
        Increasing times ≥ 0 at which to report q (t = η × step to compare with Eq. 12).
    method, rtol, atol:
        Passed to ``solve_ivp`` (e.g. ``"RK45"``, ``"LSODA"``, ``"DOP853"``).

    Returns
    -------
    q(t) for every time in ``t_eval``, shape (T, ..., d, z). Chapter ``book/esser-grassmann.py``.
    """
    choice("metric", metric, METRICS)
    choice("method", method, ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"))
    q0 = _q(q0)
    lam = _lam(lam, q0.shape[-2])
    t_eval = np.asarray(t_eval, dtype=float)
    if (
        t_eval.ndim != 1
        or t_eval.size == 0
        or np.any(np.diff(t_eval) < 0)
        or t_eval[0] < 0
        or not np.all(np.isfinite(t_eval))
    ):
        raise ParameterError(f"t_eval must be a non-empty increasing 1-d array of times >= 0, got {t_eval!r}")
    shape = tuple(q0.shape)
    lam_np = lam.numpy()

    def rhs(_t: float, y: np.ndarray) -> np.ndarray:
        q = torch.from_numpy(y.reshape(shape))
        return output_ode_rhs(q, torch.from_numpy(lam_np), metric=metric).numpy().ravel()

    sol = solve_ivp(
        rhs, (0.0, float(t_eval[-1])), q0.numpy().ravel(), t_eval=t_eval, method=method, rtol=rtol, atol=atol
    )
    if not sol.success:
        raise ParameterError(f"solve_ivp failed: {sol.message}")
    return torch.from_numpy(sol.y.T.reshape((len(t_eval),) + shape).copy())


def embed(x: Any, q: Any, V: Any) -> torch.Tensor:
    """Embedding of new points, u(x̂) = qᵀVᵀx̂ (Esser et al. 2024, "New Datapoint").

    ``x`` (n, d), ``q`` (..., d, z), ``V`` (d, d); returns (..., n, z). Chapter
    ``book/esser-grassmann.py``.
    """
    x, q, V = as_tensor("x", x, torch.float64), _q(q), as_tensor("V", V, torch.float64)
    d = q.shape[-2]
    if x.shape[-1] != d or V.shape != (d, d):
        raise ParameterError(
            f"x {tuple(x.shape)}, q {tuple(q.shape)}, V {tuple(V.shape)} do not fit (n, d), (..., d, z), (d, d)"
        )
    return (x @ V) @ q


def alignment(q: Any, e: Any) -> torch.Tensor:
    """|cos| between each q (..., d) (or (..., d, 1)) and the direction e (d,) (Theorem 3)."""
    q, e = as_tensor("q", q, torch.float64), as_tensor("e", e, torch.float64)
    if q.dim() >= 2 and q.shape[-1] == 1 and q.shape[-2] == e.shape[0]:
        q = q[..., 0]
    if q.shape[-1] != e.shape[0]:
        raise ParameterError(f"q {tuple(q.shape)} and e {tuple(e.shape)} must end in the same dimension d")
    num = (q @ e).abs()
    return num / (torch.linalg.vector_norm(q, dim=-1) * torch.linalg.vector_norm(e)).clamp_min(1e-300)


def theorem3_bounds(q0: Any, lam: Any, t: float) -> dict[str, torch.Tensor]:
    """Bounds on Theorem 3's convergence (z = 1) at time ``t``, from Eq. 9 alone (no integration).

    For z = 1, Eq. 9 gives exactly (derived in ``book/esser-grassmann.py``, section Theorem 3)

        d/dt (q_j/q₁) = −(λ_j − λ₁)(4 − 2|q|²) (q_j/q₁),    d/dt |q|² = −8 qᵀΛq (1 − |q|²),

    and |q(0)| ≤ 1 keeps |q| ≤ 1. With g_j = λ_j − λ₁ ≥ 0 (λ ascending) the ratios therefore
    shrink by a factor between exp(−4g_j t) and exp(−2g_j t), so

        q₁²/(q₁² + Σ_j q_j² e^{−4g_j t}) ≤ cos²(q(t), e₁) ≤ q₁²/(q₁² + Σ_j q_j² e^{−8g_j t})

    (all at t = 0 on the right-hand sides), and qᵀΛq ≥ λ₁|q|² gives
    logit |q(t)|² ≤ logit |q(0)|² − 8λ₁t.

    Parameters
    ----------
    q0:
        Initial outputs, shape (..., d) or (..., d, 1), with |q0| ≤ 1 (outputs of orthonormal weights).
    lam:
        Eigenvalues of C, shape (d,), ascending (λ₁ the smallest), as :func:`eigendecompose` returns.
    t:
        Time ≥ 0 (t = η × steps for Eq. 12).

    Returns
    -------
    ``{"cos_lower", "cos_upper", "norm_upper"}``, each of shape (...): bounds on |cos(q(t), e₁)|
    and on |q(t)|. Chapter ``book/esser-grassmann.py``.
    """
    q0 = as_tensor("q0", q0, torch.float64)
    lam = _lam(lam)
    d = lam.shape[0]
    if q0.dim() >= 2 and q0.shape[-1] == 1 and q0.shape[-2] == d:
        q0 = q0[..., 0]
    if q0.dim() < 1 or q0.shape[-1] != d:
        raise ParameterError(
            f"q0 has shape {tuple(q0.shape)}; expected (..., {d}) or (..., {d}, 1) for z = 1"
        )
    if bool((lam[1:] < lam[:-1]).any()):
        raise ParameterError(
            f"lam={lam.tolist()} must be ascending (λ₁ the smallest), as eigendecompose returns"
        )
    t = float(t)
    if not np.isfinite(t) or t < 0:
        raise ParameterError(f"t={t!r} must be a finite time >= 0")
    s0 = (q0**2).sum(-1)
    if bool((s0 > 1 + 1e-9).any()):
        raise ParameterError(
            f"|q0| must be <= 1 (outputs of orthonormal weights); largest is {float(s0.max().sqrt()):.6g}"
        )
    gap = lam - lam[0]
    q1sq, rest = q0[..., 0] ** 2, q0[..., 1:] ** 2

    def cos_at(rate: float) -> torch.Tensor:
        den = q1sq + (rest * torch.exp(-rate * gap[1:] * t)).sum(-1)
        return torch.where(den > 0, q1sq / den.clamp_min(1e-300), torch.zeros_like(den)).sqrt()

    s0c = s0.clamp(0.0, 1.0)
    with np.errstate(divide="ignore"):
        logit0 = torch.log(s0c) - torch.log1p(-s0c)
    s_up = torch.sigmoid(logit0 - 8.0 * float(lam[0]) * t)
    s_up = torch.where(s0c >= 1.0, torch.ones_like(s_up), torch.where(s0c <= 0, torch.zeros_like(s_up), s_up))
    return {"cos_lower": cos_at(4.0), "cos_upper": cos_at(8.0), "norm_upper": s_up.sqrt()}
