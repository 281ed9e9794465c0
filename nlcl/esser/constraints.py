"""Constraints on the weights of linear SSL models and projected gradient descent.

Esser, Mukherjee & Ghoshdastidar (2024) compare, for u(x) = W₂ᵀW₁x and the trace loss
L = Tr(W₂ᵀW₁CW₁ᵀW₂) (``nlcl.esser.collapse.trace_loss``):

* no constraint (the loss is unbounded below when C has a negative eigenvalue: divergence);
* Frobenius-norm constraints ‖W₁‖_F ≤ c₁, ‖W₂‖_F ≤ c₂ (Proposition 2: still rank-one optimum);
* operator-norm constraints ‖W₁‖₂ ≤ 1, ‖W₂‖₂ ≤ 1 (Proposition 3, formulation 2);
* a product operator-norm constraint ‖W₂ᵀW₁‖₂ ≤ 1 (Proposition 3, formulation 3);
* orthogonality W₁ᵀW₁ = 𝕀_d, W₂ᵀW₂ = 𝕀_z (Proposition 3, formulation 4; Definition 1);
* the scaled loss L/(‖W₁‖₂²‖W₂‖₂²) without constraint (Proposition 3, formulation 1).

Constraints are enforced by projecting the weights back after each gradient step, as in the
paper's Eq. (11). Everything is vectorised over a leading batch of initialisations.  Explained in
``book/esser-collapse.py`` (Propositions 2–3, Fig. 1) and ``book/esser-grassmann.py`` (Fig. 3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    choice,
    nonneg_int,
    positive_float,
    positive_int,
)
from nlcl.esser.losses import trace_loss

__all__ = [
    "CONSTRAINTS",
    "GRADIENTS",
    "random_semi_orthogonal",
    "project_frobenius",
    "project_operator",
    "project_orthogonal",
    "project_product_operator",
    "project",
    "scaled_loss",
    "grassmann_gradient",
    "Trajectory",
    "gradient_descent",
    "projected_gradient_descent",
]

#: Constraint names accepted by :func:`project` and :func:`projected_gradient_descent`.
CONSTRAINTS: tuple[str, ...] = ("none", "frobenius", "operator", "product_operator", "orthogonal", "scaled")
#: Which gradient a step uses: the Euclidean one, or its projection (𝕀 − WWᵀ)∇ onto the
#: horizontal space of the Grassmannian (the field the paper differentiates in Theorem 2).
GRADIENTS: tuple[str, ...] = ("euclidean", "grassmann")


def random_semi_orthogonal(
    shape: Sequence[int], *, generator: torch.Generator | None = None, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """Uniformly (Haar) random matrices with orthonormal columns, shape (..., h, k), h ≥ k.

    QR of a Gaussian matrix with the signs of R's diagonal fixed (Mezzadri 2007), i.e. the
    first k columns of a Haar-random h×h orthogonal matrix — Theorem 1's initialisation
    (Esser et al. 2024). Chapter ``book/esser-collapse.py``.
    """
    shape = tuple(int(s) for s in shape)
    if len(shape) < 2 or any(s < 1 for s in shape):
        raise ParameterError(f"shape={shape!r} must be (..., h, k) with positive sizes")
    h, k = shape[-2:]
    if h < k:
        raise ParameterError(f"shape={shape!r}: orthonormal columns need h >= k, got h={h} < k={k}")
    g = torch.randn(shape, generator=generator, dtype=dtype)
    q, r = torch.linalg.qr(g)
    signs = torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))
    signs = torch.where(signs == 0, torch.ones_like(signs), signs)
    return q * signs.unsqueeze(-2)


def project_frobenius(W: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """Euclidean projection onto {‖W‖_F ≤ c} (batched over leading dims): rescale if outside.

    Constraint of Proposition 2 (Esser et al. 2024). Chapter ``book/esser-collapse.py``.
    """
    c = positive_float("c", c)
    norm = torch.linalg.matrix_norm(W, ord="fro")
    scale = torch.clamp(c / torch.clamp(norm, min=torch.finfo(W.dtype).tiny), max=1.0)
    return W * scale[..., None, None]


def project_operator(W: torch.Tensor, c: float = 1.0) -> torch.Tensor:
    """Euclidean projection onto {‖W‖₂ ≤ c}: clip the singular values at c (batched).

    Proposition 3, formulation 2 (Esser et al. 2024). Chapter ``book/esser-collapse.py``.
    """
    c = positive_float("c", c)
    U, S, Vh = torch.linalg.svd(W, full_matrices=False)
    return U @ (torch.clamp(S, max=c)[..., None] * Vh)


def project_orthogonal(W: torch.Tensor) -> torch.Tensor:
    """Nearest matrix with orthonormal columns (polar factor UVᵀ of W = USVᵀ), batched.

    Enforces W₁ᵀW₁ = 𝕀_d or W₂ᵀW₂ = 𝕀_z after a gradient step (Esser et al. 2024, Eq. 11 and
    Proposition 3, formulation 4). Needs h ≥ columns and W of full column rank. Chapters
    ``book/esser-collapse.py``, ``book/esser-grassmann.py``.
    """
    if W.dim() < 2 or W.shape[-2] < W.shape[-1]:
        raise ParameterError(f"W has shape {tuple(W.shape)}; orthonormal columns need rows >= columns")
    U, _, Vh = torch.linalg.svd(W, full_matrices=False)
    return U @ Vh


def project_product_operator(
    W1: torch.Tensor, W2: torch.Tensor, c: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Enforce ‖W₂ᵀW₁‖₂ ≤ c (Proposition 3, formulation 3) by a balanced shrink of both factors
    along the singular directions of M = W₂ᵀW₁ whose singular value exceeds c.

    With M = U S Vᵀ (thin SVD) and fᵢ = min(1, c/sᵢ), W₁ ← W₁(𝕀 + V(√f − 1)Vᵀ) and
    W₂ ← W₂(𝕀 + U(√f − 1)Uᵀ) give W₂ᵀW₁ = U min(S, c) Vᵀ exactly and leave feasible weights
    unchanged. Shrinking both factors by the same √f keeps them balanced (shrinking W₁ alone lets
    W₂ grow and W₁ vanish, which stalls gradient descent). A feasible retraction, not the
    Euclidean projection onto the (non-convex) set. Chapter ``book/esser-collapse.py``.
    """
    c = positive_float("c", c)
    M = W2.transpose(-1, -2) @ W1
    U, S, Vh = torch.linalg.svd(M, full_matrices=False)
    root = torch.sqrt(torch.clamp(c / torch.clamp(S, min=torch.finfo(S.dtype).tiny), max=1.0)) - 1.0
    new1 = W1 + (W1 @ Vh.transpose(-1, -2)) @ (root[..., None] * Vh)
    new2 = W2 + (W2 @ U) @ (root[..., None] * U.transpose(-1, -2))
    return new1, new2


