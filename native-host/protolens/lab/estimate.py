"""Ratios of medians with bootstrap intervals, and verdicts taken from the interval (pure).

A reproduction's claim is a ratio of median page-load metrics, e.g. h2 / h1 at 2% loss, or a
ratio of such ratios (h2's slowdown under loss over h1's). Per page, the ratio is the product of
the numerator cells' medians over the denominator cells'; over pages it is their geometric mean
(the right average for ratios). Its 95% interval is a stratified percentile bootstrap: every cell
(page x condition x arm) is resampled on its own, so each draw keeps the design's n per cell; a
cell's resampled median is drawn from its exact bootstrap distribution
(``analysis/bootstrap.py``).

The verdict is the one rule's (``analysis/verdict.py``), from the interval, never from the point
estimate: "agrees" when the whole interval is on the paper's side, "disagrees" when it is all on
the other side, otherwise "inconclusive (interval includes 1)". A design that cannot decide says
so: with fewer loads per cell than the rank test needs at this level (4 per arm at 95%, as
``compare``) or, for a ratio of one cell, than the sign test needs (6), "too few loads to decide
(needs n ≥ K per cell)", whatever the bootstrap interval shows: a percentile bootstrap of a
median from 3 loads covers far less than 95% (at n = 3 every resample's median is one of the three
values), and the same loads must not get "agrees" here and "cannot decide" from ``compare``.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protolens.analysis.bootstrap import bootstrap_medians
from protolens.analysis.shift import needed_n
from protolens.analysis.verdict import ABOVE as OVER
from protolens.analysis.verdict import BELOW as UNDER
from protolens.analysis.verdict import NO_DATA, OVERLAPS, WITHIN, Effect, decide
from protolens.record.comparable import comparable

RESAMPLES = 4000
CONFIDENCE = 0.95

Term = tuple[str | None, str | None, str | None]
"""(page, condition, arm); a None field is summed over: the geometric mean then runs over every
combination of the None fields' values (the strata)."""


@dataclass(frozen=True)
class Cells:
    """Per-load values of one metric per (page, condition, arm): the loads a cold comparison
    takes (``record/comparable.py``: successful, cold, complete)."""

    values: Mapping[tuple[str, str, str], tuple[float, ...]]

    @classmethod
    def from_navigations(cls, navs: Iterable[Mapping[str, Any]], metric: str = "plt"
                         ) -> Cells:
        out: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for nav in navs:
            value = nav.get(f"{metric}_ms")
            if value is None or not comparable(nav):
                continue
            out[(nav["page"], nav["condition"], nav["arm"])].append(float(value))
        return cls({k: tuple(sorted(v)) for k, v in out.items()})

    @classmethod
    def merged(cls, parts: Mapping[str, Cells]) -> Cells:
        """Several campaigns' cells in one; each condition becomes ``condition@part``."""
        return cls({(page, f"{cond}@{part}", arm): values for part, cells in parts.items()
                    for (page, cond, arm), values in cells.values.items()})

    def pages(self) -> list[str]:
        return sorted({page for page, _, _ in self.values})

    def get(self, page: str, condition: str, arm: str) -> tuple[float, ...]:
        return self.values.get((page, condition, arm), ())


@dataclass(frozen=True)
class Ratio:
    """A geometric mean over pages of per-page ratios of medians, with its interval."""

    label: str
    point: float | None
    low: float | None
    high: float | None
    pages: int
    """Strata (pages, or page x condition x arm combinations) with every cell the ratio needs."""
    n_min: int
    """Fewest loads in any cell used."""
    n_max: int
    over: str = "pages"
    """What the geometric mean runs over (``pages``, ``pages x arms``...; ``cells`` when every
    term names its cell)."""
    unit: str = "loads"
    """What one value of a cell is (``loads``, ``repetitions``)."""
    needs_n: int | None = None
    """Set when the cells are too small to decide at this level: the fewest values per cell
    that could."""

    def n_text(self) -> str:
        loads = f"{self.n_min}" if self.n_min == self.n_max else f"{self.n_min}-{self.n_max}"
        if self.over == "cells":
            return f"n={loads} {self.unit}"
        return f"n={loads} {self.unit} per cell, {self.pages} {self.over}"

    def text(self) -> str:
        if self.point is None:
            return f"{self.label}: n/a (no data)"
        interval = ("" if self.low is None or self.high is None
                    else f" [{self.low:.2f}, {self.high:.2f}]")
        return f"{self.label}: x{self.point:.2f}{interval} ({self.n_text()})"

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "ratio": self.point, "ci_low": self.low,
                "ci_high": self.high, "pages": self.pages, "n_min": self.n_min,
                "n_max": self.n_max, "over": self.over}


def _strata(cells: Cells, terms: Sequence[Term], pages: Sequence[str] | None
            ) -> list[tuple[str | None, str | None, str | None]]:
    """Every combination of the values of the fields some term leaves open."""
    keys = list(cells.values)
    axes: list[list[str | None]] = []
    for field in range(3):
        if any(t[field] is None for t in terms):
            seen = sorted({k[field] for k in keys})
            if field == 0 and pages is not None:
                seen = [p for p in seen if p in pages]
            axes.append(list(seen))
        else:
            axes.append([None])
    return [(p, c, a) for p in axes[0] for c in axes[1] for a in axes[2]]


