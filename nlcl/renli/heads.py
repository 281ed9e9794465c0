"""Real-data analog of Ren & Li (2023), Sec. 6 / Fig. 2: fixed encoders, trainable 3-layer heads.

Pixel PCA stands in for the frozen image encoder, an offline sentence encoder
(:mod:`nlcl.renli.text`) for the text encoder; :class:`MLPHeads` are trained with the losses of
:mod:`nlcl.renli.losses`. Explained in the chapter ``book/renli-mnist-captions.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm import tqdm

from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    choice,
    nonneg_float,
    positive_float,
    positive_int,
)
from nlcl.renli.head_layers import batch_norm_columns, batch_norm_rows, normalize_output
from nlcl.renli.head_loss import fused_contrastive_loss

#: Head architectures of :func:`train_heads`: the paper's 3-layer heads and the theory's linear map.
HEADS = ("mlp", "linear")

#: Optimizers of :func:`train_heads`: Adam, or plain gradient descent on fresh batches (Ren & Li,
#: Algorithm 3.1).
OPTIMIZERS = ("adam", "gd")

__all__ = [
    "HEADS",
    "OPTIMIZERS",
    "HeadsResult",
    "LinearHeads",
    "MLPHeads",
    "class_means",
    "empirical_covariance",
    "fit_pixel_pca",
    "pixel_features",
    "train_heads",
    "zero_shot_accuracy",
]


def fit_pixel_pca(images: np.ndarray, n_components: int):
    """The fixed image encoder of the real-data analog: PCA of the pixels, fitted once, whitened.

    Stands in for the frozen pre-trained ResNet-101 of Ren & Li (2023), Sec. 6 (nothing pre-trained
    can be downloaded here).  ``images`` (n, ...) are flattened; the PCA (scikit-learn, full SVD:
    deterministic) is fitted on them and returned.  Use :func:`pixel_features` to encode.  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If ``n_components`` is not a positive integer or exceeds ``min(n, pixels)``.
    """
    from sklearn.decomposition import PCA

    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    k = positive_int("n_components", n_components)
    if k > min(x.shape):
        raise ParameterError(f"n_components={k} must be <= min(n_images, n_pixels) = {min(x.shape)}")
    return PCA(n_components=k, whiten=True, svd_solver="full").fit(x)


def pixel_features(pca, images: np.ndarray) -> torch.Tensor:
    """Encode ``images`` (n, ...) with a fitted :func:`fit_pixel_pca`: float32 tensor (n, n_components).

    Chapter ``renli-mnist-captions``.
    """
    x = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    return torch.from_numpy(pca.transform(x).astype(np.float32))


class MLPHeads(torch.nn.Module):
    """``R`` independent trainable 3-layer fully-connected heads with BatchNorm, vectorized over runs.

    ``Linear(d_in, w) → BatchNorm → ReLU → Linear(w, w) → BatchNorm → ReLU → Linear(w, d_out)``,
    then the output normalization of Ren & Li, Eq. 2 extended to outputs with a mean: centre over the
    batch and divide by ``sqrt(mean_batch ||h − mean h||²)`` (:func:`~nlcl.renli.model.normalize_batch`).  In
    evaluation mode the BatchNorm layers and the output normalization use running statistics
    (momentum ``momentum``), like ``torch.nn.BatchNorm1d``.  Ren & Li (2023), Sec. 6: "a 3-layer
    fully-connected network with batch norm between layers" on each side.  Run ``i`` initializes
    its weights like ``torch.nn.Linear`` from a generator seeded with ``seeds[i]``.  Inputs
    (R, n, d_in) → outputs (R, n, d_out).  Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For a non-positive size, or ``seeds`` of the wrong length.
    """

    def __init__(
        self, d_in: int, width: int, d_out: int, seeds: Sequence[int], momentum: float = 0.1
    ) -> None:
        super().__init__()
        d_in, width, d_out = (
            positive_int("d_in", d_in),
            positive_int("width", width),
            positive_int("d_out", d_out),
        )
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ParameterError("seeds=[] is not allowed; give one seed per run")
        self.momentum = nonneg_float("momentum", momentum)
        R = len(seeds)
        dims = [(d_in, width), (width, width), (width, d_out)]
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        for layer, (fan_in, fan_out) in enumerate(dims, start=1):
            bound = 1.0 / math.sqrt(fan_in)
            w = torch.stack([(torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * bound for g in gens])
            b = torch.stack([(torch.rand(fan_out, generator=g) * 2 - 1) * bound for g in gens])
            self.register_parameter(f"weight{layer}", torch.nn.Parameter(w))
            self.register_parameter(f"bias{layer}", torch.nn.Parameter(b))
        for layer in (1, 2):
            self.register_parameter(f"bn_gamma{layer}", torch.nn.Parameter(torch.ones(R, width)))
            self.register_parameter(f"bn_beta{layer}", torch.nn.Parameter(torch.zeros(R, width)))
            self.register_buffer(f"running_mean{layer}", torch.zeros(R, width))
            self.register_buffer(f"running_var{layer}", torch.ones(R, width))
        self.register_buffer("out_mean", torch.zeros(R, d_out))
        self.register_buffer("out_scale2", torch.ones(R))

    @property
    def n_runs(self) -> int:
        """Number of independent heads ``R``."""
        return int(self.weight1.shape[0])

    def forward(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Normalized representations (R, n, d_out) of inputs ``x`` (R, n, d_in).

        With ``index`` (R, n), ``x`` (R, C, d_in) is a table of distinct inputs and sample ``j`` of
        run ``i`` is ``x[i, index[i, j]]``.  A table smaller than the batch (``C < n``, e.g. a few
        captions) goes through the heads as it is, its BatchNorm and output statistics weighted by
        how often each row is drawn (:mod:`nlcl.renli.head_layers`), and its rows are gathered at
        the end; a larger one is gathered first.  Either way the batch's outputs, up to rounding,
        the cheaper way.  A batch runs its hidden layers transposed, (R, w, n), so that each
        BatchNorm is one fused call on a contiguous tensor.
        """
        _check_inputs(self, x, index, self.weight1.shape[1])
        if index is not None and x.shape[1] < index.shape[1]:
            counts = None
            if self.training:
                counts = torch.zeros(x.shape[:2], dtype=x.dtype, device=x.device)
                counts.scatter_add_(1, index, torch.ones(index.shape, dtype=x.dtype, device=x.device))
            h = torch.relu(
                batch_norm_rows(self, torch.baddbmm(self.bias1[:, None], x, self.weight1), 1, counts)
            )
            h = torch.relu(
                batch_norm_rows(self, torch.baddbmm(self.bias2[:, None], h, self.weight2), 2, counts)
            )
            h = normalize_output(self, torch.baddbmm(self.bias3[:, None], h, self.weight3), counts)
            return torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1]))
        if index is not None:
            x = _take_rows(x, index)
        h = torch.baddbmm(self.bias1[..., None], self.weight1.transpose(1, 2), x.transpose(1, 2))
        h = torch.relu(batch_norm_columns(self, h, 1))
        h = torch.baddbmm(self.bias2[..., None], self.weight2.transpose(1, 2), h)
        h = torch.relu(batch_norm_columns(self, h, 2))
        h = torch.baddbmm(self.bias3[..., None], self.weight3.transpose(1, 2), h)
        return normalize_output(self, h.transpose(1, 2))


