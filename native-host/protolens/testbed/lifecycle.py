"""One lifecycle for every shaped network (adapter): the testbed (``adapter.py``) and the wan
path (``wan.py``) are two topologies of it.

A network is some namespaces with the shaper in the router one, a run directory holding its
state file, sockets and logs, and for some kinds pieces in the root namespace; what it leaves on
the machine is its ``Footprint`` (pure, ``footprint.py``). This module does what every kind
does alike: refuse a second ``up`` of one name, bring down networks whose owner was killed (the
kind read from their state file), save the state file atomically, start and load the shaper,
read its counters, run a command in the client namespace, forget cached TCP metrics, and
``down``, which also works after a crash (no state file: the footprint follows from the name).
A subclass builds its topology and adds what its kind offers.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar

from protolens.shaper.control import ShaperClient, ShaperError, start_shaper
from protolens.shaper.records import Profile
from protolens.shaper.summary import truth_rows
from protolens.testbed import hostcfg, procs
from protolens.testbed.footprint import Footprint, footprint, recorded_kind, recorded_pids
from protolens.testbed.links import ETC_NETNS
from protolens.testbed.run import TestbedError, in_ns, run
from protolens.testbed.spec import run_root
from protolens.testbed.topology import QUEUE_DOWN, QUEUE_UP, Topology


class NetworkState(Protocol):
    """What the lifecycle reads and writes in a kind's state record (a frozen dataclass,
    saved as ``<run_dir>/state.json``)."""

    @property
    def name(self) -> str: ...
    @property
    def run_dir(self) -> str: ...
    @property
    def profile(self) -> str:
        """The name of the profile the shaper runs."""
        ...
    def pid(self, role: str) -> int | None:
        """The process started for ``role`` (``shaper``, ``caddy``), if any."""
        ...
    def with_pid(self, role: str, pid: int) -> Self: ...
    def to_json(self) -> str: ...


S = TypeVar("S", bound=NetworkState)


class Network(Generic[S]):
    """A network that is up. ``kind`` picks its footprint; ``up_hint`` and ``down_hint`` are the
    commands messages point to (``{name}`` filled in)."""

    kind: ClassVar[str]
    up_hint: ClassVar[str]
    down_hint: ClassVar[str]

    def __init__(self, state: S, root: Path) -> None:
        self.state = state
        self.root = root
        self.topo = Topology(state.name)
        self.footprint = footprint(self.kind, state.name)
        self.reaped: list[str] = []
        """What bringing it up did to stale networks, one line each."""

    @classmethod
    def read_state(cls, text: str) -> S:
        raise NotImplementedError

    # ---- lifecycle ----
    @classmethod
    def _claim(cls, name: str, env: Mapping[str, str], make_state: Callable[[Path], S]
               ) -> Self:
        """Refuse a network that is up, bring down stale ones, refuse one that would share a
        root-namespace route with a live one; then the run directory and the first state."""
        fp, root = footprint(cls.kind, name), run_root(env)
        rd = root / fp.run_dir
        existing = [ns for ns in procs.netns_list() if ns in fp.namespaces]
        if existing or (rd / "state.json").exists():
            raise TestbedError(f"{fp.label} '{name}' is already up "
                               f"({cls.down_hint.format(name=name)})")
        reaped = reap_stale(root, keep=fp.run_dir)
        for other_dir, other in recorded_networks(root):
            if other_dir != fp.run_dir and set(other.root_routes) & set(fp.root_routes):
                raise TestbedError(f"another {other.label} is up ({other_dir}): one at a time, "
                                   "since they share the client subnet")
        rd.mkdir(parents=True, exist_ok=True)
        net = cls(make_state(rd), root)
        net.reaped = reaped
        net._save()
        return net

    def _build_or_down(self, build: Callable[[], None]) -> None:
        """Run the kind's build steps; whatever fails or interrupts them, remove it all."""
        try:
            build()
        except BaseException:
            teardown(self.footprint, self.root)
            raise

    @classmethod
    def load(cls, name: str = "pl", env: Mapping[str, str] | None = None) -> Self:
        root = run_root(os.environ if env is None else env)
        fp = footprint(cls.kind, name)
        p = root / fp.run_dir / "state.json"
        if not p.exists():
            raise TestbedError(f"{fp.label} '{name}' is not up ({cls.up_hint.format(name=name)})")
        return cls(cls.read_state(p.read_text()), root)

    @classmethod
    def down(cls, name: str = "pl", env: Mapping[str, str] | None = None) -> list[str]:
        """Remove everything network ``name`` created; idempotent, works after a crash."""
        return teardown(footprint(cls.kind, name), run_root(os.environ if env is None else env))

    # ---- what every kind offers ----
    def shape(self, profile: str | Profile) -> Profile:
        """Switch the shaper to ``profile`` now (its schedule restarts)."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """What is wrong with it now, one line each (none: it is up)."""
        out = []
        missing = [ns for ns in self.footprint.namespaces if ns not in procs.netns_list()]
        if missing:
            out.append(f"namespaces missing: {', '.join(missing)}")
        if not self.shaper_running():
            out.append("shaper not running: traffic passes UNSHAPED and uncounted")
        return out

    def check(self) -> None:
        """Raise ``TestbedError`` unless it is all up."""
        probs = self.problems()
        if probs:
            raise TestbedError(f"{self.footprint.label} '{self.state.name}': "
                               f"{'; '.join(probs)}")

    def exec_argv(self, cmd: Sequence[str] = ()) -> list[str]:
        """argv that runs ``cmd`` in the client namespace (``ip netns exec <cli> ...``)."""
        return in_ns(self.topo.cli_ns, cmd)

    def flush_tcp_metrics(self) -> None:
        """Forget cached ssthresh/RTT where connections end (docs/ARCHITECTURE.md)."""
        for ns in self.footprint.metric_namespaces:
            run(["ip", "-n", ns, "tcp_metrics", "flush", "all"])

    def set_advmss(self, mss: int | None) -> None:
        """``ip route change default via <router> [advmss N]`` in the client namespace: the server
        then sends N-byte segments (docs/ARCHITECTURE.md "Congestion-control fingerprint facts")."""
        argv = ["ip", "-n", self.topo.cli_ns, "route", "change", "default", "via",
                self.topo.rtr_cli_ip]
        run(argv + (["advmss", str(mss)] if mss else []))

    def shaper(self) -> ShaperClient:
        return ShaperClient(Path(self.state.run_dir) / "shaper.sock")

    def shaper_running(self) -> bool:
        pid = self.state.pid("shaper")
        return pid is not None and procs.alive(pid) and self.shaper().alive()

    def stats(self, reset: bool = False) -> dict[str, Any]:
        """The shaper's counters (per flow, per direction, its lateness)."""
        if not self.shaper_running():
            raise TestbedError(f"{self.footprint.label} '{self.state.name}': shaper not running,"
                               " no counters (traffic passes unshaped); protolens testbed shape"
                               " PROFILE restarts it")
        try:
            return self.shaper().stats(reset)
        except ShaperError as e:
            raise TestbedError(str(e)) from None

    def truth(self, reset: bool = False) -> list[dict[str, Any]]:
        """Per-flow packets and bytes the shaper forwarded (and dropped), each direction."""
        return truth_rows(self.stats(reset))

    def lateness(self) -> dict[str, Any]:
        lat: dict[str, Any] = self.stats(False)["lateness"]
        return lat

    # ---- for the kinds ----
    def _save(self) -> None:
        p = Path(self.state.run_dir) / "state.json"
        tmp = p.with_suffix(".tmp")
        tmp.write_text(self.state.to_json())
        tmp.replace(p)

    def _start_shaper(self, conf: Path) -> None:
        rd = Path(self.state.run_dir)
        try:
            pid = start_shaper(self.topo.rtr_ns, conf, rd / "shaper.sock", rd / "shaper.log",
                               QUEUE_UP, QUEUE_DOWN)
        except ShaperError as e:
            raise TestbedError(str(e)) from None
        self.state = self.state.with_pid("shaper", pid)
        self._save()

    def _load_shaper(self, config: str) -> None:
        """Write ``config`` as the shaper's and switch to it now; start the shaper if it is not
        running."""
        conf = Path(self.state.run_dir) / "shaper.conf"
        conf.write_text(config)
        try:
            if self.shaper_running():
                self.shaper().load(conf)
            else:
                self._start_shaper(conf)
        except ShaperError as e:
            raise TestbedError(str(e)) from None


