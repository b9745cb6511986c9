"""Lab campaign tables: campaigns, every load attempt (ok or failed, with its reason), and the
shaper's per-flow ground truth for each load's time window.

A load attempt is stored whether or not the browser produced a record: failures are never dropped.
Navigations link to their load through ``navigations.load_id``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from protolens.store.logs import has_log_table
from protolens.store.tx import transaction


def ensure_campaign(conn: sqlite3.Connection, name: str, *, seed: int, spec: Mapping[str, Any],
                    version: str, now_ms: float) -> tuple[int, dict[str, Any]]:
    """Create the campaign, or return the stored one's seed and spec (for ``--resume``)."""
    row = conn.execute("SELECT seed, spec FROM campaigns WHERE name = ?", (name,)).fetchone()
    if row is not None:
        return int(row[0]), dict(json.loads(row[1]))
    conn.execute("INSERT INTO campaigns (name, created_at_ms, seed, spec, protolens_version) "
                 "VALUES (?, ?, ?, ?, ?)", (name, now_ms, seed, json.dumps(spec), version))
    return seed, dict(spec)


def campaign_spec(conn: sqlite3.Connection, name: str) -> tuple[int, dict[str, Any]] | None:
    """The stored seed and spec of a campaign, or None."""
    row = conn.execute("SELECT seed, spec FROM campaigns WHERE name = ?", (name,)).fetchone()
    return None if row is None else (int(row[0]), dict(json.loads(row[1])))


def record_load(conn: sqlite3.Connection, load: Mapping[str, Any],
                flows: Iterable[Mapping[str, Any]]) -> None:
    """One load attempt and its flows, in one transaction."""
    cols = ("load_id", "campaign", "page", "arm", "condition", "repetition", "warm", "attempt",
            "status", "reason", "started_at_ms", "wall_ms", "server_cc", "command_line",
            "lateness_max_ns", "lateness_p99_ns", "flagged", "flag_reason")
    flow_cols = ("proto", "client_port", "server_ip", "server_port", "bytes_down", "bytes_up",
                 "packets_down", "packets_up", "first_ns", "last_ns")
    with transaction(conn):
        conn.execute(f"INSERT INTO loads ({', '.join(cols)}) VALUES "
                     f"({', '.join('?' * len(cols))})", [load.get(c) for c in cols])
        conn.executemany(
            f"INSERT INTO flows (load_id, {', '.join(flow_cols)}) VALUES "
            f"(?, {', '.join('?' * len(flow_cols))})",
            [(load["load_id"], *(f.get(c) for c in flow_cols)) for f in flows])


def done_cells(conn: sqlite3.Connection, campaign: str) -> list[tuple[str, str, str, int]]:
    """(page, arm, condition, repetition) of every cell with a successful load."""
    return [(r[0], r[1], r[2], int(r[3])) for r in conn.execute(
        "SELECT DISTINCT page, arm, condition, repetition FROM loads "
        "WHERE campaign = ? AND status = 'ok'", (campaign,))]


def navigation_ids(conn: sqlite3.Connection, load_id: str) -> list[str]:
    """Ids of the navigations the host stored for a load (the extension's records)."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM navigations WHERE load_id = ? ORDER BY started_at_ms", (load_id,))]


def log_count(conn: sqlite3.Connection, load_id: str) -> int:
    """How many navigations of a load have a log kept (``navigation_logs``, ``store/logs.py``)."""
    if not has_log_table(conn):
        return 0
    return int(conn.execute(
        "SELECT count(*) FROM navigation_logs JOIN navigations ON id = navigation_id "
        "WHERE load_id = ?", (load_id,)).fetchone()[0])


def campaign_navigations(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Cold, stored navigations of a campaign's successful loads, with per-host connections
    (``hosts``: {host: connections}) as the report needs them, and the lab proxy's upstream
    connections (``upstream``: host, requests, bytes; empty for a load not through the proxy)."""
    rows = [dict(r) for r in conn.execute("""
        SELECT s.id, s.page, s.condition, s.arm, s.repetition, s.plt_ms, s.ttfb_ms, s.fcp_ms,
               s.lcp_ms, s.first_image_ms, n.speed_index_ms, n.first_visual_change_ms,
               n.visual_complete_85_ms, n.visual_complete_99_ms, n.last_visual_change_ms,
               s.connections, s.bytes, s.warm, s.failed, n.incomplete
        FROM navigation_summary s JOIN navigations n ON n.id = s.id
        WHERE s.campaign = ?
        ORDER BY s.started_at_ms""", (campaign,))]
    hosts: dict[str, dict[str, int]] = {}
    for r in conn.execute("""
            SELECT h.navigation_id, h.host, h.connections FROM hosts h
            JOIN navigations n ON n.id = h.navigation_id WHERE n.campaign = ?""", (campaign,)):
        hosts.setdefault(r[0], {})[r[1]] = int(r[2])
    upstream: dict[str, list[dict[str, Any]]] = {}
    for r in conn.execute("""
            SELECT c.navigation_id, c.host, c.requests, c.bytes FROM connections c
            JOIN navigations n ON n.id = c.navigation_id
            WHERE n.campaign = ? AND c.upstream = 1""", (campaign,)):
        upstream.setdefault(r[0], []).append({"host": r[1], "requests": int(r[2] or 0),
                                              "bytes": int(r[3] or 0)})
    for row in rows:
        row["hosts"] = hosts.get(row["id"], {})
        row["upstream"] = upstream.get(row["id"], [])
    return rows


def campaigns(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every campaign with its load counts; ``incomplete``: its stored navigations whose record
    is incomplete (docs/RECORD.md "Incomplete records")."""
    return [dict(r) for r in conn.execute("""
        SELECT c.name, c.created_at_ms, c.seed,
               sum(l.status = 'ok') AS ok, sum(l.status = 'failed') AS failed,
               sum(l.flagged) AS flagged,
               (SELECT count(*) FROM navigations n
                 WHERE n.campaign = c.name AND n.incomplete = 1) AS incomplete
        FROM campaigns c LEFT JOIN loads l ON l.campaign = c.name
        GROUP BY c.name ORDER BY c.created_at_ms""")]


def incomplete_cells(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Per page x condition x arm of a campaign, its stored navigations and how many of them
    are incomplete, with the reasons seen (cells with none incomplete left out)."""
    return [dict(r) for r in conn.execute("""
        SELECT page, condition, arm, count(*) AS navigations, sum(incomplete = 1) AS incomplete,
               group_concat(DISTINCT incomplete_reasons) AS reasons
        FROM navigations WHERE campaign = ?
        GROUP BY page, condition, arm HAVING sum(incomplete = 1) > 0
        ORDER BY page, condition, arm""", (campaign,))]
