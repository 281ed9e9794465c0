"""Sufficient conditions for aligned and for balanced representations (Ren & Li 2023, Lemmas 4.4-4.5).

**Reconstruction.** The stored paper lost the formulas of both lemmas; only their prose survives
(``shared/papers/ren-li-setup.md``).  Lemma 4.4: if the noise parts are small for both modalities,
U_A ≈ U_B, and the condition number of U_A is bounded (so that its smallest singular value stays
large after normalisation), the representations are aligned.  Lemma 4.5: if the model is aligned
and the condition number of U_A is close to 1, the representations are balanced.  The constants are
lost, so this module states and implements explicit versions that we derive in the chapter, with
the population normalisation s_A² = ‖U_A‖_F² + ‖V_A‖_F², Ũ = U/s and Ṽ = V/s:

* **Lemma 4.4 (explicit).** Let ε_A = √r_ξ‖Ṽ_A‖₂, ε_B = √r_ξ‖Ṽ_B‖₂, δ = √r‖Ũ_A − Ũ_B‖₂ and
  K* = ‖Ũ_A‖_F / (√r (δ + ε_A + ε_B)).  If κ(U_A) < K*, then σ_min(Ũ_A) > δ + ε_A + ε_B, and every
  (positive, negative) pair whose latents differ (z_i ≠ z_j) is ranked correctly: the alignment
  score (Def. 4.1) is at least the fraction of such pairs, 1 − 2^{-r} in expectation.
* **Lemma 4.5 (explicit).** srank(Cov f_A) ≥ (1 + (r − 1)/κ²)/(1 + η) with κ = κ(U_A) and
  η = ‖Ṽ_A‖₂²/σ_max(Ũ_A)², so κ ≤ κ*(ε) = √((r − 1)/((1 − ε) r (1 + η) − 1)) implies
  srank ≥ (1 − ε) r (balanced).

:func:`alignment_condition` and :func:`balance_condition` evaluate both; :func:`population_alignment`
measures the alignment score with the same normalisation; :func:`binary_code_maps` builds the
paper's example of an aligned but unbalanced model and :func:`rotated_maps` a misaligned one.
Explained in the chapter ``book/renli-simulation.py`` (section "Lemmas 4.4 and 4.5").
"""

from __future__ import annotations

import math

import torch

from nlcl.core.validate import ParameterError, nonneg_float, positive_int, probability
from nlcl.renli.model import MultimodalData

__all__ = [
    "normalized_maps",
    "alignment_condition",
    "balance_kappa_threshold",
    "balance_condition",
    "maps_stable_rank",
    "population_alignment",
    "binary_code_maps",
    "rotated_maps",
]


def normalized_maps(W_A: torch.Tensor, W_B: torch.Tensor, data: MultimodalData) -> tuple[torch.Tensor, ...]:
    """(Ũ_A, Ṽ_A, Ũ_B, Ṽ_B): U = W M and V = W H divided by s = √(‖U‖_F² + ‖V‖_F²), per run.

    W (R, m, d) → Ũ (R, m, r), Ṽ (R, m, r_ξ), float64.  The population version of the output
    normalisation of Ren & Li, Eq. 2 (f_A(x) = Ũ_A z + Ṽ_A ξ_A).  Chapter ``book/renli-simulation.py``.
    """
    if W_A.dim() != 3 or W_A.shape != W_B.shape or W_A.shape[0] != data.n_runs or W_A.shape[2] != data.d:
        raise ParameterError(
            f"W_A {tuple(W_A.shape)} and W_B {tuple(W_B.shape)} must both be ({data.n_runs}, m, {data.d})"
        )
    out = []
    for W, M, H in ((W_A, data.M_A, data.H_A), (W_B, data.M_B, data.H_B)):
        W = W.to(torch.float64)
        U, V = W @ M.to(torch.float64), W @ H.to(torch.float64)
        s = (U.pow(2).sum((-2, -1)) + V.pow(2).sum((-2, -1))).sqrt()[:, None, None]
        out += [U / s, V / s]
    return tuple(out)


def _check_maps(U_A, V_A, U_B, V_B) -> None:
    if U_A.shape != U_B.shape or V_A.shape != V_B.shape or U_A.shape[:-1] != V_A.shape[:-1] or U_A.dim() < 2:
        raise ParameterError(
            f"U_A {tuple(U_A.shape)}, V_A {tuple(V_A.shape)}, U_B {tuple(U_B.shape)}, V_B {tuple(V_B.shape)}: "
            "expected U's (..., m, r) and V's (..., m, r_xi) with a common (..., m)"
        )


