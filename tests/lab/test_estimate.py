"""Ratios of medians with bootstrap intervals and verdicts from the interval (lab/estimate.py):
point estimates computed by hand, coverage of a known ratio, the verdict rules, strata."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from protolens.lab.estimate import ABOVE, BELOW, Cells, Check, Expect, Ratio, ratio, verdict


def _navs(spec: dict[tuple[str, str, str], list[float]]) -> list[dict[str, Any]]:
    return [{"page": p, "condition": c, "arm": a, "plt_ms": v, "warm": 0, "failed": 0}
            for (p, c, a), values in spec.items() for v in values]


def test_cells_keep_successful_cold_complete_loads_with_a_value() -> None:
    navs = _navs({("p", "c", "h1"): [3.0, 1.0]})
    navs += [{"page": "p", "condition": "c", "arm": "h1", "plt_ms": 9.0, "warm": 1, "failed": 0},
             {"page": "p", "condition": "c", "arm": "h1", "plt_ms": 9.0, "warm": 0, "failed": 1},
             {"page": "p", "condition": "c", "arm": "h1", "plt_ms": None, "warm": 0,
              "failed": 0},
             # a load that waited on a dialog: its record is incomplete, and a paper's verdict
             # takes it no more than compare does (record/comparable.py; until 2026-11-30 it did)
             {"page": "p", "condition": "c", "arm": "h1", "plt_ms": 9.0, "warm": 0, "failed": 0,
              "incomplete": 1}]
    assert Cells.from_navigations(navs).get("p", "c", "h1") == (1.0, 3.0)


def test_point_is_the_geometric_mean_of_per_page_median_ratios() -> None:
    cells = Cells.from_navigations(_navs({
        ("p1", "c", "a"): [200, 210, 190], ("p1", "c", "b"): [100, 90, 110],
        ("p2", "c", "a"): [80, 70, 90], ("p2", "c", "b"): [100, 100, 100],
        ("p3", "c", "a"): [50]}))  # p3 lacks b: left out
    r = ratio(cells, "a / b", [(None, "c", "a")], [(None, "c", "b")])
    assert r.point == pytest.approx(math.sqrt(2.0 * 0.8))
    assert r.pages == 2 and (r.n_min, r.n_max) == (3, 3) and r.over == "pages"
    assert r.low is not None and r.high is not None and r.low <= r.point <= r.high


def test_the_interval_covers_a_known_ratio_at_about_the_nominal_rate() -> None:
    covered = 0
    for t in range(40):
        rng = np.random.default_rng(t)
        spec = {}
        for page in ("p1", "p2", "p3"):
            base = rng.uniform(500, 3000)
            spec[(page, "c", "a")] = list(base * 1.3 * rng.lognormal(0, 0.2, 15))
            spec[(page, "c", "b")] = list(base * rng.lognormal(0, 0.2, 15))
        r = ratio(Cells.from_navigations(_navs(spec)), "a / b", [(None, "c", "a")],
                  [(None, "c", "b")], seed=t, resamples=2000)
        assert r.low is not None and r.high is not None
        covered += r.low <= 1.3 <= r.high
    assert covered >= 33  # nominal 38 of 40; percentile intervals run a little narrow


def test_a_ratio_of_ratios_and_open_fields() -> None:
    cells = Cells.from_navigations(_navs({
        ("p", "lossy", "h2"): [400, 400], ("p", "clean", "h2"): [100, 100],
        ("p", "lossy", "h1"): [150, 150], ("p", "clean", "h1"): [100, 100]}))
    r = ratio(cells, "slowdowns", [(None, "lossy", "h2"), (None, "clean", "h1")],
              [(None, "clean", "h2"), (None, "lossy", "h1")])
    assert r.point == pytest.approx(4.0 / 1.5)
    # arm left open: the geometric mean runs over arms too
    r2 = ratio(cells, "lossy / clean", [(None, "lossy", None)], [(None, "clean", None)])
    assert r2.point == pytest.approx(math.sqrt(4.0 * 1.5)) and r2.over == "pages x arms"
    assert r2.pages == 2


@pytest.mark.parametrize("low,high,expect,want", [
    (1.1, 1.4, ABOVE, "agrees"), (0.6, 0.9, ABOVE, "disagrees"),
    (0.9, 1.2, ABOVE, "inconclusive (interval includes 1)"),
    (0.6, 0.9, BELOW, "agrees"), (1.05, 1.2, BELOW, "disagrees"),
    (0.95, 1.05, Expect("near", (0.9, 1.1)), "agrees"),
    (1.2, 1.4, Expect("near", (0.9, 1.1)), "disagrees"),
    (1.0, 1.3, Expect("near", (0.9, 1.1)),
     "inconclusive (interval overlaps the edge of x0.90..x1.10)"),
])
def test_verdict_comes_from_the_interval(low: float, high: float, expect: Expect,
                                         want: str) -> None:
    point = 1.0 if expect.side != "above" else 1.5  # the point never decides
    assert verdict(Ratio("r", point, low, high, 2, 5, 5), expect) == want


def test_no_data_and_too_few_loads() -> None:
    empty = ratio(Cells({}), "x", [(None, "c", "a")], [(None, "c", "b")])
    assert empty.point is None and verdict(empty, ABOVE) == "no data"
    assert empty.text() == "x: n/a (no data)"
    one = ratio(Cells({("p", "c", "a"): (3.0,), ("p", "c", "b"): (2.0,)}), "x",
                [(None, "c", "a")], [(None, "c", "b")])
    assert one.point == pytest.approx(1.5) and one.low is None
    assert verdict(one, ABOVE) == "too few loads to decide (needs n ≥ 4 per cell)"
    three = ratio(Cells({("p", "c", "a"): (30.0, 31.0, 32.0), ("p", "c", "b"): (2.0, 2.1, 2.2)}),
                  "x", [(None, "c", "a")], [(None, "c", "b")])
    assert three.low is not None and three.low > 1 and three.needs_n == 4
    assert verdict(three, ABOVE) == "too few loads to decide (needs n ≥ 4 per cell)"


def test_check_lines_and_json_carry_ratio_interval_n_and_verdict() -> None:
    c = Check("h2 degrades more", Ratio("h2 / h1", 1.54, 1.32, 1.8, 2, 3, 4), ABOVE)
    assert c.lines() == ["h2 degrades more", "  h2 / h1: x1.54 [1.32, 1.80] (n=3-4 loads per "
                         "cell, 2 pages); paper: above x1 -> agrees"]
    j = c.to_json()
    assert (j["ratio"], j["ci_low"], j["ci_high"], j["verdict"]) == (1.54, 1.32, 1.8, "agrees")


def test_seeded_and_reproducible() -> None:
    cells = Cells({("p", "c", "a"): (1.0, 2.0, 3.0, 4.0), ("p", "c", "b"): (2.0, 2.5, 3.0)})
    one = ratio(cells, "x", [(None, "c", "a")], [(None, "c", "b")], seed=5)
    assert one == ratio(cells, "x", [(None, "c", "a")], [(None, "c", "b")], seed=5)
