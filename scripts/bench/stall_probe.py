#!/usr/bin/env python3
"""What a page is doing, read through the DevTools endpoint of a running Chromium
(``--remote-debugging-port=0``), as JSON: every target (type, url, attached), and the page's
readyState, loadEventEnd, images done / all, its Resource Timing count and the network quality
Chromium estimates. Reads again every 0.2 s until the load event has ended or WAIT_S has passed;
then, with no load event, tries one new image and one fetch to the host of an image not loaded.
Run it in the browser's network namespace (``ip netns exec``): the endpoint listens on that
namespace's loopback. Used by stalls.py once a load is over or has stalled, never while it runs.

Usage: stall_probe.py USER_DATA_DIR URL_PREFIX WAIT_S
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.cdp import Cdp, evaluate  # noqa: E402

STATE = """(() => {
  const n = performance.getEntriesByType('navigation')[0];
  const imgs = [...document.images];
  const left = imgs.filter((i) => !i.complete).map((i) => i.src.split('/').pop());
  return { ready: document.readyState, led: n ? n.loadEventEnd : 0,
           visibility: document.visibilityState, images: imgs.length, images_left: left.length,
           left: left.slice(0, 5),
           resources: performance.getEntriesByType('resource').length,
           ect: navigator.connection ? navigator.connection.effectiveType : null,
           rtt: navigator.connection ? navigator.connection.rtt : null };
})()"""
# After a stall: does a new request to the host of the first image left go out? An image (low
# priority, as the page's own) and a fetch (high priority), each with a fresh URL.
RETRY = """(async () => {
  const left = [...document.images].find((i) => !i.complete);
  // no image left (a script, style or font is): the page's own URL, on its host's connection
  const url = (left ? left.src : location.href) + '?probe=' + Date.now();
  const img = new Image(); img.src = url + '-img';
  const t0 = performance.now();
  const f = await Promise.race([fetch(url + '-fetch', { cache: 'no-store' }).then((r) => r.status),
                                new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
  const fetch_ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, Math.max(0, 5000 - fetch_ms)));
  return { url: left ? left.src : location.href, fetch: f, fetch_ms: Math.round(fetch_ms),
           image_done: img.complete,
           left_now: [...document.images].filter((i) => !i.complete).length };
})()"""


def main() -> None:
    udd, prefix, wait_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    port, path = (udd / "DevToolsActivePort").read_text().split()[:2]
    cdp = Cdp(int(port), path)
    cdp.sock.settimeout(5)  # a renderer paused in a debugger never answers Runtime.evaluate
    out: dict[str, Any] = {}
    try:
        infos = cdp.send("Target.getTargets")["targetInfos"]
        out["targets"] = [{"type": t["type"], "url": t["url"][:80], "attached": t["attached"]}
                          for t in infos]
        pages = [t for t in infos if t["type"] == "page" and t["url"].startswith(prefix)]
        if not pages:
            out["state"] = {"error": "no page at the URL"}
            return
        session = cdp.send("Target.attachToTarget", {"targetId": pages[0]["targetId"],
                                                     "flatten": True})["sessionId"]
        deadline = time.monotonic() + wait_s
        while True:
            out["state"] = evaluate(cdp, session, STATE)
            if out["state"]["led"]:
                return
            if time.monotonic() >= deadline:
                cdp.sock.settimeout(15)
                r = cdp.send("Runtime.evaluate", {"expression": RETRY, "awaitPromise": True,
                                                  "returnByValue": True}, session)
                out["retry"] = r["result"].get("value")
                return
            time.sleep(0.2)
    except (OSError, RuntimeError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        cdp.close()
        print(json.dumps(out))


if __name__ == "__main__":
    main()
