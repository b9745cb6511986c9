"""Two-sided Mann-Whitney U p-value of two sorted samples (pure), computed as
``scipy.stats.mannwhitneyu(a, b, alternative="two-sided")`` does, without its per-call overhead.

scipy's default (``method="auto"``) uses the exact null distribution when either sample has at
most 8 values and there are no ties, else the normal approximation with tie and continuity
correction (scipy/stats/_mannwhitneyu.py, ``_mwu_choose_method`` and ``_get_mwu_z``). The exact
case is rare in ProtoLens's data and is handed to scipy; the asymptotic one is computed here from
the sorted samples by binary search: U1 = sum over a of (#b below + half #b equal). Tests check
equality with scipy on random, tied and tiny samples.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special, stats  # type: ignore[import-untyped]


def mann_whitney_p(sorted_a: NDArray[np.float64], sorted_b: NDArray[np.float64]) -> float:
    """Two-sided p-value; both samples ascending and non-empty."""
    a, b = np.asarray(sorted_a, dtype=float), np.asarray(sorted_b, dtype=float)
    n1, n2 = len(a), len(b)
    both = np.concatenate((a, b))
    both.sort(kind="mergesort")
    _, counts = np.unique(both, return_counts=True)
    ties = bool((counts > 1).any())
    if (n1 <= 8 or n2 <= 8) and not ties:
        return float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    below = np.searchsorted(b, a, side="left")
    at_or_below = np.searchsorted(b, a, side="right")
    u1 = float((below + at_or_below).sum()) / 2.0
    u = max(u1, n1 * n2 - u1)
    n = n1 + n2
    t = counts.astype(float)
    tie_term = float((t ** 3 - t).sum())
    s = np.sqrt(n1 * n2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (u - n1 * n2 / 2.0 - 0.5) / s
    p = 2.0 * float(special.ndtr(-z))
    return float(np.clip(p, 0.0, 1.0)) if not np.isnan(p) else float("nan")
