#!/usr/bin/env python3
"""Probe (issue 22, target 3): can one browser serve many lab loads and still measure a cold one?

A lab load pays a browser's start and stop (docs/RESEARCH.md "What measuring costs"); target 3
allows one browser across loads if target 1's equality holds: cold cache and no connection
carried over. DevTools has no command that closes the network service's sockets, but Chromium
started with ``--enable-net-benchmarking`` gives its pages ``chrome.benchmarking``:
``closeConnections`` (every socket pool, HTTP/2 and QUIC session of the profile's network
context), ``clearCache`` (the HTTP cache), ``clearHostResolverCache`` and
``clearPredictorCache``. This probe measures whether that is enough, on the testbed with no
extension in either arm (the recorder is not what is probed):

    cold    a fresh plain Chromium per load, as recorder_overhead.py --testbed's plain arm was
            before 2026-11-28 (same flags, cold profile, client namespace, its first page, a
            ``data:`` URL, navigating itself 0.6 s after launch; ``--cold-tab``: its page
            opened in a new tab through DevTools, as the reused arm's is)
    reused  one plain Chromium (the same flags and ``--enable-net-benchmarking``) for the whole
            page x protocol cell: before each load the four calls above from a blank tab and a
            simulated critical memory pressure (``Memory.simulatePressureNotification``: the
            four calls leave the TLS session cache, and the second load of a cell resumed its
            TLS session; the pressure flushes it), then the page in a new tab, closed after its
            PLT is read

PLT is the page's own loadEventEnd in both arms, read once caddy's log has been quiet for 1 s,
with its navigation timing (PHASES: where a difference between the arms lies).
The ground truth of "cold" is caddy's access log for each load: the requests it served (a load
served from the cache asks for fewer), the client ports they came from (a connection carried over
from the load before has a port that load used), and TLS resumptions (``request.tls.resumed``:
a session ticket kept from the load before). Prints per cell the median PLT of each arm, their
ratio with a bootstrap 95% interval, and the ground truth's counts; and the reused arm's own cost
per load (the reset, the tab's creation and close).

Needs root. ``.venv/bin/python scripts/bench/reuse_probe.py [--loads 8] [--profile wifi]
[--pages ifip18-baidu,...] [--protocols h1,h2,h3] [--cold-tab] [--cold-delay S] [--cold-warmup]
[--no-pressure]`` (the launched arm's page opened in a tab as the reused arm's is; its opening S
seconds after the launch; its first page drawing text and a canvas; the reset without the memory
pressure). Measured 2026-11-28: docs/RESEARCH.md "What measuring costs", "One browser across
loads"; the reused arm keeps each load cold on the wire and is 2-7% faster on ifip18-baidu
than a browser launched per load and opened the same way.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.arms import Arm  # noqa: E402
from protolens.browser.launch import stop  # noqa: E402
from scripts.bench.recorder_overhead_testbed import (  # noqa: E402
    FIRST_START_S,
    TESTBED,
    launch_plain,
    plain_argv,
    ratio_interval,
    wait_log_quiet,
)
from scripts.devkit.caddylog import read_hits  # noqa: E402
from scripts.devkit.cdp import endpoint, evaluate  # noqa: E402

RESET = ("(() => { const b = chrome.benchmarking; b.closeConnections(); b.clearCache(); "
         "b.clearHostResolverCache(); b.clearPredictorCache(); return true; })()")
LED = ("(() => { const n = performance.getEntriesByType('navigation')[0]; "
       "if (!n || !n.loadEventEnd) return 0; "
       "const r = performance.getEntriesByType('resource'); "
       "return JSON.stringify({led: n.loadEventEnd, fetch: n.fetchStart, "
       "connect: n.connectEnd - n.connectStart, tls: n.secureConnectionStart ? "
       "n.connectEnd - n.secureConnectionStart : 0, request: n.requestStart, "
       "ttfb: n.responseStart, doc: n.responseEnd, dcl: n.domContentLoadedEventEnd, "
       "last: Math.max(0, ...r.map((e) => e.responseEnd)), "
       "handshakes: r.filter((e) => e.connectEnd > e.connectStart).length + "
       "(n.connectEnd > n.connectStart ? 1 : 0)}); })()")
PHASES = ("fetch", "connect", "tls", "request", "ttfb", "doc", "dcl", "last", "led", "handshakes")
"""The page's navigation timing (ms from its navigation start; connect and tls: durations) and
its resources' last responseEnd; handshakes: the document and resources whose timing shows a
connection set up for them."""


# --- the driver: runs in the client namespace, one step on the reused browser ---------------------

def driver(udd: Path, step: str, url: str) -> None:
    """``reset``: the four calls from the browser's blank tab, then (unless ``url`` is
    ``no-pressure``) a simulated critical memory pressure; ``open``: a new tab at ``url``;
    ``read``: the tab's loadEventEnd, then the tab closed. Prints JSON."""
    cdp = endpoint(udd)
    t0 = time.monotonic()
    try:
        pages = [t for t in cdp.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
        if step == "reset":
            blank = next(t for t in pages if not t["url"].startswith("http"))
            s = cdp.send("Target.attachToTarget", {"targetId": blank["targetId"],
                                                   "flatten": True})["sessionId"]
            ok = evaluate(cdp, s, RESET)
            if url != "no-pressure":
                cdp.send("Memory.simulatePressureNotification", {"level": "critical"}, s)
            cdp.send("Target.detachFromTarget", {"sessionId": s})
            out: dict[str, Any] = {"ok": ok}
        elif step == "open":
            cdp.send("Target.createTarget", {"url": url})
            out = {}
        else:
            page = next(t for t in pages if t["url"].startswith(url))
            s = cdp.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                   "flatten": True})["sessionId"]
            early = 0
            while not (got := evaluate(cdp, s, LED)):
                early += 1
                time.sleep(0.2)
            renderers = sorted(p["id"] for p in cdp.send("SystemInfo.getProcessInfo")[
                "processInfo"] if p["type"] == "renderer")
            cdp.send("Target.closeTarget", {"targetId": page["targetId"]})
            out = {**json.loads(got), "early": early, "renderers": renderers}
        out["ms"] = (time.monotonic() - t0) * 1000
        print(json.dumps(out))
    finally:
        cdp.close()


