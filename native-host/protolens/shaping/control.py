"""Adapter for the compiled shaper (native-host/shaper/): find or build the binary, start it in
the router namespace, and talk to its unix control socket (one line per connection:
ping | stats | stats-reset | reset | load PATH | queue | queue-reset)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import protolens

_SHAPER_DIR = Path(protolens.__file__).resolve().parents[1] / "shaper"


class ShaperError(RuntimeError):
    """The shaper is missing, not running, or refused a command (one-line message)."""


def shaper_binary(env: dict[str, str] | None = None) -> Path:
    """``$PROTOLENS_SHAPER``, else native-host/shaper/build/protolens-shaper (built if stale)."""
    env = dict(os.environ) if env is None else env
    if env.get("PROTOLENS_SHAPER"):
        return Path(env["PROTOLENS_SHAPER"])
    binary = _SHAPER_DIR / "build" / "protolens-shaper"
    sources = list(_SHAPER_DIR.glob("*.[ch]"))
    stale = not binary.exists() or any(s.stat().st_mtime > binary.stat().st_mtime for s in sources)
    if stale and (_SHAPER_DIR / "Makefile").exists():
        p = subprocess.run(["make", "-s", "-C", str(_SHAPER_DIR)], capture_output=True, text=True)
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ["make failed"])[-1]
            raise ShaperError(f"cannot build the shaper: {last}")
    if not binary.exists():
        raise ShaperError(f"shaper binary not found: {binary} (run make -C native-host/shaper)")
    return binary


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
    binary = shaper_binary()
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


def truth_rows(stats: dict[str, Any]) -> list[dict[str, Any]]:
    """The shaper's per-flow counters as ground-truth rows (pure)."""
    names = {6: "tcp", 17: "udp", 1: "icmp"}
    rows = []
    for f in stats.get("flows", []):
        row = dict(f)
        row["proto"] = names.get(int(f["proto"]), str(f["proto"]))
        rows.append(row)
    rows.sort(key=lambda r: (r["first_ns"], r["client_port"]))
    return rows
