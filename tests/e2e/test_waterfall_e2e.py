"""The extension's waterfall page in real headless Chromium with the built extension.

As in test_ui_e2e.py, the test writes a known record where the service worker keeps a tab's last
record (chrome.storage.session ``last:<tabId>``) and opens ``waterfall.html?tab=ID``. Records: the
h1 fixture's golden record (recorded from real Chromium; several HTTP/1.1 connections, two hosts)
and a proxied lab load with a coalesced HTTP/3 connection, a cache hit and two upstream
connections (tests/record/coalesced_record.py). The page must draw one row per row of the host's
waterfall (plots/waterfall_series.py), with the same labels, one bar per request (plus one span per
upstream connection), the four milestones; the popup links to it. Screenshots go to
$PROTOLENS_E2E_ARTIFACTS (default /tmp/protolens-e2e).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image

from protolens.plots.waterfall_series import waterfall_series
from protolens.record import parse_record
from scripts.devkit.cdp import EXTENSION, Cdp, Page, devtools_browser
from scripts.devkit.everyday import extension_spec
from scripts.devkit.harness import ROOT
from tests.record.coalesced_record import coalesced_record

pytestmark = pytest.mark.e2e
TAB = 5151


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cdp]:
    tmp = tmp_path_factory.mktemp("waterfall")
    spec = extension_spec(tmp)
    with devtools_browser(spec, tmp) as (cdp, _):
        yield cdp


def _seed(browser: Cdp, tab: int, rec: dict[str, Any]) -> None:
    seeder = Page(browser, f"{EXTENSION}/options.html", 800, 600)
    seeder.wait("location.protocol === 'chrome-extension:' && document.readyState === 'complete'"
                " && globalThis.chrome?.storage?.session !== undefined")
    seeder.js(f"chrome.storage.session.set({{'last:{tab}': {json.dumps(rec)}}}).then(() => true)")
    assert seeder.wait(f"chrome.storage.session.get('last:{tab}').then((g) => 'last:{tab}' in g)",
                       timeout_s=5)


def _h1_record() -> dict[str, Any]:
    golden = json.loads((ROOT / "tests/fixtures/cdp/h1.expected.json").read_text())
    rec: dict[str, Any] = golden[0]
    return rec


@pytest.mark.parametrize("which", ["h1", "coalesced-proxied"])
def test_waterfall_page_draws_one_row_per_connection(browser: Cdp, which: str) -> None:
    rec = _h1_record() if which == "h1" else coalesced_record(upstream=True)
    tab = TAB + (0 if which == "h1" else 1)
    _seed(browser, tab, rec)
    expected = waterfall_series(parse_record(rec))
    page = Page(browser, f"{EXTENSION}/waterfall.html?tab={tab}", 1200, 200 + 26 * len(
        expected.rows))
    page.wait("document.body.dataset.ready === '1'")
    shot = page.screenshot(f"waterfall-{which}.png")

    labels = page.js("[...document.querySelectorAll('.wf-row .wf-label')]"
                     ".map((l) => l.textContent)")
    assert labels == [row.label for row in expected.rows]
    assert page.js("document.querySelectorAll('.wf-row').length") == len(expected.rows)
    if which == "h1":  # one row per connection of the real record (no cache hits in it)
        used = {r["connection_id"] for r in rec["requests"]}
        assert None not in used and len(expected.rows) == len(used) >= 3
    else:
        assert len(expected.rows) == 5 and "a.test, b.test (coalesced)" in labels[0]
        assert [r.startswith("upstream ") for r in labels] == [False] * 3 + [True] * 2
    bars = page.js("document.querySelectorAll('.wf-bar').length")
    upstream = sum(1 for c in rec["connections"] if c["upstream"])
    assert bars == len(rec["requests"]) + upstream
    ticks = page.js("document.querySelectorAll('.wf-first-byte').length")
    assert ticks == sum(1 for r in rec["requests"] if r["first_byte_ms"] is not None)
    names = page.js("[...document.querySelectorAll('.wf-milestone span')]"
                    ".map((s) => s.textContent.split(' ')[0])")
    assert names == [n for n, _ in expected.milestones] and "load" in names

    # the screenshot shows the rows: one horizontal band of bar colour per row
    rows_y = page.js("[...document.querySelectorAll('.wf-row .wf-bar')]"
                     ".map((b) => Math.round(b.getBoundingClientRect().top))")
    assert len(set(rows_y)) == len(expected.rows)
    with Image.open(shot) as img:
        rgb = img.convert("RGB")
        x_left = 16 + 340 + 2  # body margin + label column (waterfall.css): the track only
        coloured = {y for y in set(rows_y) for x in range(x_left, img.size[0] - 20, 3)
                    if _is_bar(rgb.getpixel((x, y + 6)))}
        assert len(coloured) == len(expected.rows), (sorted(set(rows_y)), sorted(coloured))


def _is_bar(px: Any) -> bool:
    r, g, b = px[:3]
    return max(r, g, b) - min(r, g, b) > 40 or max(r, g, b) < 200  # saturated or grey, not white


def test_popup_links_to_the_tab_waterfall(browser: Cdp) -> None:
    _seed(browser, TAB + 2, _h1_record())
    popup = Page(browser, f"{EXTENSION}/popup.html?tab={TAB + 2}", 400, 600)
    popup.wait("document.querySelectorAll('.bar-row').length > 0")
    link = popup.js("[document.getElementById('waterfall').hidden,"
                    " document.getElementById('waterfall').href]")
    assert link == [False, f"{EXTENSION}/waterfall.html?tab={TAB + 2}"]
    empty = Page(browser, f"{EXTENSION}/popup.html?tab={TAB + 3}", 400, 300)
    empty.wait("document.getElementById('last').textContent")
    assert empty.js("document.getElementById('waterfall').hidden") is True


def test_waterfall_page_without_a_record_says_so(browser: Cdp) -> None:
    page = Page(browser, f"{EXTENSION}/waterfall.html?tab={TAB + 4}", 800, 300)
    text = page.wait("document.getElementById('waterfall').textContent")
    assert text == "No navigation recorded in this tab yet."
    assert page.js("document.querySelectorAll('.wf-row').length") == 0


def test_waterfall_page_keeps_page_markup_as_text(browser: Cdp) -> None:
    rec = coalesced_record()
    evil = "<img src=x onerror=document.title='pwned'>.test"
    for r in rec["requests"]:
        if r["host"] == "b.test":
            r["host"] = evil
    rec["page"]["url"] = "https://a.test/<script>document.title='pwned'</script>"
    _seed(browser, TAB + 5, rec)
    page = Page(browser, f"{EXTENSION}/waterfall.html?tab={TAB + 5}", 1200, 400)
    page.wait("document.body.dataset.ready === '1'")
    first = page.js("document.querySelector('.wf-row .wf-label').textContent")
    assert first == f"a.test, {evil} (coalesced) · h3 · 4 req · 60.0%"
    assert page.js("document.querySelectorAll('img, script:not([src])').length") == 0
    assert page.js("document.title") == "ProtoLens waterfall"
    assert "<script>" in page.js("document.querySelector('.wf-title').textContent")