def drive(tb: Any, udd: Path, step: str, url: str) -> dict[str, Any]:
    p = subprocess.run(tb.exec_argv([sys.executable, __file__, "--driver", str(udd), step, url]),
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"driver {step}: {p.stderr.strip()[-300:]}")
    return dict(json.loads(p.stdout))


# --- the arms -------------------------------------------------------------------------------------

def start_reused(tb: Any, target: Any, arm: Arm, scratch: Path) -> tuple[subprocess.Popen[bytes],
                                                                           Path]:
    udd = scratch / "profile"
    argv = [*plain_argv(tb, target, arm, udd), "--enable-net-benchmarking", "about:blank"]
    proc = launch_plain(tb, argv, scratch)
    deadline = time.monotonic() + 30
    while not (udd / "DevToolsActivePort").exists():
        if time.monotonic() > deadline:
            stop(proc)
            raise RuntimeError("the reused browser did not start")
        time.sleep(0.05)
    time.sleep(FIRST_START_S)
    return proc, udd


def reused_load(tb: Any, target: Any, udd: Path, pressure: bool) -> dict[str, Any]:
    log, uri = Path(tb.state.access_log), urlsplit(target.url).path
    reset = drive(tb, udd, "reset", "pressure" if pressure else "no-pressure")
    if reset.get("ok") is not True:
        raise RuntimeError("chrome.benchmarking is missing")
    tb.flush_tcp_metrics()
    offset = log.stat().st_size if log.exists() else 0
    opened = drive(tb, udd, "open", target.url)
    wait_log_quiet(log, offset, uri)
    got = drive(tb, udd, "read", target.url)
    return {**got, "reset_ms": reset["ms"], "open_ms": opened["ms"], "close_ms": got["ms"],
            "hits": read_hits(log, offset)}


