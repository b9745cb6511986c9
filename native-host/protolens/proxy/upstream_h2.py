"""HTTP/2 upstream connections of the lab proxy (asyncio adapter around the sans-io ``h2``).

Flow control: see ``protolens.proxy.upstream``."""

from __future__ import annotations

import asyncio
import contextlib

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from protolens.proxy.core import (
    ConnStats,
    RequestHead,
    ResponseHead,
    request_to_h2,
    response_from_h2,
)
from protolens.proxy.streams import send_windowed
from protolens.proxy.upstream_base import (
    CHROMIUM_SESSION_WINDOW,
    CHROMIUM_STREAM_WINDOW,
    Item,
    Response,
    Target,
    UpstreamError,
    now_ms,
    open_tls,
)


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
        self.tcp: asyncio.Future[None] | None = None
        """Resolved once TCP is up (``upstream_base.open_tls``; set by ``Pool``)."""

    async def open(self) -> None:
        reader, writer = await open_tls(self.t, self.t.ssl, self.tcp)
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
        def still_open() -> None:
            if self.closed is not None:
                raise UpstreamError(str(self.closed))

        await send_windowed(self.conn, sid, body, self.window, self._flush, end_stream=True,
                            after_wait=still_open)
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


