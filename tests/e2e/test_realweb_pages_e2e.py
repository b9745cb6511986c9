"""End to end: each real-web page's own behaviour, against its own truth, under h1, h2 and h3
(the loads are conftest.py's, shared with test_realweb_e2e.py, which holds every page's requests
to caddy's log and the NetLog): the quiet twin of the noisy console page, the service worker's
answers, open streams, soft navigations and history state, frames in frames, forms, reloads,
broken objects, bfcache restores, redirects, cache hits, stops, downloads, compressed text,
revalidations, media, beacons at pagehide, workers, Early Hints and a dialog during the load."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any
from urllib.parse import urlsplit

import pytest

from scripts.devkit.realweb import TEXTS
from scripts.devkit.realweb_plan import waited_ms
from scripts.devkit.realweb_truth import (
    contract,
    key,
)
from tests.e2e.conftest import ARMS, MAIN, Arm

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arm", ARMS)
def test_the_noisy_page_is_recorded_as_its_quiet_twin(arms: dict[str, Arm], arm: str) -> None:
    quiet = arms[arm].pages["console-quiet"].nav(MAIN["console-quiet"])
    noisy = arms[arm].pages["console-noisy"].nav(MAIN["console-noisy"])
    def objects(nav: dict[str, Any]) -> dict[str, tuple[int, int]]:
        return {key(r["url"], r["method"])[2]: (r["body_bytes"], r["encoded_bytes"])
                for r in nav["requests"] if not r["is_main_document"]}
    q, n = objects(quiet), objects(noisy)
    assert n.keys() == q.keys()
    # the same bodies; over HTTP/1.1 the same bytes. Over h2 and h3 a response's headers are
    # compressed against what the connection carried before (HPACK, QPACK): the same object's
    # headers took 105 bytes as a connection's first response and 43 later, and a date that
    # turned a second is sent anew (92 against 56): the twins differ there by up to a header
    # block's size, so each header block is held to at most 200 bytes (105 the largest seen)
    assert all(n[u][0] > 0 and n[u][0] == q[u][0] for u in q), (q, n)
    if arm == "h1":
        assert n == q
    else:
        assert all(0 <= enc - body <= 200 for body, enc in [*n.values(), *q.values()]), (q, n)
    # h2 and h3: one connection per host each. h1 opens up to 6 per host as the requests'
    # timing asks (measured 4 and 5, and 2 and 4, for the same twin pair): there the count is
    # Chrome's choice, not the recorder's, and each record's connections are held to caddy's
    # client ports by test_connections_are_caddys_client_ports
    def per_host(nav: dict[str, Any]) -> dict[str, int]:
        conns: dict[str, set[str]] = {}
        for r in nav["requests"]:
            conns.setdefault(key(r["url"], r["method"])[0], set()).add(r["connection_id"])
        return {h: len(c) for h, c in conns.items()}
    pn, pq = per_host(noisy), per_host(quiet)
    assert pn.keys() == pq.keys(), (pn, pq)
    if arm == "h1":
        assert all(1 <= c <= 6 for c in [*pn.values(), *pq.values()]), (pn, pq)
    else:
        assert pn == pq and set(pn.values()) == {1}, (pn, pq)
    for m in ("ttfb_ms", "fcp_ms", "dcl_ms", "load_ms"):
        assert noisy[m] is not None and quiet[m] is not None, m
        # within noise on loopback: the same page with four console calls and two errors
        assert noisy[m] <= 3 * quiet[m] + 150, (m, noisy[m], quiet[m])


@pytest.mark.parametrize("arm", ARMS)
def test_service_worker(arms: dict[str, Arm], arm: str) -> None:
    install, controlled = arms[arm].pages["sw-install"], arms[arm].pages["sw-controlled"]
    # the worker's own requests (its script, its precache) are served during the first load
    assert {"/sw/sw.js", "/sw/precache.json"} <= {h.uri for h in install.hits}
    nav = controlled.nav("/sw/")
    subs = [r for r in nav["requests"] if not r["is_main_document"]]
    assert len(subs) == 3 and all(r["from_service_worker"] for r in subs), subs
    assert not any(r["from_service_worker"] for r in install.nav("/sw/")["requests"])


@pytest.mark.parametrize("arm", ARMS)
def test_open_streams_end_the_record_and_are_counted(arms: dict[str, Arm], arm: str) -> None:
    page = arms[arm].pages["stream"]
    nav = page.nav("/stream/")
    sockets = {(urlsplit(r["url"]).hostname, urlsplit(r["url"]).port, urlsplit(r["url"]).path): r
               for r in nav["requests"] if r["resource_type"] == "WebSocket"}
    port = arms[arm].site.port
    opened, gone, refused = ("e.test", port, "/ws"), ("e.test", port, "/gone"), ("a.test", 2, "/ws")
    sse = [r for r in nav["requests"] if r["resource_type"] == "EventSource"]
    assert sorted(sockets) == sorted([opened, gone, refused]) and len(sse) == 1, sockets
    for r in [sockets[opened], *sse]:
        assert r["end_ms"] is None and not r["failed"], r
    assert sockets[opened]["status"] == 101
    # the page's two sockets that fail (e.test/gone answered 404, a.test:2 refused) are failed
    # requests that ended, not sockets open at the end (until 2026-11-29 the 404 one was recorded
    # as not failed, and the refused one was in no record)
    for r in (sockets[gone], sockets[refused]):
        assert r["failed"] and r["end_ms"] is not None, r
    assert [h.status for h in page.hits if h.uri == "/gone"] == [404]
    assert contract(nav, "open_at_end") == 2
    # ended at the quiet, not at the 30 s after-load cap (docs/RECORD.md)
    assert page.seconds < 15, page.seconds
    beacon = [r for r in nav["requests"] if r["url"].endswith("/beacon")]
    assert len(beacon) == 1 and beacon[0]["status"] == 204 and beacon[0]["method"] == "POST"


@pytest.mark.parametrize("arm", ARMS)
def test_a_long_poll_ends_the_record_open(arms: dict[str, Arm], arm: str) -> None:
    """/poll/ sends, 100 ms after its load event, a GET the server answers 20 s later (a chat
    widget's hanging GET): the record ends once it has been silent 5 s (navigation.ts
    LONG_POLL_SILENCE_MS), complete, the poll in it open at the end; until 2026-11-29 it held
    the record to the 30 s cap after load, which marked it incomplete."""
    page = arms[arm].pages["poll"]
    nav = page.nav("/poll/")
    (poll,) = [r for r in nav["requests"] if "poll=1" in r["url"]]
    assert poll["end_ms"] is None and not poll["failed"], poll
    assert poll["start_ms"] > nav["load_ms"], (poll["start_ms"], nav["load_ms"])
    assert contract(nav, "open_at_end") == 1
    assert not contract(nav, "incomplete"), contract(nav, "incomplete_reasons")
    assert 5 <= page.seconds < 15, page.seconds
    # the server saw it, and answered it only when the browser had long gone on (or never)
    assert [h.uri for h in page.hits + page.aborted if "poll=1" in h.uri] == [
        "/slow/delay?ms=20000&poll=1"]


@pytest.mark.parametrize("arm", ARMS)
def test_soft_navigation_is_a_record_of_its_own_kind(arms: dict[str, Arm], arm: str) -> None:
    page = arms[arm].pages["soft"]
    assert contract(page.nav("/spa/"), "kind") == "navigation"
    soft = page.nav("/spa/view2")
    assert contract(soft, "kind") == "soft"
    assert {key(r["url"], "GET")[2] for r in soft["requests"]} >= {"/spa/view2.json",
                                                                    "/spa/v2.png"}


@pytest.mark.parametrize("arm", ARMS)
def test_history_state_that_keeps_the_url_is_no_navigation(arms: dict[str, Arm], arm: str) -> None:
    """/state/ calls history.replaceState twice 100 ms after its load, keeping its URL (a router's
    state once hydrated, scroll restoration), then loads an image 100 ms later, inside the quiet:
    one record of kind navigation, which holds that image (caddy served it during the step), and
    no soft one (until 2026-11-29 the first call ended the page's record and began a soft record
    of the same URL, which took the image)."""
    page = arms[arm].pages["state"]
    assert "/state/later.png" in {h.uri for h in page.hits}, page.hits
    assert len(page.navs) == 1, [(n["kind"], n["url"]) for n in page.navs]
    nav = page.nav("/state/")
    assert contract(nav, "kind") == "navigation"
    assert "/state/later.png" in {key(r["url"], "GET")[2] for r in nav["requests"]}


@pytest.mark.parametrize("arm", ARMS)
def test_frames_in_frames_are_the_pages(arms: dict[str, Arm], arm: str) -> None:
    """/frame/ holds a b.test frame which holds a c.test frame (an ad slot and its creative):
    three sites, three renderer processes. Each frame's document and image are in the page's
    record, as caddy served them, the nested one's too (the child session attaches its own
    children: CHILD_COMMANDS' auto-attach)."""
    page = arms[arm].pages["frame"]
    frames = {(h.host, h.uri) for h in page.hits}
    nested = {("b.test", "/frame/inner.html"), ("b.test", "/frame/inner.png"),
              ("c.test", "/frame/nested.html"), ("c.test", "/frame/nested.png")}
    assert nested <= frames, frames
    recorded = {key(r["url"], "GET")[::2] for r in page.nav("/frame/")["requests"]}
    assert nested <= recorded, recorded
    # each frame's document is on its own frame
    docs = [r for r in page.nav("/frame/")["requests"] if r["resource_type"] == "Document"]
    assert len({r["frame_id"] for r in docs}) == 3, docs


