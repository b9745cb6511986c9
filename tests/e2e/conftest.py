"""What the real-web end-to-end modules share (test_realweb_e2e.py: every page against caddy's
log and the NetLog; test_realweb_pages_e2e.py: each page's own behaviour): one load of every page
under h1, h2 and h3, made once for both."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts.devkit.caddylog import read_hits
from scripts.devkit.drive import driven_lab
from scripts.devkit.netlog import Conn, WireConn, http1_heads, is_complete, read_events, read_wire
from scripts.devkit.realweb import RealWeb, serve_realweb
from scripts.devkit.realweb_plan import FIRST, run_plan
from scripts.devkit.realweb_truth import Page, aborted_hits, pages

ARMS = ("h1", "h2", "h3")
ORDINARY = ("console-quiet", "console-noisy", "sw-install", "sw-controlled", "frame", "workers",
            "stream", "redirect-script", "redirect-meta", "redirect-chain", "http-to-https",
            "early-hints", "misc", "gzip", "fonts", "reval-cold", "reval-warm", "media",
            "cache-cold", "cache-memory", "altsvc", "cache-disk", "reload", "soft", "state", "form",
            "form-post", "errors", "not-found", "bf-one", "bf-two", "bf-back", "window-stop",
            "user-stop", "download", "unload", "unload-next", "poll")
"""Every page step: the requests recorded must be the requests caddy served during it."""
MAIN = {"console-quiet": "/console/quiet.html", "console-noisy": "/console/noisy.html",
        "sw-install": "/sw/", "sw-controlled": "/sw/", "frame": "/frame/",
        "workers": "/workers/", "stream": "/stream/", "redirect-chain": "/redir/landing.html",
        "http-to-https": "/redir/plain.html", "early-hints": "/hints/", "misc": "/misc/",
        "gzip": "/gzip/", "fonts": "/fonts/", "media": "/media/",
        "cache-cold": "/cache/", "cache-memory": "/cache/", "cache-disk": "/cache/",
        "altsvc": "/altsvc/", "soft": "/spa/", "state": "/state/", "reload": "/cache/",
        "form": "/form/", "form-post": "/form/result.html", "errors": "/errors/",
        "not-found": "/errors/gone.html", "bf-one": "/bf/one.html",
        "bf-two": "/bf/two.html",
        "download": "/download/", "redirect-script": "/redir/landing.html?from=script",
        "redirect-meta": "/redir/landing.html?from=meta", "unload": "/unload/",
        "unload-next": "/unload/next.html", "poll": "/poll/"}
"""The record of the page each step loads (by URL path), whose milestones must be there."""


@dataclass
class Arm:
    site: RealWeb
    pages: dict[str, Page]
    wire: dict[Conn, WireConn]
    refused: list[str]
    """The host's error replies in the browser's log (the native host's stderr goes there): a
    record it refused is lost (the outbox drops it as invalid)."""
    heads: dict[str, list[int]]
    """Per URL, the wire size of each HTTP/1.x response head in the NetLog (netlog.http1_heads)."""


def _run_arm(work: Path, site: RealWeb, arm: str) -> Arm:
    db = work / "store.db"
    quic = [f"{h}:{site.port}" for h in ("a.test", "b.test", "c.test", "e.test", "f.test")]
    with driven_lab(work / "browser", arm=arm, first_url=site.url(FIRST), spki=site.spki,
                    quic_origins=quic, db=db) as d:
        steps = run_plan(d, site)
    # closed by the browser itself: every event is in it (devkit/cdp.py close_browser)
    assert is_complete(d.netlog), f"{arm}: the NetLog was not closed by the browser"
    hits = read_hits(site.access_log)
    log = (d.netlog.parent / "chromium.log").read_text(errors="replace")
    return Arm(site, pages(db, steps, hits, aborted_hits(site.backend_log, hits)),
               read_wire(d.netlog), [line for line in log.splitlines() if "error reply" in line],
               http1_heads(*read_events(d.netlog)))


@pytest.fixture(scope="package")
def arms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Arm]]:
    """The real-web pages loaded once for test_realweb_e2e.py and test_realweb_pages_e2e.py.
    The three arms side by side, each with a site, a store and a browser of its own (the truth is
    each arm's own caddy log and NetLog, so nothing of one can reach another's): their steps
    mostly wait on the lab's quiet and the plan's settling, and one after another they took 95 s
    of a CI run."""
    work = tmp_path_factory.mktemp("realweb")
    with ExitStack() as stack:
        sites = {arm: stack.enter_context(serve_realweb(work / arm / "site")) for arm in ARMS}
        with ThreadPoolExecutor(len(ARMS)) as pool:
            done = {arm: pool.submit(_run_arm, work / arm, sites[arm], arm) for arm in ARMS}
            out = {arm: f.result() for arm, f in done.items()}
    # the sites are down before any test runs: what the tests read (caddy's log, the NetLog, the
    # store) was read above, and nothing is left running for the e2e modules after these two
    yield out
