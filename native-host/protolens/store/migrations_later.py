"""The store's schema history, second part: the migrations from m010 on (``migrations.py``
holds the first ones and the ordered list, and says how they are applied). Append new ones here;
never edit an applied one.
"""

from __future__ import annotations

import sqlite3


def m010_cc_probes(conn: sqlite3.Connection) -> None:
    """``cc_probes`` (every fingerprint probe) and ``cc_host_labels`` (each host's latest
    decisive label: loss-based or delay-based; hosts never judged are absent)."""
    conn.execute("""
        CREATE TABLE cc_probes (
            host TEXT NOT NULL,
            server_ip TEXT NOT NULL,
            probed_at_ms REAL NOT NULL,
            url TEXT NOT NULL,
            label TEXT NOT NULL CHECK (label IN
                ('loss-based', 'delay-based', 'too-small-to-judge', 'inconclusive')),
            reason TEXT NOT NULL,
            max_queue_bytes INTEGER NOT NULL CHECK (max_queue_bytes >= 0),
            max_queue_fraction REAL NOT NULL,
            time_to_max_ms REAL,
            first_loss_ms REAL,
            bytes INTEGER NOT NULL CHECK (bytes >= 0),
            mss INTEGER NOT NULL,
            packet_bytes INTEGER NOT NULL,
            rtt_ms REAL NOT NULL,
            measured_rtt_ms REAL,
            transfer_ms REAL NOT NULL,
            http_version TEXT,
            server_cc TEXT,
            network TEXT NOT NULL CHECK (network IN ('lab', 'wan')),
            wall_ms REAL,
            timeline TEXT NOT NULL,
            PRIMARY KEY (host, server_ip, probed_at_ms)
        ) STRICT""")
    conn.execute("""
        CREATE VIEW cc_host_labels AS
        SELECT host, label, server_ip, probed_at_ms FROM (
            SELECT host, label, server_ip, probed_at_ms,
                   row_number() OVER (PARTITION BY host ORDER BY probed_at_ms DESC) AS k
            FROM cc_probes WHERE label IN ('loss-based', 'delay-based'))
        WHERE k = 1""")


def m011_contributions(conn: sqlite3.Connection) -> None:
    """``contributions``: one row per upload a collector accepted (``store/contribute.py``,
    docs/COLLECTOR.md)."""
    conn.execute("""
        CREATE TABLE contributions (
            id INTEGER PRIMARY KEY,
            collector TEXT NOT NULL,
            checksum TEXT NOT NULL,
            ingested_upto_ms REAL NOT NULL,
            navigations INTEGER NOT NULL,
            accepted_at_ms REAL NOT NULL,
            receipt TEXT NOT NULL
        ) STRICT""")


def m012_visual_metrics(conn: sqlite3.Connection) -> None:
    """``navigations``: the visual milestones ``first_visual_change_ms``, ``speed_index_ms``,
    ``visual_complete_85_ms``, ``visual_complete_99_ms``, ``last_visual_change_ms`` (docs/RECORD.md
    "Visual metrics"; ``record/columns.py`` VISUAL_MILESTONES at the time). Older rows are NULL."""
    for name in ("first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms",
                 "visual_complete_99_ms", "last_visual_change_ms"):
        conn.execute(f"ALTER TABLE navigations ADD COLUMN {name} REAL")


def m013_real_web(conn: sqlite3.Connection) -> None:
    """``navigations``: ``kind`` (navigation, soft, bfcache), ``incomplete`` and
    ``incomplete_reasons`` (JSON list), ``open_at_end``, ``downloads``, ``not_seen`` (JSON list);
    ``requests``: the phases ``dns_ms`` .. ``receive_ms``; ``connections``: the set-up
    ``setup_ms``, ``dns_ms``, ``connect_ms``, ``tls_ms`` (docs/RECORD.md). Older rows are NULL."""
    conn.execute("ALTER TABLE navigations ADD COLUMN kind TEXT "
                 "CHECK (kind IN ('navigation', 'soft', 'bfcache'))")
    for name, sql in (("incomplete", "INTEGER"), ("incomplete_reasons", "TEXT"),
                      ("open_at_end", "INTEGER"), ("downloads", "INTEGER"), ("not_seen", "TEXT")):
        conn.execute(f"ALTER TABLE navigations ADD COLUMN {name} {sql}")
    for name in ("dns_ms", "connect_ms", "tls_ms", "send_ms", "wait_ms", "receive_ms"):
        conn.execute(f"ALTER TABLE requests ADD COLUMN {name} REAL")
    for name in ("setup_ms", "dns_ms", "connect_ms", "tls_ms"):
        conn.execute(f"ALTER TABLE connections ADD COLUMN {name} REAL")


