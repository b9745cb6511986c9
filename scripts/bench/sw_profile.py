#!/usr/bin/env python3
"""Where the extension's service worker spends its CPU while it records: the test site's page
(scripts/devkit/site.py) loaded 1 + K times by the lab extension (as recorder_cpu.py's
``recording`` arm), with V8's sampling profiler on the service worker's target (a second
DevTools client on ``--remote-debugging-port``) from the first record to the last. Prints the
self time per function (top N) and per source file, in ms per load. The profiler's own sampling
costs some CPU; the shares, not the sum, are the point.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/sw_profile.py
       [--loads 8] [--visual] [--top 25]
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.arms import Arm  # noqa: E402
from protolens.browser.flags import LaunchSpec  # noqa: E402
from protolens.browser.launch import run_load  # noqa: E402
from scripts.devkit.cdp import Cdp  # noqa: E402
from scripts.devkit.harness import CHROMIUM, stored_ids  # noqa: E402
from scripts.devkit.site import serve_site  # noqa: E402


def self_times(profile: dict[str, Any]) -> tuple[dict[tuple[str, str], float], float]:
    """Self ms per (function, url) from a Profiler.Profile, and the profile's span in ms."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    out: dict[tuple[str, str], float] = collections.defaultdict(float)
    for sid, dt in zip(profile["samples"], profile["timeDeltas"], strict=True):
        f = nodes[sid]["callFrame"]
        out[(f["functionName"] or "(anonymous)", f["url"].rsplit("/", 1)[-1])] += dt / 1000
    return out, (profile["endTime"] - profile["startTime"]) / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=8)
    ap.add_argument("--visual", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--extension", type=Path, default=ROOT / "dist",
                    help="the built extension (an unminified build names its functions)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with serve_site(work / "site") as site:
            db, load_id, scratch = work / "p.db", str(uuid.uuid4()), work / "run"
            spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="",
                              extension_dir=str(args.extension.resolve()),
                              arm=Arm("h2"), origins=(), spki=[site.spki],
                              host_rules="MAP *.test 127.0.0.1")
            spec = replace(spec, extra=("--remote-debugging-port=0",))
            st: dict[str, Any] = {}

            def done() -> bool:
                n = len(stored_ids(db, load_id))
                if n >= 1 and "cdp" not in st:
                    active = scratch / "profile" / "DevToolsActivePort"
                    port, path = active.read_text().split()[:2]
                    cdp = Cdp(int(port), path)
                    sw = next(t for t in cdp.send("Target.getTargets")["targetInfos"]
                              if t["type"] == "service_worker")
                    s = cdp.send("Target.attachToTarget", {"targetId": sw["targetId"],
                                                           "flatten": True})["sessionId"]
                    cdp.send("Profiler.enable", {}, s)
                    cdp.send("Profiler.setSamplingInterval", {"interval": 200}, s)
                    cdp.send("Profiler.start", {}, s)
                    st.update(cdp=cdp, session=s, first=n)
                if n >= 1 + args.loads and "profile" not in st:
                    st["profile"] = st["cdp"].send("Profiler.stop", {}, st["session"])["profile"]
                    st["loads"] = n - st["first"]
                    st["cdp"].close()
                return "profile" in st

            res = run_load(spec, scratch=scratch, db=db,
                           navigate=[site.origin() + "/page/"] * (1 + args.loads),
                           context={"load_id": load_id}, done=done, visual=args.visual,
                           timeout_s=120)
            if not res.ok:
                raise SystemExit(f"error: {res.reason}")
    times, span = self_times(st["profile"])
    k = st["loads"]
    busy = sum(v for (f, _), v in times.items() if f != "(idle)")
    print(f"{k} loads, profile {span:.0f} ms, not idle {busy / k:.1f} ms per load "
          f"(visual {'on' if args.visual else 'off'})")
    by_file: dict[str, float] = collections.defaultdict(float)
    for (f, url), v in times.items():
        if f != "(idle)":
            by_file[url or f] += v
    print("per file / V8 category, ms per load:")
    for name, v in sorted(by_file.items(), key=lambda x: -x[1])[:12]:
        print(f"  {v / k:7.2f}  {name}")
    print(f"top {args.top} functions (self), ms per load:")
    for (f, url), v in sorted(times.items(), key=lambda x: -x[1])[:args.top]:
        if f != "(idle)":
            print(f"  {v / k:7.2f}  {f}  {url}")


if __name__ == "__main__":
    main()
