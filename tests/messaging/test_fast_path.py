"""The ``record`` message's fast path (messaging/fast.py) beside the reference path
(``Dispatcher(fast_path=False)``): the same frames give the same replies and the same stored rows
on both, real records take the fast path, and what it declines still gets the reference path's
one-line error."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from protolens.messaging import dispatch
from protolens.messaging.dispatch import Dispatcher
from protolens.messaging.lab import parse_lab
from protolens.record import columns
from protolens.store import SqliteSink, open_rw
from scripts.devkit.navrecord_builder import make_record
from tests.record.test_wire import full_record, real_records

NOW = 1_763_812_400_000.0


def frame(record: Any, msg_id: Any = "m", **extra: Any) -> bytes:
    return json.dumps({"type": "record", "schema": 1, "msg_id": msg_id, "record": record,
                       **extra}).encode()


def dump(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    return {t: sorted((tuple(r) for r in conn.execute(f"SELECT * FROM {t}")), key=repr)
            for t in columns.TABLES}


def frames() -> list[bytes]:
    rec = make_record(5, seed=9)
    changed = json.loads(json.dumps(rec))
    changed["milestones"]["load_ms"] = 1.5
    bad = json.loads(json.dumps(rec))
    bad["id"] = "e3b0c442-98fc-4c14-9afb-f4c8996fb924"
    bad["requests"][3]["encoded_bytes"] = "x"
    text = frame(make_record(4, seed=10))
    return [
        *(frame(r, str(i)) for i, r in enumerate(real_records())),
        frame(rec), frame(rec, "again"), frame(dict(rec, id=rec["id"].upper()), None),
        frame(changed, "conflict"),  # same id, other content
        frame(bad), frame(full_record(), "x" * 200), frame(full_record(), "x" * 201),
        frame(make_record(2, seed=11), unknown=True),
        frame(dict(make_record(2, seed=12), future_field=1)),
        text.replace(b'"context": {}', b'"context": {"n": "\\ud800"}'),
        text.replace(b'"msg_id": "m"', b'"msg_id": "\\udc00"'),
        text.replace(b'"context": {}', b'"context": {}, "x": "\xed\xb0\x80"'),  # not UTF-8
        text.replace(b'"context": {}', b'"context": {}, "x": ' + b"1" * 4301),
        text.replace(b'"type": "record"', b'"type": "ping"'),
        text.replace(b'"schema": 1, "msg_id"', b'"schema": 1.0, "msg_id"'),
        b'{"type": "record", "schema": 1}',
    ]


def replies_and_rows(db: Path, fast_path: bool, lab: Any = None
                     ) -> tuple[list[dict[str, Any]], dict[str, list[tuple[Any, ...]]]]:
    sink = SqliteSink(open_rw(db, now_ms=NOW))
    d = Dispatcher(sink, lab, fast_path=fast_path)
    replies = [d.handle(f, NOW) for f in frames()]
    return replies, dump(sink.conn)


@pytest.mark.parametrize("lab", [None, parse_lab({"context": {"campaign": "c", "repetition": 2,
                                                             "arm": "h2"}})],
                         ids=["passive", "lab"])
def test_fast_and_reference_paths_reply_and_store_alike(tmp_path: Path, lab: Any) -> None:
    fast = replies_and_rows(tmp_path / "fast.db", True, lab)
    ref = replies_and_rows(tmp_path / "ref.db", False, lab)
    assert fast[0] == ref[0]
    assert fast[1] == ref[1]
    kinds = [r["type"] for r in fast[0]]
    assert kinds.count("ack") >= len(real_records()) + 4 and "error" in kinds


def test_real_records_never_reach_the_reference_validator(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(value: Any) -> Any:
        raise AssertionError("the reference path read a record the fast path should take")
    monkeypatch.setattr(dispatch, "parse_record", refuse)
    d = Dispatcher(SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW)))
    for i, rec in enumerate(real_records()):
        reply = d.handle(frame(rec, str(i)), NOW)
        assert reply["type"] == "ack" and reply["msg_id"] == str(i), reply


def test_what_the_fast_path_declines_gets_the_reference_error(tmp_path: Path) -> None:
    d = Dispatcher(SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW)))
    rec = make_record(5)
    rec["requests"][3]["encoded_bytes"] = -1
    reply = d.handle(frame(rec, "b"), NOW)
    assert reply == {"type": "error", "schema": 1, "msg_id": "b", "retry": False,
                     "error": "requests[3].encoded_bytes: expected integer >= 0, got -1"}


def test_a_fast_path_bug_costs_speed_not_the_reply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def broken(payload: bytes) -> Any:
        raise RuntimeError("bug")
    monkeypatch.setattr(dispatch, "_FAST_RECORD", broken)
    d = Dispatcher(SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW)))
    with caplog.at_level(logging.ERROR, logger="protolens.host"):
        reply = d.handle(frame(make_record(3)), NOW)
    assert reply["type"] == "ack"
    assert "fast path failed" in caplog.text



@pytest.mark.parametrize("where", ["record", "page", "extra", "msg_id"])
def test_deep_nesting_is_one_error_line_without_a_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, where: str) -> None:
    """JSON nested 1,000 deep anywhere in a record message: one error reply, no traceback in
    the log (msgspec refuses a typed field's wrong shape before it recurses; the reference
    path's json.loads stops at the recursion limit), and the host goes on."""
    rec = make_record(3)
    rec["page"]["zz"] = "PAGE"
    rec["zz"] = "EXTRA"
    text = json.dumps({"type": "record", "schema": 1, "msg_id": "MSG", "record": rec})
    marker = {"record": json.dumps(rec), "page": '"PAGE"', "extra": '"EXTRA"',
              "msg_id": '"MSG"'}[where]
    deep = text.replace(marker, "[" * 1000 + "]" * 1000, 1).encode()
    d = Dispatcher(SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW)))
    with caplog.at_level(logging.DEBUG, logger="protolens.host"):
        reply = d.handle(deep, NOW)
    assert reply["type"] == "error" and "recursion" in reply["error"], reply
    assert [r for r in caplog.records if r.exc_info] == []
    assert d.handle(frame(make_record(3)), NOW)["type"] == "ack"