def m014_navigation_logs(conn: sqlite3.Connection) -> None:
    """``navigation_logs``: the raw DevTools events of a load, kept by the log tap (gzipped JSONL,
    one event per line) with the recorder's options, for ``protolens replay --navigation``
    (``store/logs.py``, docs/MESSAGES.md ``log``). Deleted with its navigation; never exported,
    bundled or contributed (those read named columns of the record tables only)."""
    conn.execute("""
        CREATE TABLE navigation_logs (
            navigation_id TEXT PRIMARY KEY REFERENCES navigations (id) ON DELETE CASCADE,
            log BLOB NOT NULL,
            options TEXT NOT NULL,
            stored_at_ms REAL NOT NULL
        ) STRICT""")


def m015_paths(conn: sqlite3.Connection) -> None:
    """``campaign_runs``: each run (or ``--resume``) of a campaign with the path it used
    (testbed, wan or direct), the uplink and name servers, and each condition's shaper settings
    (JSON, ``lab/path_rtt.py`` ``profile_settings``); ``navigation_rtts``: per navigation and
    host, the base RTT its connections' set-up gave, the profile's RTT and their difference, the
    path's own share (``lab/path_rtt.py``)."""
    conn.execute("""
        CREATE TABLE campaign_runs (
            campaign TEXT NOT NULL REFERENCES campaigns (name) ON DELETE CASCADE,
            started_at_ms REAL NOT NULL,
            network TEXT NOT NULL
        ) STRICT""")
    conn.execute("""
        CREATE TABLE navigation_rtts (
            navigation_id TEXT NOT NULL REFERENCES navigations (id) ON DELETE CASCADE,
            host TEXT NOT NULL,
            observed_rtt_ms REAL NOT NULL,
            profile_rtt_ms REAL NOT NULL,
            path_rtt_ms REAL NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('tcp', 'quic')),
            connections INTEGER NOT NULL,
            PRIMARY KEY (navigation_id, host)
        ) STRICT""")


def m016_flow_servers(conn: sqlite3.Connection) -> None:
    """``flows.server_ip``, in the key: one client port can carry flows to two servers (Linux
    reuses an ephemeral port towards another destination, RFC 6056 Sec. 3.3.3's per-destination
    offset; ICMP has no ports at all), and a load with two such flows could not be stored.
    Rebuilt as SQLite's documented way to change a key (lang_altertable.html, "Making Other
    Kinds Of Table Schema Changes"); rows stored before have ``''``."""
    conn.execute("""
        CREATE TABLE flows_new (
            load_id TEXT NOT NULL REFERENCES loads (load_id) ON DELETE CASCADE,
            proto TEXT NOT NULL,
            client_port INTEGER NOT NULL,
            server_ip TEXT NOT NULL DEFAULT '',
            server_port INTEGER NOT NULL,
            bytes_down INTEGER NOT NULL, bytes_up INTEGER NOT NULL,
            packets_down INTEGER NOT NULL, packets_up INTEGER NOT NULL,
            first_ns INTEGER, last_ns INTEGER,
            PRIMARY KEY (load_id, proto, client_port, server_ip, server_port)
        ) STRICT""")
    cols = ("load_id, proto, client_port, server_port, bytes_down, bytes_up, packets_down, "
            "packets_up, first_ns, last_ns")
    conn.execute(f"INSERT INTO flows_new ({cols}) SELECT {cols} FROM flows")
    conn.execute("DROP TABLE flows")
    conn.execute("ALTER TABLE flows_new RENAME TO flows")


