"""Is a store file damaged? ``PRAGMA quick_check`` (SQLite's page and index structure check,
https://sqlite.org/pragma.html#pragma_quick_check: what ``integrity_check`` does less the
UNIQUE-constraint and index-content comparisons, linear in the file's size) on a read-only
connection; and the one hint for a damaged store. A migration rewrites the schema, never a
damaged page, so the way back is a backup (docs/SCHEMA.md "Backup and restore")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

MAX_PROBLEMS = 3
"""quick_check lists up to 100 problems; the first few say enough."""


def quick_check(path: Path) -> list[str]:
    """Problems SQLite finds in the file (empty: none); an unopenable file is one problem."""
    try:
        conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
        try:
            rows = conn.execute(f"PRAGMA quick_check({MAX_PROBLEMS})").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return [str(exc)]
    problems = [str(r[0]) for r in rows]
    return [] if problems == ["ok"] else problems


def is_corruption(exc: BaseException) -> bool:
    """SQLite's words for a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB)."""
    text = str(exc).lower()
    return "malformed" in text or "file is not a database" in text or "corrupt" in text


def corrupt_hint(path: Path) -> str:
    return (f"restore {path} from your backup, or salvage what is readable: sqlite3 {path} "
            f"'.recover' | sqlite3 {path}.recovered, then move {path} aside "
            "(docs/SCHEMA.md \"Backup and restore\")")
