"""The dashboard's Records and Period selects, in real headless Chromium with the built extension
and the real host: a store seeded with loads of different ages and sources; each choice must show
exactly the navigations the store holds for it (counted here with plain SQL, the ground truth)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from protolens.record import parse_record
from protolens.store import SqliteSink, open_ro, open_rw
from scripts.devkit.navrecord_builder import make_record
from tests.e2e.test_dashboard_e2e import Browser, close, open_dashboard

pytestmark = pytest.mark.e2e

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# (age, source, how many): ages chosen to fall in exactly one of 24 h / 7 d / 30 d / older
SEED = [(2 * HOUR_MS, "passive", 3), (3 * DAY_MS, "passive", 2), (20 * DAY_MS, "passive", 2),
        (60 * DAY_MS, "passive", 1), (5 * HOUR_MS, "experiment", 2)]


def seed(db: Path, now_ms: float) -> None:
    conn = open_rw(db, now_ms=now_ms)
    sink = SqliteSink(conn)
    k = 0
    for age, source, n in SEED:
        for _ in range(n):
            k += 1
            rec = make_record(4, seed=k, family="h2" if k % 2 else "h3", source=source)
            rec["page"]["started_at_ms"] = now_ms - age - 1000 * k
            assert sink.ingest(parse_record(rec), {}, now_ms=now_ms)
    conn.close()


def truth(db: Path, source: str | None, since_ms: float | None) -> int:
    conn = open_ro(db)
    n = conn.execute("SELECT count(*) FROM navigations WHERE (? IS NULL OR source = ?)"
                     " AND started_at_ms >= ?", (source, source, since_ms or 0)).fetchone()[0]
    conn.close()
    return int(n)


def choose(b: Browser, select: str, value: str) -> None:
    b.js(f"(() => {{ const s = document.getElementById({json.dumps(select)});"
         f" s.value = {json.dumps(value)}; s.dispatchEvent(new Event('change')); }})()")


def shown(b: Browser) -> tuple[str, str]:
    # the change handler sets "loading" synchronously; wait until this choice has been answered
    state = b.wait_state()
    return state, str(b.js("document.getElementById('status').textContent"))


def test_records_and_period_select_what_the_store_holds(tmp_path: Path) -> None:
    db = tmp_path / "aged.db"
    now = time.time() * 1000
    seed(db, now)
    b = open_dashboard(tmp_path, db)
    try:
        state, status = shown(b)
        periods = b.js("[...document.querySelectorAll('#period option')].map(o => o.value)")
        assert periods == ["all", "day", "week", "month"]
        assert state == "ready" and f"{truth(db, 'passive', None)} navigations" in status, status
        spans = {"day": DAY_MS, "week": 7 * DAY_MS, "month": 30 * DAY_MS, "all": None}
        counts = {}
        for period, span in spans.items():
            choose(b, "period", period)
            state, status = shown(b)
            since = None if span is None else now - span
            counts[period] = truth(db, "passive", since)
            assert state == "ready", status
            assert status.startswith(f"{counts[period]} navigations"), (period, status)
        assert counts == {"day": 3, "week": 5, "month": 7, "all": 8}

        choose(b, "source", "experiment")
        choose(b, "period", "day")
        state, status = shown(b)
        assert status.startswith(f"{truth(db, 'experiment', now - DAY_MS)} navigations"), status
        assert truth(db, "experiment", now - DAY_MS) == 2

        # nothing this recent in the lab: the empty state, which names the way out
        choose(b, "source", "lab")
        state, _ = shown(b)
        assert state == "empty"
        assert "longer period" in b.js("document.getElementById('empty').innerText")
    finally:
        close(b)