@pytest.mark.parametrize("arm", ARMS)
def test_a_posted_form_is_a_redirect_hop_of_its_results_page(arms: dict[str, Arm],
                                                              arm: str) -> None:
    """/form/'s button posts the form; caddy answers the POST 303 See Other to the results page,
    which the browser gets with a GET (Post/Redirect/Get). One record, of the results page: its
    first hop the POST (status 303), then the GET (200), its image after."""
    page = arms[arm].pages["form-post"]
    assert [(h.method, h.uri, h.status) for h in page.hits] == [
        ("POST", "/form/submit", 303), ("GET", "/form/result.html", 200),
        ("GET", "/form/r.png", 200)], page.hits
    nav = page.nav("/form/result.html")
    assert [urlsplit(u).path for u in _redirects(nav)] == ["/form/submit"], nav
    assert [(r["method"], urlsplit(r["url"]).path, r["status"], r["is_main_document"])
            for r in nav["requests"]] == [("POST", "/form/submit", 303, True),
                                          ("GET", "/form/result.html", 200, True),
                                          ("GET", "/form/r.png", 200, False)]


@pytest.mark.parametrize("arm", ARMS)
def test_a_reload_revalidates_the_document_and_takes_its_objects_from_the_cache(
        arms: dict[str, Arm], arm: str) -> None:
    """The user reloads /cache/ (its objects max-age 3600): Chromium asks caddy for the document
    again, conditionally (304, no body), and takes every object from its cache. The record says
    304 for the document (the wire's: Chromium reports the cached 200), with the cached body, and
    each object from the cache with no connection and no byte on the wire."""
    page = arms[arm].pages["reload"]
    assert [(h.uri, h.status) for h in page.hits] == [("/cache/", 304)], page.hits
    before = arms[arm].pages["cache-cold"].nav("/cache/")
    body = {urlsplit(r["url"]).path: r["body_bytes"] for r in before["requests"]}
    nav = page.nav("/cache/")
    for r in nav["requests"]:
        path = urlsplit(r["url"]).path
        assert r["body_bytes"] == body[path], r
        if r["is_main_document"]:
            assert r["status"] == 304 and 0 < r["encoded_bytes"] < 400, r
        else:
            assert r["from_memory_cache"] or r["from_disk_cache"], r
            assert (r["connection_id"], r["encoded_bytes"]) == (None, 0), r
    assert len(nav["requests"]) == len(before["requests"]), nav["requests"]


