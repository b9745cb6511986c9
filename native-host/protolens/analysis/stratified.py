"""Comparison of arms across contributors, with the contributor as a stratum (pure).

Pooled data from many volunteers mix devices, access networks and places; in an A/B experiment
every volunteer's browser runs both arms, so comparing arms within each volunteer removes those
differences (Lehmann, *Nonparametrics*, 1975, ch. 3: blocking). Per cell (group x condition) and
pair of arms:

- ``p_value``: van Elteren's stratified Wilcoxon rank-sum test (van Elteren 1960), the
  Mann-Whitney test of ``compare`` summed over strata with weights 1/(N_s + 1), normal
  approximation with the tie correction; only strata with both arms count.
- ``diff_ms`` and ``ci_low_ms``/``ci_high_ms``: the shift of a against b common to the strata,
  and its 95% interval, by inverting that test (as ``analysis/shift.py`` inverts Mann-Whitney's:
  Hodges & Lehmann 1963; for strata, Lehmann 1975, ch. 3 sec. 3): the interval is every shift
  that, taken off arm a in every stratum, the test would not reject; the estimate is the shift
  where the statistic crosses 0. When even arms that never overlap could not be rejected at
  these n, no interval exists: "too few loads to decide".
- ``n_a``/``n_b`` and the medians are pooled over the strata that count; ``contributors`` is
  their number. The verdict is the one rule's (``analysis/verdict.py``). A cell whose loads all
  come from one contributor gets no interval and says so: one contributor's loads, however
  many, say nothing about other contributors (and copies of one load would look like evidence).

Why a stratum and not a random effect: a mixed model with a random intercept per contributor
assumes a distribution (normal on some scale) for page load times, which are heavy-tailed and
multimodal; the stratified rank test assumes nothing about their shape, matches the
Mann-Whitney test used for single stores, and with hundreds of contributors loses little.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm  # type: ignore[import-untyped]

from protolens.analysis.compare import ALPHA, Comparison, words
from protolens.analysis.observe import Observation
from protolens.analysis.strata import Packed, Shifts, Stratum, z_packed, z_separated
from protolens.analysis.verdict import ERROR, Effect, Verdict, decide

MIN_STRATA = 2
__all__ = ["Columns", "Stratum", "compare_cells", "compare_stratified", "needed_per_arm",
           "shift_interval", "van_elteren_p", "van_elteren_z"]

Cell = tuple[str, str, str, str, Sequence[float]]
"""One contributor's loads of one arm in one cell: (stratum, group, condition, arm, values)."""


def van_elteren_z(strata: Sequence[Stratum], shift: float = 0.0) -> float:
    """Signed z of van Elteren's statistic with ``shift`` taken off every a (positive: a
    ranks above b), with a continuity correction of half the largest stratum's step (for one
    stratum, scipy's ``mannwhitneyu(..., method="asymptotic")``); 0 when it has no variance."""
    return z_packed(Packed.of(strata), shift)


def van_elteren_p(strata: Sequence[Stratum] | Packed) -> float:
    """Two-sided p of van Elteren's test over strata (each with both samples non-empty)."""
    p = strata if isinstance(strata, Packed) else Packed.of(strata)
    return float(2 * norm.sf(abs(z_packed(p))))


def needed_per_arm(sizes: Sequence[tuple[int, int]], alpha: float) -> int | None:
    """None when these strata can reject at ``alpha``; else the fewest loads per arm in each
    stratum that could."""
    crit = float(norm.isf(alpha / 2))
    na = np.array([a for a, _ in sizes], dtype=np.int64)
    nb = np.array([b for _, b in sizes], dtype=np.int64)
    if z_separated(na, nb) > crit:
        return None
    k = 1
    while z_separated(np.maximum(na, k), np.maximum(nb, k)) <= crit:
        k += 1
    return k


