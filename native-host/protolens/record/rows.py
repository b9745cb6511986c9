"""A validated NavigationRecord as the rows it is stored in: the cells of ``navigations``,
``requests``, ``connections``, ``hosts`` and ``navigation_policies`` in the column order of
``record/columns.py``, less what the host fills at ingest (lab tags, ``context``, the time).

Pure. ``record_rows(record)`` builds them from the model; ``record/wire.py`` builds the same rows
straight from a decoded message without building the model's objects (a
100-request record is 100 rows, not 100 dataclasses and then 100 rows). ``store/ingest.py``
writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from protolens.record import columns
from protolens.record.model import Experiment, NavigationRecord

Row = tuple[Any, ...]

NAV_FIELDS = tuple((c.name, tuple(c.field.split("."))) for c in columns.NAVIGATIONS if c.field)
"""Each ``navigations`` column the record fills, with its attribute path (``page.browser.name``)."""
REQUEST_CELLS = columns.stored("requests")[2:]
"""The ``requests`` cells a request carries, in column order (after ``navigation_id``, ``seq``)."""
CONNECTION_CELLS = columns.stored("connections")[1:]
"""The ``connections`` cells a connection carries, in column order (after ``navigation_id``)."""


@dataclass(frozen=True)
class RecordRows:
    """One record's rows; every row starts with the record's canonical id."""

    id: str
    """The record's canonical id (``validate.canonical_id``)."""
    navigation: dict[str, Any]
    """The ``navigations`` cells from the record: each column with a ``field``, ``redirects`` as
    JSON text, ``failed`` and ``failure``."""
    context: dict[str, Any]
    """The record's own ``context`` (the store keeps only what is not a lab tag)."""
    experiment: Experiment | None
    """The A/B assignment (stored in the ``experiment`` and ``arm`` tags)."""
    requests: list[Row]
    """``requests`` rows (``navigation_id``, ``seq``, then ``REQUEST_CELLS``)."""
    connections: list[Row]
    """``connections`` rows (``navigation_id``, then ``CONNECTION_CELLS``)."""
    hosts: list[Row]
    """``hosts`` rows; ``families`` as JSON text."""
    policies: list[Row]
    """``navigation_policies`` rows; ``rule_ids`` as JSON text."""


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if obj is None:
            return None
        obj = getattr(obj, part)
    return obj


def build(rid: str, record: Any, context: dict[str, Any], experiment: Experiment | None,
          request_cells: Callable[[Any], Row], connection_cells: Callable[[Any], Row]
          ) -> RecordRows:
    """The rows of a validated ``record``: a ``NavigationRecord`` or a ``record/wire.py`` record
    (the same attribute names); ``*_cells`` give one request's or connection's cells in column
    order."""
    page = record.page
    navigation = {name: _at(record, path) for name, path in NAV_FIELDS}
    navigation["id"] = rid
    navigation["redirects"] = json.dumps(list(page.redirects))
    for key in columns.LIST_FIELDS:
        items = getattr(page, key)
        navigation[key] = None if items is None else json.dumps(list(items))
    navigation["failed"] = page.error is not None or page.aborted
    navigation["failure"] = page.error if page.error is not None else (
        "aborted" if page.aborted else None)
    return RecordRows(
        id=rid, navigation=navigation, context=context, experiment=experiment,
        requests=[(rid, seq) + request_cells(r) for seq, r in enumerate(record.requests)],
        connections=[(rid,) + connection_cells(c) for c in record.connections],
        hosts=[(rid, h.host, h.connections, json.dumps(list(h.families))) for h in record.hosts],
        policies=[(rid, p.host, p.rule, p.arm, p.mechanism, json.dumps(list(p.rule_ids)))
                  for p in (record.policies or ())],
    )


_REQUEST_VALUES = attrgetter(*REQUEST_CELLS)
_CONNECTION_VALUES = attrgetter(*CONNECTION_CELLS)


def record_rows(record: NavigationRecord) -> RecordRows:
    """The rows of a ``NavigationRecord`` (from ``parse_record``)."""
    return build(record.id, record, record.context, record.experiment, _REQUEST_VALUES,
                 _CONNECTION_VALUES)
