"""Process and namespace helpers for the testbed (adapter: /proc, signals, ``ip netns``)."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from protolens.testbed.run import run


def netns_list() -> list[str]:
    out = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def stop(pid: int, wait_s: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after ``wait_s``; True if the process existed."""
    if not alive(pid):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not alive(pid):
            break
        time.sleep(0.02)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):  # reap it if it is our child
        os.waitpid(pid, os.WNOHANG)
    return True
