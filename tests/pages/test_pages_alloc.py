"""Byte-budget splitting: exact totals, minimums, alignment, bounds, errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protolens.pages.alloc import equal_split, range_split, unit, weighted_split


def test_unit_is_deterministic_and_in_range() -> None:
    values = [unit(0, "page", i) for i in range(200)]
    assert values == [unit(0, "page", i) for i in range(200)]
    assert all(0 <= v < 1 for v in values)
    assert len(set(values)) == 200
    assert unit(1, "page", 0) != unit(0, "page", 0)


@given(st.integers(0, 10**8), st.integers(1, 500))
def test_equal_split(total: int, n: int) -> None:
    sizes = equal_split(total, n)
    assert len(sizes) == n
    assert sum(sizes) == total
    assert max(sizes) - min(sizes) <= 1


def test_equal_split_needs_an_object() -> None:
    with pytest.raises(ValueError, match="at least one object"):
        equal_split(100, 0)


@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=60), st.integers(0, 5 * 10**6))
def test_weighted_split_exact_with_minimums_and_alignment(weights: list[float], extra: int) -> None:
    minimums = [150] + [100 + 4 * (i % 3) for i in range(len(weights) - 1)]
    aligns = [1] + [4 if i % 2 else 1 for i in range(len(weights) - 1)]
    total = sum(minimums) + extra
    sizes = weighted_split(total, weights, minimums, aligns)
    assert sum(sizes) == total
    assert all(s >= m for s, m in zip(sizes, minimums, strict=True))
    assert all(s % a == 0 for s, a in zip(sizes[1:], aligns[1:], strict=True))


def test_weighted_split_is_proportional_away_from_minimums() -> None:
    sizes = weighted_split(1_000_000, [1.0, 1.0, 2.0, 4.0], [10, 10, 10, 10], [1, 1, 1, 1])
    assert sizes[3] == pytest.approx(2 * sizes[2], rel=1e-3)
    assert sizes[2] == pytest.approx(2 * sizes[1], rel=1e-3)


def test_weighted_split_errors() -> None:
    with pytest.raises(ValueError, match="need at least 300 bytes"):
        weighted_split(299, [1, 1, 1], [100, 100, 100], [1, 1, 1])
    with pytest.raises(ValueError, match="align 1"):
        weighted_split(1000, [1, 1], [1, 1], [4, 1])
    with pytest.raises(ValueError, match="must match"):
        weighted_split(1000, [1, 1], [1], [1, 1])


@pytest.mark.parametrize("total", [755_001, 2_000_000, 8_000_000, 12_000_000, 83_000_000])
def test_range_split_hits_bounds_and_total(total: int) -> None:
    sizes = range_split(total, 136, 1000, 620_000)
    assert len(sizes) == 136
    assert sum(sizes) == total
    assert min(sizes) == 1000
    assert max(sizes) == 620_000
    assert sizes == sorted(sizes)


def test_range_split_rejects_impossible_totals() -> None:
    with pytest.raises(ValueError, match="cannot total"):
        range_split(755_000, 136, 1000, 620_000)  # = 135 x 1 KB + 620 KB: no room between
    with pytest.raises(ValueError, match="cannot total"):
        range_split(10**9, 136, 1000, 620_000)
    with pytest.raises(ValueError, match="at least two"):
        range_split(5000, 1, 1000, 620_000)
