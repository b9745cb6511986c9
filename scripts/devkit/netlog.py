"""Reads Chromium's NetLog: the wire witness for connections and bytes (tests and benchmarks).

Chromium started with ``--log-net-log=FILE --net-log-capture-mode=Default`` writes every socket's
events, byte counts included (payloads only in mode Everything: net/log/net_log_capture_mode.h).
The file is one JSON object, ``{"constants": {...},\\n"events": [\\n`` then one event a line; a
browser that is killed never writes the closing ``]}``, so the reader takes the lines it can
(as Chromium's own netlog viewer does with a truncated log).

Per connection, keyed by the browser's local port (the client port in caddy's access log):

- TCP (h1, h2): ``TCP_CONNECT`` gives the local and remote address; ``SOCKET_BYTES_RECEIVED`` /
  ``_SENT`` are the bytes read from and written to the kernel (TLS records, handshake included);
  ``SSL_SOCKET_BYTES_RECEIVED`` the plaintext HTTP bytes after TLS; over HTTP/2, the
  ``HTTP2_SESSION`` source bound to the socket (``HTTP2_SESSION_INITIALIZED``) logs each frame
  received that carries no response (SETTINGS, PING, WINDOW_UPDATE...: ``H2_CONTROL``);
- QUIC (h3): a ``QUIC_SESSION`` source per connection, its host; ``QUIC_SESSION_PACKET_RECEIVED``
  carries ``self_address`` (the local port) and each packet's size, ``QUIC_SESSION_PACKET_SENT``
  each sent packet's size, ``QUIC_SESSION_STREAM_FRAME_RECEIVED`` each STREAM frame's data
  length (HTTP/3 above QUIC: the analogue of TLS plaintext); ``QUIC_SESSION_CLOSED`` gives the
  close reason (an idle timeout is one too); no stream frame at all means the session never
  carried a request (a failed handshake).

    conns = read_connections(Path("netlog.json"))   # {local_port: WireConn}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

H2_CONTROL = {"HTTP2_SESSION_RECV_SETTINGS": 9, "HTTP2_SESSION_RECV_SETTING": 6,
              "HTTP2_SESSION_RECV_SETTINGS_ACK": 9, "HTTP2_SESSION_RECV_WINDOW_UPDATE": 13,
              "HTTP2_SESSION_RECV_RST_STREAM": 13, "HTTP2_SESSION_RECV_GOAWAY": 17}
"""Bytes of each HTTP/2 frame received that carries no response (RFC 9113 6.3-6.9: a 9-byte
frame header and its payload): SETTINGS logs its header's event then one event per 6-byte
setting; a GOAWAY's debug data is added to its 17 bytes. A PING (received, an ACK or not) is 17
bytes (``HTTP2_SESSION_PING``, ``type`` received)."""

KEPT = ("TCP_CONNECT", "SOCKET_BYTES_RECEIVED", "SOCKET_BYTES_SENT", "SSL_SOCKET_BYTES_RECEIVED",
        "QUIC_SESSION", "QUIC_SESSION_PACKET_RECEIVED", "QUIC_SESSION_PACKET_SENT",
        "QUIC_SESSION_CLOSED", "QUIC_SESSION_STREAM_FRAME_RECEIVED", "HTTP2_SESSION_INITIALIZED",
        "HTTP2_SESSION_PING", "URL_REQUEST_START_JOB", "HTTP_TRANSACTION_READ_RESPONSE_HEADERS",
        *H2_CONTROL)
"""The event types this reader uses (``trim`` keeps only these)."""


@dataclass
class WireConn:
    kind: str
    """"tcp" or "quic"."""
    local_port: int
    remote: str
    """Remote address as ``ip:port``."""
    host: str | None = None
    """The server's name (QUIC sessions name it; TCP sockets do not)."""
    bytes_in: int = 0
    """Bytes received: TCP bytes read from the socket, or QUIC packet bytes."""
    bytes_out: int = 0
    plain_in: int = 0
    """TCP only: bytes TLS handed up (HTTP/1.1 or HTTP/2 frames); 0 for QUIC."""
    tls: bool = False
    """TCP only: TLS ran on the socket (plain HTTP has no SSL_SOCKET_BYTES events)."""
    stream_frames: int = 0
    """QUIC only: STREAM frames received (0: the session carried no request)."""
    stream_bytes: int = 0
    """QUIC only: the STREAM frames' data (HTTP/3 frames, QPACK and control streams)."""
    stream_ends: dict[int, int] = field(default_factory=dict)
    """QUIC only: per stream id, the furthest byte of data received."""
    control_in: int = 0
    """TCP with HTTP/2 only: the bytes of the frames received that carry no response
    (``H2_CONTROL``)."""
    error: str | None = None
    """QUIC only: why the session closed, when it closed with an error."""
    sources: set[int] = field(default_factory=set)

    @property
    def app_in(self) -> int:
        """HTTP bytes received: TLS plaintext (TCP), the socket's bytes (plain HTTP), or QUIC
        stream data: what a browser's per-request wire counts add up to."""
        if self.kind == "quic":
            return self.stream_bytes
        return self.plain_in if self.tls else self.bytes_in

    @property
    def conn(self) -> tuple[int, int, bool]:
        """(local port, server port, QUIC): ``Conn``."""
        return (self.local_port, _port(self.remote), self.kind == "quic")

    @property
    def request_in(self) -> int:
        """The bytes of the responses alone: ``app_in`` less HTTP/2's control frames, or the
        data of HTTP/3's request streams (client-initiated bidirectional: RFC 9000 2.1, ids
        0 mod 4), without its control and QPACK streams: what the records' bytes on the
        connection add up to."""
        if self.kind == "quic":
            return sum(end for stream, end in self.stream_ends.items() if stream % 4 == 0)
        return self.app_in - self.control_in


