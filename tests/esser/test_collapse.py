"""Tests for nlcl.esser.collapse: Esser et al. (2024) losses (1)-(2), trace form (7), models."""

from __future__ import annotations

import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.blocks import axis_blocks
from nlcl.core.validate import ParameterError
from nlcl.esser.collapse import (
    KernelFeatureMap,
    collapse_horizon,
    collapse_ratio,
    init_two_layer,
    linear_output,
    output_covariance_spectrum,
    two_layer_output,
)
from nlcl.esser.losses import (
    LOSSES,
    alpha_cl_loss_matrix,
    contrastive_loss,
    loss_matrix,
    make_pairs,
    negatives_alpha,
    non_contrastive_loss,
    pair_matrix,
    ssl_loss,
    trace_loss,
)


def _data(seed: int, n: int, d: int, p: int | None = None, q: int | None = None):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    xp = torch.randn((n, d) if p is None else (n, p, d), generator=g, dtype=torch.float64)
    xn = torch.randn((n, d) if q is None else (n, q, d), generator=g, dtype=torch.float64)
    return x, xp, xn


@settings(max_examples=25)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 12),
    d=st.integers(1, 6),
    h=st.integers(1, 8),
    z=st.integers(1, 4),
    loss=st.sampled_from(LOSSES),
    reduction=st.sampled_from(["sum", "mean"]),
)
def test_trace_form_equals_losses(seed, n, d, h, z, loss, reduction):
    """Eq. 7: Σ-form losses (1), (2) of u = W2ᵀW1x equal Tr(W2ᵀW1 C W1ᵀW2), C̃ or its symmetric part."""
    x, xp, xn = _data(seed, n, d)
    g = torch.Generator().manual_seed(seed + 1)
    W1 = torch.randn(3, h, d, generator=g, dtype=torch.float64)
    W2 = torch.randn(3, h, z, generator=g, dtype=torch.float64)
    u, up, un = (two_layer_output(v, W1, W2) for v in (x, xp, xn))
    direct = ssl_loss(loss, u, up, un, reduction=reduction)
    Ct = pair_matrix(x, xp, xn, loss=loss, reduction=reduction)
    C = loss_matrix(x, xp, xn, loss=loss, reduction=reduction)
    assert torch.allclose(C, C.T)
    scale = 1 + direct.abs().max()
    assert torch.allclose(trace_loss(W1, W2, Ct), direct, atol=1e-9 * scale)
    assert torch.allclose(trace_loss(W1, W2, C), direct, atol=1e-9 * scale)


