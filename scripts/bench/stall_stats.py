"""Rates of rare events and their intervals, for scripts/bench/stalls.py (pure).

A stall rate is k stalled loads of n: its 95% interval is Wilson's score interval (Wilson 1927;
Newcombe, "Two-sided confidence intervals for the single proportion", Stat. Med. 17:857, 1998,
method 3), which stays inside [0, 1] and is not degenerate at k = 0, unlike the Wald interval.
The difference of two independent rates gets Newcombe's hybrid score interval built from the two
Wilson intervals (Newcombe, "Interval estimation for the difference between independent
proportions", Stat. Med. 17:873, 1998, method 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The standard normal's 97.5% quantile."""


@dataclass(frozen=True)
class Rate:
    k: int
    """Events (stalled loads)."""
    n: int
    """Trials (loads)."""
    low: float
    high: float

    @property
    def p(self) -> float:
        return self.k / self.n if self.n else math.nan


def wilson(k: int, n: int, z: float = Z95) -> Rate:
    """k of n with its Wilson score interval."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Rate(0, 0, 0.0, 1.0)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    # at k = 0 or k = n the interval touches the bound exactly (rounding aside)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Rate(k, n, low, high)


def difference(a: Rate, b: Rate) -> tuple[float, float, float]:
    """a.p - b.p with Newcombe's hybrid score interval (method 10)."""
    d = a.p - b.p
    low = d - math.sqrt((a.p - a.low) ** 2 + (b.high - b.p) ** 2)
    high = d + math.sqrt((a.high - a.p) ** 2 + (b.p - b.low) ** 2)
    return d, low, high
