"""Baseline against current (``analysis/baseline.py``, pure): the change per cell with the
interval and verdict of the one rule (``analysis/verdict.py``), in ms and in percent of the
baseline's median, and the regression gate asked of that same rule."""

from __future__ import annotations

import numpy as np

from protolens.analysis.baseline import cells, compare_baseline, regressions
from protolens.analysis.observe import Observation


def obs(values: list[float] | np.ndarray, arm: str = "h2", cond: str = "wifi",
        page: str = "p") -> list[Observation]:
    return [Observation(page, cond, arm, float(v)) for v in values]


RNG = np.random.default_rng(7)
BASE = 1000 + RNG.normal(0, 30, 20)
SAME = 1000 + RNG.normal(0, 30, 20)
SLOWER = 1300 + RNG.normal(0, 30, 20)


def test_a_slowdown_is_found_with_its_percent_and_the_rules_verdict() -> None:
    (row,) = compare_baseline(cells(obs(BASE), obs(SLOWER)))
    assert row["outcome"] == "above" and row["verdict"].startswith("baseline faster by")
    assert 25 < row["ci_low_pct"] <= row["change_pct"] <= row["ci_high_pct"] < 35
    assert abs(row["change_ms"] / row["median_baseline_ms"] * 100 - row["change_pct"]) < 1e-3
    assert [r["group"] for r in regressions([row], 10)] == ["p"]
    assert regressions([row], 40) == []  # 30% is not surely over 40%


def test_two_runs_of_one_distribution_show_no_change_and_no_regression() -> None:
    (row,) = compare_baseline(cells(obs(BASE), obs(SAME)))
    assert row["outcome"] == "overlaps" and row["verdict"].startswith("no difference")
    assert regressions([row], 0) == []


def test_a_speedup_is_not_a_regression_even_at_zero_percent() -> None:
    (row,) = compare_baseline(cells(obs(SLOWER), obs(BASE)))
    assert row["outcome"] == "below" and row["verdict"].startswith("current faster by")
    assert regressions([row], 0) == []


def test_too_few_loads_is_undecided_and_never_fails_the_gate() -> None:
    (row,) = compare_baseline(cells(obs([1000, 1010]), obs([2000, 2100])))
    assert row["outcome"] == "undecided" and "needs n" in row["verdict"]
    assert regressions([row], 0) == []


def test_cells_are_page_arm_condition_and_mismatches_are_kept_apart() -> None:
    c = cells(obs(BASE) + obs(BASE, arm="h3"), obs(SAME) + obs(SAME, cond="cell-poor"))
    assert c.common == [("p", "h2", "wifi")]
    assert c.only_baseline == [("p", "h3", "wifi")]
    assert c.only_current == [("p", "h2", "cell-poor")]
    assert [r["arm"] for r in compare_baseline(c)] == ["h2"]
