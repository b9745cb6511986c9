#!/usr/bin/env python3
"""The motivating experiment with plain HTTP clients (no browser): under wifi-lossy (2% loss)
and wifi, with a cubic server, one HTTP/1.1 connection fetching 2 MB vs six connections
fetching 333 KB each in parallel. Several repetitions, medians, printed as ratios.
Needs root; brings up its own testbed "plm".

    .venv/bin/python scripts/bench/motivation.py [--reps 5] [--server-cc cubic]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time

from protolens.testbed import Testbed

NAME = "plm"


def fetch(tb: Testbed, path: str, n: int) -> float:
    """Wall time until ``n`` parallel curl processes (one connection each) have fetched ``path``."""
    argv = tb.exec_argv(["curl", "-s", "--http1.1", "--cacert", tb.state.ca, "-o", "/dev/null",
                         f"https://a.test/_testbed/{path}"])
    t0 = time.monotonic()
    procs = [subprocess.Popen(argv) for _ in range(n)]
    if any(p.wait(timeout=300) != 0 for p in procs):
        raise RuntimeError("a download failed")
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--server-cc", default="cubic")
    args = ap.parse_args()
    Testbed.down(NAME)
    tb = Testbed.up(name=NAME, profile="wifi", server_cc=args.server_cc)
    try:
        for profile in ("wifi-lossy", "wifi"):
            tb.shape(profile)
            one: list[float] = []
            six: list[float] = []
            for _ in range(args.reps):  # interleaved, metrics flushed before every load
                tb.flush_tcp_metrics()
                one.append(fetch(tb, "2m.bin", 1))
                tb.flush_tcp_metrics()
                six.append(fetch(tb, "333k.bin", 6))
            m1, m6 = statistics.median(one), statistics.median(six)
            print(f"{profile:10s} server_cc={args.server_cc} reps={args.reps} "
                  f"1x2MB median {m1:.2f} s  6x333KB median {m6:.2f} s  ratio 1conn/6conn "
                  f"{m1 / m6:.2f}  (1x: {' '.join(f'{x:.2f}' for x in one)}; "
                  f"6x: {' '.join(f'{x:.2f}' for x in six)})")
    finally:
        Testbed.down(NAME)


if __name__ == "__main__":
    main()
