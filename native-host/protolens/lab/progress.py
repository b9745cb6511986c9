"""A campaign's progress as plain lines, for output that is not a terminal (a file, a pipe, a CI
log), where a redrawn progress bar shows nothing until the end (pure: time comes in as ``now``).

One line when a cell (page x arm x condition) has all its loads, and one at least every
``EVERY_S`` seconds while a long cell runs:
``camp: 12/48 loads, 1 failed; cell large/h2/lossy done (6 loads); 3m05s``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

EVERY_S = 30.0
"""Longest silence between two lines."""

Cell = tuple[str, str, str]
"""(page, arm, condition)."""


def _clock(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


@dataclass
class PlainProgress:
    """Feed ``tick`` after each finished attempt; print what it returns."""

    campaign: str
    cells: Counter[Cell]
    """Loads each cell still has to run."""
    started: float
    last: float = field(init=False)
    total: int = field(init=False)

    def __post_init__(self) -> None:
        self.last = self.started
        self.total = sum(self.cells.values())

    @classmethod
    def of(cls, campaign: str, todo: Iterable[Cell], now: float) -> PlainProgress:
        return cls(campaign, Counter(todo), now)

    def tick(self, done: int, failed: int, cell: Cell, advanced: bool, now: float
             ) -> str | None:
        """The line to print after an attempt on ``cell`` (``advanced``: a load was counted
        done), or None."""
        finished = None
        if advanced and self.cells[cell] > 0:
            self.cells[cell] -= 1
            if self.cells[cell] == 0:
                finished = cell
        if finished is None and now - self.last < EVERY_S:
            return None
        self.last = now
        head = f"{self.campaign}: {done}/{self.total} loads, {failed} failed"
        what = (f"; cell {'/'.join(finished)} done" if finished is not None
                else f"; running {'/'.join(cell)}")
        return f"{head}{what}; {_clock(now - self.started)}"
