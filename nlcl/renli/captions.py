"""Richer captions for the real-data analog of Ren & Li (2023), Sec. 6: digit, stroke thickness, slant.

The label-like captions of :mod:`nlcl.renli.text` carry one latent variable (the digit), and ten
classes.  MSCOCO captions describe several things at once, so here each MNIST image gets a caption
that names its digit **and** two attributes measured from the image itself
(:func:`stroke_attributes`):

* stroke thickness: twice the number of ink pixels (intensity > ½) over the number of ink pixels
  on the stroke boundary (ink pixels with a 4-neighbour off), an area/half-perimeter estimate of
  the stroke width in pixels;
* slant: the shear −μ₁₁/μ₀₂ of the intensity-weighted second moments (image rows grow downward,
  so a positive slant leans right).

Each attribute is cut into three levels at the tertiles *within each digit* of the training images
(:func:`attribute_levels`), so the attributes are nearly independent of the digit.  Captions fill
one of several templates (:data:`RICH_TEMPLATES`) with the digit and the two attribute words:
10 × 3 × 3 × len(templates) distinct sentences (:func:`rich_caption_sentences`).
:func:`latent_codes` builds the design matrix of the three latent variables, and
:func:`heads_metrics` the four quantities of the chapter (alignment, stable rank, condition
numbers, zero-shot accuracy) for trained heads.

Explained in the chapter ``book/renli-mnist-captions.py`` (section "Richer captions").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from nlcl.core.validate import ParameterError, positive_int
from nlcl.renli.heads import class_means, empirical_covariance, zero_shot_accuracy
from nlcl.renli.metrics import alignment_score, condition_number, stable_rank
from nlcl.renli.text import DIGIT_NAMES

__all__ = [
    "THICKNESS_WORDS",
    "SLANT_WORDS",
    "RICH_TEMPLATES",
    "stroke_attributes",
    "attribute_levels",
    "rich_caption_sentences",
    "rich_caption_index",
    "latent_codes",
    "latent_map",
    "heads_metrics",
]

#: Words for the three thickness levels (thin → thick).
THICKNESS_WORDS = ("thin", "medium", "thick")
#: Words for the three slant levels (left → right).
SLANT_WORDS = ("leaning left", "upright", "leaning right")
#: Caption templates: ``{name}``/``{digit}`` the digit, ``{thick}`` and ``{slant}`` the attribute words.
RICH_TEMPLATES = (
    "a {thick} handwritten {name}, {slant}",
    "the number {name} drawn with {thick} strokes, {slant}",
    "a scanned digit {digit} in {thick} ink, {slant}",
    "a handwritten {name} {slant}, written with a {thick} pen",
)


def stroke_attributes(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(thickness, slant) of each image (n, 28, 28) with intensities in [0, 1] (module docstring).

    Raises
    ------
    ParameterError
        If ``images`` is not (n, h, w) or an image has no ink.
    """
    img = np.asarray(images, dtype=np.float64)
    if img.ndim != 3:
        raise ParameterError(f"images has shape {img.shape}; expected (n, height, width)")
    mass = img.sum((1, 2))
    if np.any(mass <= 0):
        raise ParameterError(
            f"images {np.flatnonzero(mass <= 0)[:5].tolist()} have no ink; cannot measure strokes"
        )
    ys, xs = np.mgrid[0 : img.shape[1], 0 : img.shape[2]]
    cy = (img * ys).sum((1, 2)) / mass
    cx = (img * xs).sum((1, 2)) / mass
    dy, dx = ys[None] - cy[:, None, None], xs[None] - cx[:, None, None]
    mu11 = (img * dx * dy).sum((1, 2)) / mass
    mu02 = (img * dy * dy).sum((1, 2)) / mass
    ink = img > 0.5
    inner = ink.copy()
    inner[:, 1:, :] &= ink[:, :-1, :]
    inner[:, :-1, :] &= ink[:, 1:, :]
    inner[:, :, 1:] &= ink[:, :, :-1]
    inner[:, :, :-1] &= ink[:, :, 1:]
    area = ink.sum((1, 2))
    boundary = area - inner.sum((1, 2))
    return 2.0 * area / np.maximum(boundary, 1), -mu11 / mu02


def attribute_levels(
    values: np.ndarray,
    labels: np.ndarray,
    *,
    reference_values: np.ndarray | None = None,
    reference_labels: np.ndarray | None = None,
    n_levels: int = 3,
) -> np.ndarray:
    """Level 0…n_levels−1 of each value, cut at the quantiles of its class in the reference set.

    The reference (default: the values themselves) is the training set, so test images are
    levelled with the training cut points.  Chapter ``book/renli-mnist-captions.py``.

    Raises
    ------
    ParameterError
        If shapes differ or a class of ``labels`` is missing from the reference.
    """
    values, labels = np.asarray(values, dtype=float), np.asarray(labels)
    ref_v = values if reference_values is None else np.asarray(reference_values, dtype=float)
    ref_l = labels if reference_labels is None else np.asarray(reference_labels)
    if values.shape != labels.shape or ref_v.shape != ref_l.shape or values.ndim != 1:
        raise ParameterError(
            "values/labels and reference_values/reference_labels must be 1-D pairs of equal length"
        )
    n_levels = positive_int("n_levels", n_levels)
    out = np.zeros(len(values), dtype=np.int64)
    for k in np.unique(labels):
        ref = ref_v[ref_l == k]
        if ref.size == 0:
            raise ParameterError(f"class {k} has no reference values")
        cuts = np.quantile(ref, np.arange(1, n_levels) / n_levels)
        out[labels == k] = np.digitize(values[labels == k], cuts)
    return out


