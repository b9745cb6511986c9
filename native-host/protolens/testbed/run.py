"""Subprocess adapter for the testbed: every external command (ip, iptables, ethtool, sysctl, ss)
goes through ``run`` so failures become one-line ``TestbedError``s."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from protolens.testbed.spec import TestbedError

__all__ = ["TestbedError", "in_ns", "run"]


def run(argv: Sequence[str], check: bool = True, timeout: float = 30.0) -> str:
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise TestbedError(f"command not found: {argv[0]} (run scripts/setup.sh)") from None
    except subprocess.TimeoutExpired:
        raise TestbedError(f"timed out after {timeout:g} s: {' '.join(argv)}") from None
    if check and p.returncode != 0:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        raise TestbedError(f"{' '.join(argv)}: {msg[-1] if msg else f'exit {p.returncode}'}")
    return p.stdout


def in_ns(ns: str, argv: Sequence[str]) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]
