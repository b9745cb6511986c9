#!/usr/bin/env python3
"""Which DevTools source of a page's requests costs the browser least CPU (issue 22, target 2)?

The test site's page (scripts/devkit/site.py, loopback) loaded 1 + K times in one headless
Chromium per arm, driven by a bare DevTools client over ``--remote-debugging-port`` (no
extension: this measures what each source costs Chromium itself, not chrome.debugger's delivery
to an extension, which recorder_cpu.py measures on top):

- ``plain``: a session on the page with no domain enabled;
- ``network``: the recorder's live sources (Network, Page with lifecycle events, Runtime), every
  event read by the client as it comes;
- ``trace``: Page with lifecycle events live (for the quiet), and the requests from a trace of
  the ``devtools.timeline`` category started before each navigation and read back once after it
  (``Tracing.end``, ``ReturnAsStream``, ``IO.read``): one blob per load instead of an event per
  request step.

Each load waits for the page's beacon in caddy's log, then 0.6 s (as recorder_cpu.py). CPU per
process kind from /proc, the difference between the snapshots after load 1 and after load 1 + K,
divided by K (recorder_cpu.py's Sampler). Per arm it also prints what the source said about the
last load: the ``network`` arm's responses and the sum of ``loadingFinished.encodedDataLength``;
the ``trace`` arm's ``ResourceReceiveResponse`` events, how many carry a protocol and a
connection id, the sum of ``ResourceFinish.encodedDataLength``, the blob's size and the
client's time to parse it (Python's json: an indicator of what the extension would spend).

``--via debugger``: the same three arms through ``chrome.debugger``, the recorder's path, in a
minimal extension the bench writes (cdp_source_ext.py says how).

``--check N``: no timing; N + 1 loads of the test site per protocol (h1, h2, h3), then the
real-web pages (devkit/realweb.py: console output, an iframe, workers, open streams, a script
redirect, a service worker, cached objects, an Alt-Svc upgrade, a soft navigation; h2 and h3),
through the bare client with both sources on at once,
compared request by request (the same request ids): protocol, connection id, status and encoded
bytes, and the requests only one source saw.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/cdp_source_cpu.py
       [--loads 10] [--rounds 3] [--via client|debugger] [--check N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.bench.cdp_source_ext import LIVE, run_via_debugger  # noqa: E402
from scripts.bench.collector_ingest import median_interval  # noqa: E402
from scripts.bench.recorder_cpu import (  # noqa: E402
    Sampler,
    load_page,
    per_load,
    plain_browser,
    print_table,
    rotated,
)
from scripts.devkit.cdp import EventCdp  # noqa: E402
from scripts.devkit.realweb import serve_realweb  # noqa: E402
from scripts.devkit.site import Site, serve_site  # noqa: E402

ARMS = ("plain", "network", "trace")


def read_trace(cdp: EventCdp, session: str) -> tuple[list[dict[str, Any]], int, float]:
    """End the trace; its events, the blob's size and the client's ms of CPU to parse it."""
    cdp.send("Tracing.end", {}, session)
    stream = cdp.wait_event("Tracing.tracingComplete")["params"]["stream"]
    parts = []
    while True:
        r = cdp.send("IO.read", {"handle": stream, "size": 1 << 20}, session)
        parts.append(r["data"])
        if r.get("eof"):
            break
    cdp.send("IO.close", {"handle": stream}, session)
    blob = "".join(parts)
    t0 = time.process_time()
    doc = json.loads(blob)
    parse_ms = (time.process_time() - t0) * 1000
    return (doc["traceEvents"] if isinstance(doc, dict) else doc), len(blob), parse_ms


def said(arm: str, events: list[dict[str, Any]], size: int, parse_ms: float) -> str:
    """What the source reported about one load."""
    if arm == "network":
        got = [e["params"] for e in events if e["method"] == "Network.responseReceived"]
        done = sum(e["params"]["encodedDataLength"] for e in events
                   if e["method"] == "Network.loadingFinished")
        return f"{len(events)} events, {len(got)} responses, {done:,} bytes (loadingFinished)"
    if arm == "trace":
        data = [e["args"]["data"] for e in events if e.get("name") == "ResourceReceiveResponse"]
        full = sum(1 for d in data if d.get("protocol") and "connectionId" in d)
        done = sum(e["args"]["data"].get("encodedDataLength", 0) for e in events
                   if e.get("name") == "ResourceFinish")
        return (f"{len(events)} trace events, {len(data)} responses ({full} with protocol and "
                f"connection id), {done:,} bytes (ResourceFinish), blob {size:,} B parsed in "
                f"{parse_ms:.1f} ms")
    return "-"


def compare(live: list[dict[str, Any]], trace: list[dict[str, Any]]) -> str:
    """One load seen by both sources at once: request by request (the same request ids), do the
    trace's protocol, connection id, status and encoded bytes equal the Network domain's?"""
    net: dict[str, dict[str, Any]] = {}
    for e in live:
        p = e["params"]
        if e["method"] == "Network.responseReceived":
            r = p["response"]
            net.setdefault(p["requestId"], {}).update(
                url=r["url"], protocol=r.get("protocol"), connection=r.get("connectionId"),
                status=r.get("status"))
        elif e["method"] == "Network.loadingFinished":
            net.setdefault(p["requestId"], {})["bytes"] = p["encodedDataLength"]
    tr: dict[str, dict[str, Any]] = {}
    for e in trace:
        d = e.get("args", {}).get("data", {})
        if e.get("name") == "ResourceReceiveResponse":
            tr.setdefault(d["requestId"], {}).update(
                protocol=d.get("protocol"), connection=d.get("connectionId"),
                status=d.get("statusCode"))
        elif e.get("name") == "ResourceFinish":
            tr.setdefault(d["requestId"], {})["bytes"] = d.get("encodedDataLength")
        elif e.get("name") == "ResourceSendRequest":
            tr.setdefault(d["requestId"], {})["url"] = d.get("url")
    both = [k for k in net if k in tr]
    same = {f: sum(1 for k in both if net[k].get(f) == tr[k].get(f))
            for f in ("protocol", "connection", "status", "bytes")}
    differ = [(net[k].get("url", k), f, net[k].get(f), tr[k].get(f))
              for k in both for f in same if net[k].get(f) != tr[k].get(f)]
    missing = [net[k].get("url", k) for k in net if k not in tr]
    extra = [tr[k].get("url", k) for k in tr if k not in net]
    protocols = Counter(str(tr[k].get("protocol")) for k in both)
    conns = len({tr[k].get("connection") for k in both})
    return (f"{len(net)} requests in the Network domain, {len(tr)} in the trace, {len(both)} in "
            f"both ({dict(protocols)}, {conns} connection ids); equal: " +
            ", ".join(f"{f} {n}/{len(both)}" for f, n in same.items()) +
            f"; only in the Network domain: {missing}; only in the trace: {extra}; "
            f"differing: {differ[:6]}")


def enable(cdp: EventCdp, session: str, arm: str) -> None:
    """The arm's live domains (cdp_source_ext.py LIVE; ``both``: the Network arm's) and lifecycle
    events; ``plain``: none."""
    if arm == "plain":
        return
    for method in LIVE["network" if arm == "both" else arm]:
        cdp.send(method, {}, session)
    cdp.send("Page.setLifecycleEventsEnabled", {"enabled": True}, session)


def start_trace(cdp: EventCdp, session: str) -> None:
    cdp.send("Tracing.start", {"traceConfig": {
        "includedCategories": ["devtools.timeline"], "recordMode": "recordUntilFull"},
        "transferMode": "ReturnAsStream"}, session)


def run_arm(site: Site, scratch: Path, arm: str, loads: int, report: bool = False,
            protocol: str = "h2") -> tuple[dict[str, float], str]:
    """One browser, 1 + K loads; ``report``: print what the sources said after each load."""
    origins = [f"{h}:{site.port}" for h in ("a.test", "b.test")]
    with plain_browser(scratch, site.spki, origins, protocol, EventCdp) as (pid, cdp, session):
        sampler = Sampler(pid)
        enable(cdp, session, arm)
        snaps, last = [], ""
        for _ in range(1 + loads):
            cdp.take()
            if arm in ("trace", "both"):
                start_trace(cdp, session)
            load_page(site, cdp, session, sampler, arm)
            events, size, parse_ms = (read_trace(cdp, session) if arm in ("trace", "both") else
                                      (cdp.take(), 0, 0.0))
            last = (compare(cdp.take(), events) if arm == "both" else
                    said(arm, events, size, parse_ms))
            if report:
                print(f"load {len(snaps) + 1}: {last}", flush=True)
            snaps.append(sampler.sample())
        return per_load(snaps[0], snaps[-1], loads), last


REALWEB = ("/console/quiet.html", "/console/noisy.html", "/frame/", "/workers/", "/stream/",
           "/redir/script.html", "/misc/", "/cache/", "/cache/", "/sw/", "/sw/", "/altsvc/",
           "/spa/")
"""The real-web pages (devkit/realweb.py) the check loads, in order, in one browser (the
service worker's and the cache's second loads are controlled and warm)."""
REALWEB_HOST = {"/sw/": "f.test", "/altsvc/": "d.test"}


def check_realweb(work: Path, protocol: str) -> None:
    """Both sources on, the real-web pages one after the other: load event, 1.5 s, compare."""
    with serve_realweb(work / "realweb") as site, \
            plain_browser(work / f"rw-{protocol}", site.spki, site.origins, protocol,
                          EventCdp) as (_, cdp, session):
        enable(cdp, session, "both")
        for path in REALWEB:
            cdp.take()
            start_trace(cdp, session)
            cdp.send("Page.navigate", {"url": site.url(path, REALWEB_HOST.get(path, "a.test"))},
                     session)
            try:
                cdp.wait_event("Page.loadEventFired", 20)
            except RuntimeError as exc:
                print(f"{path}: {exc}", flush=True)
            time.sleep(1.5)
            trace, _, _ = read_trace(cdp, session)
            print(f"{path}: {compare(cdp.take(), trace)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=10, help="K: loads measured per browser")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--via", choices=("client", "debugger"), default="client")
    ap.add_argument("--check", type=int, default=0, metavar="N",
                    help="no timing: N loads seen by both sources at once, compared request "
                         "by request")
    args = ap.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp, serve_site(Path(tmp) / "site") as site:
            for protocol in ("h1", "h2", "h3"):
                print(f"== the test site, {protocol}", flush=True)
                run_arm(site, Path(tmp) / f"both-{protocol}", "both", args.check, report=True,
                        protocol=protocol)
            for protocol in ("h2", "h3"):
                print(f"== the real-web pages, {protocol}", flush=True)
                check_realweb(Path(tmp), protocol)
        return
    run = run_arm if args.via == "client" else run_via_debugger
    got: dict[str, list[dict[str, float]]] = {a: [] for a in ARMS}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with serve_site(work / "site") as site:
            for r, arm in rotated(ARMS, args.rounds):
                cpu, last = run(site, work / f"{arm}-{r}", arm, args.loads)
                got[arm].append(cpu)
                print(f"round {r + 1} {arm}: total {sum(cpu.values()):.1f} ms/load; last load: "
                      f"{last}", file=sys.stderr, flush=True)
    print_table(got, f"via {args.via}, median of {args.rounds} rounds of {args.loads} loads", 10)
    # side by side: each round's arms ran back to back, so compare them round by round
    plain = [sum(p.values()) for p in got["plain"]]
    extra = {arm: [sum(x.values()) - p for x, p in zip(got[arm], plain, strict=True)]
             for arm in ("network", "trace")}
    saved = [n - t for n, t in zip(extra["network"], extra["trace"], strict=True)]
    lo, hi = median_interval(saved)
    print(f"per round, network's extra {', '.join(f'{x:.0f}' for x in extra['network'])} ms; "
          f"trace's {', '.join(f'{x:.0f}' for x in extra['trace'])} ms")
    print(f"the trace saves {statistics.median(saved):.1f} ms of CPU per load (median of the "
          f"rounds, 95% interval {lo:.1f}-{hi:.1f})")


if __name__ == "__main__":
    main()
