"""Test helpers for running the real `protolens` CLI and a throwaway testbed (tests only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


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
