"""The proxy's two byte-moving loops, written once (asyncio adapters; the arithmetic is
``core.next_chunk``): an HTTP/2 DATA sender that waits for flow-control window, used by the
browser side (responses) and the upstream HTTP/2 client (request bodies), and a byte pipe for
tunnels, used by the interception proxy's plain tunnel and the CONNECT relay.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import h2.connection

from protolens.proxy.core import next_chunk

PIPE_CHUNK = 65536


async def send_windowed(conn: h2.connection.H2Connection, sid: int, data: bytes,
                        window: asyncio.Event, flush: Callable[[], Awaitable[None]], *,
                        end_stream: bool = False,
                        after_wait: Callable[[], None] = lambda: None) -> None:
    """DATA frames for ``data`` on stream ``sid``, never beyond the stream's and the
    connection's send windows or the peer's frame size (RFC 9113, 6.9.1): when no window is
    left it waits for ``window`` (set by whoever reads WINDOW_UPDATE), then calls ``after_wait``
    (which may raise to give up). ``flush`` writes the encoded frames after each chunk; with
    ``end_stream`` the last frame ends the stream."""
    sent = 0
    while sent < len(data):
        n = next_chunk(len(data) - sent, conn.local_flow_control_window(sid),
                       conn.outbound_flow_control_window, conn.max_outbound_frame_size)
        if n == 0:
            window.clear()
            await window.wait()
            after_wait()
            continue
        conn.send_data(sid, data[sent:sent + n], end_stream=end_stream and sent + n == len(data))
        sent += n
        await flush()


async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter,
               on_data: Callable[[bytes], None], idle_s: float | None = None,
               still_busy: Callable[[], bool] = lambda: False) -> None:
    """Copies ``src`` to ``dst`` until end of file, an OS error or ``idle_s`` seconds without
    data (unless ``still_busy()``, e.g. the other direction is moving); ``on_data`` sees each
    chunk before it is written. Then half-closes ``dst`` so the peer sees the end."""
    with contextlib.suppress(OSError):
        while True:
            try:
                data = await asyncio.wait_for(src.read(PIPE_CHUNK), idle_s)
            except TimeoutError:
                if still_busy():
                    continue
                break
            if not data:
                break
            on_data(data)
            dst.write(data)
            await dst.drain()
    with contextlib.suppress(OSError):
        if dst.can_write_eof():
            dst.write_eof()
