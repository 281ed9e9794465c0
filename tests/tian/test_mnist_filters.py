"""Tests for nlcl.tian.mnist_filters: receptive fields, the view sampler and filter statistics (App. E.3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.tian import mnist_filters as mf


def test_receptive_fields_are_the_four_quadrants_in_the_papers_order():
    x = torch.arange(2 * 28 * 28, dtype=torch.float32).reshape(2, 28, 28)
    rf = mf.receptive_fields(x)
    assert rf.shape == (2, 4, 196)
    quads = [x[:, :14, :14], x[:, :14, 14:], x[:, 14:, :14], x[:, 14:, 14:]]  # UL, UR, BL, BR
    for k, q in enumerate(quads):
        assert torch.equal(rf[:, k], q.reshape(2, 196))
    # inverse for plotting
    np.testing.assert_array_equal(mf.filters_to_images(rf)[:, 1], quads[1].numpy())
    assert len(mf.RF_NAMES) == 4


@settings(max_examples=20)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5))
def test_receptive_fields_partition_the_pixels(a, b, rf):
    x = torch.randperm(a * rf * b * rf).reshape(a * rf, b * rf)
    out = mf.receptive_fields(x, rf)
    assert out.shape == (a * b, rf * rf)
    assert torch.equal(out.flatten().sort().values, torch.arange(x.numel()))


def test_receptive_fields_bad_shapes():
    with pytest.raises(ParameterError, match="multiples of rf=14"):
        mf.receptive_fields(torch.zeros(3, 27, 28))
    with pytest.raises(ParameterError, match=r"\(\.\.\., 196\)"):
        mf.filters_to_images(np.zeros((2, 100)))


def test_rf_view_sampler_pairs_runs_and_augments_only_where_asked():
    imgs = np.random.default_rng(0).random((20, 28, 28)).astype(np.float32)
    s = mf.RFViewSampler(imgs, 8, augment=[False, True, False], data_seeds=[3, 3, 4])
    x1, x2 = s(0)
    assert x1.shape == x2.shape == (3, 8, 4, 196)
    assert torch.equal(x1[0], x2[0])  # no augmentation: the two views are the image
    assert not torch.equal(x1[1], x2[1])  # augmented views differ
    # run 0 and 1 share the data seed, so they see the same images (run 1's views are crops)
    assert not torch.equal(x1[0], x1[2])
    # every image is seen once per epoch (20 images, batch 8: steps 0,1 and the first half of 2)
    seen = [x1[0]] + [s(t)[0][0] for t in (1, 2)]
    flat = torch.cat(seen)[:20].reshape(20, -1)
    full = mf.receptive_fields(torch.as_tensor(imgs)).reshape(20, -1)
    assert sorted(map(tuple, flat.tolist())) == sorted(map(tuple, full.tolist()))
    # deterministic, and must be called in order
    s2 = mf.RFViewSampler(imgs, 8, augment=[False, True, False], data_seeds=[3, 3, 4])
    y1, y2 = s2(0)
    assert torch.equal(y1, x1) and torch.equal(y2, x2)
    with pytest.raises(ParameterError, match="step=5"):
        s2(5)
    with pytest.raises(ParameterError, match="data_seeds has 1 entries"):
        mf.RFViewSampler(imgs, 8, augment=[False, True], data_seeds=[0])


@pytest.mark.parametrize("chunk", [1, 3, None])
def test_rf_view_sampler_prepares_chunks_with_the_views_of_single_steps(chunk):
    """Steps prepared ``chunk`` at a time (across epochs) are the views of one step at a time."""
    imgs = np.random.default_rng(1).random((20, 28, 28)).astype(np.float32)
    kw = dict(augment=[True, False, True], data_seeds=[5, 5, 6])
    one = mf.RFViewSampler(imgs, 8, chunk=1, **kw)
    many = mf.RFViewSampler(imgs, 8, chunk=chunk, **kw)
    for t in range(7):  # 56 images: three epochs
        a, b = one(t), many(t)
        assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    with pytest.raises(ParameterError, match="chunk"):
        mf.RFViewSampler(imgs, 8, chunk=0, **kw)


def test_rf_view_sampler_feeds_the_shared_trainer():
    from nlcl.tian.rf_network import TwoLayerRF
    from nlcl.tian.tokens.training import train_batched

    imgs = np.random.default_rng(1).random((16, 28, 28)).astype(np.float32)
    model = TwoLayerRF(2, 4, 196, 3, out_dim=5, seeds=[0, 0])
    last = train_batched(model, mf.RFViewSampler(imgs, 4, [False, True], [0, 0]), 3)
    assert last.shape == (2,) and torch.isfinite(last).all()


def test_high_frequency_fraction_of_pure_waves():
    s = 14
    i, j = np.meshgrid(np.arange(s), np.arange(s), indexing="ij")
    slow = np.cos(2 * np.pi * 1 * j / s)  # 1/14 cycles per pixel
    fast = np.cos(2 * np.pi * 6 * j / s)  # 6/14 = 0.43 cycles per pixel
    checker = (-1.0) ** (i + j)  # Nyquist in both directions
    hf = mf.high_frequency_fraction(np.stack([slow, fast, checker, slow + fast]), cutoff=0.25)
    np.testing.assert_allclose(hf.numpy(), [0.0, 1.0, 1.0, 0.5], atol=1e-12)


@settings(max_examples=30)
@given(st.integers(0, 10_000), st.floats(0.05, 0.6), st.floats(-3, 3).filter(lambda c: abs(c) > 1e-3))
def test_high_frequency_fraction_is_a_scale_and_offset_invariant_fraction(seed, cutoff, scale):
    w = torch.as_tensor(np.random.default_rng(seed).normal(size=(3, 14, 14)))
    hf = mf.high_frequency_fraction(w, cutoff)
    assert ((hf >= 0) & (hf <= 1)).all()
    torch.testing.assert_close(mf.high_frequency_fraction(scale * w + 7.0, cutoff), hf)


def test_high_frequency_fraction_bad_input():
    with pytest.raises(ParameterError, match="cutoff"):
        mf.high_frequency_fraction(np.zeros((14, 14)), cutoff=0.8)
    with pytest.raises(ParameterError, match="expected"):
        mf.high_frequency_fraction(np.zeros((14, 13)))


def test_mean_pairwise_abs_cos():
    eye = torch.eye(4, dtype=torch.float64)
    assert float(mf.mean_pairwise_abs_cos(eye)) == 0.0
    colinear = torch.tensor([[1.0, 2.0], [-2.0, -4.0], [0.5, 1.0]])
    assert float(mf.mean_pairwise_abs_cos(colinear)) == pytest.approx(1.0)
    # pairs: (e1, e1+e2)/√2, (e1, e2) 0, (e1+e2, e2)/√2 -> mean √2/3
    w = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert float(mf.mean_pairwise_abs_cos(w)) == pytest.approx(2**0.5 / 3)
    assert mf.mean_pairwise_abs_cos(torch.randn(2, 4, 5, 10)).shape == (2, 4)
    with pytest.raises(ParameterError, match="M >= 2"):
        mf.mean_pairwise_abs_cos(torch.zeros(1, 5))


def test_filter_mosaic_tiles_and_scales():
    w = np.stack([np.full(196, 2.0), np.full(196, -0.5), np.arange(196.0)])
    out = mf.filter_mosaic(w, ncols=2)
    assert out.shape == (2 * 15 - 1, 2 * 15 - 1)
    np.testing.assert_allclose(out[:14, :14], 1.0)
    np.testing.assert_allclose(out[:14, 15:], -1.0)
    assert np.nanmax(out[15:, :14]) == 1.0
    assert np.isnan(out[14]).all() and np.isnan(out[15:, 15:]).all()
    with pytest.raises(ParameterError, match="expected"):
        mf.filter_mosaic(np.zeros((2, 3, 196)))
