"""Adapter for the compiled shaper (native-host/shaper/): start the built helper in the router
namespace and talk to its unix control socket (one line per connection:
ping | stats | stats-reset | reset | load PATH | queue | queue-reset). Building it is
``build.py``'s explicit step."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from protolens.shaper.build import ShaperError, find_binary


class ShaperClient:
    def __init__(self, sock: Path) -> None:
        self.sock = sock

    def request(self, line: str, timeout: float = 3.0) -> str:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(str(self.sock))
            s.sendall(line.encode() + b"\n")
            chunks = []
            while True:
                b = s.recv(1 << 16)
                if not b:
                    break
                chunks.append(b)
        except OSError as e:
            raise ShaperError(f"shaper not responding on {self.sock}: {e.strerror or e}") from None
        finally:
            s.close()
        return b"".join(chunks).decode()

    def alive(self) -> bool:
        try:
            return self.request("ping", timeout=1.0).startswith("pong")
        except ShaperError:
            return False

    def stats(self, reset: bool = False) -> dict[str, Any]:
        out = self.request("stats-reset" if reset else "stats")
        try:
            data: dict[str, Any] = json.loads(out)
        except json.JSONDecodeError:
            raise ShaperError(f"bad answer from the shaper: {out[:80]!r}") from None
        return data

    def reset(self) -> None:
        self.request("reset")

    def queue_reset(self) -> None:
        """Restart the bottleneck queue log (10 ms samples, first drop) now."""
        if not self.request("queue-reset").startswith("ok"):
            raise ShaperError("shaper refused queue-reset (an old build? "
                              "make -C native-host/shaper)")

    def queue(self) -> dict[str, Any]:
        """The queue log since the last ``queue_reset``: ``start_ns`` (wall clock),
        ``interval_ns``, per direction ``bytes`` / ``packets`` samples, ``max_bytes``, ``drops``,
        ``first_drop_ns``."""
        out = self.request("queue", timeout=5.0)
        try:
            data: dict[str, Any] = json.loads(out)
        except json.JSONDecodeError:
            raise ShaperError(f"bad answer from the shaper: {out[:80]!r}") from None
        return data

    def load(self, config: Path) -> None:
        out = self.request(f"load {config}")
        if not out.startswith("ok"):
            raise ShaperError(out.strip().removeprefix("error: ") or "shaper refused the config")


def start_shaper(ns: str, config: Path, sock: Path, log: Path, queue_up: int, queue_down: int,
                 rt_prio: int = 50, wait_s: float = 5.0) -> int:
    """Start the shaper in ``ns``; return its pid once it answers on ``sock``."""
    binary = find_binary()
    argv = ["ip", "netns", "exec", ns, str(binary), "--queue-up", str(queue_up),
            "--queue-down", str(queue_down), "--config", str(config), "--control", str(sock),
            "--rt-prio", str(rt_prio)]
    with open(log, "ab") as logf:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                start_new_session=True)
    client = ShaperClient(sock)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace").strip().splitlines()
            raise ShaperError(tail[-1] if tail else f"shaper exited with {proc.returncode}")
        if sock.exists() and client.alive():
            return proc.pid
        time.sleep(0.02)
    proc.kill()
    raise ShaperError(f"shaper did not answer on {sock} within {wait_s:g} s")
