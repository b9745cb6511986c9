"""The "real web" test site: pages that behave as real sites do, each with its ground truth.

caddy serves scripts/devkit/realweb_www over HTTPS (h1, h2, h3 on one port; a.test to f.test)
and plain HTTP on a second port (http -> https); what a file server cannot do (WebSocket,
EventSource, 103 Early Hints, an object that never finishes, a beacon sink) comes from
realweb_backend.py behind caddy's reverse_proxy, in a thread of its own. Every request is in
caddy's JSON access log (scripts/devkit/caddylog.py), the independent witness of the tests.

    with serve_realweb(tmp_path) as site:
        site.url("/console/noisy.html")          # https://a.test:PORT/console/noisy.html
        site.url("/redir/plain.html", http=True) # http://a.test:HTTP_PORT/redir/plain.html

Pages (``realweb_www``): the console twins, a service worker, a cross-origin iframe, workers,
streams that stay open, redirects (script, meta refresh, a 301/302 chain across hosts, http ->
https), 103 Early Hints, preload/prefetch/CORS/data:/blob:, cacheable objects, an Alt-Svc upgrade,
a soft navigation, a back/forward-cache restore, window.stop(), a page that never loads, a
download, a page that never stops moving (/anim/), a speculation rule's prerender (/prerender/,
with a click; auto.html, navigating by script; later.html, adding its rule after its record: a
debugged tab prefetches instead), a page that sends a beacon and a keepalive fetch as it is left
(/unload/), compressed text (/gzip/: a stylesheet, a script and a JSON fetch, gzip-encoded), objects
revalidated on each reuse (/reval/, Cache-Control no-cache: 304s), an audio element fetching its
file by Range (/media/: 206), web fonts from another host and the page's own (/fonts/), an
alert() during the load (/dialog/), a page that says how it began and when it was first shown
(/hidden/: opened in a background tab).
Nothing is cacheable (``no-store``) except /cache/* (max-age=3600), /reval/* (no-cache) and /bf/*
(a no-store document is never put in the back/forward cache: web.dev "bfcache", Cache-Control:
no-store).
"""

from __future__ import annotations

import asyncio
import io
import random
import shutil
import threading
import wave
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from protolens.pages.content import font
from scripts.devkit.realweb_backend import start_backend
from scripts.devkit.site import free_port, make_cert, run_caddy

WWW = Path(__file__).resolve().parent / "realweb_www"
HOSTS = ("a.test", "b.test", "c.test", "d.test", "e.test", "f.test")
"""e.test serves only the streams that stay open and f.test only the service worker's page, so
their connections are theirs alone (DevTools cannot see a service worker's own fetches)."""

IMAGES = {
    **{f"a.test/console/img/{n}.png": 6000 + 900 * n for n in range(1, 7)},
    "f.test/sw/a.png": 5000, "f.test/sw/b.png": 7000,
    "a.test/frame/top.png": 6000, "b.test/frame/inner.png": 9000,
    "a.test/stream/s.png": 4000,
    "a.test/redir/landing.png": 5000, "c.test/redir/chain.png": 5000,
    "a.test/hints/hint.png": 8000,
    "a.test/misc/preloaded.png": 6000,
    "a.test/cache/c1.png": 7000, "a.test/cache/c2.png": 8000, "a.test/cache/c3.png": 9000,
    "a.test/spa/v1.png": 5000, "a.test/spa/v2.png": 6000,
    "a.test/state/first.png": 5000, "a.test/state/later.png": 6000,
    "a.test/errors/ok.png": 5000, "c.test/errors/blocked.png": 5000, "a.test/form/r.png": 5000,
    "a.test/misc/px.png": 3000, "c.test/frame/nested.png": 5000, "b.test/fonts/logo.png": 4000,
    "a.test/bf/one.png": 5000,
    "a.test/anim/a.png": 5000, "a.test/prerender/next.png": 5000,
    "a.test/unload/u.png": 4000, "a.test/unload/n.png": 4500,
    "a.test/reval/r1.png": 7000, "a.test/reval/r2.png": 8000, "a.test/media/m.png": 5000,
    "a.test/stop/ok.png": 3000, "a.test/hang/ok.png": 3000,
    **{f"d.test/altsvc/e{n}.png": 6000 for n in (1, 2)},
    **{f"d.test/altsvc/late{n}.png": 12000 for n in (1, 2, 3, 4)},
}
"""Generated PNGs (host/path -> approximate bytes): random pixels, so they do not compress."""
TEXTS = {"a.test/gzip/style.css": 40_000, "a.test/gzip/app.js": 30_000,
         "a.test/gzip/data.json": 20_000}
