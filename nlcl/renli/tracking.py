"""Finite-width learners vs their infinite-width limit (Ren & Li 2023, Sec. 5.2, Lemmas 5.1-5.3).

**Reconstruction.** Ren & Li's formulas are lost (``shared/papers/ren-li-setup.md``); the model is
the reconstruction of :mod:`nlcl.renli.model`.  Here the learners are trained on the *population*
loss (the paper's proofs use gradient flow on the population loss, their footnote 4), which we
compute exactly:

* the un-normalised outputs are W_A x_A = U_A z + V_A ξ_A with [U_A V_A] = W_A [M_A H_A]; stack
  the columns of both modalities, scaled by the width m, as X = [W_A P_A, W_B P_B]/√m
  (P = [M H], K = r + r_ξ columns per modality), and let G = XᵀX (2K × 2K);
* with the population normalisation s_A² = tr G_AA, the non-contrastive loss is
  −Σ_{i≤r} G_AB[i, i]/(s_A s_B), and the negative-pair term of the contrastive loss is exact
  because z and ξ are uniform signs: log E_{x_B'} exp(β⟨f_A, f_B(x_B')⟩) = Σ_k log cosh(β (wᵀG̃_AB)_k)
  with w = (z, ξ_A) and G̃_AB = G_AB/(s_A s_B); the outer expectation enumerates the 2^K sign
  vectors w (:func:`population_loss`).

Gradient descent on W with the step rescaled by m (the paper rescales the gradients by the width
"so that the output does not shrink") moves X by −η (∂L/∂X) D with D = diag(PᵀP) = (σ², ν²), and
because ∂L/∂X = X(S + Sᵀ) with S = ∂L/∂G, the Gram matrix obeys the *closed* recursion

    G ← Tᵀ G T,   T = I − η (S + Sᵀ) D            (:func:`gram_step`).

The width enters only through the initial G: for i.i.d. N(0, 1/d) weights G(0) = D/d + O(m^{-1/2})
(:func:`initial_gram`), and its m → ∞ limit D/d (:func:`infinite_width_gram`: columns orthogonal,
the paper's Eq. 7) starts the infinite-width dynamics.  :func:`train_population` is the finite-width
learner itself (gradient descent on W); tests check that it follows :func:`gram_trajectory`
exactly.  Explained in the chapter ``book/renli-simulation.py`` (section "Finite width tracks
infinite width").

**Finite batches, and why width still enters only through G(0).** The closure holds for *any*
loss that depends on the outputs only through their inner products, because then it depends on
W only through G: a minibatch loss with the batch normalisation of Eq. 2 is a function of G and of
the batch's latent signs (:func:`nlcl.renli.minibatch.batch_loss`), and gradient descent on W is
again G ← TᵀGT with S = ∂L_batch/∂G (:func:`nlcl.renli.minibatch.gram_batch_trajectory`).  So in this linear model no loss, batched or
population, lets the width act after initialisation: a width-m run is the infinite-width map started
from a perturbed G(0).  What finite batches add is a second, width-independent error (the batch
noise), and what the dynamics add is the amplification of the initial perturbation, which
:func:`nlcl.renli.minibatch.linear_response` propagates to first order (the Taylor expansion around the infinite-width
trajectory of Ren & Li, Sec. 5.2) together with the discrete Gronwall factor Π_s ‖J_s‖₂ of the
step's Jacobians J_s (the amplification a Gronwall argument such as their Lemma 5.2 bounds).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    nonneg_float,
    nonneg_int,
    positive_float,
    positive_int,
)
from nlcl.renli.model import MultimodalData, make_data

__all__ = [
    "MAX_LATENT",
    "check_gram",
    "stage_schedule",
    "sign_table",
    "population_loss",
    "input_scales",
    "initial_gram",
    "infinite_width_gram",
    "gram_step",
    "gram_update",
    "iterate_gram",
    "gram_trajectory",
    "train_population",
    "normalized_gram",
    "gram_condition_number",
    "gram_noise_to_signal",
    "tracking_error",
    "stationarity",
    "distinct_data_seeds",
    "eq7_mask",
    "eq7_deviation",
    "check_descent",
]

#: Largest r + r_ξ for which :func:`population_loss` enumerates the 2^(r + r_ξ) sign vectors.
MAX_LATENT = 14


def sign_table(k: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """All 2^k vectors of {±1}^k, (2^k, k): the uniform latent (z, ξ) of Ren & Li, Eq. 1."""
    k = positive_int("k", k)
    if k > MAX_LATENT:
        raise ParameterError(
            f"k={k} sign coordinates would enumerate 2^{k} vectors; allowed: k <= {MAX_LATENT}"
        )
    return torch.tensor(list(itertools.product([-1.0, 1.0], repeat=k)), dtype=dtype)


def _log_cosh(y: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.softplus(2 * y) - y - math.log(2.0)


def check_gram(G: torch.Tensor, r: int, r_xi: int) -> int:
    """K = r + r_ξ after checking that G has shape (..., 2K, 2K); ParameterError naming the shape."""
    K = r + r_xi
    if G.dim() < 2 or G.shape[-2:] != (2 * K, 2 * K):
        raise ParameterError(
            f"G has shape {tuple(G.shape)}; expected (..., {2 * K}, {2 * K}) for r={r}, r_xi={r_xi}"
        )
    return K


def population_loss(
    G: torch.Tensor, r: int, r_xi: int, lam: float, beta: float, signs: torch.Tensor | None = None
) -> torch.Tensor:
    """The reconstructed contrastive loss L_C (λ > 0) or L_NC (λ = 0) in the population, from G.

    G (..., 2K, 2K) is the Gram matrix of [W_A M_A, W_A H_A, W_B M_B, W_B H_B] (any common scale).
    L_NC = −tr(Ũ_AᵀŨ_B); L_C = L_NC + (λ/β)·½[E_{x_A} log E_{x_B'} e^{β⟨f_A, f_B'⟩} + (A ↔ B)],
    each inner expectation a product of cosh over the 2K latent signs (Ren & Li, Eqs. 3-4,
    population version of :func:`nlcl.renli.losses.contrastive_loss`).  ``signs`` may pass a cached
    :func:`sign_table` (K).  Returns (...).  Chapter ``book/renli-simulation.py``.
    """
    r, r_xi = positive_int("r", r), positive_int("r_xi", r_xi)
    K = check_gram(G, r, r_xi)
    lam = nonneg_float("lam", lam)
    s_a = torch.diagonal(G[..., :K, :K], dim1=-2, dim2=-1).sum(-1).sqrt()
    s_b = torch.diagonal(G[..., K:, K:], dim1=-2, dim2=-1).sum(-1).sqrt()
    G_ab = G[..., :K, K:] / (s_a * s_b)[..., None, None]
    loss = -torch.diagonal(G_ab[..., :r, :r], dim1=-2, dim2=-1).sum(-1)
    if lam == 0:
        return loss
    beta = positive_float("beta", beta)
    w = sign_table(K, G.dtype) if signs is None else signs.to(G.dtype)
    rows = _log_cosh(beta * (w @ G_ab)).sum(-1).mean(-1)  # E_{x_A} log E_{x_B'}
    cols = _log_cosh(beta * (w @ G_ab.transpose(-1, -2))).sum(-1).mean(-1)  # E_{x_B} log E_{x_A'}
    return loss + lam / beta * 0.5 * (rows + cols)


def input_scales(data: MultimodalData) -> torch.Tensor:
    """D = diag(PᵀP) per run, (R, 2K): (σ_A², ν²·1, σ_B², ν²·1), the preconditioner of :func:`gram_step`.

    Needs signal and noise columns orthogonal, as :func:`nlcl.renli.model.make_data` builds them.
    Chapter ``book/renli-simulation.py``.
    """
    blocks = []
    for M, H in ((data.M_A, data.H_A), (data.M_B, data.H_B)):
        P = torch.cat([M, H], dim=-1).to(torch.float64)
        blocks.append(torch.diagonal(P.transpose(-1, -2) @ P, dim1=-2, dim2=-1))
    return torch.cat(blocks, dim=-1)


def _stacked_inputs(data: MultimodalData) -> tuple[torch.Tensor, torch.Tensor]:
    P_a = torch.cat([data.M_A, data.H_A], dim=-1).to(torch.float64)
    P_b = torch.cat([data.M_B, data.H_B], dim=-1).to(torch.float64)
    return P_a, P_b


def initial_gram(
    data: MultimodalData, width: int, *, seed_offset: int = 0
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """G(0) (R, 2K, 2K) of width-``width`` learners with i.i.d. N(0, 1/d) weights, and the weights.

    Run i draws W_A, W_B (m, d) from a generator seeded with ``data.seeds[i] + seed_offset``
    (Ren & Li, Sec. 3 initialisation); X = [W_A P_A, W_B P_B]/√m.  Returns (G, (W_A, W_B)) with the
    weights (R, m, d) for :func:`train_population`.  Chapter ``book/renli-simulation.py``.
    """
    m = positive_int("width", width)
    P_a, P_b = _stacked_inputs(data)
    ws = []
    for seed in data.seeds:
        g = torch.Generator().manual_seed(int(seed) + int(seed_offset))
        ws.append(torch.randn(2, m, data.d, generator=g, dtype=torch.float64) / math.sqrt(data.d))
    W = torch.stack(ws)
    W_a, W_b = W[:, 0], W[:, 1]
    X = torch.cat([W_a @ P_a, W_b @ P_b], dim=-1) / math.sqrt(m)
    return X.transpose(-1, -2) @ X, (W_a, W_b)


def infinite_width_gram(data: MultimodalData) -> torch.Tensor:
    """The m → ∞ limit of :func:`initial_gram`: diag(D)/d (R, 2K, 2K).

    All columns orthogonal, squared norms σ_i²/d and ν²/d: the infinite-width initialisation of
    Ren & Li, Sec. 5.2 (their Eq. 7).  Chapter ``book/renli-simulation.py``.
    """
    return torch.diag_embed(input_scales(data)) / data.d


def gram_step(
    G: torch.Tensor,
    D: torch.Tensor,
    r: int,
    r_xi: int,
    lam: float,
    beta: float,
    lr: float,
    signs: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One gradient-descent step of the width-rescaled learner, in Gram form: (G', loss at G).

    G ← TᵀGT with T = I − η(S + Sᵀ)D, S = ∂L/∂G of :func:`population_loss`: exactly the Gram matrix
    of X − η(∂L/∂X)D (module docstring).  G (R, 2K, 2K), D (R, 2K).  Chapter ``book/renli-simulation.py``.
    """
    lr = positive_float("lr", lr)
    leaf = G.detach().clone().requires_grad_(True)
    loss = population_loss(leaf, r, r_xi, lam, beta, signs)
    (S,) = torch.autograd.grad(loss.sum(), leaf)
    return gram_update(G.detach(), D, S, lr), loss.detach()