def alignment_condition(U_A, V_A, U_B, V_B) -> dict[str, torch.Tensor]:
    """The quantities of the explicit Lemma 4.4 (module docstring) for normalised maps, per leading index.

    Returns ``eps_A``, ``eps_B`` (noise), ``delta`` (misalignment), ``kappa`` (κ(U_A)), ``kappa_bound``
    (K*), ``holds`` (κ < K*, bool), ``margin`` (σ_min(Ũ_A) − δ − ε_A − ε_B; > 0 is the sharper form of
    the condition, implied by ``holds``) and ``kappa_bound_noise_free`` (K* with ε_A = ε_B = 0,
    ‖Ũ_A‖_F/(√r δ): the bound the condition would have without its noise terms; ≥ K*, infinite
    when δ = 0).  Ren & Li, Lemma 4.4 (reconstructed constants); chapter
    ``book/renli-simulation.py``.
    """
    _check_maps(U_A, V_A, U_B, V_B)
    r, r_xi = U_A.shape[-1], V_A.shape[-1]
    two = lambda M: torch.linalg.matrix_norm(M, ord=2)  # noqa: E731
    eps_a, eps_b = math.sqrt(r_xi) * two(V_A), math.sqrt(r_xi) * two(V_B)
    delta = math.sqrt(r) * two(U_A - U_B)
    sv = torch.linalg.svdvals(U_A)
    kappa = sv[..., 0] / sv[..., -1]
    bound = torch.linalg.matrix_norm(U_A) / (math.sqrt(r) * (delta + eps_a + eps_b))
    return dict(
        eps_A=eps_a,
        eps_B=eps_b,
        delta=delta,
        kappa=kappa,
        kappa_bound=bound,
        holds=kappa < bound,
        margin=sv[..., -1] - (delta + eps_a + eps_b),
        kappa_bound_noise_free=torch.linalg.matrix_norm(U_A) / (math.sqrt(r) * delta),
    )


def balance_kappa_threshold(r: int, eps: float, eta: float | torch.Tensor = 0.0) -> torch.Tensor:
    """κ*(ε) = √((r − 1)/((1 − ε) r (1 + η) − 1)): κ(U_A) ≤ κ* guarantees srank ≥ (1 − ε) r.

    The explicit Lemma 4.5 (module docstring); ``inf`` when (1 − ε) r (1 + η) ≤ 1 (any κ will do)
    and 0 when it exceeds r (no κ will do).  Chapter ``book/renli-simulation.py``.
    """
    r = positive_int("r", r)
    eps = probability("eps", eps)
    eta = torch.as_tensor(eta, dtype=torch.float64)
    if bool((eta < 0).any()):
        raise ParameterError(f"eta={eta.tolist()} must be >= 0")
    denom = (1 - eps) * r * (1 + eta) - 1
    ratio = torch.where(denom > 0, (r - 1) / denom.clamp_min(1e-300), torch.full_like(denom, math.inf))
    return torch.where(ratio >= 1, ratio.sqrt(), torch.zeros_like(ratio))


