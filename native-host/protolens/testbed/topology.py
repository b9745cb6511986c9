"""Names and addresses of one testbed: three namespaces (client, router, server), two veth links,
addresses only inside them (198.18.0.0/15, RFC 2544 benchmarking space, never routed out of the
namespaces). Pure: everything is derived from the testbed name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from protolens.shaper.ecmp import ecmp_path

NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,7}$")
PREFIX_SUFFIXES = ("-cli", "-rtr", "-srv")
QUEUE_UP, QUEUE_DOWN = 0, 1
CROSS_PORT_BASE = 5201


def valid_name(name: str) -> bool:
    """1-8 lowercase letters/digits, starting with a letter: interface names stay <= 15 chars."""
    return bool(NAME_RE.match(name))


@dataclass(frozen=True)
class Topology:
    name: str

    @property
    def cli_ns(self) -> str:
        return f"{self.name}-cli"

    @property
    def rtr_ns(self) -> str:
        return f"{self.name}-rtr"

    @property
    def srv_ns(self) -> str:
        return f"{self.name}-srv"

    @property
    def namespaces(self) -> tuple[str, str, str]:
        return (self.cli_ns, self.rtr_ns, self.srv_ns)

    # veth ends: client <-> router, router <-> server
    @property
    def cli_if(self) -> str:
        return f"{self.name}-c0"

    @property
    def rtr_cli_if(self) -> str:
        return f"{self.name}-rc"

    @property
    def rtr_srv_if(self) -> str:
        return f"{self.name}-rs"

    @property
    def srv_if(self) -> str:
        return f"{self.name}-s0"

    cli_net = "198.18.1.0/24"
    srv_net = "198.18.2.0/24"
    cli_ip = "198.18.1.2"
    rtr_cli_ip = "198.18.1.1"
    rtr_srv_ip = "198.18.2.1"
    srv_ip = "198.18.2.2"
    cross_cli_ip = "198.18.1.10"
    """Extra client-side address that only cross traffic uses."""
    cross_srv_ip = "198.18.2.10"
    bbr_srv_ip = "198.18.2.3"
    """Second server address (``--bbr-host``): connections it serves use BBR through a policy
    route, whatever the namespace's server CC (CoNEXT'20's HTTPX: hosts behind different CCs)."""
    bbr_table = 100


def cross_ports(topo: Topology, flows: int, path: int) -> list[tuple[int, int]]:
    """(client port, server port) pairs whose flows hash onto ``path``."""
    out = []
    for i in range(flows):
        sport = CROSS_PORT_BASE + i
        cport = 41000 + 2 * i
        if ecmp_path(topo.cross_cli_ip, cport, topo.cross_srv_ip, sport) != path:
            cport += 1
        out.append((cport, sport))
    return out
