"""The one verdict rule (pure): every command that states a verdict (``compare``, ``report``,
``policy suggest``, ``lab reproduce``, ``collector publish``) passes its effect and interval to
``decide``, and nothing else turns numbers into words.

The verdict comes from the effect's interval at the stated level, never from the point estimate
nor from a p-value (the p-value stays a column):

- the interval lies wholly above the null region: ``above``; wholly below: ``below``;
- it lies wholly inside a null band (``lab reproduce``'s "near" claims): ``within``;
- it overlaps the null: ``overlaps`` ("no difference detected at n=12");
- the design cannot reach a decision at this level (the rank test's smallest p at these n is
  above the level, or too few loads for the interval): ``undecided``, worded
  "too few loads to decide (needs n ≥ K)", never "no difference": a design that cannot reject
  says nothing about the effect;
- the interval has zero width over more than one observation: ``error``. Real page loads never
  give every resample the same value; copies of one load do (the same navigation uploaded twice,
  or a cell of one contributor's duplicates), so it is refused, not reported;
- no data: ``no data``.
"""

from __future__ import annotations

from dataclasses import dataclass

ABOVE, BELOW, WITHIN, OVERLAPS = "above", "below", "within", "overlaps"
UNDECIDED, ERROR, NO_DATA = "undecided", "error", "no data"
LEVEL = 0.95
"""The stated level of every interval ProtoLens reports (alpha = 0.05)."""


@dataclass(frozen=True)
class Effect:
    """An effect's estimate and its interval at ``level``, against a null region."""

    estimate: float | None
    low: float | None
    high: float | None
    """None (both): no interval at this level exists for this design."""
    n: int
    """Observations behind the interval (all arms or cells together)."""
    needs_n: int | None = None
    """Set when the design cannot decide: the fewest loads (per arm or per cell) that could."""
    null: tuple[float, float] = (0.0, 0.0)
    """The null region: a point (0 for differences, 1 for ratios) or a band."""
    level: float = LEVEL


@dataclass(frozen=True)
class Verdict:
    outcome: str
    """``above``, ``below``, ``within``, ``overlaps``, ``undecided``, ``error``, ``no data``."""
    reason: str
    """For ``undecided``, ``error`` and ``no data``: the sentence to print."""

    @property
    def decided(self) -> bool:
        """A difference (or a band) was established at the level."""
        return self.outcome in (ABOVE, BELOW, WITHIN)


def undecided_text(needs_n: int, unit: str = "per arm") -> str:
    return f"too few loads to decide (needs n ≥ {needs_n} {unit})"


def decide(e: Effect, unit: str = "per arm") -> Verdict:
    """The verdict of ``e`` (``unit`` words what n counts in the "needs n ≥ K" sentence)."""
    if e.estimate is None or e.n == 0:
        return Verdict(NO_DATA, "no data")
    if e.low is not None and e.high is not None and e.low == e.high and e.n > 2:
        return Verdict(ERROR, f"zero-width interval [{e.low:g}, {e.high:g}] over {e.n} loads: "
                              "identical values (copies of one load?), not a result")
    if e.low is None or e.high is None or e.needs_n is not None:
        return Verdict(UNDECIDED, undecided_text(e.needs_n or 2, unit))
    lo, hi = e.null
    if e.low > hi:
        return Verdict(ABOVE, "")
    if e.high < lo:
        return Verdict(BELOW, "")
    if lo < hi and lo <= e.low and e.high <= hi:
        return Verdict(WITHIN, "")
    return Verdict(OVERLAPS, "")
