#!/usr/bin/env python3
"""Benchmark the packet shaper (not a test). Brings up its own testbed "plb", removes it after.

1. RTT, target vs measured, for fiber (5 ms) and wifi (50 ms): the shaper without and with the
   path-latency calibration taken at ``up`` (docs/TESTBED.md), interleaved rounds of pings,
   printed side by side with the ratio to the target, n and the spread.
2. Rate accuracy and the shaper's CPU share at 10 and 50 Mbit/s (IP bytes the shaper delivered
   in the middle of a saturating iperf3 download, per second, over the configured rate).
3. A rate sweep: the highest rate at which the delivered rate stays within 2% and the shaper's
   release lateness p99 under 1 ms.
The machine's load (load average, busy share of all cores) is printed with the results: on a
shared machine the figures move with it.

    flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/shaper.py [--rounds N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.shaper import load_profile  # noqa: E402
from protolens.testbed import Testbed  # noqa: E402
from scripts.devkit.proccpu import cpu_ticks  # noqa: E402

NAME = "plb"
SWEEP_MBIT = (50, 100, 200, 400, 700, 1000, 1500)


def ping_rtts(tb: Testbed, n: int = 100) -> list[float]:
    out = subprocess.run(tb.exec_argv(["ping", "-n", "-c", str(n), "-i", "0.02",
                                       tb.state.server_ip]), capture_output=True, text=True).stdout
    return [float(x) for x in re.findall(r"time=([\d.]+) ms", out)]


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies over all cores, from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def down_window(tb: Testbed, seconds: float, streams: int = 3) -> dict[str, float]:
    """Delivered IP rate (bit/s), shaper CPU share (of one core), lateness p99 (ns) over the
    middle of a saturating download, and how busy the whole machine was meanwhile."""
    srv = subprocess.Popen(tb.server_argv(["iperf3", "-s", "-1", "-B", tb.state.server_ip,
                                           "-p", "5300"]), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    cli = subprocess.Popen(tb.exec_argv(["iperf3", "-c", tb.state.server_ip, "-p", "5300", "-R",
                                         "-P", str(streams), "-t", str(seconds)]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = tb.state.pids["shaper"]
    try:
        time.sleep(1.5)
        a, ca, ma = tb.stats(reset=True), cpu_ticks(pid), machine_busy()
        time.sleep(seconds - 2.5)
        b, cb, mb = tb.stats(), cpu_ticks(pid), machine_busy()
    finally:
        cli.wait(timeout=seconds + 20)
        srv.wait(timeout=10)
    dt = (b["now_ns"] - a["now_ns"]) / 1e9
    return {"rate_bps": sum(f["bytes_down"] for f in b["flows"]) * 8 / dt,
            "cpu": (cb - ca) / 100 / dt, "lateness_p99_ns": b["lateness"]["p99_ns"],
            "machine_busy": (mb[0] - ma[0]) / max(1, mb[1] - ma[1])}


def rate_profile(d: Path, mbit: int, rtt_ms: float = 10) -> str:
    """A profile whose buffer holds at least one BDP, so TCP can keep the link busy."""
    buffer = max(200_000, int(mbit * 1e6 * rtt_ms / 1e3 / 8))
    f = Path(d) / f"r{mbit}.toml"
    f.write_text(f'name = "rate{mbit}"\n[link]\nrate_mbit = {mbit}\nrtt_ms = {rtt_ms}\n'
                 f"buffer_bytes = {buffer}\n")
    return str(f)


def spread(xs: list[float]) -> str:
    return f"{statistics.mean(xs):.3f} (median {statistics.median(xs):.3f}, " \
           f"sd {statistics.pstdev(xs):.3f}, min {min(xs):.3f}, max {max(xs):.3f})"


def rtt_rows(tb: Testbed, rounds: int) -> list[dict[str, Any]]:
    rows = []
    for name in ("fiber", "wifi"):
        prof = load_profile(name)
        target = (prof.link.delay_up_ns + prof.link.delay_down_ns) / 1e6
        arms: dict[str, list[float]] = {"before": [], "after": []}
        for r in range(rounds):  # interleaved, the arm order alternating per round
            for arm in (("before", "after") if r % 2 == 0 else ("after", "before")):
                tb.shape(prof, calibrated=arm == "after")
                time.sleep(0.2)
                rtts = ping_rtts(tb)
                arms[arm].append(statistics.mean(rtts))
        b, a = statistics.mean(arms["before"]), statistics.mean(arms["after"])
        rows.append({"profile": name, "target_ms": target, "rounds": rounds,
                     "pings_per_round": 100,
                     "rtt_before_ms": round(b, 3), "ratio_before": round(b / target, 4),
                     "rtt_after_ms": round(a, 3), "ratio_after": round(a / target, 4),
                     "before_round_means": [round(x, 3) for x in arms["before"]],
                     "after_round_means": [round(x, 3) for x in arms["after"]],
                     "spread_before": spread(arms["before"]),
                     "spread_after": spread(arms["after"])})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    Testbed.down(NAME)
    tb = Testbed.up(name=NAME, profile="wifi", server_cc="cubic")
    out: dict[str, Any] = {"load_avg_before": load_before, "calibration": tb.state.calibration}
    try:
        out["rtt"] = rtt_rows(tb, args.rounds)
        with tempfile.TemporaryDirectory() as d:
            out["rate"] = []
            for mbit in (10, 50):
                tb.shape(rate_profile(Path(d), mbit, rtt_ms=20))
                w = down_window(tb, seconds=6)
                bps = w["rate_bps"]
                out["rate"].append({"rate_mbit": mbit, "measured_mbit": round(bps / 1e6, 3),
                                    "ratio": round(bps / (mbit * 1e6), 4),
                                    "shaper_cpu_percent": round(w["cpu"] * 100, 1),
                                    "lateness_p99_us": w["lateness_p99_ns"] / 1e3,
                                    "machine_busy_percent": round(w["machine_busy"] * 100)})
            out["sweep"] = []
            fails = 0
            for mbit in SWEEP_MBIT:
                tb.shape(rate_profile(Path(d), mbit))
                w = down_window(tb, seconds=5, streams=4)
                ok = abs(w["rate_bps"] / (mbit * 1e6) - 1) <= 0.02 and w["lateness_p99_ns"] < 1e6
                ratio = round(w["rate_bps"] / (mbit * 1e6), 4)
                out["sweep"].append({"rate_mbit": mbit, "ratio": ratio,
                                     "lateness_p99_us": w["lateness_p99_ns"] / 1e3,
                                     "shaper_cpu_percent": round(w["cpu"] * 100, 1),
                                     "machine_busy_percent": round(w["machine_busy"] * 100),
                                     "holds": ok})
                fails = 0 if ok else fails + 1
                if fails == 2:  # two rates in a row that do not hold: stop
                    break
    finally:
        Testbed.down(NAME)
    held = [r["rate_mbit"] for r in out["sweep"] if r["holds"]]
    out["highest_rate_holding_mbit"] = max(held) if held else None
    out["load_avg_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(out, indent=2))
        return
    cal = out["calibration"] or {}
    print(f"machine: {os.cpu_count()} cores, load average before {load_before[0]:.2f}, "
          f"after {out['load_avg_after'][0]:.2f}")
    for p in cal.get("probes", []):
        print(f"calibration at up, probe RTT {p['rtt_ns'] / 1e6:g} ms: path RTT "
              f"{p['path_rtt_ns'] / 1e3:.0f} us (median {p['median_rtt_ns'] / 1e6:.3f} ms, mean "
              f"{p['mean_rtt_ns'] / 1e6:.3f} ms, p90 {p['p90_rtt_ns'] / 1e6:.3f} ms, n "
              f"{p['replies']})")
    print("\nRTT (ping mean per round, 100 pings each; before = uncalibrated, after = calibrated)")
    print(f"{'profile':8} {'target':>7} {'before':>8} {'ratio':>7} {'after':>8} {'ratio':>7}  n")
    for r in out["rtt"]:
        print(f"{r['profile']:8} {r['target_ms']:7.2f} {r['rtt_before_ms']:8.3f} "
              f"{r['ratio_before']:7.4f} {r['rtt_after_ms']:8.3f} {r['ratio_after']:7.4f}  "
              f"{r['rounds']}x100")
        print(f"         before {r['spread_before']}\n         after  {r['spread_after']}")
    print("\nrate and CPU (IP bytes delivered per s / configured rate)")
    for r in out["rate"]:
        print(f"  {r['rate_mbit']:5} Mbit/s: measured {r['measured_mbit']:.3f}, ratio "
              f"{r['ratio']:.4f}, shaper CPU {r['shaper_cpu_percent']}% of a core, lateness p99 "
              f"{r['lateness_p99_us']:.0f} us, machine {r['machine_busy_percent']}% busy")
    print("\nrate sweep (holds = within 2% and lateness p99 < 1 ms)")
    for r in out["sweep"]:
        print(f"  {r['rate_mbit']:5} Mbit/s: ratio {r['ratio']:.4f}, lateness p99 "
              f"{r['lateness_p99_us']:.0f} us, shaper CPU {r['shaper_cpu_percent']}%, machine "
              f"{r['machine_busy_percent']}% busy, {'holds' if r['holds'] else 'FAILS'}")
    print(f"highest rate that holds: {out['highest_rate_holding_mbit']} Mbit/s")


if __name__ == "__main__":
    main()
