"""The SQLite store: the only package that holds SQL (house style).

``db``: opening read-write (creating, WAL, migrations) or read-only (never creating).
``migrations``: named schema migrations. ``ingest``: one record in one transaction.
``queries``: what the CLI and analyses read. Schema documented in docs/SCHEMA.md.
"""

from protolens.store.db import StoreError, is_transient, open_ro, open_rw, private_dir, private_file
from protolens.store.ingest import SqliteSink, ingest

__all__ = ["SqliteSink", "StoreError", "ingest", "is_transient", "open_ro", "open_rw",
           "private_dir", "private_file"]
