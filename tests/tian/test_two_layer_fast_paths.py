"""The faster formulations in nlcl.tian (one pre-activation, in-place draws, RK45 without stored steps,
velocities computed once) give the numbers of the formulations they replace: bitwise where
only elementwise work moved, to float64 rounding where a product reads a new memory layout."""

import math

import numpy as np
import pytest
import torch
from scipy.integrate import solve_ivp

from nlcl.tian.two_layer_study import two_view_parts, two_view_seed, winner_rule_agreement
from nlcl.tian.two_layer_theory import (
    binary_latent_tokens,
    blowup_time,
    gated_inputs,
    hidden_and_gated,
    hidden_two_layer,
    latent_token_draw,
    modulated_basin_fractions,
    rk45_final,
)
from nlcl.tian.two_view_bn import _corollary3_two_view, bn_moments, two_view_binary_tokens, two_view_velocity

SCALES = [0.1, 1.0, 3.0, 10.0]


@pytest.mark.parametrize("act", ["linear", "relu", "leaky_relu", "quadratic", "tanh"])
def test_hidden_and_gated_equals_the_two_functions(act):
    g = torch.Generator().manual_seed(0)
    W, x = (
        torch.randn(3, 2, 5, generator=g, dtype=torch.float64),
        torch.randn(50, 3, 5, generator=g, dtype=torch.float64),
    )
    f, xt = hidden_and_gated(W, x, act)
    assert torch.equal(f, hidden_two_layer(W, x, act)) and torch.equal(xt, gated_inputs(W, x, act))


def _old_binary_latent_tokens(n, K, d, generator, scales=None, noise=0.3, shared_noise=0.0):
    z, onehot = latent_token_draw(n, K, d, generator=generator)
    x = onehot + noise * torch.randn(n, K, d, generator=generator)
    if shared_noise > 0:
        x = x + shared_noise * torch.randn(n, 1, d, generator=generator)
    if scales is not None:
        x = x * torch.as_tensor(scales)[None, :, None]
    return x, z


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kw", [{}, {"scales": SCALES}, {"shared_noise": 0.3}])
def test_binary_latent_tokens_equals_the_out_of_place_formulation(dtype, kw):
    old_default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        new = binary_latent_tokens(300, 4, 6, generator=torch.Generator().manual_seed(2), **kw)
        old = _old_binary_latent_tokens(300, 4, 6, torch.Generator().manual_seed(2), **kw)
    finally:
        torch.set_default_dtype(old_default)
    assert new[0].dtype == old[0].dtype and torch.equal(new[0], old[0]) and torch.equal(new[1], old[1])
    z, onehot = latent_token_draw(300, 4, 6, generator=torch.Generator().manual_seed(2))
    tok = torch.argmax(onehot, -1)
    assert torch.equal(onehot, torch.nn.functional.one_hot(tok, 6).double())


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_two_view_binary_tokens_equals_the_concatenated_views(gain):
    g = torch.Generator().manual_seed(3)
    x, z = two_view_binary_tokens(
        200, 4, 6, generator=torch.Generator().manual_seed(3), scales=SCALES, gain=gain
    )
    z0, onehot = latent_token_draw(200, 4, 6, generator=g)
    v1 = onehot + 0.3 * torch.randn(200, 4, 6, generator=g)
    v2 = gain * (onehot + 0.3 * torch.randn(200, 4, 6, generator=g))
    ref = torch.cat([v1, v2], 0) * torch.as_tensor(SCALES, dtype=torch.float64)[None, :, None]
    assert torch.equal(x, ref) and torch.equal(z, z0)


def test_two_view_binary_tokens_rf_major_holds_the_same_values():
    kw = dict(generator=None, scales=SCALES, gain=2.0)
    kw["generator"] = torch.Generator().manual_seed(4)
    x, z = two_view_binary_tokens(500, 4, 6, **kw)
    kw["generator"] = torch.Generator().manual_seed(4)
    xr, zr = two_view_binary_tokens(500, 4, 6, rf_major=True, **kw)
    assert torch.equal(x, xr) and torch.equal(z, zr) and xr.transpose(0, 1).is_contiguous()


def test_rk45_final_equals_solve_ivp():
    y0 = np.random.default_rng(0).standard_normal(40)
    fun = lambda t, y: -(y**3) + np.sin(y)  # noqa: E731
    ref = solve_ivp(fun, (0.0, 5.0), y0, method="RK45", rtol=1e-6, atol=1e-8).y[:, -1]
    assert np.array_equal(rk45_final(fun, y0, 5.0, rtol=1e-6, atol=1e-8), ref)


