"""Pairwise comparison of arms (pure): per group x condition and each pair of arms, n, medians,
the median difference with a seeded percentile-bootstrap 95% confidence interval (each resample's
median drawn directly from its exact distribution, ``analysis/bootstrap.py``: the same interval as
``scipy.stats.bootstrap`` within Monte Carlo error, at O(1) per resample) and a two-sided
Mann-Whitney U p-value (as ``scipy.stats.mannwhitneyu`` computes it, ``analysis/ranktest.py``),
and a plain verdict.

Reproducible whatever the input order: each sample is sorted before resampling, and each pair's
random generator is seeded from ``seed`` and the pair's own key, so filtering other cells out
does not change a cell's interval. ``compare`` never reads the clock, a file or a database.
"""

from __future__ import annotations

import itertools
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from protolens.analysis.bootstrap import median_diff_interval
from protolens.analysis.observe import Observation
from protolens.analysis.ranktest import mann_whitney_p

ALPHA = 0.05
MIN_N = 2
"""Fewest loads per arm for an interval and a test."""


@dataclass(frozen=True)
class Comparison:
    """Arm ``arm_a`` against ``arm_b`` in one cell; ``diff_ms`` = median(a) - median(b)."""

    group: str
    condition: str
    arm_a: str
    arm_b: str
    n_a: int
    n_b: int
    median_a_ms: float | None
    median_b_ms: float | None
    diff_ms: float | None
    """Negative: ``arm_a`` is faster."""
    ci_low_ms: float | None
    ci_high_ms: float | None
    p_value: float | None
    """Two-sided Mann-Whitney U."""
    significant: bool
    """The interval excludes 0 and p < alpha."""
    verdict: str

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def _fmt_amount(diff_ms: float, low: float, high: float) -> str:
    if abs(diff_ms) >= 1000:
        return f"{abs(diff_ms) / 1000:.1f} s [{low / 1000:.1f}, {high / 1000:.1f}]"
    return f"{abs(diff_ms):.0f} ms [{low:.0f}, {high:.0f}]"


def verdict(arm_a: str, arm_b: str, n_a: int, n_b: int, diff: float | None,
            low: float | None, high: float | None, p: float | None, alpha: float = ALPHA
            ) -> tuple[bool, str]:
    """(significant, sentence): "h1 faster by 1.9 s [1.4, 2.3]" with the interval of the
    winner's advantage, or "no difference detected at n=12"."""
    n_text = f"n={n_a}" if n_a == n_b else f"n={n_a}/{n_b}"
    if diff is None or low is None or high is None or p is None:
        return False, f"too few loads ({n_text}, need {MIN_N} per arm)"
    if (low > 0 or high < 0) and p < alpha:
        if diff < 0:  # a faster: its advantage is -diff, interval [-high, -low]
            return True, f"{arm_a} faster by {_fmt_amount(diff, -high, -low)}"
        return True, f"{arm_b} faster by {_fmt_amount(diff, low, high)}"
    return False, f"no difference detected at {n_text}"


def compare_pair(group: str, condition: str, arm_a: str, a: Sequence[float], arm_b: str,
                 b: Sequence[float], seed: int, resamples: int = 2000,
                 confidence: float = 0.95, alpha: float = ALPHA) -> Comparison:
    """One pair of arms in one cell."""
    xa = np.sort(np.asarray(a, dtype=float))
    xb = np.sort(np.asarray(b, dtype=float))
    med_a = float(np.median(xa)) if len(xa) else None
    med_b = float(np.median(xb)) if len(xb) else None
    diff = low = high = p = None
    if len(xa) >= MIN_N and len(xb) >= MIN_N:
        diff = float(np.median(xa) - np.median(xb))
        key = zlib.crc32("\x1f".join((group, condition, arm_a, arm_b)).encode())
        rng = np.random.default_rng([seed, key])
        low, high = median_diff_interval(xa, xb, resamples, confidence, rng)
        p = mann_whitney_p(xa, xb)
        if np.isnan(p):  # every value equal: no evidence of a difference
            p = 1.0
    sig, text = verdict(arm_a, arm_b, len(xa), len(xb), diff, low, high, p, alpha)
    return Comparison(group, condition, arm_a, arm_b, len(xa), len(xb), med_a, med_b, diff,
                      low, high, p, sig, text)


def compare(observations: Iterable[Observation], seed: int = 0, resamples: int = 2000,
            confidence: float = 0.95, arms: Sequence[str] | None = None,
            alpha: float = ALPHA) -> list[Comparison]:
    """Every pair of arms in every (group, condition) cell, sorted by group, condition, pair.

    ``arms`` restricts and orders the arms (the first of a pair is ``arm_a``); by default all arms
    seen, in sorted order.
    """
    cells: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for obs in observations:
        cells[(obs.group, obs.condition)][obs.arm].append(obs.value_ms)
    out: list[Comparison] = []
    for (group, condition), by_arm in sorted(cells.items()):
        names = [a for a in arms if a in by_arm] if arms else sorted(by_arm)
        for arm_a, arm_b in itertools.combinations(names, 2):
            out.append(compare_pair(group, condition, arm_a, by_arm[arm_a], arm_b,
                                    by_arm[arm_b], seed, resamples, confidence, alpha))
    return out
