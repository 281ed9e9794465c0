"""Tests for the canonical-correlation diagnostics (nlcl.renli.canonical) and the optimizers of nlcl.renli.heads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.renli.canonical import CanonicalPairs, canonical_correlations, top_direction_overlap
from nlcl.renli.heads import OPTIMIZERS, train_heads


def _pairs(seed: int, n: int = 400, r: int = 3, d_a: int = 6, d_b: int = 8, noise: float = 0.5):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, r))
    x = z @ rng.standard_normal((r, d_a)) + noise * rng.standard_normal((n, d_a))
    t = z @ rng.standard_normal((r, d_b)) + noise * rng.standard_normal((n, d_b))
    return x, t, rng


def _nc_objective(x: np.ndarray, t: np.ndarray, A: np.ndarray, B: np.ndarray) -> float:
    """E⟨f_A, f_B⟩ with the centred scalar normalization of Ren & Li, Eq. 2 (population of the sample)."""
    fa, fb = x @ A, t @ B
    fa, fb = fa - fa.mean(0), fb - fb.mean(0)
    fa /= np.sqrt((fa**2).sum(1).mean())
    fb /= np.sqrt((fb**2).sum(1).mean())
    return float((fa * fb).sum(1).mean())


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 5))
def test_nc_objective_is_bounded_by_the_first_canonical_correlation(seed, k):
    x, t, rng = _pairs(seed)
    cp = canonical_correlations(x, t)
    assert isinstance(cp, CanonicalPairs) and np.all(np.diff(cp.rho) <= 1e-12) and cp.rho[0] <= 1 + 1e-12
    A, B = rng.standard_normal((6, k)), rng.standard_normal((8, k))
    assert _nc_objective(x, t, A, B) <= cp.rho[0] + 1e-9
    # the first canonical variate, paired with its best linear prediction from t, attains rho_1
    u = cp.variates(x, 1)
    tc = t - t.mean(0)
    b = np.linalg.lstsq(tc, u - u.mean(0), rcond=None)[0]
    assert _nc_objective(x, t, np.eye(6) @ cp.directions[:, :1], b) == pytest.approx(cp.rho[0], abs=1e-9)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000))
def test_canonical_correlations_are_invariant_under_invertible_maps(seed):
    x, t, rng = _pairs(seed)
    # well-conditioned invertible maps: orthogonal times a diagonal in [0.5, 2]
    Ga = np.linalg.qr(rng.standard_normal((6, 6)))[0] * rng.uniform(0.5, 2.0, 6)
    Gb = np.linalg.qr(rng.standard_normal((8, 8)))[0] * rng.uniform(0.5, 2.0, 8)
    a, b = canonical_correlations(x, t).rho, canonical_correlations(x @ Ga + 2.0, t @ Gb - 1.0).rho
    assert np.allclose(a, b, atol=1e-8)


def test_canonical_correlations_exact_cases_and_errors():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4))
    assert canonical_correlations(x, x @ rng.standard_normal((4, 7))).rho[0] == pytest.approx(1.0, abs=1e-9)
    u, v = rng.standard_normal(300), rng.standard_normal(300)
    w = u + 0.5 * v
    assert canonical_correlations(u[:, None], w[:, None]).rho[0] == pytest.approx(
        abs(np.corrcoef(u, w)[0, 1]), abs=1e-12
    )
    with pytest.raises(ParameterError, match="same number"):
        canonical_correlations(x, x[:10])
    with pytest.raises(ParameterError, match="rel_tol"):
        canonical_correlations(x, x, rel_tol=2.0)


def test_top_direction_overlap():
    g = torch.Generator().manual_seed(0)
    v = torch.randn(200, generator=g, dtype=torch.float64)
    w = torch.randn(5, generator=g, dtype=torch.float64)
    collapsed = (v[:, None] * w)[None] + 1e-3 * torch.randn(1, 200, 5, generator=g, dtype=torch.float64)
    spread = torch.randn(1, 200, 5, generator=g, dtype=torch.float64)
    out = top_direction_overlap(torch.cat([collapsed, spread]), v.numpy())
    assert out.shape == (2,) and out[0] == pytest.approx(1.0, abs=1e-5) and out[1] < 0.5
    with pytest.raises(ParameterError, match="constant"):
        top_direction_overlap(collapsed, np.ones(200))
    with pytest.raises(ParameterError, match="must be"):
        top_direction_overlap(collapsed, v.numpy()[:10])


def test_gradient_descent_optimizer():
    assert OPTIMIZERS == ("adam", "gd")
    g = torch.Generator().manual_seed(0)
    img, txt = torch.randn(64, 6, generator=g), torch.randn(8, 5, generator=g)
    cap = torch.randint(0, 8, (64,), generator=g)
    kw = dict(width=8, d_out=4, steps=3, batch_size=16, heads="linear", progress=False)
    gd = train_heads(img, txt, cap, [0.0, 1.0], [0, 1], optimizer="gd", lr=0.5, **kw)
    adam = train_heads(img, txt, cap, [0.0, 1.0], [0, 1], optimizer="adam", lr=0.5, **kw)
    assert not torch.allclose(gd.image_heads.weight, adam.image_heads.weight)
    # lr -> 0: gradient descent leaves the initialization unchanged
    still = train_heads(img, txt, cap, [0.0], [0], optimizer="gd", lr=1e-30, **kw)
    start = train_heads(img, txt, cap, [0.0], [0], optimizer="gd", lr=1e-30, **{**kw, "steps": 1})
    assert torch.allclose(still.image_heads.weight, start.image_heads.weight)
    with pytest.raises(ParameterError, match="optimizer"):
        train_heads(img, txt, cap, [1.0], [0], optimizer="sgd-momentum", **kw)
