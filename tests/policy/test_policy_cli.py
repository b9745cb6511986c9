"""``protolens policy`` against a real SQLite file: add, list, test, remove, and every error."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from protolens.cli import main


def run(db: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["policy", *args, "--db", str(db)])
    return res.exit_code, res.output


def test_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    assert run(db, "list", "--json") == (0, "[]\n")
    assert not db.exists()  # read-only commands never create the store
    assert run(db, "add", "a.test", "h2-parallel:2")[0] == 0
    assert run(db, "add", "*.b.test", "h1", "--latency-ms", "30")[0] == 0
    rows = json.loads(run(db, "list", "--json")[1])
    assert [(r["domain"], r["arm"], r["latency_ms"]) for r in rows] == [
        ("*.b.test", "h1", 30.0), ("a.test", "h2-parallel:2", None)]
    t = json.loads(run(db, "test", "https://img.a.test/x.png", "--json")[1])
    assert (t["rule"], t["arm"], t["mechanism_lab"]) == ("a.test", "h2-parallel:2", "proxy")
    t = json.loads(run(db, "test", "c.test", "--json")[1])
    assert (t["rule"], t["arm"], t["mechanism_browser"]) == (None, "default", "none")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM policies").fetchone()[0] == 2
    assert run(db, "remove", "a.test")[0] == 0
    assert [r["domain"] for r in json.loads(run(db, "list", "--json")[1])] == ["*.b.test"]


def test_errors_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    assert run(db, "add", "a.test", "h1")[0] == 0
    for args, why in ((("add", "a.test", "h2"), "already has a rule (h1)"),
                      (("add", "co.uk", "h1"), "public suffix"),
                      (("add", "a.test", "h2-parallel:9"), "from 1 to 8"),
                      (("add", "x.test", "h1", "--throughput-kbps", "-5"), "throughput"),
                      (("remove", "z.test"), "no rule for z.test"),
                      (("test", "https://"), "not a URL")):
        code, out = run(db, *args)
        assert code == 2, (args, out)
        assert why in out and out.count("\n") == 1 and "Traceback" not in out, out
    assert run(db, "add", "a.test", "h2", "--replace")[0] == 0
    assert json.loads(run(db, "list", "--json")[1])[0]["arm"] == "h2"


def test_relay_prints_the_pac_of_its_domains_matched_as_rules() -> None:
    res = CliRunner().invoke(main, ["relay", "--port", "8853", "--pac", "example.com, www.b.test"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("function FindProxyForURL(url, host) {")
    assert ('if ((h == "example.com" || dnsDomainIs(h, ".example.com"))) '
            'return "PROXY 127.0.0.1:8853";') in res.output
    assert 'if (h == "www.b.test") return "PROXY 127.0.0.1:8853";' in res.output  # that host only
    bad = CliRunner().invoke(main, ["relay", "--pac", "a.test,co.uk"])
    assert bad.exit_code != 0
    assert len(bad.output.strip().splitlines()) == 1 and "--pac: domain 'co.uk'" in bad.output
