"""The network side of a fairness run (adapter): side b's second server address, the header-only
capture in the router namespace, and the bulk-download competitor. ``fairness_run.py`` runs the
repetitions."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protolens.lab.testbed_network import TestbedNetwork

SECOND_SERVER_OFFSET = 4
"""Side b's server address: host .4 of the server subnet (.2 is the server, .3 the BBR address,
.10 cross traffic: testbed/topology.py)."""


def _second_ip(server_ip: str) -> str:
    head = server_ip.rsplit(".", 1)[0]
    return f"{head}.{SECOND_SERVER_OFFSET}"


def _ns_run(argv: list[str]) -> None:
    subprocess.run(argv, check=False, capture_output=True, timeout=20)


@contextlib.contextmanager
def second_address(network: TestbedNetwork) -> Any:
    """A second address of the server for side b, NATed to the first inside the server
    namespace: caddy sees one address, the router (shaper, tcpdump) sees two. A plain alias is
    not enough: quic-go answers from the primary address on its wildcard UDP socket (Chromium
    then fails with ERR_QUIC_PROTOCOL_ERROR); conntrack's DNAT puts the reply's source back."""
    topo, tb = network.testbed.topo, network.testbed
    ip, primary = _second_ip(tb.state.server_ip), tb.state.server_ip
    addr = ["ip", "-n", topo.srv_ns, "addr"]
    nat = ["ip", "netns", "exec", topo.srv_ns, "iptables", "-t", "nat"]
    rule = ["PREROUTING", "-d", ip, "-j", "DNAT", "--to-destination", primary]
    _ns_run([*nat, "-D", *rule])  # a crashed earlier run
    _ns_run([*addr, "del", f"{ip}/24", "dev", topo.srv_if])
    subprocess.run([*addr, "add", f"{ip}/24", "dev", topo.srv_if], check=True,
                   capture_output=True, timeout=20)
    subprocess.run([*nat, "-A", *rule], check=True, capture_output=True, timeout=20)
    try:
        yield ip
    finally:
        _ns_run([*nat, "-D", *rule])
        _ns_run([*addr, "del", f"{ip}/24", "dev", topo.srv_if])


@contextlib.contextmanager
def capture(network: TestbedNetwork, path: Path) -> Any:
    """tcpdump in the router namespace on its client-side link: headers of every IPv4 packet
    from the server subnet, written as it goes (``-U``)."""
    topo = network.testbed.topo
    argv = ["ip", "netns", "exec", topo.rtr_ns, "tcpdump", "--immediate-mode", "-i",
            topo.rtr_cli_if, "-s", "96",
            "-n", "-U", "-w", str(path), "ip and src net " + topo.srv_net]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    deadline = time.monotonic() + 10
    line = b""
    while time.monotonic() < deadline and b"listening on" not in line:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            raise RuntimeError("tcpdump did not start in the router namespace")
    try:
        yield path
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def bulk(network: TestbedNetwork, urls: Sequence[str], ip: str, start_at_ms: float | None = None
         ) -> tuple[bool, str | None, float]:
    """curl over HTTP/1.1 downloading the page's objects one after the other (one connection
    per host): a non-browser competitor, started at ``start_at_ms`` (epoch ms) when given."""
    hosts = sorted({u.split("://", 1)[1].split("/", 1)[0].split(":", 1)[0] for u in urls})
    argv = ["curl", "-sk", "--http1.1", "--fail"]
    for host in hosts:
        argv += ["--resolve", f"{host}:443:{ip}"]
    for url in urls:
        argv += ["-o", "/dev/null", url]
    argv = network.testbed.exec_argv(argv)
    if start_at_ms is not None:
        time.sleep(max(0.0, start_at_ms / 1000 - time.time()))
    started = time.monotonic()
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    wall = time.monotonic() - started
    return res.returncode == 0, (None if res.returncode == 0 else
                                 f"curl exited {res.returncode}: {res.stderr.strip()[:200]}"), wall
