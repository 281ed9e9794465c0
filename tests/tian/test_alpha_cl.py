"""Tests for nlcl.tian.alpha_cl and nlcl.tian.alpha_cl_plots (Tian 2023, Sec. 2, Lemmas 1-3)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian.alpha_cl import (
    adjusted_variance_sum,
    bias_z,
    corollary1_study,
    lemma2_study,
    lemma3_relative_error,
    relative_difference_per_trial,
    truncation_errors,
)
from nlcl.tian.alpha_cl_plots import plot_infonce_identity, plot_lemma1, plot_lemma2, plot_lemma3
from nlcl.tian.contrastive import make_alpha, population_contrastive_covariance, stack_views


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.floats(0.1, 10.0))
def test_relative_difference_is_per_trial_and_scale_free(seed, scale):
    gen = torch.Generator().manual_seed(seed)
    a = [
        torch.randn(3, 2, 4, generator=gen, dtype=torch.float64),
        torch.randn(3, 5, generator=gen, dtype=torch.float64),
    ]
    b = [x + 0.1 * torch.randn(x.shape, generator=gen, dtype=torch.float64) for x in a]
    rel = relative_difference_per_trial(a, b)
    assert rel.shape == (3,)
    # by hand for trial 1: norms over all tensors together
    num = np.sqrt(sum(float(((x[1] - y[1]) ** 2).sum()) for x, y in zip(a, b)))
    den = np.sqrt(sum(float((x[1] ** 2).sum()) for x in a))
    assert rel[1] == pytest.approx(num / den, rel=1e-12)
    np.testing.assert_allclose(
        relative_difference_per_trial([scale * x for x in a], [scale * y for y in b]), rel, rtol=1e-12
    )
    assert np.all(relative_difference_per_trial(a, a) == 0)


def test_truncation_errors_follow_the_poisson_tail():
    rng = np.random.default_rng(0)
    g0 = np.maximum(rng.standard_normal(20), 0.0)
    k_star, ks, measured, predicted = truncation_errors(g0, 0.5)
    assert measured.shape == predicted.shape == (k_star + 1, 20, 20)
    np.testing.assert_array_equal(ks, np.arange(k_star + 1))
    assert np.abs(measured - predicted).max() < 1e-12
    assert predicted[-1].max() < 1e-10 and (k_star == 0 or predicted[-2].max() >= 1e-10)
    with pytest.raises(ParameterError, match="g0"):
        truncation_errors(np.ones((3, 2)), 0.5)


@pytest.mark.parametrize("family", ["uniform", "gaussian"])
def test_lemma2_study_is_reproducible_and_converges(family):
    ns = 2 ** np.arange(4, 9)
    out1 = lemma2_study(np.random.default_rng([2, 0]), ns, 8, family, 0.5)
    out2 = lemma2_study(np.random.default_rng([2, 0]), ns, 8, family, 0.5)
    ltv, rms, c_last, c_inf = out1
    assert ltv < 1e-12
    assert rms.shape == (len(ns),) and c_last.shape == (8, 2, 2) and c_inf.shape == (2, 2)
    assert rms[-1] < rms[0]  # fluctuations shrink with N
    np.testing.assert_array_equal(rms, out2[1])
    np.testing.assert_array_equal(c_last, out2[2])


@pytest.mark.parametrize("family", ["uniform", "gaussian"])
def test_lemma2_study_equals_the_dense_alpha_computation(family):
    """The study reads the Gaussian α of a batch off the 4-atom kernel; the same draws with α
    computed from the batch's x0 (make_alpha, N² distances) give C_α equal to rounding."""
    from nlcl.tian.contrastive import contrastive_covariance

    ns, reps, tau = np.array([16, 64]), 3, 0.5
    _, _, c_last, _ = lemma2_study(np.random.default_rng(7), ns, reps, family, tau)
    rng = np.random.default_rng(7)  # the study's draws, in its order
    centers, probs, G = (
        rng.standard_normal((4, 3)),
        rng.dirichlet(np.full(4, 3.0)),
        rng.standard_normal((2, 3)),
    )
    xi = np.concatenate([np.eye(3), -np.eye(3)])
    for n in ns:
        atoms = rng.choice(4, size=(reps, n), p=probs)
        offs = xi[rng.integers(0, 6, size=(reps, 2, n))]
        x0 = centers[atoms]
        views = stack_views(*(np.maximum((x0 + 0.5 * offs[:, v]) @ G.T, 0.0) for v in (0, 1)))
        alpha = None if family == "uniform" else make_alpha("gaussian", n, g0=x0, tau=tau)
        dense = contrastive_covariance(views, alpha=alpha)
    np.testing.assert_allclose(c_last, dense, rtol=1e-12, atol=1e-14)


