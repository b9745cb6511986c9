"""A bundle's tables read and checked without pyarrow (the core install checks the bundle it is
about to upload, as the collector will): ``share/parquet_lite.py`` reads the Parquet, and every
check of ``share/bundle.py`` runs here over plain lists, with the same one-line messages
(``tests/share/test_bundle_lite.py`` holds both readers to the same answers)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protolens.record import columns
from protolens.share import parquet_lite
from protolens.share.bundle_rules import (
    HOST_COLUMNS,
    TABLES,
    BundleError,
    ip_literal,
    lite_schema,
    out_of_range,
)

Table = dict[str, list[Any]]


def read_tables(path: Path, manifest: Mapping[str, Any], files: Mapping[str, bytes]
                ) -> dict[str, Table]:
    """Every table's columns (the current bundle schema: newer columns as nulls), checked."""
    version = manifest["bundle_schema"]
    out: dict[str, Table] = {}
    for name in TABLES:
        fname = f"{name}.parquet"
        try:
            schema, cols = parquet_lite.read(files[name])
        except (parquet_lite.ParquetError, ValueError, OSError, EOFError) as exc:
            raise BundleError(f"{path}: {fname}: unreadable Parquet ({exc})") from None
        if schema != lite_schema(name, version):
            raise BundleError(f"{path}: {fname}: columns or types differ from bundle schema "
                              f"{version}")
        rows = len(next(iter(cols.values()), []))
        if rows != manifest["tables"][name].get("rows"):
            raise BundleError(f"{path}: {fname} has {rows} rows, the manifest says "
                              f"{manifest['tables'][name].get('rows')!r}")
        table = {n: cols.get(n, [None] * rows) for n, _ in lite_schema(name)}
        ids = set(out["navigations"]["id"]) if "navigations" in out else None
        check(path, name, table, ids)
        out[name] = table
    return out


def _column_problem(values: Sequence[Any], c: columns.Column) -> str | None:
    """``bundle_values.check_column`` over a list."""
    present = [v for v in values if v is not None]
    if c.required and len(present) != len(values):
        return "missing values"
    if not present:
        return None
    allowed = [0, 1] if c.flag else list(c.enum)
    if allowed and any(v not in allowed for v in present):
        return f"values other than {' and '.join(map(str, allowed))}" if c.flag else \
            f"values other than {', '.join(c.enum)}"
    if c.sql == "REAL" and not all(math.isfinite(v) for v in present):
        return "values that are not finite numbers"
    if c.max_len is not None and c.sql == "TEXT":
        longest = max(len(v) for v in present)
        if longest > c.max_len:
            return f"text of {longest} characters, at most {c.max_len} allowed"
    if c.min is None and c.max is None:
        return None
    return out_of_range(c, min(present), max(present))


def check(path: Path, name: str, table: Table, nav_ids: set[str] | None) -> None:
    """``bundle_values.check_values`` over lists."""
    def bad(column: str, what: str) -> BundleError:
        return BundleError(f"{path}: {name}.{column}: {what}")

    if not next(iter(table.values()), []):
        return
    for c in columns.bundled(name):
        problem = _column_problem(table[c.name], c)
        if problem:
            raise bad(c.name, problem)
    if name == "connections":
        sums: dict[tuple[Any, Any], float] = defaultdict(float)
        for nav, up, share in zip(table["navigation_id"], table["upstream"], table["share"],
                                  strict=True):
            sums[(nav, up)] += share or 0.0
        top = max(sums.values(), default=0.0)
        if top > 1 + columns.SHARE_EPSILON:
            raise bad("share", f"a navigation's shares sum to {top:.6g}, above 1")
    for col in HOST_COLUMNS[name]:
        if any(ip_literal(v) for v in set(table[col]) if v is not None):
            raise bad(col, "an IP address (not an anonymized bundle)")
    if name == "navigations":
        if len(set(table["id"])) != len(table["id"]):
            raise bad("id", "duplicate ids")
        if any(d != "origin" for d in table["url_detail"]) or \
                any(u != o for u, o in zip(table["url"], table["origin"], strict=True)):
            raise bad("url", "not reduced to the origin (not an anonymized bundle)")
    elif nav_ids is not None and any(n not in nav_ids for n in table["navigation_id"]):
        raise bad("navigation_id", "refers to a navigation not in the bundle")
