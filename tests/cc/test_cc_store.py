"""The CC table in a real SQLite store and the commands that read it: ``cc list``,
``report --by-cc`` (Fig. 2(c)), ``show`` (hosts' CC label), ``compare --by-cc``. Probes come from
recorded fixtures; navigations from the research store builder (real ingest)."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.store import cc as ccstore
from protolens.store import open_rw
from scripts.devkit.navrecord_builder import make_record
from scripts.devkit.store_builder import campaign_store, dump, ingest_all

FIX = Path(__file__).parent / "fixtures"


def add_probe(db: Path, fixture: str, host: str, at_ms: float) -> dict[str, Any]:
    d = json.loads((FIX / f"{fixture}.json").read_text())
    row = {**d["row"], "host": host, "probed_at_ms": at_ms}
    conn = open_rw(db, time.time() * 1000)
    try:
        ccstore.insert_probe(conn, row, d["timeline"], "lab")
    finally:
        conn.close()
    return row


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    campaign_store(db, reps=3)
    return db


def test_insert_list_and_latest_decisive_label(store: Path) -> None:
    add_probe(store, "bbr-160k-500", "a.test", 1.0)
    add_probe(store, "bbr-40k-500", "a.test", 2.0)  # newer, but too small to judge
    add_probe(store, "reno-160k-500", "b.test", 3.0)
    conn = sqlite3.connect(store)
    conn.row_factory = sqlite3.Row
    assert ccstore.host_labels(conn) == {"a.test": "delay-based", "b.test": "loss-based"}
    r = cli("cc", "list", "--db", str(store), "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [x["host"] for x in rows] == ["b.test", "a.test", "a.test"]
    assert rows[1]["label"] == "too-small-to-judge" and rows[0]["first_loss_ms"] is not None
    assert ccstore.probe_timeline(conn, "b.test") is not None
    with pytest.raises(sqlite3.IntegrityError):  # same host, address and time
        add_probe(store, "reno-160k-500", "b.test", 3.0)


def test_report_by_cc_is_fig2c(store: Path) -> None:
    r = cli("report", "--by-cc", "--db", str(store), "--json")
    assert r.exit_code == 0 and all(x["delay_based_share"] == 0 for x in json.loads(r.output))
    add_probe(store, "bbr-160k-500", "a.test", 1.0)
    add_probe(store, "reno-160k-500", "b.test", 2.0)
    conn = sqlite3.connect(store)
    per_host = dict(conn.execute(
        "SELECT h.host, sum(h.bytes) FROM host_bytes h JOIN navigations n ON n.id = "
        "h.navigation_id WHERE n.page = 'small' GROUP BY h.host").fetchall())
    r = cli("report", "--by-cc", "--campaign", "camp", "--db", str(store), "--json")
    assert r.exit_code == 0, r.output
    small = next(x for x in json.loads(r.output) if x["page"] == "small")
    want = per_host["a.test"] / (per_host["a.test"] + per_host["b.test"])
    assert small["delay_based_share"] == pytest.approx(want, abs=1e-4)
    assert small["delay_based_share"] + small["loss_based_share"] == pytest.approx(1, abs=1e-3)
    bad = cli("report", "--by-cc", "--campaign", "nope", "--db", str(store))
    assert bad.exit_code == 2 and "nope" in bad.output


def test_show_and_compare_group_by_cc(store: Path) -> None:
    add_probe(store, "bbr-160k-500", "a.test", 1.0)
    conn = sqlite3.connect(store)
    nav = conn.execute("SELECT id FROM navigations LIMIT 1").fetchone()[0]
    r = cli("show", nav, "--db", str(store), "--json")
    hosts = {h["host"]: h["cc_label"] for h in json.loads(r.output)["hosts"]}
    assert hosts == {"a.test": "delay-based", "b.test": None}
    assert "Server CC: a.test delay-based" in cli("show", nav, "--db", str(store)).output
    r = cli("compare", "--campaign", "camp", "--by-cc", "--db", str(store), "--json")
    assert r.exit_code == 0, r.output
    groups = {x["group"] for x in json.loads(r.output)}
    assert groups == {"small [delay-based]", "large [delay-based]"}


def test_read_commands_change_nothing_and_old_store_errors(tmp_path: Path, store: Path) -> None:
    before = dump(store)
    for args in (("cc", "list"), ("report", "--by-cc"), ("compare", "--campaign", "camp",
                                                         "--by-cc")):
        cli(*args, "--db", str(store))
    assert dump(store) == before
    missing = tmp_path / "none.db"
    r = cli("cc", "list", "--db", str(missing))
    assert r.exit_code == 2 and not missing.exists()


def test_plot_cc_queue(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "q.png"
    r = cli("plot", "cc-queue", "--out", str(out), "--db", str(store))
    assert r.exit_code == 2 and "no stored CC probe" in r.output and not out.exists()
    add_probe(store, "cubic-nohystart-160k-500", "a.test", 1.0)
    r = cli("plot", "cc-queue", "--out", str(out), "--host", "a.test", "--db", str(store))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_policy_suggest_needs_data_and_says_why(tmp_path: Path) -> None:
    """The store's campaign: h2 is 1.5 s slower than h1 under 'lossy', equal under 'clean'."""
    store = tmp_path / "s8.db"
    campaign_store(store, reps=8)
    r = cli("policy", "suggest", "--campaign", "camp", "--db", str(store), "--json")
    assert r.exit_code == 0, r.output
    rows = {(x["domain"], x["page"], x["condition"]): x for x in json.loads(r.output)}
    lossy, clean = rows[("a.test", "large", "lossy")], rows[("a.test", "large", "clean")]
    assert lossy["arm"] == "h1" and lossy["confidence"] == "medium"
    assert "not probed" in lossy["why"]
    assert clean["arm"] is None and clean["why"].startswith("no proposal")
    add_probe(store, "bbr-160k-500", "a.test", 1.0)
    r = cli("policy", "suggest", "--campaign", "camp", "--db", str(store), "--json", "--apply")
    assert r.exit_code == 0, r.output
    lossy = next(x for x in json.loads(r.stdout) if x["condition"] == "lossy")
    assert len(json.loads(r.stdout)) == 4  # two pages x two conditions
    assert "added: a.test -> h1" in r.stderr
    assert lossy["confidence"] == "high" and "delay-based" in lossy["why"]
    rules = json.loads(cli("policy", "list", "--db", str(store), "--json").output)
    assert [(x["domain"], x["arm"]) for x in rules] == [("a.test", "h1")]
    none = cli("policy", "suggest", "--campaign", "nope", "--db", str(store))
    assert none.exit_code == 2 and "nothing to suggest" in none.output