def rich_caption_sentences(templates: Sequence[str] = RICH_TEMPLATES) -> list[str]:
    """All captions; entry ((digit·3 + thickness)·3 + slant)·T + t is template t (T templates).

    Raises
    ------
    ParameterError
        If ``templates`` is empty or uses a field other than {name}, {digit}, {thick}, {slant}.
    """
    templates = list(templates)
    if not templates:
        raise ParameterError("templates=[] is not allowed; give at least one caption template")
    out = []
    try:
        for k, name in enumerate(DIGIT_NAMES):
            for thick in THICKNESS_WORDS:
                for slant in SLANT_WORDS:
                    out += [t.format(name=name, digit=k, thick=thick, slant=slant) for t in templates]
    except (KeyError, IndexError) as err:
        raise ParameterError(
            f"templates uses an unknown field {err}; allowed: {{name}}, {{digit}}, {{thick}}, {{slant}}"
        ) from None
    return out


def rich_caption_index(
    labels: np.ndarray, thickness: np.ndarray, slant: np.ndarray, rng: np.random.Generator, n_templates: int
) -> torch.Tensor:
    """The caption of each image in :func:`rich_caption_sentences`, its template drawn from ``rng``."""
    n_templates = positive_int("n_templates", n_templates)
    labels, thickness, slant = (np.asarray(a, dtype=np.int64) for a in (labels, thickness, slant))
    if not (labels.shape == thickness.shape == slant.shape):
        raise ParameterError("labels, thickness and slant must have the same shape")
    if thickness.min() < 0 or thickness.max() > 2 or slant.min() < 0 or slant.max() > 2:
        raise ParameterError("thickness and slant levels must lie in 0..2")
    template = rng.integers(0, n_templates, len(labels))
    return torch.from_numpy(((labels * 3 + thickness) * 3 + slant) * n_templates + template)


def latent_codes(labels: np.ndarray, thickness: np.ndarray, slant: np.ndarray) -> torch.Tensor:
    """Design matrix (n, 13) of the three latent variables: digit (9), thickness (2), slant (2).

    One-hot codes without their first level, centred over the samples: the analog of the latent z
    of Ren & Li's model for the rich captions (a latent of dimension r = 13).  Chapter
    ``book/renli-mnist-captions.py``.
    """
    blocks = []
    for values, levels in ((labels, 10), (thickness, 3), (slant, 3)):
        onehot = torch.nn.functional.one_hot(torch.as_tensor(np.asarray(values), dtype=torch.long), levels)
        blocks.append(onehot[:, 1:].double())
    Z = torch.cat(blocks, dim=1)
    return Z - Z.mean(0)


def latent_map(features: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
    """Least-squares map U (..., p, k) with features ≈ codes·U: the analog of U_A = W_A M_A.

    ``features`` (..., n, k) are centred first; ``codes`` (n, p) from :func:`latent_codes`.  Its
    condition number (:func:`nlcl.renli.metrics.condition_number`) measures how evenly the
    representation carries the latent variables.  Chapter ``book/renli-mnist-captions.py``.
    """
    F = features.double() - features.double().mean(-2, keepdim=True)
    if codes.dim() != 2 or codes.shape[0] != F.shape[-2]:
        raise ParameterError(f"codes {tuple(codes.shape)} must be (n, p) with n = {F.shape[-2]}")
    Zt = codes.to(F.dtype)
    return torch.linalg.solve(Zt.T @ Zt, Zt.T @ F)


def heads_metrics(
    image_heads: torch.nn.Module,
    text_heads: torch.nn.Module,
    x_test: torch.Tensor,
    caption_emb: torch.Tensor,
    caption_index: torch.Tensor,
    prompt_emb: torch.Tensor,
    labels: torch.Tensor,
    codes: torch.Tensor | None = None,
    *,
    n_align: int = 512,
) -> dict[str, np.ndarray]:
    """Alignment, balance and zero-shot accuracy of R trained heads on held-out images, (R,) each.

    ``alignment``: Def. 4.1 on the first ``n_align`` test images and their captions; ``stable_rank``:
    Def. 4.2 of the image-embedding covariance; ``class_condition``: σ₁/σ₉ of the class means;
    ``latent_condition``: σ₁/σ₁₃ of :func:`latent_map` (when ``codes`` is given); ``zero_shot``:
    accuracy with the prompts.  Ren & Li (2023), Defs. 4.1-4.2 and Sec. 6; chapter
    ``book/renli-mnist-captions.py``.
    """
    n_align = positive_int("n_align", n_align)
    R = image_heads.n_runs
    rep = lambda t: t.expand(R, *t.shape).contiguous()  # noqa: E731
    with torch.no_grad():
        img = image_heads(rep(x_test))
        txt = text_heads(rep(caption_emb), rep(caption_index[:n_align]))
        prm = text_heads(rep(prompt_emb))
        out = {
            "alignment": alignment_score(img[:, :n_align], txt),
            "stable_rank": stable_rank(empirical_covariance(img.double())),
            "class_condition": condition_number(class_means(img.double(), labels, 10), k=9),
            "zero_shot": zero_shot_accuracy(img, prm, labels),
        }
        if codes is not None:
            out["latent_condition"] = condition_number(latent_map(img, codes), k=codes.shape[1])
    return {k: v.double().cpu().numpy() for k, v in out.items()}