@pytest.mark.parametrize("arm", ARMS)
def test_broken_objects_are_recorded_as_the_wire_and_the_browser_had_them(
        arms: dict[str, Arm], arm: str) -> None:
    """/errors/: a missing script and image (caddy's 404s), an API's 500, an image the page's own
    Content-Security-Policy does not allow and one whose host refuses the connection. Those two
    never left the browser: no caddy line, and their records say why, with no connection and no
    byte. The statuses are caddy's (test_protocol_and_status_of_each_request_are_caddys); the page
    loads and its record is complete. A document answered 404 (with a body, as real sites' are) is
    a load like any other, its status 404."""
    page = arms[arm].pages["errors"]
    assert sorted((h.uri, h.status) for h in page.hits) == [
        ("/errors/", 200), ("/errors/fail", 500), ("/errors/gone.png", 404),
        ("/errors/missing.js", 404), ("/errors/ok.png", 200)], page.hits
    nav = page.nav("/errors/")
    assert nav["load_ms"] is not None and not contract(nav, "incomplete"), nav
    failed = {urlsplit(r["url"]).path: r for r in nav["requests"] if r["failed"]}
    blocked, refused = failed["/errors/blocked.png"], failed["/errors/refused.png"]
    assert blocked["failure"] == "blocked:csp", blocked
    assert refused["failure"] == "net::ERR_CONNECTION_REFUSED", refused
    for r in (blocked, refused):
        assert (r["status"], r["connection_id"], r["encoded_bytes"]) == (None, None, 0), r
    gone = arms[arm].pages["not-found"].nav("/errors/gone.html")
    (doc,) = [r for r in gone["requests"] if r["is_main_document"]]
    assert doc["status"] == 404 and doc["body_bytes"] == 60 and gone["load_ms"] is not None, doc


