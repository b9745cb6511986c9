"""Measurements on a wan network from inside its client namespace, for the wan path's
end-to-end tests (tests/lab/test_wan_campaign.py): the rate the shaper's counters give while
downloads keep the bottleneck busy, ping replies with their times, and the slowdown profile's
timeline written out from its definition (not from the shaper's code)."""

from __future__ import annotations

import math
import subprocess
import time
from typing import Any

from scripts.devkit.standin import Standin


def busy_rate(wn: Any, net: Standin) -> float:
    """The down rate (bit/s) the shaper's counters give between two readings, 1 s and 2.5 s
    after three downloads of the stand-in's 2 MB object start (still running at the second:
    they keep the bottleneck busy)."""
    curl = ["curl", "-sS", "--cacert", str(net.ca), "-o", "/dev/null",
            "https://www.example.com/big.bin"]
    procs = [subprocess.Popen(wn.exec_argv(curl)) for _ in range(3)]
    try:
        time.sleep(1.0)
        a = wn.stats()
        time.sleep(1.5)
        b = wn.stats()
        assert [p.poll() for p in procs] == [None] * 3, "a download ended within the window"
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=10)
    down = [sum(f["bytes_down"] for f in s["flows"] if f["server_port"] == 443) for s in (a, b)]
    return float((down[1] - down[0]) * 8 / ((b["now_ns"] - a["now_ns"]) / 1e9))


def ping_replies(text: str) -> list[tuple[float, float]]:
    """(reply time s, RTT ms) of each reply in ``ping -D`` output."""
    return [(float(line[1:line.index("]")]), float(line.split("time=")[1].split()[0]))
            for line in text.splitlines() if line.startswith("[") and "time=" in line]


def slowdown_rtt(after_s: float) -> float:
    """The slowdown profile's RTT (ms) ``after_s`` after it starts (CoNEXT'20 Sec. 2, as its
    profile file gives it): fiber's 5 ms, then 15 ms more every 100 ms, at most 300 ms."""
    return min(300.0, 5.0 + 15.0 * math.floor(after_s / 0.1))


def falls_back(rtts: list[float], high: float = 200.0, low: float = 30.0) -> int:
    """How often a series of RTTs falls from ``high`` or more to under ``low`` (a ramp that
    starts again), counting each climb once."""
    count, up = 0, False
    for r in rtts:
        if up and r < low:
            count += 1
            up = False
        elif r >= high:
            up = True
    return count
