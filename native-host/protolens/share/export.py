"""Building an anonymized bundle from a store: read local rows (``store/bundles.py``), pass
them through the ``Anonymizer`` with a fresh random salt, turn them into Parquet, write the tar.
``build`` does everything in memory (``--preview`` shows its result and writes nothing).

With pyarrow installed (the extras) the Parquet is pyarrow's (zstd); the core install writes it
with ``share/parquet_lite.py`` (gzip, one row group per batch). Both are read alike by pyarrow,
DuckDB and Spark, and both pass ``read_bundle``."""

from __future__ import annotations

import io
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens import __version__
from protolens.record.columns import TABLES as COLUMN_TABLES
from protolens.record.enums import SCHEMA_VERSION
from protolens.share import parquet_lite
from protolens.share.anonymize import Anonymizer
from protolens.share.bundle import (
    SCHEMAS,
    TABLES,
    has_pyarrow,
    lite_schema,
    make_manifest,
    to_table,
    write_tar,
)
from protolens.store import Connection
from protolens.store.bundles import export_rows

DROPPED = tuple(sorted({c.name for t in TABLES for c in COLUMN_TABLES[t]
                       if c.export == "drop" and c.name != "bundle"}))
"""Columns no bundle carries (``bundle`` is the merge's own provenance)."""


@dataclass(frozen=True)
class Built:
    """A bundle ready to write (or to preview)."""

    manifest: dict[str, Any]
    files: dict[str, bytes]
    rows: dict[str, list[dict[str, Any]]]
    """Exactly the rows in the Parquet files (only when built with ``keep_rows``)."""


def iso_minute(ms: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(ms / 1000))


def _table_file(conn: Connection, name: str, anon: Anonymizer, since_ms: float | None,
                kept: list[dict[str, Any]] | None, ingested: tuple[float, float],
                ) -> tuple[bytes, int]:
    """One table as Parquet bytes, written batch by batch; its row count."""
    if not has_pyarrow():
        return _lite_file(conn, name, anon, since_ms, kept, ingested)
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    buf = io.BytesIO()
    count = 0
    with pq.ParquetWriter(buf, SCHEMAS[name], compression="zstd") as writer:
        for batch in export_rows(conn, name, since_ms, ingested=ingested):
            rows = anon.table(name, batch)
            writer.write_table(to_table(name, rows))
            count += len(rows)
            if kept is not None:
                kept.extend(rows)
    return buf.getvalue(), count


def _lite_file(conn: Connection, name: str, anon: Anonymizer, since_ms: float | None,
               kept: list[dict[str, Any]] | None, ingested: tuple[float, float],
               ) -> tuple[bytes, int]:
    """``_table_file`` without pyarrow."""
    schema = lite_schema(name)
    batches = []
    count = 0
    for batch in export_rows(conn, name, since_ms, ingested=ingested):
        rows = anon.table(name, batch)
        batches.append({n: [r.get(n) for r in rows] for n, _ in schema})
        count += len(rows)
        if kept is not None:
            kept.extend(rows)
    return parquet_lite.write(schema, batches or [{n: [] for n, _ in schema}]), count


def build(conn: Connection, *, allow: frozenset[str], since_ms: float | None,
          now_ms: float, contributor_id: str, salt: bytes | None = None,
          keep_rows: bool = False, keep_campaigns: frozenset[str] = frozenset(),
          ingested: tuple[float, float] = (-1.0, float("inf"))) -> Built:
    """Anonymized tables and their manifest. ``salt`` defaults to 32 fresh random bytes;
    ``keep_rows`` also returns the rows (for ``--preview``); ``keep_campaigns`` are campaign
    names the volunteer shares in clear; ``ingested``: only navigations stored in this window
    (``store.bundles.export_rows``)."""
    anon = Anonymizer(salt if salt is not None else secrets.token_bytes(32), allow,
                      keep_campaigns)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    files: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    for name in TABLES:
        files[name], counts[name] = _table_file(conn, name, anon, since_ms,
                                                rows[name] if keep_rows else None, ingested)
    info: Mapping[str, Any] = {
        "protolens_version": __version__,
        "record_schema": SCHEMA_VERSION,
        "exported_at": iso_minute(now_ms),
        "since": iso_minute(since_ms) if since_ms else None,
        "contributor_id": contributor_id,
        "anonymization": {
            "hosts": "HMAC-SHA256 under a random per-bundle salt that is not in the bundle, "
                     "first 16 hex digits, as anon-<hex>; URLs reduced to scheme://host",
            "allowlisted_domains": len(allow),
            "times": "wall-clock times floored to the minute",
            "dropped": [*DROPPED, "context (except the tag columns)"],
            "browser": "name and major version",
        },
    }
    return Built(make_manifest(files, counts, info), files, rows)


def write(built: Built, out: Path, now_ms: float) -> str:
    """Write the bundle as a .tar; return its checksum."""
    return write_tar(out, built.manifest, built.files, mtime=(now_ms // 60_000) * 60)
