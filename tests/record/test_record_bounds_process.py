"""Issue 15, defects 2 (integers of 2^63 or more), 3, 11 and 13 through the real host process:
``python -m protolens.host`` over its stdin/stdout, a real SQLite file."""

from __future__ import annotations

import copy
import os
import sqlite3
import uuid
from pathlib import Path
from typing import Any

from protolens.record.columns import URL_MAX
from scripts.devkit.navrecord_builder import make_record
from tests.host.test_host_process import Host, frame


def _host(tmp: Path) -> Host:
    # PYTHONPATH passes through so this file can be run against another checkout's package
    return Host(tmp, {"PYTHONPATH": os.environ.get("PYTHONPATH", "")})


def _send(host: Host, rec: dict[str, Any], msg_id: str) -> dict[str, Any]:
    host.send(frame({"type": "record", "schema": 1, "msg_id": msg_id, "record": rec}))
    return host.reply()


def _count(db: Path, sql: str = "SELECT count(*) FROM navigations") -> Any:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchone()[0]
    finally:
        conn.close()


def test_one_navigation_under_five_spellings_of_its_id_is_stored_once(tmp_path: Path) -> None:
    host = _host(tmp_path)
    rec = make_record(4)
    rid = rec["id"]
    spellings = [rid, rid.upper(), "{" + rid + "}", "urn:uuid:" + rid, rid.replace("-", "")]
    acks = [_send(host, dict(rec, id=s), str(i)) for i, s in enumerate(spellings)]
    assert [a["type"] for a in acks] == ["ack"] * 5, acks
    assert {a["id"] for a in acks} == {rid}
    assert [a["duplicate"] for a in acks] == [False, True, True, True, True]
    assert all(a["same_content"] is True and "conflict" not in a for a in acks[1:])
    assert host.close()[0] == 0
    assert _count(host.db) == 1 and _count(host.db, "SELECT id FROM navigations") == rid
    assert _count(host.db, "SELECT count(*) FROM requests") == 4


def test_a_resent_id_with_other_content_is_said_in_the_ack(tmp_path: Path) -> None:
    host = _host(tmp_path)
    rec = make_record(4)
    other = copy.deepcopy(rec)
    other["milestones"]["load_ms"] = 9999.0
    first, again, changed = (_send(host, rec, "a"), _send(host, rec, "b"),
                             _send(host, other, "c"))
    assert first == {"type": "ack", "schema": 1, "msg_id": "a", "id": rec["id"],
                     "duplicate": False}
    assert again["duplicate"] is True and again["same_content"] is True
    assert changed == {"type": "ack", "schema": 1, "msg_id": "c", "id": rec["id"],
                       "duplicate": True, "same_content": False,
                       "conflict": "different content, kept the stored one"}
    assert host.close()[0] == 0
    assert _count(host.db, "SELECT load_ms FROM navigations") == rec["milestones"]["load_ms"]


def _oversize(rec: dict[str, Any], case: str) -> dict[str, Any]:
    out = copy.deepcopy(rec)
    out["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, case))  # each its own navigation
    if case == "url":
        out["page"]["url"] = "https://a.test/" + "x" * URL_MAX
    elif case == "requests":
        out["requests"] = [out["requests"][0]] * 20_001
    elif case == "redirects":
        out["page"]["redirects"] = ["http://a.test/"] * 21
    elif case == "int63":
        out["requests"][1]["encoded_bytes"] = 2 ** 63
    elif case == "status":
        out["requests"][1]["status"] = 700
    elif case == "port":
        out["connections"][0]["remote_port"] = 70000
    elif case == "start":
        out["page"]["started_at_ms"] = 1e308
    elif case == "shares":
        for c in out["connections"]:
            c["share"] = 1.0
    return out


CASES = {
    "url": f"page.url: {URL_MAX + 15} characters, at most {URL_MAX} allowed",
    "requests": "requests: 20001 items, at most 20000 allowed",
    "redirects": "page.redirects: 21 items, at most 20 allowed",
    "int63": "requests[1].encoded_bytes: expected integer in [0, 2^53], got 9223372036854775808",
    "status": "requests[1].status: expected integer in [100, 599], got 700",
    "port": "connections[0].remote_port: expected integer in [1, 65535], got 70000",
    "start": "page.started_at_ms: expected number in [946684800000, 4102444800000], got 1e+308",
    "shares": "connections: the browser connections' shares sum to 2, at most 1 allowed",
}


def test_oversize_and_implausible_records_are_refused_for_good(tmp_path: Path) -> None:
    host = _host(tmp_path)
    rec = make_record(6)  # two connections
    replies = {case: _send(host, _oversize(rec, case), case) for case in CASES}
    ok = _send(host, rec, "good")
    for case, message in CASES.items():
        reply = replies[case]
        assert reply["type"] == "error", (case, reply)
        assert reply["error"] == message and reply["msg_id"] == case
        assert reply["retry"] is False, case  # resending cannot help: the extension drops it
    assert ok["type"] == "ack" and ok["duplicate"] is False
    assert host.close()[0] == 0
    assert _count(host.db) == 1
    assert _count(host.db, "SELECT id FROM navigations") == str(uuid.UUID(rec["id"]))