def _old_basin_fractions(d, cs, n_init, seed, b=1.5):
    rng = np.random.default_rng(seed)
    w0 = rng.standard_normal((n_init, d))
    w0 /= np.linalg.norm(w0, axis=1, keepdims=True)
    out = []
    for c in cs:
        bonus = np.zeros(d)
        bonus[0] = float(c)

        def rhs(t, y):
            w = y.reshape(n_init, d)
            g = (w + b + bonus) * w
            g -= w * (w * g).sum(1, keepdims=True)
            return g.reshape(-1)

        wT = solve_ivp(rhs, (0.0, 60.0), w0.reshape(-1), method="RK45", rtol=1e-6, atol=1e-8).y[:, -1]
        out.append(float((wT.reshape(n_init, d)[:, 0] > 0.9).mean()))
    return out


def test_modulated_basin_fractions_equals_solve_ivp_formulation():
    assert modulated_basin_fractions(5, [-0.5, 0.0, 0.5], n_init=200, seed=4) == _old_basin_fractions(
        5, [-0.5, 0.0, 0.5], 200, 4
    )


def test_winner_rule_agreement_equals_solve_ivp_formulation():
    n_init, seed, d, b = 150, 9, 8, 1.5
    agree, total = 0, 0
    for cc in (0.0, 0.5, 1.0):
        w0 = np.random.default_rng(seed).standard_normal((n_init, d))
        w0 /= np.linalg.norm(w0, axis=1, keepdims=True)
        bl = np.full(d, b)
        bl[0] += cc

        def rhs(t, y, bl=bl):
            w = y.reshape(n_init, d)
            g = (w + bl) * w
            g -= w * (w * g).sum(1, keepdims=True)
            return g.reshape(-1)

        wT = solve_ivp(rhs, (0.0, 60.0), w0.reshape(-1), method="RK45", rtol=1e-6, atol=1e-8).y[:, -1]
        wT = wT.reshape(n_init, d)
        act = np.where(wT.max(1) > 0.9, wT.argmax(1), -1)
        pred = np.argmin(blowup_time(w0, bl[None, :]), axis=1)
        agree += int((pred[act >= 0] == act[act >= 0]).sum())
        total += int((act >= 0).sum())
    assert winner_rule_agreement(n_init, seed)[0] == agree / total


@pytest.mark.parametrize("pooled", [True, False])
def test_two_view_parts_with_velocity_at_hand_and_bn_moments(pooled):
    g = torch.Generator().manual_seed(5)
    x, z = two_view_binary_tokens(300, 4, 6, generator=g, scales=SCALES, gain=2.0)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=torch.float64), dim=-1)
    vel = two_view_velocity(W, x, "relu", bn="pooled" if pooled else "view")
    assert two_view_parts(x, z, W, "relu", pooled, velocity=vel) == two_view_parts(x, z, W, "relu", pooled)
    out, f, mu = _corollary3_two_view(W, x, z, "relu", pooled, 1e-5)
    mu0, var0 = bn_moments(hidden_two_layer(W, x, "relu"), pooled)
    assert torch.equal(f, hidden_two_layer(W, x, "relu")) and torch.equal(mu, mu0)
    assert torch.equal(out["sigma2"], var0)


def test_two_view_seed_runs_on_a_small_sample():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as the chapter
    try:
        row, no_bn, sig = two_view_seed(torch.Generator().manual_seed(6), 400, SCALES, "relu")
    finally:
        torch.set_default_dtype(old)
    assert 0 < row["speed"] and 0 < no_bn and sig >= 0


@pytest.mark.parametrize("act", ["linear", "relu", "leaky_relu", "quadratic", "tanh"])
@pytest.mark.parametrize("M", [1, 2])
def test_gated_inputs_written_row_major_equal_the_broadcast_product(act, M):
    from nlcl.core.activations import get_activation

    g = torch.Generator().manual_seed(7)
    W, x = (
        torch.randn(3, M, 5, generator=g, dtype=torch.float64),
        torch.randn(40, 3, 5, generator=g, dtype=torch.float64),
    )
    pre = torch.einsum("nkd,kmd->nkm", x, W)
    old = (get_activation(act).gate(pre)[..., None] * x[:, :, None, :]).reshape(40, -1)
    new = gated_inputs(W, x, act)
    assert new.is_contiguous() and torch.equal(new, old)