def _take_rows(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Rows ``x[i, index[i, j]]`` (R, n, d) of tables ``x`` (R, C, d) (advanced indexing: a third of
    the time of ``torch.gather`` with an expanded index here)."""
    return x[torch.arange(x.shape[0], device=x.device)[:, None], index]


def _check_inputs(heads: torch.nn.Module, x: torch.Tensor, index: torch.Tensor | None, d_in: int) -> None:
    if x.dim() != 3 or x.shape[0] != heads.n_runs or x.shape[2] != d_in:
        raise ParameterError(f"x has shape {tuple(x.shape)}; expected ({heads.n_runs}, n, {d_in})")
    if index is not None and (index.dim() != 2 or index.shape[0] != heads.n_runs):
        raise ParameterError(f"index has shape {tuple(index.shape)}; expected ({heads.n_runs}, n)")


class LinearHeads(torch.nn.Module):
    """``R`` independent *linear* heads ``x ↦ Wᵀx`` followed by the output normalization of :class:`MLPHeads`.

    The learner of Ren & Li's theory (Sec. 3: a linear map per modality, then the batch-wise
    normalization of Eq. 2) put on the frozen features of the real-data analog, as a contrast to the
    paper's 3-layer heads of Sec. 6.  ``W`` (R, d_in, d_out) is initialized like
    ``torch.nn.Linear`` from a generator seeded with ``seeds[i]``; no bias (the normalization centres).
    Inputs (R, n, d_in) → outputs (R, n, d_out); ``index`` as in :meth:`MLPHeads.forward`.  Chapter
    ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For a non-positive size or an empty ``seeds``.
    """

    def __init__(self, d_in: int, d_out: int, seeds: Sequence[int], momentum: float = 0.1) -> None:
        super().__init__()
        d_in, d_out = positive_int("d_in", d_in), positive_int("d_out", d_out)
        seeds = [int(s) for s in seeds]
        if not seeds:
            raise ParameterError("seeds=[] is not allowed; give one seed per run")
        self.momentum = nonneg_float("momentum", momentum)
        bound = 1.0 / math.sqrt(d_in)
        gens = [torch.Generator().manual_seed(s) for s in seeds]
        w = torch.stack([(torch.rand(d_in, d_out, generator=g) * 2 - 1) * bound for g in gens])
        self.weight = torch.nn.Parameter(w)
        self.register_buffer("out_mean", torch.zeros(len(seeds), d_out))
        self.register_buffer("out_scale2", torch.ones(len(seeds)))

    @property
    def n_runs(self) -> int:
        """Number of independent heads ``R``."""
        return int(self.weight.shape[0])

    def forward(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Normalized representations (R, n, d_out) of inputs ``x`` (R, n, d_in) (or a table and ``index``)."""
        _check_inputs(self, x, index, self.weight.shape[1])
        if index is not None and x.shape[1] >= index.shape[1]:
            x, index = _take_rows(x, index), None
        h = torch.bmm(x, self.weight)
        if index is not None:
            h = torch.gather(h, 1, index[..., None].expand(-1, -1, h.shape[-1]))
        return normalize_output(self, h)


