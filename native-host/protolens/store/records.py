"""Reading a stored page load back as the ``NavigationRecord`` it was ingested from.

The HAR export (``share/har.py``), the waterfall (``plots/waterfall_series.py``) and ``show``'s
view (``cli/show_view.py``) are pure functions over a record; this adapter is the only place they
get one from SQLite. Columns are read by name, so columns added later are simply not carried.
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
from protolens.record.columns import record_fields
from protolens.store.queries import NotFound


def _opt_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _request(r: sqlite3.Row) -> Request:
    return Request(
        request_id=r["request_id"], url=r["url"], host=r["host"],
        resource_type=r["resource_type"], method=r["method"], status=r["status"],
        mime_type=r["mime_type"], protocol=r["protocol"], family=r["family"],
        connection_id=r["connection_id"], connection_reused=_opt_bool(r["connection_reused"]),
        remote_ip=r["remote_ip"], remote_port=r["remote_port"],
        encoded_bytes=r["encoded_bytes"], body_bytes=r["body_bytes"],
        from_disk_cache=bool(r["from_disk_cache"]), from_memory_cache=bool(r["from_memory_cache"]),
        from_service_worker=bool(r["from_service_worker"]), priority=r["priority"],
        alternate_protocol_usage=r["alternate_protocol_usage"], start_ms=r["start_ms"],
        first_byte_ms=r["first_byte_ms"], end_ms=r["end_ms"], failed=bool(r["failed"]),
        failure=r["failure"], frame_id=r["frame_id"],
        is_main_document=bool(r["is_main_document"]))


def _connection(c: sqlite3.Row) -> Connection:
    return Connection(
        connection_id=c["connection_id"], host=c["host"], family=c["family"],
        remote_ip=c["remote_ip"], remote_port=c["remote_port"], requests=c["requests"],
        bytes=c["bytes"], share=c["share"], first_ms=c["first_ms"], last_ms=c["last_ms"],
        upstream=bool(c["upstream"]))


def _page(n: sqlite3.Row) -> Page:
    has_net = any(n[k] is not None for k in ("network_effective_type", "network_rtt_ms",
                                             "network_downlink_mbps"))
    return Page(
        url=n["url"], origin=n["origin"], url_detail=n["url_detail"],
        started_at_ms=n["started_at_ms"],
        browser=Browser(n["browser_name"], n["browser_version"]),
        extension_version=n["extension_version"],
        network=NetworkInfo(n["network_effective_type"], n["network_rtt_ms"],
                            n["network_downlink_mbps"]) if has_net else None,
        warm=bool(n["warm"]), redirects=tuple(json.loads(n["redirects"])),
        aborted=bool(n["aborted"]), error=n["error"], late_attach=n["late_attach"])


def load_record(conn: sqlite3.Connection, nav_id: str) -> NavigationRecord:
    """The stored navigation ``nav_id`` as a record (requests in their recorded order)."""
    n = conn.execute("SELECT * FROM navigations WHERE id = ?", (nav_id,)).fetchone()
    if n is None:
        raise NotFound(f"no navigation with id {nav_id!r}")
    requests = tuple(_request(r) for r in conn.execute(
        "SELECT * FROM requests WHERE navigation_id = ? ORDER BY seq", (nav_id,)))
    connections = tuple(_connection(c) for c in conn.execute(
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
