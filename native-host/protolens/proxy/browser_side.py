"""The browser side of an intercepted connection (asyncio adapters around the sans-io h11 and
h2 state machines): requests from the browser go to an upstream ``Pool``, responses come back
within the browser's flow-control windows. The listener and CONNECT handling are ``server``'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h11

from protolens.proxy.core import (
    ResponseHead,
    h1_head,
    is_websocket_upgrade,
    request_from_h1,
    request_from_h2,
    response_to_h2,
)
from protolens.proxy.streams import send_windowed
from protolens.proxy.upstream import Pool, Response, UpstreamError


async def browser_h1(pool: Pool, host: str, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter,
                     upgrade: Callable[[bytes], Awaitable[None]] | None = None) -> None:
    """Requests of one browser HTTP/1.1 connection, one after another. A WebSocket handshake
    goes to ``upgrade`` with its bytes as they came (and whatever followed them), which then owns
    the connection (``passthrough.relay_upgrade``)."""
    conn = h11.Connection(h11.SERVER)

    async def next_event() -> Any:
        while True:
            ev = conn.next_event()
            if ev is not h11.NEED_DATA:
                return ev
            conn.receive_data(await reader.read(65536))

    while True:
        ev = await next_event()
        if not isinstance(ev, h11.Request):
            return
        body = b""
        while not isinstance(part := await next_event(), h11.EndOfMessage):
            if isinstance(part, h11.Data):
                body += part.data
            elif isinstance(part, h11.ConnectionClosed):
                return
        if upgrade is not None and is_websocket_upgrade(ev.headers):
            await upgrade(h1_head(ev.method, ev.target, ev.headers.raw_items()) + body
                          + conn.trailing_data[0])
            return
        req = request_from_h1(ev.method, ev.target, ev.headers, host.encode())
        try:
            resp = await pool.request(req, body)
        except UpstreamError as exc:
            resp = error_response(str(exc))
        headers = [(n, v) for n, v in resp.head.headers]
        writer.write(conn.send(h11.Response(status_code=resp.head.status, headers=headers)))
        while (item := await resp.chunks.get()) is not None:
            if isinstance(item, BaseException):
                return  # cannot signal an error mid-body on h1: close the connection
            data, n = item
            writer.write(conn.send(h11.Data(data=data)))
            await writer.drain()
            resp.consumed(n)
        writer.write(conn.send(h11.EndOfMessage()))
        await writer.drain()
        if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
            return
        conn.start_next_cycle()


def error_response(reason: str) -> Response:
    q: asyncio.Queue[Any] = asyncio.Queue()
    body = reason.encode()
    q.put_nowait((body, 0))
    q.put_nowait(None)
    return Response(ResponseHead(502, ((b"content-type", b"text/plain"),
                                       (b"content-length", str(len(body)).encode()))), q)


class BrowserH2:
    """The browser side of an intercepted HTTP/2 connection."""

    def __init__(self, pool: Callable[[], Pool], host: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.pool, self.host = pool, host
        self.reader, self.writer = reader, writer
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=False, header_encoding=None))
        self.heads: dict[int, list[tuple[bytes, bytes]]] = {}
        self.bodies: dict[int, bytearray] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.window = asyncio.Event()

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.writer.write(data)

    async def run(self) -> None:
        self.conn.initiate_connection()
        self.flush()
        try:
            while data := await self.reader.read(65536):
                try:
                    events = self.conn.receive_data(data)
                except h2.exceptions.ProtocolError:
                    self.flush()
                    return
                for ev in events:
                    self.event(ev)
                self.flush()
                await self.writer.drain()
        finally:
            for task in self.tasks.values():
                task.cancel()

    def event(self, ev: h2.events.Event) -> None:
        if isinstance(ev, h2.events.RequestReceived):
            self.heads[ev.stream_id or 0] = list(ev.headers or ())
        elif isinstance(ev, h2.events.DataReceived):
            sid = ev.stream_id or 0
            self.bodies.setdefault(sid, bytearray()).extend(ev.data or b"")
            # request bodies are buffered whole, so their window re-opens on receipt
            self.conn.acknowledge_received_data(ev.flow_controlled_length or 0, sid)
        elif isinstance(ev, h2.events.StreamEnded):
            # the h2 library can report the end separately after END_STREAM on HEADERS:
            # forward one request per stream only (docs/ARCHITECTURE.md, proxy pitfalls)
            sid = ev.stream_id or 0
            if sid in self.heads and sid not in self.tasks:
                self.tasks[sid] = asyncio.get_running_loop().create_task(self.stream(sid))
        elif isinstance(ev, h2.events.StreamReset):
            task = self.tasks.pop(ev.stream_id or 0, None)
            if task:
                task.cancel()
        elif isinstance(ev, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
        # PriorityUpdated is dropped: stream ids differ upstream (docs/ARCHITECTURE.md pitfalls)

    async def stream(self, sid: int) -> None:
        req = request_from_h2(self.heads.pop(sid))
        body = bytes(self.bodies.pop(sid, b""))
        try:
            resp = await self.pool().request(req, body)
        except UpstreamError as exc:
            resp = error_response(str(exc))
        try:
            self.conn.send_headers(sid, response_to_h2(resp.head))
            self.flush()
            while (item := await resp.chunks.get()) is not None:
                if isinstance(item, BaseException):
                    self.conn.reset_stream(sid, 2)  # INTERNAL_ERROR
                    self.flush()
                    return
                data, n = item
                await self.send(sid, data)
                resp.consumed(n)
            self.conn.end_stream(sid)
            self.flush()
        except h2.exceptions.StreamClosedError:
            return

    async def send(self, sid: int, data: bytes) -> None:
        """DATA frames within the browser's stream and connection windows."""
        async def flush() -> None:
            self.flush()

        await send_windowed(self.conn, sid, data, self.window, flush)
        await self.writer.drain()


# ---- control socket --------------------------------------------------------------------------
