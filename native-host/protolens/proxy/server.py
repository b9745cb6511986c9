"""The proxy's asyncio adapter: the loopback listener, CONNECT (h11), the credential check,
tunnels, TLS termination, and the control socket the lab runner uses (configure, report).
Decisions are ``core``'s; the browser side of intercepted connections is ``browser_side``'s,
upstream protocol handling ``upstream``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import resource
import socket
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11

from protolens.certs import ProxyCA, issue_leaf
from protolens.policy.file import from_stored
from protolens.policy.rules import Rule, parse_arm
from protolens.proxy import peer
from protolens.proxy.browser_side import BrowserH2, browser_h1
from protolens.proxy.core import (
    ConnStats,
    Intercept,
    Refuse,
    Tunnel,
    absolute_form,
    check_basic,
    decide,
    forwarded_h1_headers,
    h1_head,
    is_loopback,
    parse_authority,
    with_every_host,
)
from protolens.proxy.passthrough import relay_plain, relay_upgrade
from protolens.proxy.streams import pipe
from protolens.proxy.targets import Limits, connection_cap, is_numeric_host, usable_addresses
from protolens.proxy.upstream import Pool, Target, UpstreamError, now_ms


@dataclass
class Config:
    token: str
    hosts: dict[str, str]
    """Served host -> the address to reach it on (the testbed server)."""
    ca: ProxyCA
    upstream_ca: str | None
    """CA file that verifies the servers (the testbed CA); None: system trust."""
    rules: list[Rule] = field(default_factory=list)
    check_process: bool = True
    """Also accept peers whose process carries the token in its environment."""
    workdir: Path | None = None
    """Private directory for the per-host leaf chains (removed by ``control.stop``)."""
    limits: Limits = field(default_factory=Limits)
    """Handshake time and connection cap (``targets.Limits``; idle tunnels are the browser's)."""
    resolve: bool = False
    """Real sites (the wan path): a host not in ``hosts`` is resolved by the system resolver
    where the proxy runs (the client namespace's) and served at its first address that is not
    loopback, link-local or otherwise refused (``targets.usable_addresses``)."""
    every_host: str | None = None
    """The arm for a host no rule names (``core.with_every_host``), set per load by
    ``configure``; None: such hosts are tunnelled."""


PASS_THROUGH = ("tunnel", "websocket", "http")
"""``ConnStats.family`` of the connections that are not the arm's: a host without a policy, a
WebSocket, a plain-HTTP request (``passthrough``); ``report`` lists them as ``tunnels``."""


class ProxyState:
    """Everything of one proxy process that a load changes; ``reset`` starts a new load."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.conn_ids = 0
        self.conns: list[ConnStats] = []
        self.refused: list[dict[str, Any]] = []
        self.pools: dict[tuple[str, int, str], Pool] = {}
        self.leaf_dir = cfg.workdir or Path(tempfile.mkdtemp(prefix="protolens-proxy-"))
        self.contexts: dict[tuple[str, tuple[str, ...]], ssl.SSLContext] = {}
        self.client_ctx = ssl.create_default_context(cafile=cfg.upstream_ca)
        self.h1_ctx = ssl.create_default_context(cafile=cfg.upstream_ca)
        self.h1_ctx.set_alpn_protocols(["http/1.1"])
        """A WebSocket's own upstream connection (``passthrough.relay_upgrade``)."""
        self.limits = cfg.limits
        self.cap = connection_cap(self.limits, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        self.active = 0

    def new_stats(self, host: str, family: str) -> ConnStats:
        self.conn_ids += 1
        s = ConnStats(self.conn_ids, host, family)
        self.conns.append(s)
        return s

    def report(self, reset: bool) -> dict[str, Any]:
        up = [c for c in self.conns if c.family not in PASS_THROUGH]
        # a connection opened at CONNECT (Pool.warm) that no request used, e.g. for a browser
        # connection Chromium opened and never used, is not one of the navigation's connections
        out = {"connections": [c.as_dict() for c in up if c.requests],
               "idle": [c.as_dict() for c in up if not c.requests],
               "tunnels": [c.as_dict() for c in self.conns if c.family in PASS_THROUGH],
               "refused": list(self.refused)}
        if reset:
            for pool in self.pools.values():
                pool.close()
            self.pools.clear()
            self.conns, self.refused, self.conn_ids = [], [], 0
        return out

    def server_ctx(self, host: str, alpn: list[str]) -> ssl.SSLContext:
        key = (host, tuple(alpn))
        if key not in self.contexts:
            chain = self.leaf_dir / f"{host}.pem"
            if not chain.exists():
                chain.write_bytes(issue_leaf(self.cfg.ca, host,
                                             datetime.datetime.now(datetime.UTC)))
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(chain, self.cfg.ca.leaf_key)
            ctx.set_alpn_protocols(alpn)
            self.contexts[key] = ctx
        return self.contexts[key]

    def target(self, host: str, d: Intercept) -> Target:
        return Target(host, d.ip, d.port, self._alpn_ctx(d), self.cfg.upstream_ca)

    def _alpn_ctx(self, d: Intercept) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.cfg.upstream_ca)
        ctx.set_alpn_protocols(["http/1.1"] if d.arm.name == "h1" else ["h2"])
        return ctx

    def shared_pool(self, host: str, d: Intercept) -> Pool:
        """h2, h2-parallel:N and h3 share one pool per origin (host and port) across browser
        connections: an origin's anonymous requests (fonts, module scripts) come on a browser
        connection of their own, and go upstream on the same N connections."""
        key = (host, d.port, str(d.arm))
        if key not in self.pools:
            family = "h3" if d.arm.name == "h3" else "h2"
            self.pools[key] = Pool(self.target(host, d), family, d.arm.connections,
                                   self.new_stats)
        return self.pools[key]


async def handle_client(state: ProxyState, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
    peername = writer.get_extra_info("peername")
    sockname = writer.get_extra_info("sockname")
    state.active += 1
    try:
        if not is_loopback(peername[0]):
            state.refused.append({"peer": peername[0], "reason": "not loopback"})
            return
        if state.active > state.cap:  # file descriptors stay for the lab run
            state.refused.append({"peer": peername[0], "reason": "too many connections"})
            return
        conn = h11.Connection(h11.SERVER)
        ev: Any = h11.NEED_DATA
        async with asyncio.timeout(state.limits.handshake_s):  # no idle unauthenticated sockets
            while ev is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                ev = conn.next_event()
        plain = absolute_form(ev.target) if isinstance(ev, h11.Request) else None
        if not isinstance(ev, h11.Request) or (ev.method != b"CONNECT" and plain is None):
            await _refuse(writer, conn, 405, "only CONNECT and http:// requests are served")
            return
        auth = dict(ev.headers).get(b"proxy-authorization")
        # the /proc scan takes a few ms (3 ms with 65 processes here): off the loop that carries
        # every other tunnel's bytes, as the relay does it
        ok = check_basic(auth, state.cfg.token) or (
            state.cfg.check_process and await asyncio.to_thread(
                peer.process_has_token, (peername[0], peername[1]), (sockname[0], sockname[1]),
                state.cfg.token))
        target = ev.target.decode("latin-1") if plain is None else \
            f"[{plain[0]}]:{plain[1]}" if ":" in plain[0] else f"{plain[0]}:{plain[1]}"
        hosts = await _hosts_for(state.cfg, target) if ok else state.cfg.hosts
        d = decide(target, authorized=ok, hosts=hosts,
                   rules=with_every_host(state.cfg.rules, target, state.cfg.every_host))
        if isinstance(d, Refuse):
            state.refused.append({"target": target, "status": d.status, "reason": d.reason})
            await _refuse(writer, conn, d.status, d.reason)
            return
        host = target.rpartition(":")[0].strip("[]").lower()
        if plain is not None:
            await _forward_plain(state, host, d, plain[2], ev, conn, reader, writer)
            return
        if isinstance(d, Tunnel):
            await _established(writer, conn)
            await _tunnel(state, host, d, reader, writer)
            return
        # h1 policy: each browser connection gets its own upstream HTTP/1.1 connection
        own = Pool(state.target(host, d), "h1", 1, state.new_stats) if d.arm.name == "h1" else None
        try:
            pool = own or state.shared_pool(host, d)
            pool.warm()  # upstream handshakes run during the browser's TLS handshake below
            try:
                await pool.reachable()
            except UpstreamError as exc:
                state.refused.append({"target": target, "status": 502, "reason": str(exc)})
                await _refuse(writer, conn, 502, "the server cannot be reached")
                return
            await _established(writer, conn)
            await _intercept(state, host, d, pool, reader, writer)
        finally:
            if own is not None:
                own.close()
    except (OSError, h11.ProtocolError, ssl.SSLError, asyncio.IncompleteReadError,
            TimeoutError):
        pass
    finally:
        state.active -= 1
        writer.close()


async def _hosts_for(cfg: Config, target: str) -> Mapping[str, str]:
    """The served hosts for this CONNECT: the configured map, plus (``cfg.resolve``) the
    target's host at its first usable address; an unresolvable or refused one stays out, and
    ``decide`` refuses it."""
    parsed = parse_authority(target)
    if not cfg.resolve or parsed is None or parsed[0] in cfg.hosts:
        return cfg.hosts
    host, port = parsed
    if is_numeric_host(host):
        addresses = [host]
    else:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port,
                                                                 type=socket.SOCK_STREAM)
        except OSError:
            return cfg.hosts
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    usable = usable_addresses(addresses, None, port)
    return cfg.hosts if isinstance(usable, str) else {**cfg.hosts, host: usable[0]}


async def _refuse(writer: asyncio.StreamWriter, conn: h11.Connection, status: int,
                  reason: str) -> None:
    headers = [(b"content-length", b"0"), (b"connection", b"close")]
    if status == 407:
        headers.append((b"proxy-authenticate", b'Basic realm="protolens"'))
    with contextlib.suppress(h11.LocalProtocolError):
        writer.write(conn.send(h11.Response(status_code=status, headers=headers,
                                            reason=reason.encode("latin-1", "replace"))))
        writer.write(conn.send(h11.EndOfMessage()))
    await writer.drain()


def _counter(stats: ConnStats, down: bool) -> Callable[[bytes], None]:
    def count(data: bytes) -> None:
        if down:
            stats.bytes += len(data)
        else:
            stats.bytes_up += len(data)
        stats.touched(now_ms())
    return count


async def _tunnel(state: ProxyState, host: str, d: Tunnel, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    """A host without a policy: bytes through unchanged."""
    up_r, up_w = await asyncio.open_connection(d.ip, d.port)
    stats = state.new_stats(host, "tunnel")
    stats.local_port, stats.remote_ip, stats.remote_port = \
        up_w.get_extra_info("sockname")[1], d.ip, d.port
    stats.first_epoch_ms = now_ms()
    try:
        await asyncio.gather(pipe(reader, up_w, _counter(stats, False)),
                             pipe(up_r, writer, _counter(stats, True)))
    finally:
        up_w.close()


async def _forward_plain(state: ProxyState, host: str, d: Tunnel | Intercept, path: bytes,
                         ev: h11.Request, conn: h11.Connection, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
    """A plain-HTTP request (absolute form) to the host's address, whatever its rule: plain
    HTTP is HTTP/1.1 in a browser under every arm (a site's redirect to HTTPS comes this way)."""
    body = bytearray()
    while not isinstance(part := conn.next_event(), h11.EndOfMessage):
        if part is h11.NEED_DATA:
            data = await reader.read(65536)
            if not data:
                return
            conn.receive_data(data)
        elif isinstance(part, h11.Data):
            body += part.data
    head = h1_head(ev.method, path, forwarded_h1_headers(ev.headers.raw_items()))
    await relay_plain(d.ip, d.port, state.new_stats(host, "http"), head + bytes(body), writer,
                      _counter)


async def _established(writer: asyncio.StreamWriter, conn: h11.Connection) -> None:
    writer.write(conn.send(h11.Response(status_code=200, headers=[],
                                        reason=b"Connection established")))
    await writer.drain()


async def _intercept(state: ProxyState, host: str, d: Intercept, pool: Pool,
                     reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await writer.start_tls(state.server_ctx(host, d.alpn))
    alpn = writer.get_extra_info("ssl_object").selected_alpn_protocol()
    if alpn == "h2":
        await BrowserH2(lambda: state.shared_pool(host, d), host, reader, writer).run()
        return

    async def upgrade(request: bytes) -> None:
        target = Target(host, d.ip, d.port, state.h1_ctx)
        await relay_upgrade(target, state.new_stats(host, "websocket"), request, reader, writer,
                            _counter)

    await browser_h1(pool, host, reader, writer, upgrade)


async def handle_control(state: ProxyState, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
    """JSON lines: {"cmd": "configure", "rules": [...], "every_host": arm?}
    | {"cmd": "report", "reset": bool}
    | {"cmd": "ping"}. Each gets one JSON line back."""
    try:
        while line := await reader.readline():
            try:
                msg = json.loads(line)
                cmd = msg.get("cmd")
                if cmd == "configure":
                    state.report(reset=True)
                    state.cfg.rules = from_stored(msg.get("rules") or []) if msg.get(
                        "rules") else []
                    every = msg.get("every_host")
                    state.cfg.every_host = str(parse_arm(str(every))) if every else None
                    reply: dict[str, Any] = {"ok": True, "rules": len(state.cfg.rules)}
                elif cmd == "report":
                    reply = {"ok": True, **state.report(bool(msg.get("reset")))}
                elif cmd == "ping":
                    reply = {"ok": True, "pid": os.getpid()}
                else:
                    reply = {"ok": False, "error": f"unknown command {cmd!r}"}
            except (ValueError, AttributeError) as exc:
                reply = {"ok": False, "error": str(exc)}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
    finally:
        writer.close()


async def serve(cfg: Config, port: int, control: Path, ready: Any = None,
                host: str = "127.0.0.1") -> None:
    """Listen on ``host:port`` (loopback) and on the control socket until cancelled."""
    state = ProxyState(cfg)
    server = await asyncio.start_server(lambda r, w: handle_client(state, r, w), host, port)
    if control.exists():
        control.unlink()
    ctl = await asyncio.start_unix_server(lambda r, w: handle_control(state, r, w), str(control))
    os.chmod(control, 0o600)
    if ready is not None:
        ready(server.sockets[0].getsockname()[1])
    async with server, ctl:
        await asyncio.gather(server.serve_forever(), ctl.serve_forever())
