"""The proxy's decisions and bookkeeping, without sockets (pure; adapters in ``server`` and
``upstream``): what to do with a CONNECT, who may use the proxy, round-robin assignment of
streams to upstream connections, flow-control chunking, header translation between HTTP/1.1
(h11) and HTTP/2 / HTTP/3 header lists, and the per-connection report.
"""

from __future__ import annotations

import base64
import hmac
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from protolens.arms import Arm
from protolens.policy.rules import PolicyError, Rule, make_rule, match

Headers = tuple[tuple[bytes, bytes], ...]

HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding",
                        b"upgrade", b"te", b"trailer", b"proxy-authorization",
                        b"proxy-authenticate"})
"""RFC 9110 Sec. 7.6.1 connection-specific fields; RFC 9113 Sec. 8.2.2 forbids them in HTTP/2."""

TOKEN_ENV = "PROTOLENS_PROXY_TOKEN"
"""Environment variable that carries the per-run credential into the lab browser's processes."""


# ---- CONNECT decisions -------------------------------------------------------------------------

@dataclass(frozen=True)
class Refuse:
    status: int
    reason: str


@dataclass(frozen=True)
class Tunnel:
    """Pass the bytes through unchanged (no policy for this host)."""

    ip: str
    port: int


@dataclass(frozen=True)
class Intercept:
    """Terminate TLS with a ProtoLens leaf and speak ``arm`` upstream."""

    ip: str
    port: int
    arm: Arm

    @property
    def alpn(self) -> list[str]:
        """ALPN offered to the browser: http/1.1 only for h1, so it opens its usual (up to 6)
        connections per host; h2 otherwise (one browser connection carries every stream)."""
        return ["http/1.1"] if self.arm.name == "h1" else ["h2", "http/1.1"]


Decision = Refuse | Tunnel | Intercept


def parse_authority(target: str) -> tuple[str, int] | None:
    """``host:port`` of a CONNECT request target (RFC 9110 Sec. 9.3.6), or None."""
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]").lower().rstrip("."), int(port)


def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip.split("%")[0]).is_loopback
    except ValueError:
        return False


def decide(target: str, *, authorized: bool, hosts: Mapping[str, str],
           rules: Sequence[Rule]) -> Decision:
    """What to do with ``CONNECT target``. Hosts not in ``hosts`` (name -> address the lab
    serves them on) are refused and never resolved: Chromium opens CONNECTs to Google hosts even
    with background networking off (docs/ARCHITECTURE.md, proxy pitfalls)."""
    if not authorized:
        return Refuse(407, "proxy credential missing or wrong")
    parsed = parse_authority(target)
    if parsed is None:
        return Refuse(400, f"bad CONNECT target {target!r}")
    host, port = parsed
    ip = hosts.get(host)
    if ip is None:
        return Refuse(403, f"{host} is not served by this lab proxy")
    rule = match(rules, host)
    if rule is None or not rule.arm.translated:
        return Tunnel(ip, port)
    return Intercept(ip, port, rule.arm)


def with_every_host(rules: Sequence[Rule], target: str, every_host: str | None
                    ) -> Sequence[Rule]:
    """``rules``, plus ``every_host``'s arm on ``target``'s host when no rule names it (real
    sites: the hosts of a page are not known before its load, yet an arm such as
    h2-parallel:N means every host). A host no rule can name (an address, a public suffix) is
    left to ``decide``'s tunnel."""
    parsed = parse_authority(target)
    if every_host is None or parsed is None or match(rules, parsed[0]) is not None:
        return rules
    try:
        return [*rules, make_rule(parsed[0], every_host)]
    except PolicyError:
        return rules


def basic_credential(token: str) -> bytes:
    """The ``Proxy-Authorization`` value for ``token`` (user ``protolens``)."""
    return b"Basic " + base64.b64encode(f"protolens:{token}".encode())


def check_basic(header: bytes | None, token: str) -> bool:
    """Constant-time check of a ``Proxy-Authorization: Basic`` header."""
    return header is not None and hmac.compare_digest(header.strip(), basic_credential(token))


def environ_has_token(environ: bytes, token: str) -> bool:
    """Whether a ``/proc/PID/environ`` blob carries the run's credential."""
    want = f"{TOKEN_ENV}={token}".encode()
    return any(hmac.compare_digest(item, want) for item in environ.split(b"\0"))