def project(
    W1: torch.Tensor, W2: torch.Tensor, constraint: str, *, c1: float = 1.0, c2: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Project (W₁, W₂) back onto the feasible set of ``constraint`` (see :data:`CONSTRAINTS`).

    The projection step of Esser et al. 2024, Eq. (11), for the constraints of Propositions 2-3
    (chapters ``book/esser-collapse.py``, ``book/esser-grassmann.py``).

    ``"none"`` and ``"scaled"`` leave the weights unchanged; ``c1``, ``c2`` are the radii of the
    Frobenius and operator-norm balls (the product constraint uses ``c1``).
    """
    choice("constraint", constraint, CONSTRAINTS)
    if constraint in ("none", "scaled"):
        return W1, W2
    if constraint == "frobenius":
        return project_frobenius(W1, c1), project_frobenius(W2, c2)
    if constraint == "operator":
        return project_operator(W1, c1), project_operator(W2, c2)
    if constraint == "product_operator":
        return project_product_operator(W1, W2, c1)
    return project_orthogonal(W1), project_orthogonal(W2)


def scaled_loss(W1: torch.Tensor, W2: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Scaled loss Tr(W₂ᵀW₁CW₁ᵀW₂)/(‖W₁‖₂²‖W₂‖₂²) (Esser et al. 2024, Proposition 3, formulation 1).

    Scale-invariant in W₁ and W₂; batched over leading dims. Chapter ``book/esser-collapse.py``.
    """

    n1 = torch.linalg.matrix_norm(W1, ord=2)
    n2 = torch.linalg.matrix_norm(W2, ord=2)
    return trace_loss(W1, W2, C) / (n1**2 * n2**2)


def grassmann_gradient(W: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
    """(𝕀 − WWᵀ)∇: the gradient projected as in the proof of Theorem 2 (Edelman et al. 1998).

    Batched over leading dims. Chapter ``book/esser-grassmann.py``.
    """
    return grad - W @ (W.transpose(-1, -2) @ grad)


@dataclass
class Trajectory:
    """What :func:`gradient_descent` records.

    Attributes
    ----------
    steps:
        Step indices of the records, shape (T,).
    loss:
        Objective per record and initialisation, shape (T, S).
    observed:
        ``observe(params)`` per record, stacked on a new first axis (or ``None``).
    params:
        The final parameters (a diverged initialisation keeps its last finite values).
    diverged_at:
        Step at which an initialisation exceeded ``max_norm`` (−1: never), shape (S,).
    """

    steps: np.ndarray
    loss: np.ndarray
    observed: torch.Tensor | None
    params: tuple[torch.Tensor, ...]
    diverged_at: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))

    @property
    def diverged(self) -> np.ndarray:
        """Boolean mask (S,): initialisations whose parameter norm exceeded ``max_norm``."""
        return self.diverged_at >= 0


