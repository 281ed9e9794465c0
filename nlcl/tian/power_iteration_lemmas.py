"""The power-iteration lemmas of Tian 2023 (App. G, Lemmas 7-11), measured along a trajectory.

Theorem 3 (Sec. 3.3, App. B.4) rests on five lemmas about power iteration (Eq. PI / Eq. 101)
w(t+1) = A(w(t)) w(t) / ‖A(w(t)) w(t)‖ on a positive definite A(w). This module recomputes, from
``a_fn`` and a trajectory alone, the quantities each lemma bounds or states, independently of how
the trajectory was made (:func:`nlcl.tian.landscape.power_iteration`):

* :func:`iterated_matrix` — Â(w) = A(w) − λ_min I + 10⁻¹² I, the positive definite matrix the
  iteration runs on (App. B.4, Eq. 104);
* :func:`lemma9_remainder` — ‖φ₁' − (φ₁ + Δφ₁)‖, the remainder of the first-order eigenvector
  expansion (Lemma 9, Eqs. 190-191), with Δφ₁ by a linear solve, not the eigen-sum;
* :func:`lemma9_slope` — the log-log slope of that remainder against ‖δA‖₂ (2 if Eq. 190 is right);
* :func:`trajectory_lemmas` — per step: c_t, d_t (Eq. 102), μ_t (Eq. 182), ‖δw(t)‖, the pair's own
  Lipschitz quotient and Lemma 9 ratio, and the ratio of each side of Lemmas 7, 8 and 10 to its
  bound (Eqs. 182, 189, 192-193);
* :func:`lemma11_conclusions` — whether a trajectory meets the conclusions of Lemma 11 (monotone
  c_t, 1 − c_t ≤ γᵗ(1 − c₀), Eqs. 206 and 220, Eq. 204's ball).

One minus a cosine is taken as ½‖a − b‖² of the unit vectors, which keeps its relative precision
when it is far below machine epsilon. Explained in the chapter ``book/tian-one-layer.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nlcl.core.validate import ParameterError

__all__ = [
    "iterated_matrix",
    "lemma11_conclusions",
    "lemma9_remainder",
    "lemma9_slope",
    "trajectory_lemmas",
]

AFn = Callable[[np.ndarray], np.ndarray]

#: The ε of Â(w) = A(w) − λ_min I + ε I (App. B.4, Eq. 104), as in
#: :func:`nlcl.tian.landscape.power_iteration`.
SHIFT_EPS = 1e-12


def iterated_matrix(a) -> np.ndarray:
    """Â = A − λ_min(A) I + 10⁻¹² I (Tian 2023, App. B.4, Eq. 104) of symmetric A (…, d, d).

    Â has the eigenvectors and gaps of A and is positive definite, as Lemmas 7-11 assume; power
    iteration with ``shift=True`` runs on it, so the lemmas' λ_i are Â's.
    """
    a = np.asarray(a, dtype=np.float64)
    lam_min = np.linalg.eigvalsh(a)[..., :1, None]
    return a - (lam_min - SHIFT_EPS) * np.eye(a.shape[-1])


def _top(a: np.ndarray, align: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues in descending order and φ₁ signed so that φ₁ᵀ``align`` ≥ 0."""
    lam, phi = np.linalg.eigh(a)
    lam, p1 = lam[..., ::-1], phi[..., :, -1]
    sign = np.where((p1 * align).sum(-1, keepdims=True) < 0, -1.0, 1.0)
    return lam, p1 * sign


