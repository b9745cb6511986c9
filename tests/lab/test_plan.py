"""Campaign plans: complete, seeded, interleaved, resumable."""

from __future__ import annotations

from collections import Counter

import pytest

from protolens.arms import Arm
from protolens.lab.plan import missing, plan

ARGS = {"pages": ["p1", "p2"], "arms": [Arm("h1"), Arm("h2"), Arm("h3")],
        "conditions": ["wifi", "wifi-lossy"]}


def test_every_cell_once_per_repetition() -> None:
    loads = plan("c", reps=3, seed=1, **ARGS)
    assert len(loads) == 2 * 3 * 2 * 3
    cells = Counter((ld.page, ld.arm, ld.condition) for ld in loads)
    assert set(cells.values()) == {3}
    assert [ld.order for ld in loads] == list(range(len(loads)))
    assert [ld.repetition for ld in loads] == sorted(ld.repetition for ld in loads)


def test_same_seed_same_order_other_seed_other_order() -> None:
    a = plan("c", reps=2, seed=7, **ARGS)
    assert a == plan("c", reps=2, seed=7, **ARGS)
    assert [ld.key for ld in a] != [ld.key for ld in plan("c", reps=2, seed=8, **ARGS)]


def test_arms_are_interleaved_not_blocked() -> None:
    loads = plan("c", reps=5, seed=3, **ARGS)
    arms = [ld.arm for ld in loads]
    runs = sum(1 for x, y in zip(arms, arms[1:], strict=False) if x != y)
    # blocked by arm would give 2 changes per repetition at most; shuffled gives many more
    assert runs > 5 * 4


def test_resume_runs_only_what_is_missing() -> None:
    loads = plan("c", reps=2, seed=1, **ARGS)
    done = [ld.key for ld in loads[:10]]
    rest = missing(loads, done)
    assert rest == loads[10:]
    assert missing(loads, [ld.key for ld in loads]) == []


def test_resume_keys_carry_the_arm_as_stored() -> None:
    loads = plan("c", pages=["p"], arms=[Arm("h2-parallel", 2)], conditions=["wifi"], reps=1,
                 seed=0)
    assert missing(loads, [("p", "h2-parallel:2", "wifi", 1)]) == []


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"reps": 0}, "reps must be at least 1"),
    ({"arms": []}, "arms: give at least one"),
    ({"pages": ["p", "p"]}, "pages: duplicates"),
])
def test_bad_plans_are_refused(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {**ARGS, "reps": 1, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        plan("c", **args)  # type: ignore[arg-type]
