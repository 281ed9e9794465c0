"""Data augmentation for the MNIST experiments: RandomResizedCrop in torch, batched and seeded.

Tian 2023, App. E.3 augments MNIST with ``transforms.RandomResizedCrop((28, 28), scale=(0.5, 1.0),
ratio=(0.5, 1.5))`` from torchvision.  torchvision has no CPU wheel on this project's registry, so
:func:`random_resized_crop` re-implements it in torch, vectorized over the batch:

* the crop box is sampled exactly as torchvision does (up to 10 attempts of an area fraction
  ``s ~ U(scale)`` and a log-uniform aspect ratio ``r``; width ``round(sqrt(s A r))``, height
  ``round(sqrt(s A / r))``; a uniformly placed box that fits; otherwise a centre crop with the
  ratio clamped to ``ratio``), with all attempts of all images drawn in one call;
* the box is resized to ``size`` with bilinear interpolation by :func:`torch.nn.functional.grid_sample`
  (``align_corners=False``: pixel centres map as in torchvision's resize).  Unlike crop-then-resize,
  samples within half a pixel of the box edge interpolate with the neighbouring pixels *outside* the
  box (clamped at the image border); for MNIST's black borders the difference is negligible.

Randomness comes only from an explicit :class:`torch.Generator` (or an integer seed), so a batch is
reproducible on CPU.  Explained in the chapters ``book/tian-mnist-filters.py`` (Fig. 13) and
``book/tian-poster-probe.py`` (SimCLR-style views).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from nlcl.core.validate import ParameterError, positive_int

__all__ = [
    "PAPER_RRC",
    "RandomResizedCrop",
    "random_resized_crop",
    "random_resized_crop_params",
    "resized_crop",
    "make_generator",
]

#: Number of rejection-sampling attempts per image (torchvision's value).
N_ATTEMPTS = 10


def make_generator(seed: int | torch.Generator | None) -> torch.Generator:
    """A CPU :class:`torch.Generator`: returned as is, seeded with an int, or random for ``None``."""
    if isinstance(seed, torch.Generator):
        return seed
    gen = torch.Generator()
    if seed is None:
        gen.seed()
    else:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ParameterError(f"seed={seed!r} must be an integer >= 0, a torch.Generator or None")
        gen.manual_seed(int(seed))
    return gen


def _check_range(name: str, value, lower_ok: float) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name}={value!r} must be a pair (low, high) of numbers") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= lower_ok or hi < lo:
        raise ParameterError(f"{name}={value!r} must satisfy {lower_ok} < low <= high (finite)")
    return lo, hi


def random_resized_crop_params(
    n: int,
    height: int,
    width: int,
    scale: tuple[float, float] = (0.5, 1.0),
    ratio: tuple[float, float] = (0.5, 1.5),
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """Sample ``n`` crop boxes as torchvision's ``RandomResizedCrop.get_params``, vectorized.

    Returns an int64 tensor (n, 4) of ``(top, left, h, w)``.  Per image, the first of
    :data:`N_ATTEMPTS` candidate boxes that fits is used; images without one get the centre
    crop with the aspect ratio clamped to ``ratio``.  Tian 2023, App. E.3 (chapter
    ``tian-mnist-filters``).
    """
    n = positive_int("n", n)
    height, width = positive_int("height", height), positive_int("width", width)
    s_lo, s_hi = _check_range("scale", scale, 0.0)
    r_lo, r_hi = _check_range("ratio", ratio, 0.0)
    if s_hi > 1.0:
        raise ParameterError(f"scale={scale!r} must lie in (0, 1]")
    gen = make_generator(generator)
    area = float(height * width)
    u = torch.rand((n, N_ATTEMPTS, 4), generator=gen, dtype=torch.float64)
    target = area * (s_lo + (s_hi - s_lo) * u[..., 0])
    log_r = math.log(r_lo) + (math.log(r_hi) - math.log(r_lo)) * u[..., 1]
    aspect = torch.exp(log_r)
    w = torch.round(torch.sqrt(target * aspect)).long()
    h = torch.round(torch.sqrt(target / aspect)).long()
    ok = (w > 0) & (w <= width) & (h > 0) & (h <= height)
    # top ~ U{0..H-h}, left ~ U{0..W-w} (integer uniform via floor)
    top = torch.floor(u[..., 2] * (height - h + 1).clamp(min=1)).long()
    left = torch.floor(u[..., 3] * (width - w + 1).clamp(min=1)).long()
    first = torch.argmax(ok.to(torch.int8), dim=1)  # first fitting attempt (0 if none)
    idx = torch.arange(n)
    box = torch.stack([top[idx, first], left[idx, first], h[idx, first], w[idx, first]], dim=1)
    # fallback: centre crop (torchvision's rule)
    in_ratio = width / height
    if in_ratio < r_lo:
        fw, fh = width, int(round(width / r_lo))
    elif in_ratio > r_hi:
        fh, fw = height, int(round(height * r_hi))
    else:
        fw, fh = width, height
    fallback = torch.tensor([(height - fh) // 2, (width - fw) // 2, fh, fw], dtype=torch.long)
    none = ~ok.any(dim=1)
    box[none] = fallback
    return box


def _as_nchw(images) -> tuple[torch.Tensor, tuple[int, ...]]:
    x = torch.as_tensor(images)
    if not torch.is_floating_point(x):
        x = x.to(torch.float32)
    if x.ndim == 3:
        return x.unsqueeze(1), tuple(x.shape[:1])
    if x.ndim == 4:
        return x, tuple(x.shape[:2])
    raise ParameterError(f"images has shape {tuple(x.shape)}; expected (n, H, W) or (n, C, H, W)")


def random_resized_crop(
    images,
    size: tuple[int, int] = (28, 28),
    scale: tuple[float, float] = (0.5, 1.0),
    ratio: tuple[float, float] = (0.5, 1.5),
    generator: torch.Generator | int | None = None,
) -> torch.Tensor:
    """Crop a random box of each image and resize it to ``size`` (bilinear), for a whole batch.

    ``images``: array or tensor (n, H, W) or (n, C, H, W); returns a floating tensor with the same
    leading dimensions and spatial size ``size``.  The defaults are the paper's
    ``RandomResizedCrop((28, 28), scale=(0.5, 1.0), ratio=(0.5, 1.5))`` (Tian 2023, App. E.3;
    chapters ``tian-mnist-filters`` and ``tian-poster-probe``).
    """
    x, lead = _as_nchw(images)
    out_h, out_w = (positive_int("size[0]", size[0]), positive_int("size[1]", size[1]))
    n, c, height, width = x.shape
    if n == 0:
        return x.new_zeros((*lead, out_h, out_w))
    box = random_resized_crop_params(n, height, width, scale, ratio, generator)
    out = resized_crop(x, box, (out_h, out_w))
    return out.reshape(*lead, out_h, out_w)


def _base_coords(steps: int, like: torch.Tensor) -> torch.Tensor:
    """Normalized output pixel centres in [-1, 1], as ``F.affine_grid(align_corners=False)`` makes them."""
    if steps <= 1:
        return like.new_zeros(1)
    return torch.linspace(-1, 1, steps, dtype=like.dtype, device=like.device) * (steps - 1) / steps


def _separable_grid(sx, tx, sy, ty, out_h: int, out_w: int) -> torch.Tensor:
    """The grid of ``F.affine_grid`` for the axis-aligned maps x_in = sx x + tx, y_in = sy y + ty.

    ``sx, tx, sy, ty``: (n,).  Returns (n, out_h, out_w, 2), bitwise equal to ``F.affine_grid`` with
    θ = [[sx, 0, tx], [0, sy, ty]]: there each coordinate is the dot product (x, y, 1)·θ_row, whose
    zero term adds exactly 0, i.e. ``x * sx + tx`` rounded after the product and after the sum, as
    here; computing it per column and per row (then broadcasting) avoids the n batched (HW×3)·(3×2)
    products, the slowest part of the crop.
    """
    n = sx.shape[0]
    gx = _base_coords(out_w, sx)[None, :] * sx[:, None] + tx[:, None]  # (n, out_w)
    gy = _base_coords(out_h, sy)[None, :] * sy[:, None] + ty[:, None]  # (n, out_h)
    return torch.stack([gx[:, None, :].expand(n, out_h, out_w), gy[:, :, None].expand(n, out_h, out_w)], -1)


def resized_crop(images, boxes: torch.Tensor, size: tuple[int, int] = (28, 28)) -> torch.Tensor:
    """Resize box ``boxes[k] = (top, left, h, w)`` of image ``k`` to ``size``, bilinearly.

    ``images``: (n, H, W) or (n, C, H, W); ``boxes``: (n, 4).  Output pixel ``(u, v)`` samples the
    input at row ``top + (u + 1/2) h / size[0] - 1/2`` and column ``left + (v + 1/2) w / size[1] - 1/2``
    (torchvision's resize convention), interpolating bilinearly and clamping at the image border.
    The deterministic half of :func:`random_resized_crop` (Tian 2023, App. E.3; chapter
    ``tian-mnist-filters``).
    """
    x, lead = _as_nchw(images)
    out_h, out_w = (positive_int("size[0]", size[0]), positive_int("size[1]", size[1]))
    n, c, height, width = x.shape
    boxes = torch.as_tensor(boxes)
    if boxes.shape != (n, 4):
        raise ParameterError(f"boxes has shape {tuple(boxes.shape)}; expected ({n}, 4)")
    top, left, h, w = boxes.to(device=x.device, dtype=x.dtype).unbind(1)
    # affine map from output normalized coords to input normalized coords (align_corners=False):
    # x_in = (w/W) x_out + (2 left + w)/W - 1, likewise for y.  The map is axis-aligned, so the
    # sampling grid is separable: x_in depends on the output column only, y_in on the row only.
    grid = _separable_grid(
        w / width, (2 * left + w) / width - 1, h / height, (2 * top + h) / height - 1, out_h, out_w
    )
    out = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    return out.reshape(*lead, out_h, out_w)


@dataclass(frozen=True)
class RandomResizedCrop:
    """Callable form of :func:`random_resized_crop` with fixed hyper-parameters.

    ``RandomResizedCrop()(images, generator)`` applies the paper's augmentation (Tian 2023,
    App. E.3; chapter ``tian-mnist-filters``).
    """

    size: tuple[int, int] = (28, 28)
    scale: tuple[float, float] = (0.5, 1.0)
    ratio: tuple[float, float] = (0.5, 1.5)

    def __call__(self, images, generator: torch.Generator | int | None = None) -> torch.Tensor:
        return random_resized_crop(images, self.size, self.scale, self.ratio, generator)


#: The augmentation of Tian 2023, App. E.3.
PAPER_RRC = RandomResizedCrop()
