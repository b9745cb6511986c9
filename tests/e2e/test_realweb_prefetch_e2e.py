"""End to end, everyday recording mode with Chromium's default preloading (a user's profile; the
other tests turn it off, as the lab does): the real-web /prerender/ page, whose speculation rule
asks to prerender next.html, then a click on its link (scripts/devkit/drive.py
``driven_everyday``, h2, the recorder's own 2 s quiet).

While a tab is debugged Chromium does not prerender (PrerenderingDisabledByDevTools): it prefetches
the document instead, and the click's navigation is served from that prefetch, which makes it
commit before the debugger's attach at that navigation is done. Checked against caddy's access
log: the prefetch is the first page's request, on its connection, with its bytes; the page it
served has its own record (not ``missed``), with its image, and no byte of its document on the
wire. A rule added after a page's record, when no debugger is attached, does prerender: the
activated page's record is of kind ``prerender``. Cost: one browser start, about 25 s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from scripts.devkit.caddylog import read_hits
from scripts.devkit.cdp import evaluate
from scripts.devkit.drive import driven_everyday
from scripts.devkit.realweb import RealWeb, serve_realweb
from scripts.devkit.realweb_truth import Page, aborted_hits, contract, pages, request_diff

pytestmark = pytest.mark.e2e

STEPS = ("prefetch", "prefetched", "later")
ACTIVATION: dict[str, Any] = {}
"""The activated page's Navigation Timing, read in it after its activation."""


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RealWeb, dict[str, Page]]]:
    work = tmp_path_factory.mktemp("realweb-prefetch")
    db = work / "store.db"
    with serve_realweb(work / "site") as site, \
            driven_everyday(work, spki=site.spki, db=db, preloading=True) as d:
        steps = {
            "prefetch": d.step("prefetch", lambda: d.navigate(site.url("/prerender/")), 1),
            "prefetched": d.step("prefetched", lambda: d.js(
                "document.getElementById('next').click(), true"), 1, settle_s=1.0),
        }
        # a tab of its own that this test does not attach to (a DevTools client of its own on
        # the tab would disable the prerender too): later.html adds its rule 4 s after its load,
        # after its record, so while no debugger is attached, and navigates 2 s later
        tab: list[str] = []
        steps["later"] = d.step("later", lambda: tab.append(d.cdp.send(
            "Target.createTarget", {"url": site.url("/prerender/later.html")})["targetId"]), 1)
        time.sleep(max(0.0, steps["later"].started + 7.5 - time.time()))
        # the page's own word that it was activated, and when (a DevTools client attached now,
        # after the activation, changes nothing of it)
        shown = d.cdp.send("Target.attachToTarget", {"targetId": tab[0], "flatten": True})
        truth = evaluate(d.cdp, shown["sessionId"], "(() => { const n = performance"
                         ".getEntriesByType('navigation')[0]; return {url: location.href, "
                         "activationStart: n.activationStart, timeOrigin: performance.timeOrigin}"
                         "})()")
        steps["activated"] = d.step("activated", lambda: d.cdp.send(
            "Target.closeTarget", {"targetId": tab[0]}), 1)
    hits = read_hits(site.access_log)
    ACTIVATION.update(truth)
    yield site, pages(db, steps, hits, aborted_hits(site.backend_log, hits))


def _one(page: Page, path: str) -> dict[str, Any]:
    found = [r for r in page.requests() if r["url"].endswith(path)]
    assert len(found) == 1, (path, [r["url"] for r in page.requests()])
    return found[0]


@pytest.mark.parametrize("name", STEPS)
def test_requests_recorded_are_the_requests_caddy_served(
        loaded: tuple[RealWeb, dict[str, Page]], name: str) -> None:
    missing, extra = request_diff(loaded[1][name])
    assert not missing and not extra, f"not recorded: {dict(missing)}; not served: {dict(extra)}"


