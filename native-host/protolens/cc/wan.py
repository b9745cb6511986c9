"""The ``wan`` variant of the lab network (adapter; issue 9 item 3): a client namespace whose
traffic goes through the shaper in a router namespace and is NATed out of the machine's default
route, so ``cc probe --wan`` can fingerprint real sites over the user's own network.

    <name>-cli 198.18.1.2 --veth-- 198.18.1.1 <name>-rtr (shaper) 198.18.5.2 --veth--
    198.18.5.1 root namespace --MASQUERADE--> uplink (the default route's device)

In the root namespace it adds only: one veth end with a route to the client subnet through it,
four iptables rules tagged ``protolens-wan-<name>`` (one MASQUERADE; FORWARD: accept to and
from the uplink, drop the client's traffic to anywhere else) and
``net.ipv4.ip_forward = 1`` (recorded first and restored by the last ``down``, testbed/hostcfg).
``down`` removes all of it, also after a crash (state file, then discovery by name and tag)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from protolens.shaper.catalogue import load_profile
from protolens.shaper.config import shaper_config
from protolens.shaper.control import ShaperClient, ShaperError, start_shaper
from protolens.shaper.profile import ProfileError
from protolens.shaper.records import Profile
from protolens.testbed import Testbed, hostcfg, procs
from protolens.testbed.links import ETC_NETNS
from protolens.testbed.run import TestbedError, in_ns, run
from protolens.testbed.spec import run_root
from protolens.testbed.topology import QUEUE_DOWN, QUEUE_UP, Topology, valid_name

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


def _ifs(name: str) -> tuple[str, str]:
    return f"{name}-rw", f"{name}-hw"


def _tag(name: str) -> list[str]:
    return ["-m", "comment", "--comment", f"protolens-wan-{name}"]


def default_uplink() -> str:
    words = run(["ip", "-4", "route", "show", "default"]).split()
    if "dev" not in words:
        raise TestbedError("no default route: nothing to NAT the wan network out of")
    return words[words.index("dev") + 1]


class WanPath:
    """A probe path through the wan network (``cc.probe.ProbePath``)."""

    def __init__(self, state: WanState) -> None:
        self.state = state
        self.topo = Topology(state.name)
        self.reaped: list[str] = []

    @staticmethod
    def _dir(name: str, env: Mapping[str, str]) -> Path:
        return run_root(env) / f"wan-{name}"

    @classmethod
    def up(cls, name: str = "pl", uplink: str | None = None,
           env: Mapping[str, str] | None = None) -> WanPath:
        env = dict(os.environ) if env is None else env
        if not valid_name(name):
            raise TestbedError(f"bad name '{name}': 1-8 lowercase letters or digits")
        topo = Topology(name)
        rd = cls._dir(name, env)
        if rd.exists() or any(ns in procs.netns_list() for ns in topo.namespaces):
            raise TestbedError(f"'{name}' is already up (protolens cc wan down --name {name})")
        reaped = Testbed.reap_stale(env) + cls._reap_stale(env)
        others = [p.name for p in run_root(env).glob("wan-*") if p.is_dir()]
        if others:
            raise TestbedError(f"another wan network is up ({others[0]}): one at a time, since "
                               "they share the client subnet")
        uplink = uplink or default_uplink()
        rd.mkdir(parents=True)
        clean = load_profile("clean")
        st = WanState(name, uplink, str(rd), clean.path)
        wp = cls(st)
        wp.reaped = reaped
        wp._save()
        try:
            wp._build()
            wp._start_shaper(clean)
        except BaseException:
            cls.down(name, env)
            raise
        return wp

    @classmethod
    def _reap_stale(cls, env: Mapping[str, str]) -> list[str]:
        """Bring down wan networks whose shaper is gone (their owner was killed)."""
        done = []
        for p in sorted(run_root(env).glob("wan-*/state.json")):
            try:
                pid = json.loads(p.read_text()).get("shaper_pid")
            except (OSError, ValueError):
                continue
            if pid and not procs.alive(pid):
                name = p.parent.name.removeprefix("wan-")
                cls.down(name, env)
                done.append(f"brought down stale wan network '{name}' (its shaper was gone)")
        return done

    @classmethod
    def load(cls, name: str = "pl", env: Mapping[str, str] | None = None) -> WanPath:
        env = dict(os.environ) if env is None else env
        p = cls._dir(name, env) / "state.json"
        if not p.exists():
            raise TestbedError(f"wan network '{name}' is not up (protolens cc wan up --name "
                               f"{name})")
        wp = cls(WanState(**json.loads(p.read_text())))
        if wp.state.shaper_pid is None or not procs.alive(wp.state.shaper_pid):
            raise TestbedError(f"wan network '{name}': shaper not running")
        return wp

    @classmethod
    def down(cls, name: str = "pl", env: Mapping[str, str] | None = None) -> list[str]:
        env = dict(os.environ) if env is None else env
        rd, topo, done = cls._dir(name, env), Topology(name), []
        st = rd / "state.json"
        rules: list[list[str]] = []
        if st.exists():
            state = WanState(**json.loads(st.read_text()))
            rules = state.rules
            if state.shaper_pid and procs.stop(state.shaper_pid):
                done.append(f"stopped shaper {state.shaper_pid}")
        rules += _tagged_rules(name)
        for table, chain, *spec in rules:  # a rule listed twice fails quietly the second time
            run(["iptables", "-w", "-t", table, "-D", chain, *spec], check=False)
        if rules:
            done.append(f"removed iptables rules tagged protolens-wan-{name}")
        hw = _ifs(name)[1]
        if run(["ip", "-br", "link", "show", hw], check=False):
            # deleting the namespace removes its veth peer only later (netns cleanup runs
            # asynchronously in the kernel): remove the root end, and its route, now
            run(["ip", "link", "del", hw], check=False)
            done.append(f"deleted interface {hw}")
        for ns in (topo.cli_ns, topo.rtr_ns):
            if ns in procs.netns_list():
                for word in run(["ip", "netns", "pids", ns], check=False).split():
                    procs.stop(int(word))
                run(["ip", "netns", "del", ns], check=False)
                done.append(f"deleted namespace {ns}")
            if (ETC_NETNS / ns).exists():
                shutil.rmtree(ETC_NETNS / ns)
                done.append(f"removed {ETC_NETNS / ns}")
        done += [f"restored {r}" for r in hostcfg.release(run_root(env), f"wan-{name}")]
        if rd.exists():
            shutil.rmtree(rd)
            done.append(f"removed {rd}")
        return done

    # ---- ProbePath ----
    def exec_argv(self, cmd: Sequence[str] = ()) -> list[str]:
        return in_ns(self.topo.cli_ns, cmd)

    def shaper(self) -> ShaperClient:
        return ShaperClient(Path(self.state.run_dir) / "shaper.sock")

    def shape(self, profile: str | Profile) -> Profile:
        try:
            prof = profile if isinstance(profile, Profile) else load_profile(profile)
            conf = Path(self.state.run_dir) / "shaper.conf"
            conf.write_text(shaper_config(prof))
            self.shaper().load(conf)
        except (ShaperError, ProfileError) as exc:
            raise TestbedError(str(exc)) from None
        if not prof.path.startswith("<"):
            self.state = WanState(**{**asdict(self.state), "profile_path": prof.path})
            self._save()
        return prof

    def set_advmss(self, mss: int | None) -> None:
        argv = ["ip", "-n", self.topo.cli_ns, "route", "change", "default", "via",
                self.topo.rtr_cli_ip]
        run(argv + (["advmss", str(mss)] if mss else []))

    def flush_tcp_metrics(self) -> None:
        run(["ip", "-n", self.topo.cli_ns, "tcp_metrics", "flush", "all"])

    def current_profile(self) -> str:
        return self.state.profile_path

    def ca(self) -> str | None:
        return None  # real sites: the system's CAs

    def server_cc(self, ip: str) -> str | None:
        return None  # unknown off the testbed

    # ---- internals ----
    def _save(self) -> None:
        p = Path(self.state.run_dir) / "state.json"
        p.write_text(json.dumps(asdict(self.state), indent=2))

    def _build(self) -> None:
        t, (rw, hw) = self.topo, _ifs(self.state.name)
        for ns in (t.cli_ns, t.rtr_ns):
            run(["ip", "netns", "add", ns])
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
        resolv = _resolv_conf(Path("/etc/resolv.conf"))
        if resolv:
            (ETC_NETNS / t.cli_ns).mkdir(parents=True, exist_ok=True)
            (ETC_NETNS / t.cli_ns / "resolv.conf").write_text(resolv)
        hostcfg.change(run_root(os.environ), f"wan-{self.state.name}", IP_FORWARD, "1",
                       exclusive=False)
        up = self.state.uplink
        rules = [["nat", "POSTROUTING", "-s", t.cli_net, "-o", up, *_tag(self.state.name),
                  "-j", "MASQUERADE"],
                 ["filter", "FORWARD", "-i", hw, "-o", up, *_tag(self.state.name),
                  "-j", "ACCEPT"],
                 ["filter", "FORWARD", "-i", up, "-o", hw, "-m", "conntrack", "--ctstate",
                  "ESTABLISHED,RELATED", *_tag(self.state.name), "-j", "ACCEPT"],
                 # the client namespace leaves through the uplink only (inserted last: first)
                 ["filter", "FORWARD", "-i", hw, "!", "-o", up, *_tag(self.state.name),
                  "-j", "DROP"]]
        for table, chain, *spec in rules:
            self.state = WanState(**{**asdict(self.state),
                                     "rules": [*self.state.rules, [table, chain, *spec]]})
            self._save()  # recorded before it exists: down never misses one
            verb = "-A" if table == "nat" else "-I"
            run(["iptables", "-w", "-t", table, verb, chain, *spec])

    def _start_shaper(self, prof: Profile) -> None:
        rd = Path(self.state.run_dir)
        (rd / "shaper.conf").write_text(shaper_config(prof))
        try:
            pid = start_shaper(self.topo.rtr_ns, rd / "shaper.conf", rd / "shaper.sock",
                               rd / "shaper.log", QUEUE_UP, QUEUE_DOWN)
        except ShaperError as exc:
            raise TestbedError(str(exc)) from None
        self.state = WanState(**{**asdict(self.state), "shaper_pid": pid})
        self._save()


def _tagged_rules(name: str) -> list[list[str]]:
    """Rules carrying this wan's tag that are still in the root namespace (crash recovery)."""
    out = []
    tag = f"protolens-wan-{name}"
    for table in ("nat", "filter"):
        for line in run(["iptables", "-w", "-t", table, "-S"], check=False).splitlines():
            if tag in line and line.startswith("-A "):
                words = line.split()
                spec = [w.strip('"') for w in words[2:]]
                out.append([table, words[1], *spec])
    return out


def _resolv_conf(path: Path) -> str | None:
    """The host's resolver list if it names a non-loopback server (a 127.0.0.x stub resolver is
    not reachable from the namespace), else None."""
    try:
        text = path.read_text()
    except OSError:
        return None
    servers = [line.split()[1] for line in text.splitlines()
               if line.startswith("nameserver") and len(line.split()) > 1]
    return text if any(not s.startswith("127.") and s != "::1" for s in servers) else None
