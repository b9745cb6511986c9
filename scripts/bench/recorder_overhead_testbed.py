#!/usr/bin/env python3
"""The testbed arm of recorder_overhead.py: the papers' pages on a shaped
testbed link, a plain Chromium in the client namespace against recorded lab loads, both arms'
PLT the page's own loadEventEnd. Run through ``recorder_overhead.py --testbed``."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from protolens.analysis.bootstrap import bootstrap_medians
from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec, command_line
from protolens.browser.launch import run_load, scratch_env, stop
from protolens.browser.profile import seed_preferences
from protolens.lab.runner import LAB_QUIET_MS
from scripts.devkit.caddylog import read_entries
from scripts.devkit.harness import CHROMIUM, stored_ids

FIRST_START_S = 0.6
"""The plain arm's navigation delay before any recorded load has been measured."""


# --- the testbed arm: the papers' pages on a shaped link ------------------------------------------

TESTBED = "plro"
TESTBED_PAGES = ("ifip18-baidu", "ifip18-wikipedia", "ifip18-facebook")
PAGE_LED = Path(__file__).with_name("page_led.py")
LOG_QUIET_S = 1.0
"""The plain arm reads loadEventEnd once caddy's log has been quiet this long after the page's
request (so nothing attaches to the page while it loads; a read before the load event ends is
retried and counted in ``early``)."""


def page_requested(log: Path, offset: int, uri: str) -> float | None:
    """caddy's epoch timestamp of the request for ``uri`` after ``offset``, if there is one."""
    if not log.exists():
        return None
    for entry in read_entries(log, offset):
        if entry.get("request", {}).get("uri") == uri:
            return float(entry["ts"])
    return None


def read_led(tb: Any, udd: Path, prefix: str) -> tuple[float, int]:
    """The page's loadEventEnd through its DevTools endpoint, inside the client namespace."""
    p = subprocess.run(tb.exec_argv([sys.executable, str(PAGE_LED), str(udd), prefix, "30"]),
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"page_led: {p.stderr.strip()}")
    out = json.loads(p.stdout)
    return float(out["led"]), int(out["early"])


def tb_spec(tb: Any, target: Any, arm: Arm, udd: str, extension: str) -> LaunchSpec:
    return LaunchSpec(chromium=CHROMIUM, user_data_dir=udd, extension_dir=extension, arm=arm,
                      origins=target.origins, spki=[tb.state.spki],
                      host_rules=tb.host_rules(), extra=["--remote-debugging-port=0"])


PAGE_OPEN = Path(__file__).with_name("page_open.py")


def plain_argv(tb: Any, target: Any, arm: Arm, udd: Path) -> list[str]:
    """A plain Chromium's command line for the client namespace: the lab's flags and cold
    profile (seeded here), no extension, and no first page (the caller appends it)."""
    seed_preferences(udd)
    return [a for a in command_line(tb_spec(tb, target, arm, str(udd), ""))
            if "extension" not in a][:-1]


