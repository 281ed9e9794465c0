"""A small SimCLR-style encoder on MNIST and its linear probe: the poster table's offline analog.

The poster of Tian 2023 compares the quadratic loss (uniform pairwise importance α) with InfoNCE
(normalized Gaussian α) by linear evaluation on CIFAR-10 and STL-10.  Those datasets cannot be
downloaded here; chapter ``book/tian-poster-probe.py`` repeats the comparison on MNIST with

* :class:`EnsembleEncoder` — R independent MLP encoders stacked along a leading *run* axis
  (x ∈ R^784 → h = ReLU(W₂ ReLU(W₁x + b₁) + b₂), the representation, → projection head
  z = P₂ ReLU(P₁h + c₁) + c₂, ℓ2-normalized, as in SimCLR), so runs of several seeds and both
  losses train in one vectorized computation;
* :func:`train_simclr` — two :func:`nlcl.datasets.augment.random_resized_crop` views per image, per run the
  loss :func:`nlcl.tian.losses.info_nce` (Tian 2023, Eq. 1, with ε) or :func:`nlcl.tian.losses.quadratic_loss`
  (α-CL with uniform α, Sec. 2), both averaged over the batch, and Adam (element-wise, so stacked
  runs stay independent);
* :func:`linear_probe` — a scikit-learn logistic regression on frozen, standardized
  representations h, scored on held-out images.

Deterministic on CPU for given seeds.  The comparison is the table of the Tian 2023 poster
(``tian-2023-poster.md``: linear evaluation of quadratic loss vs InfoNCE on CIFAR-10 / STL-10).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from nlcl.core.validate import (
    NonFiniteError,
    ParameterError,
    choice,
    nonneg_float,
    positive_float,
    positive_int,
)
from nlcl.datasets.augment import PAPER_RRC, RandomResizedCrop
from nlcl.tian.losses import LOSSES, info_nce, quadratic_loss
from nlcl.tian.rf_network import segments

__all__ = ["EnsembleEncoder", "train_simclr", "linear_probe", "probe_accuracies"]


def _linear_init(
    R: int, fan_in: int, fan_out: int, gens: list[torch.Generator]
) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.nn.Linear's default init, U(±1/√fan_in) for weight and bias, one generator per run."""
    bound = 1.0 / math.sqrt(fan_in)
    W = torch.empty(R, fan_in, fan_out, dtype=torch.float64)
    b = torch.empty(R, 1, fan_out, dtype=torch.float64)
    for r, g in enumerate(gens):  # per run (R small), not per sample: a run's init depends on its seed only
        W[r].uniform_(-bound, bound, generator=g)
        b[r].uniform_(-bound, bound, generator=g)
    return W, b