def gradient_descent(
    loss_fn: Callable[..., torch.Tensor],
    params: Sequence[torch.Tensor],
    *,
    lr: float,
    steps: int,
    project_fn: Callable[..., tuple[torch.Tensor, ...]] | None = None,
    grad_fn: Callable[..., tuple[torch.Tensor, ...]] | None = None,
    observe: Callable[..., torch.Tensor] | None = None,
    record_every: int = 1,
    max_norm: float = 1e8,
    progress: bool = False,
) -> Trajectory:
    """Gradient descent θ ← Π(θ − η∇L(θ)) on a batch of S independent initialisations.

    Parameters
    ----------
    loss_fn:
        ``loss_fn(*params)`` → losses of shape (S,): one independent objective per
        initialisation (the leading dimension of every parameter), so the gradient of their
        sum is the per-initialisation gradient.
    params:
        Initial parameters, each with leading dimension S.
    lr, steps:
        Learning rate η > 0 and number of steps.
    project_fn:
        ``project_fn(*params)`` → projected parameters, applied after every step (Eq. 11).
    grad_fn:
        ``grad_fn(params, grads)`` → modified gradients (e.g. :func:`grassmann_gradient`).
    observe:
        ``observe(*params)`` → a tensor recorded with the loss every ``record_every`` steps.
    max_norm:
        An initialisation whose largest parameter entry exceeds this in absolute value is
        *diverged*: it is frozen from then on and its step is reported in ``diverged_at``.
    progress:
        Show a tqdm progress bar.

    Raises
    ------
    ValueError
        On bad arguments, or when the loss or a parameter becomes NaN/inf (names step and
        initialisation) — divergence below ``max_norm`` never produces NaN in float64.

    Chapters ``book/esser-collapse.py`` and ``book/esser-grassmann.py``.
    """
    lr = positive_float("lr", lr)
    steps = nonneg_int("steps", steps)
    record_every = positive_int("record_every", record_every)
    max_norm = positive_float("max_norm", max_norm)
    params = [p.detach().clone() for p in params]
    if not params:
        raise ParameterError("params=[] is not allowed; pass at least one tensor")
    S = params[0].shape[0]
    if any(p.dim() < 1 or p.shape[0] != S for p in params):
        raise ParameterError(
            f"params must share the leading (initialisation) dimension S={S}; got {[tuple(p.shape) for p in params]}"
        )
    active = torch.ones(S, dtype=torch.bool)
    diverged_at = np.full(S, -1, dtype=int)
    rec_steps, rec_loss, rec_obs = [], [], []

    def record(t: int, loss: torch.Tensor) -> None:
        rec_steps.append(t)
        rec_loss.append(loss.detach().cpu().numpy().copy())
        if observe is not None:
            with torch.no_grad():
                rec_obs.append(observe(*params).detach().clone())

    iterator = range(steps + 1)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc="gradient descent", leave=False)
    for t in iterator:
        leaves = [p.requires_grad_(True) for p in params]
        loss = loss_fn(*leaves)
        if loss.shape != (S,):
            raise ParameterError(
                f"loss_fn returned shape {tuple(loss.shape)}; expected ({S},), one loss per initialisation"
            )
        bad = ~torch.isfinite(loss.detach()) & active
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0])
            raise NonFiniteError(
                f"loss became {float(loss.detach()[i])} at step {t} for initialisation {i}; lower lr={lr} or max_norm={max_norm}"
            )
        if t % record_every == 0 or t == steps:
            record(t, loss)
        if t == steps:
            break
        grads = torch.autograd.grad(loss.sum(), leaves)
        with torch.no_grad():
            if grad_fn is not None:
                grads = grad_fn(tuple(params), tuple(grads))
            new = [p - lr * g for p, g in zip(params, grads)]
            if project_fn is not None:
                new = list(project_fn(*new))
            mask_shape = lambda p: (S,) + (1,) * (p.dim() - 1)  # noqa: E731
            new = [torch.where(active.view(mask_shape(p)), q, p) for p, q in zip(params, new)]
            for i_p, q in enumerate(new):
                if not bool(torch.isfinite(q).all()):
                    i = int(torch.nonzero(~torch.isfinite(q).reshape(S, -1).all(dim=1))[0])
                    raise NonFiniteError(
                        f"parameter {i_p} became non-finite at step {t + 1} for initialisation {i}; "
                        f"lower lr={lr} or max_norm={max_norm}"
                    )
            big = torch.stack([q.abs().reshape(S, -1).amax(dim=1) for q in new]).amax(dim=0)
            newly = active & (big > max_norm)
            diverged_at[newly.numpy()] = t + 1
            active = active & ~newly
            params = [q.detach() for q in new]
    return Trajectory(
        steps=np.asarray(rec_steps),
        loss=np.stack(rec_loss),
        observed=torch.stack(rec_obs) if rec_obs else None,
        params=tuple(p.detach() for p in params),
        diverged_at=diverged_at,
    )


