"""Real sites under a shaper profile: ``lab run URL`` through the shaper on the wan path.

The "real sites" here are STAND-INS: this machine has no internet, and no test may send traffic
off it. ``scripts/devkit/standin.py`` serves public-looking names (``www.example.com``,
``img.example.net``: RFC 2606 names) from a caddy with h1, h2 and h3 and a name server in a
namespace of its own, reached only through the wan network's NAT (its veth is passed as the
uplink). Everything else is real: the wan network, the shaper, Chromium with the extension, the
lab proxy resolving names inside the client namespace, SQLite. The witnesses are the stand-in
caddy's access log (protocol and client port of every request) and the shaper's counters.

Time-varying profiles run here too: slowdown (a schedule) and a Mahimahi trace, each in a real
campaign, against a ping from the client namespace, the shaper's counters and caddy's bytes; and
ECMP with cross traffic is refused in one line.

Cost: about 53 s under the heavy lock (one crashed campaign, one 5-load campaign, a rate check:
31 s; the slowdown and trace campaigns with their pings and rate check, and the refusal: 22 s).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scripts.devkit.standin import HOSTS, Standin, standin_internet
from tests.cli.run import caddy_hits, protolens
from tests.cli.run import store_rows as rows
from tests.lab.wan_probes import busy_rate, falls_back, ping_replies, slowdown_rtt
from tests.testbed.conftest import lab_available, wan_traces

pytestmark = [pytest.mark.netns, pytest.mark.e2e]

WAN = "plx"  # own name: the CC tests use "ccw", campaigns default to "plw"
ARMS = ("h1", "h2", "h3", "h2-parallel:2", "policy")


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=check).stdout


def traces() -> dict[str, object]:
    return wan_traces(WAN)


@pytest.fixture(scope="module")
def internet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Standin, object]]:
    reason = lab_available()
    if reason:
        pytest.skip(reason)
    protolens("cc", "wan", "down", "--name", WAN, check=False)
    before = traces()
    with standin_internet(tmp_path_factory.mktemp("standin")) as net:
        try:
            yield net, before
        finally:
            protolens("cc", "wan", "down", "--name", WAN, check=False)


def wan_args(net: Standin) -> list[str]:
    return ["--wan", WAN, "--uplink", net.uplink, "--resolver", net.resolver, "--ca",
            str(net.ca)]


@pytest.fixture(scope="module")
def campaign(internet: tuple[Standin, object], tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[Path, Standin, object]:
    """First a campaign killed (SIGKILL, its whole process group) while its first load runs,
    then the real one, which must bring the dead campaign's wan network down before its own."""
    net, before = internet
    work = tmp_path_factory.mktemp("wan")
    db = work / "lab.db"
    crashed = subprocess.Popen(
        [sys.executable, "-m", "protolens.cli", "lab", "run", net.url, "--arms", "h2",
         "--conditions", "wifi", "--reps", "3", "--campaign", "crash", *wan_args(net)],
        env={**os.environ, "PROTOLENS_DB": str(work / "crash.db")}, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not net.log_entries():
        time.sleep(0.1)
    assert net.log_entries(), "the crashing campaign never reached the stand-in"
    os.killpg(crashed.pid, signal.SIGKILL)
    crashed.wait(10)
    assert traces() != before  # it died with its wan network up
    policy = work / "mix.toml"
    policy.write_text('[[rule]]\ndomain = "img.example.net"\narm = "h1"\n')
    out = protolens("lab", "run", net.url, "--arms", ",".join(ARMS), "--policy", str(policy),
                    "--conditions", "wifi", "--reps", "1", "--campaign", "w", "--seed", "5",
                    *wan_args(net), db=db, check=False, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return db, net, before


def loads(db: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for load in rows(db, "SELECT * FROM loads WHERE campaign = 'w' AND status = 'ok'"):
        (nav,) = rows(db, "SELECT * FROM navigations WHERE load_id = ?", load["load_id"])
        load["nav"] = nav
        load["requests"] = rows(db, "SELECT * FROM requests WHERE navigation_id = ?", nav["id"])
        out[load["arm"]] = load
    assert sorted(out) == sorted(ARMS)
    return out


def seen(net: Standin, load: dict[str, Any]) -> list[dict[str, Any]]:
    return caddy_hits(net.access_log, load["started_at_ms"],
                      load["started_at_ms"] + load["wall_ms"] + 500)


def test_the_crashed_campaign_and_this_one_leave_nothing_behind(
        campaign: tuple[Path, Standin, object]) -> None:
    _, _, before = campaign
    assert traces() == before


def test_the_campaign_records_the_wan_path_uplink_and_shaper_settings(
        campaign: tuple[Path, Standin, object]) -> None:
    db, net, _ = campaign
    (run,) = rows(db, "SELECT network FROM campaign_runs WHERE campaign = 'w'")
    info = json.loads(run["network"])
    assert (info["path"], info["network"], info["uplink"]) == ("wan", WAN, net.uplink)
    assert info["resolvers"] == [net.resolver]
    wifi = info["profiles"]["wifi"]
    assert wifi["rtt_ms"] == 50.0 and wifi["link"]["rate_down_bps"] == 7_000_000


def test_every_arms_protocol_on_the_wire_is_the_recorded_one(
        campaign: tuple[Path, Standin, object]) -> None:
    """Per host, the protocols caddy saw are the ones recorded. The h3 arm forces QUIC on the
    URL's own origin only (a real site's other hosts are not known before the load); they use
    HTTP/3 as they advertise it (Alt-Svc), as in an everyday browser."""
    db, net, _ = campaign
    for arm, load in loads(db).items():
        assert not [r["url"] for r in load["requests"] if r["failed"]], arm
        assert not load["nav"]["incomplete"], (arm, load["nav"]["incomplete_reasons"])
        hits = seen(net, load)
        wire = {host: {h["family"] for h in hits if h["host"] == host} for host in HOSTS}
        recorded = {host: {r["family"] for r in load["requests"] if r["host"] == host}
                    for host in HOSTS}
        assert wire == recorded, (arm, wire, recorded)
        if arm in ("h1", "h2"):
            assert wire == dict.fromkeys(HOSTS, {arm}), (arm, wire)
        elif arm == "h3":
            assert wire["www.example.com"] == {"h3"}, wire
        elif arm == "h2-parallel:2":  # the proxy's upstreams: h2, two per host
            assert wire == dict.fromkeys(HOSTS, {"h2"}), wire
            ups = rows(db, "SELECT * FROM connections WHERE navigation_id = ? AND upstream = 1",
                       load["nav"]["id"])
            assert {u["connection_id"] for u in ups} == {h["port"] for h in hits}
            assert {u["family"] for u in ups} == {"h2"} and len(ups) == 2 * len(HOSTS), ups


def test_a_policy_rule_on_a_standin_domain_takes_effect(
        campaign: tuple[Path, Standin, object]) -> None:
    db, net, _ = campaign
    load = loads(db)["policy"]
    wire = {h["host"]: h["family"] for h in seen(net, load)}
    assert wire == {"www.example.com": "h2", "img.example.net": "h1"}, wire
    pol = {p["host"]: p["mechanism"] for p in rows(
        db, "SELECT * FROM navigation_policies WHERE navigation_id = ?", load["nav"]["id"])}
    assert pol == {"www.example.com": "proxy-tunnel", "img.example.net": "proxy"}


def test_each_hosts_base_rtt_is_the_profiles_plus_a_small_path_share(
        campaign: tuple[Path, Standin, object]) -> None:
    """The stand-in adds almost nothing, so the page host's base RTT from its set-up (on an
    idle link) is the profile's 50 ms plus a path share of a few ms (veths, the shaper's pass,
    the NAT). A TCP handshake is held to that per load; a QUIC set-up is an upper bound (it holds
    the server's crypto and Chromium's certificate check: a CI run read 130 ms over, the TCP
    set-ups of the same load 2 ms), so per load it is held to no less than the path's round trip;
    one load's TCP handshake to the tight bound plus 20 ms of scheduling; and the report, which
    takes each host's smallest set-up over the campaign's loads, to the tight bound."""
    db, _, _ = campaign
    got = rows(db, "SELECT t.*, n.arm FROM navigation_rtts t JOIN navigations n "
                   "ON n.id = t.navigation_id WHERE n.campaign = 'w'")
    by_arm = {(r["arm"], r["host"]): r for r in got}

    def bound(host: str) -> float:
        # a host whose connections open while the page's own bytes fill the 45 kB buffer also
        # waits in that queue (at most 45 kB at 7 Mbit/s: 51.4 ms)
        return PATH_SHARE_MS + (0.0 if host == "www.example.com" else 51.4)

    tcp_base: dict[str, float] = {}
    for arm, load in loads(db).items():
        for host in HOSTS:
            if arm not in ("h1", "h2", "h3"):  # proxied: the browser's set-ups are loopback's
                assert (arm, host) not in by_arm
                continue
            r = by_arm[(arm, host)]
            quic = {q["family"] for q in load["requests"] if q["host"] == host} == {"h3"}
            assert r["profile_rtt_ms"] == 50.0 and r["source"] == ("quic" if quic else "tcp")
            # below 0 by up to 2 ms: the shaper's delay and Chromium's connect timing are each
            # read on their own clock (measured -1.09 ms in a CI run)
            assert r["path_rtt_ms"] >= -2.0, r
            if not quic:
                assert r["path_rtt_ms"] <= bound(host) + BUSY_CPU_MS, r
                tcp_base[host] = min(tcp_base.get(host, 1e9), r["observed_rtt_ms"])
    for (_, host), r in by_arm.items():
        if r["source"] == "quic":  # the same path's round trip, and its own work on top
            assert r["observed_rtt_ms"] >= tcp_base[host] - 2.0, (r, tcp_base)
    report = json.loads(protolens("report", "--campaign", "w", "--json", db=db).stdout)
    paths = {(r["arm"], h): v for r in report for h, v in (r.get("path_rtt_ms") or {}).items()}
    assert {h for _, h in paths} == set(HOSTS), report
    for (_, host), path in paths.items():
        assert -2.0 <= path <= bound(host), (host, path, report)


def test_the_wan_path_gets_the_profiles_rtt_and_rate(internet: tuple[Standin, object]) -> None:
    """ping gives the RTT the profile adds to the path's own (50 ms, 1 under to 2 over: the
    shaper's own work on each packet is in it); three parallel downloads of
    the stand-in's 2 MB object keep the 7 Mbit/s bottleneck busy, and the shaper's counters
    between two readings give the rate within 5%. Names resolve in the namespace."""
    from protolens.testbed.wan import WanNetwork

    net, before = internet
    wn = WanNetwork.up(WAN, net.uplink, resolvers=[net.resolver])
    try:
        def rtts() -> list[float]:
            ping = sh(*wn.exec_argv(["ping", "-n", "-c", "20", "-i", "0.05",
                                     HOSTS["www.example.com"]]))
            return [float(w.split("=")[1]) for w in ping.split() if w.startswith("time=")]
        # the path's own RTT (the NAT, the stand-in's links, the shaper's queue, unshaped at up)
        # is on top of the profile's, as a real site's is: the wan path is not calibrated
        # (docs/TESTBED.md "Calibration"); a CI run measured 51.15 ms under wifi. The shaped
        # path also carries the shaper's own work on each packet, both ways, which the unshaped
        # one does not: up to 1 ms over on a busy CI machine, and once 1.16 (51.16 against an
        # unshaped 0.2 ms, 2026-11-29), so 2 ms over is allowed, 1 under
        own = rtts()
        wn.shape("wifi")
        shaped = rtts()
        added = statistics.median(shaped) - statistics.median(own)
        assert len(own) >= 18 and len(shaped) >= 18 and -1.0 <= added - 50.0 <= 2.0, \
            (own, shaped)
        rate = busy_rate(wn, net)
        assert abs(rate / 7e6 - 1) < 0.05, f"{rate / 1e6:.3f} Mbit/s"
    finally:
        WanNetwork.down(WAN)
    assert traces() == before


# ---- profiles that change over time: a schedule and a Mahimahi trace ------------------------

WWW = HOSTS["www.example.com"]
TRACE_BPS = 2_000_000
"""The trace's rate: one 1500-byte delivery opportunity every 6 ms."""


@dataclass(frozen=True)
class Shaped:
    """What the three campaigns stored and what was measured around them."""

    db: Path
    trace_profile: Path
    pings: list[tuple[float, float]]
    """(reply time s, RTT ms) of a ping from the client namespace through campaign ``sched``."""
    sched: dict[str, Any]
    """The shaper's stats right after campaign ``sched`` (``schedule_started_ns``: the restart
    before its last load)."""
    trace: dict[str, Any]
    """The shaper's stats right after campaign ``trace``."""
    trace_rtts: list[float]
    trace_rtts_late_ms: float
    """The most the shaper released a packet late while those pings ran."""
    trace_rate: float
    ecmp: dict[str, Any]
    """The shaper's stats right after campaign ``ecmp`` (plain ecmp: no cross traffic)."""


def lab_run(net: Standin, db: Path, name: str, condition: str, reps: int) -> None:
    out = protolens("lab", "run", net.url, "--arms", "h2", "--conditions", condition, "--reps",
                    str(reps), "--quiet-ms", "500", "--campaign", name, "--seed", "1",
                    *wan_args(net), db=db, check=False, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]


ONE_BY_ONE = f"for i in $(seq 40); do sleep 0.00$((RANDOM % 6)); ping -D -n -c 1 {WWW}; done"
"""Pings one at a time, each after a random 0-5 ms: a ping run's sends lock on to the replies it
receives, which come on the trace's 6 ms grid, so every reply would wait alike."""


@pytest.fixture(scope="module")
def shaped(internet: tuple[Standin, object], tmp_path_factory: pytest.TempPathFactory
           ) -> Shaped:
    """A wan network the test brings up, so that it stays up as each campaign left it: campaign
    ``sched`` (slowdown, 2 loads) with a ping running through it, then campaign ``trace`` under a
    profile file with a Mahimahi trace, then the RTT and rate that trace gives, then campaign
    ``ecmp`` (plain ecmp, 1 load)."""
    from protolens.testbed.wan import WanNetwork

    net, _ = internet
    work = tmp_path_factory.mktemp("shaped")
    (work / "2mbit.down").write_text("6\n")
    prof = work / "trace2m.toml"
    prof.write_text('name = "trace2m"\n[link]\nrtt_ms = 20\nbuffer_bytes = 100000\n'
                    '[trace]\ndown = "2mbit.down"\n')
    wn = WanNetwork.up(WAN, net.uplink, resolvers=[net.resolver])
    try:
        ping = subprocess.Popen(wn.exec_argv(["ping", "-D", "-n", "-i", "0.05", WWW]),
                                stdout=subprocess.PIPE, text=True)
        try:
            lab_run(net, work / "lab.db", "sched", "slowdown", 2)
        finally:
            ping.send_signal(signal.SIGINT)  # ping prints what it holds and exits
            pings = ping_replies(ping.communicate(timeout=10)[0])
        sched = wn.stats()
        lab_run(net, work / "lab.db", "trace", str(prof), 1)
        trace = wn.stats(reset=True)  # the campaign's counters; the pings' own from here
        rtts = [r for _, r in ping_replies(sh(*wn.exec_argv(["bash", "-c", ONE_BY_ONE])))]
        rtts_late_ms = wn.stats()["lateness"]["max_ns"] / 1e6
        rate = busy_rate(wn, net)
        wn.stats(reset=True)
        lab_run(net, work / "lab.db", "ecmp", "ecmp", 1)
        return Shaped(work / "lab.db", prof, pings, sched, trace, rtts, rtts_late_ms, rate,
                      wn.stats())
    finally:
        WanNetwork.down(WAN)


PATH_SHARE_MS = 5.0
"""What the wan path adds to a profile's RTT on an idle link (veths, the shaper's pass, the NAT):
the tight bound on a host's base RTT, which the report takes over a campaign's loads."""
BUSY_CPU_MS = 20.0
"""What one load's TCP handshake may read beyond the tight bound: it also waits for a busy CPU
(2 cores: Chromium, the shaper's pass, caddy). CI runs read 9.0 ms on both hosts of one load
(wifi) and 7.3 ms over the profile on plain ecmp's page host."""


def campaign_loads(db: Path, name: str) -> list[dict[str, Any]]:
    """The campaign's loads, oldest first, each with its navigation and its hosts' set-up RTTs."""
    out = rows(db, "SELECT l.*, n.id AS nav, n.started_at_ms AS nav_ms, n.load_ms, "
                   "n.incomplete FROM loads l JOIN navigations n ON n.load_id = l.load_id "
                   "WHERE l.campaign = ? AND l.status = 'ok' ORDER BY l.started_at_ms", name)
    for load in out:
        load["rtts"] = {r["host"]: r["observed_rtt_ms"] for r in rows(
            db, "SELECT * FROM navigation_rtts WHERE navigation_id = ?", load["nav"])}
        assert not load["incomplete"], load
    return out


PRINT_S = 0.1
"""How late ping may print a reply on a loaded machine (its -D stamp is the print): 100 ms of
the ramp is 15 ms of RTT."""

QUEUE_MS = 190_000 * 8 / 80e6 * 1000
"""The most a ping reply can wait behind the page's bytes (the page and its images: 180 kB, and
the headers) in slowdown's 80 Mbit/s bottleneck: 19 ms. A CI run saw 303 ms on the 300 ms
plateau while the second load's images arrived."""


def test_a_schedule_that_plays_once_restarts_for_every_load_and_keeps_its_timeline(
        shaped: Shaped) -> None:
    """slowdown, the shortest schedule (a 2 s ramp, deterministic, no loss): a ping from the
    client namespace through the whole campaign falls back from the plateau once (the restart
    before the second load), and after the last restart every reply's RTT is the timeline's
    between its send and its arrival (the shaper's clock gives the restart: its stats). Each
    load's set-up RTT is on the ramp, not the 300 ms plateau a load without restart gets; the
    last one's is the timeline's between its navigation's start and its document's first
    byte."""
    assert shaped.sched["name"] == "slowdown"
    assert falls_back([r for _, r in shaped.pings]) == 1, shaped.pings
    start = shaped.sched["schedule_started_ns"] / 1e9
    # a reply's send time from its arrival, 5 ms early: ping stamps a reply when it prints it.
    # Replies sent in the first 300 ms after the restart queue behind those sent before it (the
    # shaper never reorders): left out
    sent = [(t - r / 1000 - 0.005, t, r) for t, r in shaped.pings]
    ramp = [(s, t, r) for s, t, r in sent if s >= start + 0.3]
    assert len([1 for s, _, _ in ramp if s - start < 1.9]) >= 20, ramp
    over = []
    for s, t, r in ramp:  # the stand-in's path adds about 1 ms, the page's bytes their queue;
        # a reply printed late (ping descheduled on a busy machine: a CI run read 148 ms where
        # the timeline gave 155 at the estimated send) makes its send look later: PRINT_S
        bound = slowdown_rtt(t - start) + 2.0 + QUEUE_MS
        assert slowdown_rtt(s - start - PRINT_S) - 1.0 <= r <= bound + PRINT_S * 1000, (s, t, r)
        if r > bound:
            over.append((s, t, r))
    # ping reads a reply's RTT when it gets to it: descheduled then, the RTT it prints is that
    # much longer (a CI run, 2026-11-29: 330 ms on the 300 ms plateau, bound 321): one reply in
    # twenty may be over the bound, by no more than PRINT_S
    assert len(over) <= max(1, len(ramp) // 20), (over, len(ramp))
    loads = campaign_loads(shaped.db, "sched")
    assert len(loads) == 2
    assert all(20.0 <= load["rtts"]["www.example.com"] < 285.0 for load in loads), loads
    last = loads[-1]
    (doc,) = rows(shaped.db, "SELECT first_byte_ms FROM requests WHERE navigation_id = ? AND "
                             "is_main_document = 1", last["nav"])
    begun = last["nav_ms"] / 1000 - start
    answered = begun + doc["first_byte_ms"] / 1000
    assert slowdown_rtt(begun - 0.005) - 1.0 <= last["rtts"]["www.example.com"] \
        <= slowdown_rtt(answered) + 2.0, (begun, answered, last["rtts"])
    (run,) = rows(shaped.db, "SELECT network FROM campaign_runs WHERE campaign = 'sched'")
    assert json.loads(run["network"])["profiles"]["slowdown"]["schedule"]["kind"] == "slowdown"


def test_a_trace_profile_gates_the_wan_paths_delivery(shaped: Shaped,
                                                      internet: tuple[Standin, object]) -> None:
    """A profile file whose downlink is a Mahimahi trace (one opportunity every 6 ms: 2 Mbit/s;
    the cheapest trace, written here since ProtoLens ships none) on a 20 ms link. The campaign's
    load could not beat the trace: caddy's bytes for it at 2 Mbit/s take no longer than its
    PLT. In the state the campaign left, the shaper's counters give 2 Mbit/s within 3%, and a
    ping's reply waits for the next opportunity: 20 ms plus 0-6 ms, where a plain 2 Mbit/s rate
    would add 0.3 ms."""
    net, _ = internet
    (load,) = campaign_loads(shaped.db, "trace")
    hits = [e for e in net.log_entries() if load["started_at_ms"] <= float(
        str(e["ts"])) * 1000 <= load["started_at_ms"] + load["wall_ms"]]
    body = sum(int(str(e["size"])) for e in hits)  # the page and its 6 images: 180 kB
    assert body > 180_000 and load["load_ms"] >= body * 8 / TRACE_BPS * 1000, (body, load)
    (run,) = rows(shaped.db, "SELECT network FROM campaign_runs WHERE campaign = 'trace'")
    link = json.loads(run["network"])["profiles"][str(shaped.trace_profile)]["link"]
    trace = shaped.trace_profile.with_name("2mbit.down").resolve()
    assert link["trace_down"] == {"source": str(trace),
                                  "rate_bps": TRACE_BPS} and link["trace_up"] is None
    assert shaped.trace["name"] == "trace2m" and shaped.trace["traces"]["up"] is None
    down = shaped.trace["traces"]["down"]
    assert (down["opportunities"], down["period_ms"]) == (1, 6) and down["used"] > 0
    assert abs(shaped.trace_rate / TRACE_BPS - 1) < 0.03, f"{shaped.trace_rate / 1e6:.3f} Mbit/s"
    rtts = shaped.trace_rtts
    # each ping passes the shaper twice, and each release may be as late as the shaper reports
    # (a CI run on a busy machine read 28.5 ms). The shaper times a packet from when it reads
    # it from its queue, so a stall before that (the VM's vCPU or the ping itself descheduled)
    # is in no lateness it reports: one CI run read a ping at 43.0 ms (of 40; the fastest
    # 20.6) with the shaper at most 1.1 ms late. So nine in ten within the bound, none under
    # the wire's 20 ms, and the trace's 0-6 ms wait seen among those within it.
    most = 28.0 + 2 * shaped.trace_rtts_late_ms
    within = [r for r in rtts if r <= most]
    assert len(rtts) >= 38 and min(rtts) >= 19.0 and len(within) >= 0.9 * len(rtts), \
        (rtts, most)
    assert max(within) - min(within) >= 3.0, rtts


def test_ecmp_with_cross_traffic_is_refused_in_one_line_and_changes_nothing(
        shaped: Shaped, internet: tuple[Standin, object]) -> None:
    """Refused before anything starts, even with a condition that could run beside it: no
    campaign, run or load stored, no request sent, no wan network left."""
    net, before = internet
    tables = ("campaigns", "campaign_runs", "loads")
    count = {t: rows(shaped.db, f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in tables}
    sent = len(net.log_entries())
    out = protolens("lab", "run", net.url, "--arms", "h2", "--conditions", "wifi,ecmp-congested",
                    "--campaign", "e", *wan_args(net), db=shaped.db, check=False, timeout=120)
    assert (out.returncode, out.stdout) == (2, ""), out
    (line,) = out.stderr.splitlines()
    assert line.startswith("error: profile ecmp-congested "), line
    assert "cannot apply to real sites" in line, line
    assert {t: rows(shaped.db, f"SELECT count(*) AS n FROM {t}")[0]["n"] for t in tables} == count
    assert len(net.log_entries()) == sent and traces() == before


def test_plain_ecmp_applies_to_a_real_pages_flows(shaped: Shaped) -> None:
    """Plain ecmp (IFIP'18 Sec. III-C: 10 Mbit/s access, two equal-cost 10 Mbit/s paths chosen
    per flow, 20 ms; no cross traffic, so nothing has to reach the far side) on the wan path: the
    campaign's load is recorded complete, the shaper ran that profile and hashed every flow of
    the load by its own addresses on this path (the client namespace and the stand-in's
    public-looking server: the hash the paper gives, H = SA^DA^SP^DP^PT mod 2), and the set-up
    RTT the record took for the host is the profile's 20 ms plus the small path share (and, one
    load's handshake, a busy CPU's wait: BUSY_CPU_MS)."""
    from protolens.shaper.ecmp import ecmp_path

    (load,) = campaign_loads(shaped.db, "ecmp")
    assert load["load_ms"] is not None and load["load_ms"] > 0, load
    assert shaped.ecmp["name"] == "ecmp", shaped.ecmp.get("name")
    flows = [f for f in shaped.ecmp["flows"] if int(f["proto"]) in (6, 17) and
             int(f["server_port"]) == 443]
    assert flows, shaped.ecmp["flows"]
    assert {f["server_ip"] for f in flows} <= set(HOSTS.values()), flows
    for f in flows:
        assert f["path"] == ecmp_path(f["client_ip"], int(f["client_port"]), f["server_ip"],
                                      int(f["server_port"]), int(f["proto"])), f
    (r,) = rows(shaped.db, "SELECT * FROM navigation_rtts WHERE navigation_id = ? AND "
                           "host = 'www.example.com'", load["nav"])
    assert (r["profile_rtt_ms"], r["source"]) == (20.0, "tcp"), r
    assert -2.0 <= r["path_rtt_ms"] <= PATH_SHARE_MS + BUSY_CPU_MS, r
