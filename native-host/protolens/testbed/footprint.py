"""What a network of each kind leaves on the machine, derived from its kind and name (pure).

Every shaped network (the testbed, the wan path) is a few namespaces behind the shaper plus,
for some kinds, pieces in the root namespace. ``lifecycle.py`` removes a network by its
footprint: from ``down``, from a crash (no state file: the footprint is derived from the name
alone) and from the stale-network reaper, which reads the kind from the state file rather than
guessing it from the run directory's name. A new kind of network is one more entry here and a
``lifecycle.Network`` subclass that builds it.
"""

from __future__ import annotations

from dataclasses import dataclass

from protolens.testbed.topology import Topology


@dataclass(frozen=True)
class Footprint:
    kind: str
    """``testbed``, ``wan``: written into the network's state file."""
    label: str
    """How messages name this kind (``testbed``, ``wan network``)."""
    name: str
    run_dir: str
    """Its directory under the run root, holding ``state.json``, sockets and logs."""
    namespaces: tuple[str, ...]
    """Created in this order; the first is the client namespace, the second the router."""
    metric_namespaces: tuple[str, ...]
    """Where TCP connections end, so where ``flush_tcp_metrics`` forgets cached ssthresh/RTT."""
    root_links: tuple[str, ...] = ()
    """Interfaces it adds to the root namespace."""
    root_routes: tuple[str, ...] = ()
    """Subnets it routes from the root namespace: two live networks may not share one."""
    rule_tag: str | None = None
    """Comment on every iptables rule it adds to the root namespace (found again after a
    crash)."""

    @property
    def host_user(self) -> str:
        """Its name in the record of host-wide settings (``hostcfg``)."""
        return self.run_dir


def testbed_footprint(name: str) -> Footprint:
    """Client, router and server namespaces; nothing in the root namespace."""
    t = Topology(name)
    return Footprint(kind="testbed", label="testbed", name=name, run_dir=name,
                     namespaces=t.namespaces, metric_namespaces=(t.cli_ns, t.srv_ns))


def wan_footprint(name: str) -> Footprint:
    """Client and router namespaces, a veth end and a route in the root namespace and NAT
    rules out of the uplink (``wan.py``); the servers are the internet's."""
    t = Topology(name)
    return Footprint(kind="wan", label="wan network", name=name, run_dir=f"wan-{name}",
                     namespaces=(t.cli_ns, t.rtr_ns), metric_namespaces=(t.cli_ns,),
                     root_links=(f"{name}-hw",), root_routes=(t.cli_net,),
                     rule_tag=f"protolens-wan-{name}")


KINDS = ("testbed", "wan")
"""Every kind of network, as its state file records it."""


def footprint(kind: str, name: str) -> Footprint:
    if kind == "wan":
        return wan_footprint(name)
    if kind == "testbed":
        return testbed_footprint(name)
    raise ValueError(f"unknown kind of network {kind!r} ({', '.join(KINDS)})")


def recorded_kind(state: dict[str, object]) -> str | None:
    """The kind a state file records; files written before the field was added are told apart
    by what they hold (only a wan network has an uplink). None for an unknown kind."""
    kind = state.get("kind")
    if kind is None:
        kind = "wan" if "uplink" in state else "testbed"
    return kind if isinstance(kind, str) and kind in KINDS else None


def recorded_pids(state: dict[str, object]) -> list[int]:
    """The long-running processes a state file records (``pids``; a wan network's
    ``shaper_pid``): when all of them are gone, the network's owner was killed."""
    pids = state.get("pids")
    out = [int(p) for p in pids.values()] if isinstance(pids, dict) else []
    shaper = state.get("shaper_pid")
    if isinstance(shaper, int):
        out.append(shaper)
    return out