class EnsembleEncoder:
    """R independent SimCLR-style MLP encoders with projection heads, stacked over runs.

    The encoder of the Tian 2023 poster's linear-evaluation table, trained on InfoNCE (Eq. 1) or
    the quadratic loss (Sec. 2); chapter ``book/tian-poster-probe.py``.

    Parameters
    ----------
    n_runs: R.
    in_dim, hidden, rep_dim, proj_dim: sizes of x, the hidden layer, the representation h and the
        projection z (defaults 784, 256, 128, 64).
    seeds: per-run initialization seeds (default 0..R−1); runs with the same seed start equal.

    ``represent(x)`` gives h (R, N, rep_dim) (what the linear probe sees); ``__call__(x)`` gives the
    ℓ2-normalized projection z (R, N, proj_dim) that the contrastive loss sees (poster table analog,
    chapter ``tian-poster-probe``).
    """

    def __init__(
        self,
        n_runs: int,
        in_dim: int = 784,
        hidden: int = 256,
        rep_dim: int = 128,
        proj_dim: int = 64,
        seeds: Sequence[int] | None = None,
        *,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ) -> None:
        R = positive_int("n_runs", n_runs)
        sizes = [
            positive_int(n, v)
            for n, v in (("in_dim", in_dim), ("hidden", hidden), ("rep_dim", rep_dim), ("proj_dim", proj_dim))
        ]
        self.in_dim, self.hidden, self.rep_dim, self.proj_dim = sizes
        seeds = list(range(R)) if seeds is None else [int(s) for s in seeds]
        if len(seeds) != R:
            raise ParameterError(f"seeds has {len(seeds)} entries; expected n_runs={R}")
        if any(s < 0 for s in seeds):
            raise ParameterError(f"seeds={seeds} must be integers >= 0")
        self.seeds = seeds
        gens = [torch.Generator().manual_seed(s * 1_000_003 + 11) for s in seeds]
        dims = [self.in_dim, self.hidden, self.rep_dim, self.rep_dim, self.proj_dim]
        tensors = []
        for fan_in, fan_out in zip(dims[:-1], dims[1:]):
            tensors.extend(_linear_init(R, fan_in, fan_out, gens))
        self.device = torch.device(device)
        self._params = [t.to(dtype=dtype, device=self.device).requires_grad_(True) for t in tensors]

    @property
    def n_runs(self) -> int:
        """R, the number of stacked encoders."""
        return int(self._params[0].shape[0])

    def parameters(self) -> list[torch.Tensor]:
        """The trainable tensors [W₁, b₁, W₂, b₂, P₁, c₁, P₂, c₂], each with leading axis R."""
        return list(self._params)

    def _input(self, x) -> torch.Tensor:
        x = torch.as_tensor(x, dtype=self._params[0].dtype, device=self.device)
        if x.ndim >= 3 and x.shape[0] == self.n_runs:
            x = x.reshape(self.n_runs, x.shape[1], -1)
        elif x.ndim >= 2:  # the same inputs for every run
            x = x.reshape(1, x.shape[0], -1).expand(self.n_runs, -1, -1)
        if x.ndim != 3 or x.shape[-1] != self.in_dim:
            raise ParameterError(
                f"x has shape {tuple(x.shape)}; expected (R={self.n_runs}, N, {self.in_dim}) or "
                f"(N, {self.in_dim}) (images may be (…, 28, 28))"
            )
        return x

    def represent(self, x) -> torch.Tensor:
        """Representation h = ReLU(W₂ ReLU(W₁x + b₁) + b₂), shape (R, N, rep_dim).

        ``x``: (R, N, ...) per-run inputs or (N, ...) shared ones, flattened to ``in_dim``.
        """
        W1, b1, W2, b2 = self._params[:4]
        x = self._input(x)
        return torch.relu(torch.baddbmm(b2, torch.relu(torch.baddbmm(b1, x, W1)), W2))

    def project(self, h: torch.Tensor) -> torch.Tensor:
        """ℓ2-normalized projection z = normalize(P₂ ReLU(P₁h + c₁) + c₂) (SimCLR's head)."""
        P1, c1, P2, c2 = self._params[4:]
        z = torch.baddbmm(c2, torch.relu(torch.baddbmm(c1, h, P1)), P2)
        return torch.nn.functional.normalize(z, dim=-1)

    def __call__(self, x) -> torch.Tensor:
        """z of ``x``: (R, N, proj_dim)."""
        return self.project(self.represent(x))

    @torch.no_grad()
    def features(self, images, chunk: int = 2048) -> np.ndarray:
        """Frozen representations h of shared ``images`` (N, ...) for every run: (R, N, rep_dim)."""
        images = torch.as_tensor(np.asarray(images))
        chunk = positive_int("chunk", chunk)
        parts = [self.represent(images[i : i + chunk]) for i in range(0, images.shape[0], chunk)]
        return torch.cat(parts, 1).cpu().numpy()


def train_simclr(
    encoder: EnsembleEncoder,
    images,
    steps: int,
    *,
    loss: str | Sequence[str] = "infonce",
    tau: float = 0.5,
    eps: float = 1.0,
    batch_size: int = 256,
    lr: float = 1e-3,
    data_seeds: Sequence[int] | None = None,
    crop: RandomResizedCrop = PAPER_RRC,
    aug_seed: int = 0,
    progress: bool | str = False,
) -> np.ndarray:
    """SimCLR-style training of the stacked encoders; returns the per-run loss per step (steps, R).

    Each step, every run draws ``batch_size`` images (epochs of a fresh permutation per data seed,
    default the encoder's seeds), makes two views by ``crop`` (independently per view), and takes an
    Adam step on its loss, averaged over the batch — ``"infonce"``: :func:`nlcl.tian.losses.info_nce`
    with temperature ``tau`` and ε = ``eps`` (Tian 2023, Eq. 1; ε = 1 puts the positive pair in the
    denominator, as SimCLR does) or ``"quadratic"``: :func:`nlcl.tian.losses.quadratic_loss` (uniform α,
    Sec. 2; no temperature) — one name or one per run (poster table).  Runs with equal seeds see the same images and crops.  Raises ``ValueError``
    naming the run(s) and step if a loss becomes NaN or infinite (chapter ``tian-poster-probe``).
    """
    steps = positive_int("steps", steps)
    batch_size = positive_int("batch_size", batch_size)
    tau = positive_float("tau", tau)
    eps = nonneg_float("eps", eps)
    lr = positive_float("lr", lr)
    R = encoder.n_runs
    losses = [loss] * R if isinstance(loss, str) else list(loss)
    if len(losses) != R:
        raise ParameterError(f"loss has {len(losses)} entries; expected 1 or n_runs={R}")
    for name in losses:
        choice("loss", name, LOSSES)
    x_all = torch.as_tensor(np.asarray(images), dtype=encoder.parameters()[0].dtype)
    if x_all.ndim != 3:
        raise ParameterError(f"images has shape {tuple(x_all.shape)}; expected (n, H, W)")
    n = x_all.shape[0]
    if batch_size > n:
        raise ParameterError(f"batch_size={batch_size} exceeds the number of images n={n}")
    seeds = encoder.seeds if data_seeds is None else [int(s) for s in data_seeds]
    if len(seeds) != R:
        raise ParameterError(f"data_seeds has {len(seeds)} entries; expected n_runs={R}")
    uniq, run_idx = np.unique(seeds, return_inverse=True)
    perm_gens = [torch.Generator().manual_seed(int(s) + 104_729) for s in uniq]
    aug_gen = torch.Generator().manual_seed(int(aug_seed))
    segs = segments(losses)
    # fused: torch's one-kernel Adam (the same element-wise rule, rounded in its own order), 2.6x
    # faster than foreach=True here (5.2 -> 2.0 ms per step at the full profile's sizes, one thread)
    opt = torch.optim.Adam(encoder.parameters(), lr=lr, fused=True)
    run_sel = torch.as_tensor(run_idx, dtype=torch.long)
    history = np.empty((steps, R))
    per_epoch = n // batch_size  # drop the last incomplete batch of an epoch
    perms = None
    it = range(steps)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc=progress if isinstance(progress, str) else "simclr", leave=False)
    for step in it:
        epoch, pos = divmod(step, per_epoch)
        if pos == 0:
            perms = torch.stack([torch.randperm(n, generator=g) for g in perm_gens])
        idx = perms[:, pos * batch_size : (pos + 1) * batch_size]  # (n_seeds, B)
        x = x_all[idx]  # (n_seeds, B, H, W): one set of crops per data seed
        views = crop(torch.stack([x, x]).reshape(-1, *x.shape[-2:]), aug_gen).reshape(2, *x.shape)
        # (R, 2, B, H, W) in one gather (the views of run r are those of its data seed)
        views = views.transpose(0, 1).index_select(0, run_sel).to(encoder.device)
        z = encoder(views.reshape(R, 2 * batch_size, -1))
        z1, z2 = z[:, :batch_size], z[:, batch_size:]
        parts = [
            info_nce(z1[sl], z2[sl], tau, eps, reduction="mean")
            if name == "infonce"
            else quadratic_loss(z1[sl], z2[sl], reduction="mean")
            for sl, name in segs
        ]
        per_run = parts[0] if len(parts) == 1 else torch.cat(parts)
        bad = ~torch.isfinite(per_run.detach())
        if bool(bad.any()):
            runs = torch.nonzero(bad).flatten().tolist()
            raise NonFiniteError(
                f"training diverged: loss is NaN or infinite at step {step} for run(s) {runs[:10]} "
                f"(lr={lr:g}); lower lr or check the inputs"
            )
        opt.zero_grad(set_to_none=True)
        per_run.sum().backward()
        opt.step()
        history[step] = per_run.detach().cpu().numpy()
    return history