@pytest.mark.parametrize("arm", ARMS)
def test_bfcache_restore_is_a_record_of_its_own_kind(arms: dict[str, Arm], arm: str) -> None:
    page = arms[arm].pages["bf-back"]
    # the page's own pageshow said persisted (the truth that it came from the bfcache)
    assert [h.uri for h in page.hits] == ["/bf/shown?persisted=1"]
    nav = page.nav("/bf/one.html")
    assert contract(nav, "kind") == "bfcache"


@pytest.mark.parametrize("name", ["redirect-script", "redirect-meta"])
@pytest.mark.parametrize("arm", ARMS)
def test_the_page_left_by_a_script_or_meta_redirect(arms: dict[str, Arm], arm: str,
                                                    name: str) -> None:
    """The first document is recorded too; if its load never came, it says why (incomplete)."""
    page = arms[arm].pages[name]
    first = page.nav("/redir/script.html" if name == "redirect-script" else "/redir/meta.html")
    main = next(r for r in first["requests"] if r["is_main_document"])
    if first["load_ms"] is None or main["end_ms"] is None:
        assert contract(first, "incomplete") and contract(first, "incomplete_reasons"), first
    assert len(page.navs) == 2


@pytest.mark.parametrize("arm", ARMS)
def test_chain_and_http_redirects(arms: dict[str, Arm], arm: str) -> None:
    chain = arms[arm].pages["redirect-chain"].nav("/redir/landing.html")
    assert [key(u, "GET")[:3] for u in _redirects(chain)] == [
        ("a.test", arms[arm].site.port, "/redir/chain"), ("b.test", arms[arm].site.port,
                                                          "/redir/hop2")]
    plain = arms[arm].pages["http-to-https"].nav("/redir/plain.html")
    assert _redirects(plain) == [arms[arm].site.url("/redir/plain.html", http=True)]


