"""The contributor ID: 32 random hex digits made once from ``secrets`` (derived from nothing
identifying) and kept in the data directory, so a researcher can tell bundles of one volunteer
apart from another's without learning who either is."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from protolens.store import private_dir

FILE = "contributor_id"
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def read_id(data_dir: Path) -> str | None:
    """The stored ID, or None if there is none yet (never writes)."""
    try:
        text = (data_dir / FILE).read_text().strip()
    except FileNotFoundError:
        return None
    return text if _HEX32.match(text) else None


def ensure_id(data_dir: Path) -> str:
    """The stored ID, created on first use (atomically: two exports agree on one ID)."""
    found = read_id(data_dir)
    if found:
        return found
    private_dir(data_dir)  # the store's directory by default: the user's alone (0700)
    new = secrets.token_hex(16)
    tmp = data_dir / f".{FILE}.{os.getpid()}"
    tmp.write_text(new + "\n")
    try:
        os.link(tmp, data_dir / FILE)  # fails if another process made one first
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return read_id(data_dir) or new
