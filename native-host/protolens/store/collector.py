"""SQL of the collector's catalog (issue 11): its own SQLite file ``DIR/catalog.db`` beside the
Parquet dataset, with its own migrations (applied by ``store.migrations.apply_migrations``).

``tokens``: contributor tokens, by name, stored as SHA-256 (``collector/tokens.py``), never in
clear. ``bundles``: one row per accepted bundle (checksum, contributor, received time, size).
``bundle_files``: the dataset file of each table of a bundle, its rows and SHA-256. No column
holds an IP address.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.store.db import StoreError, open_ro, open_rw
from protolens.store.migrate import apply_migrations
from protolens.store.migrations import Migration
from protolens.store.tx import transaction


def c001_catalog(conn: sqlite3.Connection) -> None:
    """Tokens, bundles and their files."""
    conn.execute("""
        CREATE TABLE tokens (
            name TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            created_at_ms REAL NOT NULL,
            revoked_at_ms REAL
        ) STRICT""")
    conn.execute("""
        CREATE TABLE bundles (
            checksum TEXT PRIMARY KEY,
            contributor TEXT NOT NULL REFERENCES tokens (name),
            contributor_id TEXT NOT NULL,
            received_at_ms REAL NOT NULL,
            day TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            bundle_schema INTEGER NOT NULL,
            protolens_version TEXT,
            exported_at TEXT
        ) STRICT""")
    conn.execute("CREATE INDEX bundles_contributor ON bundles (contributor)")
    conn.execute("""
        CREATE TABLE bundle_files (
            checksum TEXT NOT NULL REFERENCES bundles (checksum) ON DELETE CASCADE,
            tbl TEXT NOT NULL,
            path TEXT NOT NULL UNIQUE,
            rows INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            PRIMARY KEY (checksum, tbl)
        ) STRICT""")


CATALOG_MIGRATIONS: tuple[tuple[str, Migration], ...] = (("c001_catalog", c001_catalog),)


@dataclass(frozen=True)
class CatalogFile:
    """One dataset file of an accepted bundle."""

    table: str
    path: str
    """Relative to the dataset directory."""
    rows: int
    sha256: str


@dataclass(frozen=True)
class CatalogBundle:
    """One accepted bundle."""

    checksum: str
    contributor: str
    """The token's name: the researcher's pseudonym for the volunteer."""
    contributor_id: str
    """The volunteer's own random id from the manifest."""
    received_at_ms: float
    day: str
    bytes: int
    files: tuple[CatalogFile, ...]


def open_catalog(path: Path, now_ms: float, migrate: bool = True) -> sqlite3.Connection:
    """Open (creating) the catalog; ``migrate=False`` for the server's per-request connections
    (``collector serve`` migrates once at start, so requests never take the write lock for it)."""
    conn = open_rw(path, now_ms, migrate=False)
    if not migrate:
        return conn
    try:
        apply_migrations(conn, now_ms, CATALOG_MIGRATIONS)
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"{path}: not a collector catalog ({exc})") from None
    return conn