def test_suggest_never_proposes_from_a_label_alone() -> None:
    from protolens.cc.suggest import domains_to_apply, suggest
    rows = [{"origin": "https://x.test", "arm": "h1", "condition": "c", "plt_ms": 1000.0},
            {"origin": "https://x.test", "arm": "h2", "condition": "c", "plt_ms": 3000.0}]
    out = suggest(rows, {"x.test": "delay-based"}, "campaign")
    assert [s.arm for s in out] == [None] and "too few loads" in out[0].why
    assert domains_to_apply(out) == []


def test_suggest_learns_from_complete_loads_only() -> None:
    """The loads a policy suggestion learns from are those compare takes (record/comparable.py):
    six h1 loads that waited on a dialog (incomplete, 5 s) do not make h2 look faster."""
    from protolens.cc.suggest import suggest
    row = {"origin": "https://x.test", "condition": "c", "warm": 0, "failed": 0}
    rows = [{**row, "arm": "h1", "plt_ms": 1000.0 + i} for i in range(6)] + \
        [{**row, "arm": "h2", "plt_ms": 1100.0 + i} for i in range(6)]
    stalled = [{**row, "arm": "h1", "plt_ms": 5000.0 + i, "incomplete": 1} for i in range(6)]
    plain, = suggest(rows, {}, "campaign")
    again, = suggest(rows + stalled, {}, "campaign")
    assert again.row() == plain.row()


def page_store(db: Path) -> str:
    """One navigation: a.test serves a 320 kB object (most bytes), b.test a 40 kB one."""
    rec = make_record(n_requests=5, seed=3)
    objs = {1: ("a.test", "320k", 320_000), 2: ("b.test", "40k", 40_000),
            4: ("a.test", "20k", 20_000)}
    for i, (host, name, size) in objs.items():
        r = rec["requests"][i]
        r.update(url=f"https://{host}/_testbed/{name}.bin", host=host, encoded_bytes=size + 200,
                 body_bytes=size)
    ingest_all(db, [rec])
    return str(sqlite3.connect(db).execute("SELECT id FROM navigations").fetchone()[0])


def test_page_hosts_pick_each_hosts_biggest_object(tmp_path: Path) -> None:
    from protolens.cc.website import top_hosts
    db = tmp_path / "p.db"
    nav = page_store(db)
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    targets = top_hosts(ccstore.page_hosts(conn, nav), 5)
    assert [t.host for t in targets] == ["a.test", "b.test"]
    assert targets[0].url == "https://a.test/_testbed/320k.bin"
    assert targets[0].share > 0.85 and targets[0].object_bytes == 320_000
    r = cli("cc", "probe", "--page", "nope", "--db", str(db))
    assert r.exit_code == 2 and "no navigation" in r.output
    r = cli("cc", "probe", "https://a.test/", "--page", nav, "--db", str(db))
    assert r.exit_code == 2 and "one of them" in r.output
    r = cli("cc", "probe", "--url", "ftp://x/", "--db", str(db))
    assert r.exit_code == 2 and "not an http(s) URL" in r.output
    r = cli("cc", "probe", "https://a.test/x", "--testbed", "nosuchtb", "--db", str(db))
    assert r.exit_code == 2 and "is not up" in r.output
