"""Opening the store. Read-write opens create the file, switch on WAL and apply migrations;
read-only opens use ``mode=ro`` and never create anything (house style)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from protolens.store.migrate import apply_migrations


class StoreError(Exception):
    """The database cannot be opened or is not a ProtoLens store; the message says why."""


_TRANSIENT_CODES = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL,
                              sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN,
                              sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PROTOCOL,
                              sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CORRUPT,
                              sqlite3.SQLITE_NOTADB})
"""Result codes (https://www.sqlite.org/rescode.html) that say the store, not the record, is the
problem: locked or busy by another process, a full disk, a file that cannot be opened or is
damaged. The record may be stored once that is fixed, so it is kept and resent, never dropped."""


def is_transient(exc: BaseException) -> bool:
    """True if the same write may succeed later (the store busy, locked, full, unreadable or
    damaged); False for what never will: an integer SQLite cannot hold (OverflowError), text it
    cannot encode, a constraint."""
    if isinstance(exc, StoreError | OSError):
        return True
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is None:
            return isinstance(exc, sqlite3.OperationalError)
        return (code & 0xFF) in _TRANSIENT_CODES
    return False


STORE_DIR_MODE = 0o700
STORE_FILE_MODE = 0o600
"""A browsing history belongs to its user: the store's directory and files."""


def private_dir(path: Path) -> None:
    """Create ``path`` (and parents) as 0700 if missing; an existing directory is left alone."""
    if not path.is_dir():
        path.mkdir(mode=STORE_DIR_MODE, parents=True, exist_ok=True)
        path.chmod(STORE_DIR_MODE)  # mkdir's mode is masked by the umask


def private_file(path: Path) -> None:
    """Create ``path`` empty as 0600 if missing, so SQLite (or a log) opens a private file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, STORE_FILE_MODE)
    os.close(fd)


def _configure(conn: sqlite3.Connection) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA busy_timeout = 5000")


WAL_SWITCH_TIMEOUT_S = 5.0
"""As long as ``busy_timeout``: how long to keep retrying the switch to WAL."""


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """``PRAGMA journal_mode = WAL``, retried while another process holds the lock.

    On a brand-new file, two processes (Chromium starts one host per port) race to switch it to
    WAL; SQLite answers the loser "database is locked" at once, without calling the busy handler.
    Measured here: 20 of 300 simultaneous pairs failed before this retry, 0 after.
    """
    waited, delay = 0.0, 0.005  # the budget counts the sleeps: no clock read in the store
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if waited + delay > WAL_SWITCH_TIMEOUT_S:
                raise
            time.sleep(delay)
            waited += delay
            delay = min(delay * 2, 0.1)


def open_rw(path: Path, now_ms: float, migrate: bool = True,
            synchronous: str = "FULL") -> sqlite3.Connection:
    """Open (creating if needed) the store at ``path`` in WAL mode, migrated to the latest schema.

    ``synchronous=FULL`` by default: an ``ack`` promises the record survives a power cut too
    (https://www.sqlite.org/pragma.html#pragma_synchronous).
    """
    if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ValueError(f"synchronous: unknown level {synchronous!r}")
    try:
        private_dir(path.parent)
        if not path.exists():
            # SQLite gives the -wal and -shm files the main file's permissions (its unix VFS,
            # os_unix.c findCreateFileMode(): "the permissions on the corresponding database")
            private_file(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        _configure(conn)
        mode = _switch_to_wal(conn)
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: could not switch to WAL journal mode (got {mode})")
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        if migrate:
            apply_migrations(conn, now_ms)
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"{path}: {exc}") from None
    return conn


def open_ro(path: Path) -> sqlite3.Connection:
    """Open an existing store read-only; raise ``StoreError`` if it does not exist."""
    if not path.is_file():
        raise StoreError(f"{path}: no database here (nothing recorded yet? use --db to choose one)")
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        _configure(conn)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: {exc}") from None
    return conn
