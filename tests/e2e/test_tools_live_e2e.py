"""As a user: browse a page with the extension recording, then look at that load with each tool.

Real headless Chromium with the built extension and the real host in an everyday profile,
recording switched on from the options page (all sites, full URLs), the test site (caddy,
HTTP/2). After the page's record reaches the SQLite store:

- the popup's *Waterfall* link of that tab opens the waterfall page, which draws the record the
  extension kept for the tab: one row per connection, the same rows as the host's
  ``protolens plot waterfall`` draws from the stored record (screenshot kept);
- ``protolens show`` prints every connection of the stored record;
- ``protolens export --har`` writes HAR that har-validator accepts, one entry per request.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from protolens.plots.waterfall_series import waterfall_series
from protolens.store import open_ro
from protolens.store.records import load_record
from scripts.devkit.cdp import EXTENSION, Cdp, Page, wait_for
from scripts.devkit.everyday import recording_browser
from scripts.devkit.harness import ROOT
from scripts.devkit.site import Site
from tests.cli.run import protolens
from tests.e2e.test_new_tab_e2e import stored

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cdp, Site, Path]]:
    with recording_browser(tmp_path_factory.mktemp("tools-live-e2e")) as b:
        yield b


def test_a_browsed_load_in_waterfall_show_and_har(browser: tuple[Cdp, Site, Path],
                                                  tmp_path: Path) -> None:
    cdp, site, db = browser
    url = f"{site.url}?tools=live"
    cdp.send("Target.createTarget", {"url": url})
    nav, _ = wait_for(f"a record of {url}", lambda: stored(db, url), 30)
    with open_ro(db) as conn:
        record = load_record(conn, nav["id"])
    expected = waterfall_series(record)
    used = {r.connection_id for r in record.requests if r.connection_id is not None}
    assert len([r for r in expected.rows if r.key.startswith("c") and r.key[1:].isdigit()]) \
        == len(used) >= 2

    # the popup of that tab links to its waterfall; the page draws the extension's own record
    ext = Page(cdp, f"{EXTENSION}/options.html", 400, 300)
    tab = ext.wait(f"chrome.tabs.query({{}}).then((ts) => (ts.find((t) => t.url === "
                   f"{json.dumps(url)}) || {{}}).id)")
    ext.wait(f"chrome.storage.session.get('last:{tab}').then((g) => 'last:{tab}' in g)")
    popup = Page(cdp, f"{EXTENSION}/popup.html?tab={tab}", 400, 600)
    href = popup.wait("!document.getElementById('waterfall').hidden &&"
                      " document.getElementById('waterfall').href")
    assert href == f"{EXTENSION}/waterfall.html?tab={tab}"
    page = Page(cdp, href, 1200, 200 + 26 * len(expected.rows))
    page.wait("document.body.dataset.ready === '1'")
    page.screenshot("waterfall-live.png")
    labels = page.js("[...document.querySelectorAll('.wf-row .wf-label')]"
                     ".map((l) => l.textContent)")
    assert labels == [row.label for row in expected.rows]

    shown = protolens("show", nav["id"], db=db).stdout
    for cid in used:
        assert any(line.startswith(f"│ {cid:>10} │") for line in shown.splitlines()), cid
    har = tmp_path / "live.har"
    protolens("export", "--har", nav["id"], "-o", str(har), db=db)
    entries = json.loads(har.read_text())["log"]["entries"]
    assert len(entries) == len(record.requests)
    done = subprocess.run([str(ROOT / "node_modules/.bin/tsx"), "scripts/validate-har.ts",
                           str(har)], cwd=ROOT, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stdout
