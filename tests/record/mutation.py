"""Mutating records for the property tests (host fuzz, wire subset, message properties): a record
with every optional part, every path into a JSON value, and changes applied along paths."""

from __future__ import annotations

import copy
from typing import Any

from scripts.devkit.navrecord_builder import make_record

DELETE = object()
"""A change's value that deletes the key or item at its path."""


def full_record(requests: int, **context: str) -> dict[str, Any]:
    """A record with every optional part: network, policies, experiment, late attach."""
    rec = make_record(requests, seed=3, source="experiment")
    rec["page"]["late_attach"] = "response"
    rec["experiment"] = {"name": "exp", "arm": "no-h3"}
    rec["policies"] = [{"host": "a.test", "rule": "a.test", "arm": "no-h3", "mechanism": "relay",
                        "rule_ids": ["1"]}, {"host": "b.test", "rule": None, "arm": "default",
                                             "mechanism": "none"}]
    rec["context"] = {"note": "x", "campaign": "forged", **context}
    return rec


def json_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indices) to a value inside ``obj``, the root left out."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += json_paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += json_paths(v, (*prefix, i))
    return out


def apply_changes(raw: Any, changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
    """Sets (or with ``DELETE`` removes) each path's value in ``raw``, in place; a path whose
    parent an earlier change replaced is skipped. Returns ``raw``. Each value is set as a copy:
    hypothesis hands out one ``{}`` of a ``sampled_from`` list to every example, and a later
    change under the path it was set at filled that one object, until an example set it inside
    itself (a record that cannot be encoded: the fuzz test failed in CI)."""
    for path, value in changes:
        target: Any = raw
        try:
            for key in path[:-1]:
                target = target[key]
            if value is DELETE:
                del target[path[-1]]
            else:
                target[path[-1]] = copy.deepcopy(value)
        except (KeyError, IndexError, TypeError):
            continue
    return raw
