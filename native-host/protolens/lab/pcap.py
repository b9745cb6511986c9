"""Packets of a classic pcap file, as tcpdump writes it (pure).

What the fairness experiment and the handshake checks need from a header-only capture
(``tcpdump -s 256``): the capture time, the IPv4 addresses, the transport ports, the IP packet's
length as it was on the wire (the IP header's total length, not the captured length), the
payload's length, TCP flags and the payload's first byte. File format: the libpcap file
format (tcpdump.org/manpages/pcap-savefile.5.html; link types from
tcpdump.org/linktypes.html: 1 Ethernet, 101 raw IP, 113 Linux cooked v1, 276 Linux cooked v2).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
          b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
"""First four bytes -> (byte order, nanoseconds per sub-second unit)."""
_LINK_OFFSET = {1: 14, 101: 0, 113: 16, 276: 20}
"""Link type -> bytes before the IP header (Ethernet's ethertype is checked separately)."""


class PcapError(ValueError):
    """The file is not a pcap file this reader understands."""


@dataclass(frozen=True)
class Packet:
    ts_ns: int
    """Capture time, nanoseconds since the epoch."""
    src: str
    dst: str
    proto: int
    """IP protocol number (6 TCP, 17 UDP)."""
    sport: int
    dport: int
    length: int
    """IP total length: the bytes this packet put on the link above layer 2."""
    payload: int = 0
    """Transport payload bytes (IP total length less the IP and TCP or UDP headers)."""
    tcp_flags: int = 0
    """TCP flags (SYN 0x02, ACK 0x10 ...); 0 for UDP."""
    first_byte: int | None = None
    """The payload's first byte when the capture holds it (a QUIC packet's header form: long
    header 1, short header 0 in its top bit, RFC 9000 section 17)."""
    head: bytes = b""
    """The payload's first bytes, as far as the capture holds them."""


def _ip(raw: bytes) -> str:
    return ".".join(str(b) for b in raw)


def packets(data: bytes) -> Iterator[Packet]:
    """Every IPv4 TCP or UDP packet of the capture, in file order."""
    if len(data) < 24 or data[:4] not in _MAGIC:
        raise PcapError("not a pcap file (bad magic number)")
    order, unit_ns = _MAGIC[data[:4]]
    link = struct.unpack(order + "I", data[20:24])[0] & 0x0FFFFFFF
    if link not in _LINK_OFFSET:
        raise PcapError(f"pcap link type {link} is not supported")
    off, record = _LINK_OFFSET[link], struct.Struct(order + "IIII")
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, caplen, _ = record.unpack_from(data, pos)
        pos += 16
        frame = data[pos:pos + caplen]
        pos += caplen
        if len(frame) < caplen:
            break  # a capture cut short by the writer's death: keep what was whole
        if link == 1 and frame[12:14] != b"\x08\x00":
            continue  # not IPv4 (ARP, IPv6)
        ip = frame[off:]
        if len(ip) < 20 or ip[0] >> 4 != 4:
            continue
        ihl = (ip[0] & 0x0F) * 4
        proto = ip[9]
        if proto not in (6, 17) or len(ip) < ihl + 4:
            continue
        sport, dport = struct.unpack_from("!HH", ip, ihl)
        total = struct.unpack_from("!H", ip, 2)[0]
        if proto == 6:
            head = ihl + ((ip[ihl + 12] >> 4) * 4 if len(ip) > ihl + 13 else 20)
            flags = ip[ihl + 13] if len(ip) > ihl + 13 else 0
        else:
            head, flags = ihl + 8, 0
        yield Packet(ts_ns=sec * 1_000_000_000 + frac * unit_ns, src=_ip(ip[12:16]),
                     dst=_ip(ip[16:20]), proto=proto, sport=sport, dport=dport, length=total,
                     payload=max(0, total - head), tcp_flags=flags,
                     first_byte=ip[head] if len(ip) > head and total > head else None,
                     head=bytes(ip[head:total]))
