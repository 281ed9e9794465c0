"""A literal re-implementation of the released token-task trainer of Tian (2023), Sec. 5.

The oracle for nlcl's token trainer (issue 18): written from the paper's released code
(facebookresearch/luckmatters, ``ssl/real-dataset/bn_gen.py`` with ``bn_gen_utils.py``) and
sharing no code with ``nlcl``.  Piece by piece:

* :class:`Distribution` — ``bn_gen_utils.Distribution.__init__``: per location a random subset
  ``tokens_per_loc[l]`` of ``num_tokens_per_pos`` (P) tokens (a shuffle, the first P); per
  pattern (generator, ``pattern_cnt`` = G of them) ``pattern_len`` random locations, each fixed to
  ``random.choice(tokens_per_loc[l])``, −1 (wildcard) elsewhere.  ``sample(n)`` =
  ``random.choices(distributions, k=n)`` (uniform, with replacement).
* :class:`Generator` — ``bn_gen_utils.Generator``: ``mags`` (first half of the tokens divided by
  ``mag_split``, the rest multiplied), ``symbol_embedding = torch.eye(d)``; a batch grounds every
  wildcard of the sampled patterns with a uniform token (``_ground_symbol``: ``randint(0,
  num_symbols − 1)``) for view 1, and view 2 copies view 1 and re-grounds ``aug_degree`` of the
  wildcard positions chosen at random (``_change_wildcard_tokens``); x[i, k] =
  ``symbol_embedding[:, a] * mags[a]`` (``_symbol2embedding``).  With K = 10, ``pattern_len`` = 5
  and the default ``aug_degree`` = 5 every wildcard of view 2 is re-drawn.  The draws follow these
  rules with numpy's generator seeded by the run seed (vectorized; the released code draws the
  same distributions with Python's ``random`` one token at a time).
* :class:`BatchNormExt` — the released ``BatchNormExt`` (no affine, biased batch variance,
  ``eps`` = 1e-5, ``.detach()`` of the batch mean / variance when it is not backpropagated);
  "BN mean" is ``backprop_mean=True, backprop_var=False``.
* :class:`Model` — the released ``Model``: ``w1`` is an ``nn.ModuleList`` of K ``nn.Linear(d,
  multi, bias=False)`` (one per receptive field), the activation, BatchNorm on the K·multi hidden
  units when used, ``w2 = nn.Linear(K * multi, output_d, bias=False)``; ``forward`` returns
  ``(z, y)``.  Initialization is torch's default for ``nn.Linear``, after ``torch.manual_seed``.
* :func:`train` — the loop of ``bn_gen.main``: ``torch.optim.SGD(model.parameters(), lr,
  momentum, weight_decay)``; each step both views go through the model separately (so BatchNorm
  statistics are per view), ``F.normalize(z, dim=1)`` (``l2_type`` "regular"), ``M = z1 @ z1.t()``
  with its diagonal replaced by ``(z1 * z2).sum(dim=1)`` (``similarity`` "dotprod"), and
  ``loss_func(M / T, label)``: ``nn.CrossEntropyLoss()`` for InfoNCE, ``−(1 + 1/N) ·
  mean(diag) + mean(all)`` for the quadratic loss.  The released loop saves ``model-{t}.pth``
  every 500 steps and scores the last one, ``model-final.pth``: the weights after ``niter`` steps.

Where the released code and the paper's text differ (and what nlcl does): the released
``Model`` knows only ``relu`` and ``linear``; the paper's Figs. 9-10 also use LeakyReLU, x² and
sigmoid, which this oracle adds with nlcl's definitions (LeakyReLU slope 0.05, h(x) = x²,
torch.sigmoid).  The paper states η = 2e-3 and d_out = 20 (Sec. 5); the released README's command
uses ``opt.lr=0.02`` and ``model.output_d=50``, the released config 0.01 and 20: the oracle takes
them as arguments.  The released quadratic loss carries the factor (1 + 1/N) on the positive
term, so that the positive pair does not appear in the negative mean (nlcl follows the released
form).  The scoring is :mod:`released_scoring` (``check_result``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from released_scoring import check_result

__all__ = ["Distribution", "Generator", "BatchNormExt", "Model", "OracleConfig", "train", "train_and_score"]


class Distribution:
    """The patterns (generators) of ``bn_gen_utils.Distribution``, drawn with ``rng``."""

    def __init__(
        self, rng: np.random.Generator, num_loc, num_tokens, num_tokens_per_pos, pattern_cnt, pattern_len
    ):
        self.tokens_per_loc = []
        token_indices = list(range(num_tokens))
        for _ in range(num_loc):
            rng.shuffle(token_indices)
            self.tokens_per_loc.append(list(token_indices[:num_tokens_per_pos]))
        self.distributions = []
        loc_indices = list(range(num_loc))
        for _ in range(pattern_cnt):
            rng.shuffle(loc_indices)
            pattern = [-1] * num_loc
            for l in loc_indices[:pattern_len]:
                pattern[l] = int(self.tokens_per_loc[l][rng.integers(len(self.tokens_per_loc[l]))])
            self.distributions.append(pattern)
        self.pattern_len = pattern_len
        self.num_tokens = num_tokens
        self.num_loc = num_loc

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``random.choices(distributions, k=n)`` as an (n, K) array (−1 = wildcard)."""
        return np.asarray(self.distributions)[rng.integers(len(self.distributions), size=n)]


