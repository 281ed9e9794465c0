"""A literal re-implementation of the released χ̄± scoring of Tian (2023), Sec. 5 / App. E.2.

The paper's released trainer (facebookresearch/luckmatters, ``ssl/real-dataset/bn_gen.py``, the
version that imports ``bn_gen_utils``) scores a trained model in ``check_result`` with
``compute_score``; this module restates both, line by line, on plain tensors, sharing no code
with ``nlcl`` (it is the oracle that ``nlcl.tian.tokens.metrics.matching_scores`` is compared with):

* ``Distribution.symbol_freq`` (``bn_gen_utils.py``): ``counts[k][a]`` = how many patterns
  (generators) put token ``a`` at location ``k`` (``-1`` = wildcard) → :func:`symbol_freq`.
* ``compute_score(keys, w, is_linear, topk=1)`` (``bn_gen.py``): for each token index ``idx`` in
  ``keys`` (``-1`` skipped), ``energy_ratio = w[:, idx] / (w_norm + max(w.abs().max() / 1000,
  1e-6))`` over the filters (rows) of ``w``, ``.abs()`` for a linear model, the mean of the
  ``topk`` largest (top-1: the max); the result is the mean over ``keys`` → :func:`compute_score`.
* ``check_result`` (``bn_gen.py``): per location ``k``, ``w = model["w1.{k}.weight"] @
  gen.symbol_embedding`` (the filters projected on the token embeddings; the embedding matrix is
  ``torch.eye(d)`` in ``bn_gen_utils.Generator``, the magnitudes ``mags`` are applied to the
  input only), ``candidates = list(counts[k].keys())``, ``others = [a for a in
  range(num_tokens) if a not in candidates]``; ``loc{k} = compute_score(candidates)`` (χ+),
  ``loc_other{k} = compute_score(others)`` (χ−); ``loc_all`` / ``loc_other_all`` are the means
  over locations → :func:`check_result`.

Where this differs from nlcl's scoring (cosine with u_a, averaged over a ∉ R_k^g): the
denominator adds ``max(max|w| / 1000, 1e-6)`` to each filter's norm, with ``max|w|`` taken over
*all* filters of the location, so a filter whose norm has decayed to the order of a thousandth
of the largest weight scores much less than its cosine.  The sets agree: ``candidates`` are the
tokens some generator fixes at ``k`` (nlcl's ``TokenWorld.relevant``), ``others`` their
complement, averaged with 1/|others| (nlcl's 1/(d − P) when every candidate is used).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import torch

__all__ = ["symbol_freq", "compute_score", "check_result"]


def symbol_freq(distributions: list[list[int]]) -> dict[int, Counter]:
    """``counts[k][a]``: how often token ``a`` (−1: wildcard) sits at location ``k`` (``Distribution.symbol_freq``)."""
    counts: dict[int, Counter] = defaultdict(Counter)
    for pattern in distributions:
        for k, d in enumerate(pattern):
            counts[k][d] += 1
    return counts


def compute_score(keys, w: torch.Tensor, is_linear: bool, topk: int = 1) -> float:
    """The released ``compute_score``: mean over ``keys`` of the top-``topk`` mean energy ratio.

    ``w`` is (#filters, #tokens), the filters of one location projected on the token embeddings.
    """
    w_norm = w.norm(dim=1)
    means = []
    for idx in keys:
        if idx == -1:
            continue
        energy_ratio = w[:, idx] / (w_norm + max(w.abs().max() / 1000, 1e-6))
        if is_linear:
            energy_ratio = energy_ratio.abs()
        sorted_ratio, _ = energy_ratio.sort(descending=True)
        means.append(sorted_ratio[:topk].mean().item())
    return torch.FloatTensor(means).mean().item()


def check_result(
    weights: dict[str, torch.Tensor],
    distributions: list[list[int]],
    num_tokens: int,
    is_linear: bool,
    symbol_embedding: torch.Tensor | None = None,
    topk: int = 1,
) -> dict[str, float]:
    """The released ``check_result`` on a state dict ``weights`` (``"w1.{k}.weight"``: (M, d)).

    ``distributions`` are the patterns (one list of K token indices per generator, −1 for a
    wildcard); ``symbol_embedding`` (d, num_tokens) defaults to ``torch.eye(num_tokens)`` as in
    ``bn_gen_utils.Generator``.  Returns ``loc{k}``, ``loc_other{k}``, ``loc_all`` (χ̄+) and
    ``loc_other_all`` (χ̄−).
    """
    if symbol_embedding is None:
        symbol_embedding = torch.eye(num_tokens)
    counts = symbol_freq(distributions)
    K = len(counts)
    res: dict[str, float] = {}
    all_means, all_means_other = [], []
    for k in range(K):
        w = weights[f"w1.{k}.weight"].detach()
        w = w @ symbol_embedding.to(
            w.dtype
        )  # the released code is float32 throughout; this also takes float64
        candidates = list(counts[k].keys())
        this_mean = compute_score(candidates, w, is_linear, topk=topk)
        others = [a for a in range(num_tokens) if a not in candidates]
        this_mean_other = compute_score(others, w, is_linear, topk=topk)
        res[f"loc{k}"] = this_mean
        res[f"loc_other{k}"] = this_mean_other
        all_means.append(this_mean)
        all_means_other.append(this_mean_other)
    res["loc_all"] = torch.FloatTensor(all_means).mean().item()
    res["loc_other_all"] = torch.FloatTensor(all_means_other).mean().item()
    return res
