"""A campaign plan: every load of pages x arms x conditions x repetitions, in a seeded order.

Pure. Order: repetition by repetition (so an interrupted campaign has whole repetitions done), and
within a repetition the (page, condition, arm) cells are shuffled from the seed, so arms and
conditions alternate and slow drift of a noisy machine does not bias one arm.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from protolens.arms import Arm


@dataclass(frozen=True)
class PlannedLoad:
    """One browser load the campaign must store."""

    campaign: str
    page: str
    arm: Arm
    condition: str
    repetition: int
    """1-based."""
    order: int
    """Position in the campaign (0-based); stable for a given seed."""
    warm: bool = False
    """Also load the page a second time in the same profile, recorded as warm (``--warm``)."""

    @property
    def key(self) -> tuple[str, str, str, int]:
        """Identifies the cell across runs (resume), with the arm as stored."""
        return (self.page, str(self.arm), self.condition, self.repetition)


def plan(campaign: str, *, pages: Sequence[str], arms: Sequence[Arm],
         conditions: Sequence[str], reps: int, seed: int, warm: bool = False
         ) -> list[PlannedLoad]:
    """Every load, repetitions in order, cells shuffled within each repetition."""
    if reps < 1:
        raise ValueError("reps must be at least 1")
    for name, values in (("pages", pages), ("arms", [str(a) for a in arms]),
                         ("conditions", conditions)):
        if not values:
            raise ValueError(f"{name}: give at least one")
        if len(set(values)) != len(values):
            raise ValueError(f"{name}: duplicates in {', '.join(values)}")
    rng = random.Random(seed)
    loads: list[PlannedLoad] = []
    for rep in range(1, reps + 1):
        cells = [(p, c, a) for p in pages for c in conditions for a in arms]
        rng.shuffle(cells)
        for page, condition, arm in cells:
            loads.append(PlannedLoad(campaign, page, arm, condition, rep, len(loads), warm))
    return loads


def missing(planned: Iterable[PlannedLoad],
            done: Iterable[tuple[str, str, str, int]]) -> list[PlannedLoad]:
    """What ``--resume`` still has to run: planned cells without a stored successful load."""
    have = set(done)
    return [p for p in planned if p.key not in have]