def recorded_networks(root: Path) -> list[tuple[str, Footprint]]:
    """Every network with a state file under ``root``: its run directory and its footprint,
    from the kind and name the file records (a file that names none, or names a network kept
    elsewhere, is not one)."""
    out = []
    for p in sorted(root.glob("*/state.json")):
        data = _read_json(p)
        kind, name = recorded_kind(data), data.get("name")
        if kind is None or not isinstance(name, str):
            continue
        fp = footprint(kind, name)
        if fp.run_dir == p.parent.name:
            out.append((p.parent.name, fp))
    return out


def _read_json(p: Path) -> dict[str, Any]:
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def reap_stale(root: Path, keep: str = "") -> list[str]:
    """Bring down every network whose processes are all gone (its owner was killed: the
    namespaces, root-namespace rules and host-wide settings it holds would block others, e.g. a
    HyStart value), and forget host-wide-setting users with no run directory left. A network
    still coming up (no process started yet) is left alone, as is ``keep`` (a run directory).
    Returns what it did, one line each."""
    done: list[str] = []
    for run_dir, fp in recorded_networks(root):
        if run_dir == keep:
            continue
        pids = recorded_pids(_read_json(root / run_dir / "state.json"))
        if pids and not any(procs.alive(pid) for pid in pids):
            teardown(fp, root)
            done.append(f"brought down stale {fp.label} '{fp.name}' (its processes were gone)")
    for user in hostcfg.recorded(root)["users"]:
        if user != keep and not (root / user).is_dir():
            hostcfg.release(root, user)
            done.append(f"forgot host settings of '{user}' (no run directory)")
    return done


