"""A page whose visual progress is known by construction: the SpeedIndex ground truth.

caddy serves https://a.test:PORT/visual/ over h1, h2 and h3: a white page with four images, each
filling one quarter of the viewport (2 x 2, equal areas) in its own solid colour. Each image is
``/block/N?ms=D``, which caddy reverse-proxies to a small HTTP server here that waits D ms before
answering, so block N appears about D ms after the page asked for it. caddy's JSON access log
has each block's request and when it was answered: an independent clock for the test. The page
also reports each block's Element Timing ``renderTime`` (ms from its timeOrigin, the record's zero)
in a last request, ``/beacon?b0=..``: the browser's own word on when each block was painted.

With equal blocks on white, histogram visual progress (speedline, visualmetrics; white pixels
left out) is exactly k/4 once k blocks are shown, so SpeedIndex = the integral of (1 - progress)
= the mean of the four blocks' appearance times, and visually complete (85% and 99%) is the last
block's. Used by tests/e2e/test_visual_e2e.py and scripts/bench/visual_accuracy.py.

    with serve_visual_site(tmp_path, delays_ms=(400, 800, 1200, 1600)) as site:
        site.url                      # https://a.test:PORT/visual/
        site.block_hits(offset)       # caddy's log entries of the blocks after byte `offset`
"""

from __future__ import annotations

import io
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

from protolens.testbed.caddy import global_options
from scripts.devkit.caddylog import read_entries
from scripts.devkit.site import free_port, make_cert, run_caddy

COLORS = ((200, 30, 30), (30, 160, 40), (30, 60, 200), (220, 170, 20))
"""Block colours: far from white (speedline drops pixels with every channel >= 249)."""
DELAYS_MS = (400, 800, 1200, 1600)
"""How long the server holds each block's answer."""

CADDYFILE = """{options}a.test:{port} {{
  bind 127.0.0.1
  tls {cert} {key}
  header Cache-Control "no-store"
  reverse_proxy /block/* 127.0.0.1:{backend}
  root * {www}
  file_server
  log {{
    output file {log}
    format json
  }}
}}
"""

_POS = ("left:0;top:0", "left:50vw;top:0", "left:0;top:50vh", "left:50vw;top:50vh")


def page_html(delays_ms: Sequence[int]) -> str:
    """The page: four blocks, each requested from the delaying server, nothing else painted."""
    imgs = "\n".join(f'<img alt="" elementtiming="b{i}" src="/block/{i}?ms={d}" '
                     f'style="{_POS[i]}">' for i, d in enumerate(delays_ms))
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>four blocks</title>\n"
            '<link rel="icon" href="data:,">\n'
            "<style>html,body{margin:0;background:#fff;overflow:hidden}"
            "img{position:fixed;display:block;width:50vw;height:50vh}</style>\n"
            "<script>const seen = {};\nnew PerformanceObserver((list) => {\n"
            "  for (const e of list.getEntries()) seen[e.identifier] = e.renderTime;\n"
            f"  if (Object.keys(seen).length === {len(delays_ms)}) "
            "fetch('/beacon?' + new URLSearchParams(seen));\n"
            "}).observe({type: 'element', buffered: true});</script>\n"
            f"</head><body>\n{imgs}\n</body></html>\n")


def block_png(index: int) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 64), COLORS[index]).save(buf, "PNG")
    return buf.getvalue()


class _Delay(BaseHTTPRequestHandler):
    pngs: tuple[bytes, ...] = tuple(block_png(i) for i in range(len(COLORS)))

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib's name)
        """Quiet: caddy's access log is the record."""

    def do_GET(self) -> None:  # noqa: N802 (stdlib's name)
        url = urllib.parse.urlsplit(self.path)
        try:
            index = int(url.path.rsplit("/", 1)[-1])
            body = self.pngs[index]
            ms = int(urllib.parse.parse_qs(url.query).get("ms", ["0"])[0])
        except (ValueError, IndexError):
            self.send_error(404)
            return
        time.sleep(ms / 1000)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass(frozen=True)
class BlockHit:
    index: int
    """Which block (0..3)."""
    proto: str
    """caddy's ``proto``: HTTP/1.1, HTTP/2.0, HTTP/3.0."""
    answered_s: float
    """Epoch seconds caddy logged it: when the response was written (its ``ts``)."""
    duration_s: float
    """How long caddy took for it, request to response."""


@dataclass(frozen=True)
class VisualSite:
    url: str
    port: int
    spki: str
    access_log: Path
    delays_ms: tuple[int, ...]

    def block_hits(self, offset: int = 0) -> list[BlockHit]:
        """Every block request caddy logged after byte ``offset`` of its log."""
        out = []
        for entry in read_entries(self.access_log, offset):
            uri = entry.get("request", {}).get("uri", "")
            if not uri.startswith("/block/") or entry.get("status") != 200:
                continue
            out.append(BlockHit(index=int(urllib.parse.urlsplit(uri).path.rsplit("/", 1)[-1]),
                                proto=entry["request"]["proto"],
                                answered_s=float(entry["ts"]),
                                duration_s=float(entry["duration"])))
        return out


    def render_times(self, offset: int = 0) -> dict[int, float] | None:
        """The page's beacon after byte ``offset``: block -> Element Timing renderTime (ms from
        navigation start), or None if it has not come."""
        for entry in read_entries(self.access_log, offset):
            uri = entry.get("request", {}).get("uri", "")
            if uri.startswith("/beacon?"):
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(uri).query)
                return {int(k[1:]): float(v[0]) for k, v in query.items()}
        return None


def analytic_speed_index(appear_ms: Sequence[float]) -> float:
    """SpeedIndex of equal blocks appearing at these times (ms): each adds 1/n of the progress,
    so the integral of (1 - progress) is their mean."""
    return sum(appear_ms) / len(appear_ms)


@contextmanager
def serve_visual_site(workdir: Path, delays_ms: Sequence[int] = DELAYS_MS
                      ) -> Iterator[VisualSite]:
    """caddy for the four-block page (and its delaying backend) in ``workdir``; stops both."""
    if len(delays_ms) != len(COLORS):
        raise ValueError(f"give {len(COLORS)} delays, one per block")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    backend = ThreadingHTTPServer(("127.0.0.1", 0), _Delay)
    backend.daemon_threads = True
    thread = threading.Thread(target=backend.serve_forever, daemon=True)
    thread.start()
    www = workdir / "www"
    (www / "visual").mkdir(parents=True, exist_ok=True)
    (www / "visual" / "index.html").write_text(page_html(delays_ms))
    cert, key, spki = make_cert(workdir, ("a.test",))
    log = workdir / "access.log"
    log.touch()
    caddyfile = workdir / "Caddyfile"
    caddyfile.write_text(CADDYFILE.format(options=global_options(), port=port, cert=cert,
                                          key=key, www=www, log=log,
                                          backend=backend.server_address[1]))
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    try:
        with run_caddy(caddyfile, port, home, workdir / "caddy.stderr"):
            yield VisualSite(url=f"https://a.test:{port}/visual/", port=port, spki=spki,
                             access_log=log, delays_ms=tuple(delays_ms))
    finally:
        backend.shutdown()
        backend.server_close()