def gram_update(G: torch.Tensor, D: torch.Tensor, S: torch.Tensor, lr: float) -> torch.Tensor:
    """The Gram form of one gradient-descent step: TᵀGT with T = I − η(S + Sᵀ)D.

    S = ∂L/∂G for any loss that depends on the weights only through G (the population loss of
    :func:`gram_step`, the minibatch loss of :func:`nlcl.renli.minibatch.batch_loss`); G (..., 2K, 2K),
    D (..., 2K), S like G.  Exactly the Gram matrix of X − η(∂L/∂X)D (module docstring).
    """
    T = torch.eye(G.shape[-1], dtype=G.dtype) - lr * (S + S.transpose(-1, -2)) * D[..., None, :]
    return T.transpose(-1, -2) @ G @ T


def iterate_gram(
    G0: torch.Tensor, step, *, steps1: int, steps2: int, lr: float, record_every: int, setting: str = ""
) -> tuple[np.ndarray, torch.Tensor]:
    """Iterate ``step(G, t) -> G'`` from G0 for ``steps1 + steps2`` steps (Ren & Li, Algorithm 3.1).

    Records G at step 0, every ``record_every`` steps, at the stage boundary ``steps1`` and at the
    end; returns the recorded steps and G (T, ..., 2K, 2K).  Raises NonFiniteError naming the step
    and ``lr`` (after ``setting``, e.g. ``"kappa=16"``, when given) on a non-finite recorded G.
    The loop of :func:`gram_trajectory` and of :func:`nlcl.renli.minibatch.gram_batch_trajectory`.
    """
    G = G0.detach().clone()
    rec_t, rec_g = [0], [G.clone()]
    total = steps1 + steps2
    for t in range(total):
        G = step(G, t)
        if (t + 1) % record_every == 0 or t + 1 in (steps1, total):
            if not bool(torch.isfinite(G).all()):
                where = f"{setting}: " if setting else ""
                raise NonFiniteError(
                    f"{where}the Gram recursion became non-finite at step {t + 1} at lr={lr}: the step is unstable "
                    "for these data (the outputs are normalised, so the effective step is lr/tr G, and "
                    "tr G grows like lr² in the first steps: a smaller lr need not help)"
                )
            rec_t.append(t + 1)
            rec_g.append(G.clone())
    return np.asarray(rec_t), torch.stack(rec_g)


