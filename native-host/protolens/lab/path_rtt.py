"""The path's own share of a shaped load (pure): what the profile adds to every round trip, what
each host's connection set-up says the whole round trip was, and the difference, which is the
path's (the wan path's internet, or the testbed's veth and shaper passes).

A connection's set-up (docs/RECORD.md "Timings") takes a known number of round trips: TCP's
handshake is one (``connect_ms - tls_ms``: SYN to SYN-ACK, answered by the server's kernel with no
application work), QUIC's is one (``connect_ms``, which also holds the server's crypto, so it is an
upper bound). The host's base RTT is the set-up of its first connection (the one whose first
request started earliest): Chromium clamps load times earlier than a request's start to that
start, so a socket whose connect another request's job began (HTTP/1.1 hands a new socket to
whichever request waits for one) reads its handshake short by how long before its request that
connect began. Two CI runs' h1 loads read 45.5 and 47.7 ms under a 50 ms profile so, each on the
page host's second connection (DNS 0.0 ms: resolved for the document), against 50.9 and 53.3 on
its first; the smallest set-up over the connections, the rule before, took them. The first
connection's request started its own connect, so nothing before it could be clamped. Ties (and
records without ``first_ms``) take the smallest. Connections to the lab proxy (loopback) say
nothing of the path and are left out.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from protolens.shaper.records import Profile
from protolens.shaper.schedule import expand


@dataclass(frozen=True)
class ProfileRtt:
    """The round trip a profile adds: its static RTT, or the median and range of a schedule's."""

    rtt_ms: float
    low_ms: float
    high_ms: float


def profile_rtt(profile: Profile) -> ProfileRtt:
    """The RTT the shaper adds under ``profile`` (one-way delays up + down; a schedule's every
    value over its timeline, once per instant it changes; steps at time 0 replace the link's
    own delay, which then never runs)."""
    delays = {"up": profile.link.delay_up_ns, "down": profile.link.delay_down_ns}
    by_time: dict[int, list[tuple[str, int]]] = {}
    for step in expand(profile).steps:
        if step.key == "delay_ns":
            for d in (("up", "down") if step.dir == "both" else (step.dir,)):
                by_time.setdefault(step.at_ns, []).append((d, int(step.value)))
    values = [] if 0 in by_time else [sum(delays.values()) / 1e6]
    for at in sorted(by_time):
        delays.update(by_time[at])
        values.append(sum(delays.values()) / 1e6)
    return ProfileRtt(round(statistics.median(values), 3), min(values), max(values))


def profile_settings(profile: Profile) -> dict[str, Any]:
    """What a campaign records of a condition's shaper settings: the link per direction, loss
    model, ECMP paths, schedule and trace sources, and where the profile came from (a trace's
    opportunities are left out: the file named holds them)."""
    link = asdict(profile.link)
    for side in ("trace_up", "trace_down"):
        trace = getattr(profile.link, side)
        link[side] = None if trace is None else {"source": trace.source,
                                                 "rate_bps": round(trace.rate_bps)}
    rtt = profile_rtt(profile)
    return {"name": profile.name, "path": profile.path, "description": profile.description,
            "rtt_ms": rtt.rtt_ms, "rtt_range_ms": [rtt.low_ms, rtt.high_ms], "link": link,
            "ecmp": None if profile.ecmp is None else asdict(profile.ecmp),
            "schedule": None if profile.schedule is None else
            {"kind": profile.schedule.kind, "loop": profile.schedule.loop,
             "params": dict(profile.schedule.params)}}


def wan_refusal(profile: Profile) -> str | None:
    """Why ``profile`` cannot apply to real sites, or None. ECMP's cross traffic is iperf3
    flows between the testbed's own namespaces (IFIP'18 Sec. III-C.1's loaded path): the
    internet has no server of ours to carry them."""
    e = profile.ecmp
    if e is not None and e.cross_traffic_load > 0:
        return (f"profile {profile.name} loads one ECMP path with iperf3 cross traffic between "
                "the testbed's namespaces: it cannot apply to real sites (profile 'ecmp' keeps "
                "the two paths without it)")
    return None