class Generator:
    """Batches of two views (``bn_gen_utils.Generator.__iter__``), as tensors (N, K, d)."""

    def __init__(self, distrib: Distribution, batchsize: int, mag_split: float = 1.0, aug_degree: int = 5):
        self.distrib = distrib
        self.K = distrib.num_loc
        self.batchsize = batchsize
        assert aug_degree <= self.K - distrib.pattern_len
        self.num_symbols = distrib.num_tokens
        self.aug_degree = aug_degree
        mags = torch.ones(self.num_symbols)
        mags[: self.num_symbols // 2] /= mag_split
        mags[self.num_symbols // 2 :] *= mag_split
        self.mags = mags
        self.d = self.num_symbols
        self.symbol_embedding = torch.eye(self.d)

    def tokens(self, rng: np.random.Generator):
        """(ground_tokens1, ground_tokens2, tokens) of one batch, as (N, K) integer arrays."""
        tokens = self.distrib.sample(rng, self.batchsize)
        wild = tokens == -1
        fill1 = rng.integers(self.num_symbols, size=tokens.shape)
        ground1 = np.where(wild, fill1, tokens)
        # _change_wildcard_tokens: shuffle the wildcard positions, re-ground the first aug_degree.
        keys = np.where(wild, rng.random(tokens.shape), np.inf)
        rank = keys.argsort(axis=1).argsort(axis=1)
        change = wild & (rank < self.aug_degree)
        fill2 = rng.integers(self.num_symbols, size=tokens.shape)
        ground2 = np.where(change, fill2, ground1)
        return ground1, ground2, tokens

    def embed(self, ground: np.ndarray) -> torch.Tensor:
        """``_symbol2embedding``: x[i, j, :] = symbol_embedding[:, a] * mags[a]."""
        a = torch.as_tensor(ground, dtype=torch.long)
        return self.symbol_embedding.t()[a] * self.mags[a][..., None]

    def sample(self, rng: np.random.Generator):
        """One batch (x1, x2), each (N, K, d) float32."""
        g1, g2, _ = self.tokens(rng)
        return self.embed(g1), self.embed(g2)


class BatchNormExt(nn.Module):
    """The released ``BatchNormExt`` (training mode): selective backprop through mean / variance."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, backprop_mean=True, backprop_var=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.backprop_mean = backprop_mean
        self.backprop_var = backprop_var
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        """Normalize over the batch (axis 0) with the batch statistics."""
        assert len(x.size()) == 2
        this_mean = x.mean(dim=0)
        this_var = x.var(dim=0, unbiased=False)
        if not self.backprop_mean:
            this_mean = this_mean.detach()
        if not self.backprop_var:
            this_var = this_var.detach()
        x = (x - this_mean[None, :]) / (this_var[None, :] + self.eps).sqrt()
        self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * this_mean.detach()
        self.running_var = (1 - self.momentum) * self.running_var + self.momentum * this_var.detach()
        return x


#: BatchNorm settings: name → (backprop_mean, backprop_var); None = no BatchNorm.
BN_SPECS = {
    "none": None,
    "vanilla": (True, True),
    "mean": (True, False),
    "var": (False, True),
    "detached": (False, False),
}


def _activation(name: str):
    if name == "relu":
        return nn.ReLU()
    if name == "linear":
        return lambda x: x
    # Not in the released Model (relu / linear only): the paper's other activations, as in nlcl.
    if name == "leaky_relu":
        return nn.LeakyReLU(0.05)
    if name == "quadratic":
        return lambda x: x * x
    if name == "sigmoid":
        return torch.sigmoid
    raise RuntimeError(f"Unknown activation {name}")


class Model(nn.Module):
    """The released two-layer ``Model``: one ``nn.Linear`` per receptive field, BN, top layer."""

    def __init__(self, d, K, output_d=20, activation="relu", bn="none", multi=5):
        super().__init__()
        self.multi = multi
        self.w1 = nn.ModuleList([nn.Linear(d, self.multi, bias=False) for _ in range(K)])
        self.activation = _activation(activation)
        self.K = K
        self.w2 = nn.Linear(K * self.multi, output_d, bias=False)
        spec = BN_SPECS[bn]
        self.bn = (
            None if spec is None else BatchNormExt(K * multi, backprop_mean=spec[0], backprop_var=spec[1])
        )

    def forward(self, x):
        """x (N, K, d) → (z (N, output_d), hidden y (N, K·multi))."""
        x2 = x.permute(1, 0, 2)
        y = torch.stack([self.w1[k](x2[k, :]) for k in range(self.K)], dim=0)
        y = y.permute(1, 0, 2)
        y = self.activation(y).reshape(x.size(0), -1)
        z = self.bn(y) if self.bn is not None else y
        return self.w2(z), y


@dataclass(frozen=True)
class OracleConfig:
    """One run of the released trainer (defaults: the released README's Sec. 5 command)."""

    activation: str = "relu"
    loss: str = "infonce"  # "infonce" or "quadratic"
    bn: str = "none"
    seed: int = 0
    num_loc: int = 10  # K
    num_tokens: int = 20  # d
    num_tokens_per_pos: int = 5  # P
    pattern_cnt: int = 40  # G
    pattern_len: int = 5
    beta: int = 5  # multi = beta * P
    output_d: int = 50
    lr: float = 0.02
    momentum: float = 0.9
    wd: float = 5e-3
    batchsize: int = 128
    T: float = 0.1
    niter: int = 5000
    mag_split: float = 1.0
    aug_degree: int = 5


def _loss_func(name: str):
    if name == "infonce":
        return nn.CrossEntropyLoss()
    if name == "quadratic":
        return lambda x, label: -(1 + 1 / x.size(0)) * x[torch.arange(x.size(0)), label].mean() + x.mean()
    raise RuntimeError(f"Unknown loss_type = {name}")


def train(cfg: OracleConfig, *, patterns=None, batches=None, init=None, dtype=torch.float32):
    """Train one run; returns (model, distribution, generator, losses per step).

    By default everything is drawn from ``cfg.seed``.  For a step-by-step comparison with another
    trainer the pieces can be injected instead: ``patterns`` (the generators, one list of K
    tokens per pattern, −1 = wildcard), ``batches(t)`` → (ground_tokens1, ground_tokens2) of step
    ``t`` as (N, K) integer arrays, ``init`` (a state dict for the model) and ``dtype``.
    """
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    distrib = Distribution(
        rng, cfg.num_loc, cfg.num_tokens, cfg.num_tokens_per_pos, cfg.pattern_cnt, cfg.pattern_len
    )
    if patterns is not None:
        distrib.distributions = [list(p) for p in patterns]
    gen = Generator(distrib, cfg.batchsize, cfg.mag_split, cfg.aug_degree)
    multi = cfg.beta * cfg.num_tokens_per_pos
    model = Model(gen.d, gen.K, output_d=cfg.output_d, activation=cfg.activation, bn=cfg.bn, multi=multi)
    model = model.to(dtype)
    if init is not None:
        model.load_state_dict(init, strict=False)
    loss_func = _loss_func(cfg.loss)
    label = torch.arange(cfg.batchsize)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.wd)
    losses = []
    for t in range(cfg.niter):
        optimizer.zero_grad()
        if batches is None:
            x1, x2 = gen.sample(rng)
        else:
            g1, g2 = batches(t)
            x1, x2 = gen.embed(g1), gen.embed(g2)
        z1, _ = model(x1.to(dtype))
        z1 = F.normalize(z1, dim=1)
        z2, _ = model(x2.to(dtype))
        z2 = F.normalize(z2, dim=1)
        M = z1 @ z1.t()
        M[label, label] = (z1 * z2).sum(dim=1)
        loss = loss_func(M / cfg.T, label)
        if torch.isnan(loss):
            raise FloatingPointError(f"NaN loss at step {t} of {cfg}")
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, distrib, gen, losses


def train_and_score(cfg: OracleConfig) -> dict:
    """Train one run and score it with the released ``check_result``: chi_plus, chi_minus, final_loss."""
    model, distrib, gen, losses = train(cfg)
    res = check_result(
        model.state_dict(),
        distrib.distributions,
        distrib.num_tokens,
        is_linear=cfg.activation == "linear",
        symbol_embedding=gen.symbol_embedding,
    )
    return dict(chi_plus=res["loc_all"], chi_minus=res["loc_other_all"], final_loss=losses[-1])
