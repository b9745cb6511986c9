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
from collections.abc import Callable

from protolens.proxy.core import (
    ConnStats,
    RequestHead,
    RoundRobin,
)
from protolens.proxy.upstream_base import (
    Response,
    Target,
    UpstreamError,
    now_ms,
)
from protolens.proxy.upstream_h1 import H1Upstream
from protolens.proxy.upstream_h2 import H2Upstream
from protolens.proxy.upstream_h3 import H3Upstream

Upstream = H1Upstream | H2Upstream | H3Upstream
"""Any upstream connection the pool hands out."""

__all__ = ["H1Upstream", "H2Upstream", "H3Upstream", "Pool", "Response", "Target",
           "UpstreamError", "now_ms"]


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
        self.tcp: list[asyncio.Future[None] | None] = [None] * n
        """Per slot: resolved once its connection's TCP is up (``reachable``)."""

    def warm(self) -> None:
        """Start opening, in the background, the connection the next stream will use: called
        when the browser's CONNECT is accepted, so the upstream TCP + TLS handshakes overlap the
        browser's TLS handshake with the proxy instead of following its first request. Only
        that one: h2-parallel:N's other connections still open on first use, so a host with
        fewer requests than N gets no idle connection."""
        i = self.rr.peek()
        if self.slots[i] is None:
            self._tcp(i)  # before the task runs: reachable() may ask at once
            task = asyncio.get_running_loop().create_task(self._slot(i))
            task.add_done_callback(_retrieve)
            self.warming.append(task)

    async def reachable(self) -> None:
        """Returns once the connection the next stream will use (``warm``) has its TCP
        connection up; raises ``UpstreamError`` if the server cannot be reached. The proxy
        answers the browser's CONNECT then (``server.handle_client``), so an origin that refuses
        connections fails the browser's request as it would without the proxy, instead of
        getting the proxy's 502 as its response. HTTP/3 (QUIC, no TCP) does not wait."""
        i = self.rr.peek()
        fut, tcp = self.slots[i], self.tcp[i]
        if self.family == "h3" or tcp is None or (fut is not None and fut.done()
                                                  and fut.exception() is None):
            return
        await asyncio.shield(tcp)

    def _tcp(self, i: int) -> asyncio.Future[None]:
        tcp = self.tcp[i]
        if tcp is None:
            tcp = self.tcp[i] = asyncio.get_running_loop().create_future()
        return tcp

    async def _slot(self, i: int) -> Upstream:
        fut = self.slots[i]
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self.slots[i] = fut
            stats = self.new_stats(self.target.host, self.family)
            up: Upstream = {"h1": H1Upstream, "h2": H2Upstream,
                            "h3": H3Upstream}[self.family](self.target, stats)
            tcp = self._tcp(i)
            if isinstance(up, H1Upstream | H2Upstream):
                up.tcp = tcp
            try:
                await up.open()
            except BaseException as exc:
                self.slots[i] = self.tcp[i] = None
                err = UpstreamError(f"{self.target.host}: {exc}")
                for f in (fut, tcp):
                    if not f.done():
                        f.set_exception(err)
                    f.exception()  # retrieved: waiters get it too
                raise err from None
            if not tcp.done():
                tcp.set_result(None)
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
