"""What the lab proxy passes through unchanged on an intercepted or proxied request (asyncio
adapter; the decisions are ``core``'s): a WebSocket opened on an intercepted connection, and a
plain-HTTP request sent to the proxy in absolute form. Neither is the arm's to translate: a
browser speaks WebSocket over HTTP/1.1 (RFC 6455) when the server offers no extended CONNECT
(RFC 8441: the browser side does not), and plain HTTP is never HTTP/2 or HTTP/3 in a browser.
Both are reported as pass-through connections (``ConnStats.family`` ``websocket`` or ``http``,
``report``'s ``tunnels``), not as the arm's upstream connections.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from protolens.proxy.core import ConnStats
from protolens.proxy.streams import pipe
from protolens.proxy.upstream_base import Target, now_ms

Counter = Callable[[ConnStats, bool], Callable[[bytes], None]]


async def relay_upgrade(target: Target, stats: ConnStats, request: bytes,
                        reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        count: Counter) -> None:
    """A WebSocket: a connection of its own to the server (TLS, ALPN http/1.1), the browser's
    handshake ``request`` sent as it came, then bytes both ways until either side closes. The
    server's answer (101, or a refusal) reaches the browser as is."""
    up_r, up_w = await _open(target.ip, target.port, stats, request, ssl=target.ssl,
                             server_hostname=target.host)
    try:
        await asyncio.gather(pipe(reader, up_w, count(stats, False)),
                             pipe(up_r, writer, count(stats, True)))
    finally:
        with contextlib.suppress(OSError):
            up_w.close()


async def relay_plain(ip: str, port: int, stats: ConnStats, request: bytes,
                      writer: asyncio.StreamWriter, count: Counter) -> None:
    """A plain-HTTP ``request`` (origin form, ``Connection: close``, its whole body) to the
    server over TCP, and the response piped back until the server closes."""
    up_r, up_w = await _open(ip, port, stats, request)
    try:
        await pipe(up_r, writer, count(stats, True))
    finally:
        with contextlib.suppress(OSError):
            up_w.close()


async def _open(ip: str, port: int, stats: ConnStats, first: bytes, **tls: object
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    up_r, up_w = await asyncio.open_connection(ip, port, **tls)  # type: ignore[arg-type]
    stats.local_port, stats.remote_ip, stats.remote_port = \
        up_w.get_extra_info("sockname")[1], ip, port
    stats.request_started(now_ms())
    up_w.write(first)
    stats.bytes_up += len(first)
    await up_w.drain()
    return up_r, up_w
