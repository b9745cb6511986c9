"""The testbed's specification, pure: which arguments make a valid testbed, the record of what
one created (``TestbedState``, kept as JSON in ``<run_dir>/state.json``), and the status and
problems derived from that record and a few observations. ``adapter.py`` does the I/O."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from protolens.testbed.topology import Topology, valid_name

if TYPE_CHECKING:
    from protolens.certs import CertFiles
    from protolens.shaper.records import Profile

SERVER_CCS = ("cubic", "cubic-nohystart", "bbr", "reno")
DEFAULT_HOSTS = ("a.test", "b.test", "c.test")


class TestbedError(RuntimeError):
    """Something the testbed could not do; the message is one line."""

    __test__ = False  # not a pytest class


def run_root(env: Mapping[str, str]) -> Path:
    return Path(env.get("PROTOLENS_RUN_DIR") or "/run/protolens/testbed")


def default_hosts() -> tuple[str, ...]:
    try:
        from protolens.pages.model import HOSTS  # the page corpus's host names
    except ImportError:
        return DEFAULT_HOSTS
    return tuple(dict.fromkeys([*HOSTS, *DEFAULT_HOSTS]))


def validate_up(name: str, server_cc: str, initcwnd: int | None, hosts: Sequence[str],
                bbr_hosts: Sequence[str]) -> None:
    """Raise ``TestbedError`` (one line) for arguments no testbed can be built from."""
    if not valid_name(name):
        raise TestbedError(f"bad testbed name '{name}': 1-8 lowercase letters or digits")
    if server_cc not in SERVER_CCS:
        raise TestbedError(f"unknown server CC '{server_cc}' ({', '.join(SERVER_CCS)})")
    if initcwnd is not None and not 1 <= initcwnd <= 1000:
        raise TestbedError(f"initcwnd must be between 1 and 1000, got {initcwnd}")
    bad = [h for h in bbr_hosts if h not in hosts]
    if bad:
        raise TestbedError(f"--bbr-host {', '.join(bad)} is not a testbed host "
                           f"({', '.join(hosts[:6])}, ...)")


@dataclass(frozen=True)
class TestbedState:
    """What one testbed created; written to <run_dir>/state.json."""

    __test__ = False
    name: str
    run_dir: str
    hosts: list[str]
    server_ip: str
    client_ip: str
    spki: str
    cert: str
    ca: str
    site: str
    access_log: str
    caddy_log: str
    shaper_log: str
    shaper_sock: str
    profile: str
    profile_path: str
    server_cc: str
    initcwnd: int | None
    created: str
    pids: dict[str, int] = field(default_factory=dict)
    cross_pids: list[int] = field(default_factory=list)
    bbr_hosts: list[str] = field(default_factory=list)
    """Hosts served from the second address, whose TCP connections use BBR (``--bbr-host``)."""
    trace_down: str | None = None
    """The Mahimahi trace file shaping each direction, if any (``testbed shape --trace-down``)."""
    trace_up: str | None = None
    calibration: dict[str, Any] | None = None
    """What the path-latency probes measured at ``up`` (shaper/calibration.py ``Calibration``)."""
    calibrated: bool = False
    """Whether the current shaping takes the path's own RTT off the configured delay."""
    kind: str = "testbed"
    """The kind of network (``footprint.py``): what brings it down if its owner is killed."""

    def pid(self, role: str) -> int | None:
        return self.pids.get(role)

    def with_pid(self, role: str, pid: int) -> Self:
        return replace(self, pids={**self.pids, role: pid})

    def to_json(self) -> str:
        return state_to_json(self)


