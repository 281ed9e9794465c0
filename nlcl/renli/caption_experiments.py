"""The experiment steps of ``book/renli-mnist-captions.py`` (Ren & Li 2023, Sec. 6 / Fig. 2, analog).

Each function is one step of the chapter, moved here unchanged (same operations, same order, same
random draws) so that the chapter reads like the paper:

* :func:`label_caption_index` — each image's label caption, its template drawn at random;
* :func:`comparison_table` — zero-shot accuracy, stable rank (Def. 4.2) and class-mean condition
  number of trained heads on held-out images (the comparison of Fig. 2);
* :func:`stroke_levels`, :func:`tie_fraction`, :func:`rich_evaluator`, :func:`log_table` — the
  rich-caption experiment: attribute levels, ties among captions, the evaluation during training
  (:func:`nlcl.renli.captions.heads_metrics`) and its log as a table;
* :func:`late_srank_change`, :func:`aligned_course` — what the steady-state claims of Thm. 4.3(a)
  and Lemma 5.1 read from the log of the non-contrastive linear heads;
* :func:`rich_summary` — mean and standard deviation of the final metrics per caption set,
  architecture and method.

The chapter's figures are in :mod:`nlcl.renli.caption_plots`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from nlcl.renli.captions import attribute_levels, heads_metrics, stroke_attributes
from nlcl.renli.heads import HeadsResult, class_means, empirical_covariance, zero_shot_accuracy
from nlcl.renli.metrics import condition_number, stable_rank

__all__ = [
    "aligned_course",
    "comparison_table",
    "label_caption_index",
    "late_srank_change",
    "log_table",
    "rich_evaluator",
    "rich_summary",
    "stroke_levels",
    "tie_fraction",
]

#: The final metrics summarised by :func:`rich_summary`.
SUMMARY_METRICS = ["alignment", "stable_rank", "class_condition", "latent_condition", "zero_shot"]


def label_caption_index(labels: np.ndarray, n_templates: int, rng: np.random.Generator) -> torch.Tensor:
    """Index of each image's label caption: caption ``label · n_templates + t``, the template ``t``
    drawn uniformly from ``rng`` once per image (Ren & Li 2023, Sec. 6 analog: one caption per
    image, :func:`nlcl.renli.text.caption_sentences` order)."""
    return torch.from_numpy(labels * n_templates + rng.integers(0, n_templates, len(labels)))


def comparison_table(
    result: HeadsResult,
    x_test: torch.Tensor,
    prompt_emb: torch.Tensor,
    y_test: torch.Tensor,
    methods: Sequence[str],
    seeds: Sequence[int],
    device: Any,
) -> tuple[pd.DataFrame, torch.Tensor]:
    """Fig. 2 of Ren & Li 2023 (analog): per trained run, on held-out images, the zero-shot
    accuracy with the prompts, the stable rank tr Σ/λ_max(Σ) of the image-embedding covariance
    (Def. 4.2), the condition number σ₁/σ₉ of the class means and the final loss (mean of the last
    50 steps). Returns the table and the image embeddings (R, n_test, d_out)."""
    R = len(methods)
    with torch.no_grad():
        img_emb = result.image_heads(x_test.to(device).expand(R, -1, -1).contiguous())
        prm_emb = result.text_heads(prompt_emb.to(device).expand(R, -1, -1).contiguous())
        cond = condition_number(class_means(img_emb.double(), y_test, 10), k=9)
        table = pd.DataFrame(
            {
                "method": methods,
                "seed": list(seeds),
                "zero-shot accuracy": zero_shot_accuracy(img_emb, prm_emb, y_test).cpu().numpy(),
                "stable rank": stable_rank(empirical_covariance(img_emb.double())).cpu().numpy(),
                "class-mean condition number": cond.cpu().numpy(),
                "final loss": result.loss[:, -50:].mean(1),
            }
        )
    return table, img_emb


def stroke_levels(
    train_images: np.ndarray,
    train_labels: np.ndarray,
    test_images: np.ndarray,
    test_labels: np.ndarray,
) -> dict[str, np.ndarray]:
    """Thickness and slant levels (0, 1, 2: tertiles within each digit of the training images,
    :func:`nlcl.renli.captions.attribute_levels`) of the training and test images: keys
    ``thick_tr``, ``slant_tr``, ``thick_te``, ``slant_te`` (Ren & Li 2023, Sec. 6 analog: captions
    that describe several things at once)."""
    thick_tr, slant_tr = stroke_attributes(train_images)
    thick_te, slant_te = stroke_attributes(test_images)
    ref = dict(reference_labels=train_labels)
    return {
        "thick_tr": attribute_levels(thick_tr, train_labels),
        "slant_tr": attribute_levels(slant_tr, train_labels),
        "thick_te": attribute_levels(thick_te, test_labels, reference_values=thick_tr, **ref),
        "slant_te": attribute_levels(slant_te, test_labels, reference_values=slant_tr, **ref),
    }


def tie_fraction(caption_index: torch.Tensor, n: int = 512) -> float:
    """Fraction of ordered pairs of distinct images among the first ``n`` that share a caption: the
    pairs on which the alignment score (Ren & Li 2023, Def. 4.1) cannot separate them."""
    same = caption_index[:n, None] == caption_index[None, :n]
    return float((same.sum() - n) / (n * (n - 1)))


def rich_evaluator(
    x_test: torch.Tensor,
    caption_emb: torch.Tensor,
    caption_index: torch.Tensor,
    prompt_emb: torch.Tensor,
    labels: torch.Tensor,
    codes: torch.Tensor,
    device: Any,
) -> Callable[[torch.nn.Module, torch.nn.Module], dict[str, np.ndarray]]:
    """The ``evaluate`` of :func:`nlcl.renli.heads.train_heads`: alignment (Def. 4.1), stable rank
    (Def. 4.2), class-mean and latent condition numbers and zero-shot accuracy of the heads on the
    held-out images (:func:`nlcl.renli.captions.heads_metrics`), tensors moved to ``device``."""

    def evaluate(image_heads: torch.nn.Module, text_heads: torch.nn.Module):
        return heads_metrics(
            image_heads,
            text_heads,
            x_test,
            caption_emb.to(device),
            caption_index.to(device),
            prompt_emb.to(device),
            labels,
            codes.to(device),
        )

    return evaluate


def log_table(
    log: Sequence[tuple[int, dict[str, Any]]], arch: str, methods: Sequence[str], seeds: Sequence[int]
) -> pd.DataFrame:
    """The evaluations of :attr:`nlcl.renli.heads.HeadsResult.log` as one row per (step, run):
    ``arch``, ``method``, ``seed`` (run ``i`` has seed ``seeds[i % len(seeds)]``), ``step`` and
    every metric."""
    rows = []
    for step, metrics in log:
        for i, m in enumerate(methods):
            rows.append(
                dict(
                    arch=arch,
                    method=m,
                    seed=seeds[i % len(seeds)],
                    step=step,
                    **{k: float(v[i]) for k, v in metrics.items()},
                )
            )
    return pd.DataFrame(rows)


def late_srank_change(runs: pd.DataFrame, steps: int, seeds: Sequence[int]) -> pd.Series:
    """Signed relative change of the stable rank (Ren & Li 2023, Def. 4.2) from the first evaluation
    at or after 80% of ``steps`` to the last, per seed (in ``seeds`` order): ~0 at an approximate
    stationary point (Thm. 4.3(a)). ``runs``: the log rows of one architecture and method."""
    ordered = runs.sort_values("step")
    late = ordered[ordered.step >= 0.8 * steps].groupby("seed").stable_rank
    return (late.last() / late.first() - 1.0).loc[list(seeds)]


def aligned_course(linear: pd.DataFrame, final_step: int) -> dict[str, list]:
    """What the non-contrastive runs of ``linear`` (the log rows of the linear heads) do once they are
    aligned, per seed (Ren & Li 2023, Thm. 4.3(a) and Lemma 5.1, rich-caption analog).

    A run is aligned at an evaluation when its alignment score is at least 0.95 times the score of
    the contrastive run of the same seed at ``final_step``. Per seed: ``regime_hits`` whether some aligned
    evaluation has 1.5 < stable rank ≤ 4.5; ``grow_ratios`` the final class-mean condition number over
    its value at the first aligned evaluation (NaN if never aligned); ``srank_aligned`` the smallest
    stable rank while aligned (0 if never); ``grow_aligned`` the condition number at the last aligned
    evaluation with stable rank > 1.5 over its value at the first such (1 when fewer than two).
    """
    c_final = linear[(linear.method == "contrastive") & (linear.step == final_step)]
    c_final_align = c_final.set_index("seed").alignment
    out: dict[str, list] = {
        "regime_hits": [],
        "grow_ratios": [],
        "srank_aligned": [],
        "grow_aligned": [],
    }
    for s, g in linear[linear.method == "non-contrastive"].groupby("seed"):
        g = g.sort_values("step")
        aligned = g.alignment >= 0.95 * c_final_align[s]
        hit = aligned & (g.stable_rank > 1.5) & (g.stable_rank <= 4.5)
        out["regime_hits"].append(bool(hit.any()))
        first = g[aligned]
        out["grow_ratios"].append(
            float(g.class_condition.iloc[-1] / first.class_condition.iloc[0]) if len(first) else float("nan")
        )
        out["srank_aligned"].append(float(first.stable_rank.min()) if len(first) else 0.0)
        regime = g[aligned & (g.stable_rank > 1.5)]
        out["grow_aligned"].append(
            float(regime.class_condition.iloc[-1] / regime.class_condition.iloc[0])
            if len(regime) >= 2
            else 1.0
        )
    return out


def rich_summary(finals: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Mean and standard deviation over seeds of the final metrics, per ``captions``, ``arch`` and
    ``method`` (the rows of every frame in ``finals``)."""
    return (
        pd.concat(list(finals), ignore_index=True)
        .groupby(["captions", "arch", "method"])[SUMMARY_METRICS]
        .agg(["mean", "std"])
    )
