"""Connection set-up on the wire, from a client-side capture (pure): the ground truth for the
recorder's ``connect_ms`` (docs/RECORD.md "Timings").

- TCP + TLS 1.3: from the client's SYN to its first packet with a payload after the server's
  first one (the client's Finished, sent once the server's flight is in: RFC 8446 section 2;
  the ClientHello before it may take two segments, Chromium's with a post-quantum key share
  does), two round trips.
- QUIC: from the client's first packet (an Initial) to its first Handshake packet (the one that
  carries its Finished, once the server's flight is in: RFC 9001 section 4.1, RFC 9000 sections
  7 and 17.2), one round trip. A datagram can hold several long-header packets (RFC 9000 section
  12.2: an Initial ACK, then the Handshake packet), so each is read in turn.

Where in between Chromium marks its connect end (``connectEnd``) the wire cannot say: after the
server's flight is in (``flight_ns``, the server's last packet before the client's Finished) and
around the client's Finished (``ready_ns``); the gap is the client's own work on the flight
(certificate check, key schedule), a few ms here, once 10.7 ms under load for QUIC (recorded
60.2 ms against 70.9 ms to the client's Finished).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from protolens.lab.pcap import Packet

SYN = 0x02
ACK = 0x10
LONG_HEADER = 0x80
INITIAL, HANDSHAKE = 0, 2
"""Long-header packet types (RFC 9000 section 17.2, version 1)."""


def _varint(b: bytes, i: int) -> tuple[int, int]:
    """A QUIC variable-length integer at ``b[i]`` (RFC 9000 section 16): value, next index."""
    n = 1 << (b[i] >> 6)
    value = b[i] & 0x3F
    for k in range(1, n):
        value = (value << 8) | b[i + k]
    return value, i + n


def long_header_types(datagram: bytes) -> list[int]:
    """The types of the long-header packets coalesced in a datagram, as far as it is captured."""
    out: list[int] = []
    i = 0
    try:
        while i < len(datagram) and datagram[i] & LONG_HEADER:
            kind = (datagram[i] >> 4) & 0x03
            out.append(kind)
            j = i + 5  # first byte, version
            j += 1 + datagram[j]  # destination connection id
            j += 1 + datagram[j]  # source connection id
            if kind == INITIAL:
                token, j = _varint(datagram, j)
                j += token
            length, j = _varint(datagram, j)
            i = j + length
    except IndexError:
        pass  # the capture ends inside a header
    return out


@dataclass(frozen=True)
class Handshake:
    proto: int
    """6 TCP, 17 UDP (QUIC)."""
    client_port: int
    start_ns: int
    """The client's first packet of the connection."""
    ready_ns: int
    """When the client had its keys and sent on them."""
    flight_ns: int
    """The server's last packet to the client before ``ready_ns``: its flight was in."""

    @property
    def ms(self) -> float:
        return (self.ready_ns - self.start_ns) / 1e6

    @property
    def flight_ms(self) -> float:
        return (self.flight_ns - self.start_ns) / 1e6


def handshakes(packets: Iterable[Packet], client_ip: str) -> list[Handshake]:
    """The set-up of every connection the client opened in the capture, by its start."""
    starts: dict[tuple[int, int], int] = {}
    answered: set[tuple[int, int]] = set()
    heard: dict[tuple[int, int], int] = {}
    done: dict[tuple[int, int], Handshake] = {}
    for p in packets:
        mine = p.src == client_ip
        key = (p.proto, p.sport if mine else p.dport)
        if key in done or (not mine and p.dst != client_ip):
            continue
        if not mine and key in starts:
            heard[key] = p.ts_ns
        if p.proto == 6:
            if mine and p.tcp_flags & SYN and not p.tcp_flags & ACK:
                starts[key] = p.ts_ns
                answered.discard(key)
                heard.pop(key, None)
            elif key in starts and p.payload > 0:
                if not mine:
                    answered.add(key)
                elif key in answered:
                    done[key] = Handshake(6, key[1], starts[key], p.ts_ns, heard[key])
        elif p.proto == 17 and mine and p.head:
            kinds = long_header_types(p.head)
            if key not in starts and INITIAL in kinds:
                starts[key] = p.ts_ns
            elif key in starts and key in heard and HANDSHAKE in kinds:
                done[key] = Handshake(17, key[1], starts[key], p.ts_ns, heard[key])
    return sorted(done.values(), key=lambda h: h.start_ns)
