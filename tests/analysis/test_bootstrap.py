"""The O(1)-per-resample bootstrap of the median and the Mann-Whitney p-value, against ground
truth: every resample enumerated for small samples, scipy's own bootstrap and test otherwise."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from protolens.analysis.bootstrap import bootstrap_medians, median_diff_interval
from protolens.analysis.ranktest import mann_whitney_p


def _exact_median_pmf(x: np.ndarray) -> dict[float, float]:
    """The bootstrap distribution of the median by enumerating all n**n resamples (every index
    tuple a row, each row's median taken by NumPy at once: 823,543 rows for n = 7)."""
    n = len(x)
    idx = np.indices((n,) * n, dtype=np.int8).reshape(n, -1).T
    counts = Counter(np.median(x[idx], axis=1).tolist())
    return {float(v): c / n ** n for v, c in counts.items()}


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_sampled_medians_follow_the_enumerated_bootstrap_distribution(n: int) -> None:
    x = np.sort(np.random.default_rng(n).lognormal(0.0, 1.0, n))
    exact = _exact_median_pmf(x)
    draws = 200_000
    got = Counter(bootstrap_medians(x, draws, np.random.default_rng(7)).tolist())
    assert set(got) <= set(exact), "a median value no resample can produce"
    for value, p in exact.items():
        sigma = np.sqrt(p * (1 - p) / draws)
        assert abs(got.get(value, 0) / draws - p) <= 5 * sigma + 1e-9, (n, value, p)


def test_ties_and_a_single_value() -> None:
    assert bootstrap_medians(np.array([3.0]), 5, np.random.default_rng(0)).tolist() == [3.0] * 5
    same = bootstrap_medians(np.array([2.0, 2.0, 2.0, 2.0]), 100, np.random.default_rng(0))
    assert set(same.tolist()) == {2.0}
    with pytest.raises(ValueError, match="empty"):
        bootstrap_medians(np.array([]), 5, np.random.default_rng(0))


@pytest.mark.parametrize("seed,n_a,n_b", [(1, 12, 15), (2, 40, 40), (3, 101, 60), (4, 9, 250)])
def test_interval_matches_scipy_bootstrap_within_monte_carlo_error(seed: int, n_a: int,
                                                                   n_b: int) -> None:
    rng = np.random.default_rng(seed)
    a = np.sort(rng.lognormal(8.0, 0.4, n_a) + 300.0)
    b = np.sort(rng.lognormal(8.0, 0.4, n_b))
    ours = median_diff_interval(a, b, 20_000, 0.95, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.bootstrap((a, b), lambda x, y, axis=-1: np.median(x, axis=axis)
                              - np.median(y, axis=axis), n_resamples=20_000, vectorized=True,
                              paired=False, method="percentile",
                              rng=np.random.default_rng(seed + 100)).confidence_interval
    spread = float(ref.high - ref.low)
    assert abs(ours[0] - ref.low) < 0.06 * spread
    assert abs(ours[1] - ref.high) < 0.06 * spread


samples = st.lists(st.integers(0, 30).map(float), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(samples, samples)
def test_mann_whitney_equals_scipy(a: list[float], b: list[float]) -> None:
    xa, xb = np.sort(np.array(a)), np.sort(np.array(b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = float(stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
        ours = mann_whitney_p(xa, xb)
    if np.isnan(ref):
        assert np.isnan(ours)
    else:
        assert ours == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_mann_whitney_continuous_large_samples() -> None:
    rng = np.random.default_rng(5)
    a, b = np.sort(rng.normal(0, 1, 300)), np.sort(rng.normal(0.2, 1, 200))
    assert mann_whitney_p(a, b) == pytest.approx(
        stats.mannwhitneyu(a, b, alternative="two-sided").pvalue, rel=1e-12)
