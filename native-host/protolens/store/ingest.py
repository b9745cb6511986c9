"""Writing one NavigationRecord in one SQLite transaction (all rows or none), idempotent on its id.

The host acks only after ``ingest`` returns, i.e. after COMMIT (docs/MESSAGES.md). The record
comes as its rows (``record/rows.py``), built by the message's fast path or from the model.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from protolens.record import NavigationRecord, columns
from protolens.record.enums import IngestOutcome
from protolens.record.rows import RecordRows, record_rows
from protolens.store.policy import store_record_policies
from protolens.store.tx import transaction

CONTEXT_COLUMNS = tuple(c.name for c in columns.NAVIGATIONS if c.context)
"""Context keys that also get a real column in ``navigations`` (campaign ... load_id)."""

_NAV_COLUMNS = columns.stored("navigations")
_REQ_COLUMNS = columns.stored("requests")
_CONN_COLUMNS = columns.stored("connections")
_HOST_COLUMNS = columns.stored("hosts")
_NAV_ROW = itemgetter(*_NAV_COLUMNS)


def _insert(table: str, names: tuple[str, ...]) -> str:
    return (f"INSERT INTO {table} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)})")


INSERT_NAVIGATION = _insert("navigations", _NAV_COLUMNS)
INSERT_REQUEST = _insert("requests", _REQ_COLUMNS)
INSERT_CONNECTION = _insert("connections", _CONN_COLUMNS)
INSERT_HOST = _insert("hosts", _HOST_COLUMNS)


def _context_cell(key: str, value: Any) -> Any:
    if value is None:
        return None
    if key == "repetition":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def own_context(context: Mapping[str, Any]) -> dict[str, Any]:
    """A record's own ``context`` less the lab tags (``CONTEXT_COLUMNS``) and ``experiment``:
    those come only from the host's lab context and the record's ``experiment`` field, never
    from what the extension wrote (docs/RECORD.md "context": a passive record
    tagged with a campaign was once counted in that campaign's report)."""
    return {k: v for k, v in context.items() if k not in CONTEXT_COLUMNS and k != "experiment"}


def navigation_row(rows: RecordRows, context: Mapping[str, Any],
                   now_ms: float) -> tuple[Any, ...]:
    """The ``navigations`` row; ``context`` is the host's lab context (the lab runner's own
    bookkeeping), the only source of the lab tags."""
    # an experiment's arm goes where `protolens compare --source experiment` reads it (arm column)
    exp = ({"arm": rows.experiment.arm, "experiment": rows.experiment.name}
           if rows.experiment else {})
    merged = {**own_context(rows.context), **exp, **context}
    row = dict(rows.navigation)
    row.update((k, _context_cell(k, merged.get(k))) for k in CONTEXT_COLUMNS)
    row["context"] = json.dumps(merged, sort_keys=True, default=str)
    row["ingested_at_ms"] = now_ms
    return tuple(_NAV_ROW(row))


_CONTENT = tuple(i for i, name in enumerate(_NAV_COLUMNS)
                 if name not in (*CONTEXT_COLUMNS, "context", "ingested_at_ms"))
"""Positions of the ``navigations`` columns that come from the record itself."""


def same_content(conn: sqlite3.Connection, rows: RecordRows) -> bool:
    """Whether the stored navigation ``rows.id`` has these rows (its navigation row without
    host-stamped tags and time, requests, browser connections, hosts)."""
    nav = navigation_row(rows, {}, 0.0)
    rid = (rows.id,)
    old = conn.execute(f"SELECT {', '.join(_NAV_COLUMNS)} FROM navigations WHERE id = ?",
                       rid).fetchone()
    if old is None or [old[i] for i in _CONTENT] != [nav[i] for i in _CONTENT]:
        return False
    cols = ", ".join(_REQ_COLUMNS)
    if [tuple(r) for r in conn.execute(
            f"SELECT {cols} FROM requests WHERE navigation_id = ? ORDER BY seq", rid)] != \
            rows.requests:
        return False
    # the lab runner adds the proxy's upstream connections after ingest: compare the record's own
    old_conns = [tuple(r) for r in conn.execute(
        f"SELECT {', '.join(_CONN_COLUMNS)} FROM connections WHERE navigation_id = ?", rid)]
    conns = rows.connections
    if not set(conns) <= set(old_conns) or \
            len([c for c in old_conns if not c[2]]) != len([c for c in conns if not c[2]]):
        return False
    return sorted(tuple(r) for r in conn.execute(
        f"SELECT {', '.join(_HOST_COLUMNS)} FROM hosts WHERE navigation_id = ?", rid)) == \
        sorted(rows.hosts)


def ingest_rows(conn: sqlite3.Connection, rows: RecordRows, context: Mapping[str, Any],
                now_ms: float) -> bool:
    """Store a record's ``rows`` in one transaction, one prepared statement per table; True if
    stored now, False if its id already was."""
    with transaction(conn):
        if conn.execute("SELECT 1 FROM navigations WHERE id = ?", (rows.id,)).fetchone():
            return False
        conn.execute(INSERT_NAVIGATION, navigation_row(rows, context, now_ms))
        conn.executemany(INSERT_REQUEST, rows.requests)
        conn.executemany(INSERT_CONNECTION, rows.connections)
        conn.executemany(INSERT_HOST, rows.hosts)
        store_record_policies(conn, rows.policies)
    return True


def ingest(conn: sqlite3.Connection, record: NavigationRecord, context: Mapping[str, Any],
           now_ms: float) -> bool:
    """Store ``record`` in one transaction; True if stored now, False if its id already was."""
    return ingest_rows(conn, record_rows(record), context, now_ms)


class SqliteSink:
    """The host's ``RecordSink``: ingests into an open read-write connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def ingest(self, record: RecordRows | NavigationRecord, context: Mapping[str, Any],
               now_ms: float) -> IngestOutcome:
        """``stored``; or for an id stored before, ``duplicate`` (same content) or ``conflict``
        (different content: the stored record is kept). ``record``: its rows,
        or the record itself."""
        rows = record if isinstance(record, RecordRows) else record_rows(record)
        if ingest_rows(self.conn, rows, context, now_ms):
            return "stored"
        return "duplicate" if same_content(self.conn, rows) else "conflict"
