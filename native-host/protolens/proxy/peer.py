"""Which process is on the other end of a loopback TCP connection (adapter: reads /proc).

Chromium cannot be given proxy credentials on its command line, so the lab browser proves itself
another way: the runner starts it with ``PROTOLENS_PROXY_TOKEN=<per-run token>`` in its
environment, which every Chromium process inherits; the proxy finds the connecting socket's
inode in ``/proc/net/tcp`` (``core.socket_inode``), the process holding that inode under
``/proc/PID/fd``, and checks that process's environment and its ancestors' (Chromium's network
service does not inherit the browser's environment, verified with Chromium 156: the token is in
the browser process, its parent) with ``core.environ_has_token``. Only root or the same user can
read another process's environment.
"""

from __future__ import annotations

import os
from pathlib import Path

from protolens.proxy.core import environ_has_token, socket_inode


def owner_pids(inode: int, proc: Path = Path("/proc")) -> list[int]:
    want = f"socket:[{inode}]"
    out = []
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            fds = list(os.scandir(f"{entry.path}/fd"))
        except OSError:  # the process ended, or is not ours to read
            continue
        for fd in fds:
            try:
                target = os.readlink(fd.path)
            except OSError:  # closed since the listing: a busy process (Chromium's network
                continue     # service) opens and closes descriptors while we read its others
            if target == want:
                out.append(int(entry.name))
                break
    return out


def process_has_token(peer: tuple[str, int], local: tuple[str, int], token: str,
                      proc: Path = Path("/proc")) -> bool:
    """True if the process that opened ``peer -> local`` carries the run's token."""
    try:
        inode = socket_inode((proc / "net" / "tcp").read_text(), peer, local)
    except (OSError, ValueError):
        return False
    if not inode:
        return False
    for pid in owner_pids(inode, proc):
        for ancestor in ancestors(pid, proc):
            try:
                if environ_has_token((proc / str(ancestor) / "environ").read_bytes(), token):
                    return True
            except OSError:
                continue
    return False


def ancestors(pid: int, proc: Path = Path("/proc"), depth: int = 6) -> list[int]:
    """``pid`` and its parents (at most ``depth``), stopping before init."""
    out: list[int] = []
    while pid > 1 and len(out) < depth:
        out.append(pid)
        try:
            status = (proc / str(pid) / "status").read_text()
        except OSError:
            break
        ppid = next((int(ln.split()[1]) for ln in status.splitlines()
                     if ln.startswith("PPid:")), 0)
        pid = ppid
    return out
