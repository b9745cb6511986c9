"""The record's wire types, generated from ``record/columns.py``: msgspec Structs whose annotations
carry each stored field's type, enum, range and length, so that one pass in C decodes and checks a
record's JSON (scripts/bench/ingest.py measures it). ``rows(record)`` adds the rules across fields
(from ``validate.py``) and gives the ``RecordRows`` that ``record_rows(parse_record(value))`` gives.

These types accept a subset of what ``validate.py`` accepts, with the same cells; they give no
error text. They refuse more: fields this host does not know (forward-compatible records, and
anything msgspec would skip without the checks ``json.loads`` makes, such as an integer of more
than 4,300 digits), an integral float as a count, ``schema`` 1.0, a key spelled twice whose first
value is bad. The caller then asks ``validate.py``, which gives the one-line error or accepts
(``messaging/fast.py``). ``tests/record/test_wire.py`` checks the subset on fuzzed records.
"""

from __future__ import annotations

import json
from operator import attrgetter
from typing import Annotated, Any, Literal, Optional

import msgspec
from msgspec import Meta

from protolens.record import columns as cols
from protolens.record.columns import (
    LIST_FIELDS,
    MAX_ITEMS,
    MAX_REDIRECTS,
    TOKEN_MAX,
    URL_MAX,
    Column,
)
from protolens.record.counts import check_counts
from protolens.record.enums import FAMILIES, SCHEMA_VERSION, SOURCES
from protolens.record.reader import RecordError
from protolens.record.rows import CONNECTION_CELLS, REQUEST_CELLS, RecordRows, build
from protolens.record.validate import (
    canonical_id,
    check_context,
    check_experiment,
    check_shares,
)

MAX_CONTEXT_CONTAINERS = 64
"""Objects and arrays in a ``context`` this path reads (the extension sends ``{}``). Both JSON
parsers stop at Python's recursion limit, a few frames apart: a deeper context is left to
``validate.py``, so the two never disagree about one."""


def _one_of(values: tuple[Any, ...]) -> Any:
    return Literal.__getitem__(values)  # Literal["h1", "h2", "h3"] from the table's tuple


def _scalar(c: Column) -> Any:
    """The annotation of column ``c``'s field: its type with its limits, ``| None`` if
    nullable."""
    kind: Any
    if c.flag:
        kind = bool
    elif c.enum:
        kind = _one_of(c.enum)
    elif c.sql == "TEXT":
        kind = str if c.max_len is None else Annotated[str, Meta(max_length=c.max_len)]
    elif c.sql == "INTEGER":
        kind = Annotated[int, Meta(ge=None if c.min is None else int(c.min),
                                   le=None if c.max is None else int(c.max))]
    else:
        kind = Annotated[float, Meta(ge=c.min, le=c.max)]
    return kind if c.required else Optional[kind]  # noqa: UP045 (a runtime type, not a hint)


def _fields(prefix: str, skip: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """The fields of the record object at ``prefix``, one per column, in column order (a field
    added after schema 1 shipped may be absent: default None)."""
    return [(c.key, _scalar(c), None) if c.optional else (c.key, _scalar(c))
            for c in cols.record_fields(prefix) if c.name not in skip]


def _struct(name: str, fields: list[tuple[Any, ...]]) -> Any:
    return msgspec.defstruct(name, fields, kw_only=True, frozen=True, forbid_unknown_fields=True,
                             gc=False, module=__name__)


def _array(item: Any, limit: int = MAX_ITEMS) -> Any:
    return Annotated[list[item], Meta(max_length=limit)]  # type: ignore[valid-type]


Request = _struct("Request", _fields("requests"))
Connection = _struct("Connection", _fields("connections"))
if tuple(Request.__struct_fields__) != REQUEST_CELLS or \
        tuple(Connection.__struct_fields__) != CONNECTION_CELLS:
    raise TypeError("wire: request and connection fields must be in column order (astuple = row)")
Host = _struct("Host", [*_fields("hosts", ("families",)),
                        ("families", _array(_one_of(FAMILIES), len(FAMILIES)))])
Policy = _struct("Policy", [
    *_fields("policies"),
    ("rule_ids", tuple[Annotated[str, Meta(max_length=TOKEN_MAX)], ...], ())])
Browser = _struct("Browser", _fields("page.browser"))
Network = _struct("Network", _fields("page.network"))
Page = _struct("Page", [*_fields("page", ("redirects", *LIST_FIELDS)), ("browser", Browser),
                        ("network", Optional[Network]),  # noqa: UP045
                        ("redirects", _array(Annotated[str, Meta(max_length=URL_MAX)],
                                             MAX_REDIRECTS)),
                        *((key, Optional[_array(_one_of(allowed), len(allowed))], None)  # noqa: UP045
                          for key, allowed in LIST_FIELDS.items())])
Milestones = _struct("Milestones", _fields("milestones"))
Experiment = _struct("Experiment", [("name", str), ("arm", str)])
Record = _struct("Record", [
    ("schema", _one_of((SCHEMA_VERSION,))), ("id", str), ("source", _one_of(SOURCES)),
    ("page", Page), ("milestones", Milestones), ("requests", _array(Request)),
    ("connections", _array(Connection)), ("hosts", _array(Host)), ("context", msgspec.Raw),
    ("policies", Optional[_array(Policy)], None),  # noqa: UP045
    ("experiment", Optional[Experiment], None),  # noqa: UP045
])
"""A NavigationRecord as this path reads it (docs/RECORD.md)."""

_REQUEST_ID = attrgetter("request_id")
_CONNECTION_KEY = attrgetter("upstream", "connection_id")
_HOST = attrgetter("host")


def _distinct(items: list[Any], key: Any) -> bool:
    return len(set(map(key, items))) == len(items)


def rows(record: Any) -> RecordRows | None:
    """The rows of a decoded ``Record``, or None if a rule across fields fails or the context is
    one ``validate.py`` must read (it then gives the error, or accepts)."""
    raw = bytes(record.context)
    if raw.count(b"{") + raw.count(b"[") > MAX_CONTEXT_CONTAINERS:
        return None
    if not (_distinct(record.requests, _REQUEST_ID)
            and _distinct(record.connections, _CONNECTION_KEY)
            and _distinct(record.hosts, _HOST)
            and _distinct(record.policies or [], _HOST)):
        return None
    try:
        rid = canonical_id(record.id)
        check_shares(record.connections)
        check_counts(record.requests, record.connections, record.hosts)
        context = json.loads(raw.decode("utf-8"))  # as validate.py reads it: the same values
        if not isinstance(context, dict):
            return None
        context = check_context(context)
        experiment = None
        if record.experiment is not None:
            if record.source != "experiment":
                return None
            experiment = check_experiment(record.experiment.name, record.experiment.arm)
    except (RecordError, ValueError, RecursionError):
        return None
    return build(rid, record, context, experiment, msgspec.structs.astuple,
                 msgspec.structs.astuple)