def _redirects(nav: dict[str, Any]) -> list[str]:
    return list(json.loads(nav["redirects"]))


@pytest.mark.parametrize("arm", ARMS)
def test_an_objects_redirects_across_hosts_are_its_hops(arms: dict[str, Arm], arm: str) -> None:
    """/misc/'s pixel is redirected twice across hosts, as ad and measurement tags are: b.test
    answers 302 to c.test, which answers 302 to a.test's image. The record has the three hops,
    in order, each with caddy's status and protocol, one request id with three hop numbers."""
    page = arms[arm].pages["misc"]
    port = arms[arm].site.port
    wire = [(h.host, h.uri, h.status) for h in sorted(page.hits, key=lambda h: h.start)
            if h.uri in ("/px/1", "/px/2", "/misc/px.png")]
    assert wire == [("b.test", "/px/1", 302), ("c.test", "/px/2", 302),
                    ("a.test", "/misc/px.png", 200)], wire
    hops = [r for r in page.nav("/misc/")["requests"]
            if key(r["url"], "GET")[1:3] in ((port, "/px/1"), (port, "/px/2"),
                                             (port, "/misc/px.png"))]
    assert [(urlsplit(r["url"]).hostname, r["status"], r["resource_type"]) for r in hops] == [
        ("b.test", 302, "Image"), ("c.test", 302, "Image"), ("a.test", 200, "Image")], hops
    ids = [r["request_id"].rsplit(":", 1) for r in hops]
    assert len({i for i, _ in ids}) == 1 and [n for _, n in ids] == ["0", "1", "2"], ids


@pytest.mark.parametrize("arm", ARMS)
def test_a_cors_preflight_is_a_request_of_its_own(arms: dict[str, Arm], arm: str) -> None:
    """/misc/'s script fetches b.test's API with a header of its own (X-Proto), which a browser
    asks the server about first: caddy answered the OPTIONS 204, then the GET 200. The record
    has both, the preflight as DevTools shows it (type Preflight) with the bytes its response
    brought (Chromium ends a preflight with 0 bytes: the per-connection check against the NetLog
    holds the figure)."""
    page = arms[arm].pages["misc"]
    wire = [(h.method, h.status) for h in sorted(page.hits, key=lambda h: h.start)
            if h.uri == "/api/cors.json"]
    assert wire == [("OPTIONS", 204), ("GET", 200)], wire
    api = {r["method"]: r for r in page.nav("/misc/")["requests"]
           if urlsplit(r["url"]).path == "/api/cors.json"}
    assert (api["OPTIONS"]["resource_type"], api["OPTIONS"]["status"]) == ("Preflight", 204), api
    assert api["OPTIONS"]["encoded_bytes"] > 0, api
    assert api["OPTIONS"]["connection_id"] == api["GET"]["connection_id"], api


