"""The SQLite store: migrations, WAL, idempotent and atomic ingest, read-only opens, views."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from protolens.record import parse_record
from protolens.store import StoreError, ingest, open_ro, open_rw
from protolens.store.migrate import apply_migrations, migration_states
from protolens.store.migrations import MIGRATIONS
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0
APPLIED_NAMES = (
    "m001_initial", "m002_views", "m003_lab", "m004_policy", "m005_research",
    "m006_research_views", "m007_policy_rule_ids", "m008_late_attach", "m009_fairness",
    "m010_cc_probes", "m011_contributions", "m012_visual_metrics", "m013_real_web",
    "m014_navigation_logs", "m015_paths", "m016_flow_servers", "m017_fairness_start",
    "m018_late_attach_missed", "m019_kind_prerender", "m020_arm_summary_complete",
)


def count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_fresh_store_is_wal_with_foreign_keys_and_all_migrations(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "sub" / "p.db", now_ms=NOW)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    states = migration_states(conn)
    # The names are pinned, not read back from MIGRATIONS: existing stores record them in
    # schema_migrations, so renaming or reordering one would re-run it on every old store.
    assert [s.name for s in states] == list(APPLIED_NAMES)
    assert [name for name, _ in MIGRATIONS] == list(APPLIED_NAMES)
    assert all(s.applied_at_ms == NOW for s in states)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert {"navigations", "requests", "connections", "hosts", "navigation_summary",
            "connection_shares", "host_bytes"} <= names


def _open_after(barrier: Any, path: str, results: Any) -> None:
    barrier.wait()
    try:
        open_rw(Path(path), now_ms=NOW).close()
        results.put("ok")
    except StoreError as exc:
        results.put(str(exc))


def test_two_processes_create_the_same_fresh_store(tmp_path: Path) -> None:
    """Chromium starts one host per port, so two may create the store at the same instant.
    Before the WAL-switch retry, about 1 pair in 15 answered 'database is locked' here."""
    ctx = multiprocessing.get_context("fork")
    outcomes = []
    for i in range(40):
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_open_after, args=(barrier, str(tmp_path / f"{i}.db"), results))
                 for _ in range(2)]
        for p in procs:
            p.start()
        outcomes += [results.get(timeout=30) for _ in procs]
        for p in procs:
            p.join(timeout=30)
    assert outcomes == ["ok"] * 80
    conn = open_ro(tmp_path / "0.db")
    assert count(conn, "_migrations") == len(MIGRATIONS)


def test_migrations_apply_once(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    assert apply_migrations(conn, NOW + 1) == []
    assert count(conn, "_migrations") == len(MIGRATIONS)


def test_flows_stored_before_server_ip_keep_their_counts(tmp_path: Path) -> None:
    """``m016_flow_servers`` rebuilds ``flows`` around a key with the server's address."""
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    before = MIGRATIONS[:[n for n, _ in MIGRATIONS].index("m016_flow_servers")]
    conn.close()
    (tmp_path / "p.db").unlink()
    conn = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
    apply_migrations(conn, NOW, before)
    conn.execute("INSERT INTO campaigns VALUES ('c', 0, 1, '{}', 'v')")
    conn.execute("INSERT INTO loads (load_id, campaign, page, arm, condition, repetition, warm, "
                 "attempt, status, started_at_ms, wall_ms, command_line) VALUES "
                 "('l', 'c', 'p', 'h2', 'wifi', 1, 0, 1, 'ok', 0, 1, 'chromium')")
    conn.execute("INSERT INTO flows VALUES ('l', 'tcp', 40001, 443, 3000, 100, 3, 2, 1, 2)")
    assert apply_migrations(conn, NOW) == list(APPLIED_NAMES[APPLIED_NAMES.index(
        "m016_flow_servers"):])
    row = conn.execute("SELECT server_ip, bytes_down, last_ns FROM flows").fetchone()
    assert tuple(row) == ("", 3000, 2)
    conn.execute("INSERT INTO flows VALUES ('l', 'tcp', 40001, '198.18.6.3', 443, 1, 1, 1, 1, "
                 "1, 2)")  # the same client port towards another server
    assert count(conn, "flows") == 2