def stage_schedule(steps1: int, steps2: int, beta1: float, beta2: float):
    """β at step t of the two-stage schedule: β₁ for the first ``steps1`` steps, then β₂ (Ren & Li, Sec. 4)."""
    return lambda t: beta1 if t < steps1 else beta2


def gram_trajectory(
    G0: torch.Tensor,
    D: torch.Tensor,
    *,
    r: int,
    r_xi: int,
    lam: float,
    steps_stage1: int,
    steps_stage2: int,
    lr: float,
    beta1: float = 0.05,
    beta2: float = 2.0,
    record_every: int = 1,
    setting: str = "",
) -> tuple[np.ndarray, torch.Tensor]:
    """Iterate :func:`gram_step` from G0 (R, 2K, 2K) through the two stages (β1, then β2).

    Ren & Li, Algorithm 3.1 on the population loss (λ = 0: the non-contrastive method).  Returns
    the recorded steps (always 0, the stage boundary and the end) and G (T, R, 2K, 2K).

    Raises
    ------
    ParameterError
        On bad arguments.
    NonFiniteError
        On a non-finite G (names the step and ``lr``, after ``setting`` when given).

    Chapter ``book/renli-simulation.py``.
    """
    steps1, steps2 = nonneg_int("steps_stage1", steps_stage1), nonneg_int("steps_stage2", steps_stage2)
    record_every = positive_int("record_every", record_every)
    K = check_gram(G0, r, r_xi)
    if D.shape != G0.shape[:-1]:
        raise ParameterError(f"D has shape {tuple(D.shape)}; expected {tuple(G0.shape[:-1])}")
    signs = sign_table(K, G0.dtype) if lam > 0 else None
    beta_at = stage_schedule(steps1, steps2, beta1, beta2)

    def step(G: torch.Tensor, t: int) -> torch.Tensor:
        return gram_step(G, D, r, r_xi, lam, beta_at(t), lr, signs)[0]

    return iterate_gram(
        G0, step, steps1=steps1, steps2=steps2, lr=lr, record_every=record_every, setting=setting
    )


