"""Validation of a decoded JSON object into a ``NavigationRecord`` (docs/RECORD.md, "Validation").

Every check names the field by its path (``requests[3].encoded_bytes``) in the one-line error.
Unknown extra fields are ignored: later schema versions may add fields, never rename them. Each
stored field's type, range, enum and length come from ``record/columns.py`` (through
``record/reader.py``); the rules across fields are here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import uuid
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from protolens.record import columns as cols
from protolens.record.columns import (
    CONTEXT_MAX,
    LIST_FIELDS,
    MAX_REDIRECTS,
    SHARE_EPSILON,
    URL_MAX,
)
from protolens.record.counts import check_counts
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
from protolens.record.reader import MISSING, Obj, Reader, RecordError, readers, show

__all__ = ["RecordError", "canonical_id", "parse_record"]

T = TypeVar("T")


def _string(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise RecordError(f"{path}: expected string, got {show(v)}")
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
        raise RecordError(f'{path}: expected "h1" | "h2" | "h3", got {show(v)}')
    return v


_REQUEST = readers("requests")
_CONNECTION = readers("connections")
_HOST = readers("hosts", ("families",))
_PAGE = readers("page", ("redirects", *LIST_FIELDS))
_BROWSER = readers("page.browser")
_NETWORK = readers("page.network")
_MILESTONES = readers("milestones")
_POLICY = readers("policies")


def _in_field_order(cls: type, readers: tuple[Reader, ...]) -> tuple[Callable[[Obj], Any], ...]:
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
    o = Obj(v, path)
    return Request(*[read(o) for read in _REQUEST_READ])


def _connection(v: Any, path: str) -> Connection:
    o = Obj(v, path)
    return Connection(*[read(o) for read in _CONNECTION_READ])


def _host(v: Any, path: str) -> HostSummary:
    o = Obj(v, path)
    return HostSummary(**o.cols(_HOST), families=o.items("families", _family, len(FAMILIES)))


def _tokens(o: Obj, key: str) -> tuple[str, ...] | None:
    """A list field of ``LIST_FIELDS`` (absent or null: None), each item one of its values."""
    allowed = LIST_FIELDS[key]

    def item(v: Any, path: str) -> str:
        if not (isinstance(v, str) and v in allowed):
            raise RecordError(f"{path}: expected one of {', '.join(allowed)}, got {show(v)}")
        return v

    if o.value.get(key) is None:
        return None
    return o.items(key, item, len(allowed))


def _page(o: Obj) -> Page:
    browser = o.obj("browser")
    assert browser is not None
    net = o.obj("network", nullable=True)
    fields = o.cols(_PAGE)
    return Page(**fields, browser=Browser(**browser.cols(_BROWSER)),
                network=None if net is None else NetworkInfo(**net.cols(_NETWORK)),
                redirects=o.items("redirects", _url, MAX_REDIRECTS),
                incomplete_reasons=_tokens(o, "incomplete_reasons"),
                not_seen=_tokens(o, "not_seen"))


def _milestones(o: Obj) -> Milestones:
    return Milestones(**o.cols(_MILESTONES))


def _applied(v: Any, path: str) -> AppliedPolicy:
    o = Obj(v, path)
    ids = o.items("rule_ids", _rule_id) if "rule_ids" in o.value else ()
    return AppliedPolicy(**o.cols(_POLICY), rule_ids=ids)


def check_shares(connections: Sequence[Any]) -> None:
    """Shares are bytes / total within the browser's (and the proxy's) connections: each group
    sums to at most 1 (docs/RECORD.md). ``connections``: anything with ``share`` and ``upstream``
    (``Connection``, or ``record/wire.py``'s)."""
    for upstream in (False, True):
        total = math.fsum(c.share for c in connections if c.upstream is upstream)
        if total > 1 + SHARE_EPSILON:
            who = "upstream" if upstream else "browser"
            raise RecordError(f"connections: the {who} connections' shares sum to {total:.6g}, "
                              "at most 1 allowed")


def _context(o: Obj) -> dict[str, Any]:
    context = o.obj("context")
    assert context is not None
    return check_context(context.value)


def check_context(value: dict[str, Any]) -> dict[str, Any]:
    """A copy of the record's ``context`` object, if its JSON text and the values that would
    land in a lab-tag column fit (store/ingest.py)."""
    context = Obj(value, "context")
    size = len(json.dumps(context.value, default=str))
    if size > CONTEXT_MAX:
        raise RecordError(f"context: {size} characters of JSON, at most {CONTEXT_MAX} allowed")
    for c in _CONTEXT_COLUMNS:  # what would land in a column must fit it
        tag = context.value.get(c.name)
        if isinstance(tag, str) and c.sql == "TEXT" and c.max_len is not None and \
                len(tag) > c.max_len:
            context.too_long(c.name, tag, c.max_len)
        if c.sql == "INTEGER" and not isinstance(tag, bool):
            number = int(tag) if isinstance(tag, str) and \
                tag.strip().lstrip("-").isdigit() else tag
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


def _policies(o: Obj) -> tuple[AppliedPolicy, ...]:
    if o.value.get("policies") is None:
        return ()
    out = o.items("policies", _applied)
    _unique(out, "policies", "host", lambda p: p.host, lambda p: show(p.host))
    return out


def _experiment(o: Obj, source: str) -> Experiment | None:
    e = o.obj("experiment", nullable=True) if "experiment" in o.value else None
    if e is None:
        return None
    if source != "experiment":
        raise RecordError(f'experiment: only for source "experiment", got source {show(source)}')
    return check_experiment(e.str_("name"), e.str_("arm"))


def check_experiment(name: str, arm: str) -> Experiment:
    """The A/B assignment, if both names are non-empty and fit the ``arm`` column."""
    if not name or not arm:
        raise RecordError("experiment: name and arm must be non-empty")
    longest = cols.column("navigations", "arm").max_len or 0
    if max(len(name), len(arm)) > longest:
        raise RecordError(f"experiment: name and arm have at most {longest} characters")
    return Experiment(name=name, arm=arm)


def canonical_id(rid: str) -> str:
    """A record id in its one stored form: lower case with dashes. Upper case, braces,
    ``urn:uuid:`` and no dashes are spellings of the same UUID (what ``uuid.UUID`` accepts)."""
    try:
        return str(uuid.UUID(rid))
    except ValueError:
        raise RecordError(f"id: expected a UUID string, got {show(rid)}") from None


def parse_record(value: Any) -> NavigationRecord:
    """Validate a decoded JSON value as a schema-1 NavigationRecord; raise ``RecordError``."""
    o = Obj(value, "")
    schema = o.value.get("schema", MISSING)
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        raise RecordError(
            f"schema: unsupported record schema {show(schema)}, this host reads {SCHEMA_VERSION}")
    rid = canonical_id(o.str_("id"))
    page = o.obj("page")
    milestones = o.obj("milestones")
    assert page is not None and milestones is not None
    requests = o.items("requests", _request)
    _unique(requests, "requests", "request_id", lambda r: r.request_id,
            lambda r: show(r.request_id))
    connections = o.items("connections", _connection)
    _unique(connections, "connections", "connection_id", lambda c: (c.upstream, c.connection_id),
            lambda c: str(c.connection_id))
    check_shares(connections)
    hosts = o.items("hosts", _host)
    _unique(hosts, "hosts", "host", lambda h: h.host, lambda h: show(h.host))
    check_counts(requests, connections, hosts)
    context = _context(o)
    source = o.enum("source", SOURCES)
    return NavigationRecord(
        schema=SCHEMA_VERSION, id=rid, source=source, page=_page(page),
        milestones=_milestones(milestones), requests=requests,
        connections=connections, hosts=hosts,
        context=context, policies=_policies(o), experiment=_experiment(o, source),
    )
