"""The testbed's wiring: namespaces, veth links, addresses, routes and the NFQUEUE rules
(adapter: runs ``ip``, ``ethtool``, ``sysctl``, ``iptables``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from protolens.testbed.run import in_ns, run
from protolens.testbed.topology import QUEUE_DOWN, QUEUE_UP, Topology

ETC_NETNS = Path("/etc/netns")


def build_links(t: Topology, hosts: Sequence[str], server_cc: str,
                initcwnd: int | None, bbr_hosts: Sequence[str] = ()) -> None:
    """Namespaces, veth pairs (offloads off), addresses, routes, forwarding, server CC; with
    ``bbr_hosts`` a second server address whose connections use BBR (``bbr_route``)."""
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
    srv_ips = [t.srv_ip, t.cross_srv_ip, *([t.bbr_srv_ip] if bbr_hosts else [])]
    addrs = [(t.cli_ns, t.cli_if, [t.cli_ip, t.cross_cli_ip]),
             (t.rtr_ns, t.rtr_cli_if, [t.rtr_cli_ip]), (t.rtr_ns, t.rtr_srv_if, [t.rtr_srv_ip]),
             (t.srv_ns, t.srv_if, srv_ips)]
    for ns, ifname, ips in addrs:
        for ip in ips:
            run(["ip", "-n", ns, "addr", "add", f"{ip}/24", "dev", ifname])
        # Offloads off so the shaper sees wire-sized packets (docs/ARCHITECTURE.md).
        run(in_ns(ns, ["ethtool", "-K", ifname, "tso", "off", "gso", "off", "gro", "off"]))
        run(["ip", "-n", ns, "link", "set", ifname, "up"])
    run(["ip", "-n", t.cli_ns, "route", "add", "default", "via", t.rtr_cli_ip])
    # `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts: plain clients in the
    # client namespace (curl, httpx, aioquic) resolve the test names to the server.
    etc = ETC_NETNS / t.cli_ns
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "hosts").write_text(hosts_file(t, hosts, bbr_hosts))
    route = ["ip", "-n", t.srv_ns, "route", "add", "default", "via", t.rtr_srv_ip]
    if initcwnd:
        route += ["initcwnd", str(initcwnd)]
    run(route)
    if bbr_hosts:
        bbr_route(t, initcwnd)
    run(in_ns(t.rtr_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"]))
    cc = "cubic" if server_cc.startswith("cubic") else server_cc
    run(in_ns(t.srv_ns, ["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={cc}"]))

def hosts_file(t: Topology, hosts: Sequence[str], bbr_hosts: Sequence[str]) -> str:
    """/etc/hosts for the client namespace: ``bbr_hosts`` on the BBR address, the rest on the
    main server address."""
    rest = " ".join(h for h in hosts if h not in bbr_hosts)
    lines = ["127.0.0.1 localhost", f"{t.srv_ip} {rest}"]
    if bbr_hosts:
        lines.append(f"{t.bbr_srv_ip} {' '.join(bbr_hosts)}")
    return "\n".join(lines) + "\n"


def bbr_route(t: Topology, initcwnd: int | None) -> None:
    """Replies from the second address follow table ``bbr_table``, whose routes carry
    ``congctl bbr``: the kernel gives a passively opened socket the CC of the route its SYN-ACK
    takes (RTAX_CC_ALGO, tcp_ca_openreq_child), so caddy's connections to that address run BBR
    while the namespace default (the server CC) stays on the main address."""
    table = str(t.bbr_table)
    run(["ip", "-n", t.srv_ns, "rule", "add", "from", t.bbr_srv_ip, "table", table])
    run(["ip", "-n", t.srv_ns, "route", "add", t.srv_net, "dev", t.srv_if, "src", t.bbr_srv_ip,
         "table", table, "congctl", "bbr"])
    route = ["ip", "-n", t.srv_ns, "route", "add", "default", "via", t.rtr_srv_ip, "src",
             t.bbr_srv_ip, "table", table, "congctl", "bbr"]
    if initcwnd:
        route += ["initcwnd", str(initcwnd)]
    run(route)


def queue_rules(t: Topology) -> None:
    """Send forwarded packets of each direction to the shaper's queue (bypass if none)."""
    for ifname, q in ((t.rtr_cli_if, QUEUE_UP), (t.rtr_srv_if, QUEUE_DOWN)):
        run(in_ns(t.rtr_ns, ["iptables", "-w", "-A", "FORWARD", "-i", ifname, "-j",
                             "NFQUEUE", "--queue-num", str(q), "--queue-bypass"]))