@settings(max_examples=20)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 8),
    d=st.integers(1, 5),
    p=st.integers(1, 4),
    q=st.integers(1, 4),
)
def test_multi_sample_trace_form(seed, n, d, p, q):
    """p positives, q negatives: loss Σᵢ u(xᵢ)ᵀ(Σⱼu(xᵢⱼ⁻) − Σⱼu(xᵢⱼ⁺)) = Tr(M C̃ Mᵀ)."""
    x, xp, xn = _data(seed, n, d, p, q)
    M = torch.randn(2, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    direct = (x @ M.T * ((xn @ M.T).sum(1) - (xp @ M.T).sum(1))).sum()
    Ct = pair_matrix(x, xp, xn)
    assert torch.allclose((M @ Ct * M).sum(), direct, atol=1e-9 * (1 + direct.abs()))
    direct_nc = -(x @ M.T * (xp @ M.T).sum(1)).sum()
    assert torch.allclose(
        (M @ pair_matrix(x, xp, loss="non_contrastive") * M).sum(),
        direct_nc,
        atol=1e-9 * (1 + direct_nc.abs()),
    )


def test_one_pair_multi_equals_single():
    x, xp, xn = _data(0, 5, 3)
    assert torch.allclose(pair_matrix(x, xp, xn), pair_matrix(x, xp[:, None], xn[:, None]))


def test_losses_known_values():
    u = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    up = torch.tensor([[1.0, 1.0], [0.0, 1.0]])
    un = torch.tensor([[3.0, 0.0], [1.0, 0.0]])
    assert contrastive_loss(u, up, un).item() == pytest.approx((1 * (3 - 1)) + (2 * (0 - 1)))
    assert non_contrastive_loss(u, up).item() == pytest.approx(-(1 + 2))
    assert non_contrastive_loss(u, up, reduction="mean").item() == pytest.approx(-1.5)


def test_loss_errors():
    u = torch.zeros(4, 2)
    with pytest.raises(ValueError, match="loss='bogus'"):
        ssl_loss("bogus", u, u, u)
    with pytest.raises(ValueError, match="u_neg=None"):
        ssl_loss("contrastive", u, u)
    with pytest.raises(ValueError, match="u_pos has shape"):
        contrastive_loss(u, torch.zeros(3, 2), u)
    with pytest.raises(ValueError, match="reduction"):
        contrastive_loss(u, u, u, reduction="max")
    with pytest.raises(ValueError, match="x_neg has shape"):
        pair_matrix(torch.zeros(4, 2), torch.zeros(4, 2), torch.zeros(4, 3))
    with pytest.raises(ValueError, match="C has shape"):
        trace_loss(torch.zeros(3, 2), torch.zeros(3, 1), torch.zeros(3, 3))


def test_two_layer_linear_and_activation():
    W1, W2 = init_two_layer(2, 50, 3, 2, generator=torch.Generator().manual_seed(0))
    x = torch.randn(7, 3, dtype=torch.float64)
    lin = two_layer_output(x, W1, W2)
    assert lin.shape == (2, 7, 2)
    assert torch.allclose(lin, x @ (W2.transpose(-1, -2) @ W1).transpose(-1, -2))
    th = two_layer_output(x, W1, W2, "tanh")
    assert torch.allclose(th, torch.tanh(x @ W1.transpose(-1, -2)) @ W2)
    with pytest.raises(ValueError, match="unknown activation"):
        two_layer_output(x, W1, W2, "swish")
    with pytest.raises(ValueError, match="last dimension must be d=3"):
        two_layer_output(torch.zeros(4, 2), W1, W2)


def test_linear_output():
    theta = torch.randn(4, 2, 3, dtype=torch.float64)
    x = torch.randn(5, 3, dtype=torch.float64)
    out = linear_output(x, theta)
    assert out.shape == (4, 5, 2)
    assert torch.allclose(out[1, 3], theta[1] @ x[3])
    with pytest.raises(ValueError, match="theta"):
        linear_output(torch.zeros(5, 2), theta)


def test_init_two_layer_orthogonal_and_errors():
    W1, W2 = init_two_layer(4, 20, 5, 3, generator=torch.Generator().manual_seed(1))
    eye5, eye3 = torch.eye(5, dtype=torch.float64), torch.eye(3, dtype=torch.float64)
    assert torch.allclose(W1.transpose(-1, -2) @ W1, eye5.expand(4, 5, 5), atol=1e-12)
    assert torch.allclose(W2.transpose(-1, -2) @ W2, eye3.expand(4, 3, 3), atol=1e-12)
    Wg, _ = init_two_layer(2, 20, 5, 3, kind="gaussian", generator=torch.Generator().manual_seed(1))
    assert Wg.shape == (2, 20, 5)
    with pytest.raises(ValueError, match="h >= k"):
        init_two_layer(1, 2, 5, 1)
    with pytest.raises(ValueError, match="h=-1"):
        init_two_layer(1, -1, 5, 1)
    with pytest.raises(ValueError, match="kind"):
        init_two_layer(1, 10, 5, 1, kind="xavier")


def test_init_is_deterministic():
    a = init_two_layer(2, 10, 3, 2, generator=torch.Generator().manual_seed(5))
    b = init_two_layer(2, 10, 3, 2, generator=torch.Generator().manual_seed(5))
    assert all(torch.equal(p, r) for p, r in zip(a, b))


def test_kernel_feature_map_approximates_rbf():
    fmap = KernelFeatureMap.fit(2, 4000, gamma=0.5, seed=0)
    x = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    approx = fmap(x) @ fmap(x).T
    assert torch.allclose(approx, fmap.kernel(x, x), atol=0.06)
    with pytest.raises(ValueError, match="n_features"):
        KernelFeatureMap.fit(2, 0)
    with pytest.raises(ValueError, match="last dimension must be d=2"):
        fmap(torch.zeros(3, 4))


def test_collapse_ratio():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(100, 1, generator=g, dtype=torch.float64)
    one_dim = a @ torch.tensor([[1.0, 2.0]], dtype=torch.float64)
    assert collapse_ratio(one_dim).item() < 1e-12
    iso = torch.randn(5000, 2, generator=g, dtype=torch.float64)
    assert 0.9 < collapse_ratio(iso).item() <= 1.0
    ev = output_covariance_spectrum(iso)
    assert ev[0] >= ev[1]
    with pytest.raises(ValueError, match="z >= 2"):
        collapse_ratio(a)


def test_make_pairs():
    x = torch.randn(50, 2, dtype=torch.float64)
    a, p, n = make_pairs(x, noise_var=0.1, generator=torch.Generator().manual_seed(0))
    assert torch.equal(a, x)
    assert torch.allclose(torch.sort(n[:, 0]).values, torch.sort(x[:, 0]).values)
    assert 0.02 < (p - x).var().item() < 0.3
    with pytest.raises(ValueError, match="noise_var"):
        make_pairs(x, noise_var=-1)


def test_expected_pair_matrix_is_minus_n_covariance():
    """E[C̃] = n(μμᵀ − E[xxᵀ]) = −n Cov(x) for x⁺ = x + ε and independent x⁻ (Section 'Evolution')."""
    g = torch.Generator().manual_seed(0)
    n, d, reps = 20, 3, 4000
    mu = torch.tensor([1.0, -0.5, 0.2], dtype=torch.float64)
    L = torch.tensor([[1.0, 0, 0], [0.5, 0.7, 0], [0.1, 0.2, 0.4]], dtype=torch.float64)
    x = mu + torch.randn(reps, n, d, generator=g, dtype=torch.float64) @ L.T
    xm = mu + torch.randn(reps, n, d, generator=g, dtype=torch.float64) @ L.T
    xp = x + 0.3 * torch.randn(reps, n, d, generator=g, dtype=torch.float64)
    mean_ct = (x.transpose(-1, -2) @ (xm - xp)).mean(0)
    assert torch.allclose(mean_ct, -n * L @ L.T, atol=0.35)


@settings(max_examples=20)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 10), d=st.integers(1, 5))
def test_alpha_cl_correspondence(seed, n, d):
    """C (Eq. 7) = −N² C_α[x] + ½(XᵀX − X⁺ᵀX⁺) with α the negatives' permutation (Tian 2023, Eq. 3)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    x, xp, xn, perm = make_pairs(x, noise_var=0.2, generator=g, return_perm=True)
    assert torch.allclose(
        alpha_cl_loss_matrix(x, xp, perm), loss_matrix(x, xp, xn), atol=1e-9 * (1 + x.abs().max() ** 2 * n)
    )


def test_negatives_alpha():
    a = negatives_alpha(torch.tensor([2, 0, 1]))
    assert torch.equal(a.sum(0), torch.ones(3, dtype=torch.float64)) and a[0, 2] == 1
    with pytest.raises(ValueError, match="permutation"):
        negatives_alpha(torch.tensor([0, 0, 1]))


def test_linearization_gap_small_sweep():
    """Theorem 1 at initialisation: the tanh gap shrinks with width; linear vs linear is zero."""
    from nlcl.esser.collapse import linearization_gap

    g = torch.Generator().manual_seed(0)
    x = torch.randn(20, 2, generator=g, dtype=torch.float64)
    x, xp, xn = make_pairs(x, generator=g)
    df = linearization_gap(
        x, xp, xn, widths=[4, 400], activations=["tanh", "linear"], n_init=4, steps=4, record_every=2
    )
    assert list(df.columns) == ["activation", "h", "init", "epoch", "gap", "gap_aligned"]
    assert sorted(df.epoch.unique()) == [0, 2, 4]
    assert (df[df.activation == "linear"].gap.abs() < 1e-12).all()
    assert (df.gap_aligned <= df.gap + 1e-12).all()
    init = df[(df.activation == "tanh") & (df.epoch == 0)].groupby("h").gap.mean()
    assert init[400] < init[4] / 10
    with pytest.raises(ValueError, match="h >= max"):
        linearization_gap(x, xp, xn, widths=[1], activations=["tanh"], n_init=1, steps=1)
    with pytest.raises(ValueError, match="unknown activation"):
        linearization_gap(x, xp, xn, widths=[4], activations=["gelu"], n_init=1, steps=1)


def test_initial_linearization_gap_equals_the_training_sweep_at_epoch_0():
    """The forward-pass-only gap draws the same networks as linearization_gap's epoch 0."""
    from nlcl.esser.collapse import initial_linearization_gap, linearization_gap

    g = torch.Generator().manual_seed(3)
    x = torch.randn(16, 2, generator=g, dtype=torch.float64)
    x, xp, xn = make_pairs(x, generator=g)
    kw = dict(widths=[4, 32], activations=["tanh", "sigmoid"], n_init=3, seed=5)
    trained = linearization_gap(x, xp, xn, steps=2, record_every=2, **kw)
    at_init = initial_linearization_gap(x, **kw)
    assert list(at_init.columns) == ["activation", "h", "init", "gap"]
    epoch0 = trained[trained.epoch == 0].drop(columns=["epoch", "gap_aligned"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(at_init, epoch0)
    # sigmoid keeps an order-one gap (½W₂ᵀ1), tanh's shrinks
    wide = initial_linearization_gap(x, widths=[8, 512], activations=["tanh", "sigmoid"], n_init=200)
    m = wide.groupby(["activation", "h"]).gap.mean()
    assert m["tanh", 512] < m["tanh", 8] / 10 and m["sigmoid", 512] > 0.2
    with pytest.raises(ValueError, match="h >= max"):
        initial_linearization_gap(x, widths=[1], activations=["tanh"], n_init=1)
    with pytest.raises(ValueError, match="n_init"):
        initial_linearization_gap(x, widths=[4], activations=["tanh"], n_init=0)
    with pytest.raises(ValueError, match="unknown activation"):
        initial_linearization_gap(x, widths=[4], activations=["gelu"], n_init=1)
    with pytest.raises(ValueError, match="expected"):
        initial_linearization_gap(x[0], widths=[4], activations=["tanh"], n_init=1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_linearization_gaps_in_blocks_equal_one_batch(monkeypatch, dtype):
    """Blocks of initialisations give the same bits as one batch (each is computed on its own)."""
    from nlcl.esser import collapse

    g = torch.Generator().manual_seed(4)
    x = torch.randn(12, 2, generator=g, dtype=torch.float64)
    x, xp, xn = make_pairs(x, generator=g)
    kw = dict(widths=[4, 40], activations=["tanh", "relu"], n_init=5, seed=2, dtype=dtype)
    one = collapse.linearization_gap(x, xp, xn, steps=3, record_every=1, **kw)
    one0 = collapse.initial_linearization_gap(x, **kw)
    monkeypatch.setattr(collapse, "INIT_BLOCK_ELEMENTS", 12 * 4)  # blocks of 2 and 3 at both widths
    assert len(axis_blocks(5, 12 * 40, collapse.INIT_BLOCK_ELEMENTS, min_size=2)) == 2
    pd.testing.assert_frame_equal(collapse.linearization_gap(x, xp, xn, steps=3, record_every=1, **kw), one)
    pd.testing.assert_frame_equal(collapse.initial_linearization_gap(x, **kw), one0)


@settings(max_examples=25)
@given(st.integers(1, 4), st.integers(0, 10_000))
def test_procrustes_rotation_recovers_an_orthogonal_map(z, seed):
    """a R = b for orthogonal R: the Procrustes solution is R (it attains zero distance)."""
    from nlcl.esser.collapse import procrustes_rotation

    g = torch.Generator().manual_seed(seed)
    a = torch.randn(2, 12, z, generator=g, dtype=torch.float64)
    R = torch.linalg.qr(torch.randn(2, z, z, generator=g, dtype=torch.float64))[0]
    got = procrustes_rotation(a, a @ R)
    assert torch.allclose(got.transpose(-1, -2) @ got, torch.eye(z, dtype=torch.float64).expand(2, z, z))
    assert torch.allclose(a @ got, a @ R, atol=1e-9)
    # z = 1: the sign of the output, u ↦ −u
    assert torch.allclose(
        procrustes_rotation(a[..., :1], -a[..., :1]), -torch.ones(2, 1, 1, dtype=torch.float64)
    )


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), d=st.integers(2, 6), lr=st.sampled_from([0.01, 0.05]))
def test_collapse_horizon_is_the_first_step_with_the_target_separation(seed, d, lr):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(d, d, generator=g, dtype=torch.float64)
    C = (a + a.T) / 2
    lam = torch.linalg.eigvalsh(C)
    if float(lam[1] - lam[0]) < 1e-3 or float(1 - 2 * lr * lam[-1]) <= 0:
        return
    T, sep = collapse_horizon(C, lr=lr, target=1e-6, max_steps=10**9)
    per = (float((1 - 2 * lr * lam[1]) / (1 - 2 * lr * lam[0]))) ** 2
    assert sep == pytest.approx(per**T, rel=1e-9)
    assert sep <= 1e-6 * (1 + 1e-9)
    assert T == 1 or per ** (T - 1) > 1e-6 * (1 - 1e-9)


def test_collapse_horizon_predicts_the_ratio_decay_of_gradient_descent():
    # Θ_t = Θ_0 (I − 2ηC)^t: λ₂/λ₁ of Cov[Θ_t x] falls by the predicted separation (up to the
    # initialisation's factor, which cancels in the ratio between two horizons)
    g = torch.Generator().manual_seed(3)
    C = torch.diag(torch.tensor([-1.0, -0.8, 0.2], dtype=torch.float64))
    x = torch.randn(200, 3, generator=g, dtype=torch.float64)
    theta0 = torch.randn(1, 3, 3, generator=g, dtype=torch.float64)
    step = torch.eye(3, dtype=torch.float64) - 2 * 0.05 * C
    T1, s1 = collapse_horizon(C, lr=0.05, target=1e-2)
    T2, s2 = collapse_horizon(C, lr=0.05, target=1e-4)
    r1 = collapse_ratio(linear_output(x, theta0 @ torch.linalg.matrix_power(step, T1)))
    r2 = collapse_ratio(linear_output(x, theta0 @ torch.linalg.matrix_power(step, T2)))
    assert float(r2 / r1) == pytest.approx(s2 / s1, rel=0.05)


def test_collapse_horizon_min_and_max_steps_and_bad_input():
    C = torch.diag(torch.tensor([-1.0, -0.99], dtype=torch.float64))
    T, sep = collapse_horizon(C, lr=0.05, target=1e-6, min_steps=10, max_steps=100)
    assert T == 100 and sep > 1e-6  # capped: the separation is not reached
    T, _ = collapse_horizon(torch.diag(torch.tensor([-5.0, 1.0], dtype=torch.float64)), lr=0.05, min_steps=50)
    assert T == 50
    with pytest.raises(ParameterError, match="target"):
        collapse_horizon(C, lr=0.05, target=1.5)
    with pytest.raises(ParameterError, match="symmetric"):
        collapse_horizon(torch.tensor([[0.0, 1.0], [0.0, 0.0]]), lr=0.05)
    with pytest.raises(ParameterError, match="max_steps"):
        collapse_horizon(C, lr=0.05, min_steps=10, max_steps=5)
    with pytest.raises(ParameterError, match="too large"):
        collapse_horizon(torch.diag(torch.tensor([-1.0, 30.0], dtype=torch.float64)), lr=0.05)
