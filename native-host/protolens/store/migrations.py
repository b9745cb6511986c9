"""The store's schema history: every migration, in order, read top to bottom (the pattern of
sqlite-utils' ``migrations.py``), m010 on in ``migrations_later.py``. Append new ones there;
never edit an applied one. ``migrate.py``
applies them, each in one transaction with its row in ``_migrations``; docs/SCHEMA.md documents
the result.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from protolens.store.migrations_later import (
    m010_cc_probes,
    m011_contributions,
    m012_visual_metrics,
    m013_real_web,
    m014_navigation_logs,
    m015_paths,
    m016_flow_servers,
    m017_fairness_start,
    m018_late_attach_missed,
    m019_kind_prerender,
    m020_arm_summary_complete,
)

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


def m003_lab(conn: sqlite3.Connection) -> None:
    """``campaigns``, ``loads`` and ``flows`` tables for lab campaigns."""
    conn.execute("""
        CREATE TABLE campaigns (
            name TEXT PRIMARY KEY,
            created_at_ms REAL NOT NULL,
            seed INTEGER NOT NULL,
            spec TEXT NOT NULL,
            protolens_version TEXT NOT NULL
        ) STRICT""")
    conn.execute("""
        CREATE TABLE loads (
            load_id TEXT PRIMARY KEY,
            campaign TEXT NOT NULL REFERENCES campaigns (name) ON DELETE CASCADE,
            page TEXT NOT NULL, arm TEXT NOT NULL, condition TEXT NOT NULL,
            repetition INTEGER NOT NULL, warm INTEGER NOT NULL, attempt INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
            reason TEXT,
            started_at_ms REAL NOT NULL,
            wall_ms REAL NOT NULL,
            server_cc TEXT,
            command_line TEXT NOT NULL,
            lateness_max_ns INTEGER,
            lateness_p99_ns INTEGER,
            flagged INTEGER NOT NULL DEFAULT 0,
            flag_reason TEXT
        ) STRICT""")
    conn.execute("CREATE INDEX loads_cell ON loads (campaign, page, arm, condition, repetition)")
    conn.execute("""
        CREATE TABLE flows (
            load_id TEXT NOT NULL REFERENCES loads (load_id) ON DELETE CASCADE,
            proto TEXT NOT NULL,
            client_port INTEGER NOT NULL,
            server_port INTEGER NOT NULL,
            bytes_down INTEGER NOT NULL, bytes_up INTEGER NOT NULL,
            packets_down INTEGER NOT NULL, packets_up INTEGER NOT NULL,
            first_ns INTEGER, last_ns INTEGER,
            PRIMARY KEY (load_id, proto, client_port, server_port)
        ) STRICT""")

def m004_policy(conn: sqlite3.Connection) -> None:
    """``policies`` and ``navigation_policies``."""
    conn.execute("""
        CREATE TABLE policies (
            domain TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('exact', 'wildcard', 'registrable')),
            arm TEXT NOT NULL,
            latency_ms REAL,
            throughput_kbps REAL,
            created_at_ms REAL NOT NULL
        ) STRICT""")
    conn.execute("""
        CREATE TABLE navigation_policies (
            navigation_id TEXT NOT NULL REFERENCES navigations (id) ON DELETE CASCADE,
            host TEXT NOT NULL,
            rule TEXT,
            arm TEXT NOT NULL,
            mechanism TEXT NOT NULL,
            PRIMARY KEY (navigation_id, host)
        ) STRICT""")

def m005_research(conn: sqlite3.Connection) -> None:
    """``bundles`` (every imported bundle) and a ``bundle`` column on every data table: NULL for
    rows recorded here, else the bundle the row came from; ``navigation_provenance`` view."""
    conn.execute("""
        CREATE TABLE bundles (
            id INTEGER PRIMARY KEY,
            checksum TEXT NOT NULL UNIQUE,
            contributor_id TEXT NOT NULL,
            protolens_version TEXT,
            exported_at TEXT,
            imported_at_ms REAL NOT NULL,
            navigations INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            manifest TEXT NOT NULL
        ) STRICT""")
    for table in ("navigations", "requests", "connections", "hosts"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN bundle INTEGER REFERENCES bundles (id)")
    conn.execute("CREATE INDEX navigations_bundle ON navigations (bundle)")
    conn.execute("""
        CREATE VIEW navigation_provenance AS
        SELECT n.id, n.bundle, b.checksum AS bundle_checksum, b.contributor_id,
               b.exported_at, b.imported_at_ms
        FROM navigations n LEFT JOIN bundles b ON b.id = n.bundle""")

def m006_research_views(conn: sqlite3.Connection) -> None:
    """``arm_summary`` (per campaign cell and arm) and ``daily_protocols`` (per day, source and
    main-document protocol) views for researchers (docs/RESEARCH.md)."""
    conn.execute("""
        CREATE VIEW arm_summary AS
        SELECT campaign, page, condition, arm, count(*) AS loads,
               avg(plt_ms) AS mean_plt_ms, min(plt_ms) AS min_plt_ms, max(plt_ms) AS max_plt_ms,
               avg(ttfb_ms) AS mean_ttfb_ms, avg(bytes) AS mean_bytes,
               avg(connections) AS mean_connections
        FROM navigation_summary
        WHERE campaign IS NOT NULL AND failed = 0 AND warm = 0
        GROUP BY campaign, page, condition, arm""")
    conn.execute("""
        CREATE VIEW daily_protocols AS
        SELECT substr(started_at, 1, 10) AS day, source,
               coalesce(main_family, 'unknown') AS family, count(*) AS navigations,
               sum(failed) AS failed, avg(CASE WHEN failed = 0 THEN plt_ms END) AS mean_plt_ms
        FROM navigation_summary
        GROUP BY 1, 2, 3""")

def m007_policy_rule_ids(conn: sqlite3.Connection) -> None:
    """``navigation_policies.rule_ids``: CDP throttling rule ids Chromium reported as applied to
    the host's requests (JSON array; NULL for rows not from a record's ``policies``)."""
    conn.execute("ALTER TABLE navigation_policies ADD COLUMN rule_ids TEXT")


def m008_late_attach(conn: sqlite3.Connection) -> None:
    """``navigations.late_attach``: NULL, or how the extension joined a navigation already under
    way (``response``, ``commit``; docs/RECORD.md "Late attach"). Older rows are NULL."""
    conn.execute("ALTER TABLE navigations ADD COLUMN late_attach TEXT "
                 "CHECK (late_attach IN ('response', 'commit'))")


def m009_fairness(conn: sqlite3.Connection) -> None:
    """``fairness``: one row per side of each repetition of each pair."""
    conn.execute("""
        CREATE TABLE fairness (
            campaign TEXT NOT NULL REFERENCES campaigns (name) ON DELETE CASCADE,
            pair TEXT NOT NULL,
            repetition INTEGER NOT NULL CHECK (repetition >= 1),
            side TEXT NOT NULL CHECK (side IN ('a', 'b')),
            arm TEXT NOT NULL,
            load_id TEXT,
            server_ip TEXT NOT NULL,
            bytes INTEGER NOT NULL CHECK (bytes >= 0),
            share REAL CHECK (share >= 0 AND share <= 1),
            mbps REAL,
            jain REAL,
            contention_ms INTEGER NOT NULL,
            connections INTEGER,
            bin_ms INTEGER NOT NULL,
            series TEXT NOT NULL,
            started_at_ms REAL NOT NULL,
            PRIMARY KEY (campaign, pair, repetition, side)
        ) STRICT""")


MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("m001_initial", m001_initial),
    ("m002_views", m002_views),
    ("m003_lab", m003_lab),
    ("m004_policy", m004_policy),
    ("m005_research", m005_research),
    ("m006_research_views", m006_research_views),
    ("m007_policy_rule_ids", m007_policy_rule_ids),
    ("m008_late_attach", m008_late_attach),
    ("m009_fairness", m009_fairness),
    ("m010_cc_probes", m010_cc_probes),
    ("m011_contributions", m011_contributions),
    ("m012_visual_metrics", m012_visual_metrics),
    ("m013_real_web", m013_real_web),
    ("m014_navigation_logs", m014_navigation_logs),
    ("m015_paths", m015_paths),
    ("m016_flow_servers", m016_flow_servers),
    ("m017_fairness_start", m017_fairness_start),
    ("m018_late_attach_missed", m018_late_attach_missed),
    ("m019_kind_prerender", m019_kind_prerender),
    ("m020_arm_summary_complete", m020_arm_summary_complete),
)
"""Every migration in order. Append only."""
