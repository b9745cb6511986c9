"""The path a campaign's loads took (SQL): each run's network (``campaign_runs``) and each
navigation's per-host round trips beside the profile's (``navigation_rtts``; ``lab/path_rtt.py``
computes them)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from protolens.store.tx import transaction


def has_path_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                        "name = 'navigation_rtts'").fetchone() is not None


def record_run(conn: sqlite3.Connection, campaign: str, started_ms: float,
               network: Mapping[str, Any]) -> None:
    with transaction(conn):
        conn.execute("INSERT INTO campaign_runs (campaign, started_at_ms, network) "
                      "VALUES (?, ?, ?)", (campaign, started_ms, json.dumps(network)))


def campaign_runs(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Each run of the campaign, oldest first: ``started_at_ms`` and its ``network``."""
    if not has_path_tables(conn):
        return []
    return [{"started_at_ms": r[0], "network": json.loads(r[1])} for r in conn.execute(
        "SELECT started_at_ms, network FROM campaign_runs WHERE campaign = ? "
        "ORDER BY started_at_ms", (campaign,))]


def load_connections(conn: sqlite3.Connection, load_id: str) -> dict[str, list[dict[str, Any]]]:
    """Per navigation of a load, its connections with what their set-up says."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in conn.execute("""
            SELECT c.navigation_id, c.host, c.family, c.remote_ip, c.upstream, c.connect_ms,
                   c.tls_ms, c.first_ms
            FROM connections c JOIN navigations n ON n.id = c.navigation_id
            WHERE n.load_id = ?""", (load_id,)):
        out.setdefault(r[0], []).append(
            {"host": r[1], "family": r[2], "remote_ip": r[3], "upstream": bool(r[4]),
             "connect_ms": r[5], "tls_ms": r[6], "first_ms": r[7]})
    return out


def record_rtts(conn: sqlite3.Connection, navigation_id: str,
                rows: Iterable[Mapping[str, Any]]) -> None:
    cols = ("host", "observed_rtt_ms", "profile_rtt_ms", "path_rtt_ms", "source", "connections")
    with transaction(conn):
        conn.executemany(
            f"INSERT OR REPLACE INTO navigation_rtts (navigation_id, {', '.join(cols)}) "
            f"VALUES (?, {', '.join('?' * len(cols))})",
            [(navigation_id, *(r[c] for c in cols)) for r in rows])


def campaign_rtts(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Every stored host round trip of a campaign's cold successful navigations, with the
    navigation's page, condition and arm."""
    if not has_path_tables(conn):
        return []
    return [dict(r) for r in conn.execute("""
        SELECT n.id AS navigation_id, n.page, n.condition, n.arm, t.host, t.observed_rtt_ms,
               t.profile_rtt_ms, t.path_rtt_ms, t.source, t.connections
        FROM navigation_rtts t JOIN navigations n ON n.id = t.navigation_id
        WHERE n.campaign = ? AND coalesce(n.warm, 0) = 0
        ORDER BY n.page, n.condition, t.host""", (campaign,))]