def _same(a, b):
    """Equal to float64 rounding (a few ulps). These rewrites change memory layouts, not arithmetic;
    they gave bitwise the old numbers on the AMD EPYC where they were measured (MKL's generic branch),
    but a BLAS may round a contiguous and a strided layout of the same operands differently, so a
    test that demands equal bits would fail on another CPU for no fault of the code."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif torch.is_tensor(a):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    else:
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (a, b)


def test_two_view_pass_equals_separate_calls():
    from nlcl.tian.two_view_bn import TwoViewPass

    g = torch.Generator().manual_seed(8)
    x, _ = two_view_binary_tokens(300, 4, 6, generator=g, scales=SCALES, gain=2.0)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=torch.float64), dim=-1)
    p = TwoViewPass(W, x, "relu")
    for bn, retain in (("pooled", True), (None, True), ("view", False)):
        new, old = p.velocity(bn, retain=retain), two_view_velocity(W, x, "relu", bn=bn)
        _same(tuple(new), tuple(old))
    f, xt = p.hidden_and_gated()
    f0, xt0 = hidden_and_gated(W, x, "relu")
    _same((f, xt.reshape(xt0.shape)), (f0, xt0))
    assert p.hidden_and_gated()[1] is xt
    xr, _ = two_view_binary_tokens(
        300, 4, 6, generator=torch.Generator().manual_seed(8), scales=SCALES, gain=2.0, rf_major=True
    )
    f, xt = TwoViewPass(W, xr, "relu").hidden_and_gated()
    _same((f, xt.reshape(xt0.shape)), (f0, xt0))
    assert xt.transpose(0, 1).is_contiguous()


def _old_two_view_seed(generator, n_samples, scales, activation):
    """two_view_seed before TwoViewPass: every forward pass and gated input made per call."""
    x7, z7 = two_view_binary_tokens(n_samples, 4, 6, generator=generator, scales=scales, gain=2.0)
    W7 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=generator), dim=-1)
    x7u = x7 / torch.as_tensor(scales)[None, :, None]
    vel = {
        (bn, u): two_view_velocity(W7, xx, activation, bn=bn)
        for bn in ("pooled", None)
        for u, xx in ((False, x7), (True, x7u))
    }
    pooled_r = two_view_parts(x7, z7, W7, activation, True, velocity=vel["pooled", False])
    view_r = two_view_parts(x7, z7, W7, activation, False)
    row = {k: pooled_r[k] for k in ("p1", "p2", "p3")}
    row["view_p2"], row["view_p3"], row["view_share"] = view_r["p2"], view_r["p3"], pooled_r["share"]
    x7e, z7e = two_view_binary_tokens(n_samples, 4, 6, generator=generator, scales=scales, gain=1.0)
    exch = two_view_parts(x7e, z7e, W7, activation, True)
    row["exch_p1"], row["exch_p2"], row["exch_p3"] = exch["p1"], exch["p2"], exch["p3"]
    v_rf = {key: v[0].norm(dim=-1) for key, v in vel.items()}
    row["speed"] = float(v_rf["pooled", False].min() / v_rf["pooled", False].max()) / float(
        v_rf[None, True].min() / v_rf[None, True].max()
    )
    row["scale_effect"] = float((v_rf["pooled", False] / v_rf["pooled", True]).min())
    scale_no_bn = float((v_rf[None, False] / v_rf[None, True]).min())
    f7 = hidden_two_layer(W7, x7, activation)
    sig_ratio = float((bn_moments(f7, True)[1][0] / bn_moments(f7, False)[1][0] - 1).abs().max())
    return row, scale_no_bn, sig_ratio


@pytest.mark.parametrize(
    ("act", "n"), [("relu", 2000), ("leaky_relu", 2000), ("quadratic", 2000), ("relu", 60_000)]
)
def test_two_view_seed_equals_the_formulation_without_shared_passes(act, n):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # as the chapter
    try:
        new = two_view_seed(torch.Generator().manual_seed(9), n, SCALES, act)
        ref = _old_two_view_seed(torch.Generator().manual_seed(9), n, SCALES, act)
    finally:
        torch.set_default_dtype(old)
    _same(new, ref)


def _old_corollary3_two_view(W, x, z, activation, pooled, eps):
    """_corollary3_two_view before the per-RF blocks: x̃^bn scaled in place, C_α[x̃_k^bn] per strided column."""
    from nlcl.tian.contrastive import contrastive_covariance
    from nlcl.tian.two_layer_theory import theorem5_from_moments

    K, _, d = W.shape
    n = x.shape[0] // 2
    f, xt = hidden_and_gated(W, x, activation)
    mu, var = bn_moments(f, pooled, eps)
    xt = xt.reshape(2 * n, K, d).mul_(torch.rsqrt(var)[..., None])
    A = torch.stack([contrastive_covariance(xt[:, k]) for k in range(K)])
    zz = torch.cat([z, z])
    Delta = xt[zz].mean(0) - xt[~zz].mean(0)
    p1 = z.double().mean().item()
    L = A - (1 - p1) * p1 * torch.einsum("ki,kj->kij", Delta, Delta)
    out = theorem5_from_moments(W[:, 0, :], A, L, Delta, 1 - p1, p1)
    out["sigma2"] = var
    return out, f, mu


@pytest.mark.parametrize("pooled", [True, False])
@pytest.mark.parametrize("n", [6, 300, 4100])
def test_corollary3_two_view_per_rf_blocks_equal_the_strided_columns(pooled, n):
    g = torch.Generator().manual_seed(10 + n)
    x, z = two_view_binary_tokens(n, 4, 6, generator=g, scales=SCALES, gain=2.0)
    W = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=torch.float64), dim=-1)
    if not 0 < z.double().mean() < 1:
        pytest.skip("one class only")
    new, f, mu = _corollary3_two_view(W, x, z, "relu", pooled, 1e-5)
    old, f0, mu0 = _old_corollary3_two_view(W, x, z, "relu", pooled, 1e-5)
    _same((f, mu, new), (f0, mu0, old))


def _old_cov(a):
    c = a - a.mean(0)
    return c.T @ c / a.shape[0]


def _old_lemma5(W, x, z, act):
    """lemma5_decomposition before the in-place centring: a centred copy per covariance, means twice."""
    p1 = z.double().mean().item()
    p0 = 1 - p1
    K, M, d = W.shape
    xt = gated_inputs(W, x, act)
    x1, x0 = xt[z], xt[~z]
    V = _old_cov(xt)
    L = (p0 * _old_cov(x0) + p1 * _old_cov(x1)) * torch.block_diag(
        *[torch.ones(M * d, M * d, dtype=xt.dtype)] * K
    )
    Delta = x1.mean(0) - x0.mean(0)
    between = p0 * p1 * torch.outer(Delta, Delta)
    return dict(V=V, L=L, between=between, Delta=Delta, residual=float((V - L - between).norm() / V.norm()))


def _old_theorem5_moments(W, x, z, act, sigma2=None):
    """The moments of theorem5_prediction / corollary3_prediction before the in-place centring."""
    n, K, d = x.shape
    xt = gated_inputs(W, x, act).reshape(n, K, d)
    if sigma2 is not None:
        xt = xt / sigma2.sqrt()[None, :, None]

    def cov(a):
        c = a - a.mean(0)
        return torch.einsum("nki,nkj->kij", c, c) / a.shape[0]

    p1 = z.double().mean().item()
    x1, x0 = xt[z], xt[~z]
    return dict(A=cov(xt), L=(1 - p1) * cov(x0) + p1 * cov(x1), Delta=x1.mean(0) - x0.mean(0))


@pytest.mark.parametrize("act", ["relu", "quadratic"])
@pytest.mark.parametrize("n", [50, 3000])
def test_in_place_centring_gives_the_moments_of_the_centred_copies(act, n):
    from nlcl.tian.two_layer_theory import corollary3_prediction, lemma5_decomposition, theorem5_prediction

    g = torch.Generator().manual_seed(11 + n)
    x, z = binary_latent_tokens(n, 4, 6, generator=g, scales=SCALES, shared_noise=0.3)
    W2 = torch.randn(4, 2, 6, generator=g, dtype=torch.float64)
    W1 = torch.nn.functional.normalize(torch.randn(4, 1, 6, generator=g, dtype=torch.float64), dim=-1)
    new, old = lemma5_decomposition(W2, x, z, act), _old_lemma5(W2, x, z, act)
    _same({k: new[k] for k in old}, old)
    t5, c3 = theorem5_prediction(W1, x, z, act), corollary3_prediction(W1, x, z, act, 1e-5)
    for new, sigma2 in ((t5, None), (c3, c3["sigma2"])):
        old = _old_theorem5_moments(W1, x, z, act, sigma2)
        _same({k: new[k] for k in old}, old)