"""Generated text (host/path -> bytes), served gzip-encoded (the Caddyfile's ``encode``): words
drawn at random from a small vocabulary, so it compresses about as real text does (3-5x) rather
than to nothing."""
FONTS = {"a.test/fonts/own.ttf": 8000, "b.test/fonts/cdn.ttf": 12000}
"""Generated TrueType fonts (host/path -> bytes; protolens.pages.content.font: a glyph "A")."""
DOWNLOAD_BYTES = 20_000
AUDIO_SECONDS = 60
"""/media/a.wav: this many seconds of 16-bit mono noise at 22,050 Hz (2.6 MB), longer than a
browser buffers ahead of playback."""

CADDYFILE = """{{
  admin off
  grace_period 1s
  auto_https disable_redirects
  skip_install_trust
  servers {{
    protocols h1 h2 h3
  }}
}}
a.test:{port}, b.test:{port}, c.test:{port}, d.test:{port}, e.test:{port}, f.test:{port} {{
  bind 127.0.0.1
  tls {cert} {key}
  root * {www}/{{http.request.host}}
  log {{
    output file {log}
    format json
  }}
  @chain1 {{
    host a.test
    path /redir/chain
  }}
  redir @chain1 https://b.test:{port}/redir/hop2 301
  @chain2 {{
    host b.test
    path /redir/hop2
  }}
  redir @chain2 https://c.test:{port}/redir/landing.html 302
  @preflight {{
    host b.test
    method OPTIONS
    path /api/*
  }}
  @api {{
    host b.test
    path /api/*
  }}
  header @api Access-Control-Allow-Origin "https://a.test:{port}"
  header @api Access-Control-Allow-Headers "x-proto"
  respond @preflight 204
  @nostore not path /cache/* /bf/* /reval/*
  header @nostore Cache-Control "no-store"
  header /cache/* Cache-Control "max-age=3600"
  header /reval/* Cache-Control "no-cache"
  header /download/file.bin Content-Disposition "attachment; filename=file.bin"
  header /fonts/* Access-Control-Allow-Origin "*"
  @px1 {{
    host b.test
    path /px/1
  }}
  redir @px1 https://c.test:{port}/px/2 302
  @px2 {{
    host c.test
    path /px/2
  }}
  redir @px2 https://a.test:{port}/misc/px.png 302
  @submit {{
    method POST
    path /form/submit
  }}
  redir @submit /form/result.html 303
  respond /errors/fail "failed" 500
  respond /errors/gone.html "<!doctype html><title>gone</title><h1>not here any more</h1>" 404
  @gzip path /gzip/*
  encode @gzip gzip
  @backend path /ws /sse /hints/ /slow/* /beacon
  reverse_proxy @backend 127.0.0.1:{backend} {{
    flush_interval -1
  }}
  file_server
}}
http://a.test:{http_port} {{
  bind 127.0.0.1
  log {{
    output file {log}
    format json
  }}
  redir https://a.test:{port}{{uri}} 301
}}
"""


@dataclass(frozen=True)
class RealWeb:
    port: int
    """HTTPS on TCP (h1, h2) and UDP (h3)."""
    http_port: int
    """Plain HTTP, a.test only: every request is redirected to HTTPS (301)."""
    spki: str
    """base64 sha256 of the certificate's SPKI (--ignore-certificate-errors-spki-list)."""
    access_log: Path
    """caddy's JSON access log for both ports."""
    backend_log: Path
    """The backend's own log (devkit/realweb_backend.py): caddy logs no request whose proxied
    response the browser aborted (reverseproxy: "aborting with incomplete response")."""
    files: dict[str, int]
    """"host/path" -> bytes of every static file served (index.html as its directory)."""

    def url(self, path: str, host: str = "a.test", http: bool = False) -> str:
        if http:
            return f"http://{host}:{self.http_port}{path}"
        return f"https://{host}:{self.port}{path}"

    @property
    def origins(self) -> list[str]:
        return [f"{h}:{self.port}" for h in HOSTS]


def _png(seed: int, size: int) -> bytes:
    """A PNG of about ``size`` bytes: random pixels do not compress (3 bytes a pixel)."""
    rng = random.Random(seed)
    side = max(4, int((size / 3) ** 0.5))
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


