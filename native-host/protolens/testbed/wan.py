"""The wan path (adapter): a client namespace whose traffic goes through the shaper in a router
namespace and is NATed out of the machine's default route, so real sites can be reached under a
shaped link (``cc probe --wan`` fingerprints their servers). Its lifecycle is
``lifecycle.Network``'s; this module builds the topology.

    <name>-cli 198.18.1.2 --veth-- 198.18.1.1 <name>-rtr (shaper) 198.18.5.2 --veth--
    198.18.5.1 root namespace --MASQUERADE--> uplink (the default route's device)

In the root namespace it adds only: one veth end with a route to the client subnet through it,
four iptables rules tagged ``protolens-wan-<name>`` (one MASQUERADE; FORWARD: accept to and
from the uplink, drop the client's traffic to anywhere else) and
``net.ipv4.ip_forward = 1`` (recorded first and restored by the last ``down``, testbed/hostcfg).
``down`` removes all of it, also after a crash (state file, then discovery by name and tag)."""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Self

from protolens.shaper.catalogue import load_profile
from protolens.shaper.config import shaper_config
from protolens.shaper.control import ShaperError
from protolens.shaper.profile import ProfileError
from protolens.shaper.records import Profile
from protolens.testbed import hostcfg, procs
from protolens.testbed.lifecycle import Network
from protolens.testbed.links import ETC_NETNS
from protolens.testbed.run import TestbedError, in_ns, run
from protolens.testbed.topology import QUEUE_DOWN, QUEUE_UP, valid_name

IP_FORWARD = "/proc/sys/net/ipv4/ip_forward"
RTR_WAN_IP, HOST_WAN_IP = "198.18.5.2", "198.18.5.1"


@dataclass(frozen=True)
class WanState:
    name: str
    uplink: str
    run_dir: str
    profile_path: str
    rules: list[list[str]] = field(default_factory=list)
    """Root-namespace iptables rules as ``[table, chain, *spec]``, deleted by ``down``."""
    shaper_pid: int | None = None
    kind: str = "wan"
    profile: str = "clean"
    """The name of the profile the shaper runs."""
    resolvers: list[str] = field(default_factory=list)
    """The name servers the client namespace asks (its ``/etc/netns/<cli>/resolv.conf``); empty:
    none reachable from it, names do not resolve there."""

    def pid(self, role: str) -> int | None:
        return self.shaper_pid if role == "shaper" else None

    def with_pid(self, role: str, pid: int) -> Self:
        if role != "shaper":
            raise ValueError(f"a wan network runs no {role}")
        return replace(self, shaper_pid=pid)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def default_uplink() -> str:
    words = run(["ip", "-4", "route", "show", "default"]).split()
    if "dev" not in words:
        raise TestbedError("no default route: nothing to NAT the wan network out of")
    return words[words.index("dev") + 1]


