"""Export keeps only what the documented anonymization keeps (issue 15, defect 12), one test per
detail that identified a volunteer: remote ports, non-default ports in origins, tags in clear,
the renderer's process id inside CDP request ids."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from protolens.cli import main
from protolens.share import export
from protolens.share.bundle import read_bundle
from protolens.store import open_ro
from scripts.devkit.store_builder import ingest_all, lab_record

NOW = 1_763_950_000_000.0


def _bundle(tmp: Path, records: list[dict[str, Any]],
            keep: frozenset[str] = frozenset()) -> dict[str, list[dict[str, Any]]]:
    db = tmp / "local.db"
    ingest_all(db, records)
    out = tmp / "b.tar"
    built = export.build(open_ro(db), allow=frozenset(), since_ms=None, now_ms=NOW,
                         contributor_id="ab" * 16, keep_campaigns=keep)
    export.write(built, out, NOW)
    return {name: table.to_pylist() for name, table in read_bundle(out).tables.items()}


def _text(tables: dict[str, list[dict[str, Any]]]) -> str:
    return json.dumps(tables, default=str)


def test_no_remote_port_leaves_the_machine(tmp_path: Path) -> None:
    rec = lab_record(1, "", "", "", "", 0, 1000.0, source="passive")
    for r in rec["requests"]:
        r["remote_port"] = 51234
    for c in rec["connections"]:
        c["remote_port"] = 51234
    tables = _bundle(tmp_path, [rec])
    assert "remote_port" not in tables["requests"][0]
    assert "remote_port" not in tables["connections"][0]
    assert "51234" not in _text(tables)


def test_exported_origins_carry_no_port(tmp_path: Path) -> None:
    rec = lab_record(2, "", "", "", "", 0, 1000.0, source="passive")
    rec["page"]["url"] = "https://a.test:8443/page/?q=1"
    rec["page"]["origin"] = "https://a.test:8443"
    rec["page"]["redirects"] = ["http://a.test:8080/old"]
    rec["requests"][0]["url"] = rec["page"]["url"]
    tables = _bundle(tmp_path, [rec])
    nav = tables["navigations"][0]
    assert re.fullmatch(r"https://anon-[0-9a-f]{16}", nav["origin"]) and nav["url"] == \
        nav["origin"]
    assert re.fullmatch(r'\["http://anon-[0-9a-f]{16}"\]', nav["redirects"])
    assert all(re.fullmatch(r"https://anon-[0-9a-f]{16}", r["url"]) for r in tables["requests"])
    assert "8443" not in _text(tables) and "8080" not in _text(tables)


def test_tags_are_in_clear_only_when_they_are_protolens_names(tmp_path: Path) -> None:
    own = lab_record(3, "ifip18-wifi-20261124-101500-wifi", "ifip18-wikipedia", "wifi-lossy",
                     "h2-parallel:2", 1, 1000.0)
    mine = lab_record(4, "alice/private/path", "bob-home-page", "alice-basement-dsl",
                      "alices-arm", 2, 1100.0)
    mine["context"]["server_cc"] = "alice-cc"
    kept = lab_record(5, "camp", "custom-10x100k", "clean", "no-h3", 3, 1200.0)
    tables = _bundle(tmp_path, [own, mine, kept], keep=frozenset({"camp"}))
    rows = {r["repetition"]: r for r in tables["navigations"]}
    tags = ("campaign", "page", "condition", "arm", "server_cc")
    assert [rows[1][t] for t in tags] == ["ifip18-wifi-20261124-101500-wifi", "ifip18-wikipedia",
                                          "wifi-lossy", "h2-parallel:2", "cubic"]
    assert [rows[3][t] for t in tags] == ["camp", "custom-10x100k", "clean", "no-h3", "cubic"]
    assert all(re.fullmatch(r"anon-[0-9a-f]{16}", rows[2][t]) for t in tags), rows[2]
    assert json.loads(rows[2]["context"]) == {t: rows[2][t] for t in (*tags, "repetition")}
    assert "alice" not in _text(tables) and "bob" not in _text(tables)


def test_a_campaign_not_listed_is_a_token_the_same_for_all_its_loads(tmp_path: Path) -> None:
    recs = [lab_record(10 + i, "camp", "p", "clean", "h2", i, 1000.0 + i) for i in range(3)]
    tables = _bundle(tmp_path, recs)
    campaigns = {r["campaign"] for r in tables["navigations"]}
    assert len(campaigns) == 1 and re.fullmatch(r"anon-[0-9a-f]{16}", campaigns.pop())


def test_request_ids_lose_the_renderer_process_id(tmp_path: Path) -> None:
    rec = lab_record(6, "", "", "", "", 0, 1000.0, source="passive")
    rec["requests"][0]["request_id"] = "C9EB169843CFA43B454AB6EA7B4DD25F:0"  # a loader id
    rec["requests"][1]["request_id"] = "48213.17:0"  # renderer pid 48213, request 17
    rec["requests"][2]["request_id"] = "48213.17:1"  # its redirect hop
    rec["requests"][3]["request_id"] = "48213.18:0"
    other = lab_record(7, "", "", "", "", 0, 1000.0, source="passive")
    tables = _bundle(tmp_path, [rec, other])
    by_nav: dict[str, list[str]] = {}
    for r in tables["requests"]:
        by_nav.setdefault(r["navigation_id"], []).append(r["request_id"])
    assert by_nav[rec["id"]][:4] == ["r1:0", "r2:0", "r2:1", "r3:0"]
    for ids in by_nav.values():
        assert len(set(ids)) == len(ids) and all(re.fullmatch(r"r\d+:\d+", i) for i in ids)
    assert "48213" not in _text(tables) and "C9EB1698" not in _text(tables)
    assert "1000.1" not in _text(tables)  # the builder's own "<pid>.<n>" ids


def test_export_keep_campaign_on_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "local.db"
    ingest_all(db, [lab_record(20, "camp", "p", "clean", "h2", 0, 1000.0),
                    lab_record(21, "alice/private/path", "p", "clean", "h2", 1, 1000.0)])
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    args = ["export", "--db", str(db), "--preview", "--json"]
    kept = CliRunner(env=env).invoke(main, [*args, "--keep-campaign", "camp"])
    plain = CliRunner(env=env).invoke(main, args)
    assert kept.exit_code == 0 and plain.exit_code == 0, kept.output
    assert {r["campaign"] for r in json.loads(kept.output)["tables"]["navigations"]} & \
        {"camp", "alice/private/path"} == {"camp"}
    assert "camp" not in plain.output.replace("campaign", "") and "alice" not in plain.output


def test_an_old_stores_out_of_range_values_export_as_null_so_the_bundle_merges(
        tmp_path: Path) -> None:
    db = tmp_path / "local.db"
    ingest_all(db, [lab_record(30, "", "", "", "", 0, 1000.0, source="passive")])
    conn = sqlite3.connect(db)  # what an older ProtoLens could store (CDP status 0)
    conn.execute("UPDATE requests SET status = 0 WHERE seq = 1")
    conn.commit()
    conn.close()
    out = tmp_path / "b.tar"
    export.write(export.build(open_ro(db), allow=frozenset(), since_ms=None, now_ms=NOW,
                              contributor_id="ab" * 16), out, NOW)
    statuses = read_bundle(out).tables["requests"].column("status").to_pylist()
    assert statuses[1] is None and statuses[0] == 200


def test_a_failure_is_exported_as_a_closed_word_or_other() -> None:
    """Chromium's net errors, a request the browser blocked (``blocked:`` and CDP's reason,
    fixture rw-errors) and the recorder's own words go as they are; any other text, which could
    carry a page's words, is ``other``."""
    from protolens.share.anonymize import net_error

    for kept in ("net::ERR_ABORTED", "net::ERR_CONNECTION_REFUSED", "blocked:csp",
                 "blocked:mixed-content", "aborted", "canceled", "failed", None):
        assert net_error(kept) == kept
    for text in ("blocked:https://a.example/x", "net::ERR_x y", "Failed to fetch", "blocked:",
                 "blocked:" + "a" * 81):
        assert net_error(text) == "other", text
