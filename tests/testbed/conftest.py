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


def wan_traces(name: str) -> dict[str, object]:
    """Everything a wan network called ``name`` could leave in the root namespace (and its
    state under /run)."""
    def sh(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True).stdout

    return {"netns": sorted(n for n in sh("ip", "netns", "list").split() if n.startswith(name)),
            "rules": [line for t in ("nat", "filter") for line in
                      sh("iptables", "-w", "-t", t, "-S").splitlines()
                      if f"protolens-wan-{name}" in line],
            "route": sh("ip", "-4", "route", "show", "198.18.1.0/24"),
            "link": sh("ip", "-br", "link", "show", f"{name}-hw"),
            "ip_forward": Path("/proc/sys/net/ipv4/ip_forward").read_text(),
            "run": Path(f"/run/protolens/testbed/wan-{name}").exists(),
            "etc": sorted(p.name for p in Path("/etc/netns").glob(f"{name}-*"))
            if Path("/etc/netns").exists() else []}
