"""The fingerprint's decision (pure): queue timeline + first loss + bytes + MSS + RTT -> a label
with its evidence.

CoNEXT'20 Sec. 4.1: "If a loss is detected within the first two seconds, the algorithm is labeled
as loss-based; the opposite behavior implies that it is delay-based", and objects under 50 KB are
"too small to judge". One guard is added: "no loss" only means delay-based if the object was big
enough for a loss-based slow start to overflow the queue at all. Slow start doubles the window
every round trip, so by the time its window exceeds what the path holds (bandwidth x RTT plus
the queue) it has sent about twice that much; a smaller object ends before any sender is put to
the test (Sec. 4.1: at 1,500-byte MTU "the protocols are hard to distinguish"; the paper lowers
the packet size for small objects for the same reason). Such probes are ``inconclusive``."""

from __future__ import annotations

from protolens.cc.model import (
    DELAY_BASED,
    INCONCLUSIVE,
    LOSS_BASED,
    TOO_SMALL,
    Evidence,
    QueueTimeline,
    Verdict,
)

LOSS_WINDOW_MS = 2000.0
"""Sec. 4.1: a loss within the first two seconds means loss-based."""
MIN_BYTES = 50_000
"""Sec. 4.1: objects smaller than 50 KB are too small to judge."""
TIMESTAMP_BYTES = 12
"""The TCP timestamp option (RFC 7323) comes out of every segment's payload."""


def overflow_bytes(t: QueueTimeline, mss: int, rtt_ms: float) -> int:
    """Body bytes a slow start sends before its window exceeds bandwidth x RTT + the queue:
    twice that window (the window doubles each round trip, and all earlier rounds sum to it)."""
    path_bytes = t.rate_bps / 8 * rtt_ms / 1000 + t.buffer_bytes
    payload = max(1, mss - TIMESTAMP_BYTES) / t.packet_bytes
    return int(2 * path_bytes * payload)


def evidence(t: QueueTimeline, body_bytes: int, mss: int, rtt_ms: float, transfer_ms: float
             ) -> Evidence:
    """Maximum occupancy (and when) from the request to the end of the transfer."""
    best, when = 0, None
    for at, q in zip(t.times_ms(), t.queue_bytes, strict=True):
        if at < 0 or at > transfer_ms + t.interval_ms:
            continue
        if q > best:
            best, when = q, round(at, 1)
    frac = best / t.buffer_bytes if t.buffer_bytes else 0.0
    loss = None if t.first_drop_ms is None else round(t.first_drop_ms, 1)
    return Evidence(max_queue_bytes=best, max_queue_fraction=frac, time_to_max_ms=when,
                    first_loss_ms=loss, bytes=body_bytes, mss=mss, rtt_ms=rtt_ms,
                    transfer_ms=round(transfer_ms, 1),
                    overflow_bytes=overflow_bytes(t, mss, rtt_ms))


def classify(t: QueueTimeline, body_bytes: int, mss: int, rtt_ms: float, transfer_ms: float
             ) -> Verdict:
    ev = evidence(t, body_bytes, mss, rtt_ms, transfer_ms)
    peak = f"queue peak {ev.max_queue_fraction:.0%}"
    if ev.time_to_max_ms is not None:
        peak += f" at {ev.time_to_max_ms / 1000:.2f} s"
    if body_bytes < MIN_BYTES:
        return Verdict(TOO_SMALL, f"{body_bytes} bytes: objects under {MIN_BYTES // 1000} KB "
                       "are too small to judge (CoNEXT'20 Sec. 4.1)", ev)
    loss = t.first_drop_ms
    if loss is not None and loss <= LOSS_WINDOW_MS:
        return Verdict(LOSS_BASED, f"first drop at {loss / 1000:.2f} s, within "
                       f"{LOSS_WINDOW_MS / 1000:g} s: the sender grew its window until the "
                       f"queue overflowed ({peak})", ev)
    if loss is None and body_bytes < ev.overflow_bytes:
        return Verdict(INCONCLUSIVE, f"no drop, but {body_bytes} bytes end before a loss-based "
                       f"slow start would overflow this queue (about {ev.overflow_bytes} "
                       f"bytes); {peak}; use smaller packets or a bigger object", ev)
    tail = f"first drop only at {loss / 1000:.2f} s" if loss is not None else "no drop"
    return Verdict(DELAY_BASED, f"no drop within {LOSS_WINDOW_MS / 1000:g} s ({tail}) although "
                   f"the object was big enough to overflow the queue; the sender stopped "
                   f"growing at {peak}", ev)
