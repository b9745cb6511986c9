"""Read queries for the CLI and analyses; every value comes back as plain dicts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from protolens.record.columns import VISUAL_MILESTONES

TABLES = ("navigations", "requests", "connections", "hosts")


class NotFound(LookupError):
    """No navigation (or more than one) matches the given id."""


def _rows(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    return [dict(row) for row in cur.fetchall()]


def recent_navigations(conn: sqlite3.Connection, last: int) -> list[dict[str, Any]]:
    """The ``last`` most recent navigations from ``navigation_summary`` (plus ``late_attach``),
    newest first."""
    return _rows(conn.execute(
        "SELECT s.*, n.late_attach FROM navigation_summary s JOIN navigations n ON n.id = s.id "
        "ORDER BY s.started_at_ms DESC, s.id LIMIT ?", (last,)))


def resolve_id(conn: sqlite3.Connection, prefix: str) -> str:
    """The full id of the one navigation whose id starts with ``prefix``."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    ids = [r[0] for r in conn.execute(
        "SELECT id FROM navigations WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 3",
        (escaped + "%",))]
    if not ids:
        raise NotFound(f"no navigation with id {prefix!r} (see: protolens navigations)")
    if len(ids) > 1 and prefix not in ids:
        raise NotFound(f"id prefix {prefix!r} matches several navigations ({', '.join(ids[:2])} "
                       "...): give more characters")
    return prefix if prefix in ids else ids[0]


def navigation_detail(conn: sqlite3.Connection, nav_id: str) -> dict[str, Any]:
    """One navigation: its summary, requests, connections (with shares) and hosts."""
    summary = conn.execute("SELECT * FROM navigation_summary WHERE id = ?", (nav_id,)).fetchone()
    if summary is None:
        raise NotFound(f"no navigation with id {nav_id!r}")
    detail = dict(summary)
    extra = conn.execute(f"SELECT late_attach, {', '.join(VISUAL_MILESTONES)} FROM navigations "
                         "WHERE id = ?", (nav_id,)).fetchone()
    detail["late_attach"] = extra[0]
    # the visual metrics ``show`` prints (docs/RECORD.md "Visual metrics"): null when not captured
    detail.update(zip(VISUAL_MILESTONES, extra[1:], strict=True))
    detail["requests"] = _rows(conn.execute(
        "SELECT request_id, url, host, resource_type, method, status, protocol, family, "
        "connection_id, connection_reused, encoded_bytes, body_bytes, start_ms, first_byte_ms, "
        "end_ms, failed, failure, is_main_document "
        "FROM requests WHERE navigation_id = ? ORDER BY seq", (nav_id,)))
    detail["connections"] = _rows(conn.execute(
        "SELECT s.connection_id, s.host, s.family, "
        "(SELECT r.protocol FROM requests r WHERE r.navigation_id = s.navigation_id "
        " AND r.connection_id = s.connection_id AND s.upstream = 0 AND r.protocol IS NOT NULL "
        " GROUP BY r.protocol ORDER BY count(*) DESC, r.protocol LIMIT 1) AS protocol, "
        "c.remote_ip, c.remote_port, s.requests, "
        "s.bytes, s.share, c.first_ms, c.last_ms, s.upstream "
        "FROM connection_shares s JOIN connections c ON c.navigation_id = s.navigation_id "
        "AND c.connection_id = s.connection_id AND c.upstream = s.upstream "
        "WHERE s.navigation_id = ? ORDER BY s.upstream, s.bytes DESC, s.connection_id",
        (nav_id,)))
    detail["hosts"] = _rows(conn.execute(
        "SELECT host, requests, bytes, connections, families FROM host_bytes "
        "WHERE navigation_id = ? ORDER BY bytes DESC, host", (nav_id,)))
    total = sum(h["bytes"] or 0 for h in detail["hosts"])
    for h in detail["hosts"]:
        h["share"] = (h["bytes"] or 0) / total if total else 0.0
    return detail


def navigation_count(conn: sqlite3.Connection) -> int:
    """How many navigations the store holds."""
    return int(conn.execute("SELECT count(*) FROM navigations").fetchone()[0])


def stats(conn: sqlite3.Connection, path: Path) -> dict[str, Any]:
    """Row counts, time span, sources and file size of a store."""
    out: dict[str, Any] = {"db": str(path)}
    for table in TABLES:
        out[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    first, last = conn.execute(
        "SELECT min(started_at), max(started_at) FROM navigation_summary").fetchone()
    out["first_started_at"], out["last_started_at"] = first, last
    out["sources"] = {r[0]: r[1] for r in conn.execute(
        "SELECT source, count(*) FROM navigations GROUP BY source ORDER BY source")}
    out["campaigns"] = conn.execute(
        "SELECT count(DISTINCT campaign) FROM navigations").fetchone()[0]
    out["bytes_on_disk"] = sum(p.stat().st_size for p in
                               (path, Path(f"{path}-wal")) if p.exists())
    return out
