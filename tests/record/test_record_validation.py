"""Validation of NavigationRecord JSON at the boundary (docs/RECORD.md): errors name the field."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from protolens.record import NavigationRecord, RecordError, parse_record
from scripts.devkit.navrecord_builder import DELETE, make_record, with_change


def test_valid_record_parses_into_frozen_dataclasses() -> None:
    raw = make_record(7, family="h1")
    rec = parse_record(raw)
    assert isinstance(rec, NavigationRecord)
    assert rec.id == raw["id"] and len(rec.requests) == 7
    assert rec.requests[3].encoded_bytes == raw["requests"][3]["encoded_bytes"]
    assert rec.page.network is not None and rec.page.network.rtt_ms == 50.0
    assert rec.page.redirects == ("http://a.test/old",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.requests[0].url = "x"  # type: ignore[misc]


def test_every_dataclass_field_has_a_docstring() -> None:
    import ast
    import inspect

    from protolens.record import model

    tree = ast.parse(inspect.getsource(model))
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            body = node.body
            for i, stmt in enumerate(body):
                if isinstance(stmt, ast.AnnAssign):
                    nxt = body[i + 1] if i + 1 < len(body) else None
                    assert isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant), (
                        f"{node.name}.{ast.unparse(stmt.target)} has no docstring")


def test_nullable_fields_accept_null() -> None:
    raw = make_record(2)
    raw["page"]["network"] = None
    raw["requests"][1].update(status=None, protocol=None, family=None, connection_id=None,
                              end_ms=None, remote_port=None)
    raw["milestones"] = dict.fromkeys(raw["milestones"])
    rec = parse_record(raw)
    assert rec.page.network is None and rec.requests[1].family is None
    assert rec.milestones.load_ms is None


def test_extra_fields_are_ignored() -> None:
    raw = make_record(1)
    raw["future_field"] = {"x": 1}
    raw["requests"][0]["server_timing"] = []
    assert parse_record(raw).id == raw["id"]


def test_integral_float_counts_are_ints() -> None:
    raw = with_change(make_record(1), "requests[0].encoded_bytes", 1234.0)
    value = parse_record(raw).requests[0].encoded_bytes
    assert value == 1234 and isinstance(value, int)


BAD: list[tuple[str, Any, str]] = [
    ("schema", 2, "schema: unsupported record schema 2"),
    ("schema", DELETE, "schema: unsupported record schema nothing"),
    ("schema", True, "schema: unsupported"),
    ("id", "not-a-uuid", "id: expected a UUID"),
    ("id", 5, "id: expected string"),
    ("source", "cloud", "source: expected"),
    ("page", DELETE, "page: expected object, got nothing (field missing)"),
    ("page.url", None, "page.url: expected string, got None"),
    ("page.url_detail", "host", "page.url_detail: expected"),
    ("page.started_at_ms", "yesterday", "page.started_at_ms: expected finite number"),
    ("page.browser.version", 156, "page.browser.version: expected string"),
    ("page.network.rtt_ms", "fast", "page.network.rtt_ms: expected finite number or null"),
    ("page.warm", 0, "page.warm: expected boolean"),
    ("page.redirects", "x", "page.redirects: expected array"),
    ("page.redirects[0]", 3, "page.redirects[0]: expected string"),
    ("milestones.load_ms", DELETE,
     "milestones.load_ms: expected finite number or null, got nothing"),
    ("milestones.ttfb_ms", [1], "milestones.ttfb_ms: expected finite number"),
    ("requests", {}, "requests: expected array"),
    ("requests[3]", "req", "requests[3]: expected object"),
    ("requests[3].encoded_bytes", "x", 'requests[3].encoded_bytes: expected integer >= 0, got "x"'),
    ("requests[3].encoded_bytes", -1, "requests[3].encoded_bytes: expected integer >= 0, got -1"),
    ("requests[3].body_bytes", 1.5, "requests[3].body_bytes: expected integer >= 0"),
    ("requests[2].family", "h4", 'requests[2].family: expected "h1" | "h2" | "h3" or null'),
    ("requests[1].connection_id", True, "requests[1].connection_id: expected integer"),
    ("requests[1].failed", None, "requests[1].failed: expected boolean, got None"),
    ("requests[0].start_ms", None, "requests[0].start_ms: expected finite number, got None"),
    ("requests[0].request_id", DELETE, "requests[0].request_id: expected string, got nothing"),
    ("requests[4].request_id", "1000.1:0", "requests[4].request_id: duplicate"),
    ("connections[0].share", 1.5, "connections[0].share: expected number in [0, 1]"),
    ("connections[0].share", -0.1, "connections[0].share: expected number in [0, 1]"),
    ("connections[1].connection_id", 10, "connections[1].connection_id: duplicate 10"),
    ("connections[0].upstream", "no", "connections[0].upstream: expected boolean"),
    ("hosts[0].families[0]", "spdy", "hosts[0].families[0]: expected"),
    ("hosts[1].host", "a.test", "hosts[1].host: duplicate"),
    ("hosts[0].connections", -2, "hosts[0].connections: expected integer >= 0"),
    ("context", None, "context: expected object, got None"),
]


def _id(value: object) -> str:
    """A test id that is the same in every process (pytest-xdist compares them): an object's
    repr holds its address."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize(("path", "value", "message"), BAD,
                         ids=[f"{p}={_id(v)}" for p, v, _ in BAD])
def test_bad_field_is_named(path: str, value: Any, message: str) -> None:
    raw = with_change(make_record(5), path, value)
    with pytest.raises(RecordError) as info:
        parse_record(raw)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_times_must_be_finite(value: float) -> None:
    raw = with_change(make_record(2), "requests[1].end_ms", value)
    with pytest.raises(RecordError, match=r"requests\[1\].end_ms: expected finite number"):
        parse_record(raw)


def test_not_an_object() -> None:
    with pytest.raises(RecordError, match="record: expected object"):
        parse_record([1, 2])


def test_long_bad_values_are_shortened() -> None:
    raw = with_change(make_record(1), "page.url", ["x" * 10_000])
    with pytest.raises(RecordError) as info:
        parse_record(raw)
    assert len(str(info.value)) < 200
