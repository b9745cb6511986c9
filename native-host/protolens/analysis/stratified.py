"""Comparison of arms across contributors, with the contributor as a stratum (pure; issue 11).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, rankdata  # type: ignore[import-untyped]

from protolens.analysis.compare import ALPHA, Comparison, words
from protolens.analysis.observe import Observation
from protolens.analysis.verdict import ERROR, Effect, Verdict, decide

MIN_STRATA = 2


@dataclass(frozen=True)
class Stratum:
    a: np.ndarray
    b: np.ndarray


def van_elteren_z(strata: Sequence[Stratum], shift: float = 0.0) -> float:
    """Signed z of van Elteren's statistic with ``shift`` taken off every a (positive: a
    ranks above b), with a continuity correction of half the largest stratum's step (for one
    stratum, scipy's ``mannwhitneyu(..., method="asymptotic")``); 0 when it has no variance."""
    t = var = step = 0.0
    for s in strata:
        na, nb = len(s.a), len(s.b)
        n = na + nb
        ranks = rankdata(np.concatenate([s.a - shift, s.b]))
        w = 1.0 / (n + 1)
        _, counts = np.unique(ranks, return_counts=True)
        ties = float(np.sum(counts ** 3 - counts)) / (n * (n - 1)) if n > 1 else 0.0
        t += w * (float(ranks[:na].sum()) - na * (n + 1) / 2)
        var += w * w * na * nb * ((n + 1) - ties) / 12
        step = max(step, w)
    if var <= 0:
        return 0.0
    return float(np.sign(t)) * max(abs(t) - step / 2, 0.0) / float(np.sqrt(var))


def van_elteren_p(strata: Sequence[Stratum]) -> float:
    """Two-sided p of van Elteren's test over strata (each with both samples non-empty)."""
    return float(2 * norm.sf(abs(van_elteren_z(strata))))


def _separated(sizes: Sequence[tuple[int, int]]) -> list[Stratum]:
    """Strata of these sizes whose a all lie above their b: the strongest evidence."""
    return [Stratum(np.arange(nb, na + nb, dtype=float), np.arange(nb, dtype=float))
            for na, nb in sizes]


def needed_per_arm(sizes: Sequence[tuple[int, int]], alpha: float) -> int | None:
    """None when these strata can reject at ``alpha``; else the fewest loads per arm in each
    stratum that could."""
    crit = float(norm.isf(alpha / 2))
    if van_elteren_z(_separated(sizes)) > crit:
        return None
    k = 1
    while van_elteren_z(_separated([(max(a, k), max(b, k)) for a, b in sizes])) <= crit:
        k += 1
    return k


@dataclass(frozen=True)
class _Shifts:
    """Every within-stratum difference a_i - b_j, sorted, with its stratum's weight: van
    Elteren's statistic at a shift d is a weighted count of the differences above d (a rank sum
    of a less its mean is U = #{a_i - b_j > d} + #{= d} / 2, less n_a n_b / 2), so each shift costs
    one binary search however many contributors there are."""

    d: np.ndarray
    cum_w: np.ndarray
    centre: float
    sd: float
    step: float

    @classmethod
    def of(cls, strata: Sequence[Stratum]) -> _Shifts:
        d = np.concatenate([(s.a[:, None] - s.b[None, :]).ravel() for s in strata])
        w = np.concatenate([np.full(len(s.a) * len(s.b), 1.0 / (len(s.a) + len(s.b) + 1))
                            for s in strata])
        order = np.argsort(d, kind="mergesort")
        var = 0.0
        for s in strata:  # the tie correction of the data as they are (at shift 0)
            n = len(s.a) + len(s.b)
            _, counts = np.unique(np.concatenate([s.a, s.b]), return_counts=True)
            ties = float(np.sum(counts ** 3 - counts)) / (n * (n - 1)) if n > 1 else 0.0
            var += len(s.a) * len(s.b) * ((n + 1) - ties) / 12 / (n + 1) ** 2
        return cls(d[order], np.concatenate([[0.0], np.cumsum(w[order])]),
                   float(sum(len(s.a) * len(s.b) / (len(s.a) + len(s.b) + 1) / 2
                             for s in strata)),
                   float(np.sqrt(var)), max(1.0 / (len(s.a) + len(s.b) + 1) for s in strata))

    def weighted_median(self) -> float:
        """Where the statistic crosses 0: the differences' median weighted by their strata's
        weights (for one stratum, the Hodges-Lehmann estimate)."""
        half = float(self.cum_w[-1]) / 2
        i = int(np.searchsorted(self.cum_w[1:], half * (1 - 1e-12), side="left"))
        if abs(float(self.cum_w[i + 1]) - half) <= 1e-12 * half and i + 1 < len(self.d):
            return float(self.d[i] + self.d[i + 1]) / 2
        return float(self.d[i])

    def z(self, shift: float) -> float:
        """``van_elteren_z(strata, shift)`` (with the ties of the unshifted data)."""
        if self.sd <= 0:
            return 0.0
        lo = int(np.searchsorted(self.d, shift, side="left"))
        hi = int(np.searchsorted(self.d, shift, side="right"))
        t = (self.cum_w[-1] - self.cum_w[hi]) + (self.cum_w[hi] - self.cum_w[lo]) / 2 \
            - self.centre
        return float(np.sign(t)) * max(abs(t) - self.step / 2, 0.0) / self.sd