def new_state(name: str, run_dir: Path, hosts: Sequence[str], certs: CertFiles, site: Path,
              prof: Profile, server_cc: str, initcwnd: int | None, bbr_hosts: Sequence[str],
              now: datetime.datetime) -> TestbedState:
    """The record of a testbed about to be built in ``run_dir``."""
    topo, link = Topology(name), prof.link
    return TestbedState(
        name=name, run_dir=str(run_dir), hosts=list(hosts), server_ip=topo.srv_ip,
        client_ip=topo.cli_ip, spki=certs.spki, cert=str(certs.cert), ca=str(certs.ca),
        site=str(site), access_log=str(run_dir / "access.log"),
        caddy_log=str(run_dir / "caddy.log"), shaper_log=str(run_dir / "shaper.log"),
        shaper_sock=str(run_dir / "shaper.sock"), profile=prof.name, profile_path=prof.path,
        server_cc=server_cc, initcwnd=initcwnd, created=now.isoformat(timespec="seconds"),
        bbr_hosts=list(dict.fromkeys(bbr_hosts)),
        trace_down=link.trace_down.source if link.trace_down else None,
        trace_up=link.trace_up.source if link.trace_up else None)


def state_to_json(state: TestbedState) -> str:
    return json.dumps(asdict(state), indent=2)


def state_from_json(text: str) -> TestbedState:
    return TestbedState(**json.loads(text))


def host_ips(state: TestbedState, topo: Topology) -> dict[str, str]:
    """The server address of every host (the BBR address for ``bbr_hosts``)."""
    return {h: topo.bbr_srv_ip if h in state.bbr_hosts else state.server_ip for h in state.hosts}


def host_rules(state: TestbedState, topo: Topology) -> str:
    """Chromium ``--host-resolver-rules``: the first matching MAP wins, so BBR hosts first."""
    maps = [f"MAP {h} {topo.bbr_srv_ip}" for h in state.bbr_hosts]
    return ", ".join([*maps, f"MAP *.test {state.server_ip}"])


def chromium_flags(state: TestbedState, topo: Topology) -> list[str]:
    return [f"--host-resolver-rules={host_rules(state, topo)}",
            f"--ignore-certificate-errors-spki-list={state.spki}"]


def problems(state: TestbedState, missing_ns: Sequence[str], shaper_running: bool,
             caddy_running: bool) -> list[str]:
    out = []
    if missing_ns:
        out.append(f"namespaces missing: {', '.join(missing_ns)}")
    if not shaper_running:
        out.append("shaper not running: traffic passes UNSHAPED and uncounted "
                   "(NFQUEUE --queue-bypass); restart it with protolens testbed shape PROFILE")
    if not caddy_running:
        out.append(f"caddy not running (see {state.caddy_log})")
    return out


def status(state: TestbedState, topo: Topology, probs: list[str], shaper: dict[str, Any],
           caddy_running: bool, host_settings: Any) -> dict[str, Any]:
    """The ``testbed status`` document from the state and what the adapter observed."""
    s = state
    return {
        "name": s.name, "up": not probs, "problems": probs,
        "namespaces": {"client": topo.cli_ns, "router": topo.rtr_ns, "server": topo.srv_ns},
        "client_ns": topo.cli_ns, "client_ip": s.client_ip, "server_ip": s.server_ip,
        "hosts": s.hosts, "spki": s.spki, "ca": s.ca, "site": s.site,
        "static_url": f"https://{s.hosts[0]}/_testbed/",
        "profile": s.profile, "profile_path": s.profile_path, "server_cc": s.server_cc,
        "trace_down": s.trace_down, "trace_up": s.trace_up,
        "calibration": s.calibration, "calibrated": s.calibrated,
        "server_cc_note": "applies to TCP (h1, h2) only; caddy's HTTP/3 uses quic-go's own CC",
        "bbr_hosts": s.bbr_hosts,
        "bbr_ip": topo.bbr_srv_ip if s.bbr_hosts else None,
        "host_ips": host_ips(s, topo),
        "initcwnd": s.initcwnd, "access_log": s.access_log, "caddy_log": s.caddy_log,
        "shaper_log": s.shaper_log, "run_dir": s.run_dir,
        "caddy": {"pid": s.pids.get("caddy"), "running": caddy_running},
        "shaper": shaper, "cross_traffic_flows": len(s.cross_pids),
        "host_settings": host_settings,
        "chromium_flags": chromium_flags(s, topo),
    }
