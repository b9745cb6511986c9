#!/usr/bin/env python3
"""Print a page's own ``loadEventEnd`` (ms, from its navigation timing) as JSON, read through the
DevTools endpoint of a running Chromium (``--remote-debugging-port=0``). Run it in the browser's
network namespace (``ip netns exec``): the endpoint listens on that namespace's loopback.

Attaches to the page only when called, and reads again every 0.2 s until the load event has
ended (``early`` in the output: how many reads came before it).

Usage: page_led.py USER_DATA_DIR URL_PREFIX [TIMEOUT_S]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.cdp import Cdp, evaluate  # noqa: E402

LED = ("(() => { const n = performance.getEntriesByType('navigation')[0]; "
       "return n ? n.loadEventEnd : 0; })()")


def main() -> None:
    udd, prefix = Path(sys.argv[1]), sys.argv[2]
    deadline = time.monotonic() + (float(sys.argv[3]) if len(sys.argv) > 3 else 60.0)
    port, path = (udd / "DevToolsActivePort").read_text().split()[:2]
    cdp = Cdp(int(port), path)
    session, early = None, 0
    try:
        while time.monotonic() < deadline:
            if session is None:
                pages = [t for t in cdp.send("Target.getTargets")["targetInfos"]
                         if t["type"] == "page" and t["url"].startswith(prefix)]
                if pages:
                    session = cdp.send("Target.attachToTarget", {
                        "targetId": pages[0]["targetId"], "flatten": True})["sessionId"]
            if session is not None:
                led = evaluate(cdp, session, LED)
                if led:
                    print(json.dumps({"led": float(led), "early": early}))
                    return
                early += 1
            time.sleep(0.2)
    finally:
        cdp.close()
    raise SystemExit(f"error: no loadEventEnd from a page at {prefix} in time")


if __name__ == "__main__":
    main()
