"""Building an anonymized bundle from a store: read local rows (``store/research.py``), pass
them through the ``Anonymizer`` with a fresh random salt, turn them into Parquet, write the tar.
``build`` does everything in memory (``--preview`` shows its result and writes nothing)."""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens import __version__
from protolens.share.anonymize import Anonymizer
from protolens.share.bundle import TABLES, make_manifest, parquet_bytes, to_table, write_tar
from protolens.store.research import export_rows


@dataclass(frozen=True)
class Built:
    """A bundle ready to write (or to preview)."""

    manifest: dict[str, Any]
    files: dict[str, bytes]
    rows: dict[str, list[dict[str, Any]]]
    """Exactly the rows in the Parquet files."""


def iso_minute(ms: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime(ms / 1000))


def build(conn: sqlite3.Connection, *, allow: frozenset[str], since_ms: float | None,
          now_ms: float, contributor_id: str, salt: bytes | None = None) -> Built:
    """Anonymized tables and their manifest. ``salt`` defaults to 32 fresh random bytes."""
    anon = Anonymizer(salt if salt is not None else secrets.token_bytes(32), allow)
    rows = {name: anon.table(name, export_rows(conn, name, since_ms)) for name in TABLES}
    files = {name: parquet_bytes(to_table(name, rows[name])) for name in TABLES}
    info: Mapping[str, Any] = {
        "protolens_version": __version__,
        "record_schema": 1,
        "exported_at": iso_minute(now_ms),
        "since": iso_minute(since_ms) if since_ms else None,
        "contributor_id": contributor_id,
        "anonymization": {
            "hosts": "HMAC-SHA256 under a random per-bundle salt that is not in the bundle, "
                     "first 16 hex digits, as anon-<hex>; URLs reduced to scheme://host[:port]",
            "allowlisted_domains": len(allow),
            "times": "wall-clock times floored to the minute",
            "dropped": ["remote_ip", "frame_id", "command_line", "load_id",
                        "context (except the tag columns)"],
            "browser": "name and major version",
        },
    }
    return Built(make_manifest(files, {n: len(rows[n]) for n in TABLES}, info), files, rows)


def write(built: Built, out: Path, now_ms: float) -> str:
    """Write the bundle as a .tar; return its checksum."""
    return write_tar(out, built.manifest, built.files, mtime=(now_ms // 60_000) * 60)
