"""Connection set-up read off a client-side capture (lab/handshake.py), on packets shaped as
tcpdump records them: a TCP + TLS 1.3 connection, a QUIC one, and traffic that is not the
client's own or never finishes its handshake."""

from __future__ import annotations

from protolens.lab.handshake import handshakes
from protolens.lab.pcap import Packet

CLI, SRV = "198.18.1.2", "198.18.2.2"


def tcp(ms: float, src: str, port: int, flags: int, payload: int = 0) -> Packet:
    """``port``: the client's, whichever way the packet goes."""
    if src == CLI:
        return Packet(int(ms * 1e6), CLI, SRV, 6, port, 443, 40 + payload, payload, flags)
    return Packet(int(ms * 1e6), src, CLI, 6, 443, port, 40 + payload, payload, flags)


def quic(kind: int, body: int, token: bytes = b"") -> bytes:
    """A long-header packet (RFC 9000 section 17.2): 8-byte connection ids, a 2-byte length."""
    head = bytes([0xC0 | kind << 4]) + b"\x00\x00\x00\x01" + b"\x08" + b"D" * 8 + b"\x08" + b"S" * 8
    if kind == 0:
        head += bytes([len(token)]) + token
    return head + bytes([0x40 | body >> 8, body & 0xFF]) + b"p" * body


def udp(ms: float, src: str, port: int, datagram: bytes) -> Packet:
    """``port``: the client's, whichever way the datagram goes."""
    if src == CLI:
        return Packet(int(ms * 1e6), CLI, SRV, 17, port, 443, 28 + len(datagram),
                      len(datagram), 0, datagram[0], datagram)
    return Packet(int(ms * 1e6), src, CLI, 17, 443, port, 28 + len(datagram), len(datagram), 0,
                  datagram[0], datagram)


def test_tcp_tls_from_syn_to_the_client_finished_and_quic_from_initial_to_1rtt() -> None:
    caps = [
        tcp(0, CLI, 50000, 0x02), tcp(50, SRV, 50000, 0x12), tcp(50.1, CLI, 50000, 0x10),
        tcp(50.2, CLI, 50000, 0x18, 1448),         # ClientHello, in two segments
        tcp(50.3, CLI, 50000, 0x18, 350),
        tcp(100.5, SRV, 50000, 0x18, 2400),        # server flight
        tcp(106.3, CLI, 50000, 0x18, 80),          # client Finished
        tcp(106.4, CLI, 50000, 0x18, 300),         # the request
        udp(10, CLI, 40000, quic(0, 1150, b"t")),   # Initial (ClientHello), padded
        udp(60.1, SRV, 40000, quic(0, 90) + quic(2, 1000)),
        udp(60.3, CLI, 40000, quic(0, 30) + quic(0, 1100)),  # an Initial ACK, on its own
        udp(63.2, CLI, 40000, quic(0, 30) + quic(2, 60)),    # ACK + Handshake (Finished)
        udp(63.4, CLI, 40000, b"\x41" + b"x" * 50),          # first short header
        tcp(200, CLI, 50002, 0x02),                 # a SYN that never carried a handshake
        tcp(5, "198.18.2.9", 50000, 0x02),          # not the client's
    ]
    got = handshakes(caps, CLI)
    assert [(h.proto, h.client_port) for h in got] == [(6, 50000), (17, 40000)]
    assert abs(got[0].ms - 106.3) < 1e-6
    assert abs(got[1].ms - 53.2) < 1e-6
    # the server's flight was in at its last packet before the client's Finished
    assert abs(got[0].flight_ms - 100.5) < 1e-6
    assert abs(got[1].flight_ms - 50.1) < 1e-6


def test_long_header_types_walks_coalesced_packets_and_stops_where_the_capture_ends() -> None:
    from protolens.lab.handshake import long_header_types

    two = quic(0, 40, b"tok") + quic(2, 60)
    assert long_header_types(two) == [0, 2]
    assert long_header_types(two[:30]) == [0]  # cut inside the first packet's header
    assert long_header_types(b"\x41abc") == []
