"""Validation of a decoded JSON object into a ``NavigationRecord`` (docs/RECORD.md, "Validation").

Every check names the field by its path (``requests[3].encoded_bytes``) in the one-line error.
Unknown extra fields are ignored: later schema versions may add fields, never rename them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NoReturn, TypeVar

from protolens.record import columns as cols
from protolens.record.columns import (
    CONTEXT_MAX,
    MAX_ITEMS,
    MAX_REDIRECTS,
    SHARE_EPSILON,
    URL_MAX,
    Column,
)
from protolens.record.enums import FAMILIES, SCHEMA_VERSION, SOURCES
from protolens.record.model import (
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
    # a string is shown JSON-escaped: one line, and encodable even with a lone surrogate
    text = repr(value) if not isinstance(value, str) else json.dumps(value[:40])
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

    def items(self, key: str, parse: Callable[[Any, str], T],
              limit: int = MAX_ITEMS) -> tuple[T, ...]:
        got = self._get(key, False, lambda v: isinstance(v, list), "array")
        if len(got) > limit:
            raise RecordError(f"{self._name(key)}: {len(got)} items, at most {limit} allowed")
        return tuple(parse(item, f"{self._name(key)}[{i}]") for i, item in enumerate(got))

    def col(self, c: Column) -> Any:
        """The field of column ``c``: its type, then its enum, range or length (columns.py)."""
        return _reader(c)[1](self)

    def cols(self, readers: Sequence[Reader]) -> dict[str, Any]:
        return {key: read(self) for key, read in readers}

    def too_long(self, key: str, text: str, limit: int) -> NoReturn:
        raise RecordError(f"{self._name(key)}: {len(text)} characters, at most {limit} allowed")

    def out_of_range(self, key: str, c: Column, value: Any) -> NoReturn:
        raise RecordError(f"{self._name(key)}: expected {_bounds(c)}, got {_show(value)}")


Reader = tuple[str, Callable[[_Obj], Any]]
o_count, o_num = _Obj.count, _Obj.num
"""A record field's key and the function reading and checking it from an object."""


def _reader(c: Column) -> Reader:
    """A checker for column ``c``'s field with every limit bound once (validation is most of
    the host's ingest cost: scripts/bench/ingest.py)."""
    key, nullable, optional = c.key, not c.required, c.optional
    lo = -math.inf if c.min is None else c.min
    hi = math.inf if c.max is None else c.max
    limit = c.max_len if c.max_len is not None else math.inf

    read: Callable[[_Obj], Any]
    if c.flag:
        def read(o: _Obj) -> Any:
            raw = o.value.get(key)
            return raw if raw is True or raw is False else o.bool_(key, nullable)
    elif c.enum:
        allowed = frozenset(c.enum)

        def read(o: _Obj) -> Any:
            raw = o.value.get(key)
            return raw if type(raw) is str and raw in allowed else o.enum(key, c.enum, nullable)
    elif c.sql == "TEXT":
        def read(o: _Obj) -> Any:
            raw = o.value.get(key)
            if type(raw) is not str:
                return o.str_(key, nullable)
            if len(raw) > limit:
                o.too_long(key, raw, int(limit))
            return raw
    else:
        number = o_count if c.sql == "INTEGER" else o_num

        def read(o: _Obj) -> Any:
            value = number(o, key, nullable)
            if value is not None and not lo <= value <= hi:
                o.out_of_range(key, c, value)
            return value
    if optional:
        present = read

        def read(o: _Obj) -> Any:
            return present(o) if key in o.value else None
    return key, read


def _readers(prefix: str, skip: tuple[str, ...] = ()) -> tuple[Reader, ...]:
    return tuple(_reader(c) for c in cols.record_fields(prefix) if c.name not in skip)


def _num_text(x: float) -> str:
    if x == cols.MAX_COUNT:
        return "2^53"
    return str(int(x)) if float(x).is_integer() else str(x)


def _bounds(c: Column) -> str:
    what = "integer" if c.sql == "INTEGER" else "number"
    if c.min is not None and c.max is not None:
        return f"{what} in [{_num_text(c.min)}, {_num_text(c.max)}]"
    return f"{what} >= {_num_text(c.min)}" if c.min is not None else \
        f"{what} <= {_num_text(c.max or 0)}"


def _is_finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _is_count(v: Any) -> bool:
    return _is_finite(v) and v >= 0 and float(v).is_integer()