def socket_inode(proc_net_tcp: str, local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """Inode of the IPv4 socket ``local -> remote`` in a ``/proc/net/tcp`` listing."""
    want = (_hex_addr(*local), _hex_addr(*remote))
    for line in proc_net_tcp.splitlines()[1:]:
        parts = line.split()
        if len(parts) > 9 and (parts[1].upper(), parts[2].upper()) == want:
            return int(parts[9])
    return None


def _hex_addr(ip: str, port: int) -> str:
    packed = ipaddress.IPv4Address(ip).packed
    return f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"


# ---- streams to connections --------------------------------------------------------------------

@dataclass
class RoundRobin:
    """Assigns each new stream to the next of ``n`` upstream connections (IFIP'18, Sec. IV:
    H2-Parallel sends requests round-robin over its connections)."""

    n: int
    _next: int = 0

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("need at least one connection")

    def peek(self) -> int:
        """The connection the next stream will be assigned to."""
        return self._next

    def assign(self) -> int:
        i = self._next
        self._next = (self._next + 1) % self.n
        return i


def next_chunk(pending: int, stream_window: int, connection_window: int, max_frame: int) -> int:
    """How many bytes may go in the next DATA frame (RFC 9113 Sec. 5.2: both the stream's and
    the connection's flow-control window bound it, and the peer's SETTINGS_MAX_FRAME_SIZE)."""
    return max(0, min(pending, stream_window, connection_window, max_frame))


# ---- header translation ------------------------------------------------------------------------

@dataclass(frozen=True)
class RequestHead:
    method: bytes
    scheme: bytes
    authority: bytes
    path: bytes
    headers: Headers
    """Regular fields, lowercase names, no hop-by-hop fields."""


@dataclass(frozen=True)
class ResponseHead:
    status: int
    headers: Headers


def _regular(headers: Iterable[tuple[bytes, bytes]]) -> Headers:
    return tuple((n.lower(), v) for n, v in headers
                 if not n.startswith(b":") and n.lower() not in HOP_BY_HOP)


def request_from_h2(headers: Iterable[tuple[bytes, bytes]]) -> RequestHead:
    """An HTTP/2 or HTTP/3 request header list (RFC 9113 Sec. 8.3.1)."""
    hs = list(headers)
    pseudo = {n: v for n, v in hs if n.startswith(b":")}
    regular = [(n, v) for n, v in hs if n.lower() != b"host"]
    authority = pseudo.get(b":authority") or next((v for n, v in hs if n.lower() == b"host"), b"")
    return RequestHead(pseudo.get(b":method", b"GET"), pseudo.get(b":scheme", b"https"),
                       authority, pseudo.get(b":path", b"/"), _regular(regular))


def request_from_h1(method: bytes, target: bytes, headers: Iterable[tuple[bytes, bytes]],
                    default_authority: bytes) -> RequestHead:
    hs = list(headers)
    host = next((v for n, v in hs if n.lower() == b"host"), default_authority)
    return RequestHead(method, b"https", host, target,
                       _regular((n, v) for n, v in hs if n.lower() != b"host"))


def request_to_h2(req: RequestHead) -> list[tuple[bytes, bytes]]:
    return [(b":method", req.method), (b":scheme", req.scheme), (b":authority", req.authority),
            (b":path", req.path), *req.headers]


def request_to_h1(req: RequestHead) -> tuple[bytes, bytes, list[tuple[bytes, bytes]]]:
    """(method, target, headers) for h11; ``Host`` first (RFC 9112 Sec. 3.2)."""
    return req.method, req.path, [(b"host", req.authority), *req.headers]


def is_websocket_upgrade(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """An HTTP/1.1 WebSocket opening handshake (RFC 6455 Sec. 4.1: ``Upgrade: websocket``)."""
    return any(n.lower() == b"upgrade" and v.strip().lower() == b"websocket" for n, v in headers)


def h1_head(method: bytes, target: bytes, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """An HTTP/1.1 request head as bytes (RFC 9112 Sec. 3), headers as given: what a
    pass-through (a WebSocket, a plain-HTTP request) sends upstream before it pipes bytes."""
    lines = [method + b" " + target + b" HTTP/1.1"]
    lines += [n + b": " + v for n, v in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def absolute_form(target: bytes) -> tuple[str, int, bytes] | None:
    """(host, port, path?query) of a plain-HTTP request sent to a proxy in absolute form
    (RFC 9112 Sec. 3.2.2: ``GET http://host:port/path``); None for anything else."""
    u = urlsplit(target.decode("latin-1"))
    try:
        port = 80 if u.port is None else u.port
    except ValueError:
        return None
    if u.scheme.lower() != "http" or not u.hostname or not 0 < port < 65536:
        return None
    path = (u.path or "/") + (f"?{u.query}" if u.query else "")
    return u.hostname.lower().rstrip("."), port, path.encode("latin-1")


def forwarded_h1_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """A proxied plain-HTTP request's headers for the origin: the proxy's own fields and the
    browser's keep-alive wish dropped, ``Connection: close`` added (the response is piped back
    until the origin closes: one request per upstream connection)."""
    drop = {b"proxy-authorization", b"proxy-connection", b"connection", b"keep-alive"}
    return [*((n, v) for n, v in headers if n.lower() not in drop), (b"connection", b"close")]


def response_from_h2(headers: Iterable[tuple[bytes, bytes]]) -> ResponseHead:
    hs = list(headers)
    status = next((v for n, v in hs if n == b":status"), b"502")
    return ResponseHead(int(status), _regular(hs))


def response_to_h2(resp: ResponseHead) -> list[tuple[bytes, bytes]]:
    return [(b":status", str(resp.status).encode()), *resp.headers]


# ---- the report --------------------------------------------------------------------------------

@dataclass
class ConnStats:
    """One upstream connection, as the proxy saw it."""

    id: int
    host: str
    family: str
    """``h1``, ``h2``, ``h3``; ``tunnel`` for a pass-through."""
    local_port: int | None = None
    """The proxy's client port (matches caddy's ``remote_port`` and the shaper's flow)."""
    remote_ip: str | None = None
    remote_port: int | None = None
    requests: int = 0
    bytes: int = 0
    """Bytes received on the connection (TLS plaintext for TCP, UDP payload for QUIC)."""
    bytes_up: int = 0
    first_epoch_ms: float | None = None
    last_epoch_ms: float | None = None
    streams: list[int] = field(default_factory=list)

    def request_started(self, now_ms: float) -> None:
        self.requests += 1
        if self.first_epoch_ms is None:
            self.first_epoch_ms = now_ms
        self.last_epoch_ms = now_ms

    def touched(self, now_ms: float) -> None:
        self.last_epoch_ms = now_ms

    def as_dict(self) -> dict[str, object]:
        return {"id": self.id, "host": self.host, "family": self.family,
                "local_port": self.local_port, "remote_ip": self.remote_ip,
                "remote_port": self.remote_port, "requests": self.requests, "bytes": self.bytes,
                "bytes_up": self.bytes_up, "first_epoch_ms": self.first_epoch_ms,
                "last_epoch_ms": self.last_epoch_ms}