def shift_interval(strata: Sequence[Stratum], alpha: float
                   ) -> tuple[float, float | None, float | None]:
    """(estimate, low, high) of the shift common to the strata; None bounds: no interval."""
    shifts = _Shifts.of(strata)
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


def _cell(group: str, condition: str, arm_a: str, arm_b: str,
          by_stratum: Mapping[str, Mapping[str, list[float]]], alpha: float
          ) -> tuple[Comparison, int]:
    strata = [Stratum(np.sort(np.asarray(v[arm_a], float)), np.sort(np.asarray(v[arm_b], float)))
              for _, v in sorted(by_stratum.items()) if v.get(arm_a) and v.get(arm_b)]
    a = np.concatenate([s.a for s in strata]) if strata else np.array([])
    b = np.concatenate([s.b for s in strata]) if strata else np.array([])
    med_a = float(np.median(a)) if len(a) else None
    med_b = float(np.median(b)) if len(b) else None
    diff = low = high = p = None
    if len(strata) < MIN_STRATA:
        seen = [v for v in by_stratum.values() if v.get(arm_a) or v.get(arm_b)]
        loads = sum(len(v.get(arm_a, ())) + len(v.get(arm_b, ())) for v in seen)
        if len(seen) == 1:
            why = f"all {loads} loads come from one contributor"
        else:
            why = f"{'only one' if strata else 'no'} contributor has loads of both arms"
        v = Verdict("undecided", f"{why}: no interval across contributors")
    else:
        diff, low, high = shift_interval(strata, alpha)
        p = van_elteren_p(strata)
        needs = needed_per_arm([(len(s.a), len(s.b)) for s in strata], alpha)
        v = decide(Effect(diff, low, high, len(a) + len(b), needs, level=1.0 - alpha),
                   unit="per arm from each contributor")
        if v.outcome == ERROR:
            low = high = None
    text = words(arm_a, arm_b, len(a), len(b), v, diff, low, high)
    return Comparison(group, condition, arm_a, arm_b, len(a), len(b), med_a, med_b, diff,
                      low, high, p, v.decided, text, v.outcome,
                      round(1.0 - alpha, 10)), len(strata)


def compare_stratified(by_stratum: Mapping[str, Sequence[Observation]],
                       arms: Sequence[str] | None = None, alpha: float = ALPHA,
                       ) -> list[tuple[Comparison, int]]:
    """Every pair of arms in every (group, condition) cell with the contributor as a stratum:
    (comparison, contributors with both arms), sorted as ``compare`` sorts."""
    cells: dict[tuple[str, str], dict[str, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    for stratum, observations in by_stratum.items():
        for o in observations:
            cells[(o.group, o.condition)][stratum][o.arm].append(o.value_ms)
    out = []
    for (group, condition), strata in sorted(cells.items()):
        seen = {arm for v in strata.values() for arm in v}
        names = [x for x in arms if x in seen] if arms else sorted(seen)
        for arm_a, arm_b in itertools.combinations(names, 2):
            out.append(_cell(group, condition, arm_a, arm_b, strata, alpha))
    return out
