"""Van Elteren's stratified rank statistic over many strata at once (pure; numpy).

The strata of one comparison are packed into flat arrays (``Packed``: every stratum's a values,
then its b values, each sorted within its stratum, strata in order, with their sizes), so the
statistic, its tie correction and the within-stratum differences its interval inverts cost a few
array operations however many contributors there are, not a Python loop over them. The
arithmetic is the textbook one term per stratum (van Elteren 1960; Lehmann, *Nonparametrics*,
1975, ch. 3 sec. 3), in the same order and accumulated sequentially (``np.cumsum``) as a loop
over the strata would, so the figures are the loop's to the last bit; ``analysis/stratified.py``
turns them into comparisons and verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Stratum:
    a: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class Packed:
    """Strata as flat arrays: ``a`` holds stratum 0's a values, then stratum 1's..., ``na``
    their counts (every count at least 1); likewise ``b`` and ``nb``. Values sorted within each
    stratum."""

    a: np.ndarray
    na: np.ndarray
    b: np.ndarray
    nb: np.ndarray

    @classmethod
    def of(cls, strata: Sequence[Stratum]) -> Packed:
        def flat(xs: list[np.ndarray]) -> np.ndarray:
            return np.concatenate(xs).astype(float) if xs else np.zeros(0)

        return cls(flat([np.sort(s.a) for s in strata]),
                   np.array([len(s.a) for s in strata], dtype=np.int64),
                   flat([np.sort(s.b) for s in strata]),
                   np.array([len(s.b) for s in strata], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.na)


def _total(terms: np.ndarray) -> float:
    """The sum of per-stratum terms added one after the other, as ``x += term`` would."""
    return float(np.cumsum(terms)[-1]) if len(terms) else 0.0


def rank_sums(p: Packed, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per stratum: the sum of the (average, for ties) ranks of its a values less ``shift``
    among its a and b values, and the tie term sum(t^3 - t) over its groups of equal values."""
    s = len(p)
    sid = np.concatenate([np.repeat(np.arange(s), p.na), np.repeat(np.arange(s), p.nb)])
    v = np.concatenate([p.a - shift, p.b])
    is_a = np.concatenate([np.ones(len(p.a), bool), np.zeros(len(p.b), bool)])
    order = np.lexsort((v, sid))
    vs, ss, xa = v[order], sid[order], is_a[order]
    new = np.ones(len(vs), bool)
    new[1:] = (vs[1:] != vs[:-1]) | (ss[1:] != ss[:-1])
    run_start = np.flatnonzero(new)
    run_len = np.diff(np.append(run_start, len(vs)))
    n = p.na + p.nb
    first = np.concatenate([[0], np.cumsum(n)[:-1]])  # where each stratum starts, sorted
    pos = run_start - first[ss[run_start]]
    ranks = np.repeat(pos + (run_len + 1) / 2, run_len)  # ranks pos+1 .. pos+len, averaged
    sums = np.bincount(ss[xa], weights=ranks[xa], minlength=s)
    ties = np.bincount(ss[run_start], weights=(run_len ** 3 - run_len).astype(float),
                       minlength=s)
    return sums, ties


def _z(t: float, var: float, step: float) -> float:
    if var <= 0:
        return 0.0
    return float(np.sign(t)) * max(abs(t) - step / 2, 0.0) / float(np.sqrt(var))


def z_packed(p: Packed, shift: float = 0.0) -> float:
    """Signed z of van Elteren's statistic (see ``stratified.van_elteren_z``)."""
    if not len(p):
        return 0.0
    sums, tie = rank_sums(p, shift)
    na, nb = p.na, p.nb
    n = na + nb
    w = 1.0 / (n + 1)
    ties = tie / (n * (n - 1))
    t = _total(w * (sums - na * (n + 1) / 2))
    var = _total(w * w * na * nb * ((n + 1) - ties) / 12)
    return _z(t, var, float(np.max(w)))


def z_separated(na: np.ndarray, nb: np.ndarray) -> float:
    """``z_packed`` of strata of these sizes whose a all lie above their b (no ties): the rank
    sum of a less its mean is then exactly na * nb / 2."""
    if not len(na):
        return 0.0
    n = na + nb
    w = 1.0 / (n + 1)
    ties = np.zeros(len(n))
    t = _total(w * (na * nb / 2))
    var = _total(w * w * na * nb * ((n + 1) - ties) / 12)
    return _z(t, var, float(np.max(w)))


@dataclass(frozen=True)
class Shifts:
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
    def of(cls, p: Packed) -> Shifts:
        na, nb = p.na, p.nb
        n = na + nb
        pairs = na * nb
        ps = np.repeat(np.arange(len(p)), pairs)  # the stratum of each pair
        k = np.arange(int(pairs.sum())) - np.repeat(np.cumsum(pairs) - pairs, pairs)
        a_first, b_first = np.cumsum(na) - na, np.cumsum(nb) - nb
        d = p.a[a_first[ps] + k // nb[ps]] - p.b[b_first[ps] + k % nb[ps]]
        w = (1.0 / (n + 1))[ps]
        order = np.argsort(d, kind="mergesort")
        _, tie = rank_sums(p)  # the tie correction of the data as they are (at shift 0)
        ties = tie / (n * (n - 1))
        var = _total(na * nb * ((n + 1) - ties) / 12 / (n + 1) ** 2)
        return cls(d[order], np.concatenate([[0.0], np.cumsum(w[order])]),
                   _total(na * nb / (n + 1) / 2), float(np.sqrt(var)),
                   float(np.max(1.0 / (n + 1))))

    def weighted_median(self) -> float:
        """Where the statistic crosses 0: the differences' median weighted by their strata's
        weights (for one stratum, the Hodges-Lehmann estimate)."""
        half = float(self.cum_w[-1]) / 2
        i = int(np.searchsorted(self.cum_w[1:], half * (1 - 1e-12), side="left"))
        if abs(float(self.cum_w[i + 1]) - half) <= 1e-12 * half and i + 1 < len(self.d):
            return float(self.d[i] + self.d[i + 1]) / 2
        return float(self.d[i])

    def z(self, shift: float) -> float:
        """``z_packed(p, shift)`` (with the ties of the unshifted data)."""
        if self.sd <= 0:
            return 0.0
        lo = int(np.searchsorted(self.d, shift, side="left"))
        hi = int(np.searchsorted(self.d, shift, side="right"))
        t = (self.cum_w[-1] - self.cum_w[hi]) + (self.cum_w[hi] - self.cum_w[lo]) / 2 \
            - self.centre
        return float(np.sign(t)) * max(abs(t) - self.step / 2, 0.0) / self.sd
