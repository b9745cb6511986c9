"""End to end: the visual metrics of a page whose visual progress is known by construction.

scripts/devkit/visual_site.py serves four equal blocks on white, each held back by the server
for 400, 800, 1200 and 1600 ms. Loaded by real Chromium with the built extension in lab mode
(visual metrics on) under h1, h2 and h3, each record's SpeedIndex must be within 5% (or one frame
interval) of the analytic one, the mean of the blocks' arrivals in caddy's access log (equal
blocks: progress k/4 after k of them). Visually complete cannot come before the last block
arrived, nor the first visual change before the first. The page's own Element Timing (when the
browser says it painted each block) is printed beside them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from scripts.devkit.harness import Load, load_page
from scripts.devkit.visual_site import (
    BlockHit,
    VisualSite,
    analytic_speed_index,
    serve_visual_site,
)

pytestmark = pytest.mark.e2e

ARMS = ("h1", "h2", "h3")
PROTO = {"h1": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3.0"}
FRAME_MS = 1000 / 60
"""One frame interval: Chromium composites at 60 Hz (screencast frames come 16.7 ms apart)."""
TOLERANCE = 0.05
VISUAL = ("first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms",
          "visual_complete_99_ms", "last_visual_change_ms")


def _row(db: Path, load_id: str) -> dict[str, Any]:
    with closing(sqlite3.connect(db)) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM navigations WHERE load_id = ?", (load_id,)).fetchone()
    assert row is not None, f"no record for load {load_id}"
    return dict(row)


@pytest.fixture(scope="module")
def loads(tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[tuple[VisualSite, Path, dict[str, tuple[Load, list[BlockHit]]]]]:
    work = tmp_path_factory.mktemp("visual")
    db = work / "store.db"
    with serve_visual_site(work / "site") as site:
        done: dict[str, tuple[Load, list[BlockHit]]] = {}
        for arm in (*ARMS, "off"):
            offset = site.access_log.stat().st_size
            load = load_page(arm="h2" if arm == "off" else arm, url=site.url, site=site, db=db,
                             scratch=work / arm, quic_hosts=["a.test"], visual=arm != "off")
            assert load.result.ok, f"{arm}: {load.result.reason}; see {load.result.log}"
            done[arm] = (load, site.block_hits(offset))
        yield site, db, done


@pytest.mark.parametrize("arm", ARMS)
def test_speed_index_matches_the_analytic_one(
        loads: tuple[VisualSite, Path, dict[str, tuple[Load, list[BlockHit]]]], arm: str) -> None:
    site, db, done = loads
    load, hits = done[arm]
    nav = _row(db, load.load_id)
    assert sorted(h.index for h in hits) == [0, 1, 2, 3], hits
    assert {h.proto for h in hits} == {PROTO[arm]}
    arrivals = sorted(h.answered_s * 1000 - nav["started_at_ms"] for h in hits)
    analytic = analytic_speed_index(arrivals)
    measured = nav["speed_index_ms"]
    painted = site.render_times(load.log_offset)
    by_paint = analytic_speed_index(sorted(painted.values())) if painted else None
    print(f"\n{arm}: SpeedIndex measured {measured:.1f} ms, analytic {analytic:.1f} ms "
          f"({(measured - analytic) / analytic:+.1%}); from the page's Element Timing "
          f"{by_paint if by_paint is None else round(by_paint, 1)} ms; blocks arrived at "
          f"{[round(a, 1) for a in arrivals]} ms; first/last visual change "
          f"{nav['first_visual_change_ms']:.1f}/{nav['last_visual_change_ms']:.1f}, VC85/99 "
          f"{nav['visual_complete_85_ms']:.1f}/{nav['visual_complete_99_ms']:.1f}, "
          f"PLT {nav['load_ms']:.1f} ms")
    # the screencast shows what the browser painted: against the page's own Element Timing
    # within 5% when the page reported it; against the blocks' arrival in caddy's log, no
    # earlier than it and at most 10% later (the renderer paints each block a frame or a few
    # after it arrives: 55-60 ms late in a CI run on two busy cores, the recorder agreeing with
    # Element Timing to 10 ms)
    if by_paint is not None:
        assert abs(measured - by_paint) <= max(TOLERANCE * by_paint, FRAME_MS)
    assert analytic - FRAME_MS <= measured <= analytic + max(2 * TOLERANCE * analytic, FRAME_MS)
    # nothing is shown before it arrives
    assert nav["first_visual_change_ms"] >= arrivals[0]
    assert nav["visual_complete_99_ms"] >= nav["visual_complete_85_ms"] >= arrivals[-1]
    # three blocks of four are 75%: 85% is the last block's frame, and nothing changes after it
    assert nav["visual_complete_85_ms"] == nav["last_visual_change_ms"]
    assert nav["first_visual_change_ms"] < arrivals[1]


def test_no_visual_metrics_unless_asked(
        loads: tuple[VisualSite, Path, dict[str, tuple[Load, list[BlockHit]]]]) -> None:
    _, db, done = loads
    nav = _row(db, done["off"][0].load_id)
    assert nav["load_ms"] is not None
    assert all(nav[name] is None for name in VISUAL)
