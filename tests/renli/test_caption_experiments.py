"""Tests for nlcl.renli.caption_experiments and nlcl.renli.caption_plots: the experiment steps and
figures of book/renli-mnist-captions.py (Ren & Li 2023, Sec. 6 / Fig. 2, offline analog)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from nlcl.core import plotting  # noqa: E402
from nlcl.renli.caption_experiments import (  # noqa: E402
    aligned_course,
    comparison_table,
    label_caption_index,
    late_srank_change,
    log_table,
    rich_evaluator,
    rich_summary,
    stroke_levels,
    tie_fraction,
)
from nlcl.renli.caption_plots import comparison_panels, rich_panels, spectrum_plot  # noqa: E402
from nlcl.renli.captions import latent_codes  # noqa: E402
from nlcl.renli.heads import train_heads  # noqa: E402


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 50), t=st.integers(1, 6))
def test_label_caption_index_names_the_label(seed, n, t):
    labels = np.random.default_rng(seed).integers(0, 10, n)
    idx = label_caption_index(labels, t, np.random.default_rng(seed))
    assert torch.equal(idx // t, torch.from_numpy(labels))
    rng = np.random.default_rng(seed)
    assert torch.equal(idx % t, torch.from_numpy(rng.integers(0, t, n)))


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), k=st.integers(1, 5))
def test_tie_fraction_counts_shared_captions(seed, n, k):
    idx = torch.from_numpy(np.random.default_rng(seed).integers(0, k, n))
    pairs = sum(int(idx[i] == idx[j]) for i in range(n) for j in range(n) if i != j)
    assert tie_fraction(idx, n) == pytest.approx(pairs / (n * (n - 1)))
    assert tie_fraction(torch.arange(n), n) == 0.0


def _runs(n=80, d=6, steps=20, seeds=(0, 1)):
    rs = np.random.RandomState(0)
    labels = np.repeat(np.arange(10), n // 10)
    x = torch.as_tensor(rs.normal(size=(n, d)) + labels[:, None], dtype=torch.float32)
    text = torch.as_tensor(rs.normal(size=(10, 5)), dtype=torch.float32)
    idx = torch.from_numpy(labels)
    seeds = list(seeds)
    methods = ["non-contrastive"] * len(seeds) + ["contrastive"] * len(seeds)
    lams = [0.0] * len(seeds) + [1.0] * len(seeds)
    return x, text, idx, labels, seeds, methods, lams, steps


def test_comparison_table_and_figures():
    x, text, idx, labels, seeds, methods, lams, steps = _runs()
    result = train_heads(
        x, text, idx, lams, seeds * 2, width=8, d_out=16, steps=steps, batch_size=16,
        progress=False,
    )  # fmt: skip
    y = torch.from_numpy(labels)
    table, img_emb = comparison_table(result, x, text, y, methods, seeds * 2, "cpu")
    assert list(table.method) == methods and list(table.seed) == seeds * 2
    assert img_emb.shape == (4, len(x), 16)
    assert table["zero-shot accuracy"].between(0, 1).all()
    assert (table["stable rank"] >= 1 - 1e-6).all() and (table["stable rank"] <= 16 + 1e-6).all()
    assert np.allclose(table["final loss"], result.loss[:, -50:].mean(1))
    fig, axes = plotting.subplots(1, 4)
    comparison_panels(axes[0], table, result.loss, seeds)
    assert axes[0][1].get_ylabel() and axes[0][3].get_xlabel() == "training step"
    fig, ax = plt.subplots()
    spectrum_plot(ax, img_emb, methods)
    assert ax.get_yscale() == "log"
    plt.close("all")


def test_rich_pipeline_on_a_small_run():
    x, text, idx, labels, seeds, methods, lams, steps = _runs()
    rs = np.random.RandomState(1)
    codes = latent_codes(labels, rs.randint(0, 3, len(labels)), rs.randint(0, 3, len(labels)))
    y = torch.from_numpy(labels)
    evaluate = rich_evaluator(x, text, idx, text, y, codes, "cpu")
    frames = []
    for arch in ("mlp", "linear"):
        res = train_heads(
            x, text, idx, lams, seeds * 2, width=8, d_out=16, steps=steps, batch_size=16,
            progress=False, heads=arch, log_every=5, evaluate=evaluate,
        )  # fmt: skip
        frames.append(log_table(res.log, arch, methods, seeds))
    rich = pd.concat(frames, ignore_index=True)
    assert set(rich.step) == {0, 5, 10, 15, 20}
    assert len(rich) == 2 * 5 * len(methods)
    assert {"alignment", "stable_rank", "class_condition", "zero_shot"} <= set(rich.columns)
    lin = rich[rich.arch == "linear"]
    change = late_srank_change(lin[lin.method == "non-contrastive"], steps, seeds)
    assert list(change.index) == seeds
    course = aligned_course(lin, steps)
    assert all(len(v) == len(seeds) for v in course.values())
    assert all(s == 0.0 or s >= 1.0 - 1e-9 for s in course["srank_aligned"])
    final = rich[rich.step == steps].assign(captions="rich")
    summary = rich_summary([final])
    assert summary.loc["rich", "mlp", "contrastive"]["alignment", "mean"] == pytest.approx(
        final[(final.arch == "mlp") & (final.method == "contrastive")].alignment.mean()
    )
    fig, axes = plotting.subplots(2, 4)
    rich_panels(axes, rich)
    assert axes[1, 1].get_ylabel() == "stable rank (Def. 4.2)"
    plt.close("all")


def test_aligned_course_on_a_hand_made_log():
    """Aligned from the second evaluation on (0.95 × the contrastive final score); the condition
    number grows from 2 to 8 while the stable rank stays above 1.5, then the run collapses."""
    rows = []
    for step, (al, sr, cc) in enumerate([(0.1, 5, 1), (0.97, 3, 2), (0.98, 2, 8), (0.98, 1.1, 50)]):
        rows.append(dict(method="non-contrastive", seed=0, step=step, alignment=al,
                         stable_rank=sr, class_condition=cc))  # fmt: skip
        rows.append(dict(method="contrastive", seed=0, step=step, alignment=1.0,
                         stable_rank=8, class_condition=1))  # fmt: skip
    course = aligned_course(pd.DataFrame(rows), final_step=3)
    assert course["regime_hits"] == [True]
    assert course["srank_aligned"] == [1.1]
    assert course["grow_aligned"] == [4.0]
    assert course["grow_ratios"] == [25.0]


def test_late_srank_change_reads_the_last_fifth():
    frame = pd.DataFrame(
        {"seed": [0] * 5 + [1] * 5, "step": list(range(0, 50, 10)) * 2,
         "stable_rank": [5, 4, 3, 2, 1, 2, 2, 2, 2, 3]}
    )  # fmt: skip
    change = late_srank_change(frame, 30, [1, 0])
    assert list(change.index) == [1, 0]
    assert change[0] == pytest.approx(1 / 2 - 1) and change[1] == pytest.approx(3 / 2 - 1)


def test_stroke_levels_are_tertiles_within_each_digit():
    rs = np.random.RandomState(0)
    images = np.zeros((60, 28, 28))
    for i in range(60):  # a bar of random width and shear: every image has ink
        w, shear = rs.randint(1, 6), rs.uniform(-0.4, 0.4)
        for row in range(4, 24):
            c = 14 + shear * (14 - row)
            images[i, row, int(round(c - w / 2)) : int(round(c + w / 2)) + 1] = 1.0
    labels = np.repeat(np.arange(3), 20)
    levels = stroke_levels(images, labels, images[:30], labels[:30])
    assert set(levels) == {"thick_tr", "slant_tr", "thick_te", "slant_te"}
    for k in ("thick_tr", "slant_tr"):
        assert set(np.unique(levels[k])) <= {0, 1, 2} and len(levels[k]) == 60
    assert len(levels["thick_te"]) == 30
