"""HTTP/3 upstream connections of the lab proxy (aioquic)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

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
    request_to_h2,
    response_from_h2,
)
from protolens.proxy.upstream_base import (
    Item,
    Response,
    Target,
    UpstreamError,
    now_ms,
)


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
        try:
            async with asyncio.timeout(self.t.quic_handshake_s):
                proto = await self.stack.enter_async_context(quic_connect(
                    self.t.ip, self.t.port, configuration=config, create_protocol=_H3Protocol))
        except TimeoutError:
            raise UpstreamError(f"{self.t.host}: no QUIC handshake in "
                                f"{self.t.quic_handshake_s:g} s") from None
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