def test_the_prefetch_is_the_first_pages_request_on_its_connection(
        loaded: tuple[RealWeb, dict[str, Page]]) -> None:
    page = loaded[1]["prefetch"]
    served = {h.uri: h for h in page.hits}
    assert set(served) == {"/prerender/", "/prerender/next.html"}, page.hits
    # one connection served both (caddy's client port)
    assert served["/prerender/"].client_port == served["/prerender/next.html"].client_port
    nav = page.nav("/prerender/")
    if contract(nav, "late_attach") == "commit" and len(nav["requests"]) == 1:
        # the whole load, the prefetch with it, came before the attach took effect (1 run in
        # about 10 here): only the document is known (from Navigation Timing), and it says so
        assert "requests_before_attach" in contract(nav, "not_seen"), nav
        return
    doc, prefetch = _one(page, "/prerender/"), _one(page, "/prerender/next.html")
    assert prefetch["resource_type"] == "Prefetch", prefetch
    assert prefetch["connection_id"] is not None, prefetch
    if contract(nav, "late_attach") == "commit":
        # the attach took effect after the commit, before the prefetch (seen once in CI): the
        # document comes from Navigation Timing, which names no connection (docs/RECORD.md
        # "Late attach"), so only the prefetch's own connection can be held to the wire
        assert doc["connection_id"] is None, doc
    else:
        assert prefetch["connection_id"] == doc["connection_id"], (doc, prefetch)
    # the prefetched page's body is 215 bytes (scripts/devkit/realweb_www), its headers on top
    assert prefetch["encoded_bytes"] > 215, prefetch


def test_the_page_the_prefetch_served_has_its_own_record(
        loaded: tuple[RealWeb, dict[str, Page]]) -> None:
    page = loaded[1]["prefetched"]
    assert [h.uri for h in page.hits] == ["/prerender/next.png"], page.hits
    nav = page.nav("/prerender/next.html")
    assert contract(nav, "late_attach") != "missed", nav
    assert nav["load_ms"] is not None and nav["load_ms"] > 0, nav
    doc = _one(page, "/prerender/next.html")
    assert doc["is_main_document"] and doc["connection_id"] is None, doc
    assert doc["encoded_bytes"] == 0 and doc["body_bytes"] == 215, doc
    assert doc["first_byte_ms"] is None or doc["first_byte_ms"] >= 0, doc
    assert nav["ttfb_ms"] is None or nav["ttfb_ms"] >= 0, nav
    # its image: recorded, unless it ended before the attach took effect (5 runs in 6 here), which
    # the record then declares (request_diff allows it for the requests begun before the first
    # one it saw)
    image = [r for r in page.requests() if r["url"].endswith("/prerender/next.png")]
    assert image or "requests_before_attach" in contract(nav, "not_seen"), nav
    assert all(r["status"] == 200 and r["connection_id"] is not None for r in image), image


def test_a_prerender_after_the_record_is_activated_and_recorded_as_shown(
        loaded: tuple[RealWeb, dict[str, Page]]) -> None:
    """The rule came after later.html's record, while no debugger was attached: Chromium
    prerendered next.html (caddy served it and its image before the navigation, 6 s after the
    load), then activated it (the page's own ``activationStart``). The recorder, attached at that
    navigation, sees no request of it and no document; its record is of kind ``prerender``, from
    webNavigation (docs/RECORD.md "Kinds"): not aborted, started at the activation, no request,
    the prerender's requests declared not seen (they are in no record)."""
    later, activated = loaded[1]["later"], loaded[1]["activated"]
    assert contract(later.nav("/prerender/later.html"), "late_attach") != "missed"
    # the prerender's fetches came in the step that opened the page, before its navigation
    served = {h.uri for h in later.hits}
    assert {"/prerender/next.html", "/prerender/next.png"} <= served, later.hits
    assert not [r["url"] for r in later.requests() if "/next." in r["url"]]
    assert ACTIVATION["url"].endswith("/prerender/next.html") and ACTIVATION["activationStart"] > 0
    nav = activated.nav("/prerender/next.html")
    assert contract(nav, "kind") == "prerender" and nav["requests"] == [], nav
    assert not nav["aborted"] and contract(nav, "late_attach") is None, nav
    assert not contract(nav, "incomplete") and nav["load_ms"] is None, nav
    assert "requests_before_attach" in contract(nav, "not_seen"), nav
    # started at the activation, not at the prerender's start 2 s before it: webNavigation reports
    # the activation after the page's own activationStart, later the busier the machine (measured
    # 2026-11-29: 44-51 ms idle, 3 runs; 33-76 ms beside three CPU-bound processes, 5 runs; 102 and
    # 116 ms in two full CI runs, where a bound of 100 ms failed them)
    activation_ms = ACTIVATION["timeOrigin"] + ACTIVATION["activationStart"]
    assert -50 <= nav["started_at_ms"] - activation_ms < 500, (nav["started_at_ms"], ACTIVATION)
    assert not activated.hits, activated.hits
