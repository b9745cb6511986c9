"""Connection set-up on the wire, from a client-side capture (pure): the ground truth for the
recorder's ``connect_ms`` (docs/RECORD.md "Timings").

- TCP + TLS 1.3: from the client's SYN to its first packet with a payload after the server's
  first one (the client's Finished, sent once the server's flight is in: RFC 8446 section 2;
  the ClientHello before it may take two segments, Chromium's with a post-quantum key share
  does), two round trips.
- QUIC: from the client's first packet (an Initial, long header) to its first short-header
  packet (1-RTT keys: RFC 9000 sections 7 and 17.3), one round trip.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from protolens.lab.pcap import Packet

SYN = 0x02
ACK = 0x10
LONG_HEADER = 0x80


@dataclass(frozen=True)
class Handshake:
    proto: int
    """6 TCP, 17 UDP (QUIC)."""
    client_port: int
    start_ns: int
    """The client's first packet of the connection."""
    ready_ns: int
    """When the client had its keys and sent on them."""

    @property
    def ms(self) -> float:
        return (self.ready_ns - self.start_ns) / 1e6


def handshakes(packets: Iterable[Packet], client_ip: str) -> list[Handshake]:
    """The set-up of every connection the client opened in the capture, by its start."""
    starts: dict[tuple[int, int], int] = {}
    answered: set[tuple[int, int]] = set()
    done: dict[tuple[int, int], Handshake] = {}
    for p in packets:
        mine = p.src == client_ip
        key = (p.proto, p.sport if mine else p.dport)
        if key in done or (not mine and p.dst != client_ip):
            continue
        if p.proto == 6:
            if mine and p.tcp_flags & SYN and not p.tcp_flags & ACK:
                starts[key] = p.ts_ns
                answered.discard(key)
            elif key in starts and p.payload > 0:
                if not mine:
                    answered.add(key)
                elif key in answered:
                    done[key] = Handshake(6, key[1], starts[key], p.ts_ns)
        elif p.proto == 17 and mine and p.first_byte is not None:
            if key not in starts and p.first_byte & LONG_HEADER:
                starts[key] = p.ts_ns
            elif key in starts and not p.first_byte & LONG_HEADER:
                done[key] = Handshake(17, key[1], starts[key], p.ts_ns)
    return sorted(done.values(), key=lambda h: h.start_ns)
