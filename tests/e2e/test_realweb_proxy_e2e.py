"""End to end: the real-web pages under H2-Parallel, through the lab proxy (proxy/), against
caddy's log: a lab Chromium with the built extension, the proxy as ``lab run`` starts it (its own
process, the run's credential in the browser's environment, every host under
``h2-parallel:2``), the pages of scripts/devkit/realweb.py that exercise what a proxy can break.

Until 2026-11-29 the real-web pages ran only under the direct arms; under this one (the whole
plan, by hand) a page's WebSocket got caddy's 404 (its handshake went upstream as an HTTP/2 GET
without its ``Upgrade``), an ``http://`` page got the proxy's 405, and the image on a.test's
refused port was served by a.test's HTTPS port (one pool per host, whatever the port). Every
other page recorded as caddy served it, as here.

What the proxy changes, and the test allows: the records' connections are the browser's to the
proxy (caddy's client ports are the proxy's upstream ones, checked against the proxy's report);
a request to an origin that refuses connections fails with ``net::ERR_TUNNEL_CONNECTION_FAILED``
(the proxy's 502 to the CONNECT) where a direct browser says ``net::ERR_CONNECTION_REFUSED``
(docs/POLICY.md).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from protolens.proxy import control
from protolens.proxy.core import TOKEN_ENV
from scripts.devkit.caddylog import Hit, read_hits
from scripts.devkit.drive import driven_lab
from scripts.devkit.realweb import HOSTS, RealWeb, serve_realweb
from scripts.devkit.realweb_plan import FIRST, run_plan
from scripts.devkit.realweb_truth import Page, aborted_hits, pages, request_diff, served_pairs

pytestmark = pytest.mark.e2e

ARM = "h2-parallel:2"
N = 2
STEPS = {"sw-install", "sw-ready", "sw-controlled", "frame", "workers", "stream",
         "http-to-https", "early-hints", "misc", "fonts", "errors"}
REFUSED = "https://a.test:2/errors/refused.png"
"""/errors/'s image on a port nothing listens on (realweb_www/a.test/errors)."""


@dataclass
class Run:
    site: RealWeb
    pages: dict[str, Page]
    hits: list[Hit]
    report: dict[str, Any]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    work = tmp_path_factory.mktemp("realweb-proxy")
    db = work / "store.db"
    env = {**os.environ, "XDG_DATA_HOME": str(work / "data")}  # the proxy's CA: this run's
    with serve_realweb(work / "site") as site:
        px = control.start(hosts={h: "127.0.0.1" for h in HOSTS},
                           upstream_ca=str(work / "site" / "cert.pem"), env=env)
        old = os.environ.get(TOKEN_ENV)
        os.environ[TOKEN_ENV] = px.token  # as lab/runner.py gives it: the browser's environment
        try:
            px.configure([], every_host=ARM)
            with driven_lab(work / "browser", arm=ARM, first_url=site.url(FIRST),
                            spki=px.ca.spki, quic_origins=[], db=db, extra=px.flags()) as d:
                steps = run_plan(d, site, STEPS)
            report = px.report()
        finally:
            if old is None:
                os.environ.pop(TOKEN_ENV, None)
            else:
                os.environ[TOKEN_ENV] = old
            px.stop()
    hits = read_hits(site.access_log)
    yield Run(site, pages(db, steps, hits, aborted_hits(site.backend_log, hits)), hits, report)


@pytest.mark.parametrize("name", sorted(STEPS - {"sw-ready"} | {"console-quiet"}))
def test_requests_recorded_are_the_requests_caddy_served(run: Run, name: str) -> None:
    # the refused port's requests (/errors/'s image, /stream/'s socket: their CONNECT refused
    # with 502) count as reaching no server (realweb_truth.NOWHERE_PORT)
    missing, extra = request_diff(run.pages[name])
    assert not missing and not extra, (missing, extra)


def test_protocols_are_the_arms_and_plain_http_stays_http1(run: Run) -> None:
    pairs = [(r, h) for p in run.pages.values() for r, h in served_pairs(p)]
    assert len(pairs) >= 40, len(pairs)
    for r, h in pairs:
        plain = r["url"].startswith("http://")
        assert (r["protocol"], h.family) == (("http/1.1", "h1") if plain else ("h2", "h2")), \
            (r["url"], r["protocol"], h.family)
        assert r["status"] == h.status, (r["url"], r["status"], h.status)
    redirect = run.pages["http-to-https"].navs[0]["requests"][0]
    assert (redirect["url"], redirect["status"]) == (
        run.site.url("/redir/plain.html", http=True), 301)


def test_the_websocket_opens_through_the_proxy(run: Run) -> None:
    nav = run.pages["stream"].nav("/stream/")
    sockets = {r["url"]: r for r in nav["requests"] if r["resource_type"] == "WebSocket"}
    ws = sockets[f"wss://e.test:{run.site.port}/ws"]
    assert ws["status"] == 101 and not ws["failed"], ws
    # the page's two failing sockets fail through the proxy too: e.test/gone with caddy's 404,
    # a.test:2's with the proxy's 502 to its CONNECT
    assert sockets[f"wss://e.test:{run.site.port}/gone"]["failed"]
    assert sockets["wss://a.test:2/ws"]["failed"]
    # caddy logs a WebSocket when it closes (the browser's stop): on HTTP/1.1, a connection of
    # its own, which the proxy reports as a pass-through, not as one of the arm's
    (hit,) = [h for h in run.hits if h.uri == "/ws"]
    assert hit.family == "h1"
    assert [h.status for h in run.hits if h.uri == "/gone"] == [404]
    tunnels = {t["local_port"]: t for t in run.report["tunnels"]}
    assert tunnels[hit.client_port]["family"] == "websocket"


def test_each_origin_has_n_upstream_connections(run: Run) -> None:
    """H2-Parallel's N: every HTTPS origin reached over at most N connections, a.test (15+
    requests) over exactly N, even where the browser opened two connections to one host (its
    fonts and module scripts are fetched without credentials: /fonts/, docs/RECORD.md
    "Connections per host"), each one of the proxy's reported upstream connections."""
    ports: dict[str, set[int]] = defaultdict(set)
    for h in run.hits:
        if h.family == "h2":
            ports[h.host].add(h.client_port)
    assert len(ports["a.test"]) == N and all(len(p) <= N for p in ports.values()), ports
    assert len(ports["b.test"]) == N, ports  # /frame/ and /fonts/ both use b.test
    upstream = {c["local_port"] for c in run.report["connections"]}
    assert set().union(*ports.values()) <= upstream, (ports, upstream)
    fonts = run.pages["fonts"].nav("/fonts/")
    browser_conns = {r["connection_id"] for r in fonts["requests"]
                     if r["host"] == "b.test" and r["connection_id"] is not None}
    assert len(browser_conns) == 2, browser_conns  # credentialed and anonymous, to the proxy


def test_an_unreachable_origin_reaches_no_other_server(run: Run) -> None:
    """The proxy answers the CONNECT to a.test:2 with 502 (nothing listens there): the image
    fails as it does without the proxy, from the browser's side of the tunnel (until 2026-11-29
    it was served by a.test's other port, then got a 502 response of the proxy's)."""
    nav = run.pages["errors"].nav("/errors/")
    (img,) = [r for r in nav["requests"] if r["url"] == REFUSED]
    assert img["failed"] and img["status"] is None, img
    assert img["failure"] == "net::ERR_TUNNEL_CONNECTION_FAILED", img
    assert not [h for h in run.hits if h.uri == "/errors/refused.png"]
    assert any(r["target"] == "a.test:2" and r["status"] == 502 for r in run.report["refused"])