def teardown(fp: Footprint, root: Path) -> list[str]:
    """Remove what a network of footprint ``fp`` created: the processes and root-namespace rules
    its state file records, rules carrying its tag, its root links, its namespaces (and every
    process in them), their /etc/netns files, its claim on host-wide settings and its run
    directory. Idempotent; one line per thing removed."""
    rd = root / fp.run_dir
    done: list[str] = []
    state = _read_json(rd / "state.json")
    for pid in [*state.get("cross_pids", []), *recorded_pids(state)]:
        if procs.stop(int(pid)):
            done.append(f"stopped pid {pid}")
    rules: list[list[str]] = [list(r) for r in state.get("rules", [])]
    if fp.rule_tag:
        rules += tagged_rules(fp.rule_tag)
    for table, chain, *spec in rules:  # a rule listed twice fails quietly the second time
        run(["iptables", "-w", "-t", table, "-D", chain, *spec], check=False)
    if rules:
        done.append(f"removed iptables rules tagged {fp.rule_tag}")
    for link in fp.root_links:
        if run(["ip", "-br", "link", "show", link], check=False):
            # deleting the namespace removes its veth peer only later (netns cleanup runs
            # asynchronously in the kernel): remove the root end, and its route, now
            run(["ip", "link", "del", link], check=False)
            done.append(f"deleted interface {link}")
    present = procs.netns_list()
    for ns in fp.namespaces:
        if ns not in present:
            continue
        for word in run(["ip", "netns", "pids", ns], check=False).split():
            if procs.stop(int(word)):
                done.append(f"stopped pid {word} in {ns}")
        run(["ip", "netns", "del", ns], check=False)
        done.append(f"deleted namespace {ns}")
    for ns in fp.namespaces:
        if (ETC_NETNS / ns).exists():
            shutil.rmtree(ETC_NETNS / ns)
            done.append(f"removed {ETC_NETNS / ns}")
    done += [f"restored {r}" for r in hostcfg.release(root, fp.host_user)]
    if rd.exists():
        shutil.rmtree(rd)
        done.append(f"removed {rd}")
    return done


def tagged_rules(tag: str) -> list[list[str]]:
    """Root-namespace iptables rules carrying ``tag`` (crash recovery), as
    ``[table, chain, *spec]``."""
    out = []
    for table in ("nat", "filter"):
        for line in run(["iptables", "-w", "-t", table, "-S"], check=False).splitlines():
            words = [w.strip('"') for w in line.split()]
            tagged = any(a == "--comment" and b == tag for a, b in pairwise(words))
            if tagged and words[0] == "-A":
                out.append([table, *words[1:]])
    return out
