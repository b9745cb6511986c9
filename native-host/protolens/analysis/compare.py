"""Pairwise comparison of arms (pure): per group x condition and each pair of arms, n, medians,
the shift between the arms (Hodges-Lehmann) with its distribution-free 95% interval (the one that
inverts the Mann-Whitney test, ``analysis/shift.py``), the two-sided Mann-Whitney U p-value (as
``scipy.stats.mannwhitneyu`` computes it, ``analysis/ranktest.py``), and the verdict of the one
rule (``analysis/verdict.py``).

Deterministic: the interval is exact (no resampling), so the same loads give the same numbers in
any order, whatever other cells hold. ``compare`` never reads the clock, a file or a database.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from protolens.analysis.observe import Observation
from protolens.analysis.ranktest import mann_whitney_p
from protolens.analysis.shift import needed_n, shift_interval
from protolens.analysis.verdict import ABOVE, BELOW, LEVEL, Effect, Verdict, decide

ALPHA = round(1.0 - LEVEL, 10)


@dataclass(frozen=True)
class Comparison:
    """Arm ``arm_a`` against ``arm_b`` in one cell; ``diff_ms`` is the shift a - b."""

    group: str
    condition: str
    arm_a: str
    arm_b: str
    n_a: int
    n_b: int
    median_a_ms: float | None
    median_b_ms: float | None
    diff_ms: float | None
    """Hodges-Lehmann shift of a against b (the median of all pairwise differences); negative:
    ``arm_a`` is faster."""
    ci_low_ms: float | None
    ci_high_ms: float | None
    """The shift's interval at ``level``; null when the design cannot give one."""
    p_value: float | None
    """Two-sided Mann-Whitney U (a column: the verdict comes from the interval)."""
    significant: bool
    """The interval excludes 0."""
    verdict: str
    outcome: str = ""
    """``analysis/verdict.py``: above, below, overlaps, undecided, error, no data."""
    level: float = LEVEL

    def to_row(self) -> dict[str, Any]:
        return asdict(self)


def _fmt_amount(diff_ms: float, low: float, high: float) -> str:
    if abs(diff_ms) >= 1000:
        return f"{abs(diff_ms) / 1000:.1f} s [{low / 1000:.1f}, {high / 1000:.1f}]"
    return f"{abs(diff_ms):.0f} ms [{low:.0f}, {high:.0f}]"


def words(arm_a: str, arm_b: str, n_a: int, n_b: int, v: Verdict, diff: float | None,
          low: float | None, high: float | None) -> str:
    """The sentence for a pair's verdict: "h1 faster by 1.9 s [1.4, 2.3]" (the winner's
    advantage and its interval), "no difference detected at n=12", or the verdict's reason."""
    n_text = f"n={n_a}" if n_a == n_b else f"n={n_a}/{n_b}"
    if v.outcome in (ABOVE, BELOW) and diff is not None and low is not None \
            and high is not None:
        if v.outcome == BELOW:  # a faster: its advantage is -diff, interval [-high, -low]
            return f"{arm_a} faster by {_fmt_amount(diff, -high, -low)}"
        return f"{arm_b} faster by {_fmt_amount(diff, low, high)}"
    if v.reason:
        return v.reason
    return f"no difference detected at {n_text}"


def compare_pair(group: str, condition: str, arm_a: str, a: Sequence[float], arm_b: str,
                 b: Sequence[float], alpha: float = ALPHA) -> Comparison:
    """One pair of arms in one cell."""
    xa = np.sort(np.asarray(a, dtype=float))
    xb = np.sort(np.asarray(b, dtype=float))
    med_a = float(np.median(xa)) if len(xa) else None
    med_b = float(np.median(xb)) if len(xb) else None
    diff = low = high = p = None
    needs = None
    if len(xa) and len(xb):
        diff, low, high = shift_interval(xa, xb, alpha)
        if low is None:
            needs = needed_n(len(xa), len(xb), alpha)
        p = mann_whitney_p(xa, xb)
        if np.isnan(p):  # every value equal: no evidence of a difference
            p = 1.0
    v = decide(Effect(diff, low, high, len(xa) + len(xb), needs, level=round(1.0 - alpha, 10)))
    if v.outcome == "error":
        low = high = None
    return Comparison(group, condition, arm_a, arm_b, len(xa), len(xb), med_a, med_b, diff,
                      low, high, p, v.decided, words(arm_a, arm_b, len(xa), len(xb), v, diff,
                                                     low, high), v.outcome, round(1.0 - alpha, 10))


def compare(observations: Iterable[Observation], arms: Sequence[str] | None = None,
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
                                    by_arm[arm_b], alpha))
    return out
