"""Igor's emulated bottleneck (CoNEXT'20 Sec. 4.1), pure: the packet size for an object, the
padded RTT, and the shaper profile (a low rate and a deep drop-tail queue, so a server's slow
start fills the queue within the first round trips)."""

from __future__ import annotations

import math

from protolens.shaper.profile import parse_profile
from protolens.shaper.records import Profile

RATE_PPS = 250
"""Bottleneck rate in packets per second, so the queue holds the same time (400 ms) and the path
the same number of packets (25 per 100 ms RTT) at every packet size. The paper gives no rate;
250 x 500-byte packets = 1 Mbit/s with a 100 ms RTT and a 50 kB queue is what ARCHITECTURE.md
"Congestion-control fingerprint facts" verified. A fixed 1 Mbit/s does not work for 100-byte
packets: the 10 kB queue is smaller than the 12.5 kB path, and BBR's startup overflowed it at
0.39 s on an 80 KB object (measured here), which reads as loss-based."""
QUEUE_PACKETS = 100
"""Queue length in packets: the paper's dummynet queue held 100 packets (Sec. 4.1, Fig. 2(a))."""
DEFAULT_PACKET = 500
SMALL_PACKET = 100
LARGE_PACKET = 1500
SMALL_OBJECT = 100_000
LARGE_OBJECT = 1_000_000
"""Sec. 4.1: 500-byte MTU by default, 100 for objects under 100 KB, 1,500 above 1 MB."""
HEADER_BYTES = 40
"""IPv4 + TCP headers without options: advmss = packet size - 40 (ARCHITECTURE.md: advmss 460
gave about 495-byte packets, the timestamp option coming out of the payload)."""
MIN_RTT_MS = 100
RTT_STEP_MS = 50
"""Sec. 4.1: the RTT is normalized to the next multiple of 50 ms, at least 100 ms."""


def packet_bytes_for(size: int | None) -> int:
    """The packet size Igor uses for an object of ``size`` bytes (None = unknown: default)."""
    if size is None:
        return DEFAULT_PACKET
    if size < SMALL_OBJECT:
        return SMALL_PACKET
    if size > LARGE_OBJECT:
        return LARGE_PACKET
    return DEFAULT_PACKET


def advmss(packet_bytes: int) -> int:
    if not 88 <= packet_bytes <= 1500:
        raise ValueError(f"packet size {packet_bytes} outside 88..1500 bytes")
    return packet_bytes - HEADER_BYTES


def padded_rtt_ms(measured_ms: float) -> int:
    """113 ms -> 150 ms; 30 ms -> 100 ms (Sec. 4.1); exactly 150 stays 150."""
    if measured_ms < 0:
        raise ValueError(f"negative RTT {measured_ms}")
    return max(MIN_RTT_MS, RTT_STEP_MS * math.ceil(measured_ms / RTT_STEP_MS))


def queue_bytes(packet_bytes: int) -> int:
    return QUEUE_PACKETS * packet_bytes


def rate_mbit(packet_bytes: int) -> float:
    return RATE_PPS * packet_bytes * 8 / 1e6


def profile(packet_bytes: int, added_rtt_ms: float) -> Profile:
    """The shaper profile: ``RATE_PPS`` packets per second and a ``QUEUE_PACKETS``-packet
    drop-tail queue towards the client, ``added_rtt_ms`` of delay on top of the path's own RTT;
    no random loss."""
    rate = rate_mbit(packet_bytes)
    text = (f'name = "igor-{packet_bytes}"\n'
            f'description = "Igor bottleneck: {rate:g} Mbit/s down, '
            f'{QUEUE_PACKETS} x {packet_bytes} B queue, +{added_rtt_ms:g} ms RTT"\n'
            'source = "CoNEXT\'20 (shared/seeds/002) Sec. 4.1; rate: cc/bottleneck.py RATE_PPS"\n'
            "[link]\n"
            f"rate_down_mbit = {rate!r}\n"
            f"rtt_ms = {max(0.0, added_rtt_ms)!r}\n"
            f"buffer_bytes = {queue_bytes(packet_bytes)}\n")
    return parse_profile(text, "<igor>", default_name=f"igor-{packet_bytes}")