@pytest.mark.parametrize("arm", ARMS)
def test_fonts_and_module_scripts_from_another_host_come_on_a_connection_of_their_own(
        arms: dict[str, Arm], arm: str) -> None:
    """/fonts/ takes a stylesheet and an image from b.test (as from a font service), the font
    that stylesheet names and a module script (as from a CDN), and a font of its own from a.test.
    A font and a module script are fetched in CORS mode, without credentials from another host:
    caddy served b.test's font and module on client ports that carried neither its stylesheet
    nor its image, in every arm (Chromium's socket pools and QUIC sessions are keyed by privacy
    mode), and in h2 and h3 both on one. The record has the same split: b.test on two connections
    (h2, h3; a.test on one, its own font on the page's), every request on caddy's connection (the
    general tests hold each id to one client port)."""
    page = arms[arm].pages["fonts"]
    port = {(h.host, h.uri): h.client_port for h in page.hits}
    credentialed = {port[("b.test", "/fonts/fonts.css")], port[("b.test", "/fonts/logo.png")]}
    anonymous = {port[("b.test", "/fonts/cdn.ttf")], port[("b.test", "/fonts/mod.js")]}
    assert not credentialed & anonymous, port
    assert ("a.test", "/fonts/own.ttf") in port, port
    nav = page.nav("/fonts/")
    conn = {key(r["url"], "GET")[::2]: r["connection_id"] for r in nav["requests"]}
    b = {path: conn[("b.test", f"/fonts/{path}")] for path in ("fonts.css", "logo.png",
                                                                  "cdn.ttf", "mod.js")}
    assert not {b["fonts.css"], b["logo.png"]} & {b["cdn.ttf"], b["mod.js"]}, b
    hosts: dict[str, set[int]] = defaultdict(set)
    for r in nav["requests"]:
        hosts[key(r["url"], "GET")[0]].add(r["connection_id"])
    if arm != "h1":
        assert len(anonymous) == 1 and b["cdn.ttf"] == b["mod.js"], (port, b)
        assert {h: len(c) for h, c in hosts.items()} == {"a.test": 1, "b.test": 2}, hosts
    else:
        assert len(hosts["b.test"]) >= 2, hosts


@pytest.mark.parametrize("arm", ARMS)
def test_warm_loads_are_cache_hits(arms: dict[str, Arm], arm: str) -> None:
    for name, flag in (("cache-memory", "from_memory_cache"), ("cache-disk", "from_disk_cache")):
        page = arms[arm].pages[name]
        assert not [h for h in page.hits if h.uri != "/cache/"], (name, page.hits)
        subs = [r for r in page.nav("/cache/")["requests"] if not r["is_main_document"]]
        assert len(subs) == 5 and all(r[flag] for r in subs), (name, subs)


@pytest.mark.parametrize("name", ["window-stop", "user-stop"])
@pytest.mark.parametrize("arm", ARMS)
def test_stopped_loads_say_so(arms: dict[str, Arm], arm: str, name: str) -> None:
    nav = arms[arm].pages[name].nav("/stop/" if name == "window-stop" else "/hang/")
    assert contract(nav, "incomplete") and "stopped" in contract(nav, "incomplete_reasons")


@pytest.mark.parametrize("arm", ARMS)
def test_a_dialog_during_the_load_is_closed_at_once_and_said(arms: dict[str, Arm],
                                                              arm: str) -> None:
    """An alert() during the load: headless Chromium shows it to no one, and until 2026-11-30 the
    page waited for ever (no record within the step's time). The extension closes it as it opens
    (src/cdp/session.ts); the record says the load waited on a dialog."""
    page = arms[arm].pages["dialog"]
    nav = page.nav("/dialog/")
    assert contract(nav, "incomplete") and contract(nav, "incomplete_reasons") == ["dialog"]
    waited = waited_ms(page.hits)
    # the page's own clock, through caddy's log: the dialog was closed within a second
    assert len(waited) == 1 and waited[0] < 1000, waited
    # both images: the one fetched during the dialog, and the one the script added after it
    assert sorted(urlsplit(r["url"]).path for r in nav["requests"]) == \
        ["/console/img/1.png", "/console/img/2.png", "/dialog/"]


@pytest.mark.parametrize("arm", ARMS)
def test_a_download_is_counted_not_navigated(arms: dict[str, Arm], arm: str) -> None:
    page = arms[arm].pages["download"]
    assert [n["url"] for n in page.navs] == [arms[arm].site.url("/download/")]
    assert contract(page.navs[0], "downloads") == 1
    assert "download_transfers" in contract(page.navs[0], "not_seen")
    assert [h.size for h in page.hits if h.uri == "/download/file.bin"] == [20_000]


