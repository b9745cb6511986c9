"""Test helpers for running the real `protolens` CLI and a throwaway testbed (tests only)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scripts.devkit.caddylog import FAMILY, read_entries


def protolens(*args: str, db: Path | None = None, check: bool = True,
              timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run ``python -m protolens.cli ARGS`` (with ``PROTOLENS_DB`` set when ``db`` is given)."""
    env = dict(os.environ)
    if db:
        env["PROTOLENS_DB"] = str(db)
    return subprocess.run([sys.executable, "-m", "protolens.cli", *args], env=env, text=True,
                          capture_output=True, check=check, timeout=timeout)


@contextmanager
def running_testbed(name: str, *up_args: str) -> Iterator[dict[str, Any]]:
    """A testbed brought up for the block (after clearing any leftover) and always taken down;
    yields its ``status --json``."""
    protolens("testbed", "down", "--name", name, check=False)
    protolens("testbed", "up", "--name", name, "--server-cc", "cubic", *up_args)
    try:
        yield json.loads(protolens("testbed", "status", "--name", name, "--json").stdout)
    finally:
        protolens("testbed", "down", "--name", name, check=False)



def store_rows(db: Path, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Rows of a read-only query on a store, as dicts."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(sql, params)]


def caddy_hits(access_log: str | Path, start_ms: float, end_ms: float) -> list[dict[str, Any]]:
    """Requests caddy logged between two epoch-ms instants: host, uri, family, client port."""
    hits = []
    for entry in read_entries(Path(access_log)):
        req = entry.get("request")
        if req and start_ms <= entry["ts"] * 1000 <= end_ms:
            hits.append({"host": req["host"].split(":")[0], "uri": req["uri"],
                         "family": FAMILY[req["proto"]], "port": int(req["remote_port"])})
    return hits
