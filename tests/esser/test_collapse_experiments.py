"""nlcl.esser.collapse_experiments: the esser-collapse chapter's experiments give exactly the numbers
of the inline code they replace, and satisfy the paper's identities."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_moons

from nlcl.core.fits import loglog_slope
from nlcl.core.validate import ParameterError
from nlcl.esser import collapse_experiments as ex
from nlcl.esser.collapse import collapse_horizon, collapse_ratio, linear_output
from nlcl.esser.constraints import gradient_descent
from nlcl.esser.grassmann import outputs_on_eigenvectors
from nlcl.esser.losses import loss_matrix, make_pairs
from nlcl.esser.remarks import sample_pair_matrices


@pytest.fixture(autouse=True)
def _float64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


def _pairs(seed: int = 0, n: int = 40):
    X, _ = make_moons(n, noise=0.05, random_state=seed)
    gen = torch.Generator().manual_seed(seed)
    x, xp, xn = make_pairs(X, noise_var=0.1, generator=gen)
    return x, xp, xn


@settings(max_examples=25)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**16))
def test_trace_form_is_the_trace(z, d, seed):
    """Tr(ΘCΘᵀ) (Eq. 7 for u = Θx), batched."""
    g = torch.Generator().manual_seed(seed)
    theta, A = torch.randn(3, z, d, generator=g), torch.randn(d, d, generator=g)
    C = (A + A.T) / 2
    want = torch.stack([torch.trace(t @ C @ t.T) for t in theta])
    torch.testing.assert_close(ex.trace_form(theta, C), want)


def test_collapse_run_is_the_former_inline_experiment():
    """Same numbers, bit for bit, as the chapter's former inline Proposition 1 loop."""
    x, xp, xn = _pairs()
    steps, n_init = 40, 2
    got = ex.collapse_run(
        x, xp, xn, loss="contrastive", n_init=n_init, steps=steps, generator=torch.Generator().manual_seed(3)
    )
    gen = torch.Generator().manual_seed(3)
    D = x.shape[1]
    CC = loss_matrix(x, xp, xn, loss="contrastive", reduction="mean")

    def loss_fn(theta, CC=CC):
        return ((theta @ CC) * theta).sum(dim=(-2, -1))

    theta0 = torch.randn(n_init, 3, D, generator=gen) / np.sqrt(D)
    kw = dict(lr=0.05, steps=steps, max_norm=1e150, record_every=max(steps // 50, 1))
    traj = gradient_descent(loss_fn, (theta0,), observe=lambda th: collapse_ratio(linear_output(x, th)), **kw)
    ident = gradient_descent(loss_fn, (torch.eye(D)[None],), **kw)
    same = float((traj.params[0] - theta0 @ ident.params[0]).abs().max() / traj.params[0].abs().max())
    horizon, separation = collapse_horizon(CC, lr=0.05, target=1e-6, min_steps=steps, max_steps=20 * steps)
    more = gradient_descent(
        loss_fn,
        (traj.params[0] / torch.linalg.matrix_norm(traj.params[0])[:, None, None],),
        lr=0.05,
        steps=horizon - steps,
        project_fn=lambda th: (th / torch.linalg.matrix_norm(th)[:, None, None],),
        observe=lambda th: collapse_ratio(linear_output(x, th)),
        record_every=max(horizon - steps, 1),
    )
    assert got["same_error"] == same and got["horizon"] == horizon and got["separation"] == separation
    assert got["final_ratios"] == more.observed[-1].tolist()
    assert torch.equal(got["traj"].observed, traj.observed)
    assert got["same_error"] < 1e-8  # Proposition 1: identical dynamics


def test_collapse_run_refuses_an_unknown_loss():
    x, xp, xn = _pairs()
    with pytest.raises(ParameterError, match="loss='infonce'"):
        ex.collapse_run(x, xp, xn, loss="infonce", n_init=2, steps=2, generator=torch.Generator())


def test_eigen_outputs_normalises_by_the_spectral_norm():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(3, 5, 2, generator=g), torch.randn(3, 5, 1, generator=g)
    V = torch.linalg.qr(torch.randn(2, 2, generator=g)).Q
    torch.testing.assert_close(ex.eigen_outputs(a, b, V, False), outputs_on_eigenvectors(a, b, V)[..., 0])
    torch.testing.assert_close(ex.eigen_outputs(7 * a, 3 * b, V, True), ex.eigen_outputs(a, b, V, True))


def _gaps():
    rows = []
    for act, c in (("tanh", 1.0), ("relu", 2.0)):
        for h in (10, 40, 160):
            for init in range(3):
                rows.append(dict(activation=act, epoch=0, h=h, init=init, gap=c * h ** -(0.5 + 0.1 * init)))
    return pd.DataFrame(rows)


def test_slopes_of_the_gap():
    gaps = _gaps()
    np.testing.assert_allclose(ex.replicate_slopes(gaps, "tanh", 0), [-0.5, -0.6, -0.7])
    mean = gaps[gaps.activation == "relu"].groupby("h").gap.mean()
    assert ex.pooled_slope(gaps, "relu", 0) == loglog_slope(mean.index.values, mean.values)
    assert ex.mean_curve_slope(gaps[gaps.activation == "relu"]) == ex.pooled_slope(gaps, "relu", 0)


def test_ctilde_monte_carlo_is_the_former_inline_loop_and_unbiased():
    got = ex.ctilde_monte_carlo(n=20, reps=30, noise_var=0.1, seed=1000)
    rs, g = np.random.RandomState(1000), torch.Generator().manual_seed(1000)
    mc = []
    for _ in range(30):
        xa = torch.as_tensor(make_moons(20, noise=0.05, random_state=rs)[0])
        xb = torch.as_tensor(make_moons(20, noise=0.05, random_state=rs)[0])
        mc.append(xa.T @ (xb - (xa + np.sqrt(0.1) * torch.randn(xa.shape, generator=g))))
    assert torch.equal(got, torch.stack(mc).mean(0))
    big = torch.as_tensor(make_moons(20_000, noise=0.05, random_state=1)[0])
    cov = torch.cov(big.T, correction=0)
    # E[C̃] = −n·Cov(x): the relative error of 30 samples is Monte-Carlo sized
    assert ex.frobenius_ratio(got + 20 * cov, 20 * cov) < 0.3


@settings(max_examples=25)
@given(st.floats(0.1, 10.0), st.integers(0, 2**16))
def test_frobenius_ratio_is_scale_free(c, seed):
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(3, 3, generator=g), torch.randn(3, 3, generator=g)
    assert ex.frobenius_ratio(c * a, c * b) == pytest.approx(ex.frobenius_ratio(a, b), rel=1e-12)


def test_pq_summary_is_the_former_inline_summary():
    pool = make_moons(2000, noise=0.05, random_state=5)[0]
    mu = pool.mean(0)
    for centre in (False, True):
        mean, se = ex.pq_summary(pool, mu, p=1, q=2, noise_var=0.1, reps=20, seed=7, centre=centre)

        def sample(k, rng, centre=centre):
            pts = pool[rng.randint(0, len(pool), k)]
            return pts - mu if centre else pts

        S = sample_pair_matrices(sample, n=50, p=1, q=2, noise_var=0.1, reps=20, seed=7)
        S = (S + S.transpose(-1, -2)) / 2
        assert torch.equal(mean, S.mean(0)) and torch.equal(se, S.std(0) / np.sqrt(20))


def test_projector_observables_and_decay_rates():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(30, 2, generator=g)
    A, theta = torch.randn(3, 8, generator=g), torch.randn(4, 8, 2, generator=g)
    obs = ex.projector_observables(theta, A, x)
    sv = torch.linalg.svdvals(A @ theta)
    assert torch.equal(obs[0], collapse_ratio(linear_output(x, A @ theta)))
    assert torch.equal(obs[1], (sv[..., 1] / sv[..., 0]) ** 2)
    t = np.linspace(0, 10, 101)
    ratio = np.stack([np.exp(-2.0 * t), np.exp(-3.0 * t), np.full_like(t, 0.5)], axis=1)
    rates = ex.decay_rates(ratio, t, 1e-10, 1e-1)
    np.testing.assert_allclose(rates[:2], [2.0, 3.0])
    assert np.isnan(rates[2])  # no point in the window


class _Claim:
    def __init__(self):
        self.calls = []

    def measure(self, value):
        self.calls.append(("measure", value))

    def measure_seeds(self, values):
        self.calls.append(("measure_seeds", values))


def test_measure_or_nan():
    c = _Claim()
    ex.measure_or_nan(c, np.array([1, 0]))
    ex.measure_or_nan(c, None)
    assert c.calls[0] == ("measure_seeds", [1.0, 0.0]) and type(c.calls[0][1][0]) is float
    assert c.calls[1][0] == "measure" and np.isnan(c.calls[1][1])


def test_pool_sampler_draws_rows_of_the_pool():
    from nlcl.esser.collapse_experiments import pool_sampler

    pool = np.arange(20.0).reshape(10, 2)
    mu = pool.mean(axis=0)
    draws = pool_sampler(pool, mu)(50, np.random.RandomState(0))
    assert draws.shape == (50, 2) and {tuple(r) for r in draws} <= {tuple(r) for r in pool}
    centred = pool_sampler(pool, mu, centre=True)(50, np.random.RandomState(0))
    assert np.array_equal(centred, draws - mu)  # the same draws from the same stream
