"""HTTP/1.1 upstream connections of the lab proxy (asyncio adapter around the sans-io ``h11``)."""

from __future__ import annotations

import asyncio
from typing import Any

import h11

from protolens.proxy.core import (
    ConnStats,
    RequestHead,
    ResponseHead,
    request_to_h1,
)
from protolens.proxy.upstream_base import (
    Item,
    Response,
    Target,
    UpstreamError,
    now_ms,
    open_tls,
)


class H1Upstream:
    """One upstream HTTP/1.1 connection; one request at a time."""

    family = "h1"

    def __init__(self, target: Target, stats: ConnStats) -> None:
        self.t, self.stats = target, stats
        self.conn = h11.Connection(h11.CLIENT)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.busy = asyncio.Lock()
        self.tcp: asyncio.Future[None] | None = None
        """Resolved once TCP is up (``upstream_base.open_tls``; set by ``Pool``)."""

    async def open(self) -> None:
        self.reader, self.writer = await open_tls(self.t, self.t.ssl, self.tcp)
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


