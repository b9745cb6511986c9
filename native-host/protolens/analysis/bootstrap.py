"""The bootstrap distribution of a sample median, sampled in O(1) per resample (pure).

A bootstrap resample of a sorted sample ``x_1 <= ... <= x_n`` only matters to the median through
two order statistics. With ``N_k`` the number of draws whose index is ``<= k`` (binomial,
``Bin(n, k/n)``), the ``r``-th order statistic of the resample is ``x_I`` with
``P(I <= k) = P(N_k >= r)`` (Efron 1982, "The Jackknife, the Bootstrap and Other Resampling
Plans", Sec. 10.3: the exact bootstrap distribution of the median). So instead of drawing ``n``
indices and taking a median per resample (``scipy.stats.bootstrap``: O(n log n) each), we draw the
median's index directly from that distribution:

- odd ``n``: the median is ``x_I`` with ``r = (n + 1) / 2``;
- even ``n``: the median is ``(x_I + x_J) / 2`` with ``I`` the ``m = n/2``-th order statistic and
  ``J`` the next one. ``J = I`` unless exactly ``m`` draws fell at or below ``I``; in that case the
  other ``n - m`` draws are uniform over the indices above ``I``, and ``J`` is their minimum:
  ``P(J <= j) = 1 - ((n - j) / (n - I)) ** (n - m)``.

The result is a draw from exactly the distribution that resampling has (tests compare both), at
O(n) set-up and O(1) per resample.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special  # type: ignore[import-untyped]


def _order_stat_cdf(n: int, r: int) -> NDArray[np.float64]:
    """``P(I_r <= k)`` for k = 1..n: at least ``r`` of ``n`` draws have index <= k."""
    k = np.arange(1, n + 1)
    cdf = np.asarray(special.bdtrc(r - 1, n, k / n), dtype=float)
    cdf[-1] = 1.0
    return np.maximum.accumulate(cdf)


def _binom_pmf(k: int, n: int, p: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(Bin(n, p) = k)`` for an array of p (scipy.special ufuncs: no per-call overhead)."""
    log_choose = special.gammaln(n + 1) - special.gammaln(k + 1) - special.gammaln(n - k + 1)
    return np.asarray(np.exp(log_choose + special.xlogy(k, p) + special.xlog1py(n - k, -p)))


def _draw_index(cdf: NDArray[np.float64], u: NDArray[np.float64]) -> NDArray[np.int64]:
    """1-based index with the given CDF, by inversion."""
    idx = np.searchsorted(cdf, u, side="right") + 1
    return np.minimum(idx, len(cdf)).astype(np.int64)


def bootstrap_medians(sorted_x: NDArray[np.float64], resamples: int,
                      rng: np.random.Generator) -> NDArray[np.float64]:
    """``resamples`` draws of the median of a bootstrap resample of ``sorted_x`` (ascending)."""
    x = np.asarray(sorted_x, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("bootstrap_medians: empty sample")
    if n == 1:
        return np.full(resamples, x[0])
    if n % 2:
        i = _draw_index(_order_stat_cdf(n, (n + 1) // 2), rng.random(resamples))
        return x[i - 1]
    m = n // 2
    cdf = _order_stat_cdf(n, m)
    i = _draw_index(cdf, rng.random(resamples))
    # P(N_{i-1} < m, N_i = m): exactly m draws at or below i, i itself drawn at least once
    ks = np.arange(1, n + 1)
    pmf_i = _binom_pmf(m, n, ks / n)
    stay_above = ((n - ks) / (n - ks + 1.0)) ** (n - m)
    exact_m = np.clip(pmf_i - _binom_pmf(m, n, (ks - 1) / n) * stay_above, 0.0, None)
    p_i = np.diff(np.concatenate(([0.0], cdf)))
    with np.errstate(divide="ignore", invalid="ignore"):
        split = np.where(p_i > 0, np.minimum(exact_m / p_i, 1.0), 0.0)
    u_split, u_next = rng.random(resamples), rng.random(resamples)
    moves = u_split < split[i - 1]
    # the minimum index among n - m uniform draws over i+1..n, by inversion
    above = (n - i) * (1.0 - u_next) ** (1.0 / (n - m))
    j = np.where(moves, np.floor(n - above).astype(np.int64) + 1, i)
    j = np.clip(j, i, n)
    return np.asarray((x[i - 1] + x[j - 1]) / 2.0)


def median_diff_interval(sorted_a: NDArray[np.float64], sorted_b: NDArray[np.float64],
                         resamples: int, confidence: float, rng: np.random.Generator
                         ) -> tuple[float, float]:
    """Percentile bootstrap interval of median(a) - median(b), independent samples."""
    diffs = bootstrap_medians(sorted_a, resamples, rng) - bootstrap_medians(sorted_b, resamples,
                                                                              rng)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(diffs, [tail, 100.0 - tail])
    return float(low), float(high)
