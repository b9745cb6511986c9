#!/usr/bin/env python3
"""Which paint capture has the right clock: Page.startScreencast frames or trace screenshots?

Evidence for the visual metrics' capture (docs/ARCHITECTURE.md "Visual
metrics"), on headless Debian Chromium:

1. Over a plain CDP connection, the four-block page (scripts/devkit/visual_site.py) is loaded
   ``--loads`` times with each capture. For every block, the first frame that shows it is set
   against the page's own Element Timing ``renderTime`` for it (the browser's paint time, ms from
   timeOrigin, coarsened to 4 ms): printed is frame time - renderTime per block.
2. Through ``chrome.debugger`` (a throwaway extension written to a temporary folder, the API the
   recorder has), tracing with the screenshot category in a tab, and a second tab's tracing at the
   same time: printed are the trace's Screenshot events and the second start's answer.

    .venv/bin/python scripts/bench/visual_clock.py [--loads 5]
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from scripts.devkit.cdp import Cdp, wait_for  # noqa: E402
from scripts.devkit.visual_site import COLORS, VisualSite, serve_visual_site  # noqa: E402

SCREENCAST = {"format": "jpeg", "quality": 80, "maxWidth": 800, "maxHeight": 800}
"""As the recorder asks (src/cdp/enable-commands.ts SCREENCAST)."""
TRACE = {"categories": "-*,disabled-by-default-devtools.screenshot", "transferMode": "ReportEvents"}


def chromium(work: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], Cdp]:
    argv = ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
            "--no-first-run", "--remote-debugging-port=0", f"--user-data-dir={work}/udd",
            "--host-resolver-rules=MAP *.test 127.0.0.1", "--disable-quic", *extra, "about:blank"]
    env = dict(os.environ, HOME=str(work), XDG_CONFIG_HOME=f"{work}/c", XDG_CACHE_HOME=f"{work}/k")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    active = work / "udd" / "DevToolsActivePort"
    wait_for("DevTools", lambda: active.exists() and len(active.read_text().split()) >= 2)
    port, path = active.read_text().split()[:2]
    return proc, Cdp(int(port), path)


class Session:
    """A page session that keeps every event (the devkit client drops them) and acks frames."""

    def __init__(self, cdp: Cdp) -> None:
        self.cdp, self.events = cdp, []  # type: list[dict[str, Any]]
        target = next(t for t in self.send("Target.getTargets")["targetInfos"]
                      if t["type"] == "page")
        self.sid = self.send("Target.attachToTarget", {"targetId": target["targetId"],
                                                       "flatten": True})["sessionId"]

    def _event(self, m: dict[str, Any]) -> None:
        self.events.append(m)
        if m["method"] == "Page.screencastFrame":
            self.cdp.next_id += 1
            self.cdp._send_text(json.dumps({  # noqa: SLF001 (the devkit client's frame writer)
                "id": self.cdp.next_id, "method": "Page.screencastFrameAck",
                "params": {"sessionId": m["params"]["sessionId"]}, "sessionId": self.sid}))

    def send(self, method: str, params: dict[str, Any] | None = None, page: bool = False) -> Any:
        self.cdp.next_id += 1
        i = self.cdp.next_id
        msg: dict[str, Any] = {"id": i, "method": method, "params": params or {}}
        if page:
            msg["sessionId"] = self.sid
        self.cdp._send_text(json.dumps(msg))  # noqa: SLF001
        while True:
            r = json.loads(self.cdp._recv_text())  # noqa: SLF001
            if r.get("id") == i:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return r["result"]
            if "method" in r:
                self._event(r)

    def pump(self, seconds: float, until: Any = None) -> None:
        self.cdp.sock.settimeout(0.05)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until()):
            try:
                m = json.loads(self.cdp._recv_text())  # noqa: SLF001
            except TimeoutError:
                continue
            if "method" in m:
                self._event(m)
        self.cdp.sock.settimeout(30)


def shows(img: Image.Image, block: int) -> bool:
    w, h = img.size
    px = img.getpixel(((block % 2) * w // 2 + w // 4, (block // 2) * h // 2 + h // 4))
    assert isinstance(px, tuple)
    return all(abs(int(px[c]) - COLORS[block][c]) < 30 for c in range(3))


def one_load(site: VisualSite, work: Path, mode: str) -> list[float]:
    """frame time - renderTime (ms) of each block's first frame, one load with ``mode``."""
    proc, cdp = chromium(work, [f"--ignore-certificate-errors-spki-list={site.spki}"])
    try:
        s = Session(cdp)
        for m in ("Page.enable", "Network.enable", "Performance.enable"):
            s.send(m, {}, page=True)
        s.send("Page.startScreencast" if mode == "screencast" else "Tracing.start",
               SCREENCAST if mode == "screencast" else TRACE, page=True)
        s.pump(0.3)
        offset = site.access_log.stat().st_size
        s.send("Page.navigate", {"url": site.url}, page=True)
        s.pump(15, until=lambda: site.render_times(offset) is not None)
        s.pump(0.3)
        painted = site.render_times(offset) or {}
        nav_start = next(m["value"] for m in s.send("Performance.getMetrics", {}, page=True)
                         ["metrics"] if m["name"] == "NavigationStart")
        frames: list[tuple[float, Image.Image]] = []
        if mode == "screencast":
            doc = next(e["params"] for e in s.events if e["method"] == "Network.requestWillBeSent"
                       and e["params"].get("type") == "Document")
            wall0 = doc["wallTime"] - (doc["timestamp"] - nav_start)  # epoch s of timeOrigin
            frames = [((e["params"]["metadata"]["timestamp"] - wall0) * 1000,
                       Image.open(io.BytesIO(base64.b64decode(e["params"]["data"]))).convert("RGB"))
                      for e in s.events if e["method"] == "Page.screencastFrame"]
        else:
            s.send("Tracing.end", {}, page=True)
            s.pump(10, until=lambda: any(e["method"] == "Tracing.tracingComplete"
                                         for e in s.events))
            shots = [t for e in s.events if e["method"] == "Tracing.dataCollected"
                     for t in e["params"]["value"] if t.get("name") == "Screenshot"]
            frames = [((t["ts"] / 1e6 - nav_start) * 1000, Image.open(io.BytesIO(
                base64.b64decode(t["args"]["snapshot"]))).convert("RGB")) for t in shots]
        frames.sort(key=lambda f: f[0])
        out = []
        for block, rendered in sorted(painted.items()):
            first = next((t for t, img in frames if shows(img, block)), None)
            if first is not None:
                out.append(first - rendered)
        return out
    finally:
        cdp.close()
        os.killpg(proc.pid, 15)


