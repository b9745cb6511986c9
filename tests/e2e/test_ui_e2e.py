"""The popup and the options page in real headless Chromium with the built extension.

The popup shows the last record of a tab, which the service worker keeps in
chrome.storage.session under ``last:<tabId>`` (src/adapters/tab-view.ts). The test writes a record
there itself, from an extension page over the DevTools protocol: the h1 fixture's golden record
(tests/fixtures/cdp/h1.expected.json, recorded from real Chromium; several connections, two hosts)
with its page URL and one host replaced by markup. Then it opens ``popup.html?tab=ID`` and checks
what is on screen: the PLT, one bar per connection with widths proportional to the byte shares, a
protocol badge per host, the recording switch; that markup is shown as text, never parsed; and the
options page's defaults. Screenshots go to $PROTOLENS_E2E_ARTIFACTS (default /tmp/protolens-e2e).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.devkit.cdp import EXTENSION, Cdp, Page, devtools_browser
from scripts.devkit.everyday import extension_spec
from scripts.devkit.harness import ROOT

pytestmark = pytest.mark.e2e

ARTIFACTS = Path(os.environ.get("PROTOLENS_E2E_ARTIFACTS", "/tmp/protolens-e2e"))
EVIL_HOST = "<img src=x onerror=document.title='pwned'>.test"
EVIL_URL = f"https://{EVIL_HOST}/<script>document.title='pwned'</script>"
TAB = 4242
"""A tab id nothing else uses: the popup is told which tab to show by ``?tab=``."""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cdp]:
    tmp = tmp_path_factory.mktemp("ui")
    spec = extension_spec(tmp)  # no host registered: the popup must still render
    with devtools_browser(spec, tmp) as (cdp, _):
        yield cdp


def evil_record() -> dict[str, Any]:
    """The h1 fixture's real record, with page URL and host b.test turned into markup."""
    golden = json.loads((ROOT / "tests/fixtures/cdp/h1.expected.json").read_text())
    rec: dict[str, Any] = golden[0]
    rec["page"]["url"] = EVIL_URL
    for item in (*rec["hosts"], *rec["connections"]):
        if item["host"] == "b.test":
            item["host"] = EVIL_HOST
    return rec


def test_popup_shows_plt_bars_badges_and_switch_and_keeps_markup_as_text(browser: Cdp) -> None:
    rec = evil_record()
    seeder = Page(browser, f"{EXTENSION}/options.html", 800, 600)
    seeder.wait("document.readyState === 'complete'")
    seeder.js(f"chrome.storage.session.set({{'last:{TAB}': {json.dumps(rec)}}}).then(() => true)")
    assert seeder.wait(f"chrome.storage.session.get('last:{TAB}').then((g) => 'last:{TAB}' in g)",
                       timeout_s=5)

    popup = Page(browser, f"{EXTENSION}/popup.html?tab={TAB}", 400, 900)
    # the popup renders in steps (record, then the outbox line): wait for the last one and for
    # the stylesheet (bar widths), or a loaded machine reads a half-drawn popup
    popup.wait("document.readyState === 'complete' &&"
               " document.querySelectorAll('.bar-row').length > 0 &&"
               " document.getElementById('outbox').textContent !== ''")
    shot = popup.screenshot("popup.png")

    plt = popup.js("document.querySelector('.plt').textContent")
    assert plt.startswith(f"PLT {round(rec['milestones']['load_ms'])} ms"), plt
    assert "main document H1" in plt

    # one bar per connection; widths proportional to the shares (largest first)
    shares = sorted((c["share"] for c in rec["connections"]), reverse=True)
    widths = popup.js("[...document.querySelectorAll('.bar-row .bar')]"
                      ".map((b) => b.getBoundingClientRect().width)")
    full = popup.js("document.querySelector('.bar-row .track').getBoundingClientRect().width")
    assert len(widths) == len(rec["connections"]) >= 3
    for share, width in zip(shares, widths, strict=True):
        assert abs(width - max(1.0, share * full)) <= 1.0, (share, width, full)  # min-width 1px
    labels = popup.js("[...document.querySelectorAll('.bar-label')].map((l) => l.textContent)")
    assert all(f"{s * 100:.1f}%" in label for s, label in zip(shares, labels, strict=True))

    # a protocol badge per host, coloured by family
    badges = popup.js("[...document.querySelectorAll('.hosts li')].map((li) =>"
                      " [li.querySelector('.badge').textContent, li.textContent,"
                      "  getComputedStyle(li.querySelector('.badge')).backgroundColor])")
    assert [b[0] for b in badges] == ["H1", "H1"]
    assert any(EVIL_HOST in b[1] for b in badges) and any("a.test" in b[1] for b in badges)
    assert all(b[2] == "rgb(180, 83, 9)" for b in badges), badges  # .badge.h1

    # the recording switch: present, off (not opted in, not a lab profile), usable
    assert popup.js("[document.getElementById('recording').checked,"
                    " document.getElementById('recording').disabled]") == [False, False]
    assert "not connected" in popup.js("document.getElementById('outbox').textContent")

    # markup from the page is text: no element was created from it, no handler ran
    assert popup.js("document.querySelector('.url').textContent") == EVIL_URL
    assert popup.js("document.querySelectorAll('img, script:not([src])').length") == 0
    assert popup.js("document.title") == "ProtoLens"
    assert shot.stat().st_size > 5000