class WanNetwork(Network[WanState]):
    """A wan network that is up."""

    kind = "wan"
    up_hint = "protolens cc wan up --name {name}"
    down_hint = "protolens cc wan down --name {name}"

    @classmethod
    def read_state(cls, text: str) -> WanState:
        return WanState(**json.loads(text))

    @classmethod
    def up(cls, name: str = "pl", uplink: str | None = None,
           env: Mapping[str, str] | None = None,
           resolvers: Sequence[str] = ()) -> WanNetwork:
        """Bring it up; ``resolvers``: the name servers the client namespace asks (default: the
        host's, when one is reachable from a namespace)."""
        env = dict(os.environ) if env is None else env
        if not valid_name(name):
            raise TestbedError(f"bad name '{name}': 1-8 lowercase letters or digits")
        bad = [r for r in resolvers if not _is_address(r)]
        if bad:
            raise TestbedError(f"--resolver {bad[0]}: not an IP address")
        clean, uplink = load_profile("clean"), uplink or default_uplink()
        resolv = resolv_conf(resolvers, HOST_RESOLV_CONFS)
        wn = cls._claim(name, env, lambda rd: WanState(
            name, uplink, str(rd), clean.path,
            resolvers=nameservers(resolv) if resolv else []))

        def build() -> None:
            wn._build()
            wn._load_shaper(shaper_config(clean))

        wn._build_or_down(build)
        return wn

    @classmethod
    def load(cls, name: str = "pl", env: Mapping[str, str] | None = None) -> Self:
        wn = super().load(name, env)
        if wn.state.shaper_pid is None or not procs.alive(wn.state.shaper_pid):
            raise TestbedError(f"wan network '{name}': shaper not running")
        return wn

    def shape(self, profile: str | Profile) -> Profile:
        """Switch the shaper to ``profile`` now (its schedule restarts)."""
        try:
            prof = profile if isinstance(profile, Profile) else load_profile(profile)
            self._load_shaper(shaper_config(prof))
        except (ShaperError, ProfileError) as exc:
            raise TestbedError(str(exc)) from None
        restorable = not prof.path.startswith("<")  # an in-memory one has no path to reload
        self.state = replace(self.state, profile=prof.name,
                             profile_path=prof.path if restorable else self.state.profile_path)
        self._save()
        return prof

    # ---- internals ----
    def _build(self) -> None:
        t, name = self.topo, self.state.name
        rw, (hw,) = f"{name}-rw", self.footprint.root_links
        for ns in (t.cli_ns, t.rtr_ns):
            run(["ip", "netns", "add", ns])
            # IPv4 only, as the testbed: the NAT is IPv4, and an IPv6 link-local address that
            # leaves DAD a second after the link comes up is an address change to Chromium's
            # NetworkChangeNotifier, which fails the first load's requests with
            # ERR_NETWORK_CHANGED (seen on the first load of a fresh wan network)
            for key in ("all", "default"):
                run(in_ns(ns, ["sysctl", "-qw", f"net.ipv6.conf.{key}.disable_ipv6=1"]),
                    check=False)
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
        run(["ip", "-n", t.rtr_ns, "link", "add", t.rtr_cli_if, "type", "veth", "peer", "name",
             t.cli_if, "netns", t.cli_ns])
        run(["ip", "-n", t.rtr_ns, "link", "add", rw, "type", "veth", "peer", "name", hw,
             "netns", "1"])
        for ns, ifname, ip in ((t.cli_ns, t.cli_if, f"{t.cli_ip}/24"),
                               (t.rtr_ns, t.rtr_cli_if, f"{t.rtr_cli_ip}/24"),
                               (t.rtr_ns, rw, f"{RTR_WAN_IP}/30")):
            run(["ip", "-n", ns, "addr", "add", ip, "dev", ifname])
            run(in_ns(ns, ["ethtool", "-K", ifname, "tso", "off", "gso", "off", "gro", "off"]))
            run(["ip", "-n", ns, "link", "set", ifname, "up"])
        run(["ip", "addr", "add", f"{HOST_WAN_IP}/30", "dev", hw])
        run(["ethtool", "-K", hw, "tso", "off", "gso", "off", "gro", "off"])
        run(["ip", "link", "set", hw, "up"])
        run(["ip", "route", "add", t.cli_net, "via", RTR_WAN_IP, "dev", hw])
        run(["ip", "-n", t.cli_ns, "route", "add", "default", "via", t.rtr_cli_ip])
        run(["ip", "-n", t.rtr_ns, "route", "add", "default", "via", HOST_WAN_IP])
        run(in_ns(t.rtr_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"]))
        for ifname, q in ((t.rtr_cli_if, QUEUE_UP), (rw, QUEUE_DOWN)):
            run(in_ns(t.rtr_ns, ["iptables", "-w", "-A", "FORWARD", "-i", ifname, "-j",
                                 "NFQUEUE", "--queue-num", str(q), "--queue-bypass"]))
        if self.state.resolvers:
            # ``ip netns exec`` bind-mounts this over /etc/resolv.conf (ip-netns(8)): the
            # browser's resolver and getaddrinfo in the namespace both read it
            (ETC_NETNS / t.cli_ns).mkdir(parents=True, exist_ok=True)
            (ETC_NETNS / t.cli_ns / "resolv.conf").write_text(
                "".join(f"nameserver {r}\n" for r in self.state.resolvers))
        hostcfg.change(self.root, self.footprint.host_user, IP_FORWARD, "1", exclusive=False)
        up, tag = self.state.uplink, ["-m", "comment", "--comment", str(self.footprint.rule_tag)]
        rules = [["nat", "POSTROUTING", "-s", t.cli_net, "-o", up, *tag, "-j", "MASQUERADE"],
                 ["filter", "FORWARD", "-i", hw, "-o", up, *tag, "-j", "ACCEPT"],
                 ["filter", "FORWARD", "-i", up, "-o", hw, "-m", "conntrack", "--ctstate",
                  "ESTABLISHED,RELATED", *tag, "-j", "ACCEPT"],
                 # the client namespace leaves through the uplink only (inserted last: first)
                 ["filter", "FORWARD", "-i", hw, "!", "-o", up, *tag, "-j", "DROP"]]
        for table, chain, *spec in rules:
            self.state = replace(self.state, rules=[*self.state.rules, [table, chain, *spec]])
            self._save()  # recorded before it exists: down never misses one
            verb = "-A" if table == "nat" else "-I"
            run(["iptables", "-w", "-t", table, verb, chain, *spec])


HOST_RESOLV_CONFS = (Path("/etc/resolv.conf"), Path("/run/systemd/resolve/resolv.conf"))
"""Where the host's name servers are listed: the second is systemd-resolved's list of the
servers behind its 127.0.0.53 stub (systemd-resolved.service(8)), which a namespace cannot
reach."""


def nameservers(text: str) -> list[str]:
    """The ``nameserver`` addresses of a resolv.conf (resolv.conf(5)) that a namespace can
    reach: not loopback (a 127.0.0.x stub listens in the root namespace only)."""
    out = []
    for line in text.splitlines():
        words = line.split()
        if len(words) > 1 and words[0] == "nameserver" and _is_address(words[1]) \
                and not ipaddress.ip_address(words[1].split("%")[0]).is_loopback:
            out.append(words[1])
    return out


def resolv_conf(resolvers: Sequence[str], candidates: Sequence[Path]) -> str | None:
    """The resolver list for the client namespace: ``resolvers`` if given, else the first of
    the host's files that names a server reachable from a namespace; None if there is none."""
    if resolvers:
        return "".join(f"nameserver {r}\n" for r in resolvers)
    for path in candidates:
        try:
            text = path.read_text()
        except OSError:
            continue
        if nameservers(text):
            return text
    return None


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return False
    return True
