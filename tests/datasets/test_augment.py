"""Tests for nlcl.datasets.augment: the batched, seeded RandomResizedCrop of Tian 2023, App. E.3."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.datasets import augment


def test_params_follow_torchvision_ranges():
    box = augment.random_resized_crop_params(20000, 28, 28, (0.5, 1.0), (0.5, 1.5), generator=3)
    top, left, h, w = box.T.double()
    assert box.dtype == torch.long
    assert (top >= 0).all() and (left >= 0).all()
    assert (top + h <= 28).all() and (left + w <= 28).all()
    # area fraction and aspect ratio within the ranges up to the rounding of h and w to integers
    area = h * w / 784
    assert area.min() >= 0.5 * (1 - 2 / 28) ** 2 and area.max() <= 1.0
    aspect = w / h
    assert aspect.min() >= 0.5 * (1 - 1 / 14) / (1 + 1 / 14) - 1e-9
    assert aspect.max() <= 1.5 * (1 + 1 / 14) / (1 - 1 / 14) + 1e-9


def test_small_boxes_always_fit_so_log_aspect_is_uniform():
    # with small areas every first attempt fits: log(w/h) ~ U[log 0.5, log 1.5] up to rounding
    box = augment.random_resized_crop_params(20000, 280, 280, (0.05, 0.1), (0.5, 1.5), generator=1)
    log_aspect = torch.log(box[:, 3].double() / box[:, 2].double())
    mid = 0.5 * (math.log(0.5) + math.log(1.5))
    assert abs(log_aspect.mean().item() - mid) < 0.01  # standard error ~0.002
    assert log_aspect.min() > math.log(0.5) - 0.02 and log_aspect.max() < math.log(1.5) + 0.02


def test_fallback_is_the_centre_crop_with_clamped_ratio():
    # no box with aspect >= 3 and area >= 90% fits a square: torchvision's centre-crop fallback
    box = augment.random_resized_crop_params(5, 28, 28, (0.9, 1.0), (3.0, 4.0), generator=0)
    expected = torch.tensor([(28 - 9) // 2, 0, 9, 28])
    assert (box == expected).all()


def test_seeded_and_deterministic():
    x = torch.rand(64, 28, 28, generator=torch.Generator().manual_seed(0))
    a = augment.random_resized_crop(x, generator=7)
    b = augment.random_resized_crop(x, generator=torch.Generator().manual_seed(7))
    c = augment.random_resized_crop(x, generator=8)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    assert a.shape == (64, 28, 28)
    assert torch.equal(augment.PAPER_RRC(x, 7), a)


@settings(max_examples=25)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_full_square_box_is_the_identity(n, c, seed):
    x = torch.rand(n, c, 28, 28, generator=torch.Generator().manual_seed(seed))
    y = augment.random_resized_crop(x, scale=(1.0, 1.0), ratio=(1.0, 1.0), generator=seed)
    torch.testing.assert_close(y, x, atol=1e-5, rtol=0)


@settings(max_examples=40)
@given(
    st.integers(0, 13),
    st.integers(0, 13),
    st.integers(1, 14),
    st.integers(1, 14),
    st.floats(-2, 2),
    st.floats(-2, 2),
    st.integers(4, 40),
    st.integers(4, 40),
)
def test_resized_crop_is_exact_on_linear_images(top, left, h, w, a, b, out_h, out_w):
    # bilinear interpolation reproduces affine functions exactly, so the output is the ramp
    # evaluated at the sample positions (clamped to the image, as padding_mode="border")
    H = W = 28
    i = torch.arange(H, dtype=torch.float64)[:, None]
    j = torch.arange(W, dtype=torch.float64)[None, :]
    img = (a * i + b * j).expand(H, W)[None]
    out = augment.resized_crop(img, torch.tensor([[top, left, h, w]]), (out_h, out_w))[0]
    rows = (top + (torch.arange(out_h, dtype=torch.float64) + 0.5) * h / out_h - 0.5).clamp(0, H - 1)
    cols = (left + (torch.arange(out_w, dtype=torch.float64) + 0.5) * w / out_w - 0.5).clamp(0, W - 1)
    torch.testing.assert_close(out, a * rows[:, None] + b * cols[None, :], atol=1e-9, rtol=0)


def test_accepts_numpy_and_keeps_range():
    x = np.random.default_rng(0).random((10, 28, 28)).astype(np.float32)
    y = augment.random_resized_crop(x, generator=0)
    assert y.dtype == torch.float32 and y.shape == (10, 28, 28)
    assert y.min() >= 0 and y.max() <= 1  # bilinear interpolation is a convex combination
    assert augment.random_resized_crop(x[:0], generator=0).shape == (0, 28, 28)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(scale=(0.0, 1.0)), "scale"),
        (dict(scale=(0.5, 1.5)), "scale"),
        (dict(ratio=(1.5, 0.5)), "ratio"),
        (dict(ratio=(float("nan"), 1.0)), "ratio"),
        (dict(size=(0, 28)), "size"),
        (dict(generator=-1), "seed"),
    ],
)
def test_bad_arguments_raise_clear_errors(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        augment.random_resized_crop(torch.zeros(2, 28, 28), **kwargs)


def test_bad_image_shape():
    with pytest.raises(ParameterError, match=r"images has shape \(28, 28\)"):
        augment.random_resized_crop(torch.zeros(28, 28))
    with pytest.raises(ParameterError, match="boxes has shape"):
        augment.resized_crop(torch.zeros(2, 28, 28), torch.zeros(3, 4))


def test_make_generator():
    g = torch.Generator()
    assert augment.make_generator(g) is g
    assert torch.equal(
        torch.rand(3, generator=augment.make_generator(5)),
        torch.rand(3, generator=torch.Generator().manual_seed(5)),
    )
    assert isinstance(augment.make_generator(None), torch.Generator)


@settings(max_examples=40)
@given(
    n=st.integers(1, 6),
    out_h=st.integers(1, 30),
    out_w=st.integers(1, 30),
    seed=st.integers(0, 2**16),
    double=st.booleans(),
)
def test_separable_grid_is_bitwise_affine_grid(n, out_h, out_w, seed, double):
    """The per-row / per-column grid equals F.affine_grid of the axis-aligned θ, bit for bit."""
    import torch.nn.functional as F

    dtype = torch.float64 if double else torch.float32
    sx, tx, sy, ty = torch.rand((4, n), generator=torch.Generator().manual_seed(seed), dtype=dtype) * 2 - 1
    theta = torch.zeros((n, 2, 3), dtype=dtype)
    theta[:, 0, 0], theta[:, 0, 2], theta[:, 1, 1], theta[:, 1, 2] = sx, tx, sy, ty
    expected = F.affine_grid(theta, [n, 1, out_h, out_w], align_corners=False)
    assert torch.equal(augment._separable_grid(sx, tx, sy, ty, out_h, out_w), expected)