@dataclass(frozen=True)
class HostRtt:
    """One host's base RTT in one load, beside the profile's."""

    host: str
    observed_rtt_ms: float
    """The one-round-trip set-up of the host's first connection (the module's docstring)."""
    profile_rtt_ms: float
    path_rtt_ms: float
    """``observed - profile``: the path's own share (may come out slightly negative when the
    path adds less than the set-up's measuring granularity)."""
    source: str
    """``tcp`` (TCP handshake) or ``quic`` (QUIC handshake, an upper bound)."""
    connections: int


def one_round_trip(conn: Mapping[str, Any]) -> tuple[float, str] | None:
    """One round trip of a connection's set-up, and what it was read from; None when the
    connection has no set-up, or is the lab proxy's (loopback) or an upstream one."""
    if conn.get("upstream") or str(conn.get("remote_ip") or "").startswith(("127.", "::1")):
        return None
    connect, tls = conn.get("connect_ms"), conn.get("tls_ms")
    if connect is None or connect <= 0:
        return None
    if conn.get("family") == "h3":
        return float(connect), "quic"
    if tls is None or tls < 0 or connect - tls <= 0:
        return None
    return float(connect) - float(tls), "tcp"


def host_rtts(conns: Iterable[Mapping[str, Any]], prof: ProfileRtt) -> list[HostRtt]:
    """Per host, its base RTT from its first connection's set-up, beside the profile's."""
    best: dict[str, tuple[tuple[bool, float, float], tuple[float, str]]] = {}
    count: dict[str, int] = {}
    for c in conns:
        got = one_round_trip(c)
        if got is None:
            continue
        host = str(c.get("host"))
        count[host] = count.get(host, 0) + 1
        first = c.get("first_ms")
        order = (first is None, float(first) if first is not None else 0.0, got[0])
        if host not in best or order < best[host][0]:
            best[host] = (order, got)
    return [HostRtt(h, round(v, 3), prof.rtt_ms, round(v - prof.rtt_ms, 3), src, count[h])
            for h, (_, (v, src)) in sorted(best.items())]


def rtt_note(profile_ms: float | None, path_ms: float | None) -> str:
    """States which of the two dominates a host's round trip: the profile or its own path."""
    if profile_ms is None or path_ms is None:
        return ""
    if path_ms > profile_ms:
        return f"path slower than profile ({path_ms:.0f} > {profile_ms:.0f} ms)"
    return f"profile slower than path ({profile_ms:.0f} > {max(path_ms, 0):.0f} ms)"


def path_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per page x condition x host over a campaign's stored rows (``store/paths.py``
    ``campaign_rtts``): the profile's RTT, the host's base RTT (the smallest over the loads: a
    load's own bytes queue in the shaper's buffer ahead of a later connection's set-up), the
    path's share of it and which of the two dominates."""
    cells: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(str(r["page"]), str(r["condition"]), str(r["host"]))].append(r)
    out = []
    for (page, cond, host), got in sorted(cells.items()):
        best = min(got, key=lambda r: float(r["observed_rtt_ms"]))
        profile = float(best["profile_rtt_ms"])
        path = round(float(best["observed_rtt_ms"]) - profile, 3)
        out.append({"page": page, "condition": cond, "host": host, "profile_rtt_ms": profile,
                    "path_rtt_ms": path, "base_rtt_ms": float(best["observed_rtt_ms"]),
                    "source": best["source"], "loads": len(got), "note": rtt_note(profile, path)})
    return out


def by_cell(table: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per page x condition: the profile's RTT and each host's path RTT (``report``'s columns
    ``profile_rtt_ms`` and ``path_rtt_ms``)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in table:
        cell = out.setdefault((r["page"], r["condition"]),
                              {"profile_rtt_ms": r["profile_rtt_ms"], "path_rtt_ms": {}})
        cell["path_rtt_ms"][r["host"]] = r["path_rtt_ms"]
    return out