WARMUP = ("<p style='font:16px sans-serif'>warm-up <b>text</b> <i>drawn</i></p><canvas id=c>"
          "</canvas><script>const x=document.getElementById('c').getContext('2d');"
          "x.font='20px serif';x.fillText('warm',5,20);x.fillRect(0,0,30,30)</script>")
"""``--cold-warmup``: what the launched arm's first page draws before its navigation (text in
two fonts, a canvas): whether a browser's first-page work is what a reused browser saves."""


def cold_load(tb: Any, target: Any, arm: Arm, scratch: Path, warmup: bool = False,
              delay_s: float = FIRST_START_S, tab: bool = False) -> dict[str, Any]:
    """A plain launch as recorder_overhead_testbed.tb_plain's ``self_nav`` (its first page
    navigates itself ``delay_s`` after the launch), its page read as the reused arm's is;
    ``tab``: the page opened instead in a new tab through DevTools ``delay_s`` after the
    launch, as the reused arm opens it."""
    log, uri = Path(tb.state.access_log), urlsplit(target.url).path
    tb.flush_tcp_metrics()
    offset = log.stat().st_size if log.exists() else 0
    udd = scratch / "profile"
    argv = plain_argv(tb, target, arm, udd)
    launched = time.time()
    at_ms = round((launched + delay_s) * 1000)
    argv.append(f"data:text/html,{WARMUP if warmup else ''}" + ("" if tab else
                f"<script>setTimeout(()=>location.href='{target.url}',{at_ms}-Date.now())"
                "</script>"))
    proc = launch_plain(tb, argv, scratch)
    try:
        if tab:
            while not (udd / "DevToolsActivePort").exists():
                if time.time() - launched > 30:
                    raise RuntimeError("the launched browser did not start")
                time.sleep(0.02)
            time.sleep(max(0.0, launched + delay_s - time.time()))
            drive(tb, udd, "open", target.url)
        wait_log_quiet(log, offset, uri)
        got = drive(tb, udd, "read", target.url)
    finally:
        stop(proc)
    return {**got, "hits": read_hits(log, offset)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--driver":
        driver(Path(sys.argv[2]), sys.argv[3], sys.argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=8)
    ap.add_argument("--profile", default="wifi")
    ap.add_argument("--pages", default="ifip18-baidu,ifip18-wikipedia")
    ap.add_argument("--protocols", default="h1,h2,h3")
    ap.add_argument("--cold-warmup", action="store_true",
                    help="the launched arm's first page draws text and a canvas (WARMUP)")
    ap.add_argument("--cold-delay", type=float, default=FIRST_START_S, metavar="S",
                    help="the launched arm navigates S seconds after its launch (default: the "
                         "lab's 0.6)")
    ap.add_argument("--cold-tab", action="store_true",
                    help="the launched arm's page opened in a new tab through DevTools, as the "
                         "reused arm's is (default: its first page navigates itself)")
    ap.add_argument("--no-pressure", action="store_true",
                    help="leave out the simulated memory pressure from the reset")
    args = ap.parse_args()
    from protolens.lab.testbed_network import TestbedNetwork
    from protolens.pages import ensure_corpus
    from protolens.testbed import Testbed

    pages, protocols = args.pages.split(","), args.protocols.split(",")
    Testbed.down(TESTBED)
    tb = Testbed.up(name=TESTBED, profile=args.profile, server_cc="cubic")
    rows = []
    try:
        targets = TestbedNetwork(tb, owned=True).targets(pages)
        ensure_corpus(Path(tb.state.site), pages)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for page in pages:
                for proto in protocols:
                    arm, target = Arm(proto), targets[page]
                    proc, udd = start_reused(tb, target, arm, work / f"{page}-{proto}-reused")
                    cold: list[dict[str, Any]] = []
                    reused: list[dict[str, Any]] = []
                    try:
                        for i in range(args.loads):
                            for which in (("cold", "reused") if i % 2 == 0 else
                                          ("reused", "cold")):
                                if which == "cold":
                                    scratch = work / f"{page}-{proto}-cold-{i}"
                                    cold.append(cold_load(tb, target, arm, scratch,
                                                          args.cold_warmup, args.cold_delay,
                                                          args.cold_tab))
                                    shutil.rmtree(scratch, ignore_errors=True)
                                else:
                                    reused.append(reused_load(tb, target, udd,
                                                              not args.no_pressure))
                            print(f"{page} {proto} {i + 1}/{args.loads}: cold "
                                  f"{cold[-1]['led']:.0f} ms, reused {reused[-1]['led']:.0f} ms",
                                  file=sys.stderr, flush=True)
                    finally:
                        stop(proc)
                    rows.append((page, proto, cold, reused))
    finally:
        Testbed.down(TESTBED)
    print(f"testbed '{args.profile}', plain Chromium, PLT = loadEventEnd, {args.loads} loads "
          "per arm, interleaved; caddy's log per load: requests served, connections (client "
          "ports), ports seen in the arm's load before, TLS resumptions")
    print(f"{'page':<18} {'proto':<5} {'cold ms':>8} {'reused ms':>9} {'ratio':>6} "
          f"{'95% interval':>15}  {'requests c/r':>12} {'conns c/r':>10} {'carried':>7} "
          f"{'resumed c/r':>11}")
    for page, proto, cold, reused in rows:
        r, low, high = ratio_interval([x["led"] for x in reused], [x["led"] for x in cold])

        def med(xs: list[dict[str, Any]], f: Any) -> float:
            return statistics.median(f(x) for x in xs)

        def carried(xs: list[dict[str, Any]]) -> int:
            return sum(len({h.client_port for h in a["hits"]} & {h.client_port for h in b["hits"]})
                       for a, b in zip(xs, xs[1:], strict=False))

        reqs = (med(cold, lambda x: len(x["hits"])), med(reused, lambda x: len(x["hits"])))
        conns = (med(cold, lambda x: len({h.client_port for h in x["hits"]})),
                 med(reused, lambda x: len({h.client_port for h in x["hits"]})))
        res = (sum(h.resumed for x in cold for h in x["hits"]),
               sum(h.resumed for x in reused for h in x["hits"]))
        print(f"{page:<18} {proto:<5} {med(cold, lambda x: x['led']):8.1f} "
              f"{med(reused, lambda x: x['led']):9.1f} {r:6.3f} {low:7.3f}..{high:<7.3f} "
              f"{reqs[0]:>5.0f}/{reqs[1]:<6.0f} {conns[0]:>4.0f}/{conns[1]:<5.0f} "
              f"{carried(reused):>7d} {res[0]:>5d}/{res[1]:<5d}")
        costs = ", ".join(f"{name} {med(reused, lambda x, k=k: x[k]):.0f}" for name, k in (
            ("reset", "reset_ms"), ("open", "open_ms"), ("read and close", "close_ms")))
        print(f"  reused arm's own cost per load (median ms): {costs}")
        seen = [set(x["renderers"]) for x in reused]
        kept = sum(len(a & b) for a, b in zip(seen, seen[1:], strict=False))
        print(f"  renderer processes per load, median cold / reused: "
              f"{med(cold, lambda x: len(x['renderers'])):.0f} / "
              f"{med(reused, lambda x: len(x['renderers'])):.0f}; reused arm: "
              f"{len(set().union(*seen))} distinct over {len(seen)} loads, {kept} alive in the "
              "load after theirs")
        print("  navigation timing, median cold / reused: " + ", ".join(
            f"{k} {med(cold, lambda x, k=k: x[k]):.1f}/{med(reused, lambda x, k=k: x[k]):.1f}"
            for k in PHASES))


if __name__ == "__main__":
    main()
