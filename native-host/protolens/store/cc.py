"""The CC fingerprint's table (docs/CC.md): one row per probe, keyed by host, server address and
time, with the label, the evidence and the queue timeline; plus the per-host label view and the
queries behind ``cc list``, ``report --by-cc`` and the CC grouping of ``show`` / ``compare``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from protolens.store.tx import transaction

_COLUMNS = ("host", "server_ip", "probed_at_ms", "url", "label", "reason", "max_queue_bytes",
            "max_queue_fraction", "time_to_max_ms", "first_loss_ms", "bytes", "mss",
            "packet_bytes", "rtt_ms", "measured_rtt_ms", "transfer_ms", "http_version",
            "server_cc", "network", "wall_ms")


def insert_probe(conn: sqlite3.Connection, row: Mapping[str, Any], timeline: Mapping[str, Any],
                 network: str) -> None:
    """One probe, in its own transaction (``conn`` in autocommit mode)."""
    values = [network if c == "network" else row.get(c) for c in _COLUMNS]
    with transaction(conn, join=True):
        conn.execute(f"INSERT INTO cc_probes ({', '.join(_COLUMNS)}, timeline) "
                     f"VALUES ({', '.join('?' for _ in _COLUMNS)}, ?)",
                     [*values, json.dumps(timeline)])


def list_probes(conn: sqlite3.Connection, host: str | None = None, last: int = 50
                ) -> list[dict[str, Any]]:
    """Newest first, without the timeline."""
    where, params = ("WHERE host = ?", [host]) if host else ("", [])
    cur = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM cc_probes {where} "
                       "ORDER BY probed_at_ms DESC LIMIT ?", [*params, last])
    return [dict(r) for r in cur.fetchall()]


def probe_timeline(conn: sqlite3.Connection, host: str | None = None
                   ) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(row, timeline) of the newest probe (of ``host``), or None."""
    where, params = ("WHERE host = ?", [host]) if host else ("", [])
    r = conn.execute(f"SELECT {', '.join(_COLUMNS)}, timeline FROM cc_probes {where} "
                     "ORDER BY probed_at_ms DESC LIMIT 1", params).fetchone()
    if r is None:
        return None
    d = dict(r)
    return d, json.loads(d.pop("timeline"))


def host_labels(conn: sqlite3.Connection) -> dict[str, str]:
    return {r[0]: r[1] for r in conn.execute("SELECT host, label FROM cc_host_labels")}


def navigation_cc_bytes(conn: sqlite3.Connection, campaign: str | None = None,
                        nav_ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per successful navigation (of ``campaign`` / of ``nav_ids``): bytes served by
    delay-based, loss-based and unlabelled hosts (Fig. 2(c)). ``page`` is the campaign page tag,
    else the URL."""
    where, params = "WHERE n.failed = 0", []
    if campaign is not None:
        where += " AND n.campaign = ?"
        params.append(campaign)
    if nav_ids is not None:
        where += f" AND n.id IN ({', '.join('?' for _ in nav_ids)})"
        params += list(nav_ids)
    cur = conn.execute(f"""
        SELECT n.id AS navigation_id, coalesce(n.page, n.url) AS page, n.campaign, n.arm,
               n.condition, n.started_at_ms,
               coalesce(sum(h.bytes), 0) AS bytes,
               coalesce(sum(CASE WHEN l.label = 'delay-based' THEN h.bytes END), 0)
                   AS delay_bytes,
               coalesce(sum(CASE WHEN l.label = 'loss-based' THEN h.bytes END), 0)
                   AS loss_bytes
        FROM navigations n
        LEFT JOIN host_bytes h ON h.navigation_id = n.id
        LEFT JOIN cc_host_labels l ON l.host = h.host
        {where}
        GROUP BY n.id ORDER BY n.started_at_ms, n.id""", params)
    return [dict(r) for r in cur.fetchall()]


def page_hosts(conn: sqlite3.Connection, nav_id: str) -> list[dict[str, Any]]:
    """Igor's website step (Sec. 4.1): each host of one navigation with its share of the bytes,
    its address and its biggest object's URL and size, biggest hosts first."""
    cur = conn.execute("""
        WITH r AS (SELECT host, url, remote_ip, encoded_bytes, body_bytes,
                          row_number() OVER (PARTITION BY host
                              ORDER BY body_bytes DESC, encoded_bytes DESC, seq) AS k
                   FROM requests WHERE navigation_id = ? AND failed = 0
                        AND (url LIKE 'http://%' OR url LIKE 'https://%'))
        SELECT h.host, h.bytes, r.url AS biggest_url, r.body_bytes AS biggest_bytes,
               r.remote_ip
        FROM host_bytes h JOIN r ON r.host = h.host AND r.k = 1
        WHERE h.navigation_id = ? ORDER BY h.bytes DESC, h.host""", (nav_id, nav_id))
    rows = [dict(x) for x in cur.fetchall()]
    total = sum(r["bytes"] or 0 for r in rows)
    for r in rows:
        r["share"] = (r["bytes"] or 0) / total if total else 0.0
    return rows


def labels_for(conn: sqlite3.Connection, hosts: Iterable[str]) -> dict[str, str]:
    wanted = set(hosts)
    return {h: lab for h, lab in host_labels(conn).items() if h in wanted}


def has_cc_table(conn: sqlite3.Connection) -> bool:
    """False on a store from before migration m010 opened read-only."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'cc_host_labels'"
                        ).fetchone() is not None


def campaign_navigation(conn: sqlite3.Connection, campaign: str) -> str | None:
    """The first successful navigation of ``campaign`` (``cc probe --url``'s page load)."""
    r = conn.execute("SELECT id FROM navigations WHERE campaign = ? AND failed = 0 "
                     "ORDER BY started_at_ms LIMIT 1", (campaign,)).fetchone()
    return None if r is None else str(r[0])
