"""The frozen records a link profile is made of (pure data, no parsing): the static link per
direction, Gilbert-Elliott loss, Mahimahi delivery traces, ECMP paths, a schedule's generator
parameters, and the profile.

``profile.py`` builds them from TOML; ``schedule.py`` and ``config.py`` read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GilbertElliott:
    """Two-state loss (Gilbert-Elliott) per packet, applied to the direction(s) named."""

    p: float
    """P(good -> bad) per packet."""
    r: float
    """P(bad -> good) per packet."""
    bad_loss: float
    """Drop probability in the bad state."""
    good_loss: float
    """Drop probability in the good state."""


MTU_BYTES = 1500
"""Bytes one trace delivery opportunity carries (Mahimahi's LinkShell; shaper/trace.c)."""


@dataclass(frozen=True)
class Trace:
    """A Mahimahi packet-delivery trace: the bottleneck releases packets only at these
    opportunities (ms from the start, nondecreasing), looped with the last one as the period."""

    opportunities_ms: tuple[int, ...]
    source: str
    """The file it was read from."""

    @property
    def period_ms(self) -> int:
        return self.opportunities_ms[-1]

    @property
    def rate_bps(self) -> float:
        """The mean rate the trace offers: one MTU per opportunity over the period."""
        return MTU_BYTES * 8 * len(self.opportunities_ms) / (self.period_ms / 1000)


@dataclass(frozen=True)
class Link:
    """The static link, per direction (up = client to server)."""

    rate_up_bps: int
    """Bottleneck rate, 0 = unlimited."""
    rate_down_bps: int
    delay_up_ns: int
    """One-way delay; a profile's ``rtt_ms`` is split evenly."""
    delay_down_ns: int
    buffer_bytes: int
    """Drop-tail limit of each direction's bottleneck queue, 0 = unlimited."""
    loss_up: float
    """Bernoulli drop probability."""
    loss_down: float
    jitter_ns: int
    """Stdev of per-packet normal jitter, clamped so packets never reorder."""
    gilbert_elliott: GilbertElliott | None
    trace_up: Trace | None = None
    """Delivery trace replacing ``rate_up_bps`` (delay, loss and buffer still apply)."""
    trace_down: Trace | None = None


@dataclass(frozen=True)
class Ecmp:
    """Two equal-cost paths after the access link, chosen per flow (IFIP'18 Sec. III-C)."""

    path_rate_bps: int
    path_buffer_bytes: int
    cross_traffic_load: float
    """Share of the congested path's rate that real iperf3 flows load (0 = none)."""
    cross_traffic_flows: int
    congested_path: int


@dataclass(frozen=True)
class ScheduleSpec:
    """How parameters change over time; expanded into steps by ``schedule.expand``."""

    kind: str
    loop: bool
    params: tuple[tuple[str, Any], ...]
    """The generator's parameters as given in the file (sorted key/value pairs)."""

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    source: str
    """Paper and section, or "chosen by ProtoLens because ..." for every number."""
    link: Link
    ecmp: Ecmp | None
    schedule: ScheduleSpec | None
    path: str
    """The file it was read from."""
