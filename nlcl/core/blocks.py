"""Cache-sized blocks along an axis, for memory-bound passes over large tensors.

A pass over a tensor too large for a core's cache goes through main memory; the same operations a
block of the leading axis at a time keep each block in cache through all of its passes.  Used by
every chapter's hot loops that have been blocked (Esser et al.'s networks and initialisations, Ren &
Li's runs, Tian's filters); each user states why its blocks give the numbers of the whole batch.
"""

from __future__ import annotations

__all__ = ["axis_blocks"]


def axis_blocks(n: int, per_item: int, budget: int, *, min_size: int = 1) -> list[slice]:
    """Consecutive slices covering ``range(n)``, each of max(``min_size``, ``budget`` // ``per_item``) items.

    For passes over a tensor of ``per_item`` elements per index along one axis: a block of about
    ``budget`` elements at a time stays in a core's cache through the passes over it (one block
    when everything fits).  Every block has at least one item; with ``min_size`` > 1 a last block
    shorter than that is merged into the one before (e.g. 2, where a batch of one would take another
    matmul kernel and change the last bits).  ``n`` = 0 gives no blocks.
    """
    size = max(min_size, 1, budget // max(1, per_item))
    blocks = [slice(k, min(k + size, n)) for k in range(0, n, size)]
    if len(blocks) > 1 and blocks[-1].stop - blocks[-1].start < min_size:
        blocks[-2:] = [slice(blocks[-2].start, n)]
    return blocks
