"""SQL of the collector's catalog: its own SQLite file ``DIR/catalog.db`` beside the Parquet
dataset, with its own migrations (applied by ``store.migrations.apply_migrations``).

``tokens``: contributor tokens, by name, stored as SHA-256 (``collector/tokens.py``), never in
clear, with the key of the bundle tags issued with the token. ``bundles``: one row per accepted
bundle (checksum, contributor, received time, size, its manifest and tag). ``bundle_files``: the
dataset file of each table of a bundle, its rows and SHA-256. No column holds an IP address.
The writers' leases, navigation ids and refusals are in ``collector_leases.py``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.store.collector_navindex import key64
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


def c002_keyed_leased(conn: sqlite3.Connection) -> None:
    """Bundle tags and their keys; writers' leases; navigation ids stored once; refusals and
    flags (``collector_leases.py``)."""
    conn.execute("ALTER TABLE tokens ADD COLUMN tag_key TEXT")
    conn.execute("ALTER TABLE bundles ADD COLUMN manifest TEXT")
    conn.execute("ALTER TABLE bundles ADD COLUMN tag TEXT")
    conn.execute("""
        CREATE TABLE writers (
            id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at_ms REAL NOT NULL,
            expires_at_ms REAL NOT NULL
        ) STRICT""")
    conn.execute("""
        CREATE TABLE navigation_ids (
            id TEXT PRIMARY KEY,
            checksum TEXT NOT NULL REFERENCES bundles (checksum) ON DELETE CASCADE,
            contributor TEXT NOT NULL,
            fingerprint TEXT NOT NULL
        ) STRICT""")
    conn.execute("CREATE INDEX navigation_ids_checksum ON navigation_ids (checksum)")
    conn.execute("CREATE INDEX navigation_ids_fingerprint ON navigation_ids "
                 "(contributor, fingerprint)")
    conn.execute("""
        CREATE TABLE refusals (
            at_ms REAL NOT NULL,
            contributor TEXT NOT NULL,
            checksum TEXT NOT NULL,
            reason TEXT NOT NULL,
            other_contributor TEXT,
            ids INTEGER NOT NULL,
            first_id TEXT
        ) STRICT""")
    conn.execute("""
        CREATE TABLE flags (
            checksum TEXT NOT NULL REFERENCES bundles (checksum) ON DELETE CASCADE,
            navigation_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            of_id TEXT NOT NULL
        ) STRICT""")
    conn.execute("CREATE INDEX flags_checksum ON flags (checksum)")


def c003_navigations_in_order(conn: sqlite3.Connection) -> None:
    """Navigation ids in insertion order with 64-bit keys, looked up in memory
    (``collector_navindex.py``), not in two indexes of random TEXT keys; a generation counter
    that a bundle's deletion bumps. Every row is copied, in its order."""
    conn.create_function("protolens_key64", -1, key64, deterministic=True)
    conn.execute("""
        CREATE TABLE navigation_ids_in_order (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL,
            checksum TEXT NOT NULL REFERENCES bundles (checksum) ON DELETE CASCADE,
            contributor TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            id_key INTEGER NOT NULL,
            fp_key INTEGER NOT NULL
        ) STRICT""")
    conn.execute("INSERT INTO navigation_ids_in_order (id, checksum, contributor, fingerprint, "
                 "id_key, fp_key) SELECT id, checksum, contributor, fingerprint, "
                 "protolens_key64(id), protolens_key64(contributor, fingerprint) "
                 "FROM navigation_ids ORDER BY rowid")
    conn.execute("DROP TABLE navigation_ids")
    conn.execute("ALTER TABLE navigation_ids_in_order RENAME TO navigation_ids")
    conn.execute("CREATE INDEX navigation_ids_checksum ON navigation_ids (checksum)")
    conn.execute("CREATE TABLE navigation_generation (n INTEGER NOT NULL) STRICT")
    conn.execute("INSERT INTO navigation_generation (n) VALUES (0)")
    conn.execute("CREATE TRIGGER bundles_deleted AFTER DELETE ON bundles "
                 "BEGIN UPDATE navigation_generation SET n = n + 1; END")


CATALOG_MIGRATIONS: tuple[tuple[str, Migration], ...] = (
    ("c001_catalog", c001_catalog), ("c002_keyed_leased", c002_keyed_leased),
    ("c003_navigations_in_order", c003_navigations_in_order))


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
    manifest: str | None = None
    """The manifest's bytes (UTF-8), kept so ``verify`` can re-check the tag."""
    tag: str | None = None
    """HMAC-SHA256 of the manifest under the token's key (hex), or None if stored without."""


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

