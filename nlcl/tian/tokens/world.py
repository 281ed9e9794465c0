"""The synthetic token task of Tian (2023), Sec. 5, Fig. 3 and App. E.2, vectorized over runs.

A *token world* fixes, for one run:

* ``n_tokens`` tokens a with orthogonal embeddings u_a = ‖u_a‖ e_a in R^d (d = n_tokens; the
  canonical basis, as in the paper's released code).  With non-uniformity ζ (App. E.2) the first
  ⌊d/2⌋ tokens have norm 1/ζ and the others ζ; ζ = 1 gives an orthonormal basis.
* K receptive fields (RFs) R_k and in each a random subset R_k^g of P candidate tokens.
* G generators.  A generator picks ``n_fixed`` (= 5) of the K RFs at random and, in each, one of
  that RF's P candidates; the other RFs are wildcards ``*``.

A sample picks a generator uniformly and fills every wildcard with a uniformly random token (any
of the ``n_tokens``).  Its positive view is another sequence of the same generator (wildcards
re-sampled); the negatives are the other samples of the batch.

Everything carries a leading *run* dimension R so that many (configuration, seed) runs are drawn
in one vectorized computation; runs may differ in P, ζ and seed.  The randomness of every step is
a counter-based hash of (run seed, step, stream, position), so a run draws exactly the same data
whether it is trained alone or stacked with others, and on CPU or GPU.

Explained in the chapter ``book/tian-tokens.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from nlcl.core.validate import ParameterError, positive_float, positive_int

__all__ = [
    "TokenWorld",
    "TokenBatch",
    "make_token_worlds",
    "sample_views",
    "hash_uniform_int",
    "token_embeddings",
]

_MASK32 = 0xFFFFFFFF


def _mix32(x: torch.Tensor) -> torch.Tensor:
    """The ``lowbias32`` integer hash on int64 tensors holding values in [0, 2^32)."""
    x = x & _MASK32
    x = x ^ (x >> 16)
    x = (x * 0x7FEB352D) & _MASK32
    x = x ^ (x >> 15)
    x = (x * 0x846CA68B) & _MASK32
    x = x ^ (x >> 16)
    return x


@functools.lru_cache(maxsize=32)
def _position_hash(n: int, device: torch.device) -> torch.Tensor:
    """_mix32(position + c) for positions 0..n−1 (step- and seed-independent, so cached)."""
    return _mix32(torch.arange(n, dtype=torch.int64, device=device) + 0x27D4EB2F)


def hash_uniform_int(
    seeds: torch.Tensor, step: int, stream: int, shape: Sequence[int], high: torch.Tensor | int
) -> torch.Tensor:
    """Counter-based uniform integers in [0, high) of shape (R, *shape), one stream per run seed.

    Entry ``[r, i...]`` depends only on (``seeds[r]``, ``step``, ``stream``, flat position i), so a
    run's draws do not depend on which other runs share the stack (the property that makes the
    batched trainer equal to training runs one by one).  ``high`` is an int or a per-run tensor
    (R,) of upper bounds ≤ 2^31.  Helper of :func:`sample_views` (Tian 2023, Sec. 5).
    """
    seeds = torch.as_tensor(seeds, dtype=torch.int64)
    if seeds.ndim != 1:
        raise ParameterError(f"seeds has shape {tuple(seeds.shape)}; expected (R,)")
    n = int(np.prod(shape)) if len(shape) else 1
    key = _mix32(seeds * 0x9E3779B1 + 0x632BE5AB)
    key = _mix32(key ^ (int(step) * 0x85EBCA77 + int(stream) * 0xC2B2AE3D))
    h = _mix32(key[:, None] ^ _position_hash(n, seeds.device)[None, :])
    high_t = torch.as_tensor(high, dtype=torch.int64, device=seeds.device)
    if high_t.ndim == 1:
        high_t = high_t[:, None]
    out = (h * high_t) >> 32
    return out.reshape(len(seeds), *shape)


def token_embeddings(zeta: torch.Tensor | float, n_tokens: int) -> torch.Tensor:
    """Norms ‖u_a‖ of the token embeddings with non-uniformity ζ (Tian 2023, App. E.2).

    The first ⌊n_tokens/2⌋ tokens get norm 1/ζ and the rest ζ (the paper's ``mag_split``).
    ``zeta`` is a float or a tensor (R,); returns (R, n_tokens) (R = 1 for a float).
    """
    n_tokens = positive_int("n_tokens", n_tokens)
    z = torch.as_tensor(zeta, dtype=torch.float64).reshape(-1)
    if not bool(torch.isfinite(z).all()) or bool((z <= 0).any()):
        raise ParameterError(f"zeta={zeta!r} must be finite and > 0")
    half = n_tokens // 2
    norms = torch.ones(len(z), n_tokens, dtype=torch.float64)
    norms[:, :half] = 1.0 / z[:, None]
    norms[:, half:] = z[:, None]
    return norms


@dataclass(frozen=True)
class TokenWorld:
    """Token worlds of R runs (Tian 2023, Sec. 5 / Fig. 3), stacked over the leading run axis.

    Attributes
    ----------
    seeds: (R,) int64, the run seeds (they also drive :func:`sample_views`).
    P: (R,) int64, number of candidate tokens per RF.
    zeta: (R,) float64, non-uniformity ζ.
    candidates: (R, K, n_tokens) bool, ``candidates[r, k, a]`` ⇔ a ∈ R_k^g.
    generators: (R, G, K) int64, the token each generator fixes at RF k, −1 for a wildcard.
    norms: (R, n_tokens) float64, ‖u_a‖.
    """

    seeds: torch.Tensor
    P: torch.Tensor
    zeta: torch.Tensor
    candidates: torch.Tensor
    generators: torch.Tensor
    norms: torch.Tensor

    @property
    def n_runs(self) -> int:
        """R, the number of stacked runs."""
        return int(self.seeds.shape[0])

    @property
    def K(self) -> int:
        """Number of receptive fields."""
        return int(self.generators.shape[2])

    @property
    def n_tokens(self) -> int:
        """Number of tokens (= input dimension d per RF)."""
        return int(self.norms.shape[1])

    @property
    def relevant(self) -> torch.Tensor:
        """(R, K, n_tokens) bool: a appears at RF k in at least one generator.

        These are the tokens that receive top-down support; a candidate that no generator uses
        only ever appears through a wildcard and is noise like any a ∉ R_k^g (Tian 2023, Sec. 5).
        The matching scores χ̄± of :mod:`nlcl.tian.tokens.metrics` use this set, as the released code does.
        """
        R, G, K = self.generators.shape
        count = torch.zeros(R, K, self.n_tokens, dtype=torch.int64)
        idx = self.generators.clamp(min=0).permute(0, 2, 1)  # (R, K, G); wildcards add 0 below
        count.scatter_add_(2, idx, (self.generators >= 0).permute(0, 2, 1).to(torch.int64))
        return count > 0

    def embedding(
        self, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu"
    ) -> torch.Tensor:
        """(R, n_tokens, d) embedding matrices E with rows u_aᵀ = ‖u_a‖ e_aᵀ."""
        return torch.diag_embed(self.norms).to(dtype=dtype, device=device)

    def select(self, index: torch.Tensor | Sequence[int]) -> TokenWorld:
        """The sub-stack of runs ``index``."""
        index = torch.as_tensor(index, dtype=torch.int64)
        return TokenWorld(*(getattr(self, f)[index] for f in self.__dataclass_fields__))


@dataclass(frozen=True)
class TokenBatch:
    """A batch of token sequences as indices plus embeddings, the sparse form of x (R, N, K, d) (Tian 2023, Sec. 5).

    ``index`` (R, N, K) int64 holds the token at each RF; ``embedding`` (R, n_tokens, d) the rows
    u_aᵀ.  :func:`nlcl.tian.rf_network.rf_preactivation` computes w_kmᵀ x_k = (W E)_{k m a} by a gather,
    which is exact and avoids a dense matmul with one-hot inputs.
    """

    index: torch.Tensor
    embedding: torch.Tensor

    def dense(self) -> torch.Tensor:
        """The dense input x of shape (R, N, K, d), x[r, n, k] = u_{index[r, n, k]}."""
        R = self.index.shape[0]
        ar = torch.arange(R, device=self.index.device)[:, None, None]
        return self.embedding[ar, self.index]


def make_token_worlds(
    seeds: Sequence[int] | torch.Tensor,
    P: Sequence[int] | int,
    zeta: Sequence[float] | float = 1.0,
    *,
    n_tokens: int = 20,
    K: int = 10,
    G: int = 40,
    n_fixed: int = 5,
) -> TokenWorld:
    """Draw the token worlds of R runs (Tian 2023, Sec. 5 / Fig. 3, App. E.2), vectorized.

    Parameters
    ----------
    seeds: R run seeds (non-negative ints); a world depends only on its own seed, P and ζ.
    P: candidates per RF, an int or one per run, 1 ≤ P ≤ n_tokens.
    zeta: non-uniformity ζ > 0, a float or one per run (App. E.2).
    n_tokens: number of tokens = embedding dimension d (paper: 20).
    K: number of receptive fields (paper: 10).
    G: number of generators (paper: 40).
    n_fixed: RFs fixed by each generator (paper: 5), 1 ≤ n_fixed ≤ K.
    """
    n_tokens = positive_int("n_tokens", n_tokens)
    K = positive_int("K", K)
    G = positive_int("G", G)
    n_fixed = positive_int("n_fixed", n_fixed)
    if n_fixed > K:
        raise ParameterError(f"n_fixed={n_fixed} must be <= K={K}")
    seeds_t = torch.as_tensor(
        list(seeds) if not isinstance(seeds, torch.Tensor) else seeds, dtype=torch.int64
    )
    if seeds_t.ndim != 1 or len(seeds_t) == 0 or bool((seeds_t < 0).any()):
        raise ParameterError(f"seeds={seeds!r} must be a non-empty list of non-negative ints")
    R = len(seeds_t)
    P_t = torch.as_tensor(P, dtype=torch.int64).reshape(-1)
    if P_t.numel() == 1:
        P_t = P_t.expand(R).clone()
    if P_t.shape != (R,):
        raise ParameterError(f"P has {len(P_t)} entries; expected 1 or R={R}")
    if bool((P_t < 1).any()) or bool((P_t > n_tokens).any()):
        raise ParameterError(f"P={P!r} must lie in [1, n_tokens={n_tokens}]")
    zeta_t = torch.as_tensor(zeta, dtype=torch.float64).reshape(-1)
    if zeta_t.numel() == 1:
        zeta_t = zeta_t.expand(R).clone()
    if zeta_t.shape != (R,):
        raise ParameterError(f"zeta has {zeta_t.numel()} entries; expected 1 or R={R}")
    for z in zeta_t.tolist():
        positive_float("zeta", z)

    # Stream ids below 0 are reserved for world construction (steps use stream >= 0).
    world_step = -1
    u = hash_uniform_int(seeds_t, world_step, 1, (K, n_tokens), 2**31)
    perm = u.argsort(dim=2, stable=True)  # (R, K, n_tokens): random order of tokens per RF
    rank = perm.argsort(dim=2, stable=True)
    candidates = rank < P_t[:, None, None]
    u = hash_uniform_int(seeds_t, world_step, 2, (G, K), 2**31)
    order = u.argsort(dim=2, stable=True).argsort(dim=2, stable=True)
    fixed = order < n_fixed  # (R, G, K): RFs fixed by each generator
    j = hash_uniform_int(seeds_t, world_step, 3, (G, K), P_t)  # which candidate, in [0, P)
    tok = torch.gather(perm, 2, j.permute(0, 2, 1)).permute(0, 2, 1)  # (R, G, K)
    generators = torch.where(fixed, tok, torch.full_like(tok, -1))
    norms = token_embeddings(zeta_t, n_tokens)
    return TokenWorld(seeds_t, P_t, zeta_t, candidates, generators, norms)


def sample_views(
    world: TokenWorld,
    step: int,
    batch_size: int,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str = "cpu",
    embedding: torch.Tensor | None = None,
) -> tuple[TokenBatch, TokenBatch, torch.Tensor]:
    """Two views (x, x') of ``batch_size`` samples per run for training step ``step`` (Sec. 5).

    Each sample i picks a generator g_i uniformly; both views copy its fixed tokens and fill the
    wildcards independently with uniform tokens.  Samples j ≠ i of the batch are the negatives.
    Returns the two :class:`TokenBatch` views and the generator indices (R, N).  No Python loop
    over samples or runs; the draws are a pure function of (run seed, step).
    """
    batch_size = positive_int("batch_size", batch_size)
    R, G, K = world.generators.shape
    seeds = world.seeds.to(device)
    gens = world.generators.to(device)
    g = hash_uniform_int(seeds, step, 10, (batch_size,), G)  # (R, N)
    pattern = torch.gather(gens, 1, g[:, :, None].expand(R, batch_size, K))  # (R, N, K)
    fill = hash_uniform_int(seeds, step, 11, (2, batch_size, K), world.n_tokens)
    idx = torch.where(pattern[:, None] >= 0, pattern[:, None], fill)  # (R, 2, N, K)
    if embedding is None:
        embedding = world.embedding(dtype=dtype, device=device)
    return TokenBatch(idx[:, 0], embedding), TokenBatch(idx[:, 1], embedding), g
