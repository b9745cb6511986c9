"""Types shared by the proxy's upstream connections: targets, responses, errors."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass

from protolens.proxy.core import (
    ResponseHead,
)

CHROMIUM_STREAM_WINDOW = 6 * 1024 * 1024
CHROMIUM_SESSION_WINDOW = 15 * 1024 * 1024
"""Chromium's own HTTP/2 receive windows (net/spdy: kDefaultInitialWindowSize 6 MB per stream,
15 MB per session), so the server sees the windows it would see from the browser directly."""

Item = tuple[bytes, int] | None | BaseException


def now_ms() -> float:
    return time.time() * 1000


class UpstreamError(Exception):
    """An upstream connection failed; the stream gets a 502 or a reset."""


@dataclass
class Response:
    head: ResponseHead
    chunks: asyncio.Queue[Item]
    """(data, flow-controlled length), then None at the end, or an exception."""
    consumed: Callable[[int], None] = lambda n: None


@dataclass
class Target:
    host: str
    ip: str
    port: int
    ssl: ssl.SSLContext
    """Client context verifying the server (the testbed CA)."""
    quic_ca: str | None = None
    quic_handshake_s: float = 10.0
    """An HTTP/3 connection whose QUIC handshake has not completed by then fails (Chromium's own
    limit: QUICHE's ``kMaxTimeForCryptoHandshakeSecs``, 10 s, quic_constants.h); without it
    aioquic waited for its idle timeout, 60 s, on an origin that does not answer QUIC."""




async def open_tls(t: Target, ctx: ssl.SSLContext, tcp: asyncio.Future[None] | None
                   ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """TCP to the server, then TLS on it; ``tcp`` (``Pool.reachable``) is resolved in between:
    the CONNECT it waits for is answered once the server took the connection, or refused if it
    did not (refused, unreachable), while TLS goes on beside the browser's own handshake."""
    try:
        reader, writer = await asyncio.open_connection(t.ip, t.port)
    except OSError as exc:
        if tcp is not None and not tcp.done():
            tcp.set_exception(UpstreamError(f"{t.host}: {exc}"))
            tcp.exception()  # retrieved: reachable() raises it, if anyone asks
        raise
    if tcp is not None and not tcp.done():
        tcp.set_result(None)
    await writer.start_tls(ctx, server_hostname=t.host)
    return reader, writer
