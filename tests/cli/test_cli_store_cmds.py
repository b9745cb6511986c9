"""CLI: navigations, show, db (CliRunner against a real SQLite store filled through ingest)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=NOW)
    for seed in range(4):
        ingest(conn, parse_record(make_record(6 + seed, seed=seed)), {"campaign": "c"}, NOW)
    ingest(conn, parse_record(make_record(12, seed=9, family="h1")), {}, NOW)
    for suffix in ("1", "2"):  # two ids sharing a long prefix
        rec = make_record(1, seed=20)
        rec["id"] = "abcdef00-0000-4000-8000-00000000000" + suffix
        rec["page"]["started_at_ms"] = 1.0e12  # older than the others
        ingest(conn, parse_record(rec), {}, NOW - 1e9)
    conn.close()
    return path


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("argv", [["navigations"], ["show"], ["db"], ["db", "stats"],
                                  ["db", "migrate"]])
def test_help_has_an_example(argv: list[str]) -> None:
    code, out, _ = run(*argv, "--help")
    assert code == 0 and "Example: protolens " + argv[0] in out


def test_navigations_json_newest_first(db: Path) -> None:
    code, out, _ = run("navigations", "--db", str(db), "--last", "3", "--json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 3
    assert rows[0]["requests"] == 12 and rows[0]["plt_ms"] == pytest.approx(130.2 + 9)
    assert [r["started_at"] for r in rows] == sorted((r["started_at"] for r in rows), reverse=True)
    for key in ("id", "url", "started_at", "plt_ms", "requests", "connections"):
        assert key in rows[0]


def test_navigations_csv_and_table(db: Path) -> None:
    code, out, _ = run("navigations", "--db", str(db), "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 7 and {r["campaign"] for r in rows} == {"c", ""}
    code, out, _ = run("navigations", "--db", str(db), env={"COLUMNS": "250"})
    first = make_record(12, seed=9, family="h1")["id"][:8]
    assert code == 0 and "a.test/page" in out and first in out


def test_navigations_uses_protolens_db_env(db: Path) -> None:
    code, out, _ = run("navigations", "--json", env={"PROTOLENS_DB": str(db)})
    assert code == 0 and len(json.loads(out)) == 7


def test_missing_db_is_one_line_error_and_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    for argv in (["navigations"], ["show", "abc"], ["db", "stats"], ["db", "migrate", "--list"]):
        code, out, err = run(*argv, "--db", str(missing))
        assert code == 2 and out == ""
        assert err.startswith("error: ") and "no database here" in err and err.count("\n") == 1
        assert not missing.exists()


def test_bad_last_is_usage_error(db: Path) -> None:
    code, _, err = run("navigations", "--db", str(db), "--last", "0")
    assert code == 2 and "--last" in err


def test_show_json_shares(db: Path) -> None:
    raw = make_record(12, seed=9, family="h1")
    code, out, _ = run("show", raw["id"][:13], "--db", str(db), "--json")
    assert code == 0
    detail = json.loads(out)
    assert detail["id"] == raw["id"] and len(detail["requests"]) == 12
    for key in ("url", "host", "protocol", "connection_id", "encoded_bytes"):
        assert detail["requests"][5][key] == raw["requests"][5][key]
    conns = {c["connection_id"]: c for c in detail["connections"]}
    assert set(conns) == {c["connection_id"] for c in raw["connections"]}
    for c in raw["connections"]:
        got = conns[c["connection_id"]]
        assert (got["host"], got["requests"]) == (c["host"], c["requests"])
        assert got["bytes"] == c["bytes"] and got["share"] == pytest.approx(c["share"])
        assert (got["family"], got["protocol"]) == ("h1", "http/1.1")
    assert sum(h["share"] for h in detail["hosts"]) == pytest.approx(1.0)


def test_show_table_and_csv(db: Path) -> None:
    rid = make_record(6, seed=0)["id"]
    code, out, _ = run("show", rid, "--db", str(db), env={"COLUMNS": "200"})
    assert code == 0 and "connections" in out and "b.test" in out and rid in out
    code, out, _ = run("show", rid, "--db", str(db), "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and {r["host"] for r in rows} == {"a.test", "b.test"}


def test_show_unknown_and_ambiguous_ids(db: Path) -> None:
    code, _, err = run("show", "ffffffff", "--db", str(db))
    assert code == 2 and "no navigation with id 'ffffffff'" in err
    code, _, err = run("show", "abcdef", "--db", str(db))
    assert code == 2 and "matches several" in err
    code, _, err = run("show", "%", "--db", str(db))
    assert code == 2 and "no navigation" in err


def test_db_stats(db: Path) -> None:
    code, out, _ = run("db", "stats", "--db", str(db), "--json")
    stats = json.loads(out)
    assert code == 0
    assert (stats["navigations"], stats["requests"]) == (7, 6 + 7 + 8 + 9 + 12 + 2)
    assert stats["sources"] == {"passive": 7} and stats["campaigns"] == 1
    assert stats["bytes_on_disk"] > 0


def test_db_migrate_creates_then_lists(tmp_path: Path) -> None:
    path = tmp_path / "new" / "p.db"
    code, out, _ = run("db", "migrate", "--db", str(path), "--json")
    rows = json.loads(out)
    assert code == 0 and path.exists()
    assert all(r["applied"] and r["applied_now"] for r in rows)
    code, out, _ = run("db", "migrate", "--db", str(path), "--json")
    assert not any(r["applied_now"] for r in json.loads(out))
    code, out, _ = run("db", "migrate", "--list", "--db", str(path), "--json")
    assert code == 0 and [r["name"] for r in json.loads(out)][0] == "m001_initial"


def test_db_stats_on_non_protolens_sqlite_file(tmp_path: Path) -> None:
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    for argv in (["db", "stats"], ["navigations"], ["show", "abc"]):
        code, _, err = run(*argv, "--db", str(other))
        assert code == 2 and "not a ProtoLens store" in err and err.count("\n") == 1, argv


def test_show_and_navigations_say_when_a_load_was_joined_late(tmp_path: Path) -> None:
    path = tmp_path / "late.db"
    conn = open_rw(path, now_ms=NOW)
    late = make_record(3, seed=31)
    late["page"]["late_attach"] = "commit"
    ingest(conn, parse_record(late), {}, NOW)
    ingest(conn, parse_record(make_record(3, seed=32)), {}, NOW)
    conn.close()
    code, out, _ = run("navigations", "--db", str(path), "--json")
    assert code == 0
    assert {r["id"]: r["late_attach"] for r in json.loads(out)} == {
        late["id"]: "commit", make_record(3, seed=32)["id"]: None}
    code, out, _ = run("show", late["id"][:8], "--db", str(path), "--json")
    assert code == 0 and json.loads(out)["late_attach"] == "commit"
    code, out, _ = run("show", late["id"][:8], "--db", str(path))
    assert code == 0 and "late_attach" in out and "commit" in out


def test_show_says_a_missed_page_was_left_before_the_attach(tmp_path: Path) -> None:
    """A ``missed`` record (no request: src/cdp/missed.ts) is listed and shown, and says why."""
    path = tmp_path / "missed.db"
    conn = open_rw(path, now_ms=NOW)
    missed = make_record(0, seed=33)
    missed["page"].update(late_attach="missed", aborted=True, incomplete=True,
                          incomplete_reasons=["aborted"], not_seen=["requests_before_attach"])
    ingest(conn, parse_record(missed), {}, NOW)
    conn.close()
    code, out, _ = run("navigations", "--db", str(path), "--json")
    assert code == 0 and [r["late_attach"] for r in json.loads(out)] == ["missed"]
    code, out, _ = run("show", missed["id"][:8], "--db", str(path))
    assert code == 0 and "committed and left before the attach" in out, out
    assert "requests_before_attach" in out


def test_show_says_a_prerender_page_was_shown_from_its_prerender(tmp_path: Path) -> None:
    """A ``prerender`` record (an activation, src/cdp/missed.ts) is listed and shown, and says
    what it is and that its requests are in no record."""
    path = tmp_path / "prerender.db"
    conn = open_rw(path, now_ms=NOW)
    shown = make_record(0, seed=34)
    shown["page"].update(kind="prerender", not_seen=["requests_before_attach"])
    ingest(conn, parse_record(shown), {}, NOW)
    conn.close()
    code, out, _ = run("navigations", "--db", str(path), "--json")
    assert code == 0 and [r["id"] for r in json.loads(out)] == [shown["id"]]
    code, out, _ = run("show", shown["id"][:8], "--db", str(path))
    assert code == 0 and "shown from a prerender" in out and "aborted" not in out, out
