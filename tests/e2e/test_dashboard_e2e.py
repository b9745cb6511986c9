"""The dashboard page in real headless Chromium with the built extension and the real host.

A store is seeded with records from ``navrecord_builder.make_record`` (three protocol families,
six origins, four days, one origin carrying markup); the host is registered for the profile with
``PROTOLENS_DB`` pointing at it; the page is opened at its chrome-extension:// URL and driven
over the DevTools protocol (a minimal stdlib WebSocket client below: nothing is mocked). The
charts are checked on a screenshot: each canvas region must hold the chart's coloured marks.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from protolens.browser.launch import stop
from protolens.record import parse_record
from protolens.store import SqliteSink, open_rw
from scripts.devkit.cdp import Cdp, evaluate, launch_devtools
from scripts.devkit.everyday import extension_spec, wait_first_run_page
from scripts.devkit.navrecord_builder import make_record

pytestmark = pytest.mark.e2e

EXTENSION_ID = "ncpedlfcmhdmaokpoalfngkhdlamknob"
DASHBOARD = f"chrome-extension://{EXTENSION_ID}/dashboard.html"
EVIL = "https://<img src=x onerror=alert(1)>.test"
ORIGINS = ["https://a.test", "https://news.test", "https://video.test", "https://shop.test",
           "https://mail.test", EVIL]
DAY_MS = 86_400_000
CANVASES = ("chart-protocols", "chart-plt", "chart-domains")
ARTIFACTS = Path(os.environ.get("PROTOLENS_E2E_ARTIFACTS", "/tmp/protolens-e2e"))


# --- store and browser ------------------------------------------------------------------

def seed_store(db: Path) -> int:
    """Ingest varied records; return how many. Families rotate per origin, days 0-3."""
    conn = open_rw(db, now_ms=1.0)
    sink = SqliteSink(conn)
    n = 0
    families = ["h1", "h2", "h3"]
    for o, origin in enumerate(ORIGINS):
        for day in range(4):
            for k in range(2):
                family = families[(o + day + k) % 3]
                rec = make_record(3 + o, seed=100 * o + 10 * day + k, family=family)
                rec["page"]["origin"] = origin
                rec["page"]["url"] = origin + "/page/"
                rec["page"]["started_at_ms"] = 1763812345678.5 + day * DAY_MS + 1000 * (10 * o + k)
                plt = 400.0 + 150 * families.index(family) + 40 * o + 25 * day
                rec["milestones"]["load_ms"] = plt
                if o == 1 and day == 2 and k == 0:
                    rec["page"]["error"] = "net::ERR_CONNECTION_RESET"
                assert sink.ingest(parse_record(rec), {}, now_ms=2.0)
                n += 1
    conn.close()
    return n


class Browser:
    def __init__(self, proc: subprocess.Popen[bytes], cdp: Cdp, session: str, log: Path) -> None:
        self.proc, self.cdp, self.session, self.log = proc, cdp, session, log

    def js(self, expr: str) -> Any:
        return evaluate(self.cdp, self.session, expr)

    def wait_state(self, timeout_s: float = 45.0) -> str:
        deadline = time.monotonic() + timeout_s
        state = None
        while time.monotonic() < deadline:
            state = self.js("document.body ? document.body.dataset.state : null")
            if state in ("ready", "empty", "error"):
                return str(state)
            time.sleep(0.2)
        raise AssertionError(f"dashboard still {state!r} after {timeout_s} s; log {self.log}")

    def screenshot(self, path: Path) -> Image.Image:
        # a hidden page makes no frame, so the capture would never return
        self.cdp.send("Page.bringToFront", {}, self.session)
        r = self.cdp.send("Page.captureScreenshot", {"format": "png"}, self.session)
        data = base64.b64decode(r["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return Image.open(io.BytesIO(data)).convert("RGB")


def open_dashboard(tmp: Path, db: Path | None, query: str = "") -> Browser:
    spec = extension_spec(tmp, db=db, extra=["--window-size=1280,1700"])
    proc, cdp, log = launch_devtools(spec, tmp)
    wait_first_run_page(cdp)
    target = cdp.send("Target.createTarget", {"url": DASHBOARD + query})["targetId"]
    session = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    cdp.send("Emulation.setDeviceMetricsOverride",
             {"width": 1280, "height": 1700, "deviceScaleFactor": 1, "mobile": False}, session)
    return Browser(proc, cdp, session, log)


def close(b: Browser) -> None:
    b.cdp.close()
    stop(b.proc)


def coloured_pixels(img: Image.Image, box: tuple[int, int, int, int]) -> int:
    """Saturated pixels in ``box``: bars, lines and points (axes, grid and text are grey)."""
    px = img.crop(box).tobytes()
    return sum(1 for i in range(0, len(px), 3) if max(px[i:i + 3]) - min(px[i:i + 3]) > 60)


def canvas_boxes(b: Browser) -> dict[str, tuple[int, int, int, int]]:
    rects = b.js("Object.fromEntries([...document.querySelectorAll('canvas')].map(c => {"
                 " const r = c.getBoundingClientRect();"
                 " return [c.id, [r.left, r.top, r.right, r.bottom]]; }))")
    return {k: (int(v[0]), int(v[1]), int(v[2]), int(v[3])) for k, v in rects.items()}


# --- tests ---------------------------------------------------------------------------------

def test_dashboard_draws_three_charts_from_the_store_and_escapes_page_strings(
        tmp_path: Path) -> None:
    db = tmp_path / "seeded.db"
    stored = seed_store(db)
    # ?limit=2: two rows per reply, so every query spans several pages (next_cursor followed)
    b = open_dashboard(tmp_path, db, "?limit=2")
    try:
        assert b.wait_state() == "ready", b.js("document.getElementById('status').textContent")
        status = b.js("document.getElementById('status').textContent")
        assert f"{stored} navigations" in status
        assert f"{len(ORIGINS)} domains" in status
        assert int(b.js("document.body.dataset.pages")) >= 3 + len(ORIGINS) // 2

        # every origin is in the table, as text; the markup never became an element
        cells = b.js("[...document.querySelectorAll('#domains-body td.origin')]"
                     ".map(td => td.textContent)")
        assert sorted(cells) == sorted(ORIGINS)
        assert b.js("document.querySelectorAll('img').length") == 0
        assert EVIL in b.js("document.body.innerText")
        options = b.js("[...document.querySelectorAll('#origin option')].map(o => o.textContent)")
        assert EVIL in options

        boxes = canvas_boxes(b)
        assert set(CANVASES) <= set(boxes)
        img = b.screenshot(ARTIFACTS / "dashboard.png")
        for name in CANVASES:
            left, top, right, bottom = boxes[name]
            assert right - left > 200 and bottom - top > 150, (name, boxes[name])
            # the upper three quarters: the plot area, above the legend at the bottom
            marks = coloured_pixels(img, (left, top, right, top + (bottom - top) * 3 // 4))
            assert marks > 400, f"{name}: only {marks} coloured pixels; see {ARTIFACTS}"

        # one origin picked: the PLT chart redraws from that origin's rows only
        b.js(f"(() => {{ const s = document.getElementById('origin'); s.value = {json.dumps(EVIL)};"
             " s.dispatchEvent(new Event('change')); })()")
        left, top, right, bottom = boxes["chart-plt"]
        one = b.screenshot(ARTIFACTS / "dashboard-one-origin.png")
        assert coloured_pixels(one, (left, top, right, top + (bottom - top) * 3 // 4)) > 100
        assert b.js("document.querySelectorAll('img').length") == 0
    finally:
        close(b)


def test_dashboard_says_so_when_the_store_is_empty(tmp_path: Path) -> None:
    b = open_dashboard(tmp_path, tmp_path / "none-yet.db")
    try:
        assert b.wait_state() == "empty"
        assert b.js("document.getElementById('empty').hidden") is False
        assert "Nothing recorded yet" in b.js("document.body.innerText")
        assert b.js("document.getElementById('charts').hidden") is True
        b.screenshot(ARTIFACTS / "dashboard-empty.png")
    finally:
        close(b)
    assert not (tmp_path / "none-yet.db").exists(), "a read-only query created the store"


def test_popup_link_opens_the_dashboard_in_a_tab(tmp_path: Path) -> None:
    b = open_dashboard(tmp_path, tmp_path / "none-yet.db")
    try:
        b.wait_state()
        popup = b.cdp.send("Target.createTarget",
                           {"url": f"chrome-extension://{EXTENSION_ID}/popup.html"})
        session = b.cdp.send("Target.attachToTarget",
                             {"targetId": popup["targetId"], "flatten": True})["sessionId"]
        b.cdp.send("Target.activateTarget", {"targetId": popup["targetId"]})
        # click only once the popup has loaded (its stylesheet moves the link) and the link has
        # stayed put for two reads: a rect read earlier made the click miss on a loaded machine
        rect = last = None
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            now = evaluate(b.cdp, session,
                           "(() => { const a = document.getElementById('dashboard');"
                           " if (!a || document.readyState !== 'complete') return null;"
                           " const r = a.getBoundingClientRect();"
                           " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
            if now is not None and now == last:
                rect = now
                break
            last = now
            time.sleep(0.1)
        assert rect is not None, "popup has no Dashboard link"
        # and it has drawn a frame: input sent before the first frame can be dropped
        b.cdp.send("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame("
                                        "() => requestAnimationFrame(() => r(true))))",
                                        "awaitPromise": True}, session)
        before = dashboards(b)
        for kind in ("mousePressed", "mouseReleased"):  # a real click: user activation
            b.cdp.send("Input.dispatchMouseEvent", {"type": kind, "x": rect[0], "y": rect[1],
                                                    "button": "left", "clickCount": 1}, session)
        deadline = time.monotonic() + 20
        while dashboards(b) <= before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert dashboards(b) == before + 1
        # a new tab: the popup itself stays where it was
        infos = b.cdp.send("Target.getTargets")["targetInfos"]
        assert [t["url"] for t in infos if t["targetId"] == popup["targetId"]] == [
            f"chrome-extension://{EXTENSION_ID}/popup.html"]
    finally:
        close(b)


def dashboards(b: Browser) -> int:
    targets = b.cdp.send("Target.getTargets")["targetInfos"]
    return sum(1 for t in targets if t["type"] == "page" and t["url"].startswith(DASHBOARD))


def test_dashboard_reports_a_missing_host(tmp_path: Path) -> None:
    b = open_dashboard(tmp_path, None)  # no host registered for this profile
    try:
        assert b.wait_state() == "error"
        assert "protolens install" in b.js("document.getElementById('status').textContent")
    finally:
        close(b)
