"""The NavigationRecord as a JSON Schema (draft 2020-12), built from the record model
(``record/model.py``: fields, types, optional ones) and the column table (``record/columns.py``:
enums, ranges, lengths). Pure.

``scripts/gen_record_schema.py`` writes it to ``schema/navigation-record.schema.json``, the
contract between the TypeScript recorder and the Python validator: pytest checks the file is
fresh and validates every golden record against it with ``jsonschema``, vitest with ``ajv``.
Rules across fields (unique request ids, share sums, ``experiment`` only with source
``experiment``) are the validator's alone.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

from protolens.record import columns, model
from protolens.record.columns import Column
from protolens.record.enums import FAMILIES, SCHEMA_VERSION

DRAFT = "https://json-schema.org/draft/2020-12/schema"
OBJECTS: dict[type, str] = {
    model.NavigationRecord: "", model.Page: "page", model.Browser: "page.browser",
    model.NetworkInfo: "page.network", model.Milestones: "milestones",
    model.Request: "requests", model.Connection: "connections", model.HostSummary: "hosts",
    model.AppliedPolicy: "policies", model.Experiment: "experiment",
}
"""Each record object and its path (the ``field`` prefix of its columns)."""
_ITEMS: dict[str, dict[str, Any]] = {
    "page.redirects": {"maxItems": columns.MAX_REDIRECTS,
                       "items": {"type": "string", "maxLength": columns.URL_MAX}},
    "hosts.families": {"maxItems": len(FAMILIES),
                       "items": {"enum": list(FAMILIES)}},
    "policies.rule_ids": {"maxItems": columns.MAX_ITEMS,
                          "items": {"type": "string", "maxLength": columns.TOKEN_MAX}},
    **{f"page.{key}": {"maxItems": len(allowed), "items": {"enum": list(allowed)}}
       for key, allowed in columns.LIST_FIELDS.items()},
}
_TAG = {"type": "string", "minLength": 1,
        "maxLength": columns.column("navigations", "arm").max_len}
UUID_PATTERN = (r"^(urn:uuid:)?\{?[0-9A-Fa-f]{8}(-?[0-9A-Fa-f]{4}){3}-?[0-9A-Fa-f]{12}\}?$")
"""The spellings of a UUID the host accepts and canonicalizes (``validate.canonical_id``)."""
_EXTRA: dict[str, dict[str, Any]] = {
    "experiment.name": _TAG, "experiment.arm": _TAG,
    "id": {"type": "string", "pattern": UUID_PATTERN},
}
"""Fields without a column of their own: their constraints are the validator's."""
_REQUIRED_WITH_DEFAULT = {"context"}
"""A default in the model for convenience, yet every record carries it (the validator asks)."""
_NULL_MEANS_EMPTY = {"policies"}
"""Optional arrays a record may also send as null (read as empty)."""


def _scalar(hint: Any, col: Column | None) -> dict[str, Any]:
    if hint is bool:
        return {"type": "boolean"}
    out: dict[str, Any] = {"type": {str: "string", int: "integer", float: "number"}[hint]}
    if col is None:
        return out
    if col.enum:
        return {"enum": list(col.enum)}
    for key, value in (("minimum", col.min), ("maximum", col.max), ("maxLength", col.max_len)):
        if value is not None:
            out[key] = int(value) if float(value).is_integer() else value
    return out


def _property(hint: Any, path: str, cols: dict[str, Column]) -> dict[str, Any]:
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) and type(None) in args:
        inner = _property(next(a for a in args if a is not type(None)), path, cols)
        if "enum" in inner:
            return {"enum": [*inner["enum"], None]}
        return {"anyOf": [inner, {"type": "null"}]} if "$ref" in inner else \
            {**inner, "type": [inner["type"], "null"]}
    if typing.get_origin(hint) is tuple:
        item = args[0]
        if item in OBJECTS:
            return {"type": "array", "maxItems": columns.MAX_ITEMS,
                    "items": {"$ref": f"#/$defs/{item.__name__}"}}
        return {"type": "array", **_ITEMS[path]}
    if typing.get_origin(hint) is dict:
        return {"type": "object"}
    if hint in OBJECTS:
        return {"$ref": f"#/$defs/{hint.__name__}"}
    return _EXTRA.get(path) or _scalar(hint, cols.get(path))


def _object(cls: type, cols: dict[str, Column]) -> dict[str, Any]:
    prefix = OBJECTS[cls]
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        path = f"{prefix}.{f.name}" if prefix else f.name
        props[f.name] = _property(hints[f.name], path, cols)
        if path in _NULL_MEANS_EMPTY:
            props[f.name] = {"anyOf": [props[f.name], {"type": "null"}]}
        has_default = f.default is not dataclasses.MISSING or \
            f.default_factory is not dataclasses.MISSING
        if not has_default or f.name in _REQUIRED_WITH_DEFAULT:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "title": cls.__name__}
    doc = cls.__doc__ or ""
    if doc and not doc.startswith(cls.__name__ + "("):  # not the dataclass's generated one
        out["description"] = doc.strip().splitlines()[0]
    return {**out, "properties": props, "required": required}


def record_schema() -> dict[str, Any]:
    """The JSON Schema of a NavigationRecord (unknown extra fields allowed: later schema versions
    may add fields, docs/RECORD.md)."""
    cols = {c.field: c for tab in columns.TABLES.values() for c in tab if c.field}
    top = _object(model.NavigationRecord, cols)
    top["properties"]["schema"] = {"const": SCHEMA_VERSION}
    return {
        "$schema": DRAFT,
        "$id": "https://protolens.invalid/schema/navigation-record.schema.json",
        **top,
        "title": f"ProtoLens NavigationRecord, schema {SCHEMA_VERSION}",
        "description": "Generated by scripts/gen_record_schema.py from native-host/protolens/"
                       "record/model.py and record/columns.py; do not edit. docs/RECORD.md.",
        "$defs": {cls.__name__: _object(cls, cols) for cls in OBJECTS
                  if cls is not model.NavigationRecord},
    }
