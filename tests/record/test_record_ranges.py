"""Ranges, sizes and ids at the record boundary, from the one column table (issue 15, defects 2,
3, 11 and 13): every bound refuses the first value past it with the field and the limit named,
and accepts the value on it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from protolens.record import RecordError, parse_record
from protolens.record.columns import MAX_COUNT, MAX_ITEMS, MAX_REDIRECTS, URL_MAX
from scripts.devkit.navrecord_builder import make_record, with_change

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cdp"

# (path, accepted value on the bound, refused value past it, error text)
BOUNDS: list[tuple[str, Any, Any, str]] = [
    ("requests[0].status", 599, 600, "requests[0].status: expected integer in [100, 599], got 600"),
    ("requests[0].status", 100, 99, "requests[0].status: expected integer in [100, 599], got 99"),
    ("requests[0].status", 100, -500, "requests[0].status: expected integer >= 0 or null"),
    ("requests[0].remote_port", 65535, 70000,
     "requests[0].remote_port: expected integer in [1, 65535], got 70000"),
    ("connections[0].remote_port", 1, 0,
     "connections[0].remote_port: expected integer in [1, 65535], got 0"),
    ("requests[0].encoded_bytes", MAX_COUNT, MAX_COUNT + 1,
     "requests[0].encoded_bytes: expected integer in [0, 2^53], got 9007199254740993"),
    ("requests[0].encoded_bytes", 0, 2 ** 63,
     "requests[0].encoded_bytes: expected integer in [0, 2^53], got 9223372036854775808"),
    ("requests[0].connection_id", 7, 2 ** 64, "requests[0].connection_id: expected integer in"),
    ("hosts[0].connections", 1, 2 ** 63, "hosts[0].connections: expected integer in [0, 2^53]"),
    ("page.started_at_ms", 1.7e12, 1e308,
     "page.started_at_ms: expected number in [946684800000, 4102444800000], got 1e+308"),
    ("page.started_at_ms", 1.7e12, 0, "page.started_at_ms: expected number in"),
    ("milestones.load_ms", 86_400_000, 86_400_001, "milestones.load_ms: expected number in"),
    ("milestones.ttfb_ms", 0, -1, "milestones.ttfb_ms: expected number in [0, 86400000]"),
    ("requests[0].end_ms", -86_400_000, -1e300, "requests[0].end_ms: expected number in"),
    ("page.network.rtt_ms", 3000, -5, "page.network.rtt_ms: expected number in"),
    ("page.url", "https://a.test/" + "x" * (URL_MAX - 15), "https://a.test/" + "x" * (URL_MAX - 14),
     f"page.url: {URL_MAX + 1} characters, at most {URL_MAX} allowed"),
    ("requests[0].url", "u" * URL_MAX, "u" * (URL_MAX + 1), "requests[0].url: 2097153 characters"),
    ("page.origin", "https://" + "a" * 504, "https://" + "a" * 505,
     "page.origin: 513 characters, at most 512 allowed"),
    ("requests[0].host", "h" * 253, "h" * 254, "requests[0].host: 254 characters, at most 253"),
    ("requests[0].method", "M" * 64, "M" * 65, "requests[0].method: 65 characters, at most 64"),
    ("requests[0].mime_type", "t" * 255, "t" * 256, "requests[0].mime_type: 256 characters"),
    ("page.browser.version", "1" * 64, "1" * 65, "page.browser.version: 65 characters"),
    ("page.redirects[0]", "r" * URL_MAX, "r" * (URL_MAX + 1), "page.redirects[0]: 2097153"),
    ("page.redirects", ["http://a.test/"] * MAX_REDIRECTS, ["http://a.test/"] * 21,
     "page.redirects: 21 items, at most 20 allowed"),
    ("hosts[0].families", ["h1", "h2", "h3"], ["h1", "h2", "h3", "h1"],
     "hosts[0].families: 4 items, at most 3 allowed"),
    ("context", {"note": "c" * 60_000}, {"note": "c" * 70_000},
     "context: 70012 characters of JSON, at most 65536 allowed"),
    ("context", {"campaign": "c" * 1024}, {"campaign": "c" * 1025},
     "context.campaign: 1025 characters, at most 1024 allowed"),
    ("context", {"repetition": 2 ** 53}, {"repetition": 2 ** 63},
     "context.repetition: expected integer in [0, 2^53], got 9223372036854775808"),
    ("context", {"repetition": "7"}, {"repetition": "9" * 30},
     "context.repetition: expected integer in [0, 2^53]"),
]


@pytest.mark.parametrize("path,ok,bad,message", BOUNDS)
def test_each_bound_accepts_its_edge_and_refuses_past_it(path: str, ok: Any, bad: Any,
                                                          message: str) -> None:
    parse_record(with_change(make_record(3), path, ok))
    with pytest.raises(RecordError) as info:
        parse_record(with_change(make_record(3), path, bad))
    assert str(info.value).startswith(message), str(info.value)
    assert len(str(info.value)) < 200  # one short line, never the oversize value itself


def test_too_many_requests_is_refused_before_reading_them() -> None:
    raw = make_record(1)
    raw["requests"] = [{}] * (MAX_ITEMS + 1)  # not even valid requests: the count comes first
    with pytest.raises(RecordError, match=r"^requests: 20001 items, at most 20000 allowed$"):
        parse_record(raw)


def test_shares_of_a_navigation_sum_to_at_most_one() -> None:
    raw = make_record(6)  # two connections
    raw["connections"][0]["share"] = 1.0
    raw["connections"][1]["share"] = 1.0
    with pytest.raises(RecordError, match=r"^connections: the browser connections' shares sum "
                                          r"to 2, at most 1 allowed$"):
        parse_record(raw)
    # the proxy's upstream connections are a group of their own (docs/SCHEMA.md)
    raw["connections"][1]["upstream"] = True
    assert len(parse_record(raw).connections) == 2


def test_schema_must_be_exactly_the_supported_one() -> None:
    for schema in (99, 0, 1.5, "1"):
        with pytest.raises(RecordError, match="schema: unsupported record schema"):
            parse_record(with_change(make_record(1), "schema", schema))


@pytest.mark.parametrize("spell", [str.upper, lambda s: "{" + s + "}",
                                   lambda s: "urn:uuid:" + s, lambda s: s.replace("-", ""),
                                   lambda s: "{" + s.upper().replace("-", "") + "}"])
def test_ids_are_canonicalized(spell: Any) -> None:
    raw = make_record(2)
    canonical = raw["id"]
    assert parse_record(with_change(raw, "id", spell(canonical))).id == canonical
    assert str(uuid.UUID(canonical)) == canonical


def test_every_golden_record_is_within_the_bounds() -> None:
    goldens = sorted(FIXTURES.glob("*.expected.json"))
    assert len(goldens) >= 9
    for path in goldens:
        for raw in json.loads(path.read_text()):
            assert parse_record(raw).id == raw["id"], path.name
