"""Fuzz over the whole record shape (issue 15, "Tests"): for every input the host answers every
message, keeps serving, stores a valid record exactly once, stores nothing for an invalid one,
and never asks for a retry that cannot succeed (nothing here makes the store busy, so any
``retry: true`` is a violation).

Two runs: the real ``Dispatcher`` with the host's own store adapter (``host.stdio.LazySink`` on a
real SQLite file) in-process for many cases, and the real host process over pipes for fewer
(each case there costs a round trip and an fsync). Hypothesis mutates 1-3 places of a record
that carries every optional part (network, policies, experiment, late attach): any value at any
path, a deleted key, or one of the values that broke the host before (lone surrogates, 2^63,
1e308, huge strings).
"""

from __future__ import annotations

import copy
import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_host_process import Host, frame

from protolens.host.stdio import LazySink
from protolens.messaging.dispatch import Dispatcher, encode_reply
from protolens.messaging.framing import MAX_OUTGOING
from protolens.record import RecordError, parse_record
from scripts.devkit.navrecord_builder import make_record
from tests.record import mutation
from tests.record.mutation import DELETE, apply_changes, json_paths


def full_record() -> dict[str, Any]:
    return mutation.full_record(4)


BASE = full_record()
parse_record(BASE)  # the base is valid: every mutation starts from a storable record


PATHS = json_paths(BASE)


def _at(obj: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


scalars = (st.none() | st.booleans() | st.integers()
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                           max_leaves=8)
known_bad = st.sampled_from([
    "\ud800", "a\udfffb", "\udc00\ud800", 2**63, 2**64, -(2**63) - 1, 10**30, -1, 1e308, -1e308,
    1e-320, 0.5, "", "x" * 70_000, "h9", "http/1.1", "00000000-0000-0000-0000-000000000000",
    "{12345678-1234-5678-1234-567812345678}", [], {}, True,
])
values = st.one_of(known_bad, json_values, st.text(max_size=10).map(lambda s: s + "\ud800"),
                   st.just(DELETE))
TEXT_PATHS = [p for p in PATHS if isinstance(_at(BASE, p), str) and p[-1] not in (
    "id", "url_detail", "source", "family", "late_attach")]
mutations = st.one_of(
    st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3),
    # free text where text is allowed: mostly valid records, stored
    st.lists(st.tuples(st.sampled_from(TEXT_PATHS), st.text(max_size=40)), min_size=1,
             max_size=3),
)


def mutated(changes: list[tuple[tuple[Any, ...], Any]]) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw["id"] = str(uuid.uuid4())  # each case its own id, unless a mutation sets one
    return apply_changes(raw, changes)