def add_token(conn: sqlite3.Connection, name: str, token_hash: str, now_ms: float,
              tag_key: str | None = None) -> bool:
    """Add a token (and the hex key of its bundle tags); False if the name is taken."""
    try:
        conn.execute("INSERT INTO tokens (name, token_hash, created_at_ms, tag_key) "
                     "VALUES (?, ?, ?, ?)", (name, token_hash, now_ms, tag_key))
    except sqlite3.IntegrityError:
        return False
    return True


def revoke_token(conn: sqlite3.Connection, name: str, now_ms: float) -> bool:
    cur = conn.execute("UPDATE tokens SET revoked_at_ms = ? WHERE name = ? AND "
                       "revoked_at_ms IS NULL", (now_ms, name))
    return cur.rowcount == 1


def token_owner(conn: sqlite3.Connection, token_hash: str
                ) -> tuple[str, bool, str | None] | None:
    """(name, revoked, tag key) of the token with this hash, or None."""
    row = conn.execute("SELECT name, revoked_at_ms IS NOT NULL, tag_key FROM tokens "
                       "WHERE token_hash = ?", (token_hash,)).fetchone()
    return None if row is None else (str(row[0]), bool(row[1]), row[2])


def tag_keys(conn: sqlite3.Connection) -> dict[str, str | None]:
    """Every contributor's tag key (hex), revoked tokens included (``verify``)."""
    if not has_table(conn, "writers"):
        return {}
    return {r[0]: r[1] for r in conn.execute("SELECT name, tag_key FROM tokens")}


def token_names(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(
        "SELECT name, created_at_ms, revoked_at_ms FROM tokens ORDER BY name")]


# --- bundles ---------------------------------------------------------------------------------

_BUNDLE_COLS = "checksum, contributor, contributor_id, received_at_ms, day, bytes"
_READ_COLS = _BUNDLE_COLS + ", manifest, tag"


def _cols(conn: sqlite3.Connection) -> str:
    """The bundle columns, on a catalog no ``serve`` has migrated yet too (read-only)."""
    return _READ_COLS if has_table(conn, "writers") else _BUNDLE_COLS


def _bundle(conn: sqlite3.Connection, row: sqlite3.Row) -> CatalogBundle:
    files = tuple(CatalogFile(r[0], r[1], r[2], r[3]) for r in conn.execute(
        "SELECT tbl, path, rows, sha256 FROM bundle_files WHERE checksum = ? ORDER BY tbl",
        (row[0],)))
    return CatalogBundle(row[0], row[1], row[2], row[3], row[4], row[5], files,
                         *(row[6:8] if len(row) > 6 else (None, None)))


def find_bundle(conn: sqlite3.Connection, checksum: str) -> CatalogBundle | None:
    row = conn.execute(f"SELECT {_cols(conn)} FROM bundles WHERE checksum = ?",
                       (checksum,)).fetchone()
    return None if row is None else _bundle(conn, row)


def all_bundles(conn: sqlite3.Connection, contributor: str | None = None
                ) -> list[CatalogBundle]:
    where, params = (" WHERE contributor = ?", [contributor]) if contributor else ("", [])
    rows = conn.execute(f"SELECT {_cols(conn)} FROM bundles{where} ORDER BY received_at_ms, "
                        "checksum", params).fetchall()
    return [_bundle(conn, r) for r in rows]


def insert_bundle(conn: sqlite3.Connection, b: CatalogBundle, bundle_schema: int,
                  protolens_version: str | None, exported_at: str | None) -> None:
    """The bundle's row and its files' rows (the caller holds the transaction)."""
    conn.execute(f"INSERT INTO bundles ({_BUNDLE_COLS}, bundle_schema, protolens_version, "
                 "exported_at, manifest, tag) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 (b.checksum, b.contributor, b.contributor_id, b.received_at_ms, b.day,
                  b.bytes, bundle_schema, protolens_version, exported_at, b.manifest, b.tag))
    conn.executemany("INSERT INTO bundle_files (checksum, tbl, path, rows, sha256) "
                     "VALUES (?, ?, ?, ?, ?)",
                     [(b.checksum, f.table, f.path, f.rows, f.sha256) for f in b.files])


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
    migrated = has_table(conn, "refusals")  # a catalog no ``serve`` has migrated yet
    out["refused_duplicates"] = conn.execute(
        "SELECT count(*) FROM refusals WHERE reason = 'duplicate'").fetchone()[0] \
        if migrated else 0
    out["near_duplicates"] = conn.execute(
        "SELECT count(*) FROM flags WHERE kind = 'near-duplicate'").fetchone()[0] \
        if migrated else 0
    return out


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None