@pytest.mark.parametrize("arm", ARMS)
def test_compressed_text_is_its_body_decoded_and_smaller_on_the_wire(arms: dict[str, Arm],
                                                                     arm: str) -> None:
    """/gzip/'s stylesheet, script and JSON fetch (generated text, realweb.py TEXTS) go
    gzip-encoded, as real sites send their text. Each request's ``body_bytes`` is the file's own
    size (decoded), and its ``encoded_bytes`` the compressed body caddy wrote (its log's ``size``)
    plus the response's headers; the NetLog test above holds the connection's sum to the wire."""
    page = arms[arm].pages["gzip"]
    nav = page.nav("/gzip/")
    written = {h.uri: h.size for h in page.hits}
    for rel, size in TEXTS.items():
        path = "/" + rel.split("/", 1)[1]
        (r,) = [r for r in nav["requests"] if urlsplit(r["url"]).path == path]
        assert r["body_bytes"] == size == arms[arm].site.files[rel], r
        assert written[path] < size / 3, (path, written[path])  # it was compressed
        assert 0 < r["encoded_bytes"] - written[path] < 600, (r, written[path])


@pytest.mark.parametrize("arm", ARMS)
def test_a_revalidated_load_is_304s_with_the_cached_bodies(arms: dict[str, Arm], arm: str) -> None:
    """/reval/ (Cache-Control no-cache) loaded twice: the second load revalidates its document
    and objects, and caddy answers each with 304 Not Modified and no body. The record says 304
    for each, the document too (Chromium reports it as the cached 200: the recorder reads the
    wire's status from Network.responseReceivedExtraInfo), bytes on the wire the headers' only,
    and the body each request got from the cache, the first load's."""
    cold, warm = arms[arm].pages["reval-cold"], arms[arm].pages["reval-warm"]
    assert sorted((h.uri, h.status) for h in warm.hits) == [
        ("/reval/", 304), ("/reval/r.css", 304), ("/reval/r1.png", 304), ("/reval/r2.png", 304)]
    body = {urlsplit(r["url"]).path: r["body_bytes"] for r in cold.nav("/reval/")["requests"]}
    requests = warm.nav("/reval/")["requests"]
    assert sorted((urlsplit(r["url"]).path, r["status"]) for r in requests) == sorted(
        (h.uri, h.status) for h in warm.hits)
    for r in requests:
        assert 0 < r["encoded_bytes"] < 400 and r["body_bytes"] == body[urlsplit(r["url"]).path], r


@pytest.mark.parametrize("arm", ARMS)
def test_media_is_fetched_by_range_and_recorded_whole(arms: dict[str, Arm], arm: str) -> None:
    """/media/'s audio element (preload "auto", a 2.6 MB WAV) is fetched with a Range request,
    answered 206 Partial Content: one request of resource type Media, status 206, its body the
    bytes caddy wrote (the whole file, on loopback), on the page's record."""
    page = arms[arm].pages["media"]
    (hit,) = [h for h in page.hits if h.uri == "/media/a.wav"]
    (media,) = [r for r in page.nav("/media/")["requests"] if r["url"].endswith("/media/a.wav")]
    assert (hit.status, media["status"], media["resource_type"]) == (206, 206, "Media"), media
    assert media["body_bytes"] == hit.size == arms[arm].site.files["a.test/media/a.wav"], media