def read_events(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(constants, events) of a NetLog file, complete or cut off after any line."""
    with path.open() as f:
        head = f.readline()
        if not head.startswith('{"constants":'):
            raise ValueError(f"{path}: not a NetLog file (no constants on its first line)")
        constants = json.loads(head[len('{"constants":'):].rstrip().rstrip(","))
        events = []
        for line in f:
            line, _ = _event_line(line)
            if not line.startswith("{"):
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:  # the half-written last line of a killed browser
                continue
    return constants, events


def _named(constants: dict[str, Any], events: Iterable[dict[str, Any]]
           ) -> Iterator[tuple[str, dict[str, Any]]]:
    names = {v: k for k, v in constants["logEventTypes"].items()}
    for ev in events:
        yield names.get(ev["type"], ""), ev


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


Conn = tuple[int, int, bool]
"""A connection as both ends name it: (the browser's port, the server's port, QUIC). A local port
alone can name two: Linux reuses an ephemeral port for another server port (a plain-HTTP and an
HTTPS connection of the real-web site had the same one once), and UDP's ports are not TCP's."""


def connections(constants: dict[str, Any], events: Iterable[dict[str, Any]]
                ) -> dict[int, WireConn]:
    """Every TCP socket that connected and every QUIC session that got a packet, by local port
    (the last one of a port: ``read_wire`` keeps them all)."""
    return {c.local_port: c for c in _all(constants, events)}


def read_wire(path: Path) -> dict[Conn, WireConn]:
    """Every connection of a NetLog file by ``Conn``."""
    return {c.conn: c for c in _all(*read_events(path))}


def _all(constants: dict[str, Any], events: Iterable[dict[str, Any]]) -> list[WireConn]:
    tcp: dict[int, WireConn] = {}
    h2: dict[int, WireConn] = {}  # HTTP2_SESSION source -> its socket's connection
    quic: dict[int, WireConn] = {}
    quic_host: dict[int, str] = {}
    for name, ev in _named(constants, events):
        src, params = ev["source"]["id"], ev.get("params") or {}
        if name == "TCP_CONNECT" and "local_address" in params:
            tcp[src] = WireConn("tcp", _port(params["local_address"]), params["remote_address"])
        elif name in ("SOCKET_BYTES_RECEIVED", "SOCKET_BYTES_SENT",
                      "SSL_SOCKET_BYTES_RECEIVED") and src in tcp:
            n = int(params.get("byte_count", 0))
            if name == "SOCKET_BYTES_RECEIVED":
                tcp[src].bytes_in += n
            elif name == "SOCKET_BYTES_SENT":
                tcp[src].bytes_out += n
            else:
                tcp[src].plain_in += n
                tcp[src].tls = True
        elif name == "HTTP2_SESSION_INITIALIZED":
            sock = tcp.get(int((params.get("source_dependency") or {}).get("id", -1)))
            if sock is not None:
                h2[src] = sock
                sock.sources.add(src)
        elif name in H2_CONTROL and src in h2:
            debug = str(params.get("debug_data", "")) if name == "HTTP2_SESSION_RECV_GOAWAY" else ""
            h2[src].control_in += H2_CONTROL[name] + len(debug.encode())
        elif name == "HTTP2_SESSION_PING" and src in h2 and params.get("type") == "received":
            h2[src].control_in += 17
        elif name == "QUIC_SESSION" and "host" in params:
            quic_host[src] = str(params["host"])
        elif name == "QUIC_SESSION_PACKET_RECEIVED":
            conn = quic.get(src)
            if conn is None:
                conn = quic[src] = WireConn("quic", _port(params["self_address"]),
                                            params["peer_address"], host=quic_host.get(src))
            conn.bytes_in += int(params.get("size", 0))
        elif name == "QUIC_SESSION_PACKET_SENT" and src in quic:
            quic[src].bytes_out += int(params.get("size", 0))
        elif name == "QUIC_SESSION_STREAM_FRAME_RECEIVED" and src in quic:
            # a retransmitted frame comes again with the same offset: each stream counts up to
            # the furthest byte received (RFC 9000 19.8: offset + length), not every copy
            conn = quic[src]
            conn.stream_frames += 1
            end = int(params.get("offset", 0)) + int(params.get("length", 0))
            stream = int(params.get("stream_id", -1))
            before = conn.stream_ends.get(stream, 0)
            if end > before:
                conn.stream_bytes += end - before
                conn.stream_ends[stream] = end
        elif name == "QUIC_SESSION_CLOSED" and src in quic and params.get("quic_error"):
            quic[src].error = str(params.get("details", params["quic_error"]))
    out = []
    for src, conn in [*tcp.items(), *quic.items()]:
        conn.sources.add(src)
        out.append(conn)
    return out


def http1_heads(constants: dict[str, Any], events: Iterable[dict[str, Any]]
                ) -> dict[str, list[int]]:
    """Per URL, the wire size of each HTTP/1.x response head the browser read for it: its header
    lines as ``HTTP_TRANSACTION_READ_RESPONSE_HEADERS`` logs them (capture mode Default has them),
    each ended by CRLF, and the empty line. A URL request's URL is its ``URL_REQUEST_START_JOB``'s
    (a redirect starts a job for the next URL). Measured on the real-web site's HTTP/1.1 arm: the
    dedicated worker's script head, 282 bytes, and its 68-byte body were the 350 bytes its
    connection carried for it (2026-11-29). HTTP/2 and HTTP/3 heads are compressed on the wire, so
    their lines say nothing of their size, and they are not listed."""
    url: dict[int, str] = {}
    out: dict[str, list[int]] = {}
    for name, ev in _named(constants, events):
        params = ev.get("params") or {}
        if name == "URL_REQUEST_START_JOB" and "url" in params:
            url[ev["source"]["id"]] = str(params["url"])
        elif name == "HTTP_TRANSACTION_READ_RESPONSE_HEADERS" and ev["source"]["id"] in url:
            lines = [str(line) for line in params.get("headers", [])]
            if lines and lines[0].startswith("HTTP/1."):
                size = sum(len(line.encode()) + 2 for line in lines) + 2
                out.setdefault(url[ev["source"]["id"]], []).append(size)
    return out


def _event_line(line: str) -> tuple[str, bool]:
    """One line of the events array as a JSON object, and whether it closed the array: the
    last event is followed by the closing bracket (Chromium 156 writes ``...}],`` then
    ``"polledData": ...`` and ``}``; an older form ends ``...}]}``)."""
    line = line.strip().rstrip(",")
    for end in ("]}", "]"):
        if line.endswith("}" + end):
            return line[: -len(end)], True
    return line, False


def is_complete(path: Path) -> bool:
    """The browser closed the log itself (the events array is closed): every event is in it.
    A browser stopped by a signal leaves it open, and may leave its last events out."""
    with path.open() as f:
        return any(_event_line(line)[1] for line in f)


def read_connections(path: Path) -> dict[int, WireConn]:
    return connections(*read_events(path))


def trim(path: Path, dest: Path, ports: set[int] | None = None) -> int:
    """Write a smaller NetLog of the same form holding only the events this reader uses (and,
    with ``ports``, only those connections): a real log cut to a unit-test fixture. Returns the
    number of events kept."""
    constants, events = read_events(path)
    names = {v: k for k, v in constants["logEventTypes"].items()}
    keep_types = {constants["logEventTypes"][n] for n in KEPT if n in constants["logEventTypes"]}
    if ports is not None:
        keep_src = {s for c in connections(constants, events).values() if c.local_port in ports
                    for s in c.sources}
    kept = [ev for ev in events if ev["type"] in keep_types
            and (ports is None or ev["source"]["id"] in keep_src)]
    small = {"logEventTypes": {names[t]: t for t in keep_types},
             "logSourceType": constants.get("logSourceType", {}),
             "timeTickOffset": constants.get("timeTickOffset")}
    with dest.open("w") as f:
        f.write('{"constants":' + json.dumps(small, sort_keys=True) + ",\n")
        f.write('"events": [\n')
        for ev in kept:
            ev.get("params", {}).pop("certificates", None)
            f.write(json.dumps(ev, sort_keys=True) + ",\n")
    return len(kept)
