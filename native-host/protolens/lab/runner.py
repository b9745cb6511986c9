"""Runs lab loads (adapter): the one recipe for a load, which campaigns and fairness runs share,
and a campaign plan as a sequence of them.

A load (``load.py``): start Chromium (fresh profile, extension, host in lab mode with the load's
tags; through the lab proxy for a proxied arm), wait until its records are stored, stop the
browser (``browse``); store the attempt with the shaper's flows and lateness, flagged when the
shaper ran late, and the policy that applied to each host (``record``). A campaign applies each
condition, flushes TCP metrics and resets the counters around each load, and retries failed or
timed-out loads up to ``retries`` times; every attempt is stored.

Overlap (``RunOptions.overlap``, on for testbed pages): a load's browser is started before its
turn (a standby: it attaches and waits for its go), so Chromium's start is off the campaign's
clock. A browser's start (850-950 ms on the 2-core machine, docs/RESEARCH.md "What measuring
costs") is longer than a page's quiet after load and the stop (about 650 ms), so it runs in two
of them: when a page's last URL has fired its load event, the next load's browser goes on with
its start (or starts) and the one after it starts under ``SCHED_IDLE``, behind it; while a page
loads, every standby is stopped (SIGSTOP to its process group, ``Running.freeze``), so the page
never shares the machine with a starting browser, only its quiet does. Each load still gets a
fresh browser and profile (cold cache, no connection carried over). Not for a proxied load (the
proxy holds one load's rules at a time).
"""

from __future__ import annotations

import shlex
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.launch import LoadResult, Running, finish, start_browser
from protolens.lab import proxied
from protolens.lab.load import LoadSpec, failure_reason, flag_reason, load_row
from protolens.lab.network import LabNetwork, Lateness
from protolens.lab.path_rtt import ProfileRtt, host_rtts
from protolens.lab.plan import PlannedLoad
from protolens.lab.store_watch import StoreWatch
from protolens.store import Connection, open_rw
from protolens.store import lab as labstore
from protolens.store import paths as pathstore
from protolens.store import policy as policystore
from protolens.store.tx import transaction

if TYPE_CHECKING:
    from protolens.proxy.control import ProxyProcess

LATENESS_FLAG_NS = 2_000_000
"""Flag a load when a packet left the shaper more than 2 ms late: 4% of the 50 ms RTT of the
IFIP'18 wifi profile, and 20x the stdev the prototype shaper showed here (docs/ARCHITECTURE.md:
0.06-0.08 ms). Chosen by ProtoLens; override with ``--lateness-flag-ms``."""

LAB_QUIET_MS = 200
"""The network quiet after load that ends a record of a corpus page (the recorder's 2 s everyday
quiet was 2 of a load's 3.4 s beyond its PLT: scripts/bench/lab_overhead.py). The corpus pages
request nothing after load (every object delays the load event: pages/html.py), and a change of
the picture holds a record open as a network event does (src/cdp/navigation.ts ``completes``),
so what the quiet must outwait is the gap between the picture's last changes. Measured
(2026-11-29, 78 loads with their raw events saved: ifip18-baidu, -google, -twitter, -wikipedia,
-yahoo, -qq, -facebook, student-small, conext-48x140k; h1, h2, h3; ``wifi``, ``wifi-lossy``,
``fiber``): no request began or ended after the load event; the picture changed up to 128 ms after
it, and the longest gap from the load event to a change, or between two changes after it, was
84 ms. 200 ms is over twice that gap and above the latest change. Chosen by ProtoLens from those
loads; a page of one's own that requests something after load needs ``lab run --quiet-ms``
(the test site's request 300 ms after load: scripts/devkit/harness.py ``SITE_QUIET_MS``). Real
sites (``--urls``) keep the recorder's 2 s."""


@dataclass(frozen=True)
class Target:
    """Where a page is: the URL the extension opens and the origins (host:port) it uses."""

    url: str
    origins: tuple[str, ...]


@dataclass(frozen=True)
class RunOptions:
    chromium: str
    extension_dir: Path
    db: Path
    scratch: Path
    timeout_s: float = 60.0
    retries: int = 1
    lateness_flag_ns: int = LATENESS_FLAG_NS
    headless: bool = True
    keep_profiles: bool = False
    policy: tuple[dict[str, Any], ...] = ()
    """Rules of the ``policy`` arm (per-domain rules, docs/POLICY.md)."""
    quiet_ms: int | None = None
    """The recorder's network quiet after load (None: its own default, 2 s)."""
    visual: bool = True
    """Capture paint progress for the visual metrics (SpeedIndex ...; docs/RECORD.md)."""
    save_log: bool = False
    """Keep each load's raw DevTools events beside its record (``--save-log``)."""
    overlap: bool = False
    """Start the next load's browser during this page's quiet after load (module docstring)."""