def projected_gradient_descent(
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    W1: torch.Tensor,
    W2: torch.Tensor,
    *,
    constraint: str,
    lr: float,
    steps: int,
    c1: float = 1.0,
    c2: float = 1.0,
    gradient: str = "euclidean",
    observe: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
    record_every: int = 1,
    max_norm: float = 1e8,
    progress: bool = False,
) -> Trajectory:
    """Train (W₁, W₂) of shapes (S, h, d), (S, h, z) under ``constraint`` (Esser et al. 2024, Eq. 11).

    ``loss_fn(W1, W2)`` returns the S losses (e.g. ``lambda a, b: trace_loss(a, b, C)``); for
    ``constraint="scaled"`` the objective is divided by ‖W₁‖₂²‖W₂‖₂² (Proposition 3 (1)), and
    nothing is projected. ``gradient="grassmann"`` (orthogonal constraint only) replaces each
    gradient by (𝕀 − WWᵀ)∇ before the step and the projection, the flow of Theorem 2's proof.
    See :func:`gradient_descent` for the other arguments and the returned :class:`Trajectory`.
    Chapters ``book/esser-collapse.py``, ``book/esser-grassmann.py``.
    """
    choice("constraint", constraint, CONSTRAINTS)
    choice("gradient", gradient, GRADIENTS)
    if gradient == "grassmann" and constraint != "orthogonal":
        raise ParameterError(
            f"gradient='grassmann' needs constraint='orthogonal', got constraint={constraint!r}"
        )
    if W1.dim() != 3 or W2.dim() != 3 or W1.shape[:2] != W2.shape[:2]:
        raise ParameterError(f"W1 {tuple(W1.shape)} and W2 {tuple(W2.shape)} must be (S, h, d) and (S, h, z)")
    if constraint == "orthogonal" and (W1.shape[1] < W1.shape[2] or W2.shape[1] < W2.shape[2]):
        raise ParameterError(
            f"constraint='orthogonal' needs h >= d and h >= z; got h={W1.shape[1]}, d={W1.shape[2]}, z={W2.shape[2]}"
        )
    objective = loss_fn
    if constraint == "scaled":

        def objective(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            n1 = torch.linalg.matrix_norm(a, ord=2)
            n2 = torch.linalg.matrix_norm(b, ord=2)
            return loss_fn(a, b) / (n1**2 * n2**2)

    W1, W2 = project(W1, W2, constraint, c1=c1, c2=c2)
    grad_fn = None
    if gradient == "grassmann":
        grad_fn = lambda ps, gs: tuple(grassmann_gradient(p, g) for p, g in zip(ps, gs))  # noqa: E731
    return gradient_descent(
        objective,
        (W1, W2),
        lr=lr,
        steps=steps,
        project_fn=lambda a, b: project(a, b, constraint, c1=c1, c2=c2),
        grad_fn=grad_fn,
        observe=observe,
        record_every=record_every,
        max_norm=max_norm,
        progress=progress,
    )
