"""Validation of a decoded JSON object into a ``NavigationRecord`` (docs/RECORD.md, "Validation").

Every check names the field by its path (``requests[3].encoded_bytes``) in the one-line error.
Unknown extra fields are ignored: later schema versions may add fields, never rename them.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NoReturn, TypeVar

from protolens.record.model import (
    FAMILIES,
    LATE_ATTACH,
    SCHEMA_VERSION,
    SOURCES,
    URL_DETAILS,
    AppliedPolicy,
    Browser,
    Connection,
    Experiment,
    HostSummary,
    Milestones,
    NavigationRecord,
    NetworkInfo,
    Page,
    Request,
)

T = TypeVar("T")
_MISSING = object()


class RecordError(ValueError):
    """A record that does not match the schema; the message names the first bad field."""


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing (field missing)"
    text = repr(value) if not isinstance(value, str) else '"' + value + '"'
    return text if len(text) <= 40 else text[:37] + "..."


class _Obj:
    """A JSON object being read, with its path for error messages."""

    def __init__(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise RecordError(f"{path or 'record'}: expected object, got {_show(value)}")
        self.value: dict[str, Any] = value
        self.path = path

    def _name(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _fail(self, key: str, nullable: bool, what: str, raw: Any) -> NoReturn:
        expected = f"{what} or null" if nullable else what
        raise RecordError(f"{self._name(key)}: expected {expected}, got {_show(raw)}")

    def _get(self, key: str, nullable: bool, check: Callable[[Any], bool], what: str) -> Any:
        raw = self.value.get(key, _MISSING)
        if raw is None and nullable:
            return None
        if raw is _MISSING or not check(raw):
            self._fail(key, nullable, what, raw)
        return raw

    # The four readers below have inline fast paths for the common valid case: validation is
    # most of the host's ingest cost (scripts/bench/ingest.py).
    def str_(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, _MISSING)
        if type(raw) is str or (raw is None and nullable):
            return raw
        self._fail(key, nullable, "string", raw)

    def bool_(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, _MISSING)
        if raw is True or raw is False or (raw is None and nullable):
            return raw
        self._fail(key, nullable, "boolean", raw)

    def num(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, _MISSING)
        if type(raw) is float and math.isfinite(raw):
            return raw
        if type(raw) is int or (raw is None and nullable):
            return None if raw is None else float(raw)
        self._fail(key, nullable, "finite number", raw)

    def count(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, _MISSING)
        if type(raw) is int and raw >= 0:
            return raw
        if raw is None and nullable:
            return None
        if _is_count(raw):
            return int(raw)
        self._fail(key, nullable, "integer >= 0", raw)

    def enum(self, key: str, allowed: tuple[str, ...], nullable: bool = False) -> Any:
        what = " | ".join(f'"{a}"' for a in allowed)
        return self._get(key, nullable, lambda v: isinstance(v, str) and v in allowed, what)

    def obj(self, key: str, nullable: bool = False) -> _Obj | None:
        got = self._get(key, nullable, lambda v: isinstance(v, dict), "object")
        return None if got is None else _Obj(got, self._name(key))

    def items(self, key: str, parse: Callable[[Any, str], T]) -> tuple[T, ...]:
        got = self._get(key, False, lambda v: isinstance(v, list), "array")
        return tuple(parse(item, f"{self._name(key)}[{i}]") for i, item in enumerate(got))


def _is_finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _is_count(v: Any) -> bool:
    return _is_finite(v) and v >= 0 and float(v).is_integer()


def _string(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise RecordError(f"{path}: expected string, got {_show(v)}")
    return v


def _family(v: Any, path: str) -> str:
    if not (isinstance(v, str) and v in FAMILIES):
        raise RecordError(f'{path}: expected "h1" | "h2" | "h3", got {_show(v)}')
    return v


def _request(v: Any, path: str) -> Request:
    o = _Obj(v, path)
    return Request(
        request_id=o.str_("request_id"), url=o.str_("url"), host=o.str_("host"),
        resource_type=o.str_("resource_type"), method=o.str_("method"),
        status=o.count("status", nullable=True), mime_type=o.str_("mime_type", nullable=True),
        protocol=o.str_("protocol", nullable=True),
        family=o.enum("family", FAMILIES, nullable=True),
        connection_id=o.count("connection_id", nullable=True),
        connection_reused=o.bool_("connection_reused", nullable=True),
        remote_ip=o.str_("remote_ip", nullable=True),
        remote_port=o.count("remote_port", nullable=True),
        encoded_bytes=o.count("encoded_bytes"), body_bytes=o.count("body_bytes"),
        from_disk_cache=o.bool_("from_disk_cache"),
        from_memory_cache=o.bool_("from_memory_cache"),
        from_service_worker=o.bool_("from_service_worker"),
        priority=o.str_("priority", nullable=True),
        alternate_protocol_usage=o.str_("alternate_protocol_usage", nullable=True),
        start_ms=o.num("start_ms"), first_byte_ms=o.num("first_byte_ms", nullable=True),
        end_ms=o.num("end_ms", nullable=True), failed=o.bool_("failed"),
        failure=o.str_("failure", nullable=True), frame_id=o.str_("frame_id", nullable=True),
        is_main_document=o.bool_("is_main_document"),
    )


def _connection(v: Any, path: str) -> Connection:
    o = _Obj(v, path)
    share = o.num("share")
    if not 0.0 <= share <= 1.0:
        raise RecordError(f"{path}.share: expected number in [0, 1], got {_show(share)}")
    return Connection(
        connection_id=o.count("connection_id"), host=o.str_("host"),
        family=o.enum("family", FAMILIES, nullable=True),
        remote_ip=o.str_("remote_ip", nullable=True),
        remote_port=o.count("remote_port", nullable=True), requests=o.count("requests"),
        bytes=o.count("bytes"), share=share, first_ms=o.num("first_ms", nullable=True),
        last_ms=o.num("last_ms", nullable=True), upstream=o.bool_("upstream"),
    )


def _host(v: Any, path: str) -> HostSummary:
    o = _Obj(v, path)
    return HostSummary(host=o.str_("host"), connections=o.count("connections"),
                       families=o.items("families", _family))


def _page(o: _Obj) -> Page:
    browser = o.obj("browser")
    assert browser is not None
    net = o.obj("network", nullable=True)
    return Page(
        url=o.str_("url"), origin=o.str_("origin"), url_detail=o.enum("url_detail", URL_DETAILS),
        started_at_ms=o.num("started_at_ms"),
        browser=Browser(name=browser.str_("name"), version=browser.str_("version")),
        extension_version=o.str_("extension_version"),
        network=None if net is None else NetworkInfo(
            effective_type=net.str_("effective_type", nullable=True),
            rtt_ms=net.num("rtt_ms", nullable=True),
            downlink_mbps=net.num("downlink_mbps", nullable=True)),
        warm=o.bool_("warm"), redirects=o.items("redirects", _string),
        aborted=o.bool_("aborted"), error=o.str_("error", nullable=True),
        # added after schema 1 shipped: a record without it was seen from its request
        late_attach=(o.enum("late_attach", LATE_ATTACH, nullable=True)
                     if "late_attach" in o.value else None),
    )


def _milestones(o: _Obj) -> Milestones:
    return Milestones(
        ttfb_ms=o.num("ttfb_ms", nullable=True), fcp_ms=o.num("fcp_ms", nullable=True),
        lcp_ms=o.num("lcp_ms", nullable=True), dcl_ms=o.num("dcl_ms", nullable=True),
        load_ms=o.num("load_ms", nullable=True),
        first_image_ms=o.num("first_image_ms", nullable=True),
    )


def _applied(v: Any, path: str) -> AppliedPolicy:
    o = _Obj(v, path)
    ids = o.items("rule_ids", _string) if "rule_ids" in o.value else ()
    return AppliedPolicy(host=o.str_("host"), rule=o.str_("rule", nullable=True), arm=o.str_("arm"),
                         mechanism=o.str_("mechanism"), rule_ids=ids)


def _unique(items: Sequence[T], array: str, field: str, key: Callable[[T], Hashable],
            shown: Callable[[T], str]) -> None:
    """Reject the first item whose ``key`` an earlier item of ``array`` already had."""
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        k = key(item)
        if k in seen:
            raise RecordError(f"{array}[{i}].{field}: duplicate {shown(item)} in this record")
        seen.add(k)


def _policies(o: _Obj) -> tuple[AppliedPolicy, ...]:
    if o.value.get("policies") is None:
        return ()
    out = o.items("policies", _applied)
    _unique(out, "policies", "host", lambda p: p.host, lambda p: _show(p.host))
    return out


def _experiment(o: _Obj, source: str) -> Experiment | None:
    e = o.obj("experiment", nullable=True) if "experiment" in o.value else None
    if e is None:
        return None
    if source != "experiment":
        raise RecordError(f'experiment: only for source "experiment", got source {_show(source)}')
    name, arm = e.str_("name"), e.str_("arm")
    if not name or not arm:
        raise RecordError("experiment: name and arm must be non-empty")
    return Experiment(name=name, arm=arm)


def parse_record(value: Any) -> NavigationRecord:
    """Validate a decoded JSON value as a schema-1 NavigationRecord; raise ``RecordError``."""
    o = _Obj(value, "")
    schema = o.value.get("schema", _MISSING)
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        raise RecordError(
            f"schema: unsupported record schema {_show(schema)}, this host reads {SCHEMA_VERSION}")
    rid = o.str_("id")
    try:
        uuid.UUID(rid)
    except ValueError:
        raise RecordError(f"id: expected a UUID string, got {_show(rid)}") from None
    page = o.obj("page")
    milestones = o.obj("milestones")
    assert page is not None and milestones is not None
    requests = o.items("requests", _request)
    _unique(requests, "requests", "request_id", lambda r: r.request_id,
            lambda r: _show(r.request_id))
    connections = o.items("connections", _connection)
    _unique(connections, "connections", "connection_id", lambda c: (c.upstream, c.connection_id),
            lambda c: str(c.connection_id))
    hosts = o.items("hosts", _host)
    _unique(hosts, "hosts", "host", lambda h: h.host, lambda h: _show(h.host))
    context = o.obj("context")
    assert context is not None
    source = o.enum("source", SOURCES)
    return NavigationRecord(
        schema=SCHEMA_VERSION, id=rid, source=source, page=_page(page),
        milestones=_milestones(milestones), requests=requests,
        connections=connections, hosts=hosts,
        context=dict(context.value), policies=_policies(o), experiment=_experiment(o, source),
    )