def linear_probe(
    train_features: np.ndarray,
    train_labels: np.ndarray,
    test_features: np.ndarray,
    test_labels: np.ndarray,
    *,
    C: float = 1.0,
    max_iter: int = 2000,
) -> float:
    """Linear-evaluation accuracy: logistic regression on standardized frozen features.

    Fits scikit-learn's ``StandardScaler`` + multinomial ``LogisticRegression(C)`` on
    ``train_features`` (N, d) and returns the accuracy on ``test_features`` — the linear evaluation
    of the poster table (Tian 2023 poster; chapter ``tian-poster-probe``).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    C = positive_float("C", C)
    max_iter = positive_int("max_iter", max_iter)
    Xtr, Xte = np.asarray(train_features), np.asarray(test_features)
    ytr, yte = np.asarray(train_labels), np.asarray(test_labels)
    if Xtr.ndim != 2 or Xte.ndim != 2 or Xtr.shape[1] != Xte.shape[1]:
        raise ParameterError(
            f"train_features {Xtr.shape} and test_features {Xte.shape} must be (N, d) with equal d"
        )
    if Xtr.shape[0] != ytr.shape[0] or Xte.shape[0] != yte.shape[0]:
        raise ParameterError(
            f"features and labels disagree in length: train {Xtr.shape[0]} vs {ytr.shape[0]}, "
            f"test {Xte.shape[0]} vs {yte.shape[0]}"
        )
    for name, X in (("train_features", Xtr), ("test_features", Xte)):
        if not np.isfinite(X).all():
            raise ParameterError(f"{name} has non-finite entries (NaN or inf)")
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))
    clf.fit(Xtr, ytr)
    return float(clf.score(Xte, yte))


def probe_accuracies(
    encoder: EnsembleEncoder, train, test, runs: Sequence[int] | None = None, **kwargs
) -> np.ndarray:
    """Linear-probe accuracy of the stacked encoders ``runs`` (default all R), in that order (Tian 2023
    poster, table; chapter ``tian-poster-probe``).

    ``train`` and ``test`` are :class:`nlcl.datasets.mnist.MNISTData` (or anything with ``.images`` and
    ``.labels``); keyword arguments go to :func:`linear_probe`. The features are computed for all R
    runs together (as with ``runs=None``), so a run's accuracy does not depend on which others are
    probed; probing only the runs needed (e.g. one of two runs that start equal) saves their fits.
    """
    R = encoder.n_runs
    runs = list(range(R)) if runs is None else [int(r) for r in runs]
    if any(not 0 <= r < R for r in runs):
        raise ParameterError(f"runs={runs}: each must be a run index in [0, {R - 1}]")
    ftr, fte = encoder.features(train.images), encoder.features(test.images)
    return np.array([linear_probe(ftr[r], train.labels, fte[r], test.labels, **kwargs) for r in runs])
