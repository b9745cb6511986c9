"""The log tap's host side: the ``log`` message through the real host process and a real SQLite
store, then ``protolens replay --navigation`` on what was stored (the real node script): a
real-Chromium fixture's log and its golden record, sent as the extension sends them, replay to
that record."""

from __future__ import annotations

import base64
import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

from test_host_process import Host, frame

from protolens.cli.output import rounded
from tests.cli.run import protolens

FIXTURES = Path(__file__).resolve().parents[2] / "tests/fixtures/cdp"
FIXTURE_ENV = {"browser": {"name": "Chromium", "version": "fixture"}, "extension_version": "0.0.0",
               "network": None}
"""What scripts/fixture-io.ts gave the recorder for the goldens."""


def _golden(name: str) -> dict[str, Any]:
    (record,) = json.loads((FIXTURES / f"{name}.expected.json").read_text())
    return record  # type: ignore[no-any-return]


def _log(name: str, nav_id: str, **extra: Any) -> dict[str, Any]:
    data = base64.b64encode(gzip.compress((FIXTURES / f"{name}.jsonl").read_bytes())).decode()
    options = {"source": "lab", "url_detail": "full", "visual": True, "quiet_ms": None,
               "main_frame_id": None, "env": FIXTURE_ENV, "id": nav_id}
    return {"type": "log", "schema": 1, "msg_id": f"log-{nav_id}", "navigation_id": nav_id,
            "data": data, "options": options, **extra}


def test_a_stored_log_replays_to_its_stored_record(tmp_path: Path) -> None:
    host = Host(tmp_path)
    record = _golden("h2")
    nav = record["id"]
    host.send(frame(_log("h2", nav)))  # before its record: refused, nothing stored
    early = host.reply()
    assert early["type"] == "error" and early["retry"] is False
    assert "not a stored navigation" in early["error"]
    host.send(frame({"type": "record", "schema": 1, "msg_id": "r", "record": record}))
    assert host.reply()["type"] == "ack"
    host.send(frame(_log("h2", nav)))
    stored = host.reply()
    size = len(base64.b64decode(_log("h2", nav)["data"]))
    assert stored == {"type": "log_stored", "schema": 1, "msg_id": f"log-{nav}",
                      "navigation_id": nav, "bytes": size, "duplicate": False}
    host.send(frame(_log("redirect", nav)))  # a second log for it: the first one stays
    assert host.reply()["duplicate"] is True
    assert host.close()[0] == 0
    replayed = json.loads(protolens("replay", "--navigation", nav[:8], "--json",
                                    db=host.db).stdout)
    assert replayed == [rounded(record)]  # the CLI's JSON rounds floats (cli/output.py)
    blob = sqlite3.connect(host.db).execute("SELECT log FROM navigation_logs").fetchone()[0]
    assert gzip.decompress(blob) == (FIXTURES / "h2.jsonl").read_bytes()


def test_bad_log_messages_are_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    host = Host(tmp_path)
    record = _golden("h2")
    nav = record["id"]
    host.send(frame({"type": "record", "schema": 1, "msg_id": "r", "record": record}))
    assert host.reply()["type"] == "ack"
    whole = gzip.compress((FIXTURES / "h2.jsonl").read_bytes())
    bad = {
        "navigation_id": (_log("h2", "not-a-uuid"), "navigation_id: expected the record's UUID"),
        "base64": (_log("h2", nav, data="@@@"), "data: not base64"),
        "gzip": (_log("h2", nav, data=base64.b64encode(b"plain text").decode()), "not gzip"),
        "cut": (_log("h2", nav, data=base64.b64encode(whole[:-20]).decode()), "cut short"),
        "options": (_log("h2", nav, options={"token": "x"}), "options: unknown key 'token'"),
        "empty": (_log("h2", nav, data=""), "data: expected base64 text"),
    }
    for msg, _ in bad.values():
        host.send(frame(msg))
    for name, (_, why) in bad.items():
        reply = host.reply()
        assert reply["type"] == "error" and why in reply["error"], (name, reply)
        assert reply["retry"] is False
    assert host.close()[0] == 0
    logs = sqlite3.connect(host.db).execute("SELECT count(*) FROM navigation_logs").fetchone()
    assert logs == (0,)
    done = protolens("replay", "--navigation", nav, db=host.db, check=False)
    assert done.returncode == 2 and "has no stored log" in done.stderr


def test_replay_navigation_errors(tmp_path: Path) -> None:
    missing = protolens("replay", "--navigation", "abc", db=tmp_path / "none.db", check=False)
    assert missing.returncode == 2 and missing.stderr.startswith("error: ")
    both = protolens("replay", str(FIXTURES / "h2.jsonl"), "--navigation", "abc", check=False)
    assert both.returncode == 2 and "one of them" in both.stderr
