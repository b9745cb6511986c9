"""The evidence lines of ifip18-parallel's gap to the paper: the room h2 leaves above h1 at 2%
loss, and how the lab proxy spread each host's requests and bytes over its two upstream
connections, from navigations whose spread is known; the store hands the upstream connections
to the analysis."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from protolens.lab.estimate import Cells
from protolens.lab.findings import parallel_gap_lines, upstream_spread
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from protolens.store.lab import campaign_navigations
from protolens.store.policy import store_upstream
from scripts.devkit.store_builder import NOW_MS, lab_record


def nav(arm: str, upstream: list[tuple[str, int, int]], **kw: Any) -> dict[str, Any]:
    return {"arm": arm, "page": "p", "condition": "wifi-lossy", "plt_ms": 1000.0, "warm": 0,
            "failed": 0, "upstream": [{"host": h, "requests": r, "bytes": b}
                                      for h, r, b in upstream], **kw}


def test_spread_counts_the_busier_connection_per_host() -> None:
    navs = [
        # a.test: 3 + 1 requests, 300 + 100 bytes -> 75% / 75%; b.test: one request -> skipped
        nav("h2-parallel:2", [("a.test", 3, 300), ("a.test", 1, 100), ("b.test", 1, 50)]),
        # even split
        nav("h2-parallel:2", [("a.test", 2, 500), ("a.test", 2, 500)]),
        # everything on one connection (the second never used)
        nav("h2-parallel:2", [("a.test", 4, 900), ("a.test", 0, 0)]),
        nav("proxy-h2", [("a.test", 9, 900)]),  # another arm: not counted
        nav("h2-parallel:2", [("a.test", 2, 200), ("a.test", 2, 200)], failed=1),
    ]
    s = upstream_spread(navs, "h2-parallel:2")
    assert s["hosts"] == 3 and s["two_used"] == 2
    assert s["req_share"] == pytest.approx(0.75) and s["byte_share"] == pytest.approx(0.75)
    assert upstream_spread([nav("h2", [])], "h2-parallel:2") == {"hosts": 0}


def test_the_room_is_what_bringing_h2_to_h1_would_cut() -> None:
    navs = [nav(a, [], plt_ms=v) for a, v in (("h1", 1000.0), ("h2", 2000.0)) for _ in range(6)]
    lines = parallel_gap_lines(Cells.from_navigations(navs), navs)
    assert "would cut h2's PLT by 50%" in lines[0]
    assert lines[1] == "  spread: no upstream connections stored for h2-parallel:2 loads"


def test_campaign_navigations_carry_the_proxys_upstream_connections(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "s.db", now_ms=NOW_MS)
    rec = lab_record(1, "camp", "p", "wifi-lossy", "h2-parallel:2", 0, 900.0)
    ingest(conn, parse_record(rec), rec["context"], NOW_MS)
    (nid,) = [r[0] for r in conn.execute("SELECT id FROM navigations")]
    with conn:
        store_upstream(conn, nid, [
            {"id": 1, "local_port": 40001, "host": "a.test", "family": "h2", "requests": 3,
             "bytes": 3000, "first_epoch_ms": None, "last_epoch_ms": None},
            {"id": 2, "local_port": 40002, "host": "a.test", "family": "h2", "requests": 1,
             "bytes": 1000, "first_epoch_ms": None, "last_epoch_ms": None}], NOW_MS)
    conn.row_factory = sqlite3.Row
    (row,) = campaign_navigations(conn, "camp")
    assert sorted((u["host"], u["requests"], u["bytes"]) for u in row["upstream"]) == [
        ("a.test", 1, 1000), ("a.test", 3, 3000)]
    assert upstream_spread([row], "h2-parallel:2")["byte_share"] == pytest.approx(0.75)
