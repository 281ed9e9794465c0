"""Tests for nlcl.renli.latent: the exact latent-coordinate engine of the Ren & Li simulation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.latent import data_maps, latent_similarity, negative_pair_term, similarity_loss
from nlcl.renli.losses import contrastive_loss
from nlcl.renli.model import init_learners, make_data, representations
from nlcl.renli.simulation import train

SMALL = dict(
    width=32, steps_stage1=20, steps_stage2=20, batch_size=64, eval_size=64, log_every=10, progress=False
)


def test_data_maps_gram_is_diagonal_sigma_nu():
    data = make_data(16, 3, 2, 4.0, seeds=[0], nu=0.3, dtype=torch.float64)
    B, D = data_maps(data.M_A, data.H_A)
    assert B.shape == (1, 16, 5)
    expected = torch.diag(torch.cat([data.sigma_A[0] ** 2, torch.full((2,), 0.09, dtype=torch.float64)]))
    assert torch.allclose(D[0], expected, atol=1e-12)


def test_latent_similarity_equals_ambient_similarity():
    data = make_data(16, 3, 3, [2.0, 5.0], seeds=[0, 1], dtype=torch.float64)
    W_A, W_B = init_learners(data, 24)
    z, xi_a, xi_b = data.sample_latents(10)
    B_A, _ = data_maps(data.M_A, data.H_A)
    B_B, _ = data_maps(data.M_B, data.H_B)
    w_a, w_b = torch.cat([z, xi_a], -1), torch.cat([z, xi_b], -1)
    f_a = representations(W_A, w_a @ B_A.transpose(1, 2))
    f_b = representations(W_B, w_b @ B_B.transpose(1, 2))
    S = latent_similarity(W_A @ B_A, W_B @ B_B, w_a, w_b)
    assert torch.allclose(S, f_a @ f_b.transpose(1, 2), atol=1e-12)


@pytest.mark.parametrize("lam", [[0.0, 0.0], [0.0, 1.5], [0.7, 2.0]])
def test_similarity_loss_and_its_gradient_match_contrastive_loss(lam):
    g = torch.Generator().manual_seed(3)
    f_a = torch.randn(2, 12, 5, generator=g, dtype=torch.float64, requires_grad=True)
    f_b = torch.randn(2, 12, 5, generator=g, dtype=torch.float64)
    lam_t, beta = torch.tensor(lam, dtype=torch.float64), torch.tensor([0.3, 2.0], dtype=torch.float64)
    ref = contrastive_loss(f_a, f_b, lam_t, beta)
    (g_ref,) = torch.autograd.grad(ref.sum(), f_a)
    out = similarity_loss(f_a @ f_b.transpose(1, 2), lam_t, beta)
    (g_out,) = torch.autograd.grad(out.sum(), f_a)
    assert torch.allclose(out, ref, atol=1e-12) and torch.allclose(g_out, g_ref, atol=1e-12)


def test_negative_pair_term_gradcheck_and_bad_input():
    g = torch.Generator().manual_seed(0)
    S = torch.randn(2, 6, 6, generator=g, dtype=torch.float64, requires_grad=True)
    beta = torch.tensor([0.5, 3.0], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda s: negative_pair_term(s, beta), (S,))
    with pytest.raises(ParameterError, match="expected"):
        negative_pair_term(torch.zeros(2, 1, 1), beta)


def test_latent_engine_equals_direct_engine_float64():
    """The latent engine is exact: same trajectory as the ambient reference, to 1e-9 in float64."""
    kw = dict(SMALL, beta1=[0.05, 0.05, 0.2], beta2=2.0)

    def run(engine):
        data = make_data(16, 3, 3, [2.0, 4.0, 4.0], seeds=[0, 1, 1], dtype=torch.float64)
        return train(data, [0.0, 1.0, 0.5], engine=engine, **kw)

    lat, ref = run("latent"), run("direct")
    for name in lat.metrics:
        if name == "alignment":
            continue
        assert np.allclose(lat.metrics[name], ref.metrics[name], rtol=1e-9, atol=1e-9, equal_nan=True), name
    # the alignment score counts strict wins; a negative with the same latent w as the positive is an
    # exact tie that torch.cdist's matrix-product formula breaks by rounding, differently per engine:
    # allow a few of the n(n-1) = 4032 pairs
    assert np.abs(lat.metrics["alignment"] - ref.metrics["alignment"]).max() <= 8 / 4032
    for stage in ("init", "stage1", "final"):
        assert torch.allclose(lat.W_A[stage], ref.W_A[stage], atol=1e-9)
        assert torch.allclose(lat.W_B[stage], ref.W_B[stage], atol=1e-9)


def test_latent_engine_is_deterministic_and_rejects_unknown_engine():
    a = train(make_data(16, 3, 3, 2.0, seeds=[4]), 1.0, **SMALL)
    b = train(make_data(16, 3, 3, 2.0, seeds=[4]), 1.0, **SMALL)
    assert torch.equal(a.W_A["final"], b.W_A["final"])
    with pytest.raises(ParameterError, match="engine"):
        train(make_data(16, 3, 3, 2.0, seeds=[4]), 1.0, engine="fast", **SMALL)


def test_negative_pair_term_stable_path_for_large_beta():
    """A β so large that one shift per run would underflow rows: the per-row path gives the same."""
    g = torch.Generator().manual_seed(1)
    S = torch.randn(1, 5, 5, generator=g, dtype=torch.float64)
    S[0, 0] -= 50.0  # row 0 far below the run's maximum
    beta = torch.tensor([400.0], dtype=torch.float64)
    a = S * beta
    a[0].fill_diagonal_(float("-inf"))
    ref = (torch.logsumexp(a, -1) - np.log(4)).mean(-1) + (torch.logsumexp(a, -2) - np.log(4)).mean(-1)
    Sg = S.clone().requires_grad_()
    assert torch.allclose(negative_pair_term(Sg, beta), ref, rtol=1e-12)
    assert torch.autograd.gradcheck(lambda s: negative_pair_term(s, beta), (Sg,))


@pytest.mark.parametrize("shift", [0.0, 5000.0])
def test_latent_loss_matches_similarity_loss_with_gradients(shift):
    """latent_loss (fused P-gradient) equals similarity_loss of latent_similarity, both paths."""
    from nlcl.renli.latent import latent_loss

    g = torch.Generator().manual_seed(2)
    K_A = torch.randn(3, 7, 4, generator=g, dtype=torch.float64, requires_grad=True)
    K_B = torch.randn(3, 7, 4, generator=g, dtype=torch.float64, requires_grad=True)
    w_a = torch.randint(0, 2, (3, 9, 4), generator=g).double() * 2 - 1
    w_b = torch.randint(0, 2, (3, 9, 4), generator=g).double() * 2 - 1
    lam = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64)
    beta = torch.tensor(
        [0.05, 2.0, 1.0 + shift], dtype=torch.float64
    )  # β = 5001: per-row shifts (fallback path)
    ref = similarity_loss(latent_similarity(K_A, K_B, w_a, w_b), lam, beta)
    out = latent_loss(K_A, K_B, w_a, w_b, lam, beta)
    g_ref = torch.autograd.grad(ref.sum(), (K_A, K_B))
    g_out = torch.autograd.grad(out.sum(), (K_A, K_B))
    assert torch.allclose(out, ref, rtol=1e-10)
    for a, b in zip(g_out, g_ref):
        assert torch.allclose(a, b, rtol=1e-8, atol=1e-10)


def _batched_negative_pairs(P, w_b, beta):
    """The (R, n, n) batched forward and backward that the per-run loop replaced (reference)."""
    n, k = P.shape[-2], w_b.shape[-1]
    E = (P * beta[:, None, None]) @ w_b.transpose(-1, -2)
    E.diagonal(dim1=-2, dim2=-1).fill_(float("-inf"))
    c = E.amax(dim=(-1, -2))
    E.sub_(c[:, None, None]).exp_()
    row, col = E.sum(-1), E.sum(-2)
    lse_r, lse_c = row.log() + c[:, None], col.log() + c[:, None]
    log_mean = np.log(n - 1)
    out = (lse_r - log_mean).mean(-1) + (lse_c - log_mean).mean(-1)
    both = E @ torch.cat([w_b, w_b / col[:, :, None]], dim=-1)
    dP = (both[..., :k] / row[:, :, None] + both[..., k:]) * (beta / n)[:, None, None]
    return out, dP


@pytest.mark.parametrize("runs_per_chunk", [1, 2, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_latent_negative_pairs_by_chunks_is_bitwise_the_batched_computation(
    dtype, runs_per_chunk, monkeypatch
):
    """_LatentNegativePairs, run chunk by run chunk, gives bitwise the numbers of the batched version."""
    from nlcl.renli import latent
    from nlcl.renli.latent import _LatentNegativePairs

    monkeypatch.setattr(latent, "RUN_CHUNK_ELEMENTS", runs_per_chunk * 96 * 96)  # E is (n, n), n = 96

    g = torch.Generator().manual_seed(3)
    P = (0.3 * torch.randn(5, 96, 16, generator=g, dtype=dtype)).requires_grad_()
    w_b = torch.randint(0, 2, (5, 96, 16), generator=g).to(dtype) * 2 - 1
    beta = torch.tensor([0.01, 0.05, 0.2, 2.0, 2.0], dtype=dtype)
    out = _LatentNegativePairs.apply(P, w_b, beta)
    (dP,) = torch.autograd.grad(out.sum(), (P,))
    ref_out, ref_dP = _batched_negative_pairs(P.detach(), w_b, beta)
    assert torch.equal(out, ref_out)
    assert torch.equal(dP, ref_dP)


@pytest.mark.parametrize("runs_per_chunk", [1, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_latent_negative_pairs_of_selected_runs_is_bitwise_the_gathered_computation(
    dtype, runs_per_chunk, monkeypatch
):
    """``runs`` reads the selected runs chunk by chunk: bitwise the numbers of the gathered P[runs]."""
    from nlcl.renli import latent
    from nlcl.renli.latent import _LatentNegativePairs

    monkeypatch.setattr(latent, "RUN_CHUNK_ELEMENTS", runs_per_chunk * 96 * 96)
    g = torch.Generator().manual_seed(4)
    P = (0.3 * torch.randn(7, 96, 16, generator=g, dtype=dtype)).requires_grad_()
    w_b = torch.randint(0, 2, (7, 96, 16), generator=g).to(dtype) * 2 - 1
    runs = torch.tensor([1, 2, 4, 6])
    beta = torch.tensor([0.01, 0.05, 0.2, 2.0], dtype=dtype)
    out = _LatentNegativePairs.apply(P, w_b, beta, runs)
    (dP,) = torch.autograd.grad(out.sum(), (P,))
    ref = _LatentNegativePairs.apply(P[runs], w_b[runs], beta, None)
    (ref_dP,) = torch.autograd.grad(ref.sum(), (P,))
    assert torch.equal(out, ref)
    assert torch.equal(dP, ref_dP)
    ref_out, ref_dP_runs = _batched_negative_pairs(P.detach()[runs], w_b[runs], beta)
    assert torch.equal(out, ref_out) and torch.equal(dP[runs], ref_dP_runs)
    assert not dP[[0, 3, 5]].any()


def test_all_finite_fast_check_agrees_with_the_entrywise_check():
    """The sum-first finiteness check of train: an overflowing sum of finite entries is finite."""
    from nlcl.renli.simulation import _all_finite

    big = torch.full((3, 4, 5), 3e38, dtype=torch.float32)
    assert _all_finite(big) and _all_finite(torch.zeros(2, 3).requires_grad_())
    for bad in (float("nan"), float("inf"), -float("inf")):
        x = big.clone()
        x[1, 2, 3] = bad
        assert not _all_finite(x) and not _all_finite(x * 0)
