"""How much the testbed's path adds to every round trip by itself (the veth pairs, both NFQUEUE
passes through the shaper, the shaper's and ping's wake-ups), measured when the testbed comes up
so the shaper can take it off a profile's configured delay (measured: fiber's 5 ms RTT
came out 5.49 ms, +9.8%, without it; docs/TESTBED.md).

Measured, not assumed constant: the excess grows with how long packets are held (a CPU left
idle longer wakes up later; measured here: 110 us at a 2 ms RTT, about 180 us at 5 and 50 ms).
So the probe runs at two configured RTTs and ``Calibration.path_rtt_ns`` interpolates between
them. Pure: probe configs and ping output in, a ``Calibration`` out.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PROBES = ((2_000_000, 60, 0.01), (9_000_000, 60, 0.015))
"""(configured RTT in ns, pings, interval in s) of each probe: about 1.5 s in all. Both under
10 ms: iputils ping prints an RTT in 10 us steps from 1 to 10 ms but in 100 us steps from 10 ms
on (``print_timestamp`` in ping_common.c), too coarse for a median of a 100 us effect."""
MIN_REPLIES = 40
_TIME = re.compile(r"\btime=([\d.]+) ms\b")


class CalibrationError(ValueError):
    """A probe gave too few replies to trust (one-line message)."""


@dataclass(frozen=True)
class Probe:
    rtt_ns: int
    """The RTT the shaper was configured for (no rate, no loss)."""
    replies: int
    median_rtt_ns: int
    mean_rtt_ns: int
    p90_rtt_ns: int
    path_rtt_ns: int
    """Median minus configured: what the path adds at this RTT (never below 0). The median,
    because one scheduling stall on a shared machine must not move every later measurement."""


@dataclass(frozen=True)
class Calibration:
    probes: tuple[Probe, ...]
    """Sorted by configured RTT."""
    measured_at: str
    """UTC, ISO 8601."""

    def path_rtt_ns(self, rtt_ns: float) -> int:
        """The path's own RTT at a configured RTT: linear between probes, flat beyond them."""
        ps = self.probes
        if rtt_ns <= ps[0].rtt_ns:
            return ps[0].path_rtt_ns
        for a, b in zip(ps, ps[1:], strict=False):
            if rtt_ns <= b.rtt_ns:
                f = (rtt_ns - a.rtt_ns) / (b.rtt_ns - a.rtt_ns)
                return round(a.path_rtt_ns + f * (b.path_rtt_ns - a.path_rtt_ns))
        return ps[-1].path_rtt_ns

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Calibration:
        """From the state file's JSON (``dataclasses.asdict`` of one)."""
        return cls(tuple(Probe(**p) for p in d["probes"]), str(d["measured_at"]))


def probe_config(rtt_ns: int) -> str:
    """The shaper config a probe runs under: no rate, no loss, half the RTT each way."""
    return ("# protolens shaper config for the path-latency probe (shaper/calibration.py)\n"
            f"name calibration\nseed 1\nat 0 up delay_ns={rtt_ns // 2}\n"
            f"at 0 down delay_ns={rtt_ns - rtt_ns // 2}\n")


def ping_rtts_ms(text: str) -> list[float]:
    """The ``time=`` of every reply in ``ping -n`` output."""
    return [float(m.group(1)) for m in _TIME.finditer(text)]


def probe(rtt_ns: int, rtts_ms: list[float], sent: int) -> Probe:
    if len(rtts_ms) < MIN_REPLIES:
        raise CalibrationError(f"path latency probe at {rtt_ns / 1e6:g} ms: {len(rtts_ms)} of "
                               f"{sent} pings answered (need {MIN_REPLIES}); is the shaper "
                               "forwarding?")
    ns = sorted(round(r * 1e6) for r in rtts_ms)
    median = round(statistics.median(ns))
    return Probe(rtt_ns=rtt_ns, replies=len(ns), median_rtt_ns=median,
                 mean_rtt_ns=round(statistics.fmean(ns)),
                 p90_rtt_ns=ns[min(len(ns) - 1, int(0.9 * len(ns)))],
                 path_rtt_ns=max(0, median - rtt_ns))
