"""The local CONNECT relay (host side of ``no-h3`` in an everyday browser; issue 6, item 3).

A plain tunnel: it never terminates TLS, never looks inside, and never serves anything but
CONNECT. The extension routes ``no-h3`` domains to it with a ``chrome.proxy`` PAC script; since
Chromium never uses QUIC through an HTTP proxy (verified, ARCHITECTURE.md), those domains stay on
HTTP/2 or HTTP/1.1. Loopback only. Names are resolved normally (it is the user's own traffic),
or through ``hosts`` (name -> address) in the lab and in tests.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping

import h11

from protolens.proxy.core import check_basic, is_loopback, parse_authority


def pac_script(port: int, domains: list[str]) -> str:
    """The PAC script the extension installs with ``chrome.proxy.settings`` (mode ``pac_script``):
    ``no-h3`` domains (patterns as stored: ``a.com``, ``*.a.com``, ``www.a.com``) go through the
    relay, everything else direct."""
    tests = []
    for d in domains:
        if d.startswith("*."):
            tests.append(f'dnsDomainIs(h, "{d[1:]}")')
        else:
            tests.append(f'(h == "{d}" || dnsDomainIs(h, ".{d}"))')
    cond = " || ".join(tests) or "false"
    return (f"function FindProxyForURL(url, host) {{\n  var h = host.toLowerCase();\n"
            f"  if ({cond}) return \"PROXY 127.0.0.1:{port}\";\n  return \"DIRECT\";\n}}\n")


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    with contextlib.suppress(OSError):
        if dst.can_write_eof():
            dst.write_eof()


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *,
                 hosts: Mapping[str, str] | None, token: str | None) -> None:
    try:
        peer = writer.get_extra_info("peername")
        if not is_loopback(peer[0]):
            return
        conn = h11.Connection(h11.SERVER)
        ev: object = h11.NEED_DATA
        while ev is h11.NEED_DATA:
            conn.receive_data(await reader.read(65536))
            ev = conn.next_event()
        status, target = 200, None
        if not isinstance(ev, h11.Request) or ev.method != b"CONNECT":
            status = 405
        elif token is not None and not check_basic(dict(ev.headers).get(b"proxy-authorization"),
                                                   token):
            status = 407
        else:
            target = parse_authority(ev.target.decode("latin-1"))
            status = 400 if target is None else 200
        if status != 200 or target is None:
            # Chromium asks the extension (webRequest.onAuthRequired) only for a 407 that names a
            # scheme (RFC 9110, 11.7.1: Proxy-Authenticate is required in a 407)
            auth = [(b"proxy-authenticate", b'Basic realm="protolens"')] if status == 407 else []
            writer.write(conn.send(h11.Response(status_code=status, headers=[
                *auth, (b"content-length", b"0"), (b"connection", b"close")])))
            await writer.drain()
            return
        host, port = target
        address = hosts.get(host) if hosts is not None else host
        if address is None:
            writer.write(conn.send(h11.Response(status_code=403, headers=[
                (b"content-length", b"0")])))
            await writer.drain()
            return
        try:
            up_r, up_w = await asyncio.open_connection(address, port)
        except OSError:
            writer.write(conn.send(h11.Response(status_code=502, headers=[
                (b"content-length", b"0")])))
            await writer.drain()
            return
        writer.write(conn.send(h11.Response(status_code=200, headers=[],
                                            reason=b"Connection established")))
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))
        finally:
            up_w.close()
    except (OSError, h11.ProtocolError):
        pass
    finally:
        writer.close()


async def serve(port: int, *, hosts: Mapping[str, str] | None = None, token: str | None = None,
                ready: Callable[[int], None] | None = None) -> None:
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, hosts=hosts, token=token), "127.0.0.1", port)
    if ready is not None:
        ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()