def m017_fairness_start(conn: sqlite3.Connection) -> None:
    """``fairness.start_ms``: how long after the other side this side's first packet went through
    the shaper (0 for the side that started first); NULL for rows stored before."""
    conn.execute("ALTER TABLE fairness ADD COLUMN start_ms REAL CHECK (start_ms >= 0)")


def m018_late_attach_missed(conn: sqlite3.Connection) -> None:
    """``navigations.late_attach`` may be ``missed``: a document that committed and was left while
    the debugger was attaching, recorded from webNavigation alone (docs/RECORD.md "Late attach").
    Widening a CHECK changes no stored row, so the column's definition is rewritten in place, as
    SQLite documents for CHECK constraints (lang_altertable.html, "Making Other Kinds Of Table
    Schema Changes", the ``writable_schema`` procedure), instead of rebuilding the table and the
    views over it; ``PRAGMA integrity_check`` is run after, and any row it finds fails the
    migration."""
    _widen_navigations_check(conn, "late_attach", "m018",
                             "CHECK (late_attach IN ('response', 'commit'))",
                             "CHECK (late_attach IN ('response', 'commit', 'missed'))")


def m019_kind_prerender(conn: sqlite3.Connection) -> None:
    """``navigations.kind`` may be ``prerender``: a page shown from a prerender (its activation),
    recorded from webNavigation alone (docs/RECORD.md "Kinds"). The CHECK is widened in place,
    as m018 did."""
    _widen_navigations_check(conn, "kind", "m019",
                             "CHECK (kind IN ('navigation', 'soft', 'bfcache'))",
                             "CHECK (kind IN ('navigation', 'soft', 'bfcache', 'prerender'))")


def m020_arm_summary_complete(conn: sqlite3.Connection) -> None:
    """``arm_summary`` takes the loads every other figure takes (``record/comparable.py``:
    successful, cold, complete): until now it averaged loads whose record is incomplete (a load
    that waited on a dialog, ran in a hidden tab, or was cut by a cap) with the others. The rule is
    written out here, not imported, so that this migration stays what it was applied as;
    tests/store/test_views.py holds the view to the rule."""
    conn.execute("DROP VIEW arm_summary")
    conn.execute("""
        CREATE VIEW arm_summary AS
        SELECT s.campaign, s.page, s.condition, s.arm, count(*) AS loads,
               avg(s.plt_ms) AS mean_plt_ms, min(s.plt_ms) AS min_plt_ms,
               max(s.plt_ms) AS max_plt_ms, avg(s.ttfb_ms) AS mean_ttfb_ms,
               avg(s.bytes) AS mean_bytes, avg(s.connections) AS mean_connections
        FROM navigation_summary s JOIN navigations n ON n.id = s.id
        WHERE s.campaign IS NOT NULL
          AND n.failed = 0 AND n.warm = 0 AND coalesce(n.incomplete, 0) = 0
        GROUP BY s.campaign, s.page, s.condition, s.arm""")


def _widen_navigations_check(conn: sqlite3.Connection, column: str, migration: str, old: str,
                             new: str) -> None:
    """Rewrites one CHECK of ``navigations`` from ``old`` to ``new`` in place (SQLite's
    ``writable_schema`` procedure for CHECK changes); stops, changing nothing, unless ``old``
    occurs exactly once in the table's definition, and fails unless the integrity check after it
    passes."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' "
                       "AND name = 'navigations'").fetchone()[0]
    if sql.count(old) != 1:
        raise sqlite3.DatabaseError(f"navigations.{column}: unexpected definition")
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute("UPDATE sqlite_master SET sql = ? "
                     "WHERE type = 'table' AND name = 'navigations'", (sql.replace(old, new),))
        conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    problems = [r[0] for r in conn.execute("PRAGMA integrity_check")]
    if problems != ["ok"]:
        raise sqlite3.DatabaseError(f"integrity check after {migration}: {problems[:3]}")