def shift_interval(strata: Sequence[Stratum] | Packed, alpha: float
                   ) -> tuple[float, float | None, float | None]:
    """(estimate, low, high) of the shift common to the strata; None bounds: no interval."""
    shifts = Shifts.of(strata if isinstance(strata, Packed) else Packed.of(strata))
    cands = np.unique(shifts.d)
    # z is constant between consecutive candidates and non-increasing in the shift: region i is
    # (cands[i-1], cands[i]); region 0 lies below every candidate, region K above
    points = np.concatenate([[cands[0] - 1.0], (cands[1:] + cands[:-1]) / 2, [cands[-1] + 1.0]])
    crit = float(norm.isf(alpha / 2))

    def first(at_most: float) -> int:
        """The first region whose z is <= ``at_most`` (bisection; K + 1 if none)."""
        lo, hi = 0, len(points)
        while lo < hi:
            mid = (lo + hi) // 2
            if shifts.z(float(points[mid])) <= at_most:
                hi = mid
            else:
                lo = mid + 1
        return lo

    estimate = shifts.weighted_median()
    i_lo = first(crit)
    i_hi = first(-crit - 1e-12) - 1  # the last region whose z is >= -crit
    if i_lo == 0 or i_hi >= len(cands):
        return estimate, None, None
    return estimate, float(cands[i_lo - 1]), float(cands[i_hi])


