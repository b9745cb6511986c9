"""Dispatch: message bytes -> reply, with a real SQLite store behind it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from protolens.messaging.dispatch import Dispatcher, RetryLater, encode_reply
from protolens.messaging.framing import MAX_OUTGOING
from protolens.messaging.lab import LabContext, LabError, parse_lab
from protolens.record import NavigationRecord
from protolens.store import SqliteSink, open_rw
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0


def msg(obj: Any) -> bytes:
    return json.dumps(obj).encode()


@pytest.fixture
def sink(tmp_path: Path) -> SqliteSink:
    return SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW))


def test_ping_and_hello(sink: SqliteSink) -> None:
    d = Dispatcher(sink)
    assert d.handle(msg({"type": "ping", "schema": 1}), NOW) == {"type": "pong", "schema": 1}
    hello = d.handle(msg({"type": "hello", "schema": 1, "msg_id": "h"}), NOW)
    assert hello["type"] == "hello" and hello["lab"] is None and hello["msg_id"] == "h"
    assert hello["host_version"]


def test_record_ack_then_duplicate(sink: SqliteSink) -> None:
    d = Dispatcher(sink)
    rec = make_record(4)
    m = msg({"type": "record", "schema": 1, "msg_id": "m1", "record": rec})
    first = d.handle(m, NOW)
    assert first == {"type": "ack", "schema": 1, "msg_id": "m1", "id": rec["id"],
                     "duplicate": False}
    assert d.handle(m, NOW)["duplicate"] is True
    assert sink.conn.execute("SELECT count(*) FROM navigations").fetchone()[0] == 1


@pytest.mark.parametrize(("payload", "needle"), [
    (b"\xff\xfe{}", "not UTF-8 (byte 0xff at offset 0)"),
    (b"{not json", "invalid JSON"),
    (b'{"type":"ping","schema":1,"x":NaN}', "NaN is not valid JSON"),
    (b"[1,2]", "expected a JSON object, got list"),
    (b'{"schema":1}', "type: expected a string"),
    (b'{"type":"ping","schema":9}', "schema: unsupported message schema 9"),
    (b'{"type":"ping"}', "schema: unsupported message schema None"),
    (b'{"type":"fly","schema":1}', "type: unknown message type 'fly'"),
    (b'{"type":"record","schema":1}', "record: missing"),
    (b'{"type":"ping","schema":1,"msg_id":7}', "msg_id: expected a string"),
    (b"[" * 100_000 + b"]" * 100_000, "invalid JSON"),
])
def test_malformed_messages_get_one_line_errors(sink: SqliteSink, payload: bytes,
                                                needle: str) -> None:
    reply = Dispatcher(sink).handle(payload, NOW)
    assert reply["type"] == "error" and reply["schema"] == 1
    assert needle in reply["error"] and "\n" not in reply["error"]
    assert reply["retry"] is False


def test_invalid_record_names_field_echoes_msg_id_and_writes_nothing(sink: SqliteSink) -> None:
    rec = make_record(5)
    rec["requests"][3]["encoded_bytes"] = "x"
    reply = Dispatcher(sink).handle(
        msg({"type": "record", "schema": 1, "msg_id": "m9", "record": rec}), NOW)
    assert reply["msg_id"] == "m9"
    assert reply["error"] == 'requests[3].encoded_bytes: expected integer >= 0, got "x"'
    assert sink.conn.execute("SELECT count(*) FROM requests").fetchone()[0] == 0


class FailingSink:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def ingest(self, record: NavigationRecord, context: Mapping[str, Any], now_ms: float) -> bool:
        raise self.exc


def test_store_failure_is_retryable_error() -> None:
    rec = make_record(1)
    reply = Dispatcher(FailingSink(RetryLater("disk full"))).handle(
        msg({"type": "record", "schema": 1, "msg_id": "a", "record": rec}), NOW)
    assert reply["type"] == "error" and reply["retry"] is True
    assert "disk full" in reply["error"]


def test_store_refusal_that_cannot_pass_is_final() -> None:
    """Issue 15 item 2: only a failure that may pass is answered retry true."""
    rec = make_record(1)
    reply = Dispatcher(FailingSink(OverflowError("Python int too large"))).handle(
        msg({"type": "record", "schema": 1, "msg_id": "a", "record": rec}), NOW)
    assert reply["type"] == "error" and reply["retry"] is False and reply["msg_id"] == "a"
    assert "cannot store this record: OverflowError" in reply["error"]


def test_lab_hello_and_context_stamp(sink: SqliteSink) -> None:
    lab = parse_lab({"record": True, "url_detail": "full", "navigate": ["https://a.test/"],
                     "context": {"campaign": "c1", "arm": "h2", "repetition": 3,
                                 "command_line": ["chromium", "--disable-quic"]}})
    d = Dispatcher(sink, lab)
    hello = d.handle(msg({"type": "hello", "schema": 1}), NOW)
    assert hello["lab"] == lab.to_json()
    rec = make_record(2, source="lab")
    rec["context"] = {"campaign": "overridden", "note": "kept"}
    d.handle(msg({"type": "record", "schema": 1, "record": rec}), NOW)
    row = sink.conn.execute("SELECT source, campaign, arm, repetition, command_line, context "
                            "FROM navigations").fetchone()
    assert tuple(row)[:4] == ("lab", "c1", "h2", 3)
    assert json.loads(row["command_line"]) == ["chromium", "--disable-quic"]
    assert json.loads(row["context"])["note"] == "kept"


def test_lab_error_blocks_hello_and_records(sink: SqliteSink) -> None:
    d = Dispatcher(sink, None, "lab context /x.json: bad")
    assert d.handle(msg({"type": "hello", "schema": 1}), NOW)["error"] == "lab context /x.json: bad"
    reply = d.handle(msg({"type": "record", "schema": 1, "record": make_record(1)}), NOW)
    assert reply["type"] == "error" and reply["retry"] is True


@pytest.mark.parametrize(("obj", "needle"), [
    ([], "expected a JSON object"),
    ({"record": "yes"}, "record: expected boolean"),
    ({"url_detail": "host"}, "url_detail"),
    ({"context": []}, "context: expected object"),
    ({"navigate": [1]}, "navigate"),
    ({"advance": "now"}, "advance"),
    ({"quiet_ms": -1}, "quiet_ms"),
    ({"quiet_ms": 30_001}, "quiet_ms"),
    ({"quiet_ms": 1.5}, "quiet_ms"),
    ({"quiet_ms": "500"}, "quiet_ms"),
    ({"quiet_ms": True}, "quiet_ms"),
    ({"visual": "yes"}, "visual: expected boolean"),
    ({"save_log": 1}, "save_log: expected boolean"),
    ({"start_at_ms": -1}, "start_at_ms"),
    ({"start_at_ms": "1800000000000"}, "start_at_ms"),
    ({"start_at_ms": True}, "start_at_ms"),
    ({"start_at_ms": float("inf")}, "start_at_ms"),
    ({"start_at_ms": float("nan")}, "start_at_ms"),
    ({"go_file": 3}, "go_file: expected a file path"),
    ({"go_file": ""}, "go_file"),
    ({"loaded_file": ["x"]}, "loaded_file: expected a file path"),
])
def test_parse_lab_rejects(obj: Any, needle: str) -> None:
    with pytest.raises(LabError, match=needle):
        parse_lab(obj)


def test_parse_lab_defaults() -> None:
    assert parse_lab({}) == LabContext(record=True, url_detail="full", context={}, navigate=())
    assert parse_lab({}).to_json()["quiet_ms"] is None  # the recorder's own default
    assert parse_lab({"quiet_ms": 500}).to_json()["quiet_ms"] == 500
    assert parse_lab({"visual": True}).to_json()["visual"] is True
    assert parse_lab({}).to_json()["save_log"] is False
    assert parse_lab({"save_log": True}).to_json()["save_log"] is True
    assert parse_lab({}).to_json()["start_at_ms"] is None  # navigate at once
    assert parse_lab({"start_at_ms": 1.8e12}).to_json()["start_at_ms"] == 1.8e12
    assert parse_lab({}).to_json()["hold"] is False  # no go file: not a standby browser
    standby = parse_lab({"go_file": "/tmp/go.json", "loaded_file": "/tmp/loaded"})
    assert standby.to_json()["hold"] is True and standby.loaded_file == "/tmp/loaded"
    assert "go_file" not in standby.to_json()  # the extension needs only to hold


def test_replies_never_exceed_one_megabyte() -> None:
    big = {"type": "hello", "schema": 1, "lab": {"navigate": ["x" * (2 * MAX_OUTGOING)]}}
    frame = encode_reply(big)
    assert len(frame) - 4 <= MAX_OUTGOING
    assert json.loads(frame[4:])["type"] == "error"
