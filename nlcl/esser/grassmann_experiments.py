"""The experiments of ``book/esser-grassmann.py``: Fig. 3, Theorem 3 and Fig. 4 of Esser et al. 2024.

Each function is one step of the chapter, moved here unchanged (same operations, same order, same
random draws) so that the chapter reads like the paper:

* :func:`compare_flows` — Fig. 3 at one width: projected gradient descent (Eq. 11, polar
  projection, and the Grassmann gradient) against the discretised ODE (Eq. 12), the Stiefel ODE,
  ``solve_ivp`` on Eq. 9 and Eq. 12 with η/10 (Richardson's estimate of Euler's error), and
  :func:`eta_limit` — the same comparison with η/10, whether Eq. 11 approaches Eq. 9 as η → 0;
* :func:`euler_step_limit` and :func:`check_euler_step` — the largest η at which Eq. 12 can
  converge to the limit of Eq. 9, and the chapter's stop when ``lr`` is above it;
* :func:`theorem3_spectra` and :func:`theorem3_diagnostics` — the two spectra of Theorem 3 and
  what Eq. 9 allows at t = 50 and reaches at t = 500 (:func:`~nlcl.esser.grassmann.theorem3_bounds`);
* :func:`svm_accuracy`, :func:`train_fig4_width`, :func:`gd_step_timer`, :func:`ode_step_timer` —
  Fig. 4: downstream accuracy of the two embeddings and the callables whose time per step is
  measured.

The plotting helpers of the chapter are in :mod:`nlcl.esser.grassmann_plots`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.model_selection import cross_val_score
from sklearn.svm import LinearSVC

from nlcl.core.validate import ParameterError, positive_float, positive_int
from nlcl.esser.collapse import init_two_layer
from nlcl.esser.constraints import Trajectory, projected_gradient_descent
from nlcl.esser.grassmann import (
    _lam,
    alignment,
    discretized_dynamics,
    embed,
    integrate_output_ode,
    output_loss,
    outputs_on_eigenvectors,
    theorem3_bounds,
)
from nlcl.esser.losses import trace_loss

__all__ = [
    "check_euler_step",
    "compare_flows",
    "euler_step_limit",
    "eta_limit",
    "gd_step_timer",
    "ode_step_timer",
    "svm_accuracy",
    "theorem3_diagnostics",
    "theorem3_spectra",
    "train_fig4_width",
]


def euler_step_limit(lam: Any, z: int) -> float:
    """The largest η at which Eq. 12 can converge to the limit of Eq. 9 (Esser et al. 2024, Eqs. 9, 12).

    Linearise Eq. 9 at its limit q = E, the eigenvectors e₁ … e_k of the k negative eigenvalues
    among the z smallest (Theorem 3 for z = 1), with δ = E a + F b (F the other eigenvectors): the
    skew part of a is a rotation (rate 0), the symmetric part S = a + aᵀ follows
    Ṡ_ik = 4(λ_i + λ_k) S_ik, and b_ji follows ḃ_ji = −2(λ_j − λ_i) b_ji (i ≤ k < j). Euler's
    iteration multiplies each mode by 1 + η·rate, so it stays bounded near the limit only if
    η·|rate| ≤ 2: η < min(1/(4|λ₁|), 1/(λ_d − λ₁)) (the second when k < d). If no eigenvalue among
    the z smallest is negative the limit is q = 0, where q̊ = −4Λq, and the bound is 1/(2λ_max).
    ``lam`` ascending (d,); returns the bound (∞ if no mode constrains it). A necessary condition:
    a run can still diverge in its transient below it.
    """
    lam = _lam(lam)
    z = positive_int("z", z)
    neg = lam[:z][lam[:z] < 0]
    bounds = [float("inf")]
    if neg.numel():
        lam1 = float(lam[0])
        bounds.append(1 / (4 * abs(lam1)))
        if len(neg) < lam.numel() and float(lam[-1]) > lam1:
            bounds.append(1 / (float(lam[-1]) - lam1))
    elif float(lam[-1]) > 0:
        bounds.append(1 / (2 * float(lam[-1])))
    return min(bounds)


def check_euler_step(lr: float, lam: Any, z: int, *, data: str) -> float:
    """Stop with a clear message when η = ``lr`` is too large for Eq. 12 on this spectrum.

    Raises :class:`~nlcl.core.validate.ParameterError` naming ``lr``, the bound of
    :func:`euler_step_limit` and ``data`` (which C, e.g. "the MNIST C of Fig. 4") when
    ``lr`` ≥ the bound: Euler's iteration of Eq. 9 (the paper's Eq. 12) then cannot converge to the
    limit it discretises (its iterates oscillate, or grow until they are no longer finite).
    Returns the bound.
    """
    lr = positive_float("lr", lr)
    bound = euler_step_limit(lam, z)
    if lr >= bound:
        raise ParameterError(
            f"lr={lr!r} is too large for Eq. 12 on {data}: Euler's iteration of Eq. 9 is stable at the "
            f"limit it discretises only for lr < {bound:.4g} (nlcl.esser.grassmann_experiments.euler_step_limit); "
            f"with lr={lr!r} the discretised outputs do not converge to it (they oscillate or diverge)"
        )
    return bound


def _distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """‖a − b‖_F over the last two dimensions (outputs q of shape (..., d, z))."""
    return torch.linalg.matrix_norm(a - b)


def compare_flows(
    h: int,
    C: torch.Tensor,
    lam: torch.Tensor,
    V: torch.Tensor,
    *,
    n_init: int,
    z: int,
    lr: float,
    steps: int,
    record_every: int,
    generator: torch.Generator,
) -> dict[str, Any]:
    """Fig. 3 of Esser et al. 2024 at hidden width ``h``: GD (Eq. 11) against the ODE (Eqs. 9, 12).

    Draws ``n_init`` orthogonal initialisations (h × 2 and h × z, from ``generator``), runs projected
    gradient descent on Tr(W₂ᵀW₁CW₁ᵀW₂) with the Euclidean gradient and polar projection (Eq. 11)
    and with the Grassmann gradient, iterates Eq. 12 (Grassmann and Stiefel metrics) from
    q₀ = VᵀW₁ᵀW₂, integrates Eq. 9 with ``solve_ivp`` at the recorded times and iterates Eq. 12 with
    η/10 for 10× the steps. Returns the gaps the chapter's claims measure (largest over
    initialisations and recorded steps, Frobenius norm of the outputs) under ``gaps``:

    The paper's comparison, (11) against (12): ``loss_gap`` |L_GD − L_(12)| / |λ₁| at the last step;
    ``traj_gap`` ‖q_GD − q_(12)‖; ``final_gap`` ‖q_GD − q_(12)‖ at the last step. The flows
    behind it: ``stiefel_gap``
    ‖q_GD − q_Stiefel‖ (polar-projected GD against the Stiefel ODE); ``variant_gap``
    ‖q_GD(Grassmann gradient) − q_(12)‖ (the book's variant, not the paper's method); ``flows_gap``
    ‖q_Stiefel − q_(12)‖; ``solver_gap`` ‖q_(12) − q_solve_ivp‖; ``fine_gap`` the same with η/10;
    ``richardson`` (10/9)·‖q_(12),η − q_(12),η/10‖ (Euler's error at η, without the solver). Also
    the curves of the figure: ``t``, ``gd`` (the Euclidean run), ``q_ode``, ``loss_ode``, and the
    initial weights ``init`` = (W₁, W₂).
    """
    W1, W2 = init_two_layer(n_init, h, 2, z, generator=generator)
    q0 = outputs_on_eigenvectors(W1, W2, V)

    def observe(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return outputs_on_eigenvectors(a, b, V)

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return trace_loss(a, b, C)

    gd = {
        g: projected_gradient_descent(
            loss,
            W1,
            W2,
            constraint="orthogonal",
            lr=lr,
            steps=steps,
            gradient=g,
            record_every=record_every,
            observe=observe,
        )
        for g in ("euclidean", "grassmann")
    }
    t_rec, q_ode = discretized_dynamics(q0, lam, lr=lr, steps=steps, record_every=record_every)
    _, q_stf = discretized_dynamics(q0, lam, lr=lr, steps=steps, record_every=record_every, metric="stiefel")
    q_ivp = integrate_output_ode(q0, lam, t_rec * lr)
    if not np.array_equal(t_rec, gd["euclidean"].steps):  # pragma: no cover - both record alike
        raise RuntimeError("gradient descent and Eq. 12 recorded different steps")
    gaps: dict[str, float] = {
        "loss_gap": float(
            np.abs(gd["euclidean"].loss[-1] - output_loss(q_ode[-1], lam).numpy()).max() / abs(float(lam[0]))
        ),
        "traj_gap": float(_distance(gd["euclidean"].observed, q_ode).max()),
        "final_gap": float(_distance(gd["euclidean"].observed[-1], q_ode[-1]).max()),
        "stiefel_gap": float(_distance(gd["euclidean"].observed, q_stf).max()),
        "variant_gap": float(_distance(gd["grassmann"].observed, q_ode).max()),
        "flows_gap": float(_distance(q_stf, q_ode).max()),
        "solver_gap": float(_distance(q_ode, q_ivp).max()),
    }
    _, q_fine = discretized_dynamics(q0, lam, lr=lr / 10, steps=10 * steps, record_every=10 * record_every)
    gaps["fine_gap"] = float(_distance(q_fine, q_ivp).max())
    gaps["richardson"] = float(_distance(q_ode, q_fine).max()) * 10 / 9
    return dict(
        gaps=gaps,
        t=t_rec,
        gd=gd["euclidean"],
        q_ode=q_ode,
        loss_ode=output_loss(q_ode, lam).numpy(),
        init=(W1, W2),
    )


def eta_limit(
    W1: torch.Tensor,
    W2: torch.Tensor,
    C: torch.Tensor,
    lam: torch.Tensor,
    V: torch.Tensor,
    *,
    lr: float,
    steps: int,
    record_every: int,
) -> dict[str, float]:
    """The comparison of Fig. 3 as η → 0: Eqs. 11 and 12 at η/10, 10× the steps, from (W₁, W₂).

    If polar-projected gradient descent (Eq. 11) followed the flow of Eq. 9 as Eq. 12 does, both
    would be O(η) from it and their distance would shrink tenfold with η (Esser et al. 2024,
    Theorem 2, Fig. 3). Runs Eq. 11 (Euclidean gradient, polar projection), Eq. 12 and the Stiefel
    ODE's Euler iteration (:func:`~nlcl.esser.grassmann.output_ode_rhs`, ``metric="stiefel"``) with
    η/10 for 10·``steps`` steps, recorded every 10·``record_every`` steps (the times of
    :func:`compare_flows`), and returns ``gd_gap`` max ‖q_GD − q_(12)‖ and ``flows_gap``
    max ‖q_Stiefel − q_(12)‖ over initialisations and recorded times (no gradient descent in the
    second).
    """
    fine_lr, fine_steps, fine_rec = lr / 10, 10 * steps, 10 * record_every
    q0 = outputs_on_eigenvectors(W1, W2, V)
    gd = projected_gradient_descent(
        lambda a, b: trace_loss(a, b, C),
        W1,
        W2,
        constraint="orthogonal",
        lr=fine_lr,
        steps=fine_steps,
        record_every=fine_rec,
        observe=lambda a, b: outputs_on_eigenvectors(a, b, V),
    )
    _, q_ode = discretized_dynamics(q0, lam, lr=fine_lr, steps=fine_steps, record_every=fine_rec)
    _, q_stf = discretized_dynamics(
        q0, lam, lr=fine_lr, steps=fine_steps, record_every=fine_rec, metric="stiefel"
    )
    return {
        "gd_gap": float(_distance(gd.observed, q_ode).max()),
        "flows_gap": float(_distance(q_stf, q_ode).max()),
    }


def theorem3_spectra(d: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """The two spectra of the Theorem 3 experiment (Esser et al. 2024, Theorem 3), sorted.

    (A) ``"A: Λ ≻ 0"``: uniform in [0.5, 2]; (B) ``"B: λ₁ < 0"``: standard Gaussian, shifted so that
    the smallest eigenvalue is −0.5 when no draw is negative. Draws A, then B, from ``generator``.
    """
    spectra = {
        "A: Λ ≻ 0": torch.sort(0.5 + 1.5 * torch.rand(d, generator=generator)).values,
        "B: λ₁ < 0": torch.sort(torch.randn(d, generator=generator)).values,
    }
    if spectra["B: λ₁ < 0"][0] >= 0:
        spectra["B: λ₁ < 0"] = spectra["B: λ₁ < 0"] - spectra["B: λ₁ < 0"][0] - 0.5
    return spectra


def theorem3_diagnostics(q0: torch.Tensor, lam: torch.Tensor, t_end: float) -> dict[str, float]:
    """What Eq. 9 (z = 1) says about min(|cos(q, e₁)|, ‖q‖) before the claim reads it at ``t_end``.

    ``bound``: the largest value Eq. 9 allows at ``t_end`` from these q(0) and Λ, worst
    initialisation (the upper bounds of :func:`~nlcl.esser.grassmann.theorem3_bounds`);
    ``long``: the value reached at ``10 · t_end`` by ``solve_ivp`` (worst initialisation).
    """
    d = lam.shape[-1]
    e1 = torch.zeros(d, dtype=q0.dtype)
    e1[0] = 1.0
    bounds = theorem3_bounds(q0, lam, t_end)
    end_long = integrate_output_ode(q0, lam, [0.0, 10 * t_end])[-1]
    return {
        "bound": float(torch.minimum(bounds["cos_upper"], bounds["norm_upper"]).min()),
        "long": float(torch.minimum(alignment(end_long, e1), torch.linalg.matrix_norm(end_long)).min()),
    }


def svm_accuracy(emb: torch.Tensor, labels: np.ndarray, cv: Any) -> float:
    """Cross-validated accuracy of a linear SVM on a standardised embedding (Esser et al. 2024,
    Fig. 4, right): ``LinearSVC(max_iter=20_000)``, mean over the folds of ``cv``."""
    emb = emb.numpy()
    emb = (emb - emb.mean(0)) / emb.std(0).clip(1e-12)
    return float(cross_val_score(LinearSVC(max_iter=20_000), emb, labels, cv=cv).mean())


def gd_step_timer(
    W1: torch.Tensor, W2: torch.Tensor, C: torch.Tensor, *, lr: float, steps: int
) -> Callable[[], Trajectory]:
    """A callable that runs ``steps`` steps of projected gradient descent (Esser et al. 2024,
    Eq. 11, orthogonal constraint) on Tr(W₂ᵀW₁CW₁ᵀW₂) from (W₁, W₂), recording the last: timed."""

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return trace_loss(a, b, C)

    def run() -> Trajectory:
        return projected_gradient_descent(
            loss, W1, W2, constraint="orthogonal", lr=lr, steps=steps, record_every=steps
        )

    return run


def ode_step_timer(
    q0: torch.Tensor, lam: torch.Tensor, *, lr: float, steps: int
) -> Callable[[], tuple[np.ndarray, torch.Tensor]]:
    """A callable that iterates Eq. 12 (Esser et al. 2024) ``steps`` times from ``q0``: timed."""

    def run() -> tuple[np.ndarray, torch.Tensor]:
        return discretized_dynamics(q0, lam, lr=lr, steps=steps, record_every=steps)

    return run


def train_fig4_width(
    h: int,
    C: torch.Tensor,
    lam: torch.Tensor,
    V: torch.Tensor,
    x: torch.Tensor,
    labels: np.ndarray,
    cv: Any,
    *,
    d: int,
    z: int,
    lr: float,
    steps: int,
    generator: torch.Generator,
) -> tuple[dict[str, float], dict[str, Callable[[], Any]]]:
    """Fig. 4 of Esser et al. 2024 at hidden width ``h``: train both ways, embed, classify.

    Draws one orthogonal initialisation (h × d, h × z) from ``generator``, runs ``steps`` steps of
    projected gradient descent (Eq. 11) and of Eq. 12 from the same q₀, and returns the row
    ``{h, acc_gd, acc_ode, loss_gd, loss_ode}`` (accuracies of :func:`svm_accuracy` on W₂ᵀW₁x and
    on qᵀVᵀx, Eq. 10) together with the 10-step callables ``{"gd": ..., "ode": ...}`` to time.
    """
    W1, W2 = init_two_layer(1, h, d, z, generator=generator)
    q0 = outputs_on_eigenvectors(W1, W2, V)
    timers = {
        "gd": gd_step_timer(W1, W2, C, lr=lr, steps=10),
        "ode": ode_step_timer(q0, lam, lr=lr, steps=10),
    }

    def loss(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return trace_loss(a, b, C)

    gd = projected_gradient_descent(
        loss, W1, W2, constraint="orthogonal", lr=lr, steps=steps, record_every=steps
    )
    _, q_path = discretized_dynamics(q0, lam, lr=lr, steps=steps, record_every=steps)
    A, B = gd.params
    row = dict(
        h=h,
        acc_gd=svm_accuracy(x @ (B[0].T @ A[0]).T, labels, cv),
        acc_ode=svm_accuracy(embed(x, q_path[-1, 0], V), labels, cv),
        loss_gd=float(gd.loss[-1, 0]),
        loss_ode=float(output_loss(q_path[-1, 0], lam)),
    )
    return row, timers
