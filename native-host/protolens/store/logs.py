"""SQL of ``navigation_logs`` (``m014_navigation_logs``): a load's raw DevTools events, as the
extension's log tap sent them (gzipped JSONL) with the recorder's options, keyed by navigation id.

A log is stored only for a stored navigation (its foreign key) and goes with it (``ON DELETE
CASCADE``; ``store/forget.py`` finds it as a child table). Nothing that leaves this machine reads
this table: export, bundles and contribute select named columns of the record tables only.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from protolens.store.tx import transaction

LogOutcome = Literal["stored", "duplicate", "no_navigation"]


@dataclass(frozen=True)
class StoredLog:
    navigation_id: str
    log: bytes
    """gzipped JSONL, one DevTools event per line"""
    options: dict[str, Any]
    """the recorder's options in the live session (src/replay/replay.ts ReplayOptions)"""
    stored_at_ms: float


def has_log_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                        "AND name = 'navigation_logs'").fetchone() is not None


def store_log(conn: sqlite3.Connection, navigation_id: str, log: bytes,
              options: dict[str, Any], now_ms: float) -> LogOutcome:
    """Keep the first log of a stored navigation; a second one for the same id is not stored."""
    with transaction(conn):
        if conn.execute("SELECT 1 FROM navigations WHERE id = ?",
                        (navigation_id,)).fetchone() is None:
            return "no_navigation"
        cur = conn.execute(
            "INSERT OR IGNORE INTO navigation_logs (navigation_id, log, options, stored_at_ms) "
            "VALUES (?, ?, ?, ?)",
            (navigation_id, log, json.dumps(options, sort_keys=True), now_ms))
        return "stored" if cur.rowcount == 1 else "duplicate"


def load_log(conn: sqlite3.Connection, navigation_id: str) -> StoredLog | None:
    if not has_log_table(conn):
        return None
    row = conn.execute("SELECT navigation_id, log, options, stored_at_ms FROM navigation_logs "
                       "WHERE navigation_id = ?", (navigation_id,)).fetchone()
    if row is None:
        return None
    return StoredLog(str(row[0]), bytes(row[1]), json.loads(row[2]), float(row[3]))
