"""The proxy's asyncio adapter: the loopback listener, CONNECT (h11), the credential check,
tunnels, TLS termination and the browser side of intercepted connections (h11 or h2), and the
control socket the lab runner uses (configure, report). Decisions are ``core``'s; upstream
protocol handling is ``upstream``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h11

from protolens.policy.file import from_stored
from protolens.policy.rules import Rule
from protolens.proxy import peer
from protolens.proxy.ca import ProxyCA, issue_leaf
from protolens.proxy.core import (
    ConnStats,
    Intercept,
    Refuse,
    ResponseHead,
    Tunnel,
    check_basic,
    decide,
    is_loopback,
    next_chunk,
    request_from_h1,
    request_from_h2,
    response_to_h2,
)
from protolens.proxy.upstream import Pool, Response, Target, UpstreamError, now_ms


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


class ProxyState:
    """Everything of one proxy process that a load changes; ``reset`` starts a new load."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.conn_ids = 0
        self.conns: list[ConnStats] = []
        self.refused: list[dict[str, Any]] = []
        self.pools: dict[tuple[str, str], Pool] = {}
        self.leaf_dir = cfg.workdir or Path(tempfile.mkdtemp(prefix="protolens-proxy-"))
        self.contexts: dict[tuple[str, tuple[str, ...]], ssl.SSLContext] = {}
        self.client_ctx = ssl.create_default_context(cafile=cfg.upstream_ca)

    def new_stats(self, host: str, family: str) -> ConnStats:
        self.conn_ids += 1
        s = ConnStats(self.conn_ids, host, family)
        self.conns.append(s)
        return s

    def report(self, reset: bool) -> dict[str, Any]:
        up = [c for c in self.conns if c.family != "tunnel"]
        # a connection opened at CONNECT (Pool.warm) that no request used, e.g. for a browser
        # connection Chromium opened and never used, is not one of the navigation's connections
        out = {"connections": [c.as_dict() for c in up if c.requests],
               "idle": [c.as_dict() for c in up if not c.requests],
               "tunnels": [c.as_dict() for c in self.conns if c.family == "tunnel"],
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
        """h2, h2-parallel:N and h3 share one pool per origin across browser connections."""
        key = (host, str(d.arm))
        if key not in self.pools:
            family = "h3" if d.arm.name == "h3" else "h2"
            self.pools[key] = Pool(self.target(host, d), family, d.arm.connections,
                                   self.new_stats)
        return self.pools[key]


async def handle_client(state: ProxyState, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
    peername = writer.get_extra_info("peername")
    sockname = writer.get_extra_info("sockname")
    try:
        if not is_loopback(peername[0]):
            state.refused.append({"peer": peername[0], "reason": "not loopback"})
            return
        conn = h11.Connection(h11.SERVER)
        ev: Any = h11.NEED_DATA
        while ev is h11.NEED_DATA:
            data = await reader.read(65536)
            conn.receive_data(data)
            ev = conn.next_event()
        if not isinstance(ev, h11.Request) or ev.method != b"CONNECT":
            await _refuse(writer, conn, 405, "only CONNECT is served")
            return
        auth = dict(ev.headers).get(b"proxy-authorization")
        ok = check_basic(auth, state.cfg.token) or (
            state.cfg.check_process and peer.process_has_token(
                (peername[0], peername[1]), (sockname[0], sockname[1]), state.cfg.token))
        target = ev.target.decode("latin-1")
        d = decide(target, authorized=ok, hosts=state.cfg.hosts, rules=state.cfg.rules)
        if isinstance(d, Refuse):
            state.refused.append({"target": target, "status": d.status, "reason": d.reason})
            await _refuse(writer, conn, d.status, d.reason)
            return
        host = target.rpartition(":")[0].strip("[]").lower()
        writer.write(conn.send(h11.Response(status_code=200, headers=[],
                                            reason=b"Connection established")))
        await writer.drain()
        if isinstance(d, Tunnel):
            await _tunnel(state, host, d, reader, writer)
        else:
            await _intercept(state, host, d, reader, writer)
    except (OSError, h11.ProtocolError, ssl.SSLError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


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


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, stats: ConnStats,
                down: bool) -> None:
    with contextlib.suppress(OSError):
        while data := await src.read(65536):
            if down:
                stats.bytes += len(data)
            else:
                stats.bytes_up += len(data)
            stats.touched(now_ms())
            dst.write(data)
            await dst.drain()
    with contextlib.suppress(OSError):
        if dst.can_write_eof():
            dst.write_eof()


async def _tunnel(state: ProxyState, host: str, d: Tunnel, reader: asyncio.StreamReader,
                  writer: asyncio.StreamWriter) -> None:
    """A host without a policy: bytes through unchanged."""
    up_r, up_w = await asyncio.open_connection(d.ip, d.port)
    stats = state.new_stats(host, "tunnel")
    stats.local_port, stats.remote_ip, stats.remote_port = \
        up_w.get_extra_info("sockname")[1], d.ip, d.port
    stats.first_epoch_ms = now_ms()
    try:
        await asyncio.gather(_pipe(reader, up_w, stats, False), _pipe(up_r, writer, stats, True))
    finally:
        up_w.close()


async def _intercept(state: ProxyState, host: str, d: Intercept, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
    # h1 policy: each browser connection gets its own upstream HTTP/1.1 connection
    own = Pool(state.target(host, d), "h1", 1, state.new_stats) if d.arm.name == "h1" else None
    pool = own or state.shared_pool(host, d)
    pool.warm()  # upstream handshakes run during the browser's TLS handshake below
    try:
        await writer.start_tls(state.server_ctx(host, d.alpn))
        alpn = writer.get_extra_info("ssl_object").selected_alpn_protocol()
        if alpn == "h2":
            await BrowserH2(state, host, d, reader, writer).run()
        else:
            await _browser_h1(pool, host, reader, writer)
    finally:
        if own is not None:
            own.close()


async def _browser_h1(pool: Pool, host: str, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
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
        req = request_from_h1(ev.method, ev.target, ev.headers, host.encode())
        try:
            resp = await pool.request(req, body)
        except UpstreamError as exc:
            resp = _error_response(str(exc))
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


def _error_response(reason: str) -> Response:
    q: asyncio.Queue[Any] = asyncio.Queue()
    body = reason.encode()
    q.put_nowait((body, 0))
    q.put_nowait(None)
    return Response(ResponseHead(502, ((b"content-type", b"text/plain"),
                                       (b"content-length", str(len(body)).encode()))), q)


class BrowserH2:
    """The browser side of an intercepted HTTP/2 connection."""

    def __init__(self, state: ProxyState, host: str, d: Intercept,
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.state, self.host, self.d = state, host, d
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
            # forward one request per stream only (ARCHITECTURE.md, proxy pitfalls)
            sid = ev.stream_id or 0
            if sid in self.heads and sid not in self.tasks:
                self.tasks[sid] = asyncio.get_running_loop().create_task(self.stream(sid))
        elif isinstance(ev, h2.events.StreamReset):
            task = self.tasks.pop(ev.stream_id or 0, None)
            if task:
                task.cancel()
        elif isinstance(ev, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
        # PriorityUpdated is dropped: stream ids differ upstream (ARCHITECTURE.md pitfalls)

    async def stream(self, sid: int) -> None:
        req = request_from_h2(self.heads.pop(sid))
        body = bytes(self.bodies.pop(sid, b""))
        try:
            resp = await self.state.shared_pool(self.host, self.d).request(req, body)
        except UpstreamError as exc:
            resp = _error_response(str(exc))
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
        sent = 0
        while sent < len(data):
            n = next_chunk(len(data) - sent, self.conn.local_flow_control_window(sid),
                           self.conn.outbound_flow_control_window,
                           self.conn.max_outbound_frame_size)
            if n == 0:
                self.window.clear()
                await self.window.wait()
                continue
            self.conn.send_data(sid, data[sent:sent + n])
            sent += n
            self.flush()
        await self.writer.drain()


# ---- control socket --------------------------------------------------------------------------

async def handle_control(state: ProxyState, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
    """JSON lines: {"cmd": "configure", "rules": [...]} | {"cmd": "report", "reset": bool}
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
