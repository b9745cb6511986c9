"""``protolens db forget`` and ``store.forget`` on a real SQLite store filled through ingest."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from protolens.store.forget import ForgetError, normalize_site, on_site
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0
# (origin, requests): make_record's requests alternate a.test, a.test, b.test, one h2
# connection and one hosts row per host
PAGES = [("https://a.test", 4), ("https://www.a.test:8443", 5), ("https://xa.test", 3),
         ("https://b.test", 6)]


def _record(i: int, origin: str, n: int) -> dict[str, Any]:
    rec = make_record(n, seed=100 + i)
    rec["page"]["origin"] = origin
    rec["page"]["url"] = origin + "/page/"
    return rec


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "p.db"
    conn = open_rw(path, now_ms=NOW)
    for i, (origin, n) in enumerate(PAGES):
        ingest(conn, parse_record(_record(i, origin, n)), {}, NOW)
    first = conn.execute("SELECT id FROM navigations WHERE origin = 'https://a.test'").fetchone()[0]
    conn.execute("INSERT INTO navigation_policies (navigation_id, host, rule, arm, mechanism) "
                 "VALUES (?, 'a.test', 'a.test', 'no-h3', 'relay')", (first,))
    conn.close()
    return path


def counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("navigations", "requests", "connections", "hosts", "navigation_policies",
                          "navigation_logs", "navigation_rtts")}
    finally:
        conn.close()


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_forget_site_deletes_its_pages_and_subdomains_and_says_how_many(db: Path) -> None:
    before = counts(db)
    code, out, err = run("db", "forget", "--site", "A.test", "--db", str(db), "--json")
    assert code == 0, err
    deleted = {r["table"]: r["deleted"] for r in json.loads(out)}
    # a.test (4 requests) and www.a.test (5), not xa.test nor b.test
    assert deleted == {"navigations": 2, "requests": 9, "connections": 4, "hosts": 4,
                       "navigation_policies": 1, "navigation_logs": 0,
                       "navigation_rtts": 0}
    after = counts(db)
    assert {t: before[t] - after[t] for t in before} == deleted
    conn = sqlite3.connect(db)
    left = sorted(r[0] for r in conn.execute("SELECT origin FROM navigations"))
    conn.close()
    assert left == ["https://b.test", "https://xa.test"]


def test_forget_site_with_nothing_recorded_deletes_nothing(db: Path) -> None:
    code, out, _ = run("db", "forget", "--site", "c.test", "--db", str(db), "--json")
    assert code == 0
    assert all(r["deleted"] == 0 for r in json.loads(out))
    assert counts(db)["navigations"] == len(PAGES)


def test_forget_all_with_yes_empties_every_table(db: Path) -> None:
    code, out, _ = run("db", "forget", "--all", "--yes", "--db", str(db), "--json")
    assert code == 0
    deleted = {r["table"]: r["deleted"] for r in json.loads(out)}
    assert deleted["navigations"] == len(PAGES)
    assert deleted["requests"] == sum(n for _, n in PAGES)
    assert counts(db) == dict.fromkeys(deleted, 0)


def test_forget_all_asks_first_and_a_no_changes_nothing(db: Path) -> None:
    before = counts(db)
    code, _, err = run("db", "forget", "--all", "--db", str(db), stdin="n\n")
    assert code != 0
    assert "Delete every recorded load" in err
    assert counts(db) == before
    code, out, _ = run("db", "forget", "--all", "--db", str(db), "--csv", stdin="y\n")
    assert code == 0
    assert "navigations,4" in out.replace("\r", "")
    assert counts(db)["navigations"] == 0


@pytest.mark.parametrize("argv, message", [
    (["--site", "not a domain"], "is not a domain name"),
    (["--site", "https://a.test/"], "is not a domain name"),
    ([], "--site DOMAIN or --all"),
    (["--site", "a.test", "--all"], "--site DOMAIN or --all"),
])
def test_bad_arguments_are_one_line_errors_and_change_nothing(
        db: Path, argv: list[str], message: str) -> None:
    before = counts(db)
    code, _, err = run("db", "forget", *argv, "--db", str(db))
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert counts(db) == before


def test_a_missing_store_is_an_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "none.db"
    code, _, err = run("db", "forget", "--all", "--yes", "--db", str(path))
    assert code == 2 and "no database here" in err
    assert not path.exists()


def test_help_has_an_example() -> None:
    code, out, _ = run("db", "forget", "--help")
    assert code == 0 and "Example: protolens db forget" in out


@pytest.mark.parametrize("origin, hit", [
    ("https://a.test", True), ("https://a.test:8443", True), ("http://x.y.a.test", True),
    ("https://xa.test", False), ("https://a.test.evil", False), ("", False),
])
def test_on_site_matches_the_domain_and_its_subdomains(origin: str, hit: bool) -> None:
    assert on_site(origin, "a.test") is hit


def test_normalize_site() -> None:
    assert normalize_site(" *.Example.COM. ") == "example.com"
    with pytest.raises(ForgetError):
        normalize_site("a_b.test")
