"""The local CONNECT relay (host side of ``no-h3`` in an everyday browser; docs/POLICY.md).

A plain tunnel: it never terminates TLS, never looks inside, and never serves anything but CONNECT.
The extension routes ``no-h3`` domains to it with a ``chrome.proxy`` PAC script (``policy/pac.py``
writes the same one); since Chromium never uses QUIC through an HTTP proxy (verified,
docs/ARCHITECTURE.md), those domains stay on HTTP/2 or HTTP/1.1. Loopback only. Every CONNECT
must carry the per-run credential; targets are checked by ``proxy/targets.py`` (policy-named
hosts, ports 443 and 80, never loopback or the relay itself); names are resolved normally (it is
the user's own traffic), or through ``hosts`` (name -> address) in the lab and in tests.
Connections are bounded in time and number (``targets.Limits``).
"""

from __future__ import annotations

import asyncio
import resource
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import h11

from protolens.proxy import peer as peer_process
from protolens.proxy.core import check_basic, is_loopback, parse_authority
from protolens.proxy.streams import pipe
from protolens.proxy.targets import Limits, Target, check_target, connection_cap, usable_addresses


class Activity:
    """The last time a tunnel moved a byte either way (monotonic seconds)."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        self.last = time.monotonic()


def _response(conn: h11.Connection, status: int, reason: str = "") -> bytes:
    # Chromium asks the extension (webRequest.onAuthRequired) only for a 407 that names a
    # scheme (RFC 9110, 11.7.1: Proxy-Authenticate is required in a 407)
    auth = [(b"proxy-authenticate", b'Basic realm="protolens"')] if status == 407 else []
    why = [(b"x-protolens-refused", reason.encode("ascii", "replace")[:200])] if reason else []
    return conn.send(h11.Response(status_code=status, headers=[
        *auth, *why, (b"content-length", b"0"), (b"connection", b"close")]))


async def _system_resolve(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return [str(i[4][0]) for i in infos]


@dataclass
class Relay:
    """One relay's settings and live state; ``handle`` serves one client connection."""

    token: str
    """The per-run credential (user ``protolens``); every CONNECT must carry it."""
    hosts: Mapping[str, str] | None = None
    """Lab and tests: serve only these names, at these addresses (``targets`` module)."""
    allowed: Callable[[str], bool] = field(default=lambda host: False)
    """Everyday mode: the names a policy routes through the relay."""
    check_process: bool = False
    """Also accept a client process that carries the credential in its environment
    (``PROTOLENS_PROXY_TOKEN``, ``proxy/peer.py``): how a browser started from the command line
    authenticates, since Chromium takes no proxy credential as a flag."""
    limits: Limits = field(default_factory=Limits)
    resolve: Callable[[str, int], Awaitable[list[str]]] = field(default=None)  # type: ignore[assignment]
    """Name -> addresses; the system resolver unless a test gives another."""
    address: tuple[str, int] | None = None
    """Where the relay listens, once it does (never a target)."""
    active: int = 0
    cap: int = field(default=0)
    _pending: dict[asyncio.StreamWriter, None] = field(default_factory=dict)
    """Connections still waiting for their request, oldest first."""

    def __post_init__(self) -> None:
        if self.resolve is None:
            self.resolve = _system_resolve
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self.cap = connection_cap(self.limits, nofile if nofile > 0 else 1024)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= self.cap:
            if not self._pending:  # every slot carries a tunnel: the descriptors stay the host's
                writer.close()
                return
            # the oldest connection still without a request gives way: idle clients cannot
            # keep the browser's own tunnels out
            oldest = next(iter(self._pending))
            del self._pending[oldest]
            oldest.transport.abort()
        self.active += 1
        try:
            if is_loopback(writer.get_extra_info("peername")[0]):
                await self._serve(reader, writer)
        except (OSError, h11.ProtocolError, TimeoutError, asyncio.IncompleteReadError):
            pass
        finally:
            self.active -= 1
            writer.close()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                       conn: h11.Connection) -> object:
        self._pending[writer] = None
        try:
            async with asyncio.timeout(self.limits.handshake_s):
                ev: object = h11.NEED_DATA
                while ev is h11.NEED_DATA:
                    conn.receive_data(await reader.read(65536))
                    ev = conn.next_event()
                return ev
        finally:
            self._pending.pop(writer, None)

    async def _authorized(self, ev: h11.Request, writer: asyncio.StreamWriter) -> bool:
        if check_basic(dict(ev.headers).get(b"proxy-authorization"), self.token):
            return True
        if not self.check_process:
            return False
        peer, local = writer.get_extra_info("peername"), writer.get_extra_info("sockname")
        return await asyncio.to_thread(peer_process.process_has_token, (peer[0], peer[1]),
                                       (local[0], local[1]), self.token)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        ev = await self._request(reader, writer, conn)
        if not isinstance(ev, h11.Request) or ev.method != b"CONNECT":
            writer.write(_response(conn, 405))
        elif not await self._authorized(ev, writer):
            writer.write(_response(conn, 407))
        elif (parsed := parse_authority(ev.target.decode("latin-1"))) is None:
            writer.write(_response(conn, 400))
        else:
            target = check_target(*parsed, hosts=self.hosts, allowed=self.allowed,
                                  relay=self.address)
            if isinstance(target, str):
                writer.write(_response(conn, 403, target))
            else:
                await self._tunnel(target, conn, reader, writer)
                return
        await writer.drain()

    async def _tunnel(self, target: Target, conn: h11.Connection, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        if target.mapped is not None:
            addresses: list[str] | str = [target.mapped]
        else:
            addresses = usable_addresses(await self.resolve(target.host, target.port),
                                         self.address, target.port)
        if isinstance(addresses, str):
            writer.write(_response(conn, 403, f"{target.host}: {addresses}"))
            await writer.drain()
            return
        try:
            async with asyncio.timeout(self.limits.handshake_s):
                up_r, up_w = await asyncio.open_connection(addresses[0], target.port)
        except (OSError, TimeoutError):
            writer.write(_response(conn, 502))
            await writer.drain()
            return
        writer.write(conn.send(h11.Response(status_code=200, headers=[],
                                            reason=b"Connection established")))
        await writer.drain()
        seen = Activity()
        try:
            idle_s = self.limits.idle_s

            def busy() -> bool:  # the other direction is busy (a long download)
                return time.monotonic() - seen.last < idle_s

            await asyncio.gather(pipe(reader, up_w, lambda _: seen.touch(), idle_s, busy),
                                 pipe(up_r, writer, lambda _: seen.touch(), idle_s, busy))
        finally:
            up_w.close()


async def serve(relay: Relay, port: int, *, ready: Callable[[int], None] | None = None) -> None:
    server = await asyncio.start_server(relay.handle, "127.0.0.1", port)
    relay.address = server.sockets[0].getsockname()[:2]
    if ready is not None:
        ready(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()
