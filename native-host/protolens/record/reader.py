"""Reading a decoded JSON object field by field, with its path for one-line errors, and the
compiled checker of each stored field (type, then enum, range or length from ``columns.py``).

Pure; used by ``record/validate.py``, which adds the record-level rules.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from protolens.record import columns as cols
from protolens.record.columns import MAX_ITEMS, Column

T = TypeVar("T")
MISSING = object()


class RecordError(ValueError):
    """A record that does not match the schema; the message names the first bad field."""


def show(value: Any) -> str:
    if value is MISSING:
        return "nothing (field missing)"
    # a string is shown JSON-escaped: one line, and encodable even with a lone surrogate
    text = repr(value) if not isinstance(value, str) else json.dumps(value[:40])
    return text if len(text) <= 40 else text[:37] + "..."


class Obj:
    """A JSON object being read, with its path for error messages."""

    def __init__(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            raise RecordError(f"{path or 'record'}: expected object, got {show(value)}")
        self.value: dict[str, Any] = value
        self.path = path

    def _name(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _fail(self, key: str, nullable: bool, what: str, raw: Any) -> NoReturn:
        expected = f"{what} or null" if nullable else what
        raise RecordError(f"{self._name(key)}: expected {expected}, got {show(raw)}")

    def _get(self, key: str, nullable: bool, check: Callable[[Any], bool], what: str) -> Any:
        raw = self.value.get(key, MISSING)
        if raw is None and nullable:
            return None
        if raw is MISSING or not check(raw):
            self._fail(key, nullable, what, raw)
        return raw

    # The four readers below have inline fast paths for the common valid case: validation is
    # most of the host's ingest cost (scripts/bench/ingest.py).
    def str_(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, MISSING)
        if type(raw) is str or (raw is None and nullable):
            return raw
        self._fail(key, nullable, "string", raw)

    def bool_(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, MISSING)
        if raw is True or raw is False or (raw is None and nullable):
            return raw
        self._fail(key, nullable, "boolean", raw)

    def num(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, MISSING)
        if type(raw) is float and math.isfinite(raw):
            return raw
        if type(raw) is int or (raw is None and nullable):
            return None if raw is None else float(raw)
        self._fail(key, nullable, "finite number", raw)

    def count(self, key: str, nullable: bool = False) -> Any:
        raw = self.value.get(key, MISSING)
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

    def obj(self, key: str, nullable: bool = False) -> Obj | None:
        got = self._get(key, nullable, lambda v: isinstance(v, dict), "object")
        return None if got is None else Obj(got, self._name(key))

    def items(self, key: str, parse: Callable[[Any, str], T],
              limit: int = MAX_ITEMS) -> tuple[T, ...]:
        got = self._get(key, False, lambda v: isinstance(v, list), "array")
        if len(got) > limit:
            raise RecordError(f"{self._name(key)}: {len(got)} items, at most {limit} allowed")
        return tuple(parse(item, f"{self._name(key)}[{i}]") for i, item in enumerate(got))

    def cols(self, readers: Sequence[Reader]) -> dict[str, Any]:
        return {key: read(self) for key, read in readers}

    def too_long(self, key: str, text: str, limit: int) -> NoReturn:
        raise RecordError(f"{self._name(key)}: {len(text)} characters, at most {limit} allowed")

    def out_of_range(self, key: str, c: Column, value: Any) -> NoReturn:
        raise RecordError(f"{self._name(key)}: expected {_bounds(c)}, got {show(value)}")


Reader = tuple[str, Callable[["Obj"], Any]]
"""A record field's key and the function reading and checking it from an object."""
_count, _num = Obj.count, Obj.num


def reader(c: Column) -> Reader:
    """A checker for column ``c``'s field with every limit bound once (validation is most of
    the host's ingest cost: scripts/bench/ingest.py)."""
    key, nullable, optional = c.key, not c.required, c.optional
    lo = -math.inf if c.min is None else c.min
    hi = math.inf if c.max is None else c.max
    limit = c.max_len if c.max_len is not None else math.inf

    read: Callable[[Obj], Any]
    if c.flag:
        def read(o: Obj) -> Any:
            raw = o.value.get(key)
            return raw if raw is True or raw is False else o.bool_(key, nullable)
    elif c.enum:
        allowed = frozenset(c.enum)

        def read(o: Obj) -> Any:
            raw = o.value.get(key)
            return raw if type(raw) is str and raw in allowed else o.enum(key, c.enum, nullable)
    elif c.sql == "TEXT":
        def read(o: Obj) -> Any:
            raw = o.value.get(key)
            if type(raw) is not str:
                return o.str_(key, nullable)
            if len(raw) > limit:
                o.too_long(key, raw, int(limit))
            return raw
    else:
        number = _count if c.sql == "INTEGER" else _num

        def read(o: Obj) -> Any:
            value = number(o, key, nullable)
            if value is not None and not lo <= value <= hi:
                o.out_of_range(key, c, value)
            return value
    if optional:
        present = read

        def read(o: Obj) -> Any:
            return present(o) if key in o.value else None
    return key, read


def readers(prefix: str, skip: tuple[str, ...] = ()) -> tuple[Reader, ...]:
    return tuple(reader(c) for c in cols.record_fields(prefix) if c.name not in skip)


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