WORDS = ("margin", "padding", "color", "border", "display", "flex", "grid", "none", "auto",
         "block", "inline", "width", "height", "const", "return", "function", "value", "item",
         "name", "page", "load", "true", "false", "null", "index", "count", "style", "font")


def _text(seed: int, rel: str, size: int) -> str:
    """``size`` bytes of text for ``rel`` (CSS, JavaScript or a JSON array), deterministic."""
    rnd = random.Random(seed)
    if rel.endswith(".json"):
        item = '{{"{0}": "{1}", "n": {2}}},'
    elif rel.endswith(".css"):
        item = ".{0}-{2} {{ {1}: {2}px; }}\n"
    else:
        item = "var {0}_{2} = {2}; // {1}\n"
    parts, length = [], 0
    while length < size - 64:
        parts.append(item.format(rnd.choice(WORDS), rnd.choice(WORDS), rnd.randrange(100_000)))
        length += len(parts[-1])
    body = "[" + "".join(parts).rstrip(",") + "]" if rel.endswith(".json") else "".join(parts)
    return body + " " * (size - len(body))


def _wav(seconds: int, rate: int = 22_050) -> bytes:
    """A PCM WAV file of noise (RIFF, 16-bit mono), deterministic."""
    frames = random.Random(3).randbytes(seconds * rate * 2)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return buf.getvalue()


def build_www(dest: Path, port: int) -> dict[str, int]:
    """Copy the static tree into ``dest`` with ``{PORT}`` filled in, and generate the binaries."""
    shutil.copytree(WWW, dest)
    for path in dest.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js"):
            path.write_text(path.read_text().replace("{PORT}", str(port)))
    for i, (rel, size) in enumerate(sorted(IMAGES.items())):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(_png(i, size))
    (dest / "a.test/download/file.bin").write_bytes(random.Random(7).randbytes(DOWNLOAD_BYTES))
    (dest / "a.test/media/a.wav").write_bytes(_wav(AUDIO_SECONDS))
    for i, (rel, size) in enumerate(sorted(TEXTS.items())):
        (dest / rel).write_text(_text(i, rel, size))
    for rel, size in FONTS.items():
        (dest / rel).write_bytes(font(size, rel))
    files = {}
    for path in sorted(dest.rglob("*")):
        if path.is_file():
            rel = path.relative_to(dest).as_posix()
            files[rel[: -len("index.html")] if rel.endswith("/index.html") else rel] = \
                path.stat().st_size
    return files


@contextmanager
def _backend_thread(port: int, log: Path) -> Iterator[None]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    server: list[asyncio.Server] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        server.append(loop.run_until_complete(start_backend(port, log)))
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, name="realweb-backend", daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the realweb backend did not start")
    try:
        yield
    finally:
        async def close() -> None:
            server[0].close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        asyncio.run_coroutine_threadsafe(close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@contextmanager
def serve_realweb(workdir: Path) -> Iterator[RealWeb]:
    """caddy and the backend for the real-web site under ``workdir``; stopped on exit."""
    workdir.mkdir(parents=True, exist_ok=True)
    port, http_port, backend = free_port(), free_port(), free_port()
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    www = workdir / "www"
    if www.exists():
        shutil.rmtree(www)
    files = build_www(www, port)
    cert, key, spki = make_cert(workdir, HOSTS)
    access_log = workdir / "access.log"
    access_log.touch()
    caddyfile = workdir / "Caddyfile"
    caddyfile.write_text(CADDYFILE.format(port=port, http_port=http_port, backend=backend,
                                          cert=cert, key=key, www=www, log=access_log))
    backend_log = workdir / "backend.log"
    backend_log.touch()
    with _backend_thread(backend, backend_log), \
            run_caddy(caddyfile, port, home, workdir / "caddy.stderr"):
        yield RealWeb(port=port, http_port=http_port, spki=spki, access_log=access_log,
                      backend_log=backend_log, files=files)


if __name__ == "__main__":  # manual use (and the fixture recorder): serve until Ctrl-C or SIGTERM
    import signal
    import sys
    import tempfile
    import time

    # a background job of a non-interactive shell ignores SIGINT: SIGTERM stops it cleanly too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with tempfile.TemporaryDirectory() as d, serve_realweb(Path(d)) as s:
        print(s.url("/"), s.spki, s.http_port, s.access_log, sep="\n", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            sys.exit(0)
