"""Fixtures for the network-lab tests: they need root, namespaces, caddy, iptables, the shaper."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent


def lab_available() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    for tool in ("ip", "iptables", "ethtool", "caddy", "make", "gcc", "curl", "ping", "tcpdump"):
        if shutil.which(tool) is None:
            return f"needs {tool} (scripts/setup.sh)"
    return None


@pytest.fixture(scope="module")
def lab() -> Iterator[Any]:
    """One testbed for a whole test module (name 'plt', wifi profile, cubic server)."""
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    from protolens.testbed import Testbed

    Testbed.down("plt")  # a previous crashed run
    tb = Testbed.up(name="plt", profile="wifi", server_cc="cubic")
    try:
        yield tb
    finally:
        Testbed.down("plt")


def in_client(tb: Any, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(tb.exec_argv(argv), capture_output=True, text=True, timeout=timeout)


def python_in(argv_prefix: list[str], script: str, *args: str) -> list[str]:
    return [*argv_prefix, sys.executable, str(HERE / script), *args]
