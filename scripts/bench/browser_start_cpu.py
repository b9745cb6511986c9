#!/usr/bin/env python3
"""Benchmark: the CPU a lab browser's start costs, from /proc, beside a plain Chromium's.

Issue 22's target 3 (lab overhead per load) asks what a load costs beyond its page. With a browser
per load (a fresh profile: cold cache, no connection carried over) and the browser's start kept off
the page (lab/runner.py's overlap stops every starting browser while a page loads), the start's CPU
must fit in the pages' tails: on a machine of C cores, a campaign cannot run faster than one start's
CPU / C per load, however its starts are scheduled. This measures that CPU, arms interleaved, R
rounds, each a fresh profile:

- ``plain``: Chromium with the lab's flags (browser/flags.py command_line) and a fresh profile,
  no extension, its first page about:blank;
- ``standby``: a lab standby as ``lab run`` starts one (browser/launch.py start_browser,
  ``standby=True``): the extension, its native host in lab mode, the lab tab opened and attached,
  the recorder's commands sent, waiting for its go; ``standby+visual`` with the screencast on
  (``lab run``'s default).

The CPU (utime + stime) of every process of the browser's process group (the native host is the
browser's child) is read every 50 ms (recorder_cpu.py's Sampler: a process that exits keeps its
last value); ``start`` is the CPU at ``--settle`` seconds after the launch, ``idle`` the CPU per
second after that (a standby waiting for its go). Prints per process kind the median ms, and the
floor per load the start sets on this machine.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/browser_start_cpu.py
       [--rounds 6] [--settle 2.0] [--idle 2.0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.arms import Arm  # noqa: E402
from protolens.browser.flags import LaunchSpec, command_line  # noqa: E402
from protolens.browser.launch import scratch_env, start_browser, stop  # noqa: E402
from protolens.browser.profile import seed_preferences  # noqa: E402
from scripts.bench.recorder_cpu import KINDS, Sampler, rotated  # noqa: E402
from scripts.devkit.harness import CHROMIUM, require_dist  # noqa: E402

ARMS = ("plain", "standby", "standby+visual")


def spec_for(udd: Path, extension: str) -> LaunchSpec:
    return LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd), extension_dir=extension,
                      arm=Arm("h2"), origins=[], spki=[], host_rules="MAP *.test 127.0.0.1")


def launch(arm: str, scratch: Path) -> subprocess.Popen[bytes]:
    """Start one browser of ``arm``; its pid is its process group's."""
    if arm == "plain":
        udd = scratch / "profile"
        seed_preferences(udd)
        argv = [a for a in command_line(spec_for(udd, "")) if "extension" not in a]
        return subprocess.Popen(argv, env=scratch_env(os.environ, scratch / "xdg"),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    running = start_browser(spec_for(scratch, str(require_dist())), scratch=scratch,
                            db=scratch / "store.db", navigate=["https://a.test/"],
                            context={"load_id": "start-cpu"}, quiet_ms=200,
                            visual=arm.endswith("+visual"), standby=True, mark_loaded=True)
    return running.proc


def measure(arm: str, scratch: Path, settle: float, idle: float) -> tuple[dict[str, float], float]:
    """(CPU ms per process kind at ``settle`` s, CPU ms per second over the ``idle`` s after)."""
    proc = launch(arm, scratch)
    t0 = time.monotonic()
    sampler = Sampler(proc.pid)
    try:
        at: dict[str, float] = {}
        while time.monotonic() - t0 < settle + idle:
            cpu = sampler.sample()
            if not at and time.monotonic() - t0 >= settle:
                at = cpu
            time.sleep(0.05)
        end = sampler.sample()
    finally:
        stop(proc)
    return ({k: v * 1000 for k, v in at.items()},
            (sum(end.values()) - sum(at.values())) * 1000 / idle)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--settle", type=float, default=2.0,
                    help="seconds after the launch at which the start counts as done")
    ap.add_argument("--idle", type=float, default=2.0, help="seconds of waiting measured after it")
    args = ap.parse_args()
    starts: dict[str, list[dict[str, float]]] = {a: [] for a in ARMS}
    idles: dict[str, list[float]] = {a: [] for a in ARMS}
    with tempfile.TemporaryDirectory() as tmp:
        for r, arm in rotated(ARMS, args.rounds):
            cpu, rate = measure(arm, Path(tmp) / f"{arm}-{r}", args.settle, args.idle)
            starts[arm].append(cpu)
            idles[arm].append(rate)
            print(f"round {r + 1} {arm}: start {sum(cpu.values()):.0f} ms of CPU, then "
                  f"{rate:.0f} ms/s", file=sys.stderr, flush=True)
    cores = os.cpu_count() or 1
    print(f"CPU ms of a browser's start (median of {args.rounds} rounds; at {args.settle:g} s "
          f"after its launch), and per second while it waits after that")
    print("arm".ljust(16) + "".join(k.rjust(10) for k in (*KINDS, "start", "idle/s")))
    base = statistics.median(sum(x.values()) for x in starts["plain"])
    for arm in ARMS:
        med = {k: statistics.median(x[k] for x in starts[arm]) for k in KINDS}
        tot = [sum(x.values()) for x in starts[arm]]
        print(arm.ljust(16) + "".join(f"{med[k]:10.0f}" for k in KINDS) +
              f"{statistics.median(tot):10.0f}{statistics.median(idles[arm]):10.0f}"
              f"   (starts {min(tot):.0f}-{max(tot):.0f})")
    for arm in ARMS[1:]:
        tot = statistics.median(sum(x.values()) for x in starts[arm])
        print(f"{arm} / plain: x{tot / base:.2f}; on {cores} cores a campaign that starts this "
              f"browser per load, never beside a page, spends at least {tot / cores:.0f} ms per "
              f"load beyond its pages (plain Chromium's start alone: {base / cores:.0f} ms)")


if __name__ == "__main__":
    main()