def _half_sq(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """1 − aᵀb for unit vectors, as ½‖a − b‖² (no cancellation)."""
    return 0.5 * ((a - b) ** 2).sum(-1)


def _first_order(
    a: np.ndarray, lam1: np.ndarray, p1: np.ndarray, da: np.ndarray, gap: np.ndarray
) -> np.ndarray:
    """Δφ₁ = Σ_{j>1} φ_jᵀ δA φ₁ / (λ₁ − λ_j) φ_j (Eq. 190), by one linear solve.

    (λ₁ I − A + λ₁ φ₁φ₁ᵀ) x = P⊥ δA φ₁ with P⊥ = I − φ₁φ₁ᵀ: the matrix has eigenvalues λ₁ − λ_j
    on φ_j (j > 1) and λ₁ on φ₁, so x is the reduced resolvent applied to δA φ₁, which is Δφ₁.
    NaN where λ₁ is repeated to round-off (``gap`` = λ₁ − λ₂ ≤ 1e-12 |λ₁|): Eq. 190 divides by
    λ₁ − λ₂ and Δφ₁ is undefined there.
    """
    d = a.shape[-1]
    outer = p1[..., :, None] * p1[..., None, :]
    lhs = lam1[..., None, None] * (np.eye(d) + outer) - a
    rhs = ((np.eye(d) - outer) @ (da @ p1[..., None]))[..., 0]
    repeated = ~(gap > 1e-12 * np.abs(lam1))
    lhs = np.where(repeated[..., None, None], np.eye(d), lhs)  # solvable; the result is discarded
    x = np.linalg.solve(lhs, rhs[..., None])[..., 0]
    return np.where(repeated[..., None], np.nan, x)


def lemma9_remainder(a, a_prime) -> np.ndarray:
    """‖φ₁' − (φ₁ + Δφ₁)‖₂ for symmetric A, A' (…, d, d) (Tian 2023, Lemma 9, Eqs. 190-191).

    φ₁ = φ₁(A), φ₁' = φ₁(A') signed to agree with φ₁, Δφ₁ the first-order term of Eq. 190 with
    δA = A' − A (computed by a linear solve, :func:`_first_order`). Lemma 9: the remainder is
    O(‖δA‖₂²), ≤ κ‖δA‖₂².
    """
    a = np.asarray(a, dtype=np.float64)
    a2 = np.asarray(a_prime, dtype=np.float64)
    if a.shape != a2.shape or a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ParameterError(f"a and a_prime must be square matrices of one shape, got {a.shape}, {a2.shape}")
    lam, phi = np.linalg.eigh(a)
    p1, lam1 = phi[..., :, -1], lam[..., -1]
    p1b = _top(a2, p1)[1]
    return np.linalg.norm(p1b - p1 - _first_order(a, lam1, p1, a2 - a, lam1 - lam[..., -2]), axis=-1)


def lemma9_slope(a, direction, scales) -> float:
    """Log-log slope of ‖φ₁(A + sE) − (φ₁ + Δφ₁)‖ against ‖sE‖₂ over ``scales`` s (Lemma 9, Eq. 190).

    ``a`` and ``direction`` E are symmetric (d, d). Eq. 190 says the remainder is O(‖δA‖₂²): the
    slope is 2 when sE is small against the gap λ₁ − λ₂ (its next order is O(s) relative), and
    1 if the first-order term Δφ₁ were wrong.
    """
    a = np.asarray(a, dtype=np.float64)
    e = np.asarray(direction, dtype=np.float64)
    s = np.asarray(scales, dtype=np.float64)
    if s.ndim != 1 or len(s) < 2 or np.any(s <= 0):
        raise ParameterError(f"scales must be at least two positive numbers, got {scales!r}")
    rem = lemma9_remainder(np.broadcast_to(a, (len(s),) + a.shape), a + s[:, None, None] * e)
    size = s * np.linalg.norm(e, 2)
    return float(np.polyfit(np.log(size), np.log(rem), 1)[0])


def trajectory_lemmas(a_fn: AFn, traj, floor: float = 1e-10) -> dict[str, np.ndarray]:
    """The quantities of Lemmas 7-10 at every step of a power-iteration trajectory (Tian 2023, App. G).

    ``traj`` (T + 1, …, d): w(0), …, w(T), each leading index after the first an independent run.
    A(w(t)) is recomputed with ``a_fn`` and shifted to Â (:func:`iterated_matrix`); φ₁(t) is signed
    so that c_t = φ₁ᵀ(t) w(t) ≥ 0 (App. B.4: "use −φ₁"). Returns arrays (T, …) per step t:

    * ``one_minus_c`` (T + 1, …): 1 − c_t; ``one_minus_d``: 1 − d_t, d_t = φ₁ᵀ(t) w(t+1) (Eq. 102);
    * ``mu``: μ_t = (1 + c_t)/(2c_t²) (λ₂/λ₁)² (Eq. 182); ``lam1``, ``gap`` of Â(t);
    * ``dw``: ‖δw(t)‖; ``dA``: ‖Â(t+1) − Â(t)‖₂; ``lip``: ‖δA‖₂/‖δw‖, the pair's own Lipschitz
      quotient (≤ L); ``kappa``: the pair's Lemma 9 ratio ‖φ₁(t+1) − φ₁(t) − Δφ₁‖/‖δA‖₂² (≤ κ);
    * ``d_minus_c``: |d_t − c_{t+1}| (Eq. 192);
    * ``ratio7`` = (1 − d_t)/(μ_t(1 − c_t)) (Lemma 7: ≤ 1), ``ratio8`` = ‖δw‖/√(2(1 + μ_t c_t)(1 − c_t))
      (Lemma 8: ≤ 1), ``ratio10`` = |d_t − c_{t+1}|/(ν_t(1 − c_t)) with ν_t of Eq. 193 evaluated at
      the pair's own ``lip`` and ``kappa`` (Lemma 10: ≤ 1, and then ≤ 1 for any L ≥ lip, κ ≥ kappa,
      since ν grows with both).

    A ratio is NaN where round-off would decide it: where its bound (μ_t(1 − c_t), 1 − c_t,
    ν_t(1 − c_t)) is below ``floor``, where c_t = 0, and for Lemma 10 where δA = 0 (both sides 0) or
    where λ₁(t) is repeated (``kappa`` NaN: Δφ₁ is undefined, :func:`_first_order`).
    Above the floor, 1 − d_t and |d_t − c_{t+1}| (differences of ½‖·‖² of vectors known to
    ~10⁻¹⁶) carry a relative error of about 10⁻¹⁶/√floor.
    """
    w = np.asarray(traj, dtype=np.float64)
    if w.ndim < 2 or len(w) < 2:
        raise ParameterError(f"traj must be (T + 1, …, d) with T ≥ 1, got shape {w.shape}")
    w = w / np.linalg.norm(w, axis=-1, keepdims=True)
    a = iterated_matrix(a_fn(w))  # (T + 1, …, d, d)
    lam, p1 = _top(a, w)
    one_minus_c = _half_sq(w, p1)
    c = 1.0 - one_minus_c
    lam1, lam2 = lam[..., 0], lam[..., 1]
    w0, w1 = w[:-1], w[1:]
    a0, a1 = a[:-1], a[1:]
    p0, p_next = p1[:-1], p1[1:]
    c0, omc0 = c[:-1], one_minus_c[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = (1 + c0) / (2 * c0**2) * (lam2[:-1] / lam1[:-1]) ** 2
        one_minus_d = _half_sq(w1, p0)
        d_minus_c = np.abs(_half_sq(w1, p_next) - one_minus_d)  # |d_t − c_{t+1}|
        dw = np.linalg.norm(w1 - w0, axis=-1)
        da = a1 - a0
        d_a = np.linalg.norm(da, ord=2, axis=(-2, -1))
        p_next_aligned = _top(a1, p0)[1]  # φ₁(t+1) signed to agree with φ₁(t) (Lemma 9)
        gap = lam1[:-1] - lam2[:-1]
        rem = np.linalg.norm(p_next_aligned - p0 - _first_order(a0, lam1[:-1], p0, da, gap), axis=-1)
        lip = d_a / dw
        kappa = rem / d_a**2
        nu = 2 * kappa * lip**2 * (1 + mu * c0) + 2 * lip / gap * np.sqrt(mu * (1 + mu * c0))
        pos = c0 > 0
        ratio7 = np.where(pos & (mu * omc0 >= floor), one_minus_d / (mu * omc0), np.nan)
        ratio8 = np.where(pos & (omc0 >= floor), dw / np.sqrt(2 * (1 + mu * c0) * omc0), np.nan)
        ratio10 = np.where(pos & (d_a > 0) & (nu * omc0 >= floor), d_minus_c / (nu * omc0), np.nan)
    return {
        "one_minus_c": one_minus_c,
        "one_minus_d": one_minus_d,
        "mu": mu,
        "lam1": lam1[:-1],
        "gap": gap,
        "dw": dw,
        "dA": d_a,
        "lip": np.where(d_a > 0, lip, 0.0),
        "kappa": np.where(d_a > 0, kappa, np.nan),
        "d_minus_c": d_minus_c,
        "ratio7": ratio7,
        "ratio8": ratio8,
        "ratio10": ratio10,
    }


def lemma11_conclusions(traj, one_minus_c, gamma: float, atol: float = 1e-12) -> dict[str, bool]:
    """Whether one trajectory meets the conclusions of Lemma 11 for γ (Tian 2023, Eqs. 204-220).

    ``traj`` (T + 1, d) and ``one_minus_c`` (T + 1,) from :func:`trajectory_lemmas` (1 − c_t, c₀ > 0).
    Returns ``monotone`` (c_{t+1} ≥ c_t), ``rate`` (1 − c_t ≤ γᵗ(1 − c₀), Eq. 216), ``path``
    (‖w(t) − w(0)‖ ≤ √(2(1+γ)(1−c₀)) Σ_{t'<t} γ^{t'/2}, Eq. 206) and ``ball`` (every w(t) within the
    radius √(2(1+γ)(1−c₀))/(1 − √γ) of Eq. 204), each to the absolute round-off ``atol``.
    """
    if not 0 < gamma < 1:
        raise ParameterError(f"gamma must lie in (0, 1), got {gamma!r}")
    w = np.asarray(traj, dtype=np.float64)
    omc = np.asarray(one_minus_c, dtype=np.float64)
    if w.ndim != 2 or omc.shape != (len(w),):
        raise ParameterError(f"traj must be (T + 1, d) and one_minus_c (T + 1,), got {w.shape}, {omc.shape}")
    t = np.arange(len(w))
    dist = np.linalg.norm(w - w[0], axis=-1)
    scale = np.sqrt(2 * (1 + gamma) * omc[0])
    partial = scale * np.concatenate([[0.0], np.cumsum(gamma ** (t[:-1] / 2))])
    return {
        "monotone": bool(np.all(np.diff(omc) <= atol)),
        "rate": bool(np.all(omc <= gamma**t * omc[0] + atol)),
        "path": bool(np.all(dist <= partial + atol)),
        "ball": bool(np.all(dist <= scale / (1 - np.sqrt(gamma)) + atol)),
    }
