"""The real-web pages in the order one driven lab browser loads them (devkit/drive.py).

Each step names what it does and how many records it waits for; a step that may make a record
the recorder does not make yet (a back/forward-cache restore) waits 0 and settles instead, and
the tests say what should be there. The order matters where a page needs the one before it: the
service worker's second load is controlled, the cache's second load is warm (memory cache, same
renderer), the third comes after a cross-site page (d.test: another renderer, so disk cache).
"""

from __future__ import annotations

import time
from typing import Any

from scripts.devkit.caddylog import Hit
from scripts.devkit.drive import Driven, Step
from scripts.devkit.realweb import RealWeb

FIRST = "/console/quiet.html"
STOP_AFTER_S = 1.5
"""The user presses stop this long after navigating to the page that never loads."""


SW_READY = """Promise.race([navigator.serviceWorker.ready.then(() => true),
  new Promise((done) => setTimeout(() => done(window.swError || 'not ready in 10 s'), 10000))])"""
"""Resolves once the worker is active (its second load is then controlled), or says why not."""


def await_js(d: Driven, expr: str) -> Any:
    r = d.cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                        "awaitPromise": True}, d.session)
    return r["result"].get("value")


def answer_dialog(d: Driven, url: str, after_s: float) -> None:
    """Navigate to ``url`` and play the user: close the JavaScript dialog it opens (an alert
    during the load, realweb_www/a.test/dialog) ``after_s`` seconds after the navigation, with this
    test's own DevTools session (its Page domain on for that, off again after)."""
    d.cdp.send("Page.enable", {}, d.session)
    try:
        d.navigate(url)
        time.sleep(after_s)
        d.cdp.send("Page.handleJavaScriptDialog", {"accept": True}, d.session)
    finally:
        d.cdp.send("Page.disable", {}, d.session)


def background_tab(d: Driven, url: str, shown_after_s: float) -> None:
    """As a user's middle click: ``url`` opened in a new tab in the background, which the user
    comes to ``shown_after_s`` seconds later; then back to the test's tab, the other closed once
    its record is in (``d.step`` waits for it: call ``close_others`` after)."""
    target = d.cdp.send("Target.createTarget", {"url": url, "background": True})["targetId"]
    time.sleep(shown_after_s)
    d.cdp.send("Target.activateTarget", {"targetId": target})


def hidden_navigation(d: Driven, url: str, shown_after_s: float) -> None:
    """The test's tab navigated to ``url`` while another tab is in front (a page that reloads
    itself in a background tab, a link opened by script), then shown ``shown_after_s`` seconds
    later."""
    d.cdp.send("Target.createTarget", {"url": "about:blank"})
    d.navigate(url)
    time.sleep(shown_after_s)
    d.cdp.send("Target.activateTarget", {"targetId": d.target})


def close_others(d: Driven) -> None:
    """Every page target but the test's tab and the extension's closed; the test's tab in front."""
    for t in d.cdp.send("Target.getTargets")["targetInfos"]:
        if t["type"] == "page" and t["targetId"] != d.target and \
                not t["url"].startswith("chrome-extension://"):
            d.cdp.send("Target.closeTarget", {"targetId": t["targetId"]})
    d.cdp.send("Target.activateTarget", {"targetId": d.target})


def began_hidden(hits: list[Hit]) -> list[int]:
    """When /hidden/ was first shown (ms after its timeOrigin, its own clock) for each load that
    began hidden, as its image's query told caddy (``/console/img/4.png?began=hidden&shown=N``)."""
    return [int(h.uri.split("shown=", 1)[1]) for h in hits
            if h.uri.startswith("/console/img/4.png?began=hidden&shown=")]


def waited_ms(hits: list[Hit]) -> list[int]:
    """How long /dialog/'s alert was open, by the page's own clock, as its second image's query
    told caddy (``/console/img/2.png?waited=N``)."""
    return [int(h.uri.split("waited=", 1)[1]) for h in hits
            if h.uri.startswith("/console/img/2.png?waited=")]


