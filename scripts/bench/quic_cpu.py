#!/usr/bin/env python3
"""Why is h3 slower than h2 for 100 files at 10 ms here (mininet-quic's disagreement)?

``lab reproduce mininet-quic`` found h3 / h2 x3.25 for 100 files of 100 KB at 10 ms RTT-20,
where the paper (shared/seeds/004) found QUIC ahead. The profile has no rate limit, so a load's
speed is bounded by the machine, not the link. This bench separates the two explanations:

- **object count**: if h3 suffers from many parallel objects (stream limits, head-of-line
  effects in the implementation), one 10 MB file should close the gap;
- **bulk throughput (CPU)**: if h3 is slower at moving bytes on 2 cores, one 10 MB file shows the
  same ratio, and the machine is busy for the whole h3 load.

It runs one real lab campaign (``protolens lab run``: the extension recorded, the testbed's
shaper in the path) of ``mininet-1``, ``mininet-100``, ``custom-1x10m`` (the same 10 MB in one
file) and ``custom-100x500k`` (100 small files of 5 KB), h2 and h3, at ``mininet-10ms`` (and any
``--conditions``), and samples /proc every 100 ms meanwhile. Per load,
over the navigation's own window (start to load event), it prints the machine's busy share of
its cores and the CPU seconds spent by Chromium's network service, its other processes, caddy
and the shaper. Ratios are medians with bootstrap 95% intervals.

Measured on 2026-11-24 (docs/RESEARCH.md, "Where we differ"): at 10 ms, h3 / h2 was x0.96 for
one 100 KB file, x1.22 for 100 files of 5 KB, x1.63 for one 10 MB file and x3.66 for 100 files
of 100 KB, with x0.84, x1.22, x2.15 and x3.57 the CPU seconds: both explanations hold.

Usage: quic_cpu.py [--reps N] [--conditions mininet-10ms,mininet-100ms] [--testbed plq]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import closing
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.analysis.bootstrap import bootstrap_medians  # noqa: E402

PROTOLENS = str(Path(sys.executable).with_name("protolens"))
PAGES = ("mininet-1", "mininet-100", "custom-1x10m", "custom-100x500k")
CUSTOM = (("1", "10m"), ("100", "500k"))
"""The same 10 MB as mininet-100 in one file; and 100 small files (5 KB each, 500 KB)."""
TICK = os.sysconf("SC_CLK_TCK")
PERIOD_S = 0.1


def group_of(pid: int) -> str | None:
    """The process group a pid belongs to, from its command line (None: not counted)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    # Chromium's child processes rewrite their title: one string, arguments joined by spaces
    joined = b" ".join(argv)
    exe = os.path.basename(joined.split(b" ", 1)[0].decode(errors="replace"))
    if exe in ("chromium", "chrome"):
        return "chromium-net" if b"NetworkService" in joined else "chromium-other"
    if exe == "caddy":
        return "caddy"
    if exe == "protolens-shaper":
        return "shaper"
    return None


