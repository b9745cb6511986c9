"""Fairness between two competing page loads on one bottleneck (pure): pairs of arms, per-side
throughput in 100 ms bins, shares of the bottleneck, the Jain index (IFIP'18, shared/seeds/000,
Sec. V-D and Fig. 7: two clients load a page at the same moment over a 7 Mbit/s bottleneck; the
paper measured each protocol's bandwidth share over time with tcpdump).

Each side's flows are told apart by the server address it talks to (the testbed's server
address, or a second address of the same server: lab/fairness_run.py), so attribution needs no
guess about which browser owns which client port.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import t as student_t  # type: ignore[import-untyped]

from protolens.arms import Arm, ArmError, known_arms, parse_lab_arm
from protolens.lab.pcap import Packet

BIN_MS = 100
"""Throughput bins: 100 ms (ProtoLens's choice: the paper does not say its bin width)."""
SIDES = ("a", "b")
ACTIVE_EDGE = 0.01
"""A side is loading from 1% to 99% of its bytes (ProtoLens's choice: the paper plots whole
runs; the edges keep one stray packet from counting as loading)."""
BULK: Literal["bulk"] = "bulk"
"""A non-browser side: one HTTP/1.1 connection downloading the page's objects (curl)."""
Side = Arm | Literal["bulk"]
"""What loads on one side: a browser under an arm, or ``BULK``; ``str(side)`` is stored."""


class PairError(ValueError):
    """A ``--pairs`` value that cannot be run; the message is one line."""


@dataclass(frozen=True)
class Pair:
    a: Side
    b: Side

    @property
    def name(self) -> str:
        return f"{self.a}:{self.b}"


def _side(text: str) -> Side | None:
    if text == BULK:
        return BULK
    try:
        arm = parse_lab_arm(text)
    except ArmError:
        return None
    return None if arm.name == "policy" else arm


def _split(item: str) -> list[Side]:
    """``h2-parallel:2:h3`` -> the one split into two valid sides (an arm may hold a colon)."""
    tokens = item.split(":")
    splits = [[_side(":".join(tokens[:i]).strip()), _side(":".join(tokens[i:]).strip())]
              for i in range(1, len(tokens))]
    valid = [[a, b] for a, b in splits if a is not None and b is not None]
    if len(valid) == 1:
        return valid[0]
    if len(tokens) < 2:
        raise PairError(f"pair {item!r}: give exactly two arms, A:B (e.g. h2:h3)")
    raise PairError(f"pair {item!r}: not two arms A:B (arms: {known_arms()}, bulk; "
                    "policy cannot be a side)")


def proxied(side: Side) -> bool:
    """The side loads through the lab proxy."""
    return isinstance(side, Arm) and side.proxied


def parse_pairs(text: str) -> list[Pair]:
    """``h2:h3,h2-parallel:2:h3`` -> pairs; one-line ``PairError`` for anything else."""
    pairs = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        arms = _split(item)
        if sum(proxied(a) for a in arms) > 1:
            raise PairError(f"pair {item!r}: at most one side can go through the lab proxy")
        if arms.count(BULK) > 1:
            raise PairError(f"pair {item!r}: at most one side can be a bulk flow")
        pairs.append(Pair(*arms))
    if not pairs:
        raise PairError("--pairs: give at least one pair, e.g. h2:h3")
    return pairs


@dataclass(frozen=True)
class Series:
    """Downlink bytes per side per bin, from the first packet of either side."""

    start_ns: int
    bin_ms: int
    bytes: Mapping[str, tuple[int, ...]]

    def active(self, side: str) -> tuple[int, int] | None:
        """The bins in which ``side`` moved the middle 98% of its bytes (from 1% to 99% of
        its total): stray packets after a load (a FIN, a TLS close when the browser quits) do
        not stretch it."""
        series = self.bytes[side]
        total = sum(series)
        if total == 0:
            return None
        cum, first, last = 0, None, 0
        for i, b in enumerate(series):
            cum += b
            if first is None and cum > ACTIVE_EDGE * total:
                first = i
            if cum < (1 - ACTIVE_EDGE) * total:
                last = i + 1
        assert first is not None
        return first, max(first, min(last, len(series) - 1))

    def contention(self) -> tuple[int, int] | None:
        """Bins where both sides were loading: the later start to the earlier end."""
        spans = [self.active(s) for s in SIDES]
        if any(s is None for s in spans):
            return None
        lo = max(s[0] for s in spans if s is not None)
        hi = min(s[1] for s in spans if s is not None)
        return (lo, hi) if lo <= hi else None


def bin_downlink(pkts: Iterable[Packet], servers: Mapping[str, str],
                 bin_ms: int = BIN_MS) -> Series:
    """Bytes sent by each side's server address to the client, in ``bin_ms`` bins."""
    rows = [(p.ts_ns, servers[p.src], p.length) for p in pkts if p.src in servers]
    if not rows:
        return Series(0, bin_ms, {s: () for s in SIDES})
    start = min(r[0] for r in rows)
    width = bin_ms * 1_000_000
    n = (max(r[0] for r in rows) - start) // width + 1
    out = {s: [0] * n for s in SIDES}
    for ts, side, length in rows:
        out[side][(ts - start) // width] += length
    return Series(start, bin_ms, {s: tuple(v) for s, v in out.items()})


HEADERS_MAX = 60
"""An IPv4 header with a TCP header and all its options is at most 60 bytes (20 + 40): per
downlink packet, a flow's bytes beyond this are payload (a lower bound)."""

USED_MIN_PAYLOAD = 4096
"""A flow is a connection the page used when its downlink carried more payload than a TLS
handshake alone. Chromium sometimes opens a connection, completes the handshake and never sends a
request on it; the recorder never sees it. Measured on the testbed: an unused h2 connection with
a resumed handshake carried 837 bytes in 7 downlink packets (at most 417 of payload), an unused
h1 one 323 bytes in 5. A full TLS 1.3 handshake with the testbed's certificate chain is about
2 KB (an estimate from the chain's size, not measured here). 4 KB is twice that: a page
object smaller than the rest of 4 KB, alone on a connection of its own, would be missed (the
fairness pages' objects are 435 KB)."""


def wire_connections(flows: Iterable[Mapping[str, Any]], server_ip: str) -> int:
    """Connections of one side as on the wire: the shaper's flows to ``server_ip`` whose downlink
    carried more payload than a handshake (``USED_MIN_PAYLOAD``)."""
    return len({(f["proto"], f["client_port"]) for f in flows
                if f.get("server_ip") == server_ip
                and int(f.get("bytes_down", 0)) - HEADERS_MAX * int(f.get("packets_down", 0))
                > USED_MIN_PAYLOAD})


def start_lead_ms(flows: Iterable[Mapping[str, Any]], server_ips: Sequence[str]
                  ) -> list[float | None]:
    """Per side (its server address), how long after the earlier side its first packet went
    through the shaper (its flows' ``first_ns``), in ms: 0 for the side that started first, None
    for a side with no flow. A head start of a round trip or more lets one side's window grow
    before the other's starts (lab/fairness_run.py START_LEAD_MS)."""
    firsts = [min((int(f["first_ns"]) for f in flows
                   if f.get("server_ip") == ip and f.get("first_ns") is not None), default=None)
              for ip in server_ips]
    known = [t for t in firsts if t is not None]
    return [None if t is None else (t - min(known)) / 1e6 for t in firsts]


def jain(xs: Sequence[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when equal, 1/n when one takes all."""
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq > 0 else None


@dataclass(frozen=True)
class RepResult:
    """One repetition of one pair."""

    bytes: Mapping[str, int]
    """Downlink bytes per side over the whole capture."""
    share: Mapping[str, float | None]
    """Each side's share of the bytes while both were loading (None: they never overlapped)."""
    mbps: Mapping[str, float | None]
    """Each side's throughput while both were loading."""
    jain: float | None
    contention_ms: int


def summarize(series: Series) -> RepResult:
    total = {s: sum(series.bytes[s]) for s in SIDES}
    window = series.contention()
    if window is None:
        return RepResult(total, dict.fromkeys(SIDES), dict.fromkeys(SIDES), None, 0)
    lo, hi = window
    during = {s: sum(series.bytes[s][lo:hi + 1]) for s in SIDES}
    seconds = (hi - lo + 1) * series.bin_ms / 1000
    both = sum(during.values())
    share = {s: (during[s] / both if both else None) for s in SIDES}
    mbps = {s: during[s] * 8 / seconds / 1e6 for s in SIDES}
    return RepResult(total, share, dict(mbps), jain([during[s] for s in SIDES]),
                     int(seconds * 1000))


def shares_over_time(series: Series) -> dict[str, list[float | None]]:
    """Fig. 7: each side's share of each bin's bytes (None where the bin is empty)."""
    n = len(series.bytes["a"])
    out: dict[str, list[float | None]] = {s: [] for s in SIDES}
    for i in range(n):
        tot = series.bytes["a"][i] + series.bytes["b"][i]
        for s in SIDES:
            out[s].append(series.bytes[s][i] / tot if tot else None)
    return out


@dataclass(frozen=True)
class ShareSummary:
    """A side's mean share over repetitions, with a 95% bootstrap interval over them."""

    mean: float | None
    low: float | None
    high: float | None
    n: int


def mean_share(values: Sequence[float | None]) -> ShareSummary:
    """Mean share over repetitions with a Student-t 95% interval, clipped to [0, 1].

    Not a percentile bootstrap: with 4 repetitions its interval is about half as wide as it should
    be (it covered the true mean in about 80% of simulated runs, not 95%; a CI run saw h2:h2 at
    0.41 [0.37, 0.48] when the sides were in fact equal)."""
    xs = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(xs) == 0:
        return ShareSummary(None, None, None, 0)
    mean = float(xs.mean())
    if len(xs) == 1:
        return ShareSummary(mean, None, None, 1)
    half = float(student_t.ppf(0.975, len(xs) - 1)) * float(xs.std(ddof=1)) / math.sqrt(len(xs))
    return ShareSummary(mean, max(0.0, mean - half), min(1.0, mean + half), len(xs))


def summary_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per pair and side: repetitions, mean share with its interval, throughput, connections,
    the pair's mean Jain index, the side's median PLT and its largest start behind the other side
    (``start_ms_max``; ``store.fairness.fairness_rows``)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((str(r["pair"]), str(r["side"])), []).append(r)
    out: list[dict[str, Any]] = []
    for (pair, side), items in sorted(groups.items()):
        share = mean_share([_num(r.get("share")) for r in items])
        mbps = [v for v in (_num(r.get("mbps")) for r in items) if v is not None]
        jains = [v for v in (_num(r.get("jain")) for r in items) if v is not None]
        plts = [v for v in (_num(r.get("plt_ms")) for r in items) if v is not None]
        conns = [v for v in (_num(r.get("connections")) for r in items) if v is not None]
        leads = [v for v in (_num(r.get("start_ms")) for r in items) if v is not None]
        out.append({"pair": pair, "side": side, "arm": items[0]["arm"], "n": len(items),
                    "share_mean": share.mean, "share_ci_low": share.low,
                    "share_ci_high": share.high,
                    "mbps_mean": float(np.mean(mbps)) if mbps else None,
                    "jain_mean": float(np.mean(jains)) if jains else None,
                    "plt_median_ms": float(np.median(plts)) if plts else None,
                    "connections_median": float(np.median(conns)) if conns else None,
                    "start_ms_max": max(leads) if leads else None})
    return out


START_SPREAD_MS = 30.0
"""The most a repetition's sides may start apart and be kept: with the common start they
started 0-15 ms apart (docs/RESEARCH.md), and once, in a CI run, 48 ms; a side that leads by a
round trip (50 ms on ``wifi``) grows its window before the other starts (ProtoLens's choice:
twice the spread measured, under ``wifi``'s round trip)."""


BULK_DELAY_MS = 40.0
"""How long a bulk side waits after the common start before its download begins, at first: a
browser still has to navigate once its start comes, and its first packet left 26-61 ms after the
bulk side's (11 tries on an idle machine, 2026-11-30, ``lab fairness --pairs bulk:h1``), over
``START_SPREAD_MS`` in 9 of them. 40 ms is about the middle of that range (ProtoLens's choice);
``bulk_delay_after`` then follows what the run's own tries show."""

BULK_DELAY_MAX_MS = 500.0
"""The most ``bulk_delay_after`` waits (ten times the lag measured: beyond it something is
wrong with the browser side, and a later start would not mend it)."""


def bulk_delay_after(delay_ms: float, rows: Sequence[Mapping[str, Any]]) -> float:
    """The bulk side's delay for the next try of a pair, after a try whose rows are ``rows``:
    the delay moved by how far the browser side started after the bulk side (negative when it
    started first), within 0 and ``BULK_DELAY_MAX_MS``; unchanged when the rows have no bulk
    side or either start is unknown."""
    starts = {str(r.get("arm")) == BULK: _num(r.get("start_ms")) for r in rows}
    browser, bulk = starts.get(False), starts.get(True)
    if len(rows) != 2 or browser is None or bulk is None:
        return delay_ms
    return min(BULK_DELAY_MAX_MS, max(0.0, delay_ms + browser - bulk))


def late_start(rows: Sequence[Mapping[str, Any]], limit_ms: float = START_SPREAD_MS
               ) -> str | None:
    """Why a repetition's sides did not start together (a side more than ``limit_ms`` after the
    other), or None: such a repetition is run again (``lab fairness``)."""
    leads = [(v, str(r["side"])) for r in rows if (v := _num(r.get("start_ms"))) is not None]
    if not leads:
        return None
    lead, side = max(leads)
    return f"side {side} started {lead:.0f} ms after the other" if lead > limit_ms else None


def progress_line(pair: str, rep: int, rows: Sequence[Mapping[str, Any]]) -> str:
    """One repetition as ``lab fairness`` reports it while it runs: each side's share and how far
    apart the sides started (``start_ms``)."""
    shares = "  ".join(f"{r['arm']} {r['share']:.2f}" if r.get("share") is not None
                       else f"{r['arm']} n/a" for r in rows)
    leads = [(float(r["start_ms"]), str(r["side"])) for r in rows if r.get("start_ms") is not None]
    start = ""
    if len(leads) == len(rows) == 2:
        lead, side = max(leads)
        start = (" (both sides started within 1 ms)" if lead < 1 else
                 f" (side {side} started {lead:.0f} ms after the other)")
    return f"{pair} rep {rep}: share {shares}{start}"


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
