"""End to end: the first navigation of a brand-new tab is recorded (passive recording).

Real headless Chromium with the built extension and the real host in an everyday profile
(no lab context), recording switched on from the options page as a user does (all sites, full
URLs). Two ways a user gets a page into a new tab, each checked in the SQLite store against
caddy's access log (the independent witness of each request's protocol):

- typed into a new tab: the tab shows chrome://newtab/, which chrome.debugger refuses, so the
  extension can only attach once the page has committed (webNavigation.onCommitted). The record
  must exist with ``late_attach = 'commit'``: the main document from the page's Navigation Timing
  (protocol family as caddy saw it, no connection id), every recorded request's family as in
  caddy's log. Before the fix there was no record at all.
- opened in a new tab with its URL (``Target.createTarget``, as a link with target=_blank or
  chrome.tabs.create): the extension attaches at tabs.onCreated. The record must exist, with
  every request's family as in caddy's log; how late the attach was is printed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from scripts.devkit.caddylog import Hit, read_hits
from scripts.devkit.cdp import Cdp, wait_for
from scripts.devkit.everyday import recording_browser
from scripts.devkit.site import Site

pytestmark = pytest.mark.e2e



def query(db: Path, sql: str, *args: Any) -> list[sqlite3.Row]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        try:
            return list(conn.execute(sql, args))
        except sqlite3.OperationalError:  # schema not created yet by the host
            return []


def stored(db: Path, url: str) -> tuple[sqlite3.Row, list[sqlite3.Row]] | None:
    navs = query(db, "SELECT id, late_attach, load_ms FROM navigations WHERE url = ?", url)
    if not navs:
        return None
    assert len(navs) == 1, f"{len(navs)} records of {url}"
    return navs[0], query(db, "SELECT * FROM requests WHERE navigation_id = ? ORDER BY seq",
                          navs[0]["id"])


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cdp, Site, Path]]:
    with recording_browser(tmp_path_factory.mktemp("new-tab-e2e")) as b:
        yield b


def check_against_caddy(requests: list[sqlite3.Row], hits: list[Hit], main_url: str) -> int:
    """Every recorded request of the test site has caddy's protocol family; returns how many."""
    by_uri = {(h.host, h.uri): h for h in hits}
    checked = 0
    for req in requests:
        parts = urlsplit(req["url"])
        if parts.hostname not in ("a.test", "b.test") or req["protocol"] is None:
            continue
        if req["from_disk_cache"] or req["from_memory_cache"]:  # caddy never saw these
            continue
        key = (parts.hostname, parts.path + (f"?{parts.query}" if parts.query else ""))
        hit = by_uri.get(key)
        assert hit is not None, f"{key} recorded but not in caddy's log"
        assert req["family"] == hit.family, (key, req["protocol"], hit.family)
        checked += 1
    main = [r for r in requests if r["is_main_document"]]
    assert [r["url"] for r in main] == [main_url]
    return checked


def test_url_typed_into_a_new_tab_is_recorded_late_at_commit(
        browser: tuple[Cdp, Site, Path]) -> None:
    cdp, site, db = browser
    url = f"{site.url}?tab=typed"
    tab = cdp.send("Target.createTarget", {"url": "chrome://newtab/"})["targetId"]
    session = str(cdp.send("Target.attachToTarget", {"targetId": tab, "flatten": True})
                  ["sessionId"])
    def ready() -> bool:
        try:
            return bool(cdp.send("Runtime.evaluate", {"expression": "document.readyState",
                                                      "returnByValue": True},
                                 session)["result"].get("value") == "complete")
        except RuntimeError:  # the new tab page replaces its first document while loading
            return False

    wait_for("the new tab page", ready)
    start = site.access_log.stat().st_size
    cdp.send("Page.navigate", {"url": url}, session)  # browser-initiated, as the omnibox is
    nav, requests = wait_for(f"a record of {url}", lambda: stored(db, url), 30)
    hits = read_hits(site.access_log, start)
    assert nav["late_attach"] == "commit"
    assert nav["load_ms"] is not None and nav["load_ms"] > 0
    checked = check_against_caddy(requests, hits, url)
    main = next(r for r in requests if r["is_main_document"])
    page_hit = next(h for h in hits if h.uri == "/page/?tab=typed")
    assert main["family"] == page_hit.family == "h2"
    assert main["connection_id"] is None and main["remote_ip"] is None  # not in Navigation Timing
    assert main["status"] == 200 and main["encoded_bytes"] == page_hit.size
    print(f"typed into a new tab: late_attach=commit, {len(requests)} requests recorded "
          f"({checked} checked against caddy) of {len(hits)} caddy saw")


def test_url_opened_in_a_new_tab_is_recorded(browser: tuple[Cdp, Site, Path]) -> None:
    cdp, site, db = browser
    url = f"{site.url}?tab=opened"
    start = site.access_log.stat().st_size
    cdp.send("Target.createTarget", {"url": url})
    nav, requests = wait_for(f"a record of {url}", lambda: stored(db, url), 30)
    hits = read_hits(site.access_log, start)
    checked = check_against_caddy(requests, hits, url)
    assert checked >= 1
    main = next(r for r in requests if r["is_main_document"])
    assert main["family"] == "h2"
    print(f"opened in a new tab: late_attach={nav['late_attach']}, {len(requests)} requests "
          f"recorded ({checked} checked against caddy) of {len(hits)} caddy saw")
