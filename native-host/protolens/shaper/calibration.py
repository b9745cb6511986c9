"""How much the testbed's path adds to every round trip by itself (the veth pairs, both NFQUEUE
passes through the shaper, its timer wake-ups, ping's own cost), measured when the testbed comes
up so the shaper can subtract it from a profile's configured delay (issue 13 target 4: fiber's
5 ms RTT came out 5.49 ms, +9.8%, without it).

Pure: the probe's config text, ping output in, a ``Calibration`` out. The probe holds packets
for ``PROBE_DELAY_NS`` each way, so the shaper's timer path is measured as it runs under a
profile (a zero delay would release packets without a timer and miss that part).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

PROBE_DELAY_NS = 1_000_000
"""Configured one-way delay during the probe (RTT 2 ms)."""
PROBE_COUNT = 100
PROBE_INTERVAL_S = 0.01
MIN_REPLIES = 50
_TIME = re.compile(r"\btime=([\d.]+) ms\b")


class CalibrationError(ValueError):
    """The probe gave too few replies to trust (one-line message)."""


@dataclass(frozen=True)
class Calibration:
    path_rtt_ns: int
    """Subtracted from each configured RTT (half from each direction's delay), never below 0."""
    probe_rtt_ns: int
    """The RTT the shaper was configured for during the probe."""
    replies: int
    median_rtt_ns: int
    mean_rtt_ns: int
    p90_rtt_ns: int
    measured_at: str
    """UTC, ISO 8601."""


def probe_config() -> str:
    """The shaper config the probe runs under: no rate, no loss, a fixed delay each way."""
    return ("# protolens shaper config for the path-latency probe (shaper/calibration.py)\n"
            f"name calibration\nseed 1\nat 0 both delay_ns={PROBE_DELAY_NS}\n")


def ping_rtts_ms(text: str) -> list[float]:
    """The ``time=`` of every reply in ``ping -n`` output."""
    return [float(m.group(1)) for m in _TIME.finditer(text)]


def calibrate(rtts_ms: list[float], measured_at: str) -> Calibration:
    """The path's own RTT: the median probe RTT minus the configured probe RTT. The median,
    because one scheduling stall on a shared machine must not move every later measurement."""
    if len(rtts_ms) < MIN_REPLIES:
        raise CalibrationError(f"path latency probe: {len(rtts_ms)} of {PROBE_COUNT} pings "
                               f"answered (need {MIN_REPLIES}); is the shaper forwarding?")
    ns = sorted(round(r * 1e6) for r in rtts_ms)
    median = round(statistics.median(ns))
    probe = 2 * PROBE_DELAY_NS
    return Calibration(path_rtt_ns=max(0, median - probe), probe_rtt_ns=probe, replies=len(ns),
                       median_rtt_ns=median, mean_rtt_ns=round(statistics.fmean(ns)),
                       p90_rtt_ns=ns[min(len(ns) - 1, int(0.9 * len(ns)))],
                       measured_at=measured_at)
