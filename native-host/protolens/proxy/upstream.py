"""Upstream connections of the protocol-translating proxy (asyncio adapters around the sans-io
h11, h2 and aioquic state machines) and the per-origin pool that assigns streams to them.

A request returns a ``Response``: the head, then body chunks from a queue. The consumer calls
``consumed(n)`` once it has passed ``n`` bytes on to the browser; only then does an HTTP/2
upstream connection re-open its flow-control window (RFC 9113 Sec. 5.2), so a slow browser slows
the server, as it would without the proxy. HTTP/1.1 gets the same back-pressure from TCP (the
reader waits on a bounded queue); aioquic opens its QUIC windows itself as data arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import h11
from aioquic.asyncio.client import connect as quic_connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived as H3Data
from aioquic.h3.events import HeadersReceived as H3Headers
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated as QuicTerminated
from aioquic.quic.events import QuicEvent

from protolens.proxy.core import (
    ConnStats,
    RequestHead,
    ResponseHead,
    RoundRobin,
    next_chunk,
    request_to_h1,
    request_to_h2,
    response_from_h2,
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


class H2Upstream:
    """One upstream HTTP/2 connection."""

    family = "h2"

    def __init__(self, target: Target, stats: ConnStats) -> None:
        self.t, self.stats = target, stats
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding=None))
        self.writer: asyncio.StreamWriter | None = None
        self.heads: dict[int, asyncio.Future[ResponseHead]] = {}
        self.queues: dict[int, asyncio.Queue[Item]] = {}
        self.window = asyncio.Event()
        self.closed: BaseException | None = None
        self.lock = asyncio.Lock()

    async def open(self) -> None:
        reader, writer = await asyncio.open_connection(self.t.ip, self.t.port, ssl=self.t.ssl,
                                                       server_hostname=self.t.host)
        alpn = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        if alpn != "h2":
            writer.close()
            raise UpstreamError(f"{self.t.host}: server chose {alpn!r}, not h2")
        self.writer = writer
        sock = writer.get_extra_info("sockname")
        self.stats.local_port, self.stats.remote_ip, self.stats.remote_port = \
            sock[1], self.t.ip, self.t.port
        self.conn.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: CHROMIUM_STREAM_WINDOW,
            h2.settings.SettingCodes.ENABLE_PUSH: 0})
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(CHROMIUM_SESSION_WINDOW - 65535)
        await self._flush()
        asyncio.get_running_loop().create_task(self._read(reader))

    async def _flush(self) -> None:
        data = self.conn.data_to_send()
        if data and self.writer is not None:
            self.stats.bytes_up += len(data)
            self.writer.write(data)
            async with self.lock:
                await self.writer.drain()

    def _flush_nowait(self) -> None:
        data = self.conn.data_to_send()
        if data and self.writer is not None:
            self.stats.bytes_up += len(data)
            self.writer.write(data)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    raise UpstreamError(f"{self.t.host}: upstream closed the connection")
                self.stats.bytes += len(data)
                self.stats.touched(now_ms())
                for ev in self.conn.receive_data(data):
                    self._event(ev)
                await self._flush()
        except (OSError, UpstreamError, h2.exceptions.ProtocolError) as exc:
            self._fail(exc)

    def _event(self, ev: h2.events.Event) -> None:
        if isinstance(ev, h2.events.ResponseReceived):
            fut = self.heads.get(ev.stream_id)
            if fut and not fut.done():
                fut.set_result(response_from_h2(ev.headers or ()))
        elif isinstance(ev, h2.events.DataReceived):
            q = self.queues.get(ev.stream_id)
            if q is not None:
                q.put_nowait((ev.data or b"", ev.flow_controlled_length or 0))
        elif isinstance(ev, h2.events.StreamEnded):
            q = self.queues.get(ev.stream_id)
            if q is not None:
                q.put_nowait(None)
        elif isinstance(ev, h2.events.StreamReset):
            err = UpstreamError(f"{self.t.host}: stream reset ({ev.error_code})")
            self._fail_stream(ev.stream_id or 0, err)
        elif isinstance(ev, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self._fail(UpstreamError(f"{self.t.host}: GOAWAY ({ev.error_code})"))

    def _fail_stream(self, sid: int, exc: BaseException) -> None:
        fut = self.heads.get(sid)
        if fut and not fut.done():
            fut.set_exception(exc)
        q = self.queues.get(sid)
        if q is not None:
            q.put_nowait(exc)

    def _fail(self, exc: BaseException) -> None:
        self.closed = exc
        for sid in list(self.heads):
            self._fail_stream(sid, exc)
        self.window.set()
        if self.writer is not None:
            self.writer.close()

    async def request(self, req: RequestHead, body: bytes) -> Response:
        if self.closed is not None:
            raise UpstreamError(str(self.closed))
        sid = self.conn.get_next_available_stream_id()
        loop = asyncio.get_running_loop()
        self.heads[sid] = loop.create_future()
        q: asyncio.Queue[Item] = asyncio.Queue()
        self.queues[sid] = q
        self.stats.request_started(now_ms())
        self.stats.streams.append(sid)
        self.conn.send_headers(sid, request_to_h2(req), end_stream=not body)
        await self._flush()
        sent = 0
        while sent < len(body):
            n = next_chunk(len(body) - sent, self.conn.local_flow_control_window(sid),
                           self.conn.outbound_flow_control_window,
                           self.conn.max_outbound_frame_size)
            if n == 0:
                self.window.clear()
                await self.window.wait()
                if self.closed is not None:
                    raise UpstreamError(str(self.closed))
                continue
            self.conn.send_data(sid, body[sent:sent + n], end_stream=sent + n == len(body))
            sent += n
            await self._flush()
        head = await self.heads[sid]

        def consumed(n: int) -> None:
            if n and self.closed is None:
                with contextlib.suppress(h2.exceptions.ProtocolError, KeyError):
                    self.conn.acknowledge_received_data(n, sid)
                self._flush_nowait()

        return Response(head, q, consumed)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class H1Upstream:
    """One upstream HTTP/1.1 connection; one request at a time."""

    family = "h1"

    def __init__(self, target: Target, stats: ConnStats) -> None:
        self.t, self.stats = target, stats
        self.conn = h11.Connection(h11.CLIENT)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.busy = asyncio.Lock()

    async def open(self) -> None:
        ctx = self.t.ssl
        self.reader, self.writer = await asyncio.open_connection(
            self.t.ip, self.t.port, ssl=ctx, server_hostname=self.t.host)
        alpn = self.writer.get_extra_info("ssl_object").selected_alpn_protocol()
        if alpn not in (None, "http/1.1"):
            raise UpstreamError(f"{self.t.host}: server chose {alpn!r}, not http/1.1")
        sock = self.writer.get_extra_info("sockname")
        self.stats.local_port, self.stats.remote_ip, self.stats.remote_port = \
            sock[1], self.t.ip, self.t.port

    def _send(self, event: Any) -> None:
        data = self.conn.send(event)
        if data and self.writer is not None:
            self.stats.bytes_up += len(data)
            self.writer.write(data)

    async def _next(self) -> Any:
        assert self.reader is not None
        while True:
            ev = self.conn.next_event()
            if ev is h11.NEED_DATA:
                data = await self.reader.read(65536)
                self.stats.bytes += len(data)
                self.stats.touched(now_ms())
                self.conn.receive_data(data)
                continue
            return ev

    async def request(self, req: RequestHead, body: bytes) -> Response:
        await self.busy.acquire()
        try:
            if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
                self.conn.start_next_cycle()
            method, target, headers = request_to_h1(req)
            if body:
                headers.append((b"content-length", str(len(body)).encode()))
            self.stats.request_started(now_ms())
            self._send(h11.Request(method=method, target=target, headers=headers))
            if body:
                self._send(h11.Data(data=body))
            self._send(h11.EndOfMessage())
            ev = await self._next()
            while isinstance(ev, h11.InformationalResponse):
                ev = await self._next()
            if not isinstance(ev, h11.Response):
                raise UpstreamError(f"{self.t.host}: no response ({ev!r})")
        except BaseException:
            self.busy.release()
            raise
        head = ResponseHead(ev.status_code, tuple(
            (n, v) for n, v in ev.headers if n not in (b"connection", b"keep-alive",
                                                       b"transfer-encoding")))
        q: asyncio.Queue[Item] = asyncio.Queue(maxsize=16)
        asyncio.get_running_loop().create_task(self._body(q))
        return Response(head, q)

    async def _body(self, q: asyncio.Queue[Item]) -> None:
        try:
            while True:
                ev = await self._next()
                if isinstance(ev, h11.Data):
                    await q.put((bytes(ev.data), 0))
                elif isinstance(ev, h11.EndOfMessage):
                    await q.put(None)
                    return
                else:
                    raise UpstreamError(f"{self.t.host}: connection closed mid-response")
        except (OSError, h11.ProtocolError, UpstreamError) as exc:
            await q.put(exc)
        finally:
            self.busy.release()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class _H3Protocol(QuicConnectionProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.heads: dict[int, asyncio.Future[ResponseHead]] = {}
        self.queues: dict[int, asyncio.Queue[Item]] = {}
        self.stats: ConnStats | None = None

    def datagram_received(self, data: bytes | str, addr: Any) -> None:
        if self.stats is not None and isinstance(data, bytes):
            self.stats.bytes += len(data)
            self.stats.touched(now_ms())
        super().datagram_received(data, addr)

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, QuicTerminated):
            err = UpstreamError(f"QUIC connection closed ({event.reason_phrase})")
            for sid, fut in self.heads.items():
                if not fut.done():
                    fut.set_exception(err)
                self.queues[sid].put_nowait(err)
        for ev in self.h3.handle_event(event):
            if isinstance(ev, H3Headers):
                head = self.heads.get(ev.stream_id)
                if head is not None and not head.done():
                    head.set_result(response_from_h2(ev.headers))
                if ev.stream_ended and ev.stream_id in self.queues:
                    self.queues[ev.stream_id].put_nowait(None)
            elif isinstance(ev, H3Data) and ev.stream_id in self.queues:
                if ev.data:
                    self.queues[ev.stream_id].put_nowait((ev.data, 0))
                if ev.stream_ended:
                    self.queues[ev.stream_id].put_nowait(None)


@dataclass
class H3Upstream:
    """One upstream HTTP/3 connection (aioquic)."""

    t: Target
    stats: ConnStats
    family: str = "h3"
    proto: _H3Protocol | None = None
    stack: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    async def open(self) -> None:
        config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN,
                                   server_name=self.t.host)
        if self.t.quic_ca:
            config.load_verify_locations(self.t.quic_ca)
        proto = await self.stack.enter_async_context(quic_connect(
            self.t.ip, self.t.port, configuration=config, create_protocol=_H3Protocol))
        assert isinstance(proto, _H3Protocol)
        proto.stats = self.stats
        self.proto = proto
        transport = proto._transport  # noqa: SLF001 (aioquic keeps it private)
        assert transport is not None
        sock = transport.get_extra_info("sockname")
        self.stats.local_port, self.stats.remote_ip, self.stats.remote_port = \
            sock[1], self.t.ip, self.t.port

    async def request(self, req: RequestHead, body: bytes) -> Response:
        p = self.proto
        assert p is not None
        sid = p._quic.get_next_available_stream_id()  # noqa: SLF001
        p.heads[sid] = asyncio.get_running_loop().create_future()
        q: asyncio.Queue[Item] = asyncio.Queue()
        p.queues[sid] = q
        self.stats.request_started(now_ms())
        p.h3.send_headers(sid, request_to_h2(req), end_stream=not body)
        if body:
            p.h3.send_data(sid, body, end_stream=True)
        p.transmit()
        return Response(await p.heads[sid], q)

    def close(self) -> None:
        if self.proto is not None:
            self.proto.close()


Upstream = H1Upstream | H2Upstream | H3Upstream


class Pool:
    """The upstream connections of one origin under one arm: ``n`` connections of ``family``,
    opened on first use or by ``warm``, each new stream on the next one round-robin."""

    def __init__(self, target: Target, family: str, n: int,
                 new_stats: Callable[[str, str], ConnStats]) -> None:
        self.target, self.family = target, family
        self.rr = RoundRobin(n)
        self.slots: list[asyncio.Future[Upstream] | None] = [None] * n
        self.new_stats = new_stats
        self.warming: list[asyncio.Task[Upstream]] = []

    def warm(self) -> None:
        """Start opening, in the background, the connection the next stream will use: called
        when the browser's CONNECT is accepted, so the upstream TCP + TLS handshakes overlap the
        browser's TLS handshake with the proxy instead of following its first request. Only
        that one: h2-parallel:N's other connections still open on first use, so a host with
        fewer requests than N gets no idle connection."""
        i = self.rr.peek()
        if self.slots[i] is None:
            task = asyncio.get_running_loop().create_task(self._slot(i))
            task.add_done_callback(_retrieve)
            self.warming.append(task)

    async def _slot(self, i: int) -> Upstream:
        fut = self.slots[i]
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self.slots[i] = fut
            stats = self.new_stats(self.target.host, self.family)
            up: Upstream = {"h1": H1Upstream, "h2": H2Upstream,
                            "h3": H3Upstream}[self.family](self.target, stats)
            try:
                await up.open()
            except BaseException as exc:
                self.slots[i] = None
                fut.set_exception(UpstreamError(f"{self.target.host}: {exc}"))
                fut.exception()  # retrieved: waiters get it too
                raise UpstreamError(f"{self.target.host}: {exc}") from None
            fut.set_result(up)
        return await fut

    async def request(self, req: RequestHead, body: bytes) -> Response:
        up = await self._slot(self.rr.assign())
        if isinstance(up, H2Upstream) and up.closed is not None:
            raise UpstreamError(str(up.closed))
        return await up.request(req, body)

    def close(self) -> None:
        for task in self.warming:
            task.cancel()  # a connection still opening is abandoned, not leaked
        for fut in self.slots:
            if fut is not None and fut.done() and not fut.exception():
                fut.result().close()


def _retrieve(task: asyncio.Task[Upstream]) -> None:
    """A failed warm-up is reported by the request that needs the connection, not here."""
    if not task.cancelled():
        task.exception()
