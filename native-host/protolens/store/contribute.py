"""SQL for ``protolens contribute`` (docs/COLLECTOR.md): the accepted uploads to a collector, so
the next upload sends only navigations stored after the last accepted one
(``ingested_upto_ms``). The table is made by ``migrations.m011_contributions``."""

from __future__ import annotations

import sqlite3
from typing import Any


def high_water(conn: sqlite3.Connection, collector: str) -> float:
    """``ingested_at_ms`` of the newest navigation the collector has accepted (-1: none)."""
    row = conn.execute("SELECT max(ingested_upto_ms) FROM contributions WHERE collector = ?",
                       (collector,)).fetchone()
    return -1.0 if row is None or row[0] is None else float(row[0])


def record(conn: sqlite3.Connection, collector: str, checksum: str, upto_ms: float,
           navigations: int, now_ms: float, receipt: str) -> None:
    conn.execute("INSERT INTO contributions (collector, checksum, ingested_upto_ms, navigations, "
                 "accepted_at_ms, receipt) VALUES (?, ?, ?, ?, ?, ?)",
                 (collector, checksum, upto_ms, navigations, now_ms, receipt))


def last(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT collector, checksum, navigations, accepted_at_ms FROM "
                       "contributions ORDER BY accepted_at_ms DESC, id DESC LIMIT 1").fetchone()
    return None if row is None else dict(row)


def forget(conn: sqlite3.Connection) -> int:
    return conn.execute("DELETE FROM contributions").rowcount


def window_end(conn: sqlite3.Connection, after_ms: float, most: int) -> float | None:
    """``ingested_at_ms`` of the ``most``-th local navigation stored after ``after_ms``: the end
    of a window of about ``most`` navigations (None: fewer are waiting)."""
    row = conn.execute("SELECT ingested_at_ms FROM navigations WHERE bundle IS NULL AND "
                       "ingested_at_ms > ? ORDER BY ingested_at_ms LIMIT 1 OFFSET ?",
                       (after_ms, max(0, most - 1))).fetchone()
    return None if row is None else float(row[0])
