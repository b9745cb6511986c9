"""Importing bundles into a research store: validate every bundle first (``bundle.read_bundle``),
then import them all in one transaction with provenance (``store/bundles.py``): all or none.
A bundle imported before (same checksum) is skipped; a navigation already present (same record
id, e.g. from an overlapping export) is skipped with its rows."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from protolens.share.bundle import TABLES, Bundle, BundleError, read_bundle
from protolens.store import Connection, IntegrityError
from protolens.store.bundles import BundleRows, import_bundles


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


def _rows_of(bundle: Bundle) -> BundleRows:
    m = bundle.manifest
    return BundleRows(
        checksum=bundle.checksum, manifest=json.dumps(m, sort_keys=True),
        contributor_id=m["contributor_id"], protolens_version=m.get("protolens_version"),
        exported_at=m.get("exported_at"),
        tables={name: (tuple(bundle.tables[name].column_names), _rows(bundle.tables[name]))
                for name in TABLES},
        nav_ids=bundle.tables["navigations"].column("id").to_pylist())


def read_all(paths: Sequence[Path]) -> list[Bundle]:
    """Validate every bundle (``BundleError`` on the first bad one); touches no store."""
    return [read_bundle(p) for p in paths]


def merge_bundles(conn: Connection, bundles: Sequence[Bundle], now_ms: float
                  ) -> list[MergeResult]:
    """Import validated bundles, all in one transaction: all of them or none: a
    merge that fails half-way leaves the store as it was."""
    try:
        done = import_bundles(conn, [_rows_of(b) for b in bundles], now_ms)
    except IntegrityError as exc:
        raise BundleError(f"{_culprit(conn, bundles, now_ms)}: rejected by the store's "
                          f"constraints ({exc})") from None
    out = []
    for b, d in zip(bundles, done, strict=True):
        cid = b.manifest["contributor_id"]
        out.append(MergeResult(str(b.path), b.checksum, cid, "already imported", 0, 0)
                   if d is None else
                   MergeResult(str(b.path), b.checksum, cid, "imported", d[0], d[1]))
    return out


def _culprit(conn: Connection, bundles: Sequence[Bundle], now_ms: float) -> str:
    """The first bundle the store refuses (each tried alone, rolled back); for the message."""
    for i in range(len(bundles)):
        try:
            import_bundles(conn, [_rows_of(b) for b in bundles[: i + 1]], now_ms, dry_run=True)
        except IntegrityError:
            return str(bundles[i].path)
    return str(bundles[-1].path)


def merge(conn: Connection, paths: Sequence[Path], now_ms: float) -> list[MergeResult]:
    """Validate every bundle, then import them all in one transaction; a bad bundle stops
    everything before any import, a bundle the store refuses rolls every one back."""
    return merge_bundles(conn, read_all(paths), now_ms)
