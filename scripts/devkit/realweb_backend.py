"""The real-web test site's dynamic answers, behind caddy's reverse_proxy (devkit/realweb.py).

What a file server cannot do, in plain asyncio HTTP/1.1 (one request per connection, then close):

- ``GET /ws``: a WebSocket (RFC 6455 4.2.2 handshake) that sends a text frame every 500 ms and
  never closes by itself;
- ``GET /sse``: an EventSource stream (HTML Living Standard, "Server-sent events") that sends an
  event every 500 ms and never ends;
- ``GET /hints/``: a ``103 Early Hints`` (RFC 8297) with a ``Link: rel=preload`` header, then after
  300 ms the page itself (caddy 2.6 forwards a backend's 1xx responses, reverseproxy.go);
- ``GET /slow/never``: headers and the first 4 KB of a valid PNG (a broken one would fail at
  once and let the load event go), then nothing: the object the load event waits for forever;
- ``GET /slow/delay?ms=N``: a 1x1 GIF after N ms (holds a page's load event that long);
- ``POST /beacon``: reads the body, answers 204.

    server = await start_backend(port)   # 127.0.0.1:port
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import random
import struct
import time
import zlib
from pathlib import Path

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
"""RFC 6455 1.3: the GUID appended to Sec-WebSocket-Key."""
TICK_S = 0.5

HINTS_PAGE = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>early hints</title>
<link rel="stylesheet" href="/hints/hint.css">
</head><body><h1>103 Early Hints</h1><img src="/hints/hint.png" alt="hinted">
</body></html>
"""
GIF = base64.b64decode("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==")
HINTS_LINK = "</hints/hint.css>; rel=preload; as=style, </hints/hint.png>; rel=preload; as=image"


def png(side: int, seed: int) -> bytes:
    """A valid PNG of random pixels (PNG spec: signature, IHDR, one IDAT, IEND)."""
    rng = random.Random(seed)
    raw = b"".join(b"\0" + rng.randbytes(side * 3) for _ in range(side))

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


NEVER = png(128, 1)
"""The never-finished object: 49 KB, of which 4 KB are sent."""


def ws_accept(key: str) -> str:
    """RFC 6455 4.2.2: base64(sha1(key + GUID))."""
    return base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()


def ws_text_frame(text: str) -> bytes:
    """A final, unmasked text frame (servers never mask, RFC 6455 5.1); short payloads only."""
    data = text.encode()
    if len(data) > 125:
        raise ValueError("frame payload over 125 bytes")
    return bytes([0x81, len(data)]) + data


async def _read_head(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return method, target, headers


def _response(status: str, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _ticks(writer: asyncio.StreamWriter, chunk: bytes | None, frame: bool) -> None:
    n = 0
    while True:
        n += 1
        writer.write(ws_text_frame(f"tick {n}") if frame else (chunk or b""))
        await writer.drain()
        await asyncio.sleep(TICK_S)


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, log: Path) -> None:
    try:
        method, target, headers = await _read_head(reader)
        with log.open("a") as f:  # the witness of requests caddy will not log (aborted ones)
            f.write(json.dumps({"ts": time.time(), "method": method, "uri": target,
                                "host": headers.get("host", "")}) + "\n")
        path = target.split("?", 1)[0]
        close = {"Connection": "close"}
        if path == "/ws" and headers.get("upgrade", "").lower() == "websocket":
            writer.write(_response("101 Switching Protocols", {
                "Upgrade": "websocket", "Connection": "Upgrade",
                "Sec-WebSocket-Accept": ws_accept(headers.get("sec-websocket-key", ""))}))
            await _ticks(writer, None, frame=True)
        elif path == "/sse":
            writer.write(_response("200 OK", {"Content-Type": "text/event-stream",
                                              "Cache-Control": "no-store",
                                              "Access-Control-Allow-Origin": "*"}))
            await _ticks(writer, b"data: tick\n\n", frame=False)
        elif path == "/hints/":
            writer.write(_response("103 Early Hints", {"Link": HINTS_LINK}))
            await writer.drain()
            await asyncio.sleep(0.3)
            writer.write(_response("200 OK", {
                "Content-Type": "text/html; charset=utf-8", "Content-Length": str(len(HINTS_PAGE)),
                "Cache-Control": "no-store", **close}, HINTS_PAGE))
        elif path == "/slow/never":
            writer.write(_response("200 OK", {"Content-Type": "image/png",
                                              "Content-Length": str(len(NEVER)),
                                              "Cache-Control": "no-store"}, NEVER[:4096]))
            await writer.drain()
            await asyncio.Event().wait()
        elif path == "/slow/delay":
            query = dict(p.split("=", 1) for p in target.partition("?")[2].split("&") if "=" in p)
            await asyncio.sleep(min(int(query.get("ms", "0")), 10_000) / 1000)
            writer.write(_response("200 OK", {
                "Content-Type": "image/gif", "Cache-Control": "no-store",
                "Content-Length": str(len(GIF)), **close}, GIF))
        elif path == "/beacon" and method == "POST":
            await reader.readexactly(int(headers.get("content-length", "0")))
            writer.write(_response("204 No Content", {"Cache-Control": "no-store", **close}))
        else:
            writer.write(_response("404 Not Found", {"Content-Length": "0", **close}))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    except asyncio.CancelledError:  # the site is stopping: a stream or a hung object ends here
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def start_backend(port: int, log: Path) -> asyncio.Server:
    """Listen on 127.0.0.1:``port`` (caddy's reverse_proxy upstream, never the browser's),
    appending one JSON line per request to ``log`` (ts, method, uri, host)."""
    return await asyncio.start_server(lambda r, w: _handle(r, w, log), "127.0.0.1", port)
