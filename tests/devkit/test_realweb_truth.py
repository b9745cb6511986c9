"""The real-web e2e's reading of caddy's log against the records (scripts/devkit/realweb_truth.py
``request_diff``, ``connection_bytes``), on records and log lines shaped as the e2e stores and
reads them: what a late join may miss and what it may not; which connections a stop leaves
inexact."""

from __future__ import annotations

import json
from typing import Any

from scripts.devkit.caddylog import Hit
from scripts.devkit.realweb_truth import Page, connection_bytes, request_diff

T0 = 1_800_000_000.0  # the record's start, epoch seconds


def _req(url: str, start_ms: float, frame: str, kind: str = "Image",
         main: bool = False) -> dict[str, Any]:
    return {"url": url, "method": "GET", "start_ms": start_ms, "frame_id": frame,
            "resource_type": kind, "is_main_document": main, "failed": False, "failure": None,
            "from_memory_cache": False, "from_disk_cache": False, "from_service_worker": False,
            "connection_id": 7, "encoded_bytes": 100, "status": 200, "end_ms": start_ms + 10}


def _page(not_seen: list[str]) -> Page:
    """/frame/ joined late, its first request seen 5 ms in: its b.test frame's stylesheet (begun
    65 ms in) and image (190 ms) were not recorded, its script (77 ms, the first request seen on
    that frame) was. (Hits begun up to 50 ms after a first request seen are excused: the
    clocks' slack.)"""
    nav = {"id": "n", "url": "https://a.test:1/frame/", "started_at_ms": T0 * 1000,
           "not_seen": json.dumps(not_seen), "requests": [
               _req("https://a.test:1/frame/", 1.6, "M", "Document", main=True),
               _req("https://a.test:1/frame/top.png", 5.0, "M"),
               _req("https://b.test:1/frame/inner.html", 40.0, "B", "Document"),
               _req("https://b.test:1/frame/inner.js", 77.0, "B", "Script")]}
    hits = [Hit("a.test", "/frame/", "h2", 5, 200, 300, port=1, start=T0 + 0.0016),
            Hit("a.test", "/frame/top.png", "h2", 5, 200, 300, port=1, start=T0 + 0.005),
            Hit("b.test", "/frame/inner.html", "h2", 6, 200, 300, port=1, start=T0 + 0.040),
            Hit("b.test", "/frame/inner.css", "h2", 6, 200, 300, port=1, start=T0 + 0.065),
            Hit("b.test", "/frame/inner.js", "h2", 6, 200, 300, port=1, start=T0 + 0.077),
            Hit("b.test", "/frame/inner.png", "h2", 6, 200, 300, port=1, start=T0 + 0.190)]
    return Page("frame", [nav], hits)


def test_a_late_frame_may_miss_what_began_before_its_first_request_seen_none_after() -> None:
    missing, extra = request_diff(_page(["requests_before_attach"]))
    # the stylesheet (65 ms, before the frame's first request seen) is excused; the image
    # (190 ms, after it) is not
    assert dict(missing) == {("b.test", 1, "/frame/inner.png", "GET"): 1}
    assert not extra


def test_a_late_frame_without_its_document_is_placed_by_its_first_request() -> None:
    """The everyday /frame/ once (2026-11-29): b.test's frame document was not in the record, its
    script (77 ms) was; its image (begun at 80 ms, within the clocks' slack of the script) was
    excused only once the frame could be placed on b.test without its document."""
    page = _page(["requests_before_attach"])
    nav = page.navs[0]
    nav["requests"] = [r for r in nav["requests"] if not r["url"].endswith("/inner.html")]
    page.hits[-1] = Hit("b.test", "/frame/inner.png", "h2", 6, 200, 300, port=1, start=T0 + 0.080)
    missing, extra = request_diff(page)
    assert not missing, missing
    # what the record lacks and the wire has, after the slack, is still missing
    page.hits[-1] = Hit("b.test", "/frame/inner.png", "h2", 6, 200, 300, port=1, start=T0 + 0.190)
    missing, _ = request_diff(page)
    assert dict(missing) == {("b.test", 1, "/frame/inner.png", "GET"): 1}
    assert not extra


def test_a_record_that_declares_nothing_misses_nothing() -> None:
    missing, _ = request_diff(_page([]))
    assert set(missing) == {("b.test", 1, "/frame/inner.css", "GET"),
                            ("b.test", 1, "/frame/inner.png", "GET")}


def _stopped(logged: bool) -> Page:
    """/stop/ over HTTP/1.1: its document and image on one connection (client port 9), then the
    object that never ends on that connection too, cut by the page's window.stop(): failed after
    its response began (status 200, 4,299 bytes). caddy usually logs no line for it (the
    backend's log has it: ``Page.aborted``), but may once the browser drops it."""
    never = {**_req("https://a.test:1/slow/never", 30.0, "M"), "failed": True,
             "failure": "net::ERR_ABORTED", "status": 200, "encoded_bytes": 4299}
    nav = {"id": "n", "url": "https://a.test:1/stop/", "started_at_ms": T0 * 1000,
           "not_seen": "[]", "requests": [
               {**_req("https://a.test:1/stop/", 0.0, "M", "Document", main=True), "status": 200},
               {**_req("https://a.test:1/stop/ok.png", 20.0, "M"), "status": 200}, never]}
    hits = [Hit("a.test", "/stop/", "h1", 9, 200, 300, port=1, start=T0),
            Hit("a.test", "/stop/ok.png", "h1", 9, 200, 300, port=1, start=T0 + 0.02)]
    cut = Hit("a.test", "/slow/never", "h1", 9 if logged else 0, 200, 0, port=1,
              start=T0 + 0.03)
    return Page("window-stop", [nav], hits + [cut] if logged else hits, aborted=[] if logged
                else [cut])


def test_a_stopped_response_leaves_its_connection_inexact_whether_caddy_logged_it_or_not() -> None:
    for logged in (False, True):
        tally = connection_bytes([_stopped(logged)])
        conn = (9, 1, False)
        assert dict(tally.recorded) == {conn: 100 + 100 + 4299}, logged
        assert tally.inexact == {conn}, logged


def test_a_page_without_a_stop_leaves_its_connections_exact() -> None:
    tally = connection_bytes([_page([])])
    assert tally.recorded and not tally.inexact
