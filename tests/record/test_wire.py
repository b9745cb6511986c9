"""``record/wire.py`` (msgspec types generated from the column table) against the reference
validator ``validate.py``: whatever the wire types accept, ``parse_record`` accepts too, with the
same rows cell for cell and type for type (``1`` is not ``1.0``, ``-0.0`` is not ``0.0``); every
bound of the column table is the same on both; real records (the recorder's golden records, the
benchmark's) take the wire path."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from protolens.messaging import inbound
from protolens.record import RecordError, parse_record, wire
from protolens.record.rows import REQUEST_CELLS, RecordRows, record_rows
from scripts.devkit.navrecord_builder import make_record, with_change
from tests.record import mutation
from tests.record.coalesced_record import coalesced_record
from tests.record.mutation import DELETE, apply_changes, json_paths
from tests.record.test_record_ranges import BOUNDS

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "cdp").glob(
    "*.expected.json"))
DECODE = msgspec.json.Decoder(wire.Record).decode


def wire_rows(text: bytes) -> RecordRows | None:
    try:
        return wire.rows(DECODE(text))
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        return None


def reference_rows(text: bytes) -> RecordRows | None:
    """What the host's reference path makes of a record's JSON text (None: refused)."""
    try:
        value = inbound.decode_message(text)
        inbound.check_text(text, value)
        return record_rows(parse_record(value))
    except (inbound.BadMessage, RecordError):
        return None


def typed(rows: RecordRows) -> Any:
    """Every cell with its type (``repr`` tells 1 from 1.0 and True, and -0.0 from 0.0)."""
    def cells(row: Any) -> list[str]:
        return [f"{type(c).__name__}:{c!r}" for c in row]
    return (rows.id, sorted((k, *cells([v])) for k, v in rows.navigation.items()),
            json.dumps(rows.context, sort_keys=True, default=repr), repr(rows.experiment),
            [cells(r) for r in rows.requests], [cells(r) for r in rows.connections],
            [cells(r) for r in rows.hosts], [cells(r) for r in rows.policies])


def assert_subset(text: bytes) -> RecordRows | None:
    """The invariant: wire accepted => reference accepted, with the same rows."""
    fast = wire_rows(text)
    if fast is not None:
        ref = reference_rows(text)
        assert ref is not None, f"wire accepted what validate.py refuses: {text[:300]!r}"
        assert typed(fast) == typed(ref)
    return fast


def full_record() -> dict[str, Any]:
    return mutation.full_record(6, repetition="3")


def real_records() -> list[dict[str, Any]]:
    out = [make_record(100, seed=1), make_record(7, family="h1"), full_record(),
           coalesced_record(), coalesced_record(upstream=True)]
    for f in FIXTURES:
        data = json.loads(f.read_text())
        out.extend(data if isinstance(data, list) else [data])
    return out


@pytest.mark.parametrize("raw", real_records(), ids=lambda r: r["id"][-6:])
def test_real_records_take_the_wire_path_with_the_reference_rows(raw: dict[str, Any]) -> None:
    assert assert_subset(json.dumps(raw).encode()) is not None


@pytest.mark.parametrize("path,ok,bad,message", BOUNDS)
def test_each_bound_is_the_same_on_both(path: str, ok: Any, bad: Any, message: str) -> None:
    assert assert_subset(json.dumps(with_change(make_record(3), path, ok)).encode()) is not None
    refused = json.dumps(with_change(make_record(3), path, bad)).encode()
    assert reference_rows(refused) is None
    assert wire_rows(refused) is None


# the wire path declines these; validate.py accepts them (its errors and its leniency stay whole)
DECLINED = {
    "an unknown field": lambda r: r.update(future_field={"x": 1}),
    "an unknown request field": lambda r: r["requests"][0].update(server_timing=[]),
    "an integral float count": lambda r: r["requests"][0].update(encoded_bytes=1234.0),
    "schema 1.0": lambda r: r.update(schema=1.0),
    "an extra experiment field": lambda r: (r.update(source="experiment"),
                                            r.update(experiment={"name": "e", "arm": "a",
                                                                 "x": 1})),
    "a deep context": lambda r: r.update(context={"n": json.loads("[" * 100 + "]" * 100)}),
}


@pytest.mark.parametrize("change", DECLINED.values(), ids=DECLINED.keys())
def test_what_the_wire_path_leaves_to_the_reference(change: Any) -> None:
    raw = make_record(3)
    change(raw)
    text = json.dumps(raw).encode()
    assert reference_rows(text) is not None
    assert wire_rows(text) is None


BASE = json.dumps(make_record(3)).encode()
TEXT_EDITS: list[tuple[bytes, bytes]] = [
    (b'"status": 200', b'"status": 200, "status": "x"'),  # a key twice: the last one counts
    (b'"status": 200', b'"status": "x", "status": 200'),
    (b'"status": 200', b'"status": 200, "status": 201'),
    (b'"start_ms": 0.0', b'"start_ms": -0'),
    (b'"start_ms": 0.0', b'"start_ms": -0.0'),
    (b'"start_ms": 0.0', b'"start_ms": 0e0'),
    (b'"start_ms": 0.0', b'"start_ms": 1E3'),
    (b'"start_ms": 0.0', b'"start_ms": 1e999'),
    (b'"start_ms": 0.0', b'"start_ms": NaN'),
    (b'"encoded_bytes": 1000', b'"encoded_bytes": 1e3'),
    (b'"encoded_bytes": 1000', b'"encoded_bytes": -0'),
    (b'"encoded_bytes": 1000', b'"encoded_bytes": ' + b"1" * 4301),
    (b'"context": {}', b'"context": {"big": ' + b"1" * 4301 + b"}"),
    (b'"context": {}', b'"context": {"x": 1e999}'),
    (b'"context": {}', b'"context": {"x": "\\ud800"}'),
    (b'"context": {}', b'"context": {"x": "\\u00e9\\ud83d\\ude00"}'),
    (b'"context": {}', b'"context": {}, "context": []'),
    (b'"context": {}', b'"context": {"campaign": "c", "campaign": 5}'),
    (b'"method": "GET"', b'"method": "G\\u0000T"'),
    (b'"method": "GET"', b'"method": "G\xc3\xa9T"'),
    (b'"method": "GET"', b'"method": "G\xc3T"'),
    (b'"method": "GET"', b'"method": "G\\udc00T"'),
    (b'"method": "GET"', b'"method":\t"GET"\r\n'),
    (b'"page": {', b'"page": {"page": 1, '),
]


@pytest.mark.parametrize("old,new", TEXT_EDITS, ids=[n.decode("latin-1")[:40] for _, n in
                                                      TEXT_EDITS])
def test_json_text_edge_cases_keep_the_subset(old: bytes, new: bytes) -> None:
    assert old in BASE
    assert_subset(BASE.replace(old, new, 1))


FULL = full_record()
PATHS = json_paths(FULL)
scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text(max_size=12))
values = st.one_of(
    scalars,
    st.sampled_from([2 ** 53, 2 ** 53 + 1, 2 ** 63, -1, 0.5, 1.0, 1e308, "", "h2", "x" * 300,
                     "00000000-0000-0000-0000-000000000000", [], {}, ["h1"], [None],
                     {"name": "", "arm": "a"}, DELETE]),
    st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=3))
@example([(("requests", 0, "request_id"), "1001.1:0")])  # a duplicate id
@example([(("connections", 0, "share"), 0.9), (("connections", 1, "share"), 0.2)])
@example([(("source",), "passive")])  # experiment without its source
def test_mutated_records_keep_the_subset(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    raw = apply_changes(copy.deepcopy(FULL), changes)
    assert_subset(json.dumps(raw).encode())


@settings(max_examples=1500, deadline=None)
@given(st.floats(min_value=-86_400_000, max_value=86_400_000)
       | st.from_regex(r"-?(0|[1-9][0-9]{0,7})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,2})?",
                       fullmatch=True))
def test_numbers_parse_to_the_same_float(number: float | str) -> None:
    text = number if isinstance(number, str) else repr(number)
    if "inf" in text or "nan" in text:
        return
    got = assert_subset(BASE.replace(b'"start_ms": 0.0', b'"start_ms": ' + text.encode(), 1))
    if got is not None:
        cell = got.requests[0][2 + REQUEST_CELLS.index("start_ms")]
        want = float(json.loads(text))  # JSON -0 is the integer 0
        assert math.copysign(1, cell) == math.copysign(1, want) and cell == want
