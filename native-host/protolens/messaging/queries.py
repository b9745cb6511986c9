"""Dashboard data over native messaging: the ``query`` message (docs/MESSAGES.md).

``handle_query`` is pure apart from the ``QuerySource`` it is given: it validates the request,
asks for one page of rows and trims the page so the encoded reply stays far below Chromium's
1 MB host -> extension limit. ``cursor`` is an opaque string; the reply's ``next_cursor`` fetches
the next page (``null`` at the end). ``StoreQueries`` answers from the SQLite store, read-only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from protolens.record.enums import SOURCES as RECORD_SOURCES
from protolens.store import DatabaseError, StoreError, open_ro
from protolens.store.dashboard import DASHBOARD, dashboard_query

REPLY_BUDGET = 256 * 1024
"""Bytes of row JSON per reply: a quarter of the 1 MB limit, leaving room for the envelope."""
MAX_CELL = 4096
"""Longest text cell, in characters, of a row that alone would exceed ``REPLY_BUDGET``: such a
row is sent with its longer cells cut (ending in an ellipsis) rather than failing every query
that includes it (one stored 1 MB origin once made every dashboard query fail)."""
DEFAULT_LIMIT = 500
MAX_LIMIT = 5000
SOURCES = (*RECORD_SOURCES, "all")


class QueryError(ValueError):
    """A bad query message (the text names the field) or a store that cannot answer."""


class QuerySource(Protocol):
    """Where the rows come from; ``StoreQueries`` for the SQLite store."""

    def rows(self, name: str, params: Mapping[str, Any], offset: int, limit: int
             ) -> tuple[tuple[str, ...], list[list[Any]]]:
        ...


def _params(raw: Any) -> dict[str, Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise QueryError("params: expected an object")
    unknown = set(raw) - {"source", "since_ms", "origin"}
    if unknown:
        raise QueryError(f"params: unknown field {sorted(unknown)[0]!r}")
    source = raw.get("source", "passive")
    if source not in SOURCES:
        raise QueryError(f"params.source: expected one of {', '.join(SOURCES)}")
    since = raw.get("since_ms")
    if since is not None and (isinstance(since, bool) or not isinstance(since, int | float)):
        raise QueryError("params.since_ms: expected epoch milliseconds")
    origin = raw.get("origin")
    if origin is not None and not (isinstance(origin, str) and len(origin) <= 2048):
        raise QueryError("params.origin: expected a string")
    return {"source": None if source == "all" else source, "since_ms": since, "origin": origin}


def _int_field(msg: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = msg.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise QueryError(f"{key}: expected an integer from {low} to {high}")
    return value


def handle_query(msg: Mapping[str, Any], source: QuerySource,
                 budget: int = REPLY_BUDGET) -> dict[str, Any]:
    """The ``query_result`` reply (without ``schema``/``msg_id``) for a ``query`` message."""
    name = msg.get("query")
    if name not in DASHBOARD:
        raise QueryError(f"query: expected one of {', '.join(DASHBOARD)}")
    params = _params(msg.get("params"))
    cursor = msg.get("cursor")
    if cursor is None:
        offset = 0
    elif isinstance(cursor, str) and cursor.isdigit() and len(cursor) < 12:
        offset = int(cursor)
    else:
        raise QueryError("cursor: expected the next_cursor of a previous reply, or null")
    limit = _int_field(msg, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    columns, rows = source.rows(str(name), params, offset, limit + 1)
    more = len(rows) > limit
    rows = rows[:limit]
    used = truncated = 0
    page: list[list[Any]] = []
    for row in rows:
        size = _size(row)
        if size > budget:  # alone over the budget: cut its long cells, and send it on its own
            row, truncated = _cut(row), truncated + 1
            size = _size(row)
        if page and used + size > budget:
            more = True
            break
        page.append(row)
        used += size
    return {"type": "query_result", "query": name, "columns": list(columns), "rows": page,
            "next_cursor": str(offset + len(page)) if more else None, "truncated": truncated}


def _size(row: list[Any]) -> int:
    return len(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()) + 1


def _cut(row: list[Any]) -> list[Any]:
    return [c[: MAX_CELL - 1] + "\u2026" if isinstance(c, str) and len(c) > MAX_CELL else c
            for c in row]


class StoreQueries:
    """Answers from the store at ``db`` (opened read-only per query; none yet: no rows)."""

    def __init__(self, db: Path) -> None:
        self.db = db

    def rows(self, name: str, params: Mapping[str, Any], offset: int, limit: int
             ) -> tuple[tuple[str, ...], list[list[Any]]]:
        if not self.db.exists():
            return DASHBOARD[name][0], []
        try:
            conn = open_ro(self.db)
        except StoreError as exc:
            raise QueryError(f"store: {exc}") from None
        try:
            return dashboard_query(conn, name, source=params["source"],
                                   since_ms=params["since_ms"], origin=params["origin"],
                                   offset=offset, limit=limit)
        except DatabaseError as exc:
            raise QueryError(f"store: {exc}") from None
        finally:
            conn.close()
