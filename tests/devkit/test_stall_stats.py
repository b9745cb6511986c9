"""scripts/bench/stall_stats.py against published worked examples: Newcombe (1998), Stat. Med.
17:857 Table I (Wilson score interval, method 3) and 17:873 Table II (hybrid score interval of a
difference, method 10), and scipy's own Wilson interval."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from scripts.bench.stall_stats import difference, wilson


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_matches_newcombe_table_i(k: int, n: int, low: float, high: float) -> None:
    r = wilson(k, n)
    assert (round(r.low, 4), round(r.high, 4)) == (low, high)
    assert r.p == k / n


@pytest.mark.parametrize(("k", "n"), [(0, 1), (3, 60), (12, 200), (200, 200)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    r = wilson(k, n)
    assert r.low == pytest.approx(ci.low, abs=1e-12)
    assert r.high == pytest.approx(ci.high, abs=1e-12)


@pytest.mark.parametrize(("a", "b", "low", "high"), [
    ((56, 70), (48, 80), 0.0524, 0.3339), ((9, 10), (3, 10), 0.1705, 0.8090),
    ((6, 7), (2, 7), 0.0582, 0.8062), ((5, 56), (0, 29), -0.0381, 0.1926),
    ((0, 10), (0, 20), -0.1611, 0.2775), ((10, 10), (0, 20), 0.6791, 1.0),
])
def test_difference_matches_newcombe_table_ii(a: tuple[int, int], b: tuple[int, int],
                                              low: float, high: float) -> None:
    d, lo, hi = difference(wilson(*a), wilson(*b))
    assert d == pytest.approx(a[0] / a[1] - b[0] / b[1])
    assert (round(lo, 4), round(hi, 4)) == (low, high)


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_wilson_rejects_impossible_counts(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(k, n)
