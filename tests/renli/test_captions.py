"""Tests for nlcl.renli.captions (stroke attributes, rich captions, metrics) and the linear heads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nlcl.core.validate import ParameterError
from nlcl.renli.captions import (
    RICH_TEMPLATES,
    SLANT_WORDS,
    THICKNESS_WORDS,
    attribute_levels,
    heads_metrics,
    latent_codes,
    latent_map,
    rich_caption_index,
    rich_caption_sentences,
    stroke_attributes,
)
from nlcl.renli.heads import HEADS, LinearHeads, MLPHeads, train_heads


def _stroke(width: int, shear: float) -> np.ndarray:
    """A vertical bar of ``width`` pixels, sheared by ``shear`` pixels per row (positive: top to the right)."""
    img = np.zeros((28, 28))
    for row in range(4, 24):
        centre = 14 + shear * (14 - row)
        img[row, int(round(centre - width / 2)) : int(round(centre + width / 2))] = 1.0
    return img


def test_stroke_attributes_measure_width_and_slant():
    thin, thick = stroke_attributes(np.stack([_stroke(2, 0.0), _stroke(6, 0.0)]))[0]
    assert thick > thin
    left, upright, right = stroke_attributes(np.stack([_stroke(3, -0.4), _stroke(3, 0.0), _stroke(3, 0.4)]))[
        1
    ]
    assert left < upright < right
    assert abs(upright) < 0.05
    with pytest.raises(ParameterError, match="no ink"):
        stroke_attributes(np.zeros((1, 28, 28)))
    with pytest.raises(ParameterError, match="shape"):
        stroke_attributes(np.zeros((28, 28)))


def test_attribute_levels_are_per_class_tertiles():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 300)
    values = rng.standard_normal(600) + 10 * labels  # class 1 is shifted: per-class cuts matter
    levels = attribute_levels(values, labels)
    for k in (0, 1):
        counts = np.bincount(levels[labels == k], minlength=3)
        assert np.all(np.abs(counts - 100) <= 2)
    test = attribute_levels(
        np.array([-5.0, 15.0]), np.array([0, 1]), reference_values=values, reference_labels=labels
    )
    assert test.tolist() == [0, 2]
    with pytest.raises(ParameterError, match="class 2"):
        attribute_levels(np.array([0.0]), np.array([2]), reference_values=values, reference_labels=labels)


def test_rich_captions_and_their_index():
    caps = rich_caption_sentences()
    T = len(RICH_TEMPLATES)
    assert len(caps) == len(set(caps)) == 10 * 3 * 3 * T
    idx = rich_caption_index(np.array([7]), np.array([2]), np.array([0]), np.random.default_rng(0), T)
    text = caps[int(idx[0])]
    assert THICKNESS_WORDS[2] in text and SLANT_WORDS[0] in text and ("seven" in text or "7" in text)
    with pytest.raises(ParameterError, match="unknown field"):
        rich_caption_sentences(["{colour}"])
    with pytest.raises(ParameterError, match="levels"):
        rich_caption_index(np.array([1]), np.array([3]), np.array([0]), np.random.default_rng(0), T)


def test_latent_codes_and_map_recover_a_linear_representation():
    rng = np.random.default_rng(1)
    labels, th, sl = rng.integers(0, 10, 500), rng.integers(0, 3, 500), rng.integers(0, 3, 500)
    Z = latent_codes(labels, th, sl)
    assert Z.shape == (500, 13) and torch.allclose(
        Z.mean(0), torch.zeros(13, dtype=torch.float64), atol=1e-12
    )
    U = torch.randn(2, 13, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    feats = Z @ U + 3.0
    assert torch.allclose(latent_map(feats, Z), U, atol=1e-9)
    with pytest.raises(ParameterError, match="codes"):
        latent_map(feats, Z[:10])


def test_linear_heads_and_logged_training():
    assert set(HEADS) == {"mlp", "linear"}
    heads = LinearHeads(6, 4, seeds=[0, 1])
    x = torch.randn(2, 32, 6)
    out = heads(x)
    assert out.shape == (2, 32, 4)
    assert torch.allclose(out.pow(2).sum(-1).mean(-1), torch.ones(2), atol=1e-5)
    table = torch.randn(2, 5, 6)
    idx = torch.randint(0, 5, (2, 9))
    assert torch.allclose(
        heads(table, idx), heads(torch.gather(table, 1, idx[..., None].expand(-1, -1, 6))), atol=1e-6
    )
    with pytest.raises(ParameterError, match="x has shape"):
        heads(torch.zeros(2, 3, 5))
    g = torch.Generator().manual_seed(0)
    img, txt = torch.randn(64, 6, generator=g), torch.randn(8, 5, generator=g)
    cap = torch.randint(0, 8, (64,), generator=g)
    prompts, labels = torch.randn(10, 5, generator=g), torch.arange(64) % 10
    evaluate = lambda a, b: heads_metrics(a, b, img, txt, cap, prompts, labels, n_align=32)  # noqa: E731
    res = train_heads(img, txt, cap, [0.0, 1.0], [0, 1], width=8, d_out=12, steps=6, batch_size=16,
                      heads="linear", log_every=3, evaluate=evaluate, progress=False)  # fmt: skip
    assert isinstance(res.image_heads, LinearHeads)
    assert [s for s, _ in res.log] == [0, 3, 6]
    assert set(res.log[-1][1]) == {"alignment", "stable_rank", "class_condition", "zero_shot"}
    assert res.log[-1][1]["alignment"].shape == (2,)
    mlp = train_heads(img, txt, cap, [1.0], [0], width=8, d_out=4, steps=2, batch_size=16, progress=False)
    assert isinstance(mlp.image_heads, MLPHeads) and mlp.log == []
    with pytest.raises(ParameterError, match="evaluate"):
        train_heads(img, txt, cap, [1.0], [0], width=8, d_out=4, steps=2, log_every=1, progress=False)
    with pytest.raises(ParameterError, match="heads"):
        train_heads(img, txt, cap, [1.0], [0], width=8, d_out=4, steps=2, heads="conv", progress=False)