def test_popup_without_a_record_says_so(browser: Cdp) -> None:
    popup = Page(browser, f"{EXTENSION}/popup.html?tab={TAB + 1}", 400, 300)
    text = popup.wait("document.getElementById('outbox').textContent &&"
                      " document.getElementById('last').textContent")
    assert text == "No navigation recorded in this tab yet."
    popup.screenshot("popup-empty.png")


def test_options_default_to_off_with_scope_and_url_detail(browser: Cdp) -> None:
    page = Page(browser, f"{EXTENSION}/options.html", 800, 900)
    page.wait("document.getElementById('outbox').textContent")
    page.screenshot("options.png")
    assert page.js("document.getElementById('enabled').checked") is False
    scopes = page.js("[...document.querySelectorAll('#scope option')].map((o) => o.value)")
    assert scopes == ["all", "allowlist", "denylist"]
    details = page.js("[...document.querySelectorAll('#detail option')].map((o) => o.value)")
    assert details == ["origin", "path", "full"]
    assert page.js("document.getElementById('detail').value") == "origin"
    assert page.js("document.getElementById('visual').checked") is False  # paint capture: opt-in
    assert page.js("document.getElementById('save-log').checked") is False  # the log tap: opt-in

    # saving turns recording on for the popup's switch too
    page.js("document.getElementById('enabled').checked = true;"
            " document.getElementById('visual').checked = true;"
            " document.getElementById('save-log').checked = true;"
            " document.getElementById('scope').value = 'allowlist';"
            " document.getElementById('allowlist').value = 'a.test';"
            " document.getElementById('save').click(); true")
    assert page.wait("document.getElementById('status').textContent") == "Saved."
    popup = Page(browser, f"{EXTENSION}/popup.html?tab={TAB + 2}", 400, 300)
    assert popup.wait("document.getElementById('outbox').textContent &&"
                      " document.getElementById('recording').checked")
    reloaded = Page(browser, f"{EXTENSION}/options.html", 800, 900)
    reloaded.wait("document.getElementById('outbox').textContent")
    assert reloaded.js("[document.getElementById('scope').value,"
                       " document.getElementById('allowlist').value,"
                       " document.getElementById('visual').checked,"
                       " document.getElementById('save-log').checked]") == [
        "allowlist", "a.test", True, True]


def test_options_hold_a_tab_30_s_by_default_and_refuse_a_bad_hold(browser: Cdp) -> None:
    """The hold after a record (docs/RECORD.md "Late attach"): 30 s shown by default; a value
    that is not a whole number of seconds from 0 to 3600 gets a one-line message and changes
    nothing stored; a good one is kept."""
    page = Page(browser, f"{EXTENSION}/options.html", 800, 900)
    page.wait("document.getElementById('outbox').textContent")
    assert page.js("document.getElementById('hold').value") == "30"
    stored = "chrome.storage.local.get('settings').then((g) => JSON.stringify(g.settings ?? null))"
    before = page.js(stored)
    for bad in ("abc", "-5", "2.5", "3601"):
        page.js("document.getElementById('status').textContent = '';"
                f" document.getElementById('hold').value = {bad!r};"
                " document.getElementById('save').click(); true")
        assert page.wait("document.getElementById('status').textContent") == (
            "Not saved: keep reading a tab for 0 to 3600 whole seconds."), bad
        assert page.js(stored) == before, bad
    # the status cleared first, as for each bad value: the save is asynchronous, and the last
    # refusal's text still there was read as the answer (CI run 64)
    page.js("document.getElementById('status').textContent = '';"
            " document.getElementById('hold').value = '45';"
            " document.getElementById('save').click(); true")
    assert page.wait("document.getElementById('status').textContent") == "Saved."
    reloaded = Page(browser, f"{EXTENSION}/options.html", 800, 900)
    reloaded.wait("document.getElementById('outbox').textContent")
    assert reloaded.js("document.getElementById('hold').value") == "45"