def maps_stable_rank(U: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """srank(Σ) = tr Σ/λ_max(Σ) of Σ = ŨŨᵀ + ṼṼᵀ, the covariance of f_A (Ren & Li, Def. 4.2)."""
    G = torch.cat([U, V], dim=-1)
    gram = G.transpose(-1, -2) @ G
    return torch.diagonal(gram, dim1=-2, dim2=-1).sum(-1) / torch.linalg.eigvalsh(gram)[..., -1]


def balance_condition(U_A: torch.Tensor, V_A: torch.Tensor, eps: float = 0.15) -> dict[str, torch.Tensor]:
    """The explicit Lemma 4.5 (module docstring) for normalised maps, per leading index.

    Returns ``kappa``, ``eta``, ``kappa_threshold`` (κ*(ε)), ``holds`` (κ ≤ κ*), ``srank_bound``
    ((1 + (r − 1)/κ²)/(1 + η)) and ``srank`` (:func:`maps_stable_rank`).  Ren & Li, Lemma 4.5
    (reconstructed constants); chapter ``book/renli-simulation.py``.
    """
    if U_A.dim() < 2 or V_A.shape[:-1] != U_A.shape[:-1]:
        raise ParameterError(
            f"U_A {tuple(U_A.shape)} and V_A {tuple(V_A.shape)} must be (..., m, r) and (..., m, r_xi)"
        )
    r = U_A.shape[-1]
    sv = torch.linalg.svdvals(U_A)
    kappa = sv[..., 0] / sv[..., -1]
    eta = torch.linalg.matrix_norm(V_A, ord=2) ** 2 / sv[..., 0] ** 2
    threshold = balance_kappa_threshold(r, eps, eta)
    return dict(
        kappa=kappa,
        eta=eta,
        kappa_threshold=threshold,
        holds=kappa <= threshold,
        srank_bound=(1 + (r - 1) / kappa**2) / (1 + eta),
        srank=maps_stable_rank(U_A, V_A),
    )


def population_alignment(
    U_A, V_A, U_B, V_B, *, n: int = 1024, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Alignment score (Def. 4.1) of f_A = Ũ_A z + Ṽ_A ξ_A, f_B = Ũ_B z + Ṽ_B ξ_B on n fresh pairs.

    Returns (score, distinct), each (...): the fraction of ordered pairs i ≠ j with
    ‖f_A,i − f_B,i‖ < ‖f_A,i − f_B,j‖, and the fraction of pairs with z_i ≠ z_j (the lower bound
    that the explicit Lemma 4.4 guarantees).  Same latent draws for every leading index.  Chapter
    ``book/renli-simulation.py``.
    """
    _check_maps(U_A, V_A, U_B, V_B)
    n = positive_int("n", n)
    if n < 2:
        raise ParameterError("n=1: the alignment score needs n >= 2 pairs")
    r, r_xi = U_A.shape[-1], V_A.shape[-1]
    draw = lambda k: torch.randint(0, 2, (n, k), generator=generator).to(U_A.dtype) * 2 - 1  # noqa: E731
    z, xi_a, xi_b = draw(r), draw(r_xi), draw(r_xi)
    f_a = z @ U_A.transpose(-1, -2) + xi_a @ V_A.transpose(-1, -2)
    f_b = z @ U_B.transpose(-1, -2) + xi_b @ V_B.transpose(-1, -2)
    dist = torch.cdist(f_a, f_b)
    pos = torch.diagonal(dist, dim1=-2, dim2=-1).unsqueeze(-1)
    off = ~torch.eye(n, dtype=torch.bool)
    score = ((pos < dist) & off).to(U_A.dtype).sum((-2, -1)) / (n * (n - 1))
    same = (torch.cdist(z, z) == 0) & off
    distinct = 1 - same.to(U_A.dtype).sum() / (n * (n - 1))
    return score, distinct.expand(score.shape)


def binary_code_maps(r: int, r_xi: int, m: int, *, nu: float = 0.0) -> tuple[torch.Tensor, ...]:
    """The paper's aligned-but-unbalanced example: both modalities map z to (Σ_k 2^(k−1) z_k)·e₁.

    Ũ_A = Ũ_B = e₁ cᵀ with c_k ∝ 2^(k−1) (rank one, κ(U_A) = ∞), so distinct latents stay distinct
    (aligned without noise) while srank = 1 (unbalanced).  With ``nu`` > 0 each modality gets noise
    maps of size ν on its own directions e₂…; everything is normalised (s = 1).  Our reading of the
    example after Ren & Li, Def. 4.2 (its formula is lost).  Returns (Ũ_A, Ṽ_A, Ũ_B, Ṽ_B).
    Chapter ``book/renli-simulation.py``.
    """
    r, r_xi, m = positive_int("r", r), positive_int("r_xi", r_xi), positive_int("m", m)
    nu = nonneg_float("nu", nu)
    if m < 1 + 2 * r_xi:
        raise ParameterError(
            f"m={m} must be >= 1 + 2 r_xi = {1 + 2 * r_xi} (one signal and two noise blocks)"
        )
    c = 2.0 ** torch.arange(r, dtype=torch.float64)
    U = torch.zeros(m, r, dtype=torch.float64)
    U[0] = c / c.norm()
    V_a, V_b = torch.zeros(m, r_xi, dtype=torch.float64), torch.zeros(m, r_xi, dtype=torch.float64)
    V_a[1 : 1 + r_xi] = nu * torch.eye(r_xi, dtype=torch.float64) / math.sqrt(r_xi)
    V_b[1 + r_xi : 1 + 2 * r_xi] = nu * torch.eye(r_xi, dtype=torch.float64) / math.sqrt(r_xi)
    s = math.sqrt(1 + nu**2)
    return U / s, V_a / s, U.clone() / s, V_b / s


def rotated_maps(U_A, V_A, U_B, V_B, *, generator: torch.Generator | None = None) -> tuple[torch.Tensor, ...]:
    """(Ũ_A, Ṽ_A, QŨ_B, QṼ_B) with Q a random orthogonal m × m matrix: modality B rotated away.

    Norms, condition numbers and stable ranks are unchanged but U_A ≉ U_B (the third condition of
    Lemma 4.4 fails); for m ≫ r the two modalities become nearly orthogonal and the alignment
    score falls to about ½.  Chapter ``book/renli-simulation.py``.
    """
    _check_maps(U_A, V_A, U_B, V_B)
    m = U_A.shape[-2]
    Q, R = torch.linalg.qr(torch.randn(m, m, generator=generator, dtype=U_A.dtype))
    Q = Q * torch.sign(torch.diagonal(R))
    return U_A, V_A, Q @ U_B, Q @ V_B