def open_catalog_ro(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise StoreError(f"{path.parent}: no collector here (no {path.name}; "
                         "create a token first: protolens collector token add NAME)")
    return open_ro(path)


# --- tokens ----------------------------------------------------------------------------------

def add_token(conn: sqlite3.Connection, name: str, token_hash: str, now_ms: float) -> bool:
    """Add a token; False if the name is taken."""
    try:
        conn.execute("INSERT INTO tokens (name, token_hash, created_at_ms) VALUES (?, ?, ?)",
                     (name, token_hash, now_ms))
    except sqlite3.IntegrityError:
        return False
    return True


def revoke_token(conn: sqlite3.Connection, name: str, now_ms: float) -> bool:
    cur = conn.execute("UPDATE tokens SET revoked_at_ms = ? WHERE name = ? AND "
                       "revoked_at_ms IS NULL", (now_ms, name))
    return cur.rowcount == 1


def token_owner(conn: sqlite3.Connection, token_hash: str) -> tuple[str, bool] | None:
    """(name, revoked) of the token with this hash, or None."""
    row = conn.execute("SELECT name, revoked_at_ms IS NOT NULL FROM tokens "
                       "WHERE token_hash = ?", (token_hash,)).fetchone()
    return None if row is None else (str(row[0]), bool(row[1]))


def token_names(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(
        "SELECT name, created_at_ms, revoked_at_ms FROM tokens ORDER BY name")]


# --- bundles ---------------------------------------------------------------------------------

_BUNDLE_COLS = "checksum, contributor, contributor_id, received_at_ms, day, bytes"


def _bundle(conn: sqlite3.Connection, row: sqlite3.Row) -> CatalogBundle:
    files = tuple(CatalogFile(r[0], r[1], r[2], r[3]) for r in conn.execute(
        "SELECT tbl, path, rows, sha256 FROM bundle_files WHERE checksum = ? ORDER BY tbl",
        (row[0],)))
    return CatalogBundle(row[0], row[1], row[2], row[3], row[4], row[5], files)


def find_bundle(conn: sqlite3.Connection, checksum: str) -> CatalogBundle | None:
    row = conn.execute(f"SELECT {_BUNDLE_COLS} FROM bundles WHERE checksum = ?",
                       (checksum,)).fetchone()
    return None if row is None else _bundle(conn, row)


def all_bundles(conn: sqlite3.Connection, contributor: str | None = None
                ) -> list[CatalogBundle]:
    where, params = (" WHERE contributor = ?", [contributor]) if contributor else ("", [])
    rows = conn.execute(f"SELECT {_BUNDLE_COLS} FROM bundles{where} ORDER BY received_at_ms, "
                        "checksum", params).fetchall()
    return [_bundle(conn, r) for r in rows]


def add_bundle(conn: sqlite3.Connection, b: CatalogBundle, bundle_schema: int,
               protolens_version: str | None, exported_at: str | None) -> CatalogBundle:
    """Record an accepted bundle and its files in one transaction; if another upload of the
    same bundle won the race, keep (and return) that one."""
    with transaction(conn):
        existing = find_bundle(conn, b.checksum)
        if existing is not None:
            return existing
        conn.execute(f"INSERT INTO bundles ({_BUNDLE_COLS}, bundle_schema, protolens_version, "
                     "exported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (b.checksum, b.contributor, b.contributor_id, b.received_at_ms, b.day,
                      b.bytes, bundle_schema, protolens_version, exported_at))
        conn.executemany("INSERT INTO bundle_files (checksum, tbl, path, rows, sha256) "
                         "VALUES (?, ?, ?, ?, ?)",
                         [(b.checksum, f.table, f.path, f.rows, f.sha256) for f in b.files])
    return b


def delete_bundles(conn: sqlite3.Connection, checksums: Sequence[str]) -> int:
    with transaction(conn):
        return sum(conn.execute("DELETE FROM bundles WHERE checksum = ?", (c,)).rowcount
                   for c in checksums)


def catalog_paths(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT path FROM bundle_files")}


def summary(conn: sqlite3.Connection) -> dict[str, Any]:
    """Bundles, contributors, rows per table, tokens."""
    out: dict[str, Any] = dict(conn.execute(
        "SELECT count(*) AS bundles, count(DISTINCT contributor) AS contributors, "
        "coalesce(sum(bytes), 0) AS uploaded_bytes FROM bundles").fetchone())
    for table, rows in conn.execute("SELECT tbl, sum(rows) FROM bundle_files GROUP BY tbl"):
        out[f"{table}_rows"] = rows
    out["tokens"], out["revoked_tokens"] = conn.execute(
        "SELECT count(*), count(revoked_at_ms) FROM tokens").fetchone()
    return out
