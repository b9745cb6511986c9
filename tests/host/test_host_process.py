"""The host process end to end: ``python -m protolens.host`` over real pipes, a real SQLite file."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from protolens.browser.profile import register_lab_host
from protolens.messaging.framing import encode_frame
from protolens.store.migrations import MIGRATIONS
from scripts.devkit.navrecord_builder import make_record


def frame(obj: Any) -> bytes:
    return encode_frame(json.dumps(obj).encode(), limit=1 << 30)


class Host:
    def __init__(self, tmp: Path, extra_env: dict[str, str] | None = None,
                 argv: list[str] | None = None) -> None:
        self.db = tmp / "data" / "p.db"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp / "home"),
               "XDG_DATA_HOME": str(tmp / "xdg"), "PROTOLENS_DB": str(self.db),
               # PYTHONPATH passes through, to run these tests against another checkout
               **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
               **(extra_env or {})}
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "protolens.host", "chrome-extension://x/"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        header = self.proc.stdout.read(4)
        assert len(header) == 4, f"host closed stdout; stderr: {self.stderr_now()}"
        (n,) = struct.unpack("<I", header)
        assert n <= 1024 * 1024
        body = self.proc.stdout.read(n)
        result: dict[str, Any] = json.loads(body)
        return result

    def stderr_now(self) -> str:
        self.proc.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> tuple[int, bytes, bytes]:
        """Close stdin (EOF for the host) and collect its exit code and remaining output."""
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        out = self.proc.stdout.read()
        err = self.proc.stderr.read()
        code = self.proc.wait(timeout=20)
        if code != 0:  # shown with the failing assertion (pytest prints captured output)
            print(f"host exited {code}; its stderr:\n{err.decode(errors='replace')}")
        return code, out, err


def test_bad_frames_then_good_one_is_acked_and_stored(tmp_path: Path) -> None:
    host = Host(tmp_path)
    rec = make_record(5)
    host.send(b"\x00\x00\x00\x00")
    host.send(encode_frame(b"\xc3\x28garbage"))
    host.send(encode_frame(b"{oops"))
    host.send(frame({"type": "record", "schema": 2, "msg_id": "s"}))
    bad = dict(rec, requests=[dict(rec["requests"][0], host=None)])
    host.send(frame({"type": "record", "schema": 1, "msg_id": "b", "record": bad}))
    host.send(frame({"type": "record", "schema": 1, "msg_id": "g", "record": rec}))
    errors = [host.reply() for _ in range(5)]
    assert [e["type"] for e in errors] == ["error"] * 5
    assert "length 0" in errors[0]["error"]
    assert "not UTF-8" in errors[1]["error"]
    assert "invalid JSON" in errors[2]["error"]
    assert "schema" in errors[3]["error"] and errors[3]["msg_id"] == "s"
    assert errors[4]["error"].startswith("requests[0].host: expected string")
    ack = host.reply()
    assert ack == {"type": "ack", "schema": 1, "msg_id": "g", "id": rec["id"], "duplicate": False}
    code, rest, _ = host.close()
    assert code == 0 and rest == b""
    conn = sqlite3.connect(host.db)
    assert conn.execute("SELECT count(*) FROM requests").fetchone()[0] == 5


def test_acked_record_survives_sigkill(tmp_path: Path) -> None:
    host = Host(tmp_path)
    recs = [make_record(20, seed=i) for i in range(3)]
    for i, rec in enumerate(recs):
        host.send(frame({"type": "record", "schema": 1, "msg_id": str(i), "record": rec}))
    acks = [host.reply() for _ in recs]
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait(timeout=10)
    assert [a["type"] for a in acks] == ["ack"] * 3
    conn = sqlite3.connect(host.db)
    ids = {r[0] for r in conn.execute("SELECT id FROM navigations")}
    assert ids == {r["id"] for r in recs}
    assert conn.execute("SELECT count(*) FROM requests").fetchone()[0] == 60


def test_kill_mid_stream_keeps_every_acked_record_whole(tmp_path: Path) -> None:
    """Issue 13 target 5 (durability unchanged): 100-request records stream in on the fast path;
    the host is killed -9 after 10 acks with more records in flight. Every acked record is there
    with all its rows; one that was being written is all there or not at all."""
    host = Host(tmp_path)
    recs = [make_record(100, seed=500 + i) for i in range(40)]
    data = b"".join(frame({"type": "record", "schema": 1, "msg_id": str(i), "record": r})
                    for i, r in enumerate(recs))

    def writer() -> None:
        with contextlib.suppress(BrokenPipeError):  # killed while the pipe was full
            host.send(data)
    t = threading.Thread(target=writer)
    t.start()
    acks = [host.reply() for _ in range(10)]
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait(timeout=10)
    t.join(timeout=10)
    assert [a["type"] for a in acks] == ["ack"] * 10
    conn = sqlite3.connect(host.db)
    stored = {r[0]: r[1] for r in conn.execute(
        "SELECT n.id, (SELECT count(*) FROM requests q WHERE q.navigation_id = n.id) "
        "FROM navigations n")}
    assert {a["id"] for a in acks} <= set(stored)
    assert set(stored.values()) == {100}, stored  # no record half written
    assert conn.execute("SELECT count(*) FROM connections").fetchone()[0] == 2 * len(stored)


def test_oversize_frame_is_skipped_then_serving_continues(tmp_path: Path) -> None:
    host = Host(tmp_path)
    size = 64 * 1024 * 1024 + 1

    def writer() -> None:
        host.send(struct.pack("<I", size))
        chunk = b"x" * (1 << 20)
        left = size
        while left:
            n = min(left, len(chunk))
            host.send(chunk[:n])
            left -= n
        host.send(frame({"type": "ping", "schema": 1}))

    t = threading.Thread(target=writer)
    t.start()
    err = host.reply()
    assert err["type"] == "error" and "exceeds" in err["error"]
    assert host.reply() == {"type": "pong", "schema": 1}
    t.join()
    assert host.close()[0] == 0


def test_stream_ending_inside_a_frame_exits_cleanly(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.send(frame({"type": "ping", "schema": 1}))
    host.send(struct.pack("<I", 100) + b'{"type"')
    assert host.reply()["type"] == "pong"
    code, out, err = host.close()
    assert code == 0 and out == b""
    assert b"inside a frame" in err


def test_oversize_header_then_eof_exits_cleanly(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.send(struct.pack("<I", 0xFFFFFFFF) + b"partial")
    assert host.reply()["type"] == "error"
    assert host.close()[0] == 0


def test_lab_wrapper_stamps_context(tmp_path: Path) -> None:
    ctx = tmp_path / "lab.json"
    lab = {"record": True, "url_detail": "full", "navigate": ["https://a.test/page/"],
           "context": {"campaign": "camp", "arm": "h3", "condition": "good", "repetition": 2,
                       "page": "p", "server_cc": "cubic", "load_id": "L1"}}
    ctx.write_text(json.dumps(lab))
    db = tmp_path / "lab.db"
    manifest = register_lab_host(tmp_path / "profile",
                                 {"PROTOLENS_DB": str(db), "PROTOLENS_LAB_CONTEXT": str(ctx)})
    assert manifest == tmp_path / "profile" / "NativeMessagingHosts" / "org.protolens.host.json"
    wrapper = json.loads(manifest.read_text())["path"]
    host = Host(tmp_path, argv=[wrapper, "chrome-extension://ncpedlfcmhdmaokpoalfngkhdlamknob/"])
    host.send(frame({"type": "hello", "schema": 1, "extension_version": "0.1.0"}))
    # the defaults are spelled out
    assert host.reply()["lab"] == {**lab, "advance": "ack", "quiet_ms": None, "visual": False,
                                   "save_log": False, "start_at_ms": None, "hold": False}
    assert host.reply()["type"] == "policies"  # sent after every hello (docs/MESSAGES.md)
    rec = make_record(3, source="lab")
    host.send(frame({"type": "record", "schema": 1, "record": rec}))
    assert host.reply()["type"] == "ack"
    assert host.close()[0] == 0
    row = sqlite3.connect(db).execute(
        "SELECT source, campaign, arm, condition, repetition, page, server_cc, load_id "
        "FROM navigations").fetchone()
    assert row == ("lab", "camp", "h3", "good", 2, "p", "cubic", "L1")
    assert not (tmp_path / "data" / "p.db").exists()  # the wrapper's PROTOLENS_DB won


def test_standby_browser_host_sends_lab_go_when_the_go_file_appears(tmp_path: Path) -> None:
    """A standby lab browser (lab/runner.py overlap): its host says ``hold``, sends ``lab_go``
    only once the runner wrote the go file (with its start time), and marks ``lab_loaded``."""
    go, loaded = tmp_path / "go.json", tmp_path / "loaded"
    ctx = tmp_path / "lab.json"
    ctx.write_text(json.dumps({"navigate": ["https://a.test/"], "go_file": str(go),
                               "loaded_file": str(loaded)}))
    host = Host(tmp_path, {"PROTOLENS_LAB_CONTEXT": str(ctx)})
    host.send(frame({"type": "hello", "schema": 1, "extension_version": "0.1.0"}))
    hello = host.reply()
    assert hello["lab"]["hold"] is True and "go_file" not in hello["lab"]
    assert host.reply()["type"] == "policies"
    time.sleep(0.3)  # no go yet: the next frame is the pong, not a lab_go
    host.send(frame({"type": "ping", "schema": 1}))
    assert host.reply() == {"type": "pong", "schema": 1}
    assert not loaded.exists()
    host.send(frame({"type": "lab_loaded", "schema": 1}))
    assert host.reply() == {"type": "lab_loaded", "schema": 1}
    assert loaded.exists()
    # written whole and renamed into place, as the runner writes it (browser/launch.py): the
    # host polls for the file, and a CI run's host read it between its creation and its write
    part = go.with_suffix(".part")
    part.write_text(json.dumps({"start_at_ms": 1_800_000_000_000}))
    os.replace(part, go)
    assert host.reply() == {"type": "lab_go", "schema": 1, "start_at_ms": 1_800_000_000_000}
    assert host.close()[0] == 0


@pytest.mark.parametrize(("content", "start"), [
    ('{"start_at_ms": 1800000000000.5}', 1_800_000_000_000.5), ("", None), ("{}", None),
    ("not json", None), ('{"start_at_ms": -3}', None), ('{"start_at_ms": true}', None),
    ("[1]", None)])
def test_a_go_file_that_gives_no_usable_time_means_go_at_once(
        tmp_path: Path, content: str, start: float | None) -> None:
    from protolens.host.stdio import lab_go
    go = tmp_path / "go.json"
    go.write_text(content)
    assert lab_go(go) == {"type": "lab_go", "schema": 1, "start_at_ms": start}


def test_lab_loaded_outside_lab_mode_is_an_error(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.send(frame({"type": "lab_loaded", "schema": 1}))
    reply = host.reply()
    assert reply["type"] == "error" and "not in lab mode" in reply["error"]
    assert host.close()[0] == 0


def test_bad_lab_context_file_is_reported(tmp_path: Path) -> None:
    host = Host(tmp_path, {"PROTOLENS_LAB_CONTEXT": str(tmp_path / "missing.json")})
    host.send(frame({"type": "hello", "schema": 1}))
    reply = host.reply()
    assert reply["type"] == "error" and "missing.json" in reply["error"]


def test_unusable_store_gives_retryable_errors_but_keeps_serving(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    host = Host(tmp_path, {"PROTOLENS_DB": str(blocker / "p.db")})
    host.send(frame({"type": "record", "schema": 1, "msg_id": "r", "record": make_record(1)}))
    host.send(frame({"type": "ping", "schema": 1}))
    reply = host.reply()
    assert reply["type"] == "error" and reply["retry"] is True and "store" in reply["error"]
    assert host.reply()["type"] == "pong"


def test_debug_output_never_reaches_stdout(tmp_path: Path) -> None:
    host = Host(tmp_path, {"PROTOLENS_DEBUG": "1"})
    host.send(frame({"type": "ping", "schema": 1}))
    host.send(frame({"type": "nope", "schema": 1}))
    code, out, err = host.close()
    pong = encode_frame(b'{"type":"pong","schema":1}')
    assert code == 0 and out.startswith(pong)
    (n,) = struct.unpack("<I", out[len(pong):len(pong) + 4])
    assert len(out) == len(pong) + 4 + n  # nothing but two frames
    assert b"serving" in err and b"unknown message type" in err


def test_log_file_option(tmp_path: Path) -> None:
    logfile = tmp_path / "host.log"
    host = Host(tmp_path, {"PROTOLENS_DEBUG": "1", "PROTOLENS_HOST_LOG": str(logfile)})
    host.send(frame({"type": "ping", "schema": 1}))
    code, _, err = host.close()
    assert code == 0 and err == b""
    assert "serving" in logfile.read_text()


def test_two_hosts_share_one_store(tmp_path: Path) -> None:
    """Chromium starts one host per connectNative port: WAL + BEGIN IMMEDIATE serialise them."""
    db = tmp_path / "shared.db"  # neither host has created it yet
    env_extra = {"PROTOLENS_DB": str(db)}
    hosts = [Host(tmp_path / f"h{i}", env_extra) for i in range(2)]
    recs = [[make_record(10, seed=100 * i + j) for j in range(15)] for i in range(2)]
    for h, batch in zip(hosts, recs, strict=True):
        h.send(b"".join(frame({"type": "record", "schema": 1, "record": r}) for r in batch))
    for h, batch in zip(hosts, recs, strict=True):
        assert [h.reply()["type"] for _ in batch] == ["ack"] * len(batch)
        assert h.close()[0] == 0
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM navigations").fetchone()[0] == 30
    assert conn.execute("SELECT count(*) FROM _migrations").fetchone()[0] == len(MIGRATIONS)
