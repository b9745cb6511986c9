"""Named schema migrations, each applied in one transaction together with its row in
``_migrations`` (the pattern of sqlite-utils' ``migrations.py``). Append new ones; never edit an
applied one. docs/SCHEMA.md documents the result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from protolens.store import cc as _cc
from protolens.store import contribute as _contribute
from protolens.store import fairness as _fairness
from protolens.store import lab as _lab
from protolens.store import policy as _policy
from protolens.store import research as _research

Migration = Callable[[sqlite3.Connection], None]


def m001_initial(conn: sqlite3.Connection) -> None:
    """Tables for navigations, requests, connections and hosts (docs/RECORD.md, schema 1)."""
    conn.execute("""
        CREATE TABLE navigations (
            id TEXT PRIMARY KEY,
            schema INTEGER NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('passive', 'lab', 'experiment')),
            url TEXT NOT NULL,
            origin TEXT NOT NULL,
            url_detail TEXT NOT NULL CHECK (url_detail IN ('origin', 'path', 'full')),
            started_at_ms REAL NOT NULL,
            browser_name TEXT NOT NULL,
            browser_version TEXT NOT NULL,
            extension_version TEXT NOT NULL,
            network_effective_type TEXT,
            network_rtt_ms REAL,
            network_downlink_mbps REAL,
            warm INTEGER NOT NULL,
            redirects TEXT NOT NULL,
            aborted INTEGER NOT NULL,
            error TEXT,
            ttfb_ms REAL, fcp_ms REAL, lcp_ms REAL, dcl_ms REAL, load_ms REAL,
            first_image_ms REAL,
            failed INTEGER NOT NULL,
            failure TEXT,
            campaign TEXT, arm TEXT, condition TEXT, repetition INTEGER, page TEXT,
            server_cc TEXT, command_line TEXT, load_id TEXT,
            context TEXT NOT NULL,
            ingested_at_ms REAL NOT NULL
        ) STRICT""")
    conn.execute("CREATE INDEX navigations_started ON navigations (started_at_ms)")
    conn.execute("CREATE INDEX navigations_campaign ON navigations (campaign, arm, condition)")
    conn.execute("""
        CREATE TABLE requests (
            navigation_id TEXT NOT NULL REFERENCES navigations (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            request_id TEXT NOT NULL,
            url TEXT NOT NULL,
            host TEXT NOT NULL,
            resource_type TEXT NOT NULL,
            method TEXT NOT NULL,
            status INTEGER,
            mime_type TEXT,
            protocol TEXT,
            family TEXT CHECK (family IN ('h1', 'h2', 'h3')),
            connection_id INTEGER,
            connection_reused INTEGER,
            remote_ip TEXT,
            remote_port INTEGER,
            encoded_bytes INTEGER NOT NULL CHECK (encoded_bytes >= 0),
            body_bytes INTEGER NOT NULL CHECK (body_bytes >= 0),
            from_disk_cache INTEGER NOT NULL,
            from_memory_cache INTEGER NOT NULL,
            from_service_worker INTEGER NOT NULL,
            priority TEXT,
            alternate_protocol_usage TEXT,
            start_ms REAL NOT NULL,
            first_byte_ms REAL,
            end_ms REAL,
            failed INTEGER NOT NULL,
            failure TEXT,
            frame_id TEXT,
            is_main_document INTEGER NOT NULL,
            PRIMARY KEY (navigation_id, request_id)
        ) STRICT""")
    conn.execute("CREATE INDEX requests_host ON requests (host)")
    conn.execute("""
        CREATE TABLE connections (
            navigation_id TEXT NOT NULL REFERENCES navigations (id) ON DELETE CASCADE,
            connection_id INTEGER NOT NULL,
            upstream INTEGER NOT NULL DEFAULT 0,
            host TEXT NOT NULL,
            family TEXT CHECK (family IN ('h1', 'h2', 'h3')),
            remote_ip TEXT,
            remote_port INTEGER,
            requests INTEGER NOT NULL CHECK (requests >= 0),
            bytes INTEGER NOT NULL CHECK (bytes >= 0),
            share REAL NOT NULL CHECK (share >= 0 AND share <= 1),
            first_ms REAL,
            last_ms REAL,
            PRIMARY KEY (navigation_id, upstream, connection_id)
        ) STRICT""")
    conn.execute("""
        CREATE TABLE hosts (
            navigation_id TEXT NOT NULL REFERENCES navigations (id) ON DELETE CASCADE,
            host TEXT NOT NULL,
            connections INTEGER NOT NULL CHECK (connections >= 0),
            families TEXT NOT NULL,
            PRIMARY KEY (navigation_id, host)
        ) STRICT""")


def m002_views(conn: sqlite3.Connection) -> None:
    """``navigation_summary``, ``connection_shares`` and ``host_bytes`` views."""
    conn.execute("""
        CREATE VIEW navigation_summary AS
        SELECT n.id, n.url, n.origin,
               strftime('%Y-%m-%dT%H:%M:%fZ', n.started_at_ms / 1000.0, 'unixepoch') AS started_at,
               n.started_at_ms,
               n.load_ms AS plt_ms, n.ttfb_ms, n.fcp_ms, n.lcp_ms, n.first_image_ms,
               (SELECT count(*) FROM requests r WHERE r.navigation_id = n.id) AS requests,
               (SELECT count(*) FROM connections c
                 WHERE c.navigation_id = n.id AND c.upstream = 0) AS connections,
               (SELECT coalesce(sum(r.encoded_bytes), 0) FROM requests r
                 WHERE r.navigation_id = n.id) AS bytes,
               (SELECT r.family FROM requests r
                 WHERE r.navigation_id = n.id AND r.is_main_document = 1
                 ORDER BY r.seq DESC LIMIT 1) AS main_family,
               n.source, n.campaign, n.arm, n.condition, n.repetition, n.page,
               n.failed, n.failure, n.warm
        FROM navigations n""")
    conn.execute("""
        CREATE VIEW connection_shares AS
        SELECT c.navigation_id, c.connection_id, c.host, c.family, c.requests, c.bytes,
               CASE WHEN sum(c.bytes) OVER w > 0
                    THEN CAST(c.bytes AS REAL) / sum(c.bytes) OVER w ELSE 0.0 END AS share,
               c.upstream
        FROM connections c
        WINDOW w AS (PARTITION BY c.navigation_id, c.upstream)""")
    conn.execute("""
        CREATE VIEW host_bytes AS
        SELECT r.navigation_id, r.host,
               count(*) AS requests,
               sum(r.encoded_bytes) AS bytes,
               count(DISTINCT r.connection_id) AS connections,
               group_concat(DISTINCT r.family) AS families
        FROM requests r
        GROUP BY r.navigation_id, r.host""")


def m008_late_attach(conn: sqlite3.Connection) -> None:
    """``navigations.late_attach``: NULL, or how the extension joined a navigation already under
    way (``response``, ``commit``; docs/RECORD.md "Late attach"). Older rows are NULL."""
    conn.execute("ALTER TABLE navigations ADD COLUMN late_attach TEXT "
                 "CHECK (late_attach IN ('response', 'commit'))")


MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("m001_initial", m001_initial),
    ("m002_views", m002_views),
    ("m003_lab", _lab.m003_lab),
    ("m004_policy", _policy.m004_policy),
    ("m005_research", _research.m005_research),
    ("m006_research_views", _research.m006_research_views),
    ("m007_policy_rule_ids", _policy.m007_policy_rule_ids),
    ("m008_late_attach", m008_late_attach),
    ("m009_fairness", _fairness.m009_fairness),
    ("m010_cc_probes", _cc.m010_cc_probes),
    ("m011_contributions", _contribute.m011_contributions),
)
"""Every migration in order. Append only."""


@dataclass(frozen=True)
class MigrationState:
    name: str
    """Migration function name."""
    applied_at_ms: float | None
    """Epoch ms it was applied, or None if pending."""


def _ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations "
                 "(name TEXT PRIMARY KEY, applied_at_ms REAL NOT NULL) STRICT")


def _applied(conn: sqlite3.Connection) -> dict[str, float]:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                          "AND name = '_migrations'").fetchone()
    if not exists:
        return {}
    return {row[0]: row[1] for row in conn.execute("SELECT name, applied_at_ms FROM _migrations")}


def migration_states(conn: sqlite3.Connection,
                     migrations: tuple[tuple[str, Migration], ...] = MIGRATIONS,
                     ) -> list[MigrationState]:
    """Every known migration with when it was applied (works on a read-only connection)."""
    done = _applied(conn)
    return [MigrationState(name, done.get(name)) for name, _ in migrations]


def apply_migrations(conn: sqlite3.Connection, now_ms: float,
                     migrations: tuple[tuple[str, Migration], ...] = MIGRATIONS) -> list[str]:
    """Apply pending migrations, each in its own transaction with its record; return their names.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so BEGIN/COMMIT are ours.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        _ensure_table(conn)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    applied: list[str] = []
    for name, migrate in migrations:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            migrate(conn)
            conn.execute("INSERT INTO _migrations (name, applied_at_ms) VALUES (?, ?)",
                         (name, now_ms))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
