"""Canonical correlations of two frozen feature sets (Ren & Li 2023, Sec. 6 diagnostics).

With frozen encoders and linear heads, the non-contrastive objective's maximizer is rank one along
the first canonical pair of the two feature sets (the diagnostics of ``book/renli-mnist-captions.py``):
:func:`canonical_correlations` finds the pairs, :func:`top_direction_overlap` how much of a learned
embedding lies along the first canonical variate. Split from :mod:`nlcl.renli.heads`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from nlcl.core.validate import ParameterError, positive_float, positive_int

__all__ = ["CanonicalPairs", "canonical_correlations", "top_direction_overlap"]


@dataclass
class CanonicalPairs:
    """Canonical correlations of two feature sets and the first-modality directions (see :func:`canonical_correlations`)."""

    rho: np.ndarray  # (k,) canonical correlations, descending
    directions: np.ndarray  # (d_a, k): column j maps centred features a to the j-th canonical variate
    mean: np.ndarray  # (d_a,) mean of the features a used for centring

    def variates(self, features: np.ndarray | torch.Tensor, k: int = 1) -> np.ndarray:
        """The first ``k`` canonical variates (n, k) of first-modality ``features`` (n, d_a)."""
        x = np.asarray(features, dtype=np.float64)
        return (x - self.mean) @ self.directions[:, : positive_int("k", k)]


def _whitening(z: np.ndarray, rel_tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Whitening map of centred ``z`` on the eigen-directions whose variance exceeds ``rel_tol``·max."""
    w, V = np.linalg.eigh(z.T @ z / len(z))
    keep = w > rel_tol * w.max()
    return V[:, keep] / np.sqrt(w[keep]), keep


def canonical_correlations(
    features_a: np.ndarray | torch.Tensor, features_b: np.ndarray | torch.Tensor, *, rel_tol: float = 1e-6
) -> CanonicalPairs:
    """Canonical correlations of paired features (n, d_a), (n, d_b): the optima of the linear NC objective.

    For linear heads ``f_A = Aᵀx``, ``f_B = Bᵀt`` with the scalar output normalization of Ren & Li
    (2023), Eq. 2 (centred), the non-contrastive objective of Eq. 4 is
    ``E⟨f_A, f_B⟩ = tr(Aᵀ C_ab B) / sqrt(tr(Aᵀ Σ_a A) · tr(Bᵀ Σ_b B))``.  With ``a = Σ_a^{1/2} A``,
    ``b = Σ_b^{1/2} B`` and ``K = Σ_a^{-1/2} C_ab Σ_b^{-1/2}`` it is ``tr(aᵀ K b)/(‖a‖_F ‖b‖_F)``,
    at most ``ρ₁``, the largest singular value of ``K`` (the first canonical correlation), with
    equality only for ``a``, ``b`` of rank one along the first canonical pair when ``ρ₁ > ρ₂``.  So
    the only maximizers are collapsed, unless canonical correlations tie (Ren & Li's noiseless model:
    every latent direction has ``ρ = 1``).  Directions whose variance is below ``rel_tol`` times the
    largest (numerically null, e.g. float32 text embeddings of a few hundred distinct captions) are
    dropped.  Returns ``ρ`` (descending) and the first modality's canonical directions.  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For features that are not 2-D, differ in their number of rows, or a ``rel_tol`` outside (0, 1).
    """
    a = np.asarray(features_a, dtype=np.float64)
    b = np.asarray(features_b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or len(a) != len(b) or len(a) < 2:
        raise ParameterError(
            f"features_a {a.shape} and features_b {b.shape} must be 2-D with the same number (>= 2) of rows"
        )
    rel_tol = positive_float("rel_tol", rel_tol)
    if rel_tol >= 1:
        raise ParameterError(f"rel_tol={rel_tol} must lie in (0, 1)")
    mean = a.mean(0)
    ca, cb = a - mean, b - b.mean(0)
    wa, _ = _whitening(ca, rel_tol)
    wb, _ = _whitening(cb, rel_tol)
    K = (ca @ wa).T @ (cb @ wb) / len(a)
    U, s, _ = np.linalg.svd(K, full_matrices=False)
    return CanonicalPairs(rho=s, directions=wa @ U, mean=mean)


def top_direction_overlap(embeddings: torch.Tensor, variate: np.ndarray | torch.Tensor) -> np.ndarray:
    """|corr| between the first principal component of each run's embeddings and a fixed ``variate``.

    ``embeddings`` (R, n, k), ``variate`` (n,) (e.g. the first canonical variate of the frozen image
    features, :meth:`CanonicalPairs.variates`) → (R,) values in [0, 1].  A non-contrastive linear head
    at the maximizer of Ren & Li's Eq. 4 under the scalar normalization is rank one along the first
    canonical pair (:func:`canonical_correlations`), so its overlap is 1.  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For mismatched shapes or a constant ``variate``.
    """
    f = torch.as_tensor(embeddings).double()
    v = torch.as_tensor(np.asarray(variate, dtype=np.float64)).to(f.device)
    if f.dim() != 3 or v.dim() != 1 or v.shape[0] != f.shape[1]:
        raise ParameterError(
            f"embeddings {tuple(f.shape)} must be (R, n, k) and variate {tuple(v.shape)} (n,)"
        )
    v = v - v.mean()
    if float(v.norm()) == 0.0:
        raise ParameterError("variate is constant; its correlation is undefined")
    f = f - f.mean(1, keepdim=True)
    _, vecs = torch.linalg.eigh(f.transpose(1, 2) @ f)
    pc = (f @ vecs[:, :, -1:])[..., 0]
    corr = (pc @ v) / (pc.norm(dim=1) * v.norm()).clamp_min(1e-300)
    return corr.abs().cpu().numpy()
