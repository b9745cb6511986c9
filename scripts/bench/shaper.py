#!/usr/bin/env python3
"""Benchmark the packet shaper (not a test): target vs achieved RTT, rate and loss for wifi,
wifi-lossy and fiber, and the shaper's CPU share at 10 and 50 Mbit/s, printed as ratios.
Needs root; brings up its own testbed "plb" and removes it afterwards.

    .venv/bin/python scripts/bench/shaper.py [--json]
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from protolens.shaper import load_profile
from protolens.testbed import Testbed

NAME = "plb"


def ping_mean(tb: Testbed, n: int = 100) -> float:
    out = subprocess.run(tb.exec_argv(["ping", "-n", "-q", "-c", str(n), "-i", "0.02",
                                       tb.state.server_ip]), capture_output=True, text=True).stdout
    m = re.search(r"= [\d.]+/([\d.]+)/", out)
    return float(m.group(1)) if m else float("nan")


def iperf_server(tb: Testbed, port: int) -> subprocess.Popen[bytes]:
    p = subprocess.Popen(tb.server_argv(["iperf3", "-s", "-B", tb.state.server_ip, "-p",
                                         str(port)]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return p


def down_rate(tb: Testbed, seconds: float = 5.0, streams: int = 3) -> tuple[float, float]:
    """IP-level delivered rate (bit/s) in the middle of a saturating download, and the shaper's
    CPU share (0..1 of one core) over the same window."""
    srv = iperf_server(tb, 5300)
    cli = subprocess.Popen(tb.exec_argv(["iperf3", "-c", tb.state.server_ip, "-p", "5300", "-R",
                                         "-P", str(streams), "-t", str(seconds)]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        a, ca = tb.stats(), cpu_ticks(tb.state.pids["shaper"])
        time.sleep(seconds - 2.5)
        b, cb = tb.stats(), cpu_ticks(tb.state.pids["shaper"])
    finally:
        cli.wait(timeout=seconds + 20)
        srv.terminate()
        srv.wait()
    dt = (b["now_ns"] - a["now_ns"]) / 1e9
    by = sum(f["bytes_down"] for f in b["flows"]) - sum(f["bytes_down"] for f in a["flows"]
                                                         if any(g["client_port"] == f["client_port"]
                                                                for g in b["flows"]))
    return by * 8 / dt, (cb - ca) / 100 / dt


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime in clock ticks (100 Hz)


def udp_loss(tb: Testbed, packets: int = 10_000) -> float:
    srv = iperf_server(tb, 5301)
    try:
        p = subprocess.run(tb.exec_argv(["iperf3", "-c", tb.state.server_ip, "-p", "5301", "-u",
                                         "-l", "100", "-b", "3200000", "-k", str(packets), "-J"]),
                           capture_output=True, text=True, timeout=60)
    finally:
        srv.terminate()
        srv.wait()
    s = json.loads(p.stdout)["end"]["sum"]
    return float(s["lost_packets"]) / float(s["packets"])


def main() -> None:
    as_json = "--json" in sys.argv
    Testbed.down(NAME)
    tb = Testbed.up(name=NAME, profile="wifi", server_cc="cubic")
    rows: list[dict[str, Any]] = []
    try:
        for name in ("wifi", "wifi-lossy", "fiber"):
            prof = load_profile(name)
            tb.shape(prof)
            rtt_target = (prof.link.delay_up_ns + prof.link.delay_down_ns) / 1e6
            rtt = ping_mean(tb)
            tb.truth(reset=True)
            rate, _ = down_rate(tb)
            loss = udp_loss(tb)
            lat = tb.lateness()
            rows.append({"profile": name, "rtt_target_ms": rtt_target, "rtt_ms": round(rtt, 3),
                         "rtt_ratio": round(rtt / rtt_target, 4),
                         "rate_target_mbit": prof.link.rate_down_bps / 1e6,
                         "rate_mbit": round(rate / 1e6, 3),
                         "rate_ratio": round(rate / prof.link.rate_down_bps, 4),
                         "loss_target": prof.link.loss_up, "loss": round(loss, 4),
                         "lateness_p99_us": lat["p99_ns"] / 1e3,
                         "lateness_max_us": lat["max_ns"] / 1e3})
        with tempfile.TemporaryDirectory() as d:
            for mbit in (10, 50):
                f = Path(d) / f"r{mbit}.toml"
                f.write_text(f'name = "rate{mbit}"\n[link]\nrate_mbit = {mbit}\nrtt_ms = 20\n'
                             "buffer_bytes = 200000\n")
                tb.shape(str(f))
                rate, cpu = down_rate(tb, seconds=6)
                rows.append({"profile": f"rate{mbit}", "rate_target_mbit": mbit,
                             "rate_mbit": round(rate / 1e6, 3),
                             "rate_ratio": round(rate / (mbit * 1e6), 4),
                             "shaper_cpu_percent": round(cpu * 100, 1)})
    finally:
        Testbed.down(NAME)
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        print(" ".join(f"{k}={v}" for k, v in r.items()))
    print("median rtt ratio", statistics.median(r["rtt_ratio"] for r in rows if "rtt_ratio" in r))


if __name__ == "__main__":
    main()
