#!/usr/bin/env python3
"""Benchmark: does recording slow pages down?

Loads the test site (scripts/devkit/site.py) in headless Chromium, interleaved: with the
ProtoLens extension recording (lab mode, host storing into SQLite) and with no extension at all.
Both PLTs come from the same independent source: the page's own loadEventEnd, which the page
reports to caddy (its late request's ?led= query), so the two arms are measured identically.
Prints the medians and their ratio (recording / none). A third arm records with the visual metrics
on (the tab's screencast, decoded into histograms: docs/RECORD.md "Visual metrics"), so what paint
capture adds to PLT is printed beside it (visual / recording).

Both arms navigate at the same time after the browser's launch: a page loaded while Chromium is
still starting up is slower. The lab extension navigates as soon as the host's hello and policies
are in (measured: 0.5-0.7 s after launch on the 2-core CI machine), so the plain arm navigates at
the median delay the recorded loads have shown so far (caddy's timestamp of the page's request);
each arm's median delay is printed to check it. (Navigating the plain arm at 1.8 s instead, as
this bench did before, charged the extension about 50 ms of startup contention.)

Last measured (30 loads per arm, 2-core machine shared with other jobs, Chromium 156): no
extension 164.5 ms, recording 244.5 ms, ratio 1.49. Run to run the medians move by 20-30 ms.
With the visual-metrics arm (15 loads per arm, same machine): none 189.0 ms, recording 281.2 ms,
recording+visual 263.7 ms: visual on / off 0.94 (single loads 140-490 ms).

Testbed arm (``--testbed``; root): the papers' pages on the testbed's ``wifi``
profile (7 Mbit/s, 50 ms), h2 and h3, a plain Chromium in the client namespace (the same flags
and cold profile, no extension; its page opened in a new ``about:blank`` tab sent to it, as
``lab run``'s extension opens it: page_open.py; before 2026-11-28 its first page, a ``data:``
URL, navigated itself, which ``--testbed-self-nav`` keeps as an arm) interleaved with recorded
lab loads; both arms' PLT is the page's
own loadEventEnd, read through DevTools once caddy's log has been quiet for 1 s (page_led.py;
``early`` counts reads before the load event ended), and ``rec-led`` checks the record's load_ms
against it. Last measured (12 loads per arm, 2026-11-24, Chromium 156):

    page               proto  none ms   rec ms  ratio    95% interval   n rec-led ms early
    ifip18-baidu       h2       349.5    345.4  0.988   0.951..1.043   12       -0.0     0
    ifip18-baidu       h3       293.0    294.7  1.006   0.970..1.029   12        0.0     0
    ifip18-wikipedia   h2       860.3    854.8  0.993   0.953..1.063   12       -0.0     0
    ifip18-wikipedia   h3       792.8    761.9  0.961   0.948..1.005   12       -0.0     0
    ifip18-facebook    h2      4883.8   4824.1  0.988   0.936..1.000   12       -0.0     0
    ifip18-facebook    h3      4666.1   4584.7  0.983   0.963..1.004   12        0.0     0

    .venv/bin/python scripts/bench/recorder_overhead.py [--loads 20]
    .venv/bin/python scripts/bench/recorder_overhead.py --testbed [--loads 12] [--pages ...]
    # two builds of the extension side by side, each its own arm, in the same run:
    .venv/bin/python scripts/bench/recorder_overhead.py --extension old=/tmp/a --extension new=dist
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


from protolens.arms import Arm  # noqa: E402
from protolens.browser.flags import LaunchSpec, command_line  # noqa: E402
from protolens.browser.launch import run_load, scratch_env, stop  # noqa: E402
from protolens.browser.profile import seed_preferences  # noqa: E402
from scripts.bench.recorder_overhead_testbed import (  # noqa: E402
    FIRST_START_S,
    TESTBED_PAGES,
    page_requested,
    ratio_interval,
    testbed_main,
)
from scripts.devkit.caddylog import read_hits  # noqa: E402
from scripts.devkit.harness import CHROMIUM, stored_ids  # noqa: E402
from scripts.devkit.site import Site, serve_site  # noqa: E402

BEACON = "/page/data/late.json?"
"""The test page's request after its load event, carrying its loadEventEnd (``led``)."""


def beacon_after(log: Path, offset: int) -> float | None:
    for hit in read_hits(log, offset):
        if hit.uri.startswith(BEACON):
            return float(parse_qs(urlsplit(hit.uri).query)["led"][0])
    return None


def page_request_after(log: Path, offset: int, launched: float) -> float:
    """Seconds from the browser's launch (wall clock) to caddy's log of the page's request."""
    ts = page_requested(log, offset, "/page/")
    if ts is None:
        raise RuntimeError("the page's request is not in caddy's log")
    return ts - launched