def _lemma2_batches_oracle(rng, ns, n_repeats, family, tau):
    """The study's batch loop before the 4-value row/column sums: the dense per-pair α of the
    4-atom kernel, all repeats of a chunk in one contrastive_covariance call (the oracle)."""
    from nlcl.tian.contrastive import contrastive_covariance, gaussian_alpha

    centers, probs, G = (
        rng.standard_normal((4, 3)),
        rng.dirichlet(np.full(4, 3.0)),
        rng.standard_normal((2, 3)),
    )
    xi = np.concatenate([np.eye(3), -np.eye(3)])
    kernel = None if family == "uniform" else gaussian_alpha(centers, tau)
    out = []
    for n in ns:
        chunk, c_ns = max(1, min(n_repeats, 2**23 // int(n) ** 2)), []
        for start in range(0, n_repeats, chunk):
            r = min(chunk, n_repeats - start)
            atoms = rng.choice(4, size=(r, n), p=probs)
            x0 = centers[atoms]
            offs = xi[rng.integers(0, 6, size=(r, 2, n))]
            views = stack_views(*(np.maximum((x0 + 0.5 * offs[:, v]) @ G.T, 0.0) for v in (0, 1)))
            a_b = None if kernel is None else kernel[atoms[:, :, None], atoms[:, None, :]]
            c_ns.append(contrastive_covariance(views, alpha=a_b))
        out.append(np.concatenate(c_ns))
    return out


@pytest.mark.parametrize("family", ["uniform", "gaussian"])
@pytest.mark.parametrize("seed", [0, 3])
def test_lemma2_study_is_bitwise_the_dense_alpha_oracle(family, seed):
    """Row/column sums of α read off the 4 atoms and α copied per batch: the same bits as the
    dense-α formulation (per N, RMS error and C_α at the largest N), and the same RNG stream."""
    ns, reps, tau = np.array([3, 16, 64, 300, 1024]), 9, 0.7  # 1024: chunks of 8 and 1 repeat
    rng_new, rng_old = np.random.default_rng([2, seed]), np.random.default_rng([2, seed])
    _, rms, c_last, c_inf = lemma2_study(rng_new, ns, reps, family, tau)
    per_n = _lemma2_batches_oracle(rng_old, ns, reps, family, tau)
    assert rng_new.bit_generator.state == rng_old.bit_generator.state
    np.testing.assert_array_equal(c_last, per_n[-1])
    errs = [np.linalg.norm(c - c_inf, axis=(-1, -2)) / np.linalg.norm(c_inf) for c in per_n]
    np.testing.assert_array_equal(rms, [float(np.sqrt(np.mean(e**2))) for e in errs])


def test_lemma2_study_refuses_alpha_without_kernel():
    with pytest.raises(ParameterError, match="family"):
        lemma2_study(np.random.default_rng(0), np.array([16]), 4, "infonce", 0.5)


def test_bias_z():
    c_inf = np.array([[1.0, 0.5], [0.5, 2.0]])
    noise = np.random.default_rng(1).standard_normal((50, 2, 2))
    noise = noise + noise.transpose(0, 2, 1)
    c_ns = c_inf + noise - noise.mean(0)  # mean exactly the limit
    assert bias_z(c_ns, c_inf) == pytest.approx(0.0, abs=1e-9)
    shifted = c_ns + 1.0  # every entry biased by one unit
    se = c_ns.std(0, ddof=1)[np.triu_indices(2)] / np.sqrt(50)
    assert bias_z(shifted, c_inf) == pytest.approx(float(np.max(1.0 / se)))
    const = np.broadcast_to(c_inf, (5, 2, 2)).copy()
    assert bias_z(const, c_inf) == 0.0
    assert bias_z(const + 1.0, c_inf) == np.inf


def test_lemma3_relative_error_separates_homogeneous_activations():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 4))
    views = stack_views(x, x + 0.3 * rng.standard_normal((12, 4)))
    alpha = make_alpha("gaussian", 12, g0=x, tau=0.5)
    w = rng.standard_normal((8, 4))
    assert lemma3_relative_error(views, w, "relu", alpha) < 1e-10
    assert lemma3_relative_error(views, w, "tanh", alpha) > 0.01