@dataclass
class Progress:
    """Counts the runner reports after each attempt."""

    done: int = 0
    failed: int = 0
    retried: int = 0
    flagged: int = 0
    failures: list[str] = field(default_factory=list)


def run_campaign(loads: Sequence[PlannedLoad], targets: dict[str, Target], network: LabNetwork,
                 opts: RunOptions, on_progress: Callable[[Progress, PlannedLoad], None]
                 | None = None) -> Progress:
    """Run every planned load in order; return the counts. Stops cleanly on KeyboardInterrupt
    (the in-flight attempt is not stored, so ``--resume`` runs it again)."""
    progress = Progress()
    current: str | None = None
    proxy: ProxyProcess | None = None
    standby: dict[int, Standby] = {}
    stopped_at = 0.0

    def can_wait(k: int) -> bool:
        return opts.overlap and k < len(loads) and not loads[k].arm.proxied
    try:
        for i, planned in enumerate(loads):
            if planned.condition != current:
                network.apply(planned.condition)
                current = planned.condition
            if proxy is None and planned.arm.proxied:
                proxy = start_proxy(network)
            for attempt in range(1, opts.retries + 2):
                held = standby.pop(i, None) if attempt == 1 else None
                for waiting in standby.values():  # nothing starts beside the page
                    waiting.running.freeze()

                def prepare(i: int = i) -> None:
                    """This page has loaded: the next load's browser goes on with its start
                    (or starts), the one after it starts idle behind it."""
                    if i + 1 in standby:
                        standby[i + 1].running.thaw()
                    for k in (i + 1, i + 2):
                        if k not in standby and can_wait(k):
                            standby[k] = launch_standby(loads[k], targets[loads[k].page],
                                                        network, opts, idle=k == i + 2)
                ok, stopped_at = _attempt(planned, attempt, targets[planned.page], network,
                                          opts, progress, proxy, held,
                                          prepare if opts.overlap else None, stopped_at)
                if ok:
                    break
                if attempt <= opts.retries:
                    progress.retried += 1
            else:
                progress.failed += 1
            progress.done += 1
            if on_progress:
                on_progress(progress, planned)
    finally:
        for left in standby.values():  # interrupted: never run, --resume runs it
            left.running.stop()
            _remove(left.scratch)
        if proxy is not None:
            proxy.stop()
    return progress


@dataclass(frozen=True)
class Standby:
    """A later load's browser, started during a page's quiet, waiting for its go."""

    load: LoadSpec
    running: Running
    scratch: Path


def launch_standby(planned: PlannedLoad, target: Target, network: LabNetwork,
                   opts: RunOptions, idle: bool = False) -> Standby:
    """Start ``planned``'s browser (first attempt) held before its first URL; ``idle``: under
    ``SCHED_IDLE`` until thawed (``Running.thaw``)."""
    load = _spec(planned, 1)
    spec, prefix, _, _ = _launch_spec(load, target, network, opts, None, None)
    scratch = opts.scratch / load.load_id
    running = _start(load, target, spec, prefix, scratch, network, opts, None, standby=True,
                     mark_loaded=True, idle=idle)
    return Standby(load, running, scratch)


DRAIN_RTTS = 1.5
DRAIN_MARGIN_S = 0.02


def drain_s(network: LabNetwork, condition: str) -> float:
    """How long the last load's teardown may still be on the link once its browser has stopped:
    1.5 of the profile's largest RTT plus 20 ms (the time the runner spends storing the last
    load counts towards it). Without it, a standby browser let go at once had the stopped browser's
    last two packets (40 B each, client to server, about one RTT after its stop) counted among
    its own flows, in 2 of 9 loads (ifip18-baidu, wifi); a browser started after the stop
    takes longer than that to start, yet there too one of 12 loads (`--no-overlap`, h3 after two
    h1 loads) counted 12 such flows from the h1 loads' connections: every load waits for it.
    Chosen by ProtoLens from these measurements."""
    rtt_of = getattr(network, "profile_rtt", None)
    high = rtt_of(condition).high_ms if rtt_of is not None else 0.0
    return min(1.0, high / 1000 * DRAIN_RTTS + DRAIN_MARGIN_S)


def _spec(planned: PlannedLoad, attempt: int) -> LoadSpec:
    return LoadSpec(load_id=str(uuid.uuid4()), campaign=planned.campaign, page=planned.page,
                    arm=planned.arm, condition=planned.condition,
                    repetition=planned.repetition, warm=planned.warm, attempt=attempt)


