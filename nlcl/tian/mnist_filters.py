"""The two-layer receptive-field experiment on MNIST (Tian 2023, App. E.3, Figs. 12-13).

What the experiment needs around the shared network and trainer (:mod:`nlcl.tian.rf_network`,
:mod:`nlcl.tian.tokens.training`): splitting images into the 4 receptive fields, a view sampler for
:func:`nlcl.tian.tokens.training.train_batched`, and the two filter measurements (high-frequency
energy, pairwise |cos|). Explained in the chapter ``book/tian-mnist-filters.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from nlcl.core.validate import ParameterError, positive_float, positive_int

if TYPE_CHECKING:  # pragma: no cover
    from nlcl.datasets.augment import RandomResizedCrop

__all__ = [
    "RFViewSampler",
    "RF_NAMES",
    "filter_mosaic",
    "filters_to_images",
    "high_frequency_fraction",
    "mean_pairwise_abs_cos",
    "receptive_fields",
]


#: Names of the 4 receptive fields of App. E.3, in the paper's order (Fig. 12 caption).
RF_NAMES = ("upper left", "upper right", "bottom left", "bottom right")


def receptive_fields(images, rf: int = 14) -> torch.Tensor:
    """Split images (..., H, W) into disjoint ``rf`` x ``rf`` receptive fields, vectorized.

    Returns (..., K, rf*rf) with K = (H/rf)(W/rf), fields in row-major order; for MNIST and
    ``rf=14`` that is K = 4 fields of d = 196 pixels: upper left (0), upper right (1), bottom left
    (2), bottom right (3), as in Tian 2023, App. E.3 / Fig. 2(b) (chapter ``tian-mnist-filters``).
    Inverse: :func:`filters_to_images`.
    """
    x = torch.as_tensor(images)
    rf = positive_int("rf", rf)
    if x.ndim < 2 or x.shape[-1] % rf or x.shape[-2] % rf:
        raise ParameterError(
            f"images has shape {tuple(x.shape)}; expected (..., H, W) with H and W multiples of rf={rf}"
        )
    H, W = x.shape[-2:]
    lead = x.shape[:-2]
    x = x.reshape(*lead, H // rf, rf, W // rf, rf).movedim(-3, -2)  # (..., H/rf, W/rf, rf, rf)
    return x.reshape(*lead, (H // rf) * (W // rf), rf * rf)


def filters_to_images(filters, rf: int = 14) -> np.ndarray:
    """Reshape filters (..., d) with d = rf*rf back to ``rf`` x ``rf`` images (numpy), for plotting."""
    w = np.asarray(torch.as_tensor(filters).detach().cpu())
    if w.shape[-1] != rf * rf:
        raise ParameterError(f"filters has shape {w.shape}; expected (..., {rf * rf}) for rf={rf}")
    return w.reshape(*w.shape[:-1], rf, rf)


class RFViewSampler:
    """Minibatches of two views of MNIST as receptive-field inputs for the two-layer trainer.

    An adapter between :class:`~nlcl.datasets.mnist.MNISTData` and :func:`nlcl.tian.tokens.training.train_batched` (which takes a
    callable ``data(step) -> (x, x')`` of (R, N, K, d) tensors), for Tian 2023, App. E.3: batch
    size ``batch_size``, epochs of a fresh permutation per *data seed* ("start new pass (epoch) of
    the dataset if needed"), and, for runs with ``augment[r]``, each view an independent
    :func:`nlcl.datasets.augment.random_resized_crop` of the image; without augmentation both views are
    the image itself.  Runs with the same data seed see the same images in the same order, so
    runs that differ only in augmentation are paired.  Deterministic for given seeds; must be
    called with steps 0, 1, 2, ... in order (chapter ``tian-mnist-filters``).  ``chunk`` steps are
    prepared at once (default: about 4,096 images), which gives the same views as one step at a time.
    """

    def __init__(
        self,
        images,
        batch_size: int,
        augment: Sequence[bool],
        data_seeds: Sequence[int],
        *,
        rf: int = 14,
        crop: RandomResizedCrop | None = None,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
        chunk: int | None = None,
    ) -> None:
        from nlcl.datasets.augment import PAPER_RRC

        self.images = torch.as_tensor(np.asarray(images), dtype=dtype)
        if self.images.ndim != 3:
            raise ParameterError(f"images has shape {tuple(self.images.shape)}; expected (n, H, W)")
        self.batch_size = positive_int("batch_size", batch_size)
        self.augment = torch.as_tensor([bool(a) for a in augment])
        seeds = [int(s) for s in data_seeds]
        if len(seeds) != len(self.augment):
            raise ParameterError(
                f"data_seeds has {len(seeds)} entries; expected one per run ({len(self.augment)})"
            )
        self.unique_seeds, self.run_seed_index = np.unique(seeds, return_inverse=True)
        self.rf = positive_int("rf", rf)
        self.crop = crop if crop is not None else PAPER_RRC
        self.device = torch.device(device)
        self._gen = torch.Generator().manual_seed(int(self.unique_seeds.sum()) * 7919 + len(seeds))
        self._perm_gens = [torch.Generator().manual_seed(int(s)) for s in self.unique_seeds]
        self._perms: torch.Tensor | None = None
        self._epoch = -1
        self._next_step = 0
        # Views are prepared for `chunk` consecutive steps at once (default: about 4,096 images), in
        # the order of single steps: the same permutations, the same crop draws, image by image.
        per_step = len(self.augment) * self.batch_size
        self.chunk = positive_int("chunk", chunk) if chunk is not None else max(1, 4096 // per_step)
        self._ready: tuple[torch.Tensor, torch.Tensor] | None = None
        self._ready_start = 0

    @property
    def n_runs(self) -> int:
        """R, the number of runs served."""
        return int(self.augment.shape[0])

    def _perm(self, epoch: int) -> torch.Tensor:
        """The permutation of epoch ``epoch`` for every data seed (n_seeds, n); epochs in order."""
        if epoch != self._epoch:
            n = self.images.shape[0]
            self._perms = torch.stack([torch.randperm(n, generator=g) for g in self._perm_gens])
            self._epoch = epoch
        return self._perms

    def _indices(self, step: int, count: int = 1) -> torch.Tensor:
        """Image indices of steps ``step .. step + count - 1`` for every data seed (n_seeds, count·B)."""
        n, B = self.images.shape[0], self.batch_size
        pos = torch.arange(step * B, (step + count) * B)
        epoch, offset = pos // n, pos % n
        out = torch.empty(len(self._perm_gens), count * B, dtype=torch.long)
        for e in torch.unique(epoch).tolist():  # the epochs these batches touch, in order
            mask = epoch == e
            out[:, mask] = self._perm(e)[:, offset[mask]]
        return out

    def _prepare(self, step: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The two views of steps ``step .. step + count - 1``: two (count, R, B, K, d) tensors."""
        R, B = self.n_runs, self.batch_size
        idx = self._indices(step, count)[torch.as_tensor(self.run_seed_index)]  # (R, count·B)
        x = self.images[idx.reshape(R, count, B).transpose(0, 1)]  # (count, R, B, H, W)
        a = self.augment
        if not bool(a.any()):
            x1 = receptive_fields(x, self.rf).to(device=self.device)
            return x1, x1.clone()
        H, W = x.shape[-2:]
        xa = x[:, a]  # (count, R_aug, B, H, W)
        both = torch.stack([xa, xa], 1)  # (count, 2, R_aug, B, H, W): per step as in one call
        crops = self.crop(both.reshape(-1, H, W), self._gen).reshape(both.shape)
        x1, x2 = x.clone(), x  # x is this call's own gather: it becomes the second view
        x1[:, a], x2[:, a] = crops[:, 0], crops[:, 1]
        to = dict(device=self.device)
        return receptive_fields(x1, self.rf).to(**to), receptive_fields(x2, self.rf).to(**to)

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        if step != self._next_step:
            raise ParameterError(f"step={step}; RFViewSampler must be called with step {self._next_step}")
        self._next_step += 1
        j = step - self._ready_start
        if self._ready is None or j >= self._ready[0].shape[0]:
            self._ready, self._ready_start, j = self._prepare(step, self.chunk), step, 0
        return self._ready[0][j], self._ready[1][j]


def high_frequency_fraction(filters, cutoff: float = 0.25) -> torch.Tensor:
    """Fraction of a filter's (non-DC) spectral energy at spatial frequencies above ``cutoff``.

    For a filter image w (s x s), with 2-D DFT ŵ(f) at frequencies f = (f_y, f_x) in cycles per
    pixel (``torch.fft.fftfreq``, |f_y|, |f_x| <= 1/2), the fraction is
    Σ_{|f| > cutoff} |ŵ(f)|² / Σ_{f ≠ 0} |ŵ(f)|², with |f| the Euclidean norm.  The DC term (the
    filter's mean) is excluded, so the measure is about texture, not brightness.  Used to quantify
    "smoother filters with weaker high-frequency components" (Tian 2023, App. E.3, Figs. 12-13;
    chapter ``tian-mnist-filters``).  ``filters``: (..., s, s); returns (...,).
    """
    w = torch.as_tensor(filters)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ParameterError(f"filters has shape {tuple(w.shape)}; expected (..., s, s)")
    cutoff = positive_float("cutoff", cutoff)
    s = w.shape[-1]
    power = torch.fft.fft2(w.to(torch.float64)).abs() ** 2
    f = torch.fft.fftfreq(s, dtype=torch.float64)
    radius = torch.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    if cutoff >= float(radius.max()):
        raise ParameterError(f"cutoff={cutoff} must be below the largest frequency {float(radius.max()):.3f}")
    high = (power * (radius > cutoff)).sum((-1, -2))
    total = (power * (radius > 0)).sum((-1, -2))
    return high / total.clamp_min(torch.finfo(torch.float64).tiny)


def mean_pairwise_abs_cos(filters) -> torch.Tensor:
    """Mean of |cos∠(w_m, w_m')| over the pairs m < m' of filters in one receptive field.

    ``filters``: (..., M, d) with M >= 2; returns (...,).  0 for mutually orthogonal filters, 1 for
    co-linear ones (what a linear network converges to in each RF, Tian 2023, Sec. 4); a measure
    of the diversity seen in Fig. 12 (chapter ``tian-mnist-filters``).
    """
    w = torch.as_tensor(filters).to(torch.float64)
    if w.ndim < 2 or w.shape[-2] < 2:
        raise ParameterError(f"filters has shape {tuple(w.shape)}; expected (..., M >= 2, d)")
    u = torch.nn.functional.normalize(w, dim=-1)
    cos = (u @ u.transpose(-1, -2)).abs()
    M = w.shape[-2]
    iu = torch.triu_indices(M, M, offset=1)
    return cos[..., iu[0], iu[1]].mean(-1)


def filter_mosaic(filters, rf: int = 14, ncols: int | None = None, pad: int = 1) -> np.ndarray:
    """Tile M filters (M, rf*rf) into one image, each scaled by its own max |w| to [-1, 1].

    Used to draw the filter grids of Tian 2023, Figs. 12-13 (chapter ``tian-mnist-filters``);
    ``ncols`` defaults to ceil(sqrt(M)); the padding between tiles is NaN (drawn as background).
    """
    w = filters_to_images(filters, rf)
    if w.ndim != 3:
        raise ParameterError(f"filters has shape {np.asarray(filters).shape}; expected (M, {rf * rf})")
    M = w.shape[0]
    ncols = positive_int("ncols", ncols if ncols is not None else int(np.ceil(np.sqrt(M))))
    nrows = int(np.ceil(M / ncols))
    scale = np.abs(w).reshape(M, -1).max(1)
    w = w / np.where(scale > 0, scale, 1.0)[:, None, None]
    out = np.full((nrows * (rf + pad) - pad, ncols * (rf + pad) - pad), np.nan)
    for m in range(M):  # M tiles (not samples): a plotting loop
        r, c = divmod(m, ncols)
        out[r * (rf + pad) : r * (rf + pad) + rf, c * (rf + pad) : c * (rf + pad) + rf] = w[m]
    return out