@dataclass
class HeadsResult:
    """Trained image and text heads (:class:`MLPHeads`) and the training loss of each run per step.

    Chapter ``renli-mnist-captions``.
    """

    image_heads: torch.nn.Module  # MLPHeads or LinearHeads
    text_heads: torch.nn.Module
    loss: np.ndarray  # (R, steps)
    lam: np.ndarray  # (R,)
    seeds: tuple[int, ...]
    log: list = field(default_factory=list)  # (step, evaluate(...)) every log_every steps


def train_heads(
    image_features: torch.Tensor,
    text_features: torch.Tensor,
    caption_index: torch.Tensor,
    lam: Sequence[float],
    seeds: Sequence[int],
    *,
    width: int,
    d_out: int,
    steps: int,
    beta: float = 2.0,
    lr: float = 1e-3,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
    progress: bool = True,
    heads: str = "mlp",
    log_every: int | None = None,
    evaluate: Callable | None = None,
    optimizer: str = "adam",
) -> HeadsResult:
    """Train image and text heads on (image, caption) positive pairs, one run per (λ, seed).

    Real-data analog of Ren & Li (2023), Sec. 6: frozen features ``image_features`` (N, d_img) and
    ``text_features`` (C, d_txt) of the captions, ``caption_index`` (N,) the caption of each image.
    Each step every run draws its own batch of ``batch_size`` images (with replacement, from a
    generator seeded with its seed), and minimizes :func:`~nlcl.renli.losses.contrastive_loss`
    (Eq. 3, evaluated by :func:`~nlcl.renli.head_loss.fused_contrastive_loss`) with its ``λ`` and
    inverse temperature ``β`` (``λ = 0``: :func:`~nlcl.renli.losses.non_contrastive_loss`) with Adam
    (learning rate ``lr``; torch's fused kernel), or, with ``optimizer="gd"``, with plain gradient
    descent ``W ← W − lr·∇L`` on each fresh
    batch, the training algorithm of Ren & Li (2023), Algorithm 3.1.  The two differ where the
    gradient is small: gradient descent slows down near a stationary point (the paper's
    non-contrastive runs stop at "an approximate stationary point", Thm. 4.3(a)), whereas Adam divides
    each coordinate's step by its running gradient scale and keeps moving at about ``lr`` per step.  ``heads="linear"`` trains :class:`LinearHeads` instead of :class:`MLPHeads` (``width``
    is then unused).  With ``log_every``, ``evaluate(image_heads, text_heads)`` is called in
    evaluation mode at step 0, every ``log_every`` steps and at the end, and its results are kept
    in :attr:`HeadsResult.log`.  Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        For bad sizes, mismatched lengths, a caption index out of range or a negative ``λ``.
    ValueError
        If the loss becomes NaN or infinite.
    """
    width, d_out, steps = (
        positive_int("width", width),
        positive_int("d_out", d_out),
        positive_int("steps", steps),
    )
    batch_size = positive_int("batch_size", batch_size)
    beta, lr = positive_float("beta", beta), positive_float("lr", lr)
    lam_list = [nonneg_float("lam", float(v)) for v in lam]
    seeds = [int(s) for s in seeds]
    if len(lam_list) != len(seeds) or not seeds:
        raise ParameterError(f"lam has {len(lam_list)} entries and seeds {len(seeds)}; expected equal, >= 1")
    if image_features.dim() != 2 or text_features.dim() != 2:
        raise ParameterError("image_features and text_features must be 2-D (n, dim)")
    if caption_index.shape != (image_features.shape[0],):
        raise ParameterError(
            f"caption_index has shape {tuple(caption_index.shape)}; expected ({image_features.shape[0]},)"
        )
    if int(caption_index.min()) < 0 or int(caption_index.max()) >= text_features.shape[0]:
        raise ParameterError(f"caption_index must lie in [0, {text_features.shape[0]})")
    device = torch.device(device)
    R, N = len(seeds), image_features.shape[0]
    choice("heads", heads, HEADS)
    choice("optimizer", optimizer, OPTIMIZERS)
    if log_every is not None:
        log_every = positive_int("log_every", log_every)
        if evaluate is None:
            raise ParameterError("log_every is set but evaluate=None; pass the function to call")

    def make(d_in: int, run_seeds: list[int]) -> torch.nn.Module:
        if heads == "linear":
            return LinearHeads(d_in, d_out, run_seeds).to(device)
        return MLPHeads(d_in, width, d_out, run_seeds).to(device)

    img_heads = make(image_features.shape[1], [2 * s for s in seeds])
    txt_heads = make(text_features.shape[1], [2 * s + 1 for s in seeds])
    log = []

    def record(step: int) -> None:
        img_heads.eval()
        txt_heads.eval()
        with torch.no_grad():
            log.append((step, evaluate(img_heads, txt_heads)))
        img_heads.train()
        txt_heads.train()

    params = [*img_heads.parameters(), *txt_heads.parameters()]
    # fused Adam: the same update in one kernel per tensor (equal to the loop up to float rounding)
    opt = (
        torch.optim.Adam(params, lr=lr, fused=True) if optimizer == "adam" else torch.optim.SGD(params, lr=lr)
    )
    gens = [torch.Generator().manual_seed(10_000 + s) for s in seeds]
    img, txt, cap = image_features.to(device), text_features.to(device), caption_index.to(device)
    lam_t = torch.tensor(lam_list, device=device)
    txt_table = txt.expand(R, -1, -1)
    losses = np.empty((R, steps))
    img_heads.train()
    txt_heads.train()
    for step in tqdm(range(steps), desc="Ren & Li heads", disable=not progress, mininterval=2.0):
        if log_every is not None and step % log_every == 0:
            record(step)
        idx = torch.stack([torch.randint(0, N, (batch_size,), generator=g) for g in gens]).to(device)
        f_a = img_heads(img[idx])
        f_b = txt_heads(txt_table, cap[idx])
        loss = fused_contrastive_loss(f_a, f_b, lam_t, beta)
        if not bool(torch.isfinite(loss).all()):
            raise NonFiniteError(
                f"training diverged at step {step}: the loss is NaN or infinite; lower lr={lr}"
            )
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        losses[:, step] = loss.detach().cpu().numpy()
    if log_every is not None:
        record(steps)
    img_heads.eval()
    txt_heads.eval()
    return HeadsResult(img_heads, txt_heads, losses, np.asarray(lam_list), tuple(seeds), log)


