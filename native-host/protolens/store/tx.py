"""One transaction helper for every write in the store: ``with transaction(conn):`` runs the block
between BEGIN IMMEDIATE and COMMIT, and rolls back on any exception (KeyboardInterrupt too), so a
write is all or nothing. Connections are in autocommit mode (``isolation_level=None``, see
``db.py``), so the BEGIN and COMMIT are ours."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def transaction(conn: sqlite3.Connection, immediate: bool = True, join: bool = False
                ) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (or a deferred BEGIN) ... COMMIT, ROLLBACK on any exception. ``join``: if
    the caller has a transaction open already, the block runs inside it (its caller commits)."""
    if join and conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
