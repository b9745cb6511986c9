#!/usr/bin/env python3
"""Open a page in a running Chromium the way ``lab run``'s extension does (src/adapters/
lab-runner.ts: a new ``about:blank`` tab, then sent to the URL): through the browser's DevTools
endpoint (``--remote-debugging-port=0``), a new ``about:blank`` target, then ``Page.navigate``
at the given time, then detached at once (no domain is enabled: nothing watches the load). Run
it in the browser's network namespace (``ip netns exec``): the endpoint listens on that
namespace's loopback.

Usage: page_open.py USER_DATA_DIR URL AT_EPOCH_MS [TIMEOUT_S]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.devkit.cdp import endpoint  # noqa: E402


def main() -> None:
    udd, url, at_ms = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    cdp = endpoint(udd, float(sys.argv[4]) if len(sys.argv) > 4 else 30.0)
    try:
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.send("Target.attachToTarget", {"targetId": target,
                                                     "flatten": True})["sessionId"]
        time.sleep(max(0.0, at_ms / 1000 - time.time()))
        cdp.send("Page.navigate", {"url": url}, session)
        cdp.send("Target.detachFromTarget", {"sessionId": session})
    finally:
        cdp.close()


if __name__ == "__main__":
    main()