def zero_shot_accuracy(
    image_emb: torch.Tensor, prompt_emb: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """Zero-shot accuracy: predict the prompt with the largest cosine similarity to each image.

    Ren & Li (2023), Sec. 6, after Radford et al. (2021): ``image_emb`` (R, N, k), ``prompt_emb``
    (R, C, k) (one prompt per class, in class order), ``labels`` (N,) → (R,) accuracies.  Chapter
    ``renli-mnist-captions``.
    """
    if image_emb.dim() != 3 or prompt_emb.dim() != 3 or image_emb.shape[-1] != prompt_emb.shape[-1]:
        raise ParameterError(
            f"image_emb {tuple(image_emb.shape)} and prompt_emb {tuple(prompt_emb.shape)} must be (R, N, k), (R, C, k)"
        )
    a = torch.nn.functional.normalize(image_emb, dim=-1)
    b = torch.nn.functional.normalize(prompt_emb, dim=-1)
    pred = (a @ b.transpose(-1, -2)).argmax(-1)
    return (pred == labels.to(pred.device)[None]).double().mean(-1)


def empirical_covariance(features: torch.Tensor) -> torch.Tensor:
    """Covariance over samples, ``(F − mean)ᵀ(F − mean)/n``, of features (..., n, k) → (..., k, k).

    The output covariance whose :func:`~nlcl.renli.metrics.stable_rank` is Ren & Li's balance score (Def. 4.2), measured
    on held-out data.  Chapter ``renli-mnist-captions``.
    """
    centred = features - features.mean(-2, keepdim=True)
    return centred.transpose(-1, -2) @ centred / features.shape[-2]


def class_means(features: torch.Tensor, labels: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Class-conditional means, centred over classes: (..., n, k) → (..., n_classes, k).

    With the class as the latent variable, this matrix is the analog of ``U_A`` (latent →
    representation) of the linear model; its effective condition number (:func:`~nlcl.renli.metrics.condition_number`
    with ``k = n_classes − 1``; centring removes one dimension) measures balance on real data.
    Chapter ``renli-mnist-captions``.

    Raises
    ------
    ParameterError
        If a class has no sample.
    """
    n_classes = positive_int("n_classes", n_classes)
    onehot = torch.nn.functional.one_hot(labels.long(), n_classes).to(features.dtype).to(features.device)
    counts = onehot.sum(0)
    if bool((counts == 0).any()):
        raise ParameterError(
            f"labels has no sample of classes {torch.nonzero(counts == 0).flatten().tolist()}"
        )
    means = (onehot.T @ features) / counts[:, None]
    return means - means.mean(-2, keepdim=True)
