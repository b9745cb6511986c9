#!/usr/bin/env python3
"""Host peak memory for the largest frames (messaging/inbound.py): the real host process
(``python -m protolens.host``) is sent one 64 MiB frame of a given shape, then a ping; its peak
resident set (``VmHWM`` in /proc/PID/status) is read once the pong arrives. One fresh process per
shape and run; prints each shape's median and range over the runs, and the ratio to an idle host.

Usage: .venv/bin/python scripts/bench/frame_memory.py [--runs 3] [--host-python PYTHON]
(``--host-python`` with ``PYTHONPATH`` pointing at another checkout measures that code.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

SIZE = 64 * 1024 * 1024 - 16


def shapes() -> dict[str, bytes]:
    n = (SIZE - 2) // 3
    return {
        "idle (ping only)": b"",
        "[{},{},...]": b"[" + b"{}," * (n - 1) + b"{}]",
        "[0,0,...]": b"[" + b"0," * ((SIZE - 2) // 2 - 1) + b"0]",
        "one 64 MiB string": b'{"type":"ping","schema":1,"x":"' + b"a" * (SIZE - 40) + b'"}',
    }


def peak_kb(python: str, body: bytes, work: Path) -> int:
    env = {**os.environ, "PROTOLENS_DB": str(work / "p.db"), "HOME": str(work)}
    proc = subprocess.Popen([python, "-m", "protolens.host", "x"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin and proc.stdout
    ping = json.dumps({"type": "ping", "schema": 1}).encode()
    frames = (struct.pack("<I", len(body)) + body if body else b"")
    proc.stdin.write(frames + struct.pack("<I", len(ping)) + ping)
    proc.stdin.flush()
    while True:  # replies until the pong
        (n,) = struct.unpack("<I", proc.stdout.read(4))
        if json.loads(proc.stdout.read(n)).get("type") == "pong":
            break
    status = Path(f"/proc/{proc.pid}/status").read_text()
    proc.stdin.close()
    proc.wait(timeout=60)
    return int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmHWM")))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--host-python", default=sys.executable)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {name: [peak_kb(args.host_python, body, Path(tmp)) for _ in range(args.runs)]
                   for name, body in shapes().items()}
    idle = statistics.median(results["idle (ping only)"])
    print(f"{'frame':<22} {'median MiB':>10} {'min..max MiB':>16} {'x idle':>7}  (n={args.runs})")
    for name, kbs in results.items():
        med = statistics.median(kbs)
        print(f"{name:<22} {med / 1024:>10.1f} {min(kbs) / 1024:>7.1f}..{max(kbs) / 1024:<7.1f}"
              f" {med / idle:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