class Sampler(threading.Thread):
    """/proc/stat's busy and total jiffies, and per-group CPU jiffies, every PERIOD_S."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int, int, dict[str, int]]] = []
        self.groups: dict[int, tuple[str | None, float]] = {}
        self.last: dict[int, int] = {}
        self.totals: dict[str, int] = defaultdict(int)
        self.stop = threading.Event()

    def sample(self) -> None:
        with open("/proc/stat") as f:
            cpu = [int(x) for x in f.readline().split()[1:]]
        idle = cpu[3] + cpu[4]
        for pid_s in os.listdir("/proc"):
            if not pid_s.isdigit():
                continue
            pid = int(pid_s)
            group, seen = self.groups.get(pid, (None, 0.0))
            if pid not in self.groups or (group is None and time.time() - seen < 2.0):
                # a process forked by Python shows Python's command line until its exec
                group = group_of(pid)
                self.groups[pid] = (group, seen or time.time())
            if group is None:
                continue
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            used = int(fields[11]) + int(fields[12])  # utime + stime
            self.totals[group] += used - self.last.get(pid, 0)
            self.last[pid] = used
        self.samples.append((time.time(), sum(cpu) - idle, sum(cpu), dict(self.totals)))

    def run(self) -> None:
        while not self.stop.wait(PERIOD_S):
            self.sample()

    def window(self, start: float, end: float) -> dict[str, float]:
        """Busy share of all cores and CPU seconds per group between two epoch times."""
        inside = [s for s in self.samples if start <= s[0] <= end + PERIOD_S]
        before = [s for s in self.samples if s[0] < start]
        if not before or len(inside) < 2:
            return {}
        a, b = before[-1], inside[-1]
        out = {"busy": (b[1] - a[1]) / max(1, b[2] - a[2])}
        for g in ("chromium-net", "chromium-other", "caddy", "shaper"):
            out[g] = (b[3].get(g, 0) - a[3].get(g, 0)) / TICK
        return out


def ratio_ci(num: list[float], den: list[float]) -> str:
    if not num or not den:
        return "n/a"
    rng = np.random.default_rng(5)
    a, b = (bootstrap_medians(np.sort(num), 4000, rng),
            bootstrap_medians(np.sort(den), 4000, rng))
    lo, hi = np.percentile(a / b, [2.5, 97.5])
    return f"x{statistics.median(num) / statistics.median(den):.2f} [{lo:.2f}, {hi:.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=6)
    ap.add_argument("--conditions", default="mininet-10ms")
    ap.add_argument("--testbed", default="plq")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="quic-cpu-"))
    db = work / "store.db"
    env = {**os.environ, "PROTOLENS_DB": str(db)}
    for objects, size in CUSTOM:
        subprocess.run([PROTOLENS, "testbed", "page", "--objects", objects, "--size", size],
                       check=False, capture_output=True, env=env)
    campaign = f"quic-cpu-{time.strftime('%Y%m%d-%H%M%S')}"
    sampler = Sampler()
    sampler.sample()
    sampler.start()
    t0 = time.monotonic()
    run = subprocess.run([PROTOLENS, "lab", "run", "--pages", ",".join(PAGES), "--arms", "h2,h3",
                          "--conditions", args.conditions, "--reps", str(args.reps),
                          "--no-visual", "--seed", "5", "--testbed", args.testbed,
                          "--campaign", campaign], env=env)
    sampler.stop.set()
    sampler.join()
    print(f"\n{campaign}: lab run exited {run.returncode} after "
          f"{time.monotonic() - t0:.0f} s; store {db}")
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT page, condition, arm, started_at_ms, plt_ms "
                            "FROM navigation_summary WHERE campaign = ? AND failed = 0 "
                            "AND warm = 0", (campaign,)).fetchall()
    cells: dict[tuple[str, str, str], list[dict[str, float]]] = defaultdict(list)
    for page, cond, arm, start_ms, plt in rows:
        w = sampler.window(start_ms / 1000, (start_ms + plt) / 1000)
        if w:
            cells[(page, cond, arm)].append({"plt": plt, **w})
    print(f"{'page':<14}{'condition':<15}{'arm':<4}{'n':>3}{'PLT ms':>9}"
          f"{'busy':>7}{'net s':>7}{'other s':>8}{'caddy s':>8}{'shaper s':>9}")
    for key in sorted(cells):
        v = cells[key]

        def med(k: str, v: list[dict[str, float]] = v) -> float:
            return statistics.median(x[k] for x in v)
        print(f"{key[0]:<14}{key[1]:<15}{key[2]:<4}{len(v):>3}{med('plt'):>9.0f}"
              f"{med('busy'):>7.0%}{med('chromium-net'):>7.2f}"
              f"{med('chromium-other'):>8.2f}{med('caddy'):>8.2f}{med('shaper'):>9.2f}")
    print("\nh3 / h2, median [bootstrap 95%]:")
    for cond in sorted({k[1] for k in cells}):
        for page in PAGES:
            h2, h3 = cells.get((page, cond, "h2"), []), cells.get((page, cond, "h3"), [])
            plt = ratio_ci([x["plt"] for x in h3], [x["plt"] for x in h2])
            cpu = ratio_ci([sum_cpu(x) for x in h3], [sum_cpu(x) for x in h2])
            print(f"  {page} at {cond}: PLT {plt}; CPU seconds (all groups) {cpu}")
    sys.exit(run.returncode)


def sum_cpu(x: dict[str, float]) -> float:
    return x["chromium-net"] + x["chromium-other"] + x["caddy"] + x["shaper"]


if __name__ == "__main__":
    main()
