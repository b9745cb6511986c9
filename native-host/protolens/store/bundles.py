"""SQL for sharing: reading a store's own rows for ``export`` and ``contribute``, and writing
validated bundles for ``merge`` with their provenance (``bundles`` and the ``bundle`` column),
all bundles of one merge in one transaction; bulk loading of generated stores for benchmarks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protolens.store.tx import transaction

DATA_TABLES = ("navigations", "requests", "connections", "hosts")


_EXPORT_SQL = {
    "navigations": "SELECT * FROM navigations n WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                   "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                   "ORDER BY n.started_at_ms, n.id",
    "requests": "SELECT t.* FROM requests t JOIN navigations n ON n.id = t.navigation_id "
                "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                "ORDER BY t.navigation_id, t.seq",
    "connections": "SELECT t.* FROM connections t JOIN navigations n ON n.id = t.navigation_id "
                   "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                   "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                   "ORDER BY t.navigation_id, t.upstream, t.connection_id",
    "hosts": "SELECT t.* FROM hosts t JOIN navigations n ON n.id = t.navigation_id "
             "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
             "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? ORDER BY t.navigation_id, t.host",
}


def export_rows(conn: sqlite3.Connection, table: str, since_ms: float | None,
                batch: int = 50_000, ingested: tuple[float, float] = (-1.0, float("inf")),
                ) -> Iterator[list[dict[str, Any]]]:
    """Every locally recorded row of ``table`` whose navigation started at or after
    ``since_ms`` and was stored in ``ingested`` (after the first time, up to and including the
    second; ``contribute`` sends only what is new), in batches (a large store is never held in
    memory at once)."""
    cur = conn.execute(_EXPORT_SQL[table], (since_ms or 0.0, *ingested))
    names = [d[0] for d in cur.description]
    while rows := cur.fetchmany(batch):
        yield [dict(zip(names, row, strict=True)) for row in rows]


def local_ingest_window(conn: sqlite3.Connection, after_ms: float) -> tuple[int, float | None]:
    """Locally recorded navigations stored after ``after_ms``: their count and the latest
    ``ingested_at_ms`` (``contribute``'s next high-water mark)."""
    count, latest = conn.execute(
        "SELECT count(*), max(ingested_at_ms) FROM navigations WHERE bundle IS NULL "
        "AND ingested_at_ms > ?", (after_ms,)).fetchone()
    return int(count), latest


def bundle_imported(conn: sqlite3.Connection, checksum: str) -> bool:
    return conn.execute("SELECT 1 FROM bundles WHERE checksum = ?", (checksum,)).fetchone() \
        is not None


def _existing_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        found.update(r[0] for r in conn.execute(
            f"SELECT id FROM navigations WHERE id IN ({_placeholders(chunk)})", chunk))
    return found


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


@dataclass(frozen=True)
class BundleRows:
    """One validated bundle's rows and provenance, ready to import."""

    checksum: str
    manifest: str
    contributor_id: str
    protolens_version: str | None
    exported_at: str | None
    tables: Mapping[str, tuple[Sequence[str], Iterable[Sequence[Any]]]]
    nav_ids: Sequence[str]


def _import_one(conn: sqlite3.Connection, b: BundleRows, now_ms: float
                ) -> tuple[int, int] | None:
    if bundle_imported(conn, b.checksum):
        return None
    skip = _existing_ids(conn, b.nav_ids)
    cur = conn.execute(
        "INSERT INTO bundles (checksum, contributor_id, protolens_version, exported_at, "
        "imported_at_ms, navigations, skipped, manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (b.checksum, b.contributor_id, b.protolens_version, b.exported_at, now_ms,
         len(b.nav_ids) - len(skip), len(skip), b.manifest))
    bundle = cur.lastrowid
    for table in DATA_TABLES:
        columns, rows = b.tables[table]
        key = columns.index("id" if table == "navigations" else "navigation_id")
        sql = (f"INSERT INTO {table} ({', '.join(columns)}, bundle) "
               f"VALUES ({_placeholders(columns)}, ?)")
        conn.executemany(sql, ((*row, bundle) for row in rows if row[key] not in skip))
    return len(b.nav_ids) - len(skip), len(skip)


def import_bundles(conn: sqlite3.Connection, bundles: Sequence[BundleRows], now_ms: float,
                   dry_run: bool = False) -> list[tuple[int, int] | None]:
    """All bundles in ONE transaction (a merge of N bundles is all or
    nothing): each its ``bundles`` row, then every table's rows stamped with it. Navigations
    already present (by id, also from an earlier bundle of the same call) are skipped with
    their child rows. Per bundle: (navigations imported, skipped), or None if it was imported
    before. ``conn`` must be in autocommit mode; any exception rolls everything back, and so
    does ``dry_run``."""
    try:
        with transaction(conn):
            done = [_import_one(conn, b, now_ms) for b in bundles]
            if dry_run:
                raise _RolledBack
    except _RolledBack:
        pass
    return done


class _RolledBack(Exception):
    """Leaves a dry run's transaction through its rollback."""


def insert_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                rows: Iterable[Sequence[Any]]) -> None:
    """Insert many rows into one data table in one transaction (``executemany``)."""
    if table not in DATA_TABLES:
        raise ValueError(f"table: not a data table {table!r}")
    with transaction(conn, immediate=False):
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                         f"({_placeholders(columns)})", rows)
