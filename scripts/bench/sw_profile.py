#!/usr/bin/env python3
"""Where the extension's service worker spends its CPU while it records: the test site's page
(scripts/devkit/site.py) loaded 1 + K times by the lab extension (as recorder_cpu.py's
``recording`` arm), with V8's sampling profiler on the service worker's target (a second
DevTools client on ``--remote-debugging-port``) from the first record to the last. Prints the
self time per function (top N) and per source file, in ms per load. The profiler's own sampling
costs some CPU; the shares, not the sum, are the point.

``--events``: instead of profiling, the extension's log tap keeps each record's raw DevTools
events (everything ``chrome.debugger`` delivered but the screencast's frames); prints how many
of each method one load brings, and their JSON size: what the browser parses and routes to the
worker per load.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/sw_profile.py
       [--loads 8] [--visual] [--top 25] [--events]
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sqlite3
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


def callers(profile: dict[str, Any], name: str) -> dict[str, float]:
    """Self ms of ``name`` split by the chain of its three nearest callers."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    out: dict[str, float] = collections.defaultdict(float)
    for sid, dt in zip(profile["samples"], profile["timeDeltas"], strict=True):
        if nodes[sid]["callFrame"]["functionName"] != name:
            continue
        chain, p = [], parent.get(sid)
        while p is not None and len(chain) < 3:
            f = nodes[p]["callFrame"]
            chain.append(f"{f['functionName'] or '(anonymous)'}:{f['lineNumber'] + 1}")
            p = parent.get(p)
        out[" < ".join(chain)] += dt / 1000
    return out


def logs(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM navigation_logs").fetchone()[0])
    except sqlite3.Error:
        return 0


def print_events(db: Path) -> None:
    """Events per load by method, and their JSON bytes, over the tapped logs but the first."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT log FROM navigation_logs ORDER BY stored_at_ms").fetchall()
    count: dict[str, int] = collections.Counter()
    size: dict[str, int] = collections.Counter()
    for (blob,) in rows[1:]:
        for line in gzip.decompress(blob).decode().splitlines():
            if line.strip():
                method = str(json.loads(line).get("method"))
                count[method] += 1
                size[method] += len(line)
    k = len(rows) - 1
    print(f"{k} loads: {sum(count.values()) / k:.0f} events, "
          f"{sum(size.values()) / k / 1000:.0f} kB of JSON per load")
    for m, c in sorted(count.items(), key=lambda x: -x[1]):
        print(f"  {c / k:7.1f}  {size[m] / k / 1000:7.1f} kB  {m}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=8)
    ap.add_argument("--visual", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--events", action="store_true", help="count the delivered events instead")
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
                if args.events:
                    return n >= 1 + args.loads and logs(db) >= 1 + args.loads
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
                           timeout_s=120, save_log=args.events)
            if not res.ok:
                raise SystemExit(f"error: {res.reason}")
            if args.events:
                print_events(db)
                return
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
    ranked = sorted(times.items(), key=lambda x: -x[1])
    for (f, url), v in ranked[:args.top]:
        if f != "(idle)":
            print(f"  {v / k:7.2f}  {f}  {url}")
    for (f, _url), _ in [r for r in ranked if r[0][1] == "background.js"][:3]:
        print(f"callers of {f} (ms per load):")
        for chain, v in sorted(callers(st["profile"], f).items(), key=lambda x: -x[1])[:6]:
            print(f"  {v / k:7.2f}  {chain}")


if __name__ == "__main__":
    main()
