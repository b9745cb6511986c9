"""The SQLite store: the only package that holds SQL (house style).

``db``: opening read-write (creating, WAL, migrations) or read-only (never creating).
``migrations``: named schema migrations. ``ingest``: one record in one transaction.
``queries``: what the CLI and analyses read. Schema documented in docs/SCHEMA.md.
"""

import sqlite3

from protolens.store.db import StoreError, is_transient, open_ro, open_rw, private_dir, private_file
from protolens.store.ingest import SqliteSink, ingest

Connection = sqlite3.Connection
"""An open store (SQLite); outside ``store/`` code names it by this type, never ``sqlite3``."""
DatabaseError = sqlite3.Error
"""Anything SQLite raises from a store query (the base of the two below)."""
IntegrityError = sqlite3.IntegrityError
"""A row refused by the store's constraints."""
OperationalError = sqlite3.OperationalError
"""A store that is locked, busy, read-only or damaged."""

__all__ = ["Connection", "DatabaseError", "IntegrityError", "OperationalError", "SqliteSink",
           "StoreError", "ingest", "is_transient", "open_ro", "open_rw", "private_dir",
           "private_file"]
