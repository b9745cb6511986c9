#!/usr/bin/env python3
"""What a page is doing, read through the DevTools endpoint of a running Chromium
(``--remote-debugging-port=0``), as JSON: every target (type, url, attached), and the page's
readyState, loadEventEnd, images done / all and its Resource Timing count. Reads again every
0.2 s until the load event has ended or WAIT_S has passed. Run it in the browser's network
namespace (``ip netns exec``): the endpoint listens on that namespace's loopback. Used by
stalls.py once a load is over or has stalled, never while it runs.

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
           resources: performance.getEntriesByType('resource').length };
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
            if out["state"]["led"] or time.monotonic() >= deadline:
                return
            time.sleep(0.2)
    except (OSError, RuntimeError) as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        cdp.close()
        print(json.dumps(out))


if __name__ == "__main__":
    main()
