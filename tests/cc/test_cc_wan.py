"""The ``wan`` variant of the lab network, tested ONLY against a server in another namespace
that stands in for the internet (no test sends traffic off the machine): the stand-in's veth is
passed as the uplink, so NAT, shaping and the probe run as they would out of the default route,
and ``down`` must leave nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.run import protolens
from tests.testbed.conftest import lab_available, wan_traces

pytestmark = pytest.mark.netns
NAME, NET_NS, HOST_IF, NET_IF = "ccw", "ccinet", "ccin-h", "ccin-n"
SERVER = "198.18.6.2"


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=check).stdout


def traces() -> dict[str, object]:
    return wan_traces(NAME)


@pytest.fixture
def internet() -> Iterator[None]:
    """A namespace with the test server: 198.18.6.2 on a veth whose root end is the uplink."""
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    protolens("cc", "wan", "down", "--name", NAME, check=False)
    sh("ip", "netns", "del", NET_NS, check=False)
    sh("ip", "netns", "add", NET_NS)
    sh("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", NET_IF, "netns", NET_NS)
    sh("ip", "addr", "add", "198.18.6.1/24", "dev", HOST_IF)
    sh("ip", "link", "set", HOST_IF, "up")
    for argv in (["ip", "addr", "add", f"{SERVER}/24", "dev", NET_IF],
                 ["ip", "link", "set", NET_IF, "up"], ["ip", "link", "set", "lo", "up"],
                 ["ethtool", "-K", NET_IF, "tso", "off", "gso", "off", "gro", "off"],
                 ["sysctl", "-qw", "net.ipv4.tcp_congestion_control=reno"]):
        sh("ip", "netns", "exec", NET_NS, *argv)
    sh("ethtool", "-K", HOST_IF, "tso", "off", "gso", "off", "gro", "off")
    srv = subprocess.Popen(["ip", "netns", "exec", NET_NS, sys.executable,
                            str(Path(__file__).parent / "bad_server.py"), "8080"],
                           stdout=subprocess.PIPE, text=True)
    assert srv.stdout is not None and srv.stdout.readline().strip() == "ready"
    try:
        yield
    finally:
        srv.terminate()
        srv.wait(5)
        protolens("cc", "wan", "down", "--name", NAME, check=False)
        sh("ip", "netns", "del", NET_NS, check=False)


def test_wan_probe_through_nat_and_down_leaves_nothing(internet: None, tmp_path: Path) -> None:
    before = traces()
    up = protolens("cc", "wan", "up", "--name", NAME, "--uplink", HOST_IF, check=False)
    assert up.returncode == 0, up.stderr
    during = traces()
    assert len(during["rules"]) == 4 and during["netns"] == [f"{NAME}-cli", f"{NAME}-rtr"]
    assert during["ip_forward"] == "1\n"
    # NATed: the server sees the uplink's address, not the client namespace's 198.18.1.2
    head = sh("ip", "netns", "exec", f"{NAME}-cli", "curl", "-sS", "-I", "--max-time", "10",
              f"http://{SERVER}:8080/obj/1")
    assert "X-Peer: 198.18.6.1" in head
    db = tmp_path / "s.db"
    p = protolens("cc", "probe", "--wan", "--testbed", NAME, "--packet-bytes", "500", "--json",
                  f"http://{SERVER}:8080/obj/320000", db=db, check=False, timeout=120)
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["label"] == "loss-based", row["reason"]  # the stand-in server runs reno
    assert row["server_ip"] == SERVER and row["bytes"] == 320_000 and row["server_cc"] is None
    again = protolens("cc", "wan", "up", "--name", NAME, "--uplink", HOST_IF, check=False)
    assert again.returncode == 2 and "already up" in again.stderr
    down = protolens("cc", "wan", "down", "--name", NAME)
    assert "deleted namespace" in down.stdout
    assert traces() == before
    assert protolens("cc", "wan", "down", "--name", NAME).stdout == ""  # idempotent


def test_a_wan_network_whose_shaper_was_killed_is_brought_down_by_the_next_up(
        internet: None) -> None:
    from protolens.testbed import procs

    before = traces()
    up = protolens("cc", "wan", "up", "--name", NAME, "--uplink", HOST_IF, check=False)
    assert up.returncode == 0, up.stderr
    state = json.loads((Path("/run/protolens/testbed") / f"wan-{NAME}" / "state.json")
                       .read_text())
    assert procs.stop(state["shaper_pid"])
    other = NAME + "2"
    again = protolens("cc", "wan", "up", "--name", other, "--uplink", HOST_IF, check=False)
    try:
        assert again.returncode == 0, again.stderr
        assert f"brought down stale wan network '{NAME}'" in again.stderr
        assert f"{NAME}-cli" not in sh("ip", "netns", "list").split()
    finally:
        protolens("cc", "wan", "down", "--name", other, check=False)
    assert traces() == before
