"""Writing one NavigationRecord in one SQLite transaction (all rows or none), idempotent on its id.

The host acks only after ``ingest`` returns, i.e. after COMMIT (docs/MESSAGES.md).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from protolens.record import NavigationRecord
from protolens.store.policy import store_record_policies

CONTEXT_COLUMNS = ("campaign", "arm", "condition", "repetition", "page", "server_cc",
                   "command_line", "load_id")
"""Context keys that also get a real column in ``navigations``."""

_NAV_COLUMNS = (
    "id", "schema", "source", "url", "origin", "url_detail", "started_at_ms", "browser_name",
    "browser_version", "extension_version", "network_effective_type", "network_rtt_ms",
    "network_downlink_mbps", "warm", "redirects", "aborted", "error", "ttfb_ms", "fcp_ms",
    "lcp_ms", "dcl_ms", "load_ms", "first_image_ms", "failed", "failure", *CONTEXT_COLUMNS,
    "context", "ingested_at_ms", "late_attach",
)
_REQ_COLUMNS = (
    "navigation_id", "seq", "request_id", "url", "host", "resource_type", "method", "status",
    "mime_type", "protocol", "family", "connection_id", "connection_reused", "remote_ip",
    "remote_port", "encoded_bytes", "body_bytes", "from_disk_cache", "from_memory_cache",
    "from_service_worker", "priority", "alternate_protocol_usage", "start_ms", "first_byte_ms",
    "end_ms", "failed", "failure", "frame_id", "is_main_document",
)
_CONN_COLUMNS = ("navigation_id", "connection_id", "upstream", "host", "family", "remote_ip",
                 "remote_port", "requests", "bytes", "share", "first_ms", "last_ms")
_HOST_COLUMNS = ("navigation_id", "host", "connections", "families")


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return (f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})")


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


def own_context(record: NavigationRecord) -> dict[str, Any]:
    """The record's own ``context`` less the lab tags (``CONTEXT_COLUMNS``) and ``experiment``:
    those come only from the host's lab context and the record's ``experiment`` field, never
    from what the extension wrote (docs/RECORD.md "context"; issue 15 item 4: a passive record
    tagged with a campaign was counted in that campaign's report)."""
    return {k: v for k, v in record.context.items()
            if k not in CONTEXT_COLUMNS and k != "experiment"}


def navigation_row(record: NavigationRecord, context: Mapping[str, Any],
                   now_ms: float) -> tuple[Any, ...]:
    """The ``navigations`` row; ``context`` is the host's lab context (the lab runner's own
    bookkeeping), the only source of the lab tags."""
    page, ms, net = record.page, record.milestones, record.page.network
    # an experiment's arm goes where `protolens compare --source experiment` reads it (arm column)
    exp = ({"arm": record.experiment.arm, "experiment": record.experiment.name}
           if record.experiment else {})
    merged = {**own_context(record), **exp, **context}
    failed = page.error is not None or page.aborted
    failure = page.error if page.error is not None else ("aborted" if page.aborted else None)
    return (
        record.id, record.schema, record.source, page.url, page.origin, page.url_detail,
        page.started_at_ms, page.browser.name, page.browser.version, page.extension_version,
        net.effective_type if net else None, net.rtt_ms if net else None,
        net.downlink_mbps if net else None, page.warm, json.dumps(list(page.redirects)),
        page.aborted, page.error, ms.ttfb_ms, ms.fcp_ms, ms.lcp_ms, ms.dcl_ms, ms.load_ms,
        ms.first_image_ms, failed, failure,
        *(_context_cell(k, merged.get(k)) for k in CONTEXT_COLUMNS),
        json.dumps(merged, sort_keys=True, default=str), now_ms, page.late_attach,
    )


def child_rows(record: NavigationRecord) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]],
                                                  list[tuple[Any, ...]]]:
    """Rows for ``requests``, ``connections`` and ``hosts``."""
    rid = record.id
    reqs = [(rid, seq, r.request_id, r.url, r.host, r.resource_type, r.method, r.status,
             r.mime_type, r.protocol, r.family, r.connection_id, r.connection_reused, r.remote_ip,
             r.remote_port, r.encoded_bytes, r.body_bytes, r.from_disk_cache, r.from_memory_cache,
             r.from_service_worker, r.priority, r.alternate_protocol_usage, r.start_ms,
             r.first_byte_ms, r.end_ms, r.failed, r.failure, r.frame_id, r.is_main_document)
            for seq, r in enumerate(record.requests)]
    conns = [(rid, c.connection_id, c.upstream, c.host, c.family, c.remote_ip, c.remote_port,
              c.requests, c.bytes, c.share, c.first_ms, c.last_ms) for c in record.connections]
    hosts = [(rid, h.host, h.connections, json.dumps(list(h.families))) for h in record.hosts]
    return reqs, conns, hosts


def ingest(conn: sqlite3.Connection, record: NavigationRecord, context: Mapping[str, Any],
           now_ms: float) -> bool:
    """Store ``record`` in one transaction; True if stored now, False if its id already was."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT 1 FROM navigations WHERE id = ?", (record.id,)).fetchone():
            conn.execute("ROLLBACK")
            return False
        conn.execute(INSERT_NAVIGATION, navigation_row(record, context, now_ms))
        reqs, conns, hosts = child_rows(record)
        conn.executemany(INSERT_REQUEST, reqs)
        conn.executemany(INSERT_CONNECTION, conns)
        conn.executemany(INSERT_HOST, hosts)
        store_record_policies(conn, record)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return True


class SqliteSink:
    """The host's ``RecordSink``: ingests into an open read-write connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def ingest(self, record: NavigationRecord, context: Mapping[str, Any], now_ms: float) -> bool:
        return ingest(self.conn, record, context, now_ms)
