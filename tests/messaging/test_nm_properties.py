"""Property tests: garbage at every layer yields only the documented outcome, never a crash."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protolens.messaging.dispatch import Dispatcher, encode_reply
from protolens.messaging.framing import MAX_OUTGOING, Frame, FrameDecoder, encode_frame
from protolens.record import RecordError, parse_record
from protolens.store import SqliteSink, open_rw
from scripts.devkit.navrecord_builder import make_record
from tests.record.mutation import json_paths

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                 max_size=4),
    max_leaves=20,
)


RECORD = make_record(4)
SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "navigation-record.schema.json"
RECORD_FIELDS = {"record", *json.loads(SCHEMA.read_text())["properties"]}
FIELD_PATH = re.compile(r"[A-Za-z_]+(\[\d+\])?(\.[A-Za-z_]+(\[\d+\])?)*")
PATHS = json_paths(RECORD)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PATHS), json_values)
def test_mutated_record_parses_or_raises_record_error(path: tuple[Any, ...], value: Any) -> None:
    raw = json.loads(json.dumps(RECORD))
    target = raw
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        parse_record(raw)
    except RecordError as exc:
        assert "\n" not in str(exc)
        name, sep, why = str(exc).partition(": ")
        # the error starts by naming a field of the record's schema (a path such as
        # requests[2].url, or "record" itself), then says what is wrong with it
        assert sep and why, exc
        assert FIELD_PATH.fullmatch(name), exc
        assert name.split(".")[0].split("[")[0] in RECORD_FIELDS, exc


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_arbitrary_json_is_rejected_with_record_error(value: Any) -> None:
    try:
        parse_record(value)
    except RecordError:
        return
    raise AssertionError("arbitrary JSON accepted as a record")


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_dispatch_never_raises_and_replies_fit(tmp_path: Path, payload: bytes) -> None:
    dispatcher = Dispatcher(SqliteSink(open_rw(tmp_path / "p.db", now_ms=0.0)))
    reply = dispatcher.handle(payload, 0.0)
    assert reply["type"] in ("error", "pong", "hello", "ack")
    frame = encode_reply(reply)
    assert len(frame) - 4 <= MAX_OUTGOING
    assert FrameDecoder().feed(frame) == [Frame(frame[4:])]


def test_record_survives_framing_round_trip_byte_for_byte() -> None:
    body = json.dumps({"type": "record", "schema": 1, "record": RECORD},
                      ensure_ascii=False).encode()
    decoder = FrameDecoder()
    events = decoder.feed(encode_frame(body, limit=1 << 26))
    assert events == [Frame(body)]
    assert parse_record(json.loads(events[0].payload)["record"]).id == RECORD["id"]
