"""Tests for nlcl.core.blocks: cache-sized blocks along an axis."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nlcl.core.blocks import axis_blocks


def test_axis_blocks_examples():
    assert axis_blocks(5, 10, 20) == [slice(0, 2), slice(2, 4), slice(4, 5)]
    assert axis_blocks(3, 1000, 10) == [slice(0, 1), slice(1, 2), slice(2, 3)]  # at least one item
    assert axis_blocks(4, 0, 10) == [slice(0, 4)]
    assert axis_blocks(0, 10, 10) == []
    assert axis_blocks(5, 50, 100, min_size=2) == [slice(0, 2), slice(2, 5)]  # 1 left over: merged
    assert axis_blocks(6, 50, 100, min_size=2) == [slice(0, 2), slice(2, 4), slice(4, 6)]
    assert axis_blocks(7, 10, 100, min_size=2) == [slice(0, 7)]  # all fit
    assert axis_blocks(1, 500, 100, min_size=2) == [slice(0, 1)]


@settings(max_examples=200)
@given(st.integers(0, 300), st.integers(0, 5000), st.integers(0, 10_000), st.integers(1, 4))
def test_axis_blocks_partition_the_axis_within_the_budget(n, per_item, budget, min_size):
    blocks = axis_blocks(n, per_item, budget, min_size=min_size)
    covered = [i for b in blocks for i in range(n)[b]]
    assert covered == list(range(n))  # consecutive, each index once
    size = max(min_size, 1, budget // max(1, per_item))
    assert all(b.stop - b.start <= size + min_size - 1 for b in blocks)
    if len(blocks) > 1:
        assert all(b.stop - b.start >= min_size for b in blocks)
