"""The testbed: client, router and server namespaces, caddy serving the hosts, the shaper
between them and cross traffic (adapter). Its lifecycle (up, down after a crash, stale reaping,
the state file, the shaper) is ``lifecycle.Network``'s; this module builds the topology and
answers status / truth / shape. What a valid testbed is, the state record and the status
document are ``spec.py``'s (pure)."""

from __future__ import annotations

import datetime
import os
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from protolens.certs import CertFiles, ensure_cert
from protolens.paths import data_home
from protolens.shaper import Profile, ProfileError, load_profile
from protolens.shaper.build import ShaperError, find_binary
from protolens.shaper.calibration import (
    PROBES,
    Calibration,
    CalibrationError,
    ping_rtts_ms,
    probe,
    probe_config,
)
from protolens.shaper.config import shaper_config
from protolens.testbed import caddy, cross, hostcfg, links, procs, spec
from protolens.testbed.lifecycle import Network
from protolens.testbed.run import in_ns, run
from protolens.testbed.spec import TestbedError, TestbedState, default_hosts


class Testbed(Network[TestbedState]):
    """A running testbed. ``Testbed.up(...)`` creates one, ``Testbed.load(name)`` finds one."""

    __test__ = False
    kind = "testbed"
    up_hint = "protolens testbed up --name {name}"
    down_hint = "protolens testbed down --name {name}"

    @classmethod
    def read_state(cls, text: str) -> TestbedState:
        return spec.state_from_json(text)

    # ---- lifecycle ----
    @classmethod
    def up(cls, name: str = "pl", profile: str = "clean", server_cc: str = "cubic",
           initcwnd: int | None = None, site: Path | None = None,
           hosts: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
           bbr_hosts: Sequence[str] = ()) -> Testbed:
        env = dict(os.environ) if env is None else env
        hosts = tuple(hosts or default_hosts())
        spec.validate_up(name, server_cc, initcwnd, hosts, bbr_hosts)
        prof = _profile(profile)
        try:
            find_binary(env)  # before anything is created: say "not built" in one line
        except ShaperError as e:
            raise TestbedError(str(e)) from None
        data = data_home(env) / "testbed"
        pages = site or data_home(env) / "pages"
        now = datetime.datetime.now(datetime.UTC)
        made: list[CertFiles] = []

        def first_state(rd: Path) -> TestbedState:
            pages.mkdir(parents=True, exist_ok=True)
            made.append(ensure_cert(data / "cert", hosts, now))
            return spec.new_state(name, rd, hosts, made[0], pages, prof, server_cc, initcwnd,
                                  bbr_hosts, now)

        tb = cls._claim(name, env, first_state)
        tb._build_or_down(lambda: tb._build(prof, made[0].key, data / "static"))
        return tb

    def _build(self, prof: Profile, key: Path, static: Path) -> None:
        """Host settings, links, caddy, the shaper and its calibration, then ``prof``."""
        self._host_settings()
        links.build_links(self.topo, self.state.hosts, self.state.server_cc, self.state.initcwnd,
                          self.state.bbr_hosts)
        self.state = self.state.with_pid("caddy", self._start_caddy(key, static))
        self._save()
        first = Path(self.state.run_dir) / "calibrate.conf"
        first.write_text(probe_config(PROBES[0][0]))
        self._start_shaper(first)
        links.queue_rules(self.topo)
        self._calibrate()
        self.shape(prof)

    # ---- queries ----
    def server_argv(self, cmd: Sequence[str] = ()) -> list[str]:
        return in_ns(self.topo.srv_ns, cmd)

    def host_ips(self) -> dict[str, str]:
        return spec.host_ips(self.state, self.topo)

    def host_rules(self) -> str:
        return spec.host_rules(self.state, self.topo)

    def chromium_flags(self) -> list[str]:
        return spec.chromium_flags(self.state, self.topo)

    def caddy_running(self) -> bool:
        pid = self.state.pids.get("caddy")
        return pid is not None and procs.alive(pid)

    def problems(self) -> list[str]:
        missing = [ns for ns in self.topo.namespaces if ns not in procs.netns_list()]
        return spec.problems(self.state, missing, self.shaper_running(), self.caddy_running())

    def status(self) -> dict[str, Any]:
        s = self.state
        shaper: dict[str, Any] = {"pid": s.pids.get("shaper"), "running": False}
        try:
            if s.pids.get("shaper") and procs.alive(s.pids["shaper"]):
                st = self.shaper().stats()
                shaper.update(running=True, rt=st["rt"], profile=st["name"],
                              lateness=st["lateness"],
                              params={d: v["params"] for d, v in st["dirs"].items()})
        except ShaperError:
            pass
        return spec.status(s, self.topo, self.problems(), shaper, self.caddy_running(),
                           hostcfg.recorded(self.root)["original"])

    # ---- actions ----
    def shape(self, profile: str | Profile, calibrated: bool = True) -> Profile:
        """Switch the shaper to ``profile`` now (its schedule restarts); restart it if needed.
        ``calibrated``: take the path's own latency, measured at ``up``, off the delay."""
        prof = profile if isinstance(profile, Profile) else _profile(profile)
        cal = self.state.calibration
        use = Calibration.from_dict(cal) if calibrated and cal else None
        self._load_shaper(shaper_config(prof, use))
        self._stop_cross()
        link = prof.link
        self.state = replace(self.state, profile=prof.name, profile_path=prof.path,
                             trace_down=link.trace_down.source if link.trace_down else None,
                             trace_up=link.trace_up.source if link.trace_up else None,
                             calibrated=use is not None)
        self._cross_traffic(prof)
        self._save()
        return prof

    # ---- internals ----
    def _host_settings(self) -> None:
        cc = "cubic" if self.state.server_cc.startswith("cubic") else self.state.server_cc
        hostcfg.allow_cc(self.root, self.state.name, cc)
        if self.state.bbr_hosts:
            hostcfg.allow_cc(self.root, self.state.name, "bbr")
        if cc == "cubic":
            want = "0" if self.state.server_cc == "cubic-nohystart" else "1"
            if Path(hostcfg.CUBIC_HYSTART).exists():
                try:
                    hostcfg.change(self.root, self.state.name, hostcfg.CUBIC_HYSTART, want)
                except hostcfg.HostConflict as e:
                    raise TestbedError(str(e)) from None
            elif want == "0":
                raise TestbedError(f"{hostcfg.CUBIC_HYSTART} missing: cannot turn HyStart off")

    def _start_caddy(self, key: Path, static: Path) -> int:
        s = self.state
        rd = Path(s.run_dir)
        caddy.ensure_static(static, s.hosts)
        cfg = rd / "Caddyfile"
        cfg.write_text(caddy.caddyfile(s.hosts, Path(s.cert), key, Path(s.site), static,
                                       Path(s.access_log)))
        home = rd / "caddy-home"
        home.mkdir(exist_ok=True)
        env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
               "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
               "XDG_DATA_HOME": str(home / "data")}
        with open(s.caddy_log, "ab") as log:
            proc = subprocess.Popen(in_ns(self.topo.srv_ns, ["caddy", "run", "--config", str(cfg),
                                                             "--adapter", "caddyfile"]),
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                    start_new_session=True)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                tail = Path(s.caddy_log).read_text(errors="replace").strip().splitlines()
                raise TestbedError(f"caddy exited: {tail[-1][:300] if tail else proc.returncode}")
            listening = run(in_ns(self.topo.srv_ns, ["ss", "-Hlntu", "sport", "=", ":443"]))
            kinds = {line.split()[0] for line in listening.splitlines() if line.strip()}
            if {"tcp", "udp"} <= kinds:
                return proc.pid
            time.sleep(0.05)
        proc.kill()
        raise TestbedError("caddy did not listen on 443 (tcp and udp) within 15 s")

    def _calibrate(self) -> None:
        """Ping through the shaper under each probe config; record the path's own RTT."""
        probes = []
        conf = Path(self.state.run_dir) / "calibrate.conf"
        for rtt_ns, count, interval in PROBES:
            conf.write_text(probe_config(rtt_ns))
            try:
                self.shaper().load(conf)
            except ShaperError as e:
                raise TestbedError(str(e)) from None
            out = run(in_ns(self.topo.cli_ns, [
                "ping", "-n", "-c", str(count), "-i", str(interval), "-W", "1",
                self.state.server_ip]), check=False, timeout=60)
            try:
                probes.append(probe(rtt_ns, ping_rtts_ms(out), count))
            except CalibrationError as e:
                raise TestbedError(str(e)) from None
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self.state = replace(self.state, calibration={"probes": [asdict(p) for p in probes],
                                                      "measured_at": now})
        self._save()

    def _cross_traffic(self, prof: Profile) -> None:
        pids = cross.start_cross_traffic(self.topo, prof, Path(self.state.run_dir))
        if pids:
            self.state = replace(self.state, cross_pids=pids)
            self._save()

    def _stop_cross(self) -> None:
        for pid in self.state.cross_pids:
            procs.stop(pid)
        self.state = replace(self.state, cross_pids=[])


def _profile(name: str) -> Profile:
    try:
        return load_profile(name)
    except ProfileError as e:
        raise TestbedError(str(e)) from None