def start_proxy(network: LabNetwork) -> ProxyProcess:
    """One lab proxy per run, in the network's client namespace."""
    from protolens.proxy.control import start
    setup = getattr(network, "proxy_setup", None)
    if setup is None:
        raise ValueError(f"the {network.name} network cannot run the lab proxy")
    prefix, hosts, upstream_ca = setup()
    # real sites: the proxy resolves every host itself, in the network's client namespace
    return start(hosts=hosts, upstream_ca=upstream_ca, prefix=prefix,
                 resolve=bool(getattr(network, "proxy_resolves", False)))


def _attempt(planned: PlannedLoad, attempt: int, target: Target, network: LabNetwork,
             opts: RunOptions, progress: Progress, proxy: ProxyProcess | None = None,
             held: Standby | None = None, prepare: Callable[[], None] | None = None,
             last_stop: float = 0.0) -> tuple[bool, float]:
    """One attempt of ``planned``: in ``held``'s browser if one was started for it, else in a
    browser started now; ``prepare`` readies the later loads' once this page has loaded. Its
    flows are counted from no earlier than ``drain_s`` after the last browser stopped
    (``last_stop``, monotonic; 0: none before). Returns whether it stored its records, and when
    its browser stopped."""
    if last_stop:
        time.sleep(max(0.0, last_stop + drain_s(network, planned.condition) - time.monotonic()))
    network.before_load()
    if held is not None:
        held.running.go()
        ran = _browsed(held.load, held.running, [], held.scratch, None, opts, prepare)
    else:
        ran = browse(_spec(planned, attempt), target, network, opts, proxy, on_loaded=prepare)
    load = ran.load
    flows, lateness = network.after_load()
    report = proxy.report(reset=True) if proxy is not None and ran.through_proxy else None
    row = record(ran, flows, lateness, report, network.server_cc, opts)
    rtt_of = getattr(network, "profile_rtt", None)
    if ran.result.ok and rtt_of is not None:
        store_rtts(opts.db, load.load_id, rtt_of(planned.condition))
    progress.flagged += row["flagged"]
    if row["reason"]:
        progress.failures.append(f"{planned.page}/{planned.arm}/{planned.condition}: "
                                 f"{row['reason']}")
    return ran.result.ok, ran.result.stopped_at


@dataclass(frozen=True)
class Browsed:
    """A load the browser ran: how it ended, when it started, the proxy rules it ran under."""

    load: LoadSpec
    result: LoadResult
    started_ms: float
    rules: list[dict[str, Any]]
    scratch: Path
    every_host: str | None = None
    """On real sites: the arm the proxy applied to every host (``proxied.load_rules``)."""

    @property
    def through_proxy(self) -> bool:
        return bool(self.rules) or self.every_host is not None


def browse(load: LoadSpec, target: Target, network: LabNetwork, opts: RunOptions,
           proxy: ProxyProcess | None = None, host_rules: str | None = None,
           start_at_ms: float | None = None,
           on_loaded: Callable[[], None] | None = None) -> Browsed:
    """Start lab Chromium on ``load`` in a fresh profile (through the lab proxy when its arm is
    proxied) and wait until the host has stored its records, or the timeout. ``host_rules``
    replaces the network's name mapping (a fairness side talks to its own server address);
    ``start_at_ms`` holds the first navigation until that wall-clock time (epoch ms);
    ``on_loaded`` is called once its last URL has loaded (``RunOptions.overlap``)."""
    spec, prefix, rules, every = _launch_spec(load, target, network, opts, proxy, host_rules)
    scratch = opts.scratch / load.load_id
    running = _start(load, target, spec, prefix, scratch, network, opts, start_at_ms,
                     mark_loaded=on_loaded is not None)
    return _browsed(load, running, rules, scratch, every, opts, on_loaded)


def _browsed(load: LoadSpec, running: Running, rules: list[dict[str, Any]], scratch: Path,
             every: str | None, opts: RunOptions,
             on_loaded: Callable[[], None] | None) -> Browsed:
    """Wait for ``running``'s records (or the timeout) and stop it; its clock started at its
    start, or at its go for a standby browser."""
    started_ms = time.time() * 1000 - (time.monotonic() - running.started) * 1000
    result = finish(running, StoreWatch(opts.db, load.load_id, load.navigations, time.monotonic,
                                        logs=opts.save_log),
                    opts.timeout_s, StoreWatch.POLL_S, on_loaded)
    return Browsed(load, result, started_ms, rules, scratch, every)