@pytest.mark.parametrize("arm", ARMS)
def test_beacons_sent_as_a_page_is_left_are_not_the_next_pages(arms: dict[str, Arm],
                                                                arm: str) -> None:
    """/unload/ sends a beacon and a keepalive fetch at pagehide, as analytics and RUM scripts
    do; the click to next.html makes them go while next.html loads. caddy served both, with the
    first page as their Referer (the document that sent them), during the click's step, and
    next.html's record holds neither (the general tests hold it to the step's other requests:
    realweb_truth LEFT). The first page's record had ended (the lab's quiet) and does not take
    them either. A beacon may reach caddy after the click's step has ended (once in h3 by hand:
    the step ends 0.5 s after next.html's record): the steps from the click on are searched."""
    page = arms[arm].pages["unload-next"]
    first = arms[arm].site.url("/unload/")
    names = list(arms[arm].pages)
    left = [h for name in names[names.index("unload-next"):] for h in arms[arm].pages[name].left]
    assert sorted((h.host, h.uri, h.method, h.status, h.referer) for h in left) == [
        ("e.test", "/beacon?on=keepalive", "POST", 204, first),
        ("e.test", "/beacon?on=pagehide", "POST", 204, first)]
    assert [n["url"] for n in page.navs] == [arms[arm].site.url("/unload/next.html")]
    for name in names:
        assert not [r for r in arms[arm].pages[name].requests() if "/beacon?on=" in r["url"]], name


@pytest.mark.parametrize("arm", ARMS)
def test_worker_fetches_recorded_or_declared_unseen(arms: dict[str, Arm], arm: str) -> None:
    nav = arms[arm].pages["workers"].nav("/workers/")
    paths = {key(r["url"], "GET")[2] for r in nav["requests"]}
    assert "/workers/w1.json" in paths  # a dedicated worker is a child target of the page
    if "/workers/w2.json" not in paths:
        assert "shared_worker_fetches" in contract(nav, "not_seen")
    # the shared worker's script is answered on the worker's own target: declared unseen,
    # every other request ended
    open_ = [r["url"] for r in nav["requests"] if r["end_ms"] is None]
    assert open_ in ([], [arms[arm].site.url("/workers/shared.js")]), open_
    if open_:
        assert "shared_worker_fetches" in contract(nav, "not_seen")


@pytest.mark.parametrize("arm", ARMS)
def test_early_hints_preloads_are_declared_unseen(arms: dict[str, Arm], arm: str) -> None:
    """Chromium acts on a 103's Link: preload over HTTP/2 and HTTP/3 only (developer.chrome.com,
    "Early Hints": not over HTTP/1.1): under h1 nothing is fetched before the page's 200. It
    reports none of those fetches to the tab; the record says so (page.not_seen) and holds the
    page's own requests for the same objects."""
    page = arms[arm].pages["early-hints"]
    served = [h.uri for h in page.hits]
    first_200 = next(h for h in page.hits if h.uri == "/hints/")
    early = [h for h in page.hits if h.uri.startswith("/hints/hint.") and h.start < first_200.start
             + first_200.duration]
    # over h2/h3 Chromium usually fetches both during the backend's 300 ms; a CI run once saw
    # neither fetched early (one fetch of each, after the page's 200): held to "both or none"
    # here, and to "at least one arm did" in the test below
    assert len(early) in ((0,) if arm == "h1" else (0, 2)), served
    nav = page.nav("/hints/")
    got = [key(r["url"], "GET")[2] for r in nav["requests"]]
    hinted = sorted(u for u in served if u.startswith("/hints/hint."))
    if early:
        assert "early_hints_preloads" in contract(nav, "not_seen")
        hinted = sorted(set(hinted))  # the page's own fetch of each, recorded
    assert sorted(u for u in got if u.startswith("/hints/hint.")) == hinted


def test_early_hints_are_acted_on_over_h2_or_h3(arms: dict[str, Arm]) -> None:
    """The early-hints page reaches what the test above is for: over h2 or h3 (both in a
    complete run) Chromium fetched the 103's two preloads before the page's 200 ended."""
    got = {}
    for arm in set(arms) & {"h2", "h3"}:
        hits = arms[arm].pages["early-hints"].hits
        first_200 = next(h for h in hits if h.uri == "/hints/")
        got[arm] = sum(1 for h in hits if h.uri.startswith("/hints/hint.")
                       and h.start < first_200.start + first_200.duration)
    assert got and max(got.values()) == 2, got