def launch_plain(tb: Any, argv: list[str], scratch: Path) -> subprocess.Popen[bytes]:
    """``argv`` (plain_argv and a first page) started in the client namespace."""
    return subprocess.Popen(tb.exec_argv(argv), env=scratch_env(os.environ, scratch / "xdg"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def wait_log_quiet(log: Path, offset: int, uri: str, timeout: float = 60,
                   check: Callable[[], None] = lambda: None) -> float:
    """Once caddy has logged the request for ``uri`` after ``offset`` and its log has then been
    quiet for LOG_QUIET_S: that request's epoch timestamp. ``check`` runs at every look (it
    raises to give up)."""
    deadline = time.monotonic() + timeout
    requested, size, quiet_since = None, -1, time.monotonic()
    while time.monotonic() < deadline:
        check()
        requested = requested or page_requested(log, offset, uri)
        now_size = log.stat().st_size
        if now_size != size:
            size, quiet_since = now_size, time.monotonic()
        if requested and time.monotonic() - quiet_since >= LOG_QUIET_S:
            return requested
        time.sleep(0.05)
    raise RuntimeError(f"no quiet log after {uri} within {timeout:g} s")


def tb_plain(tb: Any, target: Any, arm: Arm, scratch: Path, start_s: float,
             timeout: float = 60, self_nav: bool = False) -> tuple[float, float, int]:
    """No extension, in the client namespace: the page opened ``start_s`` after launch (as the
    lab extension opens it once the host answered) in a new ``about:blank`` tab sent to it, as
    ``lab run``'s extension does (page_open.py); ``self_nav``: instead the browser's first page,
    a ``data:`` URL, navigates itself (this bench's plain arm before 2026-11-28: its fetch starts
    5-7 ms later, docs/RESEARCH.md "One browser across loads"). Returns (loadEventEnd ms,
    seconds from launch to the page's request, early reads)."""
    udd = scratch / "profile"
    argv = plain_argv(tb, target, arm, udd)
    log, uri = Path(tb.state.access_log), urlsplit(target.url).path
    offset = log.stat().st_size if log.exists() else 0
    launched = time.time()
    at_ms = round((launched + start_s) * 1000)
    argv.append(f"data:text/html,<script>setTimeout(()=>location.href='{target.url}',"
                f"{at_ms}-Date.now())</script>" if self_nav else "about:blank")
    proc = launch_plain(tb, argv, scratch)
    opener = None if self_nav else subprocess.Popen(
        tb.exec_argv([sys.executable, str(PAGE_OPEN), str(udd), target.url, str(at_ms)]),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def opened() -> None:
        if opener is not None and opener.poll() not in (None, 0):
            raise RuntimeError(f"page_open: {opener.communicate()[1].strip()[-300:]}")

    try:
        requested = wait_log_quiet(log, offset, uri, timeout, opened)
        led, early = read_led(tb, udd, target.url)
        return led, requested - launched, early
    finally:
        if opener is not None:
            opener.kill()  # nothing once it has exited
            opener.wait()
        stop(proc)


def tb_recorded(tb: Any, target: Any, arm: Arm, scratch: Path, db: Path,
                extension: Path, visual: bool = False) -> tuple[float, float, int, float]:
    """The lab extension opens the page and records it (with paint capture if ``visual``);
    returns as tb_plain does, plus the record's own load_ms (a check: it must agree with
    loadEventEnd)."""
    load_id = str(uuid.uuid4())
    log, uri = Path(tb.state.access_log), urlsplit(target.url).path
    offset = log.stat().st_size if log.exists() else 0
    got: dict[str, Any] = {}

    def done() -> bool:
        if not stored_ids(db, load_id):
            return False
        got["led"] = read_led(tb, scratch / "profile", target.url)  # the browser still runs
        return True

    launched = time.time()
    res = run_load(tb_spec(tb, target, arm, "", str(extension)), scratch=scratch, db=db,
                   navigate=[target.url], context={"load_id": load_id}, done=done,
                   prefix=tb.exec_argv(), quiet_ms=LAB_QUIET_MS, visual=visual)
    if not res.ok:
        raise RuntimeError(f"recorded load of {target.url} failed: {res.reason}")
    requested = page_requested(log, offset, uri)
    if requested is None:
        raise RuntimeError("the page's request is not in caddy's log")
    with closing(sqlite3.connect(db)) as conn:
        (load_ms,) = conn.execute("SELECT load_ms FROM navigations WHERE load_id = ?",
                                  (load_id,)).fetchone()
    led, early = got["led"]
    return led, requested - launched, early, float(load_ms)


def ratio_interval(on: list[float], off: list[float]) -> tuple[float, float, float]:
    a, b = np.sort(on), np.sort(off)
    rng = np.random.default_rng(0)
    draws = bootstrap_medians(a, 4000, rng) / bootstrap_medians(b, 4000, rng)
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(np.median(a) / np.median(b)), float(low), float(high)


def testbed_main(loads: int, pages: list[str], protocols: list[str], profile: str,
                 extension: Path, visual: bool = False, late_s: float | None = None,
                 self_nav: bool = False) -> None:
    """Arms ``none`` and ``recording`` (and ``visual``: recording with paint capture; ``late``:
    plain Chromium navigating ``late_s`` seconds after the recorded loads' median delay, what a
    load gains from a browser that has finished starting; ``self``: plain Chromium whose
    first page navigates itself, tb_plain's ``self_nav``) in a turning order, each page x
    protocol in turn."""
    from protolens.lab.testbed_network import TestbedNetwork
    from protolens.testbed import Testbed

    Testbed.down(TESTBED)
    tb = Testbed.up(name=TESTBED, profile=profile, server_cc="cubic")
    try:
        targets = TestbedNetwork(tb, owned=True).targets(pages)
        from protolens.pages import ensure_corpus
        ensure_corpus(Path(tb.state.site), pages)
        rows, vis, lat, sel = [], [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            db = work / "bench.db"
            for page in pages:
                for proto in protocols:
                    arm, target = Arm(proto), targets[page]
                    names = ("none", "recording", *(("visual",) if visual else ()),
                             *(("late",) if late_s is not None else ()),
                             *(("self",) if self_nav else ()))
                    plts: dict[str, list[float]] = {name: [] for name in names}
                    starts: list[float] = []
                    early, gaps, stored, stalls = 0, [], [], 0
                    i = 0
                    while i < loads:
                        k = i % len(names)
                        got: dict[str, tuple[float, int, float | None]] = {}
                        try:
                            for which in names[k:] + names[:k]:
                                scratch = work / f"{page}-{proto}-{which}-{i}-{stalls}"
                                tb.flush_tcp_metrics()
                                if which in ("none", "late", "self"):
                                    at = statistics.median(starts) if starts else FIRST_START_S
                                    led, _, e = tb_plain(tb, target, arm, scratch,
                                                         at + (late_s or 0.0) * (which == "late"),
                                                         self_nav=which == "self")
                                    got[which] = (led, e, None)
                                else:
                                    led, start, e, load_ms = tb_recorded(
                                        tb, target, arm, scratch, db, extension,
                                        which == "visual")
                                    starts.append(start)
                                    got[which] = (led, e, load_ms)
                                shutil.rmtree(scratch, ignore_errors=True)
                        except RuntimeError as exc:
                            # a load that stalls (caddy's h2 stall: docs/RESEARCH.md "Loads that
                            # stall") is counted and the whole round again, so the arms stay
                            # paired; lab run retries such a load the same way
                            stalls += 1
                            print(f"{page} {proto} {i + 1}/{loads}: {exc}; round again",
                                  file=sys.stderr)
                            if stalls > loads:
                                raise
                            continue
                        for which, (led, e, lms) in got.items():
                            plts[which].append(led)
                            early += e
                            if which == "recording" and lms is not None:
                                stored.append(lms)
                                gaps.append(lms - led)
                        i += 1
                        print(f"{page} {proto} {i}/{loads}: " + ", ".join(
                            f"{n} {v[-1]:.0f} ms" for n, v in plts.items()), file=sys.stderr)
                    r, low, high = ratio_interval(plts["recording"], plts["none"])
                    rs, slow, shigh = ratio_interval(stored, plts["none"])
                    rows.append((page, proto, statistics.median(plts["none"]),
                                 statistics.median(plts["recording"]), r, low, high, loads,
                                 statistics.median(gaps), early, rs, slow, shigh, stalls))
                    print(f"{page} {proto}: stored load_ms / plain x{rs:.3f} [{slow:.3f}, "
                          f"{shigh:.3f}], loadEventEnd x{r:.3f} [{low:.3f}, {high:.3f}], "
                          f"{stalls} stalled", file=sys.stderr, flush=True)
                    if visual:
                        vis.append((page, proto, statistics.median(plts["visual"]),
                                    *ratio_interval(plts["visual"], plts["recording"])))
                    if self_nav:
                        sel.append((page, proto, statistics.median(plts["self"]),
                                    *ratio_interval(plts["none"], plts["self"]),
                                    *ratio_interval(stored, plts["self"])))
                    if late_s is not None:
                        lat.append((page, proto, statistics.median(plts["late"]),
                                    *ratio_interval(plts["none"], plts["late"])))
    finally:
        Testbed.down(TESTBED)
    print(f"testbed '{profile}' profile, plain Chromium vs recording, PLT = the page's own "
          f"loadEventEnd, interleaved, {loads} loads per arm:")
    print("(lab = the stored load_ms of the recorded loads, what lab run reports; rec = their "
          "loadEventEnd read as the plain arm's is)")
    print(f"{'page':<18} {'proto':<5} {'none ms':>8} {'rec ms':>8} {'ratio':>6} "
          f"{'95% interval':>15} {'lab/none':>8} {'95% interval':>15} {'n':>3} "
          f"{'lab-rec ms':>10} {'early':>5} {'stalls':>6}")
    for page, proto, none, rec, r, low, high, n, gap, early, rs, slow, shigh, st in rows:
        print(f"{page:<18} {proto:<5} {none:8.1f} {rec:8.1f} {r:6.3f} {low:7.3f}..{high:<7.3f}"
              f"{rs:8.3f} {slow:7.3f}..{shigh:<7.3f}{n:>3} {gap:10.1f} {early:5d} {st:6d}")
    for page, proto, med, r, low, high in vis:
        print(f"visual metrics on / off, {page} {proto}: {med:.1f} ms, x{r:.3f} "
              f"[{low:.3f}, {high:.3f}]")
    for page, proto, med, r, low, high, rs, slow, shigh in sel:
        print(f"plain opened in a tab / plain navigating itself from data:, {page} {proto}: "
              f"self {med:.1f} ms, x{r:.3f} [{low:.3f}, {high:.3f}]; lab / self x{rs:.3f} "
              f"[{slow:.3f}, {shigh:.3f}]")
    for page, proto, med, r, low, high in lat:
        print(f"plain at the lab's delay / plain {late_s:g} s later, {page} {proto}: later "
              f"{med:.1f} ms, x{r:.3f} [{low:.3f}, {high:.3f}]")
