#!/usr/bin/env python3
"""How long Chromium shows "ProtoLens started debugging this browser" per recorded load.
Chromium shows that bar in every window while an extension's chrome.debugger session is
attached; headless Chromium draws no browser UI, so this runs headed Chromium under Xvfb
(`apt-get install xvfb x11-apps netpbm`).

The everyday profile of the e2e tests (real host, SQLite store, recording switched on in the
options page). The bar's presence is read from the options page, the active tab of the first
window: the bar takes its height from the page's viewport, so `window.innerHeight` drops while it
is shown. Each load opens the test site in a second, unfocused window (so the measured tab stays
active), waits for the bar to go, and closes it. Per load it prints when the bar appeared, when
the record was in the store and when the bar went, from the window's creation; then the median
and range of the time shown. Screenshots of the screen with and without the bar (xwd) go to
$PROTOLENS_E2E_ARTIFACTS (default /tmp/protolens-e2e).

    flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/infobar.py [--loads 5] [--hold S]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.cdp import EXTENSION, Cdp, Page, devtools_browser, wait_for  # noqa: E402
from scripts.devkit.everyday import extension_spec, switch_recording_on  # noqa: E402
from scripts.devkit.site import serve_site  # noqa: E402

ARTIFACTS = Path(os.environ.get("PROTOLENS_E2E_ARTIFACTS", "/tmp/protolens-e2e"))
POLL_S = 0.05


def start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    for n in range(91, 140):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x900x24", "-nolisten",
                                     "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            sock = Path(f"/tmp/.X11-unix/X{n}")
            wait_for("Xvfb", sock.exists, 10)
            return proc, f":{n}"
    raise SystemExit("error: no free X display number from :91 to :139")


def shot(display: str, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    xwd = ARTIFACTS / f"{name}.xwd"
    subprocess.run(["xwd", "-root", "-silent", "-display", display, "-out", str(xwd)], check=True)
    png = xwd.with_suffix(".png")
    with png.open("wb") as out:  # netpbm: xwd -> pnm -> png
        pnm = subprocess.run(["xwdtopnm", str(xwd)], capture_output=True, check=True).stdout
        subprocess.run(["pnmtopng"], input=pnm, stdout=out, stderr=subprocess.DEVNULL, check=True)
    xwd.unlink()
    return png


def stored(db: Path, url: str) -> bool:
    if not db.exists():
        return False
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            return conn.execute("SELECT 1 FROM navigations WHERE url = ?", (url,)).fetchone() \
                is not None
        except sqlite3.OperationalError:
            return False


def page_session(cdp: Cdp, url: str) -> str:
    """A CDP session on the page target showing ``url`` (the DevTools endpoint's own session
    does not raise the extension's infobar)."""
    def find() -> str | None:
        for t in cdp.send("Target.getTargets")["targetInfos"]:
            if t["type"] == "page" and t["url"] == url:
                return str(t["targetId"])
        return None
    target = wait_for(f"the window showing {url}", find, 20)
    return str(cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})
               ["sessionId"])


def inner_height(cdp: Cdp, session: str) -> int | None:
    try:
        r = cdp.send("Runtime.evaluate", {"expression": "window.innerHeight",
                                          "returnByValue": True}, session)
    except RuntimeError:  # between documents
        return None
    v = r.get("result", {}).get("value")
    return v if isinstance(v, int) else None


def open_window(options: Page, url: str, size: str) -> int:
    return int(options.js(f"chrome.windows.create({{url: {url!r}, {size}}}).then((w) => w.id)"))


def viewport(cdp: Cdp, options: Page, url: str, size: str) -> int:
    """The viewport height of a new window of ``size`` showing ``url``, which is out of the
    recording's scope (about:blank): nothing attached, no bar."""
    win = open_window(options, url, size)
    session = page_session(cdp, url)
    h = wait_for("a viewport height", lambda: inner_height(cdp, session), 10)
    options.js(f"chrome.windows.remove({win}).then(() => true)")
    return int(h)


def watch(cdp: Cdp, options: Page, url: str, size: str, base: int, db: Path, display: str,
          shots: bool) -> tuple[float | None, float | None, float | None, set[int]]:
    """Opens ``url`` in a new unfocused window and polls that window's viewport: the bar takes
    its height while shown. Returns when the bar appeared, the record was stored and the bar went
    (seconds from the window's creation), and the heights the bar took."""
    t0 = time.monotonic()
    win = open_window(options, url, size)
    session = page_session(cdp, url)
    on = rec = off = None
    heights: set[int] = set()
    while time.monotonic() - t0 < 60:
        h = inner_height(cdp, session)
        now = time.monotonic() - t0
        if h is not None and h < base:
            heights.add(base - h)
            if on is None:
                on = now
                if shots:
                    print(f"  screenshot with the bar: {shot(display, 'infobar-on')}")
        elif h is not None and on is not None and off is None:
            off = now
        if rec is None and stored(db, url):
            rec = now
        if rec is not None and (off is not None or now - rec > 15):
            break
        time.sleep(POLL_S)
    if shots and off is not None:
        print(f"  screenshot after it went: {shot(display, 'infobar-off')}")
    options.js(f"chrome.windows.remove({win}).then(() => true)")
    return on, rec, off, heights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--hold", type=int, default=0, metavar="S",
                    help="seconds a tab is held after its record (the options page's setting; "
                         "the extension's default is 30, this bench's 0: one load's own bar)")
    args = ap.parse_args()
    xvfb, display = start_xvfb()
    os.environ["DISPLAY"] = display
    try:
        with tempfile.TemporaryDirectory(prefix="protolens-infobar-") as tmp:
            measure(Path(tmp), display, args.loads, args.hold)
    finally:
        xvfb.terminate()
        xvfb.wait()


def measure(work: Path, display: str, loads: int, hold_s: int = 0) -> None:
    db = work / "store.db"
    with serve_site(work / "site") as site:
        spec = extension_spec(work, db=db, site=site, headless=False,
                              extra=["--window-size=1200,800"])
        with devtools_browser(spec, work) as (cdp, _log):
            options = Page(cdp, f"{EXTENSION}/options.html", 1200, 700)
            cdp.send("Emulation.clearDeviceMetricsOverride", {}, options.session)
            switch_recording_on(options, hold_s=hold_s)
            options.js("chrome.tabs.getCurrent().then((t) => chrome.tabs.update(t.id, "
                       "{active: true})).then(() => true)")
            time.sleep(1.0)
            size = "width: 1200, height: 800, focused: false"
            base = viewport(cdp, options, "about:blank", size)
            print(f"a new window's viewport with no debugger attached: {base} px high")
            shown: list[float] = []
            for i in range(loads):
                url = f"{site.origin('a.test')}/page/?bar={i}"
                on, rec, off, heights = watch(cdp, options, url, size, base, db, display, i == 0)
                fmt = lambda t: "never" if t is None else f"{t:5.2f} s"  # noqa: E731
                print(f"load {i}: bar on at {fmt(on)}, record stored at {fmt(rec)}, bar off at "
                      f"{fmt(off)} (bar {sorted(heights)} px high)")
                if on is not None and off is not None:
                    shown.append(off - on)
                time.sleep(1.0)
            if shown:
                print(f"bar shown per recorded load: median {statistics.median(shown):.2f} s, "
                      f"min {min(shown):.2f} s, max {max(shown):.2f} s (n={len(shown)})")


if __name__ == "__main__":
    main()