def run_plan(d: Driven, site: RealWeb, names: set[str] | None = None) -> dict[str, Step]:
    """Every step (or those in ``names``) after the first page; returns name -> Step."""
    def nav(path: str, host: str = "a.test", http: bool = False) -> Any:
        return lambda: d.navigate(site.url(path, host, http))

    def stop_later() -> None:
        d.navigate(site.url("/hang/"))
        time.sleep(STOP_AFTER_S)
        d.cdp.send("Page.stopLoading", {}, d.session)

    plan: list[tuple[str, Any, int, float]] = [
        ("sw-install", nav("/sw/", "f.test"), 1, 0.0),
        ("sw-ready", lambda: await_js(d, SW_READY), 0, 0),
        ("sw-controlled", nav("/sw/", "f.test"), 1, 0.0),
        ("frame", nav("/frame/"), 1, 0.0),
        ("workers", nav("/workers/"), 1, 0.0),
        ("stream", nav("/stream/"), 1, 0.0),
        ("redirect-script", nav("/redir/script.html"), 1, 1.5),
        ("redirect-meta", nav("/redir/meta.html"), 1, 1.5),
        ("redirect-chain", nav("/redir/chain"), 1, 0.0),
        ("http-to-https", nav("/redir/plain.html", http=True), 1, 0.0),
        ("early-hints", nav("/hints/"), 1, 0.0),
        ("misc", nav("/misc/"), 1, 0.0),
        ("gzip", nav("/gzip/"), 1, 0.0),
        ("fonts", nav("/fonts/"), 1, 0.0),
        # Cache-Control no-cache: the second load revalidates (If-None-Match) and gets 304s
        ("reval-cold", nav("/reval/"), 1, 0.0),
        ("reval-warm", nav("/reval/"), 1, 0.0),
        ("media", nav("/media/"), 1, 0.0),
        ("cache-cold", nav("/cache/"), 1, 0.0),
        ("cache-memory", nav("/cache/"), 1, 0.0),
        ("altsvc", nav("/altsvc/", "d.test"), 1, 0.0),
        ("cache-disk", nav("/cache/"), 1, 0.0),
        # the user reloads it: Chromium revalidates the document, its objects come from the cache
        ("reload", lambda: d.cdp.send("Page.reload", {}, d.session), 1, 0.0),
        ("soft", nav("/spa/"), 1, 2.0),
        # replaceState after load that keeps the URL (a router's state, scroll restoration), then
        # an image: one record; the settle would take in a soft record, were one made
        ("state", nav("/state/"), 1, 1.0),
        # a form posted (a click on its button), answered 303 to its results page
        ("form", nav("/form/"), 1, 0.0),
        ("form-post", lambda: d.js("document.getElementById('go').click(), true"), 1, 0.0),
        # broken objects (404s, a 500, one blocked by the page's CSP, one refused), then a 404 page
        ("errors", nav("/errors/"), 1, 0.0),
        ("not-found", nav("/errors/gone.html"), 1, 0.0),
        ("bf-one", nav("/bf/one.html"), 1, 0.0),
        ("bf-two", nav("/bf/two.html"), 1, 0.0),
        ("bf-back", lambda: d.js("history.back(), true"), 0, 3.0),
        ("window-stop", nav("/stop/"), 1, 0.0),
        ("user-stop", stop_later, 1, 0.0),
        ("download", nav("/download/"), 1, 1.0),
        # an alert() during the load: no one closes it in a lab browser but the extension
        ("dialog", nav("/dialog/"), 1, 0.0),
        # a page that sends a beacon and a keepalive fetch as it is left (pagehide), then a
        # click to the next page: those two are the first page's, sent while the next one loads
        ("unload", nav("/unload/"), 1, 0.0),
        ("unload-next", lambda: d.js("document.getElementById('next').click(), true"), 1, 0.5),
        # a long poll after load (a GET the server answers 20 s on): the record ends about 5 s
        # after it began, the poll open (navigation.ts LONG_POLL_SILENCE_MS), not at the 30 s cap
        ("poll", nav("/poll/"), 1, 0.0),
        # last: while the recorder takes console time for its clock, every record after this
        # page's would end at once (the noisy twin is still compared with the quiet one)
        ("console-noisy", nav("/console/noisy.html"), 1, 0.0),
    ]
    d.steps[0].name = "console-quiet"
    d.idle_url = site.url("/idle.html")
    out = {"console-quiet": d.steps[0]}
    for name, action, expect, settle in plan:
        if names is None or name in names:
            out[name] = d.step(name, action, expect, settle_s=settle)
    return out
