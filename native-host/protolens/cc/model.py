"""Records of the CC fingerprint: the queue timeline a probe recorded, the evidence the
classifier read from it, and its verdict. Frozen, JSON-friendly (``to_json`` / ``from_json``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

LOSS_BASED = "loss-based"
DELAY_BASED = "delay-based"
TOO_SMALL = "too-small-to-judge"
INCONCLUSIVE = "inconclusive"
LABELS = (LOSS_BASED, DELAY_BASED, TOO_SMALL, INCONCLUSIVE)


@dataclass(frozen=True)
class QueueTimeline:
    """The bottleneck queue (server -> client direction) during one fetch."""

    interval_ms: float
    """Spacing of the samples (the shaper samples every 10 ms)."""
    queue_bytes: tuple[int, ...]
    """Occupancy in bytes at ``t0_ms + i * interval_ms`` after the request was sent."""
    t0_ms: float
    """Time of sample 0 relative to the request (negative: the log started before it)."""
    buffer_bytes: int
    """The drop-tail limit."""
    rate_bps: int
    """The bottleneck's rate."""
    packet_bytes: int
    """The IP packet size the probe asked the server for (advmss + 40)."""
    first_drop_ms: float | None
    """First drop of the probed flow, server -> client, after the request; None = no drop."""
    drops: int
    """Drop-tail drops in the queue during the probe."""

    def times_ms(self) -> list[float]:
        return [self.t0_ms + i * self.interval_ms for i in range(len(self.queue_bytes))]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["queue_bytes"] = list(self.queue_bytes)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> QueueTimeline:
        return cls(interval_ms=float(d["interval_ms"]),
                   queue_bytes=tuple(int(x) for x in d["queue_bytes"]),
                   t0_ms=float(d["t0_ms"]), buffer_bytes=int(d["buffer_bytes"]),
                   rate_bps=int(d["rate_bps"]),
                   packet_bytes=int(d["packet_bytes"]),
                   first_drop_ms=None if d.get("first_drop_ms") is None
                   else float(d["first_drop_ms"]), drops=int(d.get("drops", 0)))


@dataclass(frozen=True)
class Evidence:
    """What the label rests on."""

    max_queue_bytes: int
    max_queue_fraction: float
    """Of the buffer (the paper's Table 1 reads it as % of a 100-packet queue)."""
    time_to_max_ms: float | None
    """From the request to the first sample at the maximum."""
    first_loss_ms: float | None
    """From the request to the first drop of the probed flow; None = none."""
    bytes: int
    """Body bytes fetched."""
    mss: int
    """Segment payload the client advertised (advmss)."""
    rtt_ms: float
    """Base RTT the probe used (the measured one padded as the paper does)."""
    transfer_ms: float
    """From the request to the last body byte."""
    overflow_bytes: int
    """Body bytes a loss-based slow start needs to send before it overflows the queue
    (``classify.overflow_bytes``): a smaller object cannot tell the two kinds apart."""


@dataclass(frozen=True)
class Verdict:
    label: str
    """One of ``LABELS``."""
    reason: str
    """One sentence: the rule that decided and its numbers."""
    evidence: Evidence