def _resolve(term: Term, stratum: tuple[str | None, str | None, str | None]
             ) -> tuple[str, str, str]:
    page, cond, arm = (t if t is not None else s for t, s in zip(term, stratum, strict=True))
    return (page or "", cond or "", arm or "")


def ratio(cells: Cells, label: str, num: Sequence[Term], den: Sequence[Term], *,
          pages: Sequence[str] | None = None, seed: int = 0, resamples: int = RESAMPLES,
          confidence: float = CONFIDENCE, unit: str = "loads") -> Ratio:
    """prod(median of num cells) / prod(median of den cells), geometric mean over the strata."""
    use: list[list[tuple[tuple[float, ...], int]]] = []
    for stratum in _strata(cells, [*num, *den], pages):
        terms = [(cells.get(*_resolve(t, stratum)), +1) for t in num]
        terms += [(cells.get(*_resolve(t, stratum)), -1) for t in den]
        if all(values and all(v > 0 for v in values) for values, _ in terms):
            use.append(terms)
    terms_all = [*num, *den]
    over = " x ".join(name for i, name in enumerate(("pages", "conditions", "arms"))
                      if any(t[i] is None for t in terms_all)) or "cells"
    if not use:
        return Ratio(label, None, None, None, 0, 0, 0, over, unit)
    sizes = [len(values) for terms in use for values, _ in terms]
    need = design_needs(len(den) > 0, 1.0 - confidence)
    needs = need if min(sizes) < need else None
    point_logs = [sum(sign * math.log(float(np.median(values))) for values, sign in terms)
                  for terms in use]
    point = math.exp(sum(point_logs) / len(point_logs))
    if min(sizes) < 2:
        return Ratio(label, point, None, None, len(use), min(sizes), max(sizes), over, unit,
                     needs)
    rng = np.random.default_rng([seed, zlib.crc32(label.encode())])
    logs = np.zeros(resamples)
    for terms in use:
        for values, sign in terms:
            draws = bootstrap_medians(np.asarray(values, dtype=float), resamples, rng)
            logs += sign * np.log(draws)
    logs /= len(use)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.exp(np.percentile(logs, [tail, 100.0 - tail]))
    return Ratio(label, point, float(low), float(high), len(use), min(sizes), max(sizes), over,
                 unit, needs)


def design_needs(two_samples: bool, alpha: float) -> int:
    """The fewest values per cell at which a distribution-free test of the claim can reject at
    ``alpha``: the rank test's (two groups of cells) or the sign test's (one cell: the smallest
    n with 2 / 2^n <= alpha)."""
    if two_samples:
        return needed_n(1, 1, alpha)
    n = 1
    while 2.0 / 2 ** n > alpha:
        n += 1
    return n


@dataclass(frozen=True)
class Expect:
    """What the paper found about a ratio: above 1, below 1, or within a band (no change)."""

    side: str
    """``above``, ``below`` or ``near``."""
    band: tuple[float, float] = (1.0, 1.0)
    """For ``near``: the band that counts as "changed little"."""

    def describe(self) -> str:
        if self.side == "near":
            return f"within x{self.band[0]:.2f}..x{self.band[1]:.2f}"
        return f"{self.side} x1"


ABOVE, BELOW = Expect("above"), Expect("below")


def verdict(r: Ratio, expect: Expect) -> str:
    """The one rule's verdict (``analysis/verdict.py``) in a claim's words."""
    band = expect.band if expect.side == "near" else (1.0, 1.0)
    v = decide(Effect(r.point, r.low, r.high, r.n_min + r.n_max if r.point else 0,
                      r.needs_n or (None if r.low is not None else 2), band),
               unit="per cell" if r.unit == "loads" else r.unit)
    if v.outcome == NO_DATA:
        return "no data"
    if v.outcome == WITHIN:
        return "agrees"
    if v.outcome in (OVER, UNDER):
        if expect.side == "near":
            return "disagrees"
        return "agrees" if (v.outcome == OVER) == (expect.side == "above") else "disagrees"
    if v.outcome == OVERLAPS:
        if expect.side == "near":
            return f"inconclusive (interval overlaps the edge of x{band[0]:.2f}..x{band[1]:.2f})"
        return "inconclusive (interval includes 1)"
    return v.reason


@dataclass(frozen=True)
class Check:
    """One claim of a paper against one measured ratio."""

    claim: str
    """The paper's claim, in words."""
    ratio: Ratio
    expect: Expect

    @property
    def verdict(self) -> str:
        return verdict(self.ratio, self.expect)

    def lines(self) -> list[str]:
        return [f"{self.claim}", f"  {self.ratio.text()}; paper: {self.expect.describe()} "
                f"-> {self.verdict}"]

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, **self.ratio.to_json(), "expect": self.expect.describe(),
                "verdict": self.verdict}