def plain_load(site: Site, scratch: Path, start_s: float,
               timeout: float = 60) -> tuple[float, float]:
    """No extension: Chromium opens the page from a script `start_s` after its launch; waits for
    the beacon. Returns (loadEventEnd ms, seconds from launch to the page's request)."""
    udd = scratch / "profile"
    seed_preferences(udd)  # as run_load does for the recorded arm
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd),
                      extension_dir="", arm=Arm("h2"), origins=(), spki=[site.spki],
                      host_rules="MAP *.test 127.0.0.1")
    argv = [a for a in command_line(spec) if "extension" not in a][:-1]
    target = site.origin() + "/page/"
    offset = site.access_log.stat().st_size
    launched = time.time()
    at_ms = round((launched + start_s) * 1000)
    argv.append(f"data:text/html,<script>setTimeout(()=>location.href='{target}',"
                f"{at_ms}-Date.now())</script>")
    proc = subprocess.Popen(argv, env=scratch_env(os.environ, scratch / "xdg"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            led = beacon_after(site.access_log, offset)
            if led is not None:
                return led, page_request_after(site.access_log, offset, launched)
            time.sleep(0.05)
        raise RuntimeError("no beacon from the plain load")
    finally:
        stop(proc)


def recorded_load(site: Site, scratch: Path, db: Path, extension: Path,
                  visual: bool = False) -> tuple[float, float]:
    """The lab extension opens the page and records it (with paint capture if ``visual``);
    returns as plain_load does."""
    load_id = str(uuid.uuid4())
    offset = site.access_log.stat().st_size
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="",
                      extension_dir=str(extension), arm=Arm("h2"), origins=(),
                      spki=[site.spki], host_rules="MAP *.test 127.0.0.1")
    launched = time.time()
    res = run_load(spec, scratch=scratch, db=db, navigate=[site.origin() + "/page/"],
                   context={"load_id": load_id}, done=lambda: bool(stored_ids(db, load_id)),
                   visual=visual)
    if not res.ok:
        raise RuntimeError(f"recorded load failed: {res.reason}")
    led = beacon_after(site.access_log, offset)
    if led is None:
        raise RuntimeError("no beacon from the recorded load")
    return led, page_request_after(site.access_log, offset, launched)


def extension_arm(value: str) -> tuple[str, Path]:
    name, sep, path = value.partition("=")
    if not sep or not name or name == "none":
        raise argparse.ArgumentTypeError(f"expected NAME=DIR, got {value!r}")
    if not (Path(path) / "manifest.json").exists():
        raise argparse.ArgumentTypeError(f"{path}: no manifest.json (build the extension first)")
    return name, Path(path).resolve()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=20, help="loads per arm (default 20)")
    ap.add_argument("--extension", type=extension_arm, action="append", metavar="NAME=DIR",
                    help="a built extension to record with, as its own arm (repeatable; "
                         "default: recording=dist)")
    ap.add_argument("--no-visual", action="store_true",
                    help="leave out the arm that records with the visual metrics on")
    ap.add_argument("--testbed", action="store_true",
                    help="the testbed arm instead of loopback: the papers' pages on a shaped "
                         "link, plain Chromium vs recording, in the client namespace (root)")
    ap.add_argument("--pages", default=",".join(TESTBED_PAGES),
                    help="--testbed: corpus pages (default: %(default)s)")
    ap.add_argument("--protocols", default="h2,h3", help="--testbed: arms (default h2,h3)")
    ap.add_argument("--profile", default="wifi", help="--testbed: shaper profile (default wifi)")
    ap.add_argument("--testbed-visual", action="store_true",
                    help="--testbed: a third arm recording with the visual metrics on")
    ap.add_argument("--testbed-late", type=float, metavar="S",
                    help="--testbed: an arm of plain Chromium navigating S s later than the "
                         "lab does (what the browser's start-up costs a load)")
    ap.add_argument("--testbed-self-nav", action="store_true",
                    help="--testbed: an arm of plain Chromium whose first page (a data: URL) "
                         "navigates itself, this bench's plain arm before 2026-11-28")
    args = ap.parse_args()
    if args.testbed:
        ext = (args.extension or [("recording", ROOT / "dist")])[0][1]
        testbed_main(args.loads, args.pages.split(","), args.protocols.split(","), args.profile,
                     ext, visual=args.testbed_visual, late_s=args.testbed_late,
                     self_nav=args.testbed_self_nav)
        return
    exts = args.extension or [("recording", ROOT / "dist")]
    arms: list[tuple[str, Path | None, bool]] = [
        ("none", None, False), *((name, ext, False) for name, ext in exts),
        *(() if args.no_visual else ((f"{exts[0][0]}+visual", exts[0][1], True),))]
    if len({name for name, _, _ in arms}) != len(arms):
        ap.error("arm names must differ")
    plts: dict[str, list[float]] = {name: [] for name, _, _ in arms}
    starts: dict[str, list[float]] = {name: [] for name, _, _ in arms}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        db = work / "bench.db"
        with serve_site(work / "site") as site:
            for i in range(args.loads):
                # interleaved, rotating which goes first, so drift hits all arms alike
                k = i % len(arms)
                for name, ext, visual in arms[k:] + arms[:k]:
                    scratch = work / f"{name}-{i}"
                    recorded = [s for n, v in starts.items() if n != "none" for s in v]
                    led, start = (
                        plain_load(site, scratch, statistics.median(recorded) if recorded
                                   else FIRST_START_S) if ext is None
                        else recorded_load(site, scratch, db, ext, visual))
                    plts[name].append(led)
                    starts[name].append(start)
                print(f"load {i + 1}/{args.loads}: " + ", ".join(
                    f"{name} {v[-1]:.1f} ms" for name, v in plts.items()), file=sys.stderr)
    base = statistics.median(plts["none"])
    for name, values in plts.items():
        m = statistics.median(values)
        print(f"median PLT {name:>16}: {m:6.1f} ms (n={len(values)}), ratio / none {m / base:.3f}"
              f"; page requested {statistics.median(starts[name]):.2f} s after launch")
    for name, ext, visual in arms:
        plain = next((n for n, e, v in arms if e == ext and not v), None)
        if visual and plain is not None:
            ratio, low, high = ratio_interval(plts[name], plts[plain])
            print(f"visual metrics on / off ({name} / {plain}): {ratio:.3f}, bootstrap 95% "
                  f"interval {low:.3f} .. {high:.3f}")


if __name__ == "__main__":
    main()