def _labeled(fig):
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
    plt.close(fig)


def test_plots_are_labeled():
    g = [torch.randn(3, 4, dtype=torch.float64)]
    h = [x * (1 + 1e-15) for x in g]
    _labeled(plot_infonce_identity(g, h, np.full(3, 1e-15), np.full(3, 1e-14), tau=0.5, eps=0.5, n=4))
    k_star, ks, measured, predicted = truncation_errors(np.linspace(0, 1, 6), 0.5)
    _labeled(plot_lemma1(ks, measured, predicted, np.linspace(0.1, 1, 6), tau=0.5))
    ns = 2 ** np.arange(4, 7)
    rms = np.array([[0.4, 0.3, 0.2], [0.5, 0.35, 0.25]])
    fits = np.array([np.polyfit(np.log(ns), np.log(r), 1) for r in rms])
    _labeled(plot_lemma2(ns, [0, 1], rms, fits, np.array([1.0, 3.5]), family="gaussian", n_repeats=8))
    _labeled(plot_lemma3({"relu": 1e-15, "tanh": 0.5}, {"relu": True, "tanh": False}, alpha="gaussian"))


@settings(max_examples=10)
@given(st.integers(0, 10_000), st.floats(0.05, 20.0))
def test_corollary1_holds_exactly_with_a_gaussian_alpha(seed, tau):
    """Eq. 3 on a batch with the population's empirical distribution = Σ_l z_l² V_{p̃_l}[g] (Cor. 1)."""
    errs, dist = corollary1_study(np.random.default_rng(seed), tau, 2, n_atoms=4, max_count=5)
    assert errs.shape == dist.shape == (2,)
    assert errs.max() < 1e-10
    assert np.all((dist >= 0) & (dist <= 1))


def test_corollary1_study_refuses_a_short_feature_map():
    with pytest.raises(ValueError, match="truncation"):
        corollary1_study(np.random.default_rng(0), 0.01, 1, order=20)


@settings(max_examples=40)
@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(1, 5), st.integers(1, 3))
def test_adjusted_variance_sum_is_the_kernel_limit_of_lemma2(seed, k, n_feat, d):
    """Σ_l z_l² V_{p̃_l}[g] = ½ Σ_kl p_k p_l K_kl (g_k − g_l)(g_k − g_l)ᵀ with K = φφᵀ (Tian 2023, Cor. 1):
    the feature-map form against the kernel form of the proof (no augmentation: zero conditional covariance)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    phi = rng.uniform(0, 2, (k, n_feat)) * (rng.random((k, n_feat)) > 0.3)
    g = rng.standard_normal((k, d))
    kernel = phi @ phi.T
    expected = population_contrastive_covariance(p, g, np.zeros((k, d, d)), kernel)
    diff = g[:, None, :] - g[None, :, :]
    literal = 0.5 * np.einsum("k,l,kl,kli,klj->ij", p, p, kernel, diff, diff)
    got = adjusted_variance_sum(p, phi, g)
    np.testing.assert_allclose(got, expected, atol=1e-12 * max(1.0, np.abs(expected).max()))
    np.testing.assert_allclose(got, literal, atol=1e-12 * max(1.0, np.abs(literal).max()))


def test_adjusted_variance_sum_with_uniform_alpha_is_the_variance():
    rng = np.random.default_rng(0)
    p, g = rng.dirichlet(np.ones(5)), rng.standard_normal((5, 3))
    m = p @ g
    var = np.einsum("k,ki,kj->ij", p, g - m, g - m)
    np.testing.assert_allclose(adjusted_variance_sum(p, np.ones((5, 1)), g), var, atol=1e-14)
    np.testing.assert_allclose(adjusted_variance_sum(p, np.zeros((5, 2)), g), 0.0)  # z_l = 0 adds nothing
    with pytest.raises(ValueError, match="probs"):
        adjusted_variance_sum(np.ones(5), np.ones((5, 1)), g)
    with pytest.raises(ValueError, match="phi"):
        adjusted_variance_sum(p, -np.ones((5, 1)), g)
    with pytest.raises(ValueError, match="g must"):
        adjusted_variance_sum(p, np.ones((5, 1)), g[:4])