EXTENSION = {
    "manifest.json": json.dumps({"manifest_version": 3, "name": "visual-clock probe",
                                 "version": "1", "permissions": ["debugger", "tabs"],
                                 "background": {"service_worker": "sw.js"}}),
    "sw.js": """
self.probe = async (url) => {
  const shots = [], answers = [];
  chrome.debugger.onEvent.addListener((src, method, params) => {
    if (method !== "Tracing.dataCollected") return;
    shots.push(...params.value.filter((e) => e.name === "Screenshot"));
  });
  const tabs = [];
  for (let i = 0; i < 2; i++) {
    const tab = await chrome.tabs.create({ url: "about:blank", active: i === 0 });
    tabs.push(tab.id);
    await chrome.debugger.attach({ tabId: tab.id }, "1.3");
    await chrome.debugger.sendCommand({ tabId: tab.id }, "Page.enable", {});
    try {
      await chrome.debugger.sendCommand({ tabId: tab.id }, "Tracing.start", {
        categories: "-*,disabled-by-default-devtools.screenshot,devtools.timeline",
        transferMode: "ReportEvents" });
      answers.push("ok");
    } catch (e) { answers.push(String(e.message || e)); }
  }
  await chrome.tabs.update(tabs[0], { url, active: true });
  await new Promise((r) => setTimeout(r, 3000));
  await chrome.debugger.sendCommand({ tabId: tabs[0] }, "Tracing.end", {});
  await new Promise((r) => setTimeout(r, 1500));
  return JSON.stringify({ answers, screenshots: shots.length });
};""",
}


def debugger_probe(site: VisualSite, work: Path) -> dict[str, Any]:
    ext = work / "probe-ext"
    ext.mkdir()
    for name, text in EXTENSION.items():
        (ext / name).write_text(text)
    proc, cdp = chromium(work, [f"--ignore-certificate-errors-spki-list={site.spki}",
                                f"--load-extension={ext}", f"--disable-extensions-except={ext}"])
    try:
        sw = wait_for("the probe's service worker", lambda: [
            t for t in cdp.send("Target.getTargets")["targetInfos"]
            if t["type"] == "service_worker"])
        sid = cdp.send("Target.attachToTarget", {"targetId": sw[0]["targetId"],
                                                 "flatten": True})["sessionId"]
        r = cdp.send("Runtime.evaluate", {"expression": f"probe({json.dumps(site.url)})",
                                          "awaitPromise": True, "returnByValue": True}, sid)
        return dict(json.loads(r["result"]["value"]))
    finally:
        cdp.close()
        os.killpg(proc.pid, 15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=5, help="loads per capture (default 5)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, serve_visual_site(Path(tmp) / "site") as site:
        for mode in ("screencast", "trace"):
            diffs: list[float] = []
            for i in range(args.loads):
                work = Path(tmp) / f"{mode}-{i}"
                work.mkdir()
                diffs += one_load(site, work, mode)
            print(f"{mode:>10} (plain CDP): first frame showing a block - its Element Timing "
                  f"renderTime, ms: median {statistics.median(diffs):+.1f}, range "
                  f"{min(diffs):+.1f} .. {max(diffs):+.1f} (n={len(diffs)} blocks)")
        work = Path(tmp) / "probe"
        work.mkdir()
        got = debugger_probe(site, work)
        print(f"chrome.debugger tracing: Screenshot events {got['screenshots']}; tracing start "
              f"answers {got['answers']}")


if __name__ == "__main__":
    main()