def storable(raw: dict[str, Any]) -> bool:
    """Valid by the record schema, and text throughout (no lone surrogate)."""
    try:
        json.dumps(raw, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    try:
        parse_record(raw)
    except RecordError:
        return False
    return True


class Checker:
    """Counts stored rows per id and checks each reply against the invariant."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.cases = 0

    def rows(self, rid: Any) -> int:
        if not self.db.exists() or not isinstance(rid, str):
            return 0
        with sqlite3.connect(self.db) as conn:
            return int(conn.execute("SELECT count(*) FROM navigations WHERE id = ?",
                                    (rid,)).fetchone()[0])

    def campaign(self, rid: str) -> Any:
        with sqlite3.connect(self.db) as conn:
            return conn.execute("SELECT campaign FROM navigations WHERE id = ?",
                                (rid,)).fetchone()[0]

    def total(self) -> int:
        if not self.db.exists():
            return 0
        with sqlite3.connect(self.db) as conn:
            return int(conn.execute("SELECT count(*) FROM navigations").fetchone()[0])

    def check(self, raw: dict[str, Any], msg_id: str, reply: dict[str, Any], again: dict[str, Any],
              before: int) -> None:
        self.cases += 1
        assert reply["type"] in ("ack", "error"), reply
        assert reply.get("msg_id") == msg_id, reply
        if reply["type"] == "ack":
            assert storable(raw), f"acked a record that fails validation: {reply}"
            # a mutation can give two cases the same id (the all-zero UUID is drawn from
            # known_bad): the second is acked as a duplicate and stores nothing
            grew = 0 if reply["duplicate"] else 1
            assert self.rows(reply["id"]) == 1 and self.total() == before + grew
            assert self.campaign(reply["id"]) is None  # a record's own lab tags never count
            assert again["type"] == "ack" and again["duplicate"] is True  # the resend
            assert self.rows(reply["id"]) == 1
        else:
            assert reply["retry"] is False, f"retry asked for a record that cannot pass: {reply}"
            assert self.total() == before, "an invalid record left rows behind"
            assert again["type"] == "error" and again["retry"] is False
            if not storable(raw):
                assert not reply["error"].startswith("store:"), reply
            else:  # valid by schema, refused by the store for good (e.g. 2^63)
                assert reply["error"].startswith("store: cannot store this record"), reply


# --- in-process: the real Dispatcher, the host's real store adapter --------------------------

@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Dispatcher, Checker]]:
    db = tmp_path_factory.mktemp("fuzz") / "p.db"
    yield Dispatcher(LazySink(db)), Checker(db)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=mutations)
def test_fuzz_records_in_process(in_process: tuple[Dispatcher, Checker],
                                 changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    d, checker = in_process
    raw = mutated(changes)
    msg_id = f"m{checker.cases}"
    payload = json.dumps({"type": "record", "schema": 1, "msg_id": msg_id,
                          "record": raw}).encode()
    before = checker.total()
    reply = d.handle(payload, 0.0)
    assert len(encode_reply(reply)) - 4 <= MAX_OUTGOING
    again = d.handle(payload, 0.0)
    checker.check(raw, msg_id, reply, again, before)
    assert d.handle(b'{"type":"ping","schema":1}', 0.0)["type"] == "pong"


def test_fuzz_in_process_tried_cases(in_process: tuple[Dispatcher, Checker]) -> None:
    """Runs after the fuzz above (file order): it did run its cases, and some were stored."""
    _, checker = in_process
    print(f"in-process fuzz: {checker.cases} cases, {checker.total()} stored")
    assert checker.cases >= 100 and checker.total() >= 1


# --- the real host process over pipes ----------------------------------------------------------

@pytest.fixture(scope="module")
def process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, Checker]]:
    tmp = tmp_path_factory.mktemp("fuzz-process")
    log = tmp / "host.log"  # not stderr: an unread stderr pipe fills up and stalls the host
    host = Host(tmp, {"PROTOLENS_HOST_LOG": str(log)})
    yield host, Checker(host.db)
    code, _, err = host.close()
    text = log.read_text(errors="replace")
    assert code == 0 and b"Traceback" not in err and "Traceback" not in text, text[-2000:]


frames = st.one_of(
    mutations.map(lambda c: ("record", mutated(c))),
    st.binary(max_size=200).map(lambda b: ("bytes", b)),
    st.sampled_from(["\ud800", "x" * 300, 7, None]).map(lambda m: ("msg_id", m)),
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=frames)
def test_fuzz_real_host_process(process: tuple[Host, Checker], case: tuple[str, Any]) -> None:
    host, checker = process
    kind, value = case
    before = checker.total()
    if kind == "record":
        msg_id = f"p{checker.cases}"
        data = frame({"type": "record", "schema": 1, "msg_id": msg_id, "record": value})
        host.send(data)
        reply = host.reply()
        host.send(data)
        checker.check(value, msg_id, reply, host.reply(), before)
    else:
        if kind == "bytes":
            host.send(len(value).to_bytes(4, "little") + value)
        else:
            rec = make_record(1)
            rec["id"] = str(uuid.uuid4())
            host.send(frame({"type": "record", "schema": 1, "msg_id": value, "record": rec}))
        reply = host.reply()
        assert reply["type"] in ("error", "pong", "hello", "ack", "policies", "query_result")
        if reply["type"] == "hello":
            assert host.reply()["type"] == "policies"  # sent after every hello
        if reply["type"] == "error":
            assert reply["retry"] is False
        if kind == "msg_id" and reply["type"] == "ack":  # msg_id None: a valid message
            assert value is None and checker.total() == before + 1
        else:
            assert checker.total() == before
        checker.cases += 1
    host.send(frame({"type": "ping", "schema": 1}))
    assert host.reply() == {"type": "pong", "schema": 1}  # still serving


def test_fuzz_real_host_tried_cases(process: tuple[Host, Checker]) -> None:
    _, checker = process
    print(f"real-process fuzz: {checker.cases} cases, {checker.total()} stored")
    assert checker.cases >= 50
