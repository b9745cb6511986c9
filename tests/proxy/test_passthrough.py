"""What the lab proxy passes through (proxy/passthrough.py), on real sockets: the proxy runs as
its own process (``control.start``), the servers are small asyncio servers on loopback written
here (a TLS server that answers a WebSocket handshake with 101 and then echoes bytes, a plain-HTTP
server that redirects to HTTPS). The browser's side is a raw socket speaking as Chromium does
through a proxy (CONNECT, then TLS with ALPN http/1.1; or a request in absolute form).

Found by the real-web pages under ``h2-parallel:2`` (2026-11-29): the proxy stripped a WebSocket's
``Upgrade`` and sent its handshake as an HTTP/2 GET (caddy: 404; the page's socket never opened),
answered every ``http://`` page with 405, and sent a host's requests on another port to the pool
of the port it saw first.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from protolens.arms import parse_lab_arm
from protolens.certs import ensure_ca
from protolens.proxy import control
from protolens.proxy.core import Intercept, absolute_form, basic_credential, h1_head
from protolens.proxy.server import Config, ProxyState
from scripts.devkit.site import make_cert


def test_absolute_form_targets() -> None:
    assert absolute_form(b"http://a.test:8080/x?y=1") == ("a.test", 8080, b"/x?y=1")
    assert absolute_form(b"http://A.test") == ("a.test", 80, b"/")
    assert absolute_form(b"http://[::1]:81/p") == ("::1", 81, b"/p")
    for bad in (b"https://a.test/", b"/x", b"a.test:443", b"http://a.test:99999/", b"http:///x"):
        assert absolute_form(bad) is None, bad


def test_h1_head_keeps_the_headers_as_given() -> None:
    head = h1_head(b"GET", b"/ws", [(b"Host", b"a.test"), (b"Upgrade", b"websocket")])
    assert head == b"GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n\r\n"


def test_an_origin_is_host_and_port(tmp_path: Path) -> None:
    """Two ports of one host are two origins, with a pool each (before: the first port's)."""
    ca = ensure_ca(tmp_path, datetime.datetime.now(datetime.UTC))
    state = ProxyState(Config(token="t", hosts={}, ca=ca, upstream_ca=None, workdir=tmp_path))
    arm = parse_lab_arm("h2-parallel:2").upstream
    one = state.shared_pool("a.test", Intercept("127.0.0.1", 4431, arm))
    two = state.shared_pool("a.test", Intercept("127.0.0.1", 4432, arm))
    assert one is not two and (one.target.port, two.target.port) == (4431, 4432)
    assert state.shared_pool("a.test", Intercept("127.0.0.1", 4431, arm)) is one


# ---- real sockets ------------------------------------------------------------------------------

class Seen:
    def __init__(self) -> None:
        self.heads: list[bytes] = []


@contextmanager
def serve(handler: Any, ssl_ctx: ssl.SSLContext | None = None) -> Iterator[int]:
    """An asyncio server on loopback in a thread of its own; yields its port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    port: list[int] = []

    async def main() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0, ssl=ssl_ctx)
        port.append(server.sockets[0].getsockname()[1])
        ready.set()
        async with server:
            await server.serve_forever()

    task = loop.create_task(main())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield port[0]
    finally:
        loop.call_soon_threadsafe(task.cancel)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


async def read_head(reader: asyncio.StreamReader) -> bytes:
    return await reader.readuntil(b"\r\n\r\n")


@pytest.fixture
def site(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    cert, key, _ = make_cert(tmp_path, ("a.test",))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(["http/1.1"])  # as caddy answers a WebSocket's connection
    return ctx, cert


@contextmanager
def proxy(tmp_path: Path, upstream_ca: Path, every_host: str) -> Iterator[control.ProxyProcess]:
    px = control.start(hosts={"a.test": "127.0.0.1"}, upstream_ca=str(upstream_ca),
                       check_process=False, env={"XDG_DATA_HOME": str(tmp_path / "data"),
                                                 "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    try:
        px.configure([], every_host=every_host)
        yield px
    finally:
        px.stop()


def through(px: control.ProxyProcess, request: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", px.port), timeout=10)
    s.sendall(request.replace(b"\r\n\r\n", b"\r\nProxy-Authorization: "
                              + basic_credential(px.token) + b"\r\n\r\n", 1))
    return s


def read_until(s: socket.socket, end: bytes) -> bytes:
    buf = b""
    while end not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def read_all(s: socket.socket) -> bytes:
    buf = b""
    while chunk := s.recv(65536):
        buf += chunk
    return buf


@pytest.mark.parametrize("arm", ["h2-parallel:2", "h2", "h1"])
def test_a_websocket_is_passed_through_with_its_upgrade(tmp_path: Path, site: Any,
                                                        arm: str) -> None:
    server_ctx, cert = site
    seen = Seen()

    async def ws(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await read_head(reader)
        seen.heads.append(head)
        writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                     b"Connection: Upgrade\r\n\r\n")
        while data := await reader.read(65536):  # the socket's frames, echoed
            writer.write(data)
            await writer.drain()
        writer.close()

    with serve(ws, server_ctx) as port, proxy(tmp_path, cert, arm) as px:
        raw = through(px, f"CONNECT a.test:{port} HTTP/1.1\r\nHost: a.test:{port}\r\n\r\n"
                      .encode())
        assert read_until(raw, b"\r\n\r\n").startswith(b"HTTP/1.1 200")
        client = ssl.create_default_context(cafile=str(px.ca.ca_cert))
        client.set_alpn_protocols(["http/1.1"])  # Chromium's WebSocket connection offers only it
        with client.wrap_socket(raw, server_hostname="a.test") as tls:
            key = base64.b64encode(b"0123456789abcdef")
            tls.sendall(b"GET /ws HTTP/1.1\r\nHost: a.test:%d\r\nUpgrade: websocket\r\n"
                        b"Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        b"Sec-WebSocket-Version: 13\r\n\r\n" % (port, key))
            answer = read_until(tls, b"\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 101"), answer
            tls.sendall(b"\x81\x05hello")
            assert read_until(tls, b"hello").endswith(b"\x81\x05hello")
        report = px.report()
    (head,) = seen.heads
    assert b"Upgrade: websocket" in head and b"Sec-WebSocket-Key: " + key in head, head
    # the socket is a pass-through, not one of the arm's upstream connections
    assert report["connections"] == [], report
    (ws_conn,) = [t for t in report["tunnels"] if t["family"] == "websocket"]
    assert ws_conn["host"] == "a.test" and ws_conn["remote_port"] == port
    assert ws_conn["bytes"] >= len(b"HTTP/1.1 101 Switching Protocols") + 7


def test_a_plain_http_request_is_forwarded(tmp_path: Path, site: Any) -> None:
    _, cert = site
    seen = Seen()

    async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await read_head(reader)
        seen.heads.append(head + await reader.read(5))
        writer.write(b"HTTP/1.1 301 Moved Permanently\r\nLocation: https://a.test/x\r\n"
                     b"Content-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    with serve(plain) as port, proxy(tmp_path, cert, "h2-parallel:2") as px:
        s = through(px, f"POST http://a.test:{port}/x?q=1 HTTP/1.1\r\nHost: a.test:{port}\r\n"
                        "Proxy-Connection: keep-alive\r\nContent-Length: 5\r\n\r\n".encode())
        s.sendall(b"a=1&b")
        answer = read_all(s)
        s.close()
        refused = through(px, b"GET http://z.test/ HTTP/1.1\r\nHost: z.test\r\n\r\n")
        refusal = read_until(refused, b"\r\n\r\n")
        refused.close()
        report = px.report()
    assert answer.startswith(b"HTTP/1.1 301") and b"Location: https://a.test/x" in answer, answer
    (head,) = seen.heads
    assert head.startswith(b"POST /x?q=1 HTTP/1.1\r\n"), head
    lower = head.lower()
    assert b"host: a.test:%d" % port in lower and b"connection: close" in lower
    assert b"proxy-" not in lower and head.endswith(b"\r\n\r\na=1&b"), head
    assert [t["family"] for t in report["tunnels"]] == ["http"] and report["connections"] == []
    # a host the lab does not serve is refused as a CONNECT to it is
    assert refusal.startswith(b"HTTP/1.1 403"), refusal


@pytest.mark.parametrize("arm", ["h2-parallel:2", "h2", "h1"])
def test_an_origin_that_refuses_connections_fails_the_connect(tmp_path: Path, site: Any,
                                                              arm: str) -> None:
    """The CONNECT is answered once the upstream TCP connection is up: a port nothing listens
    on gets 502 to the CONNECT itself (Chromium: the request fails, net::ERR_TUNNEL_CONNECTION_
    FAILED), not 200 and then a 502 response of the proxy's that the page would take for the
    server's (until 2026-11-29)."""
    _, cert = site
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with proxy(tmp_path, cert, arm) as px:
        raw = through(px, f"CONNECT a.test:{port} HTTP/1.1\r\nHost: a.test:{port}\r\n\r\n"
                      .encode())
        answer = read_until(raw, b"\r\n\r\n")
        raw.close()
        report = px.report()
    assert answer.startswith(b"HTTP/1.1 502"), answer
    (refusal,) = [r for r in report["refused"] if r["target"] == f"a.test:{port}"]
    assert refusal["status"] == 502 and "a.test" in refusal["reason"], refusal


def test_an_origin_that_does_not_answer_quic_fails_in_the_handshake_limit() -> None:
    """Under h3 a connection whose QUIC handshake has not completed within
    ``Target.quic_handshake_s`` (Chromium's 10 s; 1 s here) fails, and its requests get the
    proxy's 502 (browser_side.error_response), instead of waiting for aioquic's 60 s idle timeout
    (the real-web /errors/ under proxy-h3, 2026-11-29: its image on a port nothing listens on
    held the page's load event until the plan moved on). A real aioquic client, a UDP port with
    nothing behind it."""
    import time

    from protolens.proxy.core import ConnStats, RequestHead
    from protolens.proxy.upstream import Pool, Target, UpstreamError

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = Target("a.test", "127.0.0.1", port, ssl.create_default_context(), None, 1.0)
    pool = Pool(target, "h3", 1, lambda host, fam: ConnStats(1, host, fam))
    req = RequestHead(b"GET", b"https", f"a.test:{port}".encode(), b"/", ())

    async def go() -> float:
        t0 = time.monotonic()
        with pytest.raises(UpstreamError, match="no QUIC handshake in 1 s"):
            await pool.request(req, b"")
        return time.monotonic() - t0

    took = asyncio.run(go())
    assert 1.0 <= took < 5.0, took
