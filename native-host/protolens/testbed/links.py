"""The testbed's wiring: namespaces, veth links, addresses, routes and the NFQUEUE rules
(adapter: runs ``ip``, ``ethtool``, ``sysctl``, ``iptables``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protolens.testbed.run import in_ns, run
from protolens.testbed.topology import QUEUE_DOWN, QUEUE_UP, Topology

ETC_NETNS = Path("/etc/netns")


def build_links(t: Topology, hosts: Sequence[str], server_cc: str,
                initcwnd: int | None) -> None:
    """Namespaces, veth pairs (offloads off), addresses, routes, forwarding, server CC."""
    for ns in t.namespaces:
        run(["ip", "netns", "add", ns])
    run(["ip", "-n", t.rtr_ns, "link", "add", t.rtr_cli_if, "type", "veth", "peer", "name",
         t.cli_if, "netns", t.cli_ns])
    run(["ip", "-n", t.rtr_ns, "link", "add", t.rtr_srv_if, "type", "veth", "peer", "name",
         t.srv_if, "netns", t.srv_ns])
    for ns in t.namespaces:
        for key in ("all", "default"):
            run(in_ns(ns, ["sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"]),
                check=False)
        run(["ip", "-n", ns, "link", "set", "lo", "up"])
    addrs = [(t.cli_ns, t.cli_if, [t.cli_ip, t.cross_cli_ip]),
             (t.rtr_ns, t.rtr_cli_if, [t.rtr_cli_ip]), (t.rtr_ns, t.rtr_srv_if, [t.rtr_srv_ip]),
             (t.srv_ns, t.srv_if, [t.srv_ip, t.cross_srv_ip])]
    for ns, ifname, ips in addrs:
        for ip in ips:
            run(["ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifname])
        # Offloads off so the shaper sees wire-sized packets (ARCHITECTURE.md).
        run(in_ns(ns, ["ethtool", "-K", ifname, "tso", "off", "gso", "off", "gro", "off"]))
        run(["ip", "-n", ns, "link", "set", ifname, "up"])
    run(["ip", "-n", t.cli_ns, "route", "add", "default", "via", t.rtr_cli_ip])
    # `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts: plain clients in the
    # client namespace (curl, httpx, aioquic) resolve the test names to the server.
    etc = ETC_NETNS / t.cli_ns
    etc.mkdir(parents=True, exist_ok=True)
    names = " ".join(hosts)
    (etc / "hosts").write_text(f"127.0.0.1 localhost\n{t.srv_ip} {names}\n")
    route = ["ip", "-n", t.srv_ns, "route", "add", "default", "via", t.rtr_srv_ip]
    if initcwnd:
        route += ["initcwnd", str(initcwnd)]
    run(route)
    run(in_ns(t.rtr_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"]))
    cc = "cubic" if server_cc.startswith("cubic") else server_cc
    run(in_ns(t.srv_ns, ["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cc}"]))

def queue_rules(t: Topology) -> None:
    """Send forwarded packets of each direction to the shaper's queue (bypass if none)."""
    for ifname, q in ((t.rtr_cli_if, QUEUE_UP), (t.rtr_srv_if, QUEUE_DOWN)):
        run(in_ns(t.rtr_ns, ["iptables", "-w", "-A", "FORWARD", "-i", ifname, "-j",
                             "NFQUEUE", "--queue-num", str(q), "--queue-bypass"]))