def train_population(
    W_a: torch.Tensor,
    W_b: torch.Tensor,
    data: MultimodalData,
    *,
    lam: float,
    steps_stage1: int,
    steps_stage2: int,
    lr: float,
    beta1: float = 0.05,
    beta2: float = 2.0,
    record_every: int = 1,
) -> tuple[np.ndarray, torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """The finite-width learner: gradient descent on W_A, W_B (R, m, d) for the population loss.

    Step size η·m (the width rescaling of Ren & Li, Sec. 5.1).  Returns the recorded steps, the Gram
    matrices (T, R, 2K, 2K) of X = [W_A P_A, W_B P_B]/√m, and the final weights.  It follows
    :func:`gram_trajectory` from :func:`initial_gram` exactly (tested).  Chapter
    ``book/renli-simulation.py``.
    """
    steps1, steps2 = nonneg_int("steps_stage1", steps_stage1), nonneg_int("steps_stage2", steps_stage2)
    lr, record_every = positive_float("lr", lr), positive_int("record_every", record_every)
    if W_a.dim() != 3 or W_a.shape != W_b.shape or W_a.shape[0] != data.n_runs or W_a.shape[2] != data.d:
        raise ParameterError(
            f"W_a {tuple(W_a.shape)} and W_b {tuple(W_b.shape)} must both be ({data.n_runs}, m, {data.d})"
        )
    r, r_xi, m = data.r, data.r_xi, W_a.shape[1]
    P_a, P_b = _stacked_inputs(data)
    signs = sign_table(r + r_xi) if lam > 0 else None
    beta_at = stage_schedule(steps1, steps2, beta1, beta2)
    W_a, W_b = W_a.detach().clone().to(torch.float64), W_b.detach().clone().to(torch.float64)

    def gram() -> torch.Tensor:
        X = torch.cat([W_a @ P_a, W_b @ P_b], dim=-1) / math.sqrt(m)
        return X.transpose(-1, -2) @ X

    rec_t, rec_g = [0], [gram().detach()]
    total = steps1 + steps2
    for t in range(total):
        W_a.requires_grad_(True)
        W_b.requires_grad_(True)
        loss = population_loss(gram(), r, r_xi, lam, beta_at(t), signs)
        g_a, g_b = torch.autograd.grad(loss.sum(), (W_a, W_b))
        W_a, W_b = (W_a - lr * m * g_a).detach(), (W_b - lr * m * g_b).detach()
        if (t + 1) % record_every == 0 or t + 1 in (steps1, total):
            rec_t.append(t + 1)
            rec_g.append(gram().detach())
    return np.asarray(rec_t), torch.stack(rec_g), (W_a, W_b)


def normalized_gram(G: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """G with each modality's block divided by its normalisation: the Gram matrix of [Ũ_A Ṽ_A Ũ_B Ṽ_B].

    The quantities the normalised outputs (and the loss) depend on; Ren & Li, Eq. 2 with the
    population normalisation.  Chapter ``book/renli-simulation.py``.
    """
    K = check_gram(G, r, r_xi)
    s_a = torch.diagonal(G[..., :K, :K], dim1=-2, dim2=-1).sum(-1).sqrt()
    s_b = torch.diagonal(G[..., K:, K:], dim1=-2, dim2=-1).sum(-1).sqrt()
    s = torch.cat([s_a[..., None].expand(*s_a.shape, K), s_b[..., None].expand(*s_b.shape, K)], dim=-1)
    return G / (s[..., :, None] * s[..., None, :])


def gram_condition_number(G: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """Condition number of U_A = W_A M_A from G: √(λ_max/λ_min) of its r × r signal block (Ren & Li, Fig. 1)."""
    check_gram(G, r, r_xi)
    ev = torch.linalg.eigvalsh(G[..., :r, :r])
    return (ev[..., -1] / ev[..., 0]).sqrt()


def gram_noise_to_signal(G: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """‖W_AH_A‖_F/‖W_AM_A‖_F from G (Ren & Li, Lemma 5.1; :func:`nlcl.renli.metrics.noise_to_signal`)."""
    K = check_gram(G, r, r_xi)
    tr = lambda B: torch.diagonal(B, dim1=-2, dim2=-1).sum(-1)  # noqa: E731
    return (tr(G[..., r:K, r:K]) / tr(G[..., :r, :r])).sqrt()


def tracking_error(G: torch.Tensor, G_ref: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """‖Ĝ − Ĝ_ref‖_F / ‖Ĝ_ref‖_F with Ĝ = :func:`normalized_gram`: distance to the infinite-width run.

    Shapes broadcast (e.g. G (T, R, 2K, 2K) against G_ref (T, R, 2K, 2K)).  Ren & Li, Lemmas
    5.1-5.3 ("the finite-width dynamics closely track the infinite-width one"); chapter
    ``book/renli-simulation.py``.
    """
    a, b = normalized_gram(G, r, r_xi), normalized_gram(G_ref, r, r_xi)
    return torch.linalg.matrix_norm(a - b) / torch.linalg.matrix_norm(b)


def stationarity(
    G: torch.Tensor, D: torch.Tensor, r: int, r_xi: int, lam: float, beta: float = 1.0
) -> torch.Tensor:
    """Scale-free gradient norm of the population loss at G: ‖∂L/∂X · D^½‖_F · ‖X‖_F, from G alone.

    With X = [W_A P_A, W_B P_B]/√m and ∂L/∂X = X(S + Sᵀ) (module docstring), the width-rescaled
    gradient in W has squared norm tr((S + Sᵀ) G (S + Sᵀ) D) (up to the factor m of the step), and
    ‖X‖_F² = tr G.  The loss is invariant under G → c²G (the outputs are normalised), so the
    gradient scales like 1/c and the product is invariant: it measures how far G is from a
    stationary point independently of the weights' free scale (Ren & Li, Thm. 4.3(a): "converge to
    an approximate stationary point").  G (..., 2K, 2K), D (..., 2K) → (...,).  Chapter
    ``book/renli-simulation.py``.
    """
    K = check_gram(G, r, r_xi)
    if D.shape != G.shape[:-1]:
        raise ParameterError(f"D has shape {tuple(D.shape)}; expected {tuple(G.shape[:-1])}")
    signs = sign_table(K, G.dtype) if lam > 0 else None
    leaf = G.detach().clone().requires_grad_(True)
    (S,) = torch.autograd.grad(population_loss(leaf, r, r_xi, lam, beta, signs).sum(), leaf)
    Sh = S + S.transpose(-1, -2)
    tr = lambda B: torch.diagonal(B, dim1=-2, dim2=-1).sum(-1)  # noqa: E731
    return (tr(Sh @ G.detach() @ Sh * D[..., None, :]) * tr(G.detach())).clamp_min(0).sqrt()


def distinct_data_seeds(start: int, n: int, *, d: int, r: int, r_xi: int, kappa: float = 2.0) -> list[int]:
    """The first ``n`` data seeds from ``start`` on whose infinite-width runs differ.

    The infinite-width run of a data model depends on it only through D = (σ_A², ν², σ_B², ν²)
    (:func:`infinite_width_gram`, :func:`input_scales`), that is through the permutation taking σ_A
    to σ_B (:func:`nlcl.renli.model.make_data`; it does not depend on κ or ν), so two data seeds
    with the same permutation give the same run and a per-seed claim about it would count one run
    twice.  Seeds are scanned upwards and a seed whose permutation was seen is skipped.  Raises
    ParameterError when ``n`` exceeds the r! permutations.  Ren & Li, Sec. 5.2; chapter
    ``book/renli-simulation.py``.
    """
    start, n = nonneg_int("start", start), positive_int("n", n)
    if n > math.factorial(r):
        raise ParameterError(
            f"n={n} data seeds with distinct infinite-width runs: r={r} allows {math.factorial(r)} "
            "(the permutations taking σ_A to σ_B)"
        )
    seen: set[tuple[float, ...]] = set()
    seeds: list[int] = []
    seed = start
    while len(seeds) < n:
        data = make_data(d, r, r_xi, kappa, [seed], dtype=torch.float64)
        perm = tuple(data.sigma_B[0].tolist())
        if perm not in seen:
            seen.add(perm)
            seeds.append(seed)
        seed += 1
    return seeds


def eq7_mask(r: int, r_xi: int) -> torch.Tensor:
    """The entries of G that the structure of Ren & Li's Eq. 7 allows to be non-zero, (2K, 2K) bool.

    Eq. 7 (infinite width): different latent coordinates map to orthogonal columns.  So G_AA, G_BB
    and the signal part of G_AB are diagonal, ⟨u_A,k, u_B,k⟩ is the only cross-modal inner product,
    and a noise column (ξ_A and ξ_B are independent) is orthogonal to every other column.  Flipping
    the sign of one latent coordinate (z_k in both modalities, or one ξ coordinate) leaves the
    population loss unchanged, which is why the structure, once it holds, is kept (their remark
    before Eq. 8, Lemma A.7).
    """
    K = positive_int("r", r) + positive_int("r_xi", r_xi)
    idx = torch.arange(2 * K)
    latent = idx % K
    same = latent[:, None] == latent[None, :]
    return same & ((latent[:, None] < r) | (idx[:, None] == idx[None, :]))


def eq7_deviation(G: torch.Tensor, r: int, r_xi: int) -> torch.Tensor:
    """‖Ĝ ⊙ (1 − M)‖_F / ‖Ĝ‖_F: the share of the normalised Gram matrix outside Eq. 7's structure.

    Ĝ = :func:`normalized_gram`, M = :func:`eq7_mask`.  0 for a G with the structure (the
    infinite-width initialisation D/d); G (..., 2K, 2K) → (...).  Ren & Li, Eq. 7 / Lemma A.7;
    chapter ``book/renli-simulation.py``.
    """
    Gn = normalized_gram(G, r, r_xi)
    off = Gn.masked_fill(eq7_mask(r, r_xi), 0.0)
    return torch.linalg.matrix_norm(off) / torch.linalg.matrix_norm(Gn)


def check_descent(
    steps: np.ndarray,
    G: torch.Tensor,
    *,
    r: int,
    r_xi: int,
    lam: float,
    steps_stage1: int,
    beta1: float = 0.05,
    beta2: float = 2.0,
    setting: str = "",
    tol: float = 1e-8,
) -> None:
    """Raise ParameterError when a Gram trajectory is not a descent: the population loss of some run
    rises between two records of one stage (β₁ up to ``steps_stage1``, β₂ after it) by more than
    ``tol``.

    Gradient descent at a stable step lowers the loss at every step; a rise means the step is past
    the stability limit of the dynamics (it grows with κ, as D = diag(σ², ν²) does), and then the
    finite- and infinite-width runs part chaotically, so the comparisons that assume the dynamics
    of Ren & Li's Algorithm 3.1 mean nothing.  ``steps`` (T,) and G (T, ..., 2K, 2K) as returned by
    :func:`gram_trajectory`; ``setting`` (e.g. ``"kappa=16, lr=2"``) starts the message.
    """
    if G.shape[0] != len(steps):
        raise ParameterError(f"G has {G.shape[0]} records; expected one per step ({len(steps)})")
    steps = np.asarray(steps)
    stages = ((1, beta1, steps <= steps_stage1), (2, beta2, steps >= steps_stage1))
    for stage, beta, keep in stages:
        idx = np.flatnonzero(keep)
        if len(idx) < 2:
            continue
        loss = population_loss(G[idx], r, r_xi, lam, beta)
        rise = (loss[1:] - loss[:-1]).reshape(len(idx) - 1, -1).max(-1).values
        j = int(rise.argmax())
        if float(rise[j]) > tol:
            where = f"{setting}: " if setting else ""
            raise ParameterError(
                f"{where}the Gram recursion is not a descent: a run's population loss rose by "
                f"{float(rise[j]):.2g} between steps {int(steps[idx[j]])} and {int(steps[idx[j + 1]])} "
                f"(stage {stage}); the step is past the stability limit of these data (it falls as κ "
                "grows), so the finite- and infinite-width runs part chaotically and the tracking "
                "comparisons would mean nothing"
            )
