"""Importing bundles into a research store: validate every bundle first (``bundle.read_bundle``),
then import each in one transaction with provenance (``store/research.py``). A bundle imported
before (same checksum) is skipped; a navigation already present (same record id, e.g. from an
overlapping export) is skipped with its rows."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from protolens.share.bundle import TABLES, Bundle, BundleError, read_bundle
from protolens.store.research import import_bundle


@dataclass(frozen=True)
class MergeResult:
    """What happened to one bundle."""

    bundle: str
    checksum: str
    contributor_id: str
    status: str
    """``imported`` or ``already imported``."""
    navigations: int
    """Navigations imported now."""
    skipped: int
    """Navigations already in the store (by id), not imported again."""


def _rows(table: pa.Table) -> Iterator[tuple[Any, ...]]:
    for batch in table.to_batches(max_chunksize=65536):
        yield from zip(*(col.to_pylist() for col in batch.columns), strict=True)


def merge_one(conn: sqlite3.Connection, bundle: Bundle, now_ms: float) -> MergeResult:
    """Import one validated bundle in one transaction (all its rows or none)."""
    m = bundle.manifest
    tables = {name: (tuple(bundle.tables[name].column_names), _rows(bundle.tables[name]))
              for name in TABLES}
    try:
        done = import_bundle(
            conn, checksum=bundle.checksum, manifest=json.dumps(m, sort_keys=True),
            contributor_id=m["contributor_id"], protolens_version=m.get("protolens_version"),
            exported_at=m.get("exported_at"), tables=tables,
            nav_ids=bundle.tables["navigations"].column("id").to_pylist(), now_ms=now_ms)
    except sqlite3.IntegrityError as exc:
        raise BundleError(f"{bundle.path}: rejected by the store's constraints ({exc}); "
                          "nothing imported") from None
    if done is None:
        return MergeResult(str(bundle.path), bundle.checksum, m["contributor_id"],
                           "already imported", 0, 0)
    return MergeResult(str(bundle.path), bundle.checksum, m["contributor_id"], "imported",
                       done[0], done[1])


def merge(conn: sqlite3.Connection, paths: Sequence[Path], now_ms: float) -> list[MergeResult]:
    """Validate every bundle, then import each; a bad bundle stops everything before any
    import."""
    bundles = [read_bundle(p) for p in paths]
    return [merge_one(conn, b, now_ms) for b in bundles]
