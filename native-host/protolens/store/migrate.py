"""Applying the schema history (``migrations.py``): each pending migration in one transaction
together with its row in ``_migrations``; and which are applied (on a read-only connection too).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from protolens.store.migrations import MIGRATIONS, Migration
from protolens.store.tx import transaction


@dataclass(frozen=True)
class MigrationState:
    name: str
    """Migration function name."""
    applied_at_ms: float | None
    """Epoch ms it was applied, or None if pending."""


def _ensure_table(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS _migrations "
                 "(name TEXT PRIMARY KEY, applied_at_ms REAL NOT NULL) STRICT")


def _applied(conn: sqlite3.Connection) -> dict[str, float]:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' "
                          "AND name = '_migrations'").fetchone()
    if not exists:
        return {}
    return {row[0]: row[1] for row in conn.execute("SELECT name, applied_at_ms FROM _migrations")}


def migration_states(conn: sqlite3.Connection,
                     migrations: tuple[tuple[str, Migration], ...] = MIGRATIONS,
                     ) -> list[MigrationState]:
    """Every known migration with when it was applied (works on a read-only connection)."""
    done = _applied(conn)
    return [MigrationState(name, done.get(name)) for name, _ in migrations]


def apply_migrations(conn: sqlite3.Connection, now_ms: float,
                     migrations: tuple[tuple[str, Migration], ...] = MIGRATIONS) -> list[str]:
    """Apply pending migrations, each in its own transaction with its record; return their names.

    ``conn`` must be in autocommit mode (``isolation_level=None``) so BEGIN/COMMIT are ours.
    """
    with transaction(conn):
        _ensure_table(conn)
    applied: list[str] = []
    for name, migrate in migrations:
        with transaction(conn):
            if conn.execute("SELECT 1 FROM _migrations WHERE name = ?", (name,)).fetchone():
                continue
            migrate(conn)
            conn.execute("INSERT INTO _migrations (name, applied_at_ms) VALUES (?, ?)",
                         (name, now_ms))
        applied.append(name)
    return applied
