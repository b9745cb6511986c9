"""End to end: the everyday browser (issue 14 §5) in real headless Chromium with the built
extension and the real host in an everyday profile (no lab context), recording switched on from
the options page as a user does.

- The first-run page opens by itself after install (the host said this is no lab profile).
- The debugger lets go of a tab once its load is recorded and the tab is idle: after the record
  is in the SQLite store, chrome.debugger.getTargets() reports the tab unattached; the tab's next
  navigation is recorded again. The test never attaches to that tab itself (tabs are opened and
  navigated with chrome.tabs from an extension page), so `attached` is the extension's session.
- The popup's pause switch: while paused the icon's badge says OFF, a page load leaves nothing in
  the store and the debugger stays off its tab; after "Resume recording" the next load is stored.
Screenshots go to $PROTOLENS_E2E_ARTIFACTS (default /tmp/protolens-e2e).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.devkit.cdp import EXTENSION, Page, devtools_browser, wait_for
from scripts.devkit.everyday import extension_spec, switch_recording_on, wait_first_run_page
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.e2e

QUIET_S = 5.0
"""Longer than the recorder's 2 s network quiet after load: a load not recorded by then is not
recorded (src/cdp/navigation.ts)."""


def navs(db: Path, url: str) -> list[sqlite3.Row]:
    if not db.exists():
        return []
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        try:
            return list(conn.execute("SELECT id, url, late_attach FROM navigations WHERE url = ?",
                                     (url,)))
        except sqlite3.OperationalError:  # schema not created yet by the host
            return []


@pytest.fixture(scope="module")
def everyday(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("everyday-e2e")
    db = work / "store.db"
    with serve_site(work / "site") as site:
        spec = extension_spec(work, db=db, site=site)
        with devtools_browser(spec, work) as (cdp, _log):
            # the first-run page opens before recording is switched on
            welcome = wait_first_run_page(cdp)
            options = Page(cdp, f"{EXTENSION}/options.html", 800, 900)
            switch_recording_on(options)
            yield {"cdp": cdp, "site": site, "db": db, "options": options, "welcome": welcome}


def open_tab(options: Page, url: str) -> int:
    tab_id = options.js(f"chrome.tabs.create({{url: {url!r}, active: false}}).then((t) => t.id)")
    assert isinstance(tab_id, int)
    return tab_id


def attached(options: Page, tab_id: int) -> bool | None:
    """The extension's view: is a debugger attached to the tab (None: no such target)?"""
    got = options.js(f"chrome.debugger.getTargets().then((ts) => ts.filter((t) => t.tabId === "
                     f"{tab_id}).map((t) => t.attached))")
    return bool(got[0]) if got else None


def badge(options: Page, tab_id: int) -> str:
    return str(options.js(f"chrome.action.getBadgeText({{tabId: {tab_id}}})"))


def test_first_run_page_says_what_where_and_how_to_delete(everyday: dict[str, Any]) -> None:
    page = Page(everyday["cdp"], f"{EXTENSION}/welcome.html", 900, 1000)
    text = page.wait("document.readyState === 'complete' && document.body.innerText")
    for needle in ("What is recorded", "Where it goes", "protolens db forget --site",
                   "protolens db forget --all", "started debugging this browser"):
        assert needle in text
    page.screenshot("welcome.png")


def test_debugger_detaches_when_a_recorded_tab_is_idle_and_comes_back(
        everyday: dict[str, Any]) -> None:
    options, db, site = everyday["options"], everyday["db"], everyday["site"]
    url = f"{site.url}?idle=1"
    tab_id = open_tab(options, url)
    wait_for("the debugger on the new tab", lambda: attached(options, tab_id), 10)
    wait_for("the record of the first load", lambda: navs(db, url), 30)
    stored = time.monotonic()
    wait_for("the debugger to let go of the idle tab", lambda: attached(options, tab_id) is False,
             10)
    print(f"detached {time.monotonic() - stored:.2f} s after the record was stored")
    # still detached a while later: nothing re-attached the idle tab
    time.sleep(1.0)
    assert attached(options, tab_id) is False
    again = f"{site.url}?idle=2"
    options.js(f"chrome.tabs.update({tab_id}, {{url: {again!r}}}).then(() => true)")
    rows = wait_for("the record of the next load", lambda: navs(db, again), 30)
    assert len(rows) == 1
    print(f"next load re-attached at its navigation: late_attach={rows[0]['late_attach']}")
    wait_for("the debugger to let go again", lambda: attached(options, tab_id) is False, 10)


def test_pause_switch_stops_recording_and_resume_starts_it_again(
        everyday: dict[str, Any]) -> None:
    cdp, options, db, site = everyday["cdp"], everyday["options"], everyday["db"], everyday["site"]
    popup = Page(cdp, f"{EXTENSION}/popup.html", 400, 600)
    popup.wait("!document.getElementById('pause-off').hidden")
    popup.js("document.getElementById('pause-off').click(); true")
    assert "until you turn it back on" in popup.wait(
        "document.getElementById('pause-status').textContent")
    assert options.js("chrome.storage.local.get('pause').then((g) => g.pause)") == {"until": None}
    popup.screenshot("popup-paused.png")

    paused_url = f"{site.url}?paused=1"
    tab_id = open_tab(options, paused_url)
    wait_for("the OFF badge on the new tab", lambda: badge(options, tab_id) == "OFF", 10)
    wait_for("the paused load to finish", lambda: options.js(
        f"chrome.tabs.get({tab_id}).then((t) => t.status === 'complete')"), 20)
    time.sleep(QUIET_S)
    assert navs(db, paused_url) == [], "a load was stored while paused"
    assert attached(options, tab_id) is False

    popup.js("document.getElementById('resume').click(); true")
    popup.wait("!document.getElementById('pause-hour').hidden")
    wait_for("the badge to clear", lambda: badge(options, tab_id) == "", 10)
    resumed_url = f"{site.url}?resumed=1"
    options.js(f"chrome.tabs.update({tab_id}, {{url: {resumed_url!r}}}).then(() => true)")
    wait_for("the record of the load after resuming", lambda: navs(db, resumed_url), 30)
    assert navs(db, paused_url) == []


def test_pause_for_an_hour_is_stored_with_its_end(everyday: dict[str, Any]) -> None:
    popup = Page(everyday["cdp"], f"{EXTENSION}/popup.html", 400, 600)
    popup.wait("!document.getElementById('pause-hour').hidden")
    before = time.time() * 1000
    popup.js("document.getElementById('pause-hour').click(); true")
    assert "Paused until" in popup.wait("document.getElementById('pause-status').textContent")
    until = popup.js("chrome.storage.local.get('pause').then((g) => g.pause.until)")
    assert before + 3_590_000 < until < time.time() * 1000 + 3_600_000
    popup.js("document.getElementById('resume').click(); true")
    popup.wait("!document.getElementById('pause-hour').hidden")
