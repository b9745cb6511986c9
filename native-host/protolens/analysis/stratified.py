"""Comparison of arms across contributors, with the contributor as a stratum (pure; issue 11).

Pooled data from many volunteers mix devices, access networks and places; in an A/B experiment
every volunteer's browser runs both arms, so comparing arms within each volunteer removes those
differences (Lehmann, *Nonparametrics*, 1975, ch. 3: blocking). Per cell (group x condition) and
pair of arms:

- ``p_value``: van Elteren's stratified Wilcoxon rank-sum test (van Elteren 1960), the
  Mann-Whitney test of ``compare`` summed over strata with weights 1/(N_s + 1), normal
  approximation with the tie correction; only strata with both arms count.
- ``diff_ms``: the mean of the per-contributor median differences, weighted by
  n_a n_b / (n_a + n_b) (each stratum's information); ``ci_low_ms``/``ci_high_ms``: its percentile
  interval from a bootstrap over contributors (resampling whole strata, as a cluster bootstrap,
  Davison & Hinkley 1997, section 3.8), seeded from ``seed`` and the cell's key.
- ``n_a``/``n_b`` and the medians are pooled over the strata that count; ``contributors`` is
  their number. The verdict rule is ``compare``'s; fewer than 2 contributors: no verdict.

Why a stratum and not a random effect: a mixed model with a random intercept per contributor
assumes a distribution (normal on some scale) for page load times, which are heavy-tailed and
multimodal; the stratified rank test assumes nothing about their shape, matches the
Mann-Whitney test used for single stores, and with hundreds of contributors loses little.
"""

from __future__ import annotations

import itertools
import zlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm, rankdata  # type: ignore[import-untyped]

from protolens.analysis.compare import ALPHA, MIN_N, Comparison, verdict
from protolens.analysis.observe import Observation

MIN_STRATA = 2


@dataclass(frozen=True)
class Stratum:
    a: np.ndarray
    b: np.ndarray


def van_elteren_p(strata: Sequence[Stratum]) -> float:
    """Two-sided p of van Elteren's test over strata (each with both samples non-empty)."""
    t = var = 0.0
    for s in strata:
        na, nb = len(s.a), len(s.b)
        n = na + nb
        ranks = rankdata(np.concatenate([s.a, s.b]))
        w = 1.0 / (n + 1)
        _, counts = np.unique(ranks, return_counts=True)
        ties = float(np.sum(counts ** 3 - counts)) / (n * (n - 1)) if n > 1 else 0.0
        t += w * (float(ranks[:na].sum()) - na * (n + 1) / 2)
        var += w * w * na * nb * ((n + 1) - ties) / 12
    if var <= 0:
        return 1.0
    return float(2 * norm.sf(abs(t) / np.sqrt(var)))


def _cell(group: str, condition: str, arm_a: str, arm_b: str,
          by_stratum: Mapping[str, Mapping[str, list[float]]], seed: int, resamples: int,
          confidence: float, alpha: float) -> tuple[Comparison, int]:
    strata = [Stratum(np.asarray(v[arm_a], float), np.asarray(v[arm_b], float))
              for _, v in sorted(by_stratum.items()) if v.get(arm_a) and v.get(arm_b)]
    a = np.concatenate([s.a for s in strata]) if strata else np.array([])
    b = np.concatenate([s.b for s in strata]) if strata else np.array([])
    med_a = float(np.median(a)) if len(a) else None
    med_b = float(np.median(b)) if len(b) else None
    diff = low = high = p = None
    if len(strata) >= MIN_STRATA and len(a) >= MIN_N and len(b) >= MIN_N:
        d = np.array([np.median(s.a) - np.median(s.b) for s in strata])
        w = np.array([len(s.a) * len(s.b) / (len(s.a) + len(s.b)) for s in strata])
        diff = float(np.sum(d * w) / np.sum(w))
        key = zlib.crc32("\x1f".join((group, condition, arm_a, arm_b)).encode())
        rng = np.random.default_rng([seed, key])
        idx = rng.integers(0, len(strata), size=(resamples, len(strata)))
        est = np.sum(d[idx] * w[idx], axis=1) / np.sum(w[idx], axis=1)
        tail = (1 - confidence) / 2 * 100
        low, high = (float(x) for x in np.percentile(est, [tail, 100 - tail]))
        p = van_elteren_p(strata)
    sig, text = verdict(arm_a, arm_b, len(a), len(b), diff, low, high, p, alpha)
    if diff is None and len(a) >= MIN_N and len(b) >= MIN_N:
        text = f"too few contributors with both arms ({len(strata)}, need {MIN_STRATA})"
    return Comparison(group, condition, arm_a, arm_b, len(a), len(b), med_a, med_b, diff,
                      low, high, p, sig, text), len(strata)


def compare_stratified(by_stratum: Mapping[str, Sequence[Observation]], seed: int = 0,
                       resamples: int = 2000, confidence: float = 0.95,
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
            out.append(_cell(group, condition, arm_a, arm_b, strata, seed, resamples,
                             confidence, alpha))
    return out
