"""ECMP cross traffic (IFIP'18 Sec. III-C.1): N iperf3 TCP flows load one of the two equal-cost
paths, server to client, at the profile's share of that path's rate (adapter: runs iperf3)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from protolens.shaper.records import Profile
from protolens.testbed.run import in_ns
from protolens.testbed.topology import Topology, cross_ports


def start_cross_traffic(t: Topology, prof: Profile, run_dir: Path) -> list[int]:
    """Start the profile's cross-traffic flows (none without ECMP load); return their pids."""
    e = prof.ecmp
    if e is None or e.cross_traffic_load <= 0:
        return []
    per_flow = e.path_rate_bps * e.cross_traffic_load / e.cross_traffic_flows
    pids: list[int] = []
    log = open(run_dir / "iperf3.log", "ab")  # noqa: SIM115
    with log:
        pairs = cross_ports(t, e.cross_traffic_flows, e.congested_path)
        for _, sport in pairs:
            p = subprocess.Popen(in_ns(t.srv_ns, ["iperf3", "-s", "-B", t.cross_srv_ip,
                                                  "-p", str(sport)]),
                                 stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
            pids.append(p.pid)
        time.sleep(0.3)
        for cport, sport in pairs:
            p = subprocess.Popen(in_ns(t.cli_ns, [
                "iperf3", "-c", t.cross_srv_ip, "-B", t.cross_cli_ip, "--cport", str(cport),
                "-p", str(sport), "-R", "-b", str(int(per_flow)), "-t", "86400", "-i", "0"]),
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
            pids.append(p.pid)
    return pids
