"""Plain progress lines for output that is not a terminal (``lab/progress.py``): one per
finished cell, one at least every 30 s, times given by the caller."""

from __future__ import annotations

from protolens.lab.progress import EVERY_S, PlainProgress

CELLS = [("p", "h1", "wifi")] * 2 + [("p", "h2", "wifi")] * 2


def test_a_line_per_finished_cell_and_none_between() -> None:
    pp = PlainProgress.of("camp", CELLS, now=100.0)
    assert pp.tick(1, 0, ("p", "h1", "wifi"), True, now=101.0) is None
    assert pp.tick(2, 0, ("p", "h1", "wifi"), True, now=102.0) == \
        "camp: 2/4 loads, 0 failed; cell p/h1/wifi done; 2s"
    assert pp.tick(2, 1, ("p", "h2", "wifi"), False, now=103.0) is None  # a failed attempt
    assert pp.tick(3, 1, ("p", "h2", "wifi"), True, now=104.0) is None
    assert pp.tick(4, 1, ("p", "h2", "wifi"), True, now=225.0) == \
        "camp: 4/4 loads, 1 failed; cell p/h2/wifi done; 2m05s"


def test_a_line_at_least_every_thirty_seconds_within_a_long_cell() -> None:
    pp = PlainProgress.of("camp", [("big", "h3", "cell-poor")] * 5, now=0.0)
    lines = [pp.tick(i, 0, ("big", "h3", "cell-poor"), True, now=20.0 * i) for i in range(1, 5)]
    assert lines == [None, "camp: 2/5 loads, 0 failed; running big/h3/cell-poor; 40s", None,
                     "camp: 4/5 loads, 0 failed; running big/h3/cell-poor; 1m20s"]
    assert EVERY_S == 30.0
