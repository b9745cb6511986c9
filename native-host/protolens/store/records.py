"""Reading a stored page load back as the ``NavigationRecord`` it was ingested from.

The HAR export (``share/har.py``), the waterfall (``plots/waterfall_series.py``) and ``show``'s
view (``cli/show_view.py``) are pure functions over a record; this adapter is the only place they
get one from SQLite. Every field is read by the column table (record/columns.py).
Policies and the A/B assignment are not rebuilt (they are not needed by those views).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from protolens.record import (
    SCHEMA_VERSION,
    Browser,
    Connection,
    HostSummary,
    Milestones,
    NavigationRecord,
    NetworkInfo,
    Page,
    Request,
)
from protolens.record.columns import LIST_FIELDS, record_fields
from protolens.store.queries import NotFound


def _cells(row: sqlite3.Row, prefix: str, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The record fields at ``prefix`` from a stored row, by the column table: flags back to
    booleans (None stays None), list fields from their JSON text."""
    out: dict[str, Any] = {}
    for c in record_fields(prefix):
        if c.name in skip:
            continue
        v = row[c.name]
        if c.flag and v is not None:
            v = bool(v)
        elif c.name in LIST_FIELDS and v is not None:
            v = tuple(json.loads(v))
        out[c.key] = v
    return out


def _page(n: sqlite3.Row) -> Page:
    has_net = any(n[k] is not None for k in ("network_effective_type", "network_rtt_ms",
                                             "network_downlink_mbps"))
    return Page(
        **_cells(n, "page", ("redirects",)),
        browser=Browser(n["browser_name"], n["browser_version"]),
        network=NetworkInfo(n["network_effective_type"], n["network_rtt_ms"],
                            n["network_downlink_mbps"]) if has_net else None,
        redirects=tuple(json.loads(n["redirects"])))


def load_record(conn: sqlite3.Connection, nav_id: str) -> NavigationRecord:
    """The stored navigation ``nav_id`` as a record (requests in their recorded order)."""
    n = conn.execute("SELECT * FROM navigations WHERE id = ?", (nav_id,)).fetchone()
    if n is None:
        raise NotFound(f"no navigation with id {nav_id!r}")
    requests = tuple(Request(**_cells(r, "requests")) for r in conn.execute(
        "SELECT * FROM requests WHERE navigation_id = ? ORDER BY seq", (nav_id,)))
    connections = tuple(Connection(**_cells(c, "connections")) for c in conn.execute(
        "SELECT * FROM connections WHERE navigation_id = ? ORDER BY rowid",  # ingest order
        (nav_id,)))
    hosts = tuple(HostSummary(h["host"], h["connections"], tuple(json.loads(h["families"])))
                  for h in conn.execute("SELECT * FROM hosts WHERE navigation_id = ? "
                                        "ORDER BY rowid", (nav_id,)))
    return NavigationRecord(
        schema=n["schema"] if n["schema"] is not None else SCHEMA_VERSION, id=n["id"],
        source=n["source"], page=_page(n),
        milestones=Milestones(**{c.key: n[c.name] for c in record_fields("milestones")}),
        requests=requests, connections=connections, hosts=hosts,
        context=json.loads(n["context"]) if n["context"] else {})


def campaign_navigation_ids(conn: sqlite3.Connection, campaign: str) -> list[str]:
    """Ids of a campaign's page loads, oldest first."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM navigations WHERE campaign = ? ORDER BY started_at_ms, id", (campaign,))]