class _Arm:
    """One arm's rows in one cell: their strata (codes, ascending) and their values."""

    def __init__(self, strata: np.ndarray, counts: np.ndarray, starts: np.ndarray,
                 values: np.ndarray) -> None:
        self.strata, self.counts, self.starts, self.values = strata, counts, starts, values

    def take(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The values of the rows ``keep`` (a mask), each row's sorted, and their counts."""
        counts, starts = self.counts[keep], self.starts[keep]
        idx = np.repeat(starts - (np.cumsum(counts) - counts), counts) + \
            np.arange(int(counts.sum()))
        vals = self.values[idx]
        sid = np.repeat(np.arange(len(counts)), counts)
        return vals[np.lexsort((vals, sid))], counts


def _pair(group: str, condition: str, arm_a: str, arm_b: str, ra: _Arm, rb: _Arm,
          alpha: float) -> tuple[Comparison, int]:
    both = np.intersect1d(ra.strata, rb.strata, assume_unique=True)
    a, na = ra.take(np.isin(ra.strata, both, assume_unique=True))
    b, nb = rb.take(np.isin(rb.strata, both, assume_unique=True))
    med_a = float(np.median(a)) if len(a) else None
    med_b = float(np.median(b)) if len(b) else None
    diff = low = high = p = None
    if len(both) < MIN_STRATA:
        seen = len(np.union1d(ra.strata, rb.strata))
        loads = int(ra.counts.sum() + rb.counts.sum())
        if seen == 1:
            why = f"all {loads} loads come from one contributor"
        else:
            why = f"{'only one' if len(both) else 'no'} contributor has loads of both arms"
        v = Verdict("undecided", f"{why}: no interval across contributors")
    else:
        packed = Packed(a, na, b, nb)
        diff, low, high = shift_interval(packed, alpha)
        p = van_elteren_p(packed)
        needs = needed_per_arm(list(zip(na.tolist(), nb.tolist(), strict=True)), alpha)
        v = decide(Effect(diff, low, high, len(a) + len(b), needs, level=1.0 - alpha),
                   unit="per arm from each contributor")
        if v.outcome == ERROR:
            low = high = None
    text = words(arm_a, arm_b, len(a), len(b), v, diff, low, high)
    return Comparison(group, condition, arm_a, arm_b, len(a), len(b), med_a, med_b, diff,
                      low, high, p, v.decided, text, v.outcome,
                      round(1.0 - alpha, 10)), len(both)


def _ranked(first: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Codes into ``names`` recoded as ranks among them sorted, and the sorted names."""
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int64)
    rank[order] = np.arange(len(names))
    return rank[first] if len(first) else first.astype(np.int64), [names[i] for i in order]


def _codes(names: Iterable[str]) -> tuple[np.ndarray, list[str]]:
    """Each name's rank among the distinct names (sorted), and those names."""
    seen: dict[str, int] = {}
    first = np.fromiter((seen.setdefault(x, len(seen)) for x in names), dtype=np.int64)
    return _ranked(first, list(seen))


@dataclass(frozen=True)
class Columns:
    """Cells as columns: per row (one contributor's loads of one arm in one cell) a code for
    each of its stratum, group, condition and arm (indices into the ``*_names``), its count,
    and all rows' values end to end. Built from rows (``of_rows``) or from codes a columnar
    engine already holds (``of_codes``, e.g. Arrow's dictionary encoding)."""

    keys: tuple[tuple[np.ndarray, list[str]], ...]
    """(codes, names) of stratum, group, condition, arm; codes rank the names sorted."""
    counts: np.ndarray
    values: np.ndarray

    @classmethod
    def of_rows(cls, cells: Iterable[Cell]) -> Columns:
        rows = list(cells)
        counts = np.fromiter((len(r[4]) for r in rows), dtype=np.int64, count=len(rows))
        values = np.fromiter(itertools.chain.from_iterable(r[4] for r in rows), dtype=float,
                             count=int(counts.sum()))
        keys = (_codes(r[0] for r in rows), _codes(r[1] for r in rows),
                _codes(r[2] for r in rows), _codes(r[3] for r in rows))
        return cls(keys, counts, values)

    @classmethod
    def of_codes(cls, keys: Sequence[tuple[np.ndarray, Sequence[str]]], counts: np.ndarray,
                 values: np.ndarray) -> Columns:
        return cls(tuple(_ranked(np.asarray(c, dtype=np.int64), list(n)) for c, n in keys),
                   np.asarray(counts, dtype=np.int64), np.asarray(values, dtype=float))


def compare_cells(cells: Iterable[Cell] | Columns, arms: Sequence[str] | None = None,
                  alpha: float = ALPHA) -> list[tuple[Comparison, int]]:
    """Every pair of arms in every (group, condition) cell with the contributor as a stratum,
    from one row per (stratum, group, condition, arm) holding its values (as ``compare
    --dataset``'s query gives them): (comparison, contributors with both arms), sorted as
    ``compare`` sorts. Raises ValueError if a row repeats."""
    cols = cells if isinstance(cells, Columns) else Columns.of_rows(cells)
    counts, values = cols.counts, cols.values
    starts = np.cumsum(counts) - counts
    (s_code, _), (g_code, groups), (c_code, conds), (a_code, arm_names) = cols.keys
    order = np.lexsort((s_code, a_code, c_code, g_code))
    key = np.stack([g_code, c_code, a_code, s_code])[:, order]
    if len(order) > 1 and bool(np.any(np.all(key[:, 1:] == key[:, :-1], axis=0))):
        raise ValueError("a (stratum, group, condition, arm) row repeats")
    out = []
    cell_edges = np.flatnonzero(np.any(key[:2, 1:] != key[:2, :-1], axis=0)) + 1
    for lo, hi in zip(np.r_[0, cell_edges], np.r_[cell_edges, len(order)], strict=True):
        if lo == hi:
            continue
        rows_of = order[lo:hi]
        arm_edges = np.flatnonzero(key[2, lo + 1:hi] != key[2, lo:hi - 1]) + 1
        by_arm = {}
        for alo, ahi in zip(np.r_[0, arm_edges], np.r_[arm_edges, hi - lo], strict=True):
            r = rows_of[alo:ahi]
            by_arm[arm_names[int(a_code[r[0]])]] = _Arm(s_code[r], counts[r], starts[r],
                                                        values)
        names = [x for x in arms if x in by_arm] if arms else sorted(by_arm)
        group, cond = groups[int(key[0, lo])], conds[int(key[1, lo])]
        for arm_a, arm_b in itertools.combinations(names, 2):
            out.append(_pair(group, cond, arm_a, arm_b, by_arm[arm_a], by_arm[arm_b], alpha))
    return out


def compare_stratified(by_stratum: Mapping[str, Sequence[Observation]],
                       arms: Sequence[str] | None = None, alpha: float = ALPHA,
                       ) -> list[tuple[Comparison, int]]:
    """``compare_cells`` of observations grouped by stratum."""
    cells: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    for stratum, observations in by_stratum.items():
        for o in observations:
            cells[(stratum, o.group, o.condition, o.arm)].append(o.value_ms)
    return compare_cells(((*k, v) for k, v in cells.items()), arms, alpha)
