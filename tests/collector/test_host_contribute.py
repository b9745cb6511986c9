"""The host's side of the options page switch: ``contribute_settings`` / ``contribute_status``
messages to a real host process, which then uploads on its schedule to a real collector over
TLS on loopback; switched off, it sends nothing more."""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from protolens.messaging.framing import encode_frame
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.collector import running_collector, small_store
from scripts.devkit.store_builder import NOW_MS, lab_record


class Host:
    def __init__(self, tmp: Path, db: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "protolens.host", "chrome-extension://x/"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp / "home"),
                 "XDG_DATA_HOME": str(tmp / "xdg"), "PROTOLENS_DB": str(db), **env})

    def ask(self, obj: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(encode_frame(json.dumps({"schema": 1, **obj}).encode()))
        self.proc.stdin.flush()
        (n,) = struct.unpack("<I", self.proc.stdout.read(4))
        reply: dict[str, Any] = json.loads(self.proc.stdout.read(n))
        return reply

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(20)


def _bundles(data: Path) -> int:
    if not (data / "catalog.db").exists():
        return 0
    conn = sqlite3.connect(f"file:{data / 'catalog.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM bundles").fetchone()[0])
    finally:
        conn.close()


def _wait(pred: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.2)
    return False


def test_switch_on_uploads_on_schedule_switch_off_stops(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db", n=5)
    with running_collector(tmp_path) as c:
        token = c.token("vol-1")
        host = Host(tmp_path, db, {"PROTOLENS_CA_CERT": str(c.ca),
                                   "PROTOLENS_CONTRIBUTE_INTERVAL_S": "0.5"})
        try:
            off = host.ask({"type": "contribute_status", "msg_id": "s0"})
            assert (off["type"], off["enabled"], off["msg_id"]) == ("contribute_status", False,
                                                                    "s0")
            bad = host.ask({"type": "contribute_settings", "msg_id": "b",
                            "settings": {"enabled": True, "url": "", "token": ""}})
            assert bad["type"] == "error" and "URL" in bad["error"]
            on = host.ask({"type": "contribute_settings", "msg_id": "s1",
                           "settings": {"enabled": True, "url": c.url, "token": token}})
            assert on["enabled"] and on["token_set"] and on["new_loads"] == 5
            assert "origin" in on["columns"]["navigations"] and token not in json.dumps(on)
            assert _wait(lambda: _bundles(c.data) == 1, 30)
            # the collector commits before it answers: the host keeps the receipt a moment later
            assert _wait(lambda: host.ask({"type": "contribute_status"})
                         ["last_contribution_ms"] is not None, 10)
            after = host.ask({"type": "contribute_status"})
            assert after["new_loads"] == 0 and after["last_navigations"] == 5
            assert after["last_contribution_ms"] is not None and after["last_error"] is None

            off = host.ask({"type": "contribute_settings",  # the page never resends the token
                            "settings": {"enabled": False, "url": c.url, "token": ""}})
            assert off["token_set"] and not off["enabled"]
            conn = open_rw(db, time.time() * 1000)
            ingest(conn, parse_record(lab_record(77_000, "camp", "p", "c", "h2", 0, 900.0,
                                                 source="experiment")), {}, NOW_MS + 60_000)
            conn.close()
            assert _wait(lambda: host.ask({"type": "contribute_status"})["new_loads"] == 1, 10)
            time.sleep(2.0)  # four schedule periods with the switch off
            assert _bundles(c.data) == 1
        finally:
            host.close()
        log = c.log.read_text()
    assert token not in log