def _string(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise RecordError(f"{path}: expected string, got {_show(v)}")
    return v


def _url(v: Any, path: str) -> str:
    text = _string(v, path)
    if len(text) > URL_MAX:
        raise RecordError(f"{path}: {len(text)} characters, at most {URL_MAX} allowed")
    return text


def _rule_id(v: Any, path: str) -> str:
    text = _string(v, path)
    if len(text) > cols.TOKEN_MAX:
        raise RecordError(f"{path}: {len(text)} characters, at most {cols.TOKEN_MAX} allowed")
    return text


def _family(v: Any, path: str) -> str:
    if not (isinstance(v, str) and v in FAMILIES):
        raise RecordError(f'{path}: expected "h1" | "h2" | "h3", got {_show(v)}')
    return v


_REQUEST = _readers("requests")
_CONNECTION = _readers("connections")
_HOST = _readers("hosts", ("families",))
_PAGE = _readers("page", ("redirects",))
_BROWSER = _readers("page.browser")
_NETWORK = _readers("page.network")
_MILESTONES = _readers("milestones")
_POLICY = _readers("policies")


def _in_field_order(cls: type, readers: tuple[Reader, ...]) -> tuple[Callable[[_Obj], Any], ...]:
    """The readers of ``cls``'s fields in its field order: the two objects a record has hundreds
    of are built positionally (faster than keywords). Every field needs a column."""
    names = [f.name for f in dataclasses.fields(cls)]
    by_key = dict(readers)
    if set(names) != set(by_key):
        raise TypeError(f"{cls.__name__}: fields {sorted(names)} differ from the columns of "
                        f"record/columns.py {sorted(by_key)}")
    return tuple(by_key[name] for name in names)


_REQUEST_READ = _in_field_order(Request, _REQUEST)
_CONNECTION_READ = _in_field_order(Connection, _CONNECTION)


def _request(v: Any, path: str) -> Request:
    o = _Obj(v, path)
    return Request(*[read(o) for read in _REQUEST_READ])


def _connection(v: Any, path: str) -> Connection:
    o = _Obj(v, path)
    return Connection(*[read(o) for read in _CONNECTION_READ])


def _host(v: Any, path: str) -> HostSummary:
    o = _Obj(v, path)
    return HostSummary(**o.cols(_HOST), families=o.items("families", _family, len(FAMILIES)))


def _page(o: _Obj) -> Page:
    browser = o.obj("browser")
    assert browser is not None
    net = o.obj("network", nullable=True)
    fields = o.cols(_PAGE)
    return Page(**fields, browser=Browser(**browser.cols(_BROWSER)),
                network=None if net is None else NetworkInfo(**net.cols(_NETWORK)),
                redirects=o.items("redirects", _url, MAX_REDIRECTS))


def _milestones(o: _Obj) -> Milestones:
    return Milestones(**o.cols(_MILESTONES))


def _applied(v: Any, path: str) -> AppliedPolicy:
    o = _Obj(v, path)
    ids = o.items("rule_ids", _rule_id) if "rule_ids" in o.value else ()
    return AppliedPolicy(**o.cols(_POLICY), rule_ids=ids)


def _shares(connections: Sequence[Connection]) -> None:
    """Shares are bytes / total within the browser's (and the proxy's) connections: each group
    sums to at most 1 (docs/RECORD.md)."""
    for upstream in (False, True):
        total = math.fsum(c.share for c in connections if c.upstream is upstream)
        if total > 1 + SHARE_EPSILON:
            who = "upstream" if upstream else "browser"
            raise RecordError(f"connections: the {who} connections' shares sum to {total:.6g}, "
                              "at most 1 allowed")


def _context(o: _Obj) -> dict[str, Any]:
    context = o.obj("context")
    assert context is not None
    size = len(json.dumps(context.value, default=str))
    if size > CONTEXT_MAX:
        raise RecordError(f"context: {size} characters of JSON, at most {CONTEXT_MAX} allowed")
    for c in _CONTEXT_COLUMNS:  # what would land in a column must fit it (store/ingest.py)
        value = context.value.get(c.name)
        if isinstance(value, str) and c.sql == "TEXT" and c.max_len is not None and \
                len(value) > c.max_len:
            context.too_long(c.name, value, c.max_len)
        if c.sql == "INTEGER" and not isinstance(value, bool):
            number = int(value) if isinstance(value, str) and \
                value.strip().lstrip("-").isdigit() else value
            if isinstance(number, int) and not (c.min or 0) <= number <= (c.max or 0):
                context.out_of_range(c.name, c, number)
    return dict(context.value)


_CONTEXT_COLUMNS = tuple(c for c in cols.NAVIGATIONS if c.context)


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
    longest = cols.column("navigations", "arm").max_len or 0
    if max(len(name), len(arm)) > longest:
        raise RecordError(f"experiment: name and arm have at most {longest} characters")
    return Experiment(name=name, arm=arm)


def canonical_id(rid: str) -> str:
    """A record id in its one stored form: lower case with dashes. Upper case, braces,
    ``urn:uuid:`` and no dashes are spellings of the same UUID (issue 15, defect 3)."""
    try:
        return str(uuid.UUID(rid))
    except ValueError:
        raise RecordError(f"id: expected a UUID string, got {_show(rid)}") from None


def parse_record(value: Any) -> NavigationRecord:
    """Validate a decoded JSON value as a schema-1 NavigationRecord; raise ``RecordError``."""
    o = _Obj(value, "")
    schema = o.value.get("schema", _MISSING)
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        raise RecordError(
            f"schema: unsupported record schema {_show(schema)}, this host reads {SCHEMA_VERSION}")
    rid = canonical_id(o.str_("id"))
    page = o.obj("page")
    milestones = o.obj("milestones")
    assert page is not None and milestones is not None
    requests = o.items("requests", _request)
    _unique(requests, "requests", "request_id", lambda r: r.request_id,
            lambda r: _show(r.request_id))
    connections = o.items("connections", _connection)
    _unique(connections, "connections", "connection_id", lambda c: (c.upstream, c.connection_id),
            lambda c: str(c.connection_id))
    _shares(connections)
    hosts = o.items("hosts", _host)
    _unique(hosts, "hosts", "host", lambda h: h.host, lambda h: _show(h.host))
    context = _context(o)
    source = o.enum("source", SOURCES)
    return NavigationRecord(
        schema=SCHEMA_VERSION, id=rid, source=source, page=_page(page),
        milestones=_milestones(milestones), requests=requests,
        connections=connections, hosts=hosts,
        context=context, policies=_policies(o), experiment=_experiment(o, source),
    )
