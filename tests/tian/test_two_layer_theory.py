"""Tests for nlcl.tian.two_layer_theory: closed-form two-layer dynamics (Tian 2023, Lemma 4, Theorems 5-6)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.contrastive import infonce_alpha, split_views
from nlcl.tian.two_layer_theory import (
    binary_latent_tokens,
    blowup_time,
    blowup_winners,
    corollary3_prediction,
    energy_two_layer,
    eq147_solution,
    gated_inputs,
    hidden_two_layer,
    lemma4_dynamics,
    lemma5_decomposition,
    modulated_basin_fractions,
    project_out,
    theorem5_prediction,
    top_mode_velocity,
)


@settings(max_examples=12)
@given(st.sampled_from(["linear", "relu", "leaky_relu", "quadratic"]), st.integers(0, 10**6), st.booleans())
def test_lemma4_equals_autograd(act, seed, infonce):
    g = torch.Generator().manual_seed(seed)
    K, M, d, N = 3, 2, 4, 8
    W = torch.randn(K, M, d, generator=g, dtype=torch.float64, requires_grad=True)
    V = torch.randn(3, K * M, generator=g, dtype=torch.float64, requires_grad=True)
    x = torch.randn(2 * N, K, d, generator=g, dtype=torch.float64)
    alpha = None
    if infonce:
        f1, f2 = split_views(hidden_two_layer(W, x, act) @ V.T)
        alpha = infonce_alpha(f1, f2, 0.5)
    gW, gV = torch.autograd.grad(energy_two_layer(W, V, x, act, alpha), [W, V])
    Vd, Wd = lemma4_dynamics(W.detach(), V.detach(), x, act, alpha)
    assert torch.allclose(gV, Vd, atol=1e-10) and torch.allclose(gW, Wd, atol=1e-10)


@settings(max_examples=10)
@given(st.sampled_from(["linear", "relu", "leaky_relu"]), st.integers(0, 10**6))
def test_homogeneous_hidden_equals_w_dot_gated_input(act, seed):
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)
    x = torch.randn(5, 2, 4, generator=g, dtype=torch.float64)
    xt = gated_inputs(W, x, act).reshape(5, 2, 3, 4)
    assert torch.allclose(hidden_two_layer(W, x, act).reshape(5, 2, 3), (xt * W).sum(-1))


def test_project_out_is_orthogonal():
    w, v = torch.randn(4, 6, dtype=torch.float64), torch.randn(4, 6, dtype=torch.float64)
    assert torch.allclose((project_out(w, v) * w).sum(-1), torch.zeros(4, dtype=torch.float64), atol=1e-12)


def test_theorem5_matches_autograd_on_a_large_sample():
    g = torch.Generator().manual_seed(3)
    n, K, d = 100_000, 3, 5
    z = torch.rand(n, generator=g) < 0.4
    pis = torch.rand(2, K, d, generator=g) ** 3
    pis = pis / pis.sum(-1, keepdim=True)
    tok = torch.where(
        z[:, None],
        torch.multinomial(pis[1], n, True, generator=g).T,
        torch.multinomial(pis[0], n, True, generator=g).T,
    )
    x = torch.nn.functional.one_hot(tok, d).double() + 0.3 * torch.randn(
        n, K, d, generator=g, dtype=torch.float64
    )
    W = torch.nn.functional.normalize(torch.randn(K, 1, d, generator=g, dtype=torch.float64), dim=-1)
    pred = theorem5_prediction(W, x, z)
    Wr = W.clone().requires_grad_()
    f1 = hidden_two_layer(Wr, x)
    c = f1 - f1.mean(0)
    C = c.T @ c / n
    s = torch.linalg.eigh(C.detach())[1][:, -1]
    (gW,) = torch.autograd.grad(0.5 * s @ C @ s, Wr)
    auto = project_out(W[:, 0], gW[:, 0])
    assert abs(float(s @ pred["s"])) > 0.999
    assert float((auto - pred["wdot"]).norm() / auto.norm()) < 0.05
    assert bool((pred["delta"] >= 0).all())
    with pytest.raises(ValueError, match="M = 1"):
        theorem5_prediction(torch.zeros(3, 2, 5), x, z)


def test_modulation_enlarges_the_basin():
    f = modulated_basin_fractions(6, [0.0, 1.0], n_init=300, seed=1)
    assert f[1] > f[0]


def test_binary_latent_tokens_is_seeded_one_hot_plus_noise():
    x, z = binary_latent_tokens(200, 3, 5, generator=torch.Generator().manual_seed(0), noise=0.0)
    assert x.shape == (200, 3, 5) and x.dtype == torch.float64 and z.shape == (200,) and z.dtype == torch.bool
    assert torch.equal(x.sum(-1), torch.ones(200, 3)) and 0 < int(z.sum()) < 200
    x2, z2 = binary_latent_tokens(
        200, 3, 5, generator=torch.Generator().manual_seed(0), noise=0.0, scales=[1, 2, 3]
    )
    assert torch.equal(z2, z) and torch.equal(x2, x * torch.tensor([1.0, 2.0, 3.0])[None, :, None])


def test_top_mode_velocity_is_tangent_and_bn_removes_input_scale():
    """Corollary 3 (Tian 2023): with BatchNorm (ε → 0) the velocity of w_k does not depend on the scale of x_k."""
    g = torch.Generator().manual_seed(1)
    x, _ = binary_latent_tokens(400, 4, 6, generator=g)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=torch.float64), dim=-1)
    wdot, s = top_mode_velocity(W, x, "relu")
    assert wdot.shape == (4, 6) and s.shape == (4,)
    torch.testing.assert_close(
        (wdot * W[:, 0]).sum(-1), torch.zeros(4, dtype=torch.float64), atol=1e-12, rtol=0
    )
    scaled = x * torch.tensor([0.1, 1.0, 3.0, 10.0], dtype=torch.float64)[None, :, None]
    bn = (True, False, 1e-12)
    speed = top_mode_velocity(W, x, "relu", bn=bn)[0].norm(dim=-1)
    torch.testing.assert_close(top_mode_velocity(W, scaled, "relu", bn=bn)[0].norm(dim=-1), speed)
    plain = top_mode_velocity(W, scaled, "relu")[0].norm(dim=-1)
    assert float(plain.max() / plain.min()) > 10 * float(speed.max() / speed.min())


@settings(max_examples=8)
@given(st.integers(0, 10**6), st.sampled_from(["relu", "quadratic"]))
def test_lemma5_total_variance_off_diagonal(seed, act):
    """V = E_z V[·|z] + p0p1ΔΔᵀ exactly; the residual is the off-diagonal within-class blocks."""
    g = torch.Generator().manual_seed(seed)
    x, z = binary_latent_tokens(400, 3, 4, generator=g)
    W = torch.randn(3, 2, 4, generator=g, dtype=torch.float64)
    out = lemma5_decomposition(W, x, z, act)
    p0, p1 = out["p0"], out["p1"]
    xt = gated_inputs(W, x, act)

    def cov(a):
        c = a - a.mean(0)
        return c.T @ c / len(a)

    within = p0 * cov(xt[~z]) + p1 * cov(xt[z])
    assert torch.allclose(out["V"], within + out["between"], atol=1e-10)
    assert out["residual"] == pytest.approx(float((within - out["L"]).norm() / out["V"].norm()), rel=1e-9)


def test_lemma5_residual_small_with_ci_large_without():
    g = torch.Generator().manual_seed(0)
    x, z = binary_latent_tokens(20000, 3, 4, generator=g)
    xs, zs = binary_latent_tokens(20000, 3, 4, generator=g, shared_noise=0.5)
    W = torch.randn(3, 1, 4, generator=g, dtype=torch.float64)
    assert lemma5_decomposition(W, x, z)["residual"] < 0.05 < lemma5_decomposition(W, xs, zs)["residual"]
    with pytest.raises(ParameterError, match="shared_noise"):
        binary_latent_tokens(10, 2, 3, generator=g, shared_noise=-1.0)
    with pytest.raises(ParameterError, match="both classes"):
        lemma5_decomposition(W, x[:5], torch.zeros(5, dtype=torch.bool))


@settings(max_examples=20)
@given(st.floats(0.01, 5.0), st.floats(0.1, 3.0), st.floats(0.0, 0.95))
def test_eq147_solves_eq146_and_blows_up_at_tstar(y0, b, frac):
    ts = blowup_time(y0, b)
    t = frac * ts
    y = eq147_solution(y0, b, t)
    h = 1e-6 * max(ts, 1e-3)
    dy = (eq147_solution(y0, b, t + h) - eq147_solution(y0, b, t - h)) / (2 * h) if t > h else None
    if dy is not None:
        assert dy == pytest.approx((y + b) * y, rel=1e-4, abs=1e-6)
    assert abs(eq147_solution(y0, b, ts * (1 - 1e-9))) > 1e6


def test_blowup_time_negative_and_bad_b():
    assert np.isinf(blowup_time(-0.5, 1.0)) and np.isinf(blowup_time(0.0, 1.0))
    with pytest.raises(ParameterError, match="b must"):
        blowup_time(1.0, 0.0)
    with pytest.raises(ParameterError, match="y0"):
        eq147_solution(-2.0, 1.0, 0.0)


def test_blowup_winners_mostly_argmin():
    pred, act = blowup_winners(4, 0.5, n_init=60, seed=0, t_max=40.0)
    ok = act >= 0
    assert ok.mean() > 0.8 and (pred[ok] == act[ok]).mean() > 0.6


def test_corollary3_matches_theorem5_on_rescaled_inputs():
    """BN closed form = Theorem 5 with x̃_k/σ_k; σ_k² pooled over all rows (Eq. 165); scale-free."""
    g = torch.Generator().manual_seed(1)
    x, z = binary_latent_tokens(5000, 3, 4, generator=g)
    W = torch.nn.functional.normalize(torch.randn(3, 1, 4, generator=g, dtype=torch.float64), dim=-1)
    cf = corollary3_prediction(W, x, z, "relu")
    f = hidden_two_layer(W, x, "relu")
    assert torch.allclose(cf["sigma2"], f.var(0, unbiased=False))
    t5 = theorem5_prediction(W, x, z, "relu")
    assert torch.allclose(cf["d"], t5["d"] / cf["sigma2"])
    assert float(cf["lam"]) >= float(cf["d"].max())  # part (1)
    xs = x * torch.tensor([0.1, 1.0, 10.0])[None, :, None]
    cs = corollary3_prediction(W, xs, z, "relu")
    assert torch.allclose(cs["d"], cf["d"], rtol=1e-9) and torch.allclose(cs["s"], cf["s"], rtol=1e-8)
    with pytest.raises(ParameterError, match="eps"):
        corollary3_prediction(W, x, z, "relu", eps=-1.0)


def test_latent_token_draw_is_the_noise_free_part_of_binary_latent_tokens():
    from nlcl.tian.two_layer_theory import binary_latent_tokens, latent_token_draw

    z, onehot = latent_token_draw(40, 3, 5, generator=torch.Generator().manual_seed(1))
    x, z2 = binary_latent_tokens(40, 3, 5, generator=torch.Generator().manual_seed(1), noise=0.0)
    assert torch.equal(z, z2) and torch.equal(onehot, x)
    assert onehot.shape == (40, 3, 5) and (onehot.sum(-1) == 1).all()
