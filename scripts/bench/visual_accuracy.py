#!/usr/bin/env python3
"""SpeedIndex accuracy against a page whose visual progress is known by construction.

Loads the four-block page (scripts/devkit/visual_site.py: equal blocks held back 400, 800, 1200
and 1600 ms by the server) ``--loads`` times per protocol in lab Chromium with the built
extension, paint capture on, and prints per load the recorded SpeedIndex beside the analytic one
(the mean of the blocks' arrivals in caddy's access log, ms from navigation start) and beside the
page's own Element Timing (the mean renderTime of the blocks), then the median error per
protocol. tests/e2e/test_visual_e2e.py asserts one load per protocol; this prints the spread.

Last measured (5 loads per protocol, 2-core machine shared with other jobs, Chromium 156): see
docs/RECORD.md "Visual metrics".

    .venv/bin/python scripts/bench/visual_accuracy.py [--loads 5]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.harness import load_page  # noqa: E402
from scripts.devkit.visual_site import analytic_speed_index, serve_visual_site  # noqa: E402

ARMS = ("h1", "h2", "h3")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=5, help="loads per protocol (default 5)")
    args = ap.parse_args()
    errors: dict[str, list[float]] = {arm: [] for arm in ARMS}
    over_paint: dict[str, list[float]] = {arm: [] for arm in ARMS}
    with tempfile.TemporaryDirectory() as tmp, serve_visual_site(Path(tmp) / "site") as site:
        db = Path(tmp) / "bench.db"
        for i in range(args.loads):
            for arm in ARMS[i % 3:] + ARMS[:i % 3]:
                offset = site.access_log.stat().st_size
                load = load_page(arm=arm, url=site.url, site=site, db=db,
                                 scratch=Path(tmp) / f"{arm}-{i}", quic_hosts=["a.test"],
                                 visual=True)
                if not load.result.ok:
                    raise RuntimeError(f"{arm}: {load.result.reason}")
                with closing(sqlite3.connect(db)) as conn:
                    start, si, vc99 = conn.execute(
                        "SELECT started_at_ms, speed_index_ms, visual_complete_99_ms "
                        "FROM navigations WHERE load_id = ?", (load.load_id,)).fetchone()
                arrivals = sorted(h.answered_s * 1000 - start for h in site.block_hits(offset))
                analytic = analytic_speed_index(arrivals)
                painted = site.render_times(offset) or {}
                by_paint = analytic_speed_index(sorted(painted.values())) if painted else None
                errors[arm].append((si - analytic) / analytic)
                if by_paint is not None:
                    over_paint[arm].append(si - by_paint)
                print(f"{arm} load {i + 1}: SpeedIndex {si:7.1f} ms, analytic {analytic:7.1f} "
                      f"({(si - analytic) / analytic:+.1%}), Element Timing "
                      f"{by_paint if by_paint is None else round(by_paint, 1)}; VC99 {vc99:.1f}, "
                      f"last block {arrivals[-1]:.1f}", flush=True)
    for arm in ARMS:
        e, p = errors[arm], over_paint[arm]
        print(f"{arm}: SpeedIndex - analytic: median {statistics.median(e):+.1%} "
              f"({min(e):+.1%} .. {max(e):+.1%}, n={len(e)}); - Element Timing's: median "
              f"{statistics.median(p):+.1f} ms ({min(p):+.1f} .. {max(p):+.1f})")


if __name__ == "__main__":
    main()