def test_failing_migration_leaves_no_record_and_no_partial_schema(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)

    def m003_broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half (x INTEGER)")
        c.execute("THIS IS NOT SQL")

    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(conn, NOW, (*MIGRATIONS, ("m003_broken", m003_broken)))
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'half'").fetchone() is None
    assert conn.execute("SELECT 1 FROM _migrations WHERE name = 'm003_broken'").fetchone() is None


def test_ingest_writes_every_row_and_is_idempotent(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    raw = make_record(9)
    rec = parse_record(raw)
    assert ingest(conn, rec, {}, NOW) is True
    assert ingest(conn, rec, {}, NOW) is False
    assert count(conn, "navigations") == 1
    assert count(conn, "requests") == 9
    assert count(conn, "connections") == len(raw["connections"])
    assert count(conn, "hosts") == 2
    row = conn.execute("SELECT * FROM requests WHERE request_id = ?",
                       (raw["requests"][4]["request_id"],)).fetchone()
    for key in ("url", "host", "protocol", "family", "connection_id", "encoded_bytes",
                "body_bytes", "start_ms", "end_ms"):
        assert row[key] == raw["requests"][4][key], key


def test_ingest_is_atomic_when_a_row_fails(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    raw = make_record(6)
    rec = parse_record(raw)
    # A trigger makes the hosts insert (the last step) fail after the other rows were written.
    conn.execute("CREATE TRIGGER boom BEFORE INSERT ON hosts BEGIN "
                 "SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(sqlite3.IntegrityError, match="boom"):
        ingest(conn, rec, {}, NOW)
    assert not conn.in_transaction
    for table in ("navigations", "requests", "connections", "hosts"):
        assert count(conn, table) == 0, table
    conn.execute("DROP TRIGGER boom")
    assert ingest(conn, rec, {}, NOW) is True


def test_foreign_keys_enforced(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("INSERT INTO hosts (navigation_id, host, connections, families) "
                     "VALUES ('nope', 'a', 1, '[]')")


def test_read_only_never_creates_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "p.db"
    with pytest.raises(StoreError, match="no database here"):
        open_ro(missing)
    assert not missing.exists() and not missing.parent.exists()


def test_read_only_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    open_rw(path, now_ms=NOW).close()
    ro = open_ro(path)
    assert count(ro, "navigations") == 0
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("DELETE FROM navigations")


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="p.db"):
        open_ro(path)
    with pytest.raises(StoreError, match="p.db"):
        open_rw(path, time.time() * 1000)


def summary(conn: sqlite3.Connection) -> dict[str, Any]:
    return dict(conn.execute("SELECT * FROM navigation_summary").fetchone())


def test_views_summarise_a_record(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    raw = make_record(12, family="h1")
    ingest(conn, parse_record(raw), {"campaign": "c", "arm": "h1", "condition": "loss2",
                                     "repetition": "4", "page": "p1"}, NOW)
    s = summary(conn)
    assert s["id"] == raw["id"] and s["plt_ms"] == raw["milestones"]["load_ms"]
    assert s["requests"] == 12 and s["connections"] == len(raw["connections"])
    assert s["bytes"] == sum(r["encoded_bytes"] for r in raw["requests"])
    assert s["main_family"] == "h1" and s["started_at"].startswith("2025-11-22T")
    assert (s["campaign"], s["arm"], s["condition"], s["repetition"], s["page"]) == (
        "c", "h1", "loss2", 4, "p1")
    shares = conn.execute("SELECT connection_id, bytes, share FROM connection_shares "
                          "ORDER BY connection_id").fetchall()
    expected = {c["connection_id"]: c["share"] for c in raw["connections"]}
    assert len(shares) == len(expected)
    for cid, _, share in shares:
        assert share == pytest.approx(expected[cid])


def test_upstream_connections_are_shared_separately(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    raw = make_record(3)
    raw["connections"].append({**raw["connections"][0], "upstream": True, "share": 1.0})
    ingest(conn, parse_record(raw), {}, NOW)
    assert summary(conn)["connections"] == len(raw["connections"]) - 1
    up = conn.execute("SELECT share FROM connection_shares WHERE upstream = 1").fetchall()
    assert [r[0] for r in up] == [1.0]
    down = conn.execute("SELECT sum(share) FROM connection_shares WHERE upstream = 0").fetchone()
    assert down[0] == pytest.approx(1.0)


def test_failed_navigation_columns(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    raw = make_record(1)
    raw["page"]["error"] = "net::ERR_CONNECTION_REFUSED"
    ingest(conn, parse_record(raw), {}, NOW)
    raw2 = make_record(1, seed=5)
    raw2["page"]["aborted"] = True
    ingest(conn, parse_record(raw2), {}, NOW)
    rows = conn.execute("SELECT failed, failure FROM navigations ORDER BY started_at_ms").fetchall()
    assert [tuple(r) for r in rows] == [(1, "net::ERR_CONNECTION_REFUSED"), (1, "aborted")]


def _before(name: str) -> tuple[Any, ...]:
    """The migrations before ``name``."""
    return MIGRATIONS[:[n for n, _ in MIGRATIONS].index(name)]


WIDENED = [
    # (migration, column, a value stored before it, the value it allows, its CHECK's list edited)
    ("m018_late_attach_missed", "late_attach", "commit", "missed",
     ("'response', 'commit'", "'commit', 'response'")),
    ("m019_kind_prerender", "kind", "bfcache", "prerender",
     ("'soft', 'bfcache'", "'bfcache', 'soft'")),
]


@pytest.mark.parametrize(("migration", "column", "kept", "allowed", "edit"), WIDENED)
def test_a_widened_check_accepts_its_value_after_its_migration_and_older_rows_are_kept(
        tmp_path: Path, migration: str, column: str, kept: str, allowed: str,
        edit: tuple[str, str]) -> None:
    """m018 (``late_attach`` may be ``missed``) and m019 (``kind`` may be ``prerender``) widen a
    column's CHECK in place: a row stored before keeps its value, the new value is stored after,
    anything else is still refused, and the views over ``navigations`` still read."""
    conn = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
    apply_migrations(conn, NOW, _before(migration))
    old = make_record(2)
    old["page"][column] = kept
    ingest(conn, parse_record(old), {}, NOW)
    new = make_record(0)
    new["page"][column] = allowed
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        ingest(conn, parse_record(new), {}, NOW)
    assert apply_migrations(conn, NOW, MIGRATIONS[:len(_before(migration)) + 1]) == [migration]
    ingest(conn, parse_record(new), {}, NOW)
    stored = dict(conn.execute(f"SELECT id, {column} FROM navigations").fetchall())
    assert stored == {old["id"]: kept, new["id"]: allowed}
    assert count(conn, "navigation_summary") == 2
    with pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute(f"UPDATE navigations SET {column} = 'other' WHERE id = ?", (old["id"],))
    assert [r[0] for r in conn.execute("PRAGMA integrity_check")] == ["ok"]


@pytest.mark.parametrize(("migration", "column", "kept", "allowed", "edit"), WIDENED)
def test_a_widening_refuses_a_navigations_table_it_does_not_know_and_changes_nothing(
        tmp_path: Path, migration: str, column: str, kept: str, allowed: str,
        edit: tuple[str, str]) -> None:
    """A column defined otherwise than the store made it (edited by hand): the migration stops
    with its error, and its transaction leaves the schema and ``_migrations`` as they were."""
    conn = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
    apply_migrations(conn, NOW, _before(migration))
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = 'navigations'",
                 edit)
    conn.execute(f"PRAGMA schema_version = {version + 1}")
    conn.execute("PRAGMA writable_schema = OFF")
    before = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'navigations'").fetchone()
    with pytest.raises(sqlite3.DatabaseError, match=f"{column}: unexpected definition"):
        apply_migrations(conn, NOW)
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'navigations'").fetchone() \
        == before
    assert migration not in {r[0] for r in conn.execute("SELECT name FROM _migrations")}