def _start(load: LoadSpec, target: Target, spec: LaunchSpec, prefix: list[str], scratch: Path,
           network: LabNetwork, opts: RunOptions, start_at_ms: float | None,
           standby: bool = False, mark_loaded: bool = False, idle: bool = False) -> Running:
    return start_browser(spec, scratch=scratch, db=opts.db,
                         navigate=[target.url] * load.navigations,
                         context=load.context(network.server_cc), prefix=prefix,
                         quiet_ms=opts.quiet_ms, visual=opts.visual, save_log=opts.save_log,
                         start_at_ms=start_at_ms, standby=standby, mark_loaded=mark_loaded,
                         idle=idle)


def _launch_spec(load: LoadSpec, target: Target, network: LabNetwork, opts: RunOptions,
                 proxy: ProxyProcess | None, host_rules: str | None
                 ) -> tuple[LaunchSpec, list[str], list[dict[str, Any]], str | None]:
    """The browser's launch spec and command prefix for ``load``, and the proxy's rules for it
    (configured now, when its arm is proxied)."""
    rules: list[dict[str, Any]] = []
    every: str | None = None
    spki, extra, prefix = list(network.spki()), [], list(network.browser_prefix())
    if proxy is not None and load.arm.proxied:
        hosts = [o.rsplit(":", 1)[0] for o in target.origins]
        rules, every = proxied.load_rules(load.arm, hosts, opts.policy,
                                          bool(getattr(network, "proxy_resolves", False)))
        proxy.configure(rules, every)
        spki.append(proxy.ca.spki)
        extra = proxy.flags()
        prefix += proxy.env_prefix
    spec = LaunchSpec(chromium=opts.chromium, user_data_dir="",
                      extension_dir=str(opts.extension_dir), arm=load.arm,
                      origins=target.origins, spki=spki,
                      host_rules=network.host_rules() if host_rules is None else host_rules,
                      headless=opts.headless, extra=extra)
    return spec, prefix, rules, every


def record(ran: Browsed, flows: Sequence[Mapping[str, Any]], lateness: Lateness | None,
           report: Mapping[str, Any] | None, server_cc: str | None,
           opts: RunOptions) -> Mapping[str, Any]:
    """Store the attempt with its flows, flagged if the shaper ran late; for a load that made
    its records, the policy and mechanism per host and the proxy's upstream connections
    (``report``, when it ran through the proxy). Its profile is removed unless kept or failed.
    Returns the stored row."""
    res = ran.result
    row = load_row(ran.load, ok=res.ok, started_ms=ran.started_ms, wall_ms=res.wall_s * 1000,
                   reason=failure_reason(res.reason, ran.load.attempt, res.log),
                   server_cc=server_cc, command_line=shlex.join(res.argv), lateness=lateness,
                   flagged=flag_reason(lateness, opts.lateness_flag_ns))
    with closing(open_rw(opts.db, time.time() * 1000)) as conn:
        labstore.record_load(conn, row, flows)
        if res.ok:
            _store_policies(conn, ran.load.load_id, ran.load.arm, ran.rules,
                            report if ran.through_proxy else None, ran.every_host)
    if res.ok and not opts.keep_profiles:
        _remove(ran.scratch)
    return row


def store_rtts(db: Path, load_id: str, prof: ProfileRtt) -> None:
    """Per navigation of the load and host: its base RTT from the connections' set-up beside
    the profile's (``lab/path_rtt.py``), the path's own share."""
    with closing(open_rw(db, time.time() * 1000)) as conn:
        for nav, conns in pathstore.load_connections(conn, load_id).items():
            pathstore.record_rtts(conn, nav, [asdict(h) for h in host_rtts(conns, prof)])


def _store_policies(conn: Connection, load_id: str, arm: Arm,
                    rules: list[dict[str, Any]], report: Mapping[str, Any] | None,
                    every_host: str | None = None) -> None:
    """Per navigation of the load: the policy and mechanism per host, and the proxy's upstream
    connections (``connections.upstream = 1``)."""
    starts = policystore.navigation_starts(conn, load_id)
    owners = proxied.split_by_navigation(report["connections"] if report else [], starts)
    with transaction(conn):
        for nav, started in starts:
            hosts = policystore.navigation_hosts(conn, nav)
            nav_rules = rules if every_host is None else proxied.every_host_rules(hosts,
                                                                                  every_host)
            policystore.record_navigation_policies(conn, nav,
                                                   proxied.applied(arm, hosts, nav_rules))
            if report is not None:
                policystore.store_upstream(conn, nav, owners[nav], started)


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)

