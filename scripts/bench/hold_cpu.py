#!/usr/bin/env python3
"""What an everyday tab held after its record costs (docs/RECORD.md "Late attach", the hold): an
everyday browser (scripts/devkit/everyday.py, recording switched on from the options page, the
built extension and the real host) opens the real-web ``/anim/`` page (a banner that changes
colour every 100 ms, as a carousel or a spinner does) in a new tab; from 1 s after its record is
stored, the CPU of every process of the browser (its descendants: the zygote's renderers are in a
process group of their own; the native host included) is read from /proc over ``--window`` s.

Arms, interleaved and rotated each round, a fresh browser and profile each: ``held`` (the options'
default hold, 30 s: the debugger stays on the tab) and ``let go`` (a hold of 0: detached once the
record is made), with the repository's build (dist/); ``--before DIR`` adds ``held, before``: the
same held tab with another build of the extension (e.g. one built from an earlier commit).
``--visual`` switches the visual metrics on (the tab's screencast). Prints, per arm, the median ms
of CPU per second of each process kind, and the ratio of the totals held / let go (and held /
held, before) with a 95% bootstrap interval.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/hold_cpu.py
       [--rounds 4] [--window 10] [--visual] [--before DIR]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "native-host"))

from scripts.bench.recorder_cpu import KINDS, kind, processes, rotated  # noqa: E402
from scripts.bench.wan_overhead import ratio_ci  # noqa: E402
from scripts.devkit.cdp import EXTENSION, Page, devtools_browser, wait_for  # noqa: E402
from scripts.devkit.everyday import DEFAULT_HOLD_S, extension_spec, wait_first_run_page  # noqa: E402
from scripts.devkit.harness import require_dist  # noqa: E402
from scripts.devkit.realweb import serve_realweb  # noqa: E402


def family(udd: str) -> dict[int, tuple[str, float]]:
    """pid -> (kind, CPU seconds) of the browser started with ``udd`` and all its descendants."""
    procs = {p.pid: p for p in processes()}
    roots = {p.pid for p in procs.values()
             if f"--user-data-dir={udd}" in p.cmd and "--type=" not in p.cmd}
    grew = True
    while grew:
        more = {p.pid for p in procs.values() if p.ppid in roots} - roots
        grew = bool(more)
        roots |= more
    return {pid: (kind(procs[pid].cmd), procs[pid].cpu_s) for pid in roots}


def held_tab(work: Path, dist: Path, hold_s: int, visual: bool, window_s: float
             ) -> dict[str, float]:
    """ms of CPU per second of each process kind while /anim/'s tab is held (or let go)."""
    db = work / "store.db"
    with serve_realweb(work / "site") as site:
        spec = replace(extension_spec(work, db=db), extension_dir=str(dist), spki=[site.spki],
                       host_rules="MAP *.test 127.0.0.1")
        with devtools_browser(spec, work) as (cdp, _):
            wait_first_run_page(cdp)
            options = Page(cdp, f"{EXTENSION}/options.html", 800, 900)
            options.wait("document.getElementById('exp-status').textContent")
            options.js("document.getElementById('enabled').checked = true;"
                       " document.getElementById('detail').value = 'full';"
                       f" document.getElementById('visual').checked = {str(visual).lower()};"
                       f" document.getElementById('hold').value = '{hold_s}';"
                       " document.getElementById('save').click(); true")
            options.wait("document.getElementById('status').textContent")
            url = site.url("/anim/")
            options.js(f"chrome.tabs.create({{url: {url!r}, active: true}}).then(() => true)")

            def stored() -> bool:
                try:
                    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                        return bool(conn.execute("SELECT 1 FROM navigations WHERE url = ?",
                                                 (url,)).fetchall())
                except sqlite3.OperationalError:  # no store, or no schema yet
                    return False
            wait_for("the record of /anim/", stored, 60)
            time.sleep(1.0)
            before = family(str(spec.user_data_dir))
            time.sleep(window_s)
            after = family(str(spec.user_data_dir))
    out = dict.fromkeys(KINDS, 0.0)
    for pid, (k, t) in after.items():
        if pid in before:
            out[k] += (t - before[pid][1]) * 1000 / window_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--window", type=float, default=10.0, metavar="S")
    ap.add_argument("--visual", action="store_true")
    ap.add_argument("--before", type=Path, metavar="DIR",
                    help="another build of the extension, held, as a third arm")
    args = ap.parse_args()
    dist = require_dist()
    arms: dict[str, tuple[Path, int]] = {"held": (dist, DEFAULT_HOLD_S), "let go": (dist, 0)}
    if args.before is not None:
        arms["held, before"] = (args.before, DEFAULT_HOLD_S)
    got: dict[str, list[dict[str, float]]] = {a: [] for a in arms}
    for r, name in rotated(list(arms), args.rounds):
        with tempfile.TemporaryDirectory(prefix="protolens-hold-") as tmp:
            got[name].append(held_tab(Path(tmp), *arms[name], args.visual, args.window))
        print(f"round {r + 1}, {name}: {sum(got[name][-1].values()):.0f} ms/s", flush=True)
    print(f"\nCPU ms per second while /anim/'s tab is held or let go "
          f"(visual metrics {'on' if args.visual else 'off'}; medians of {args.rounds} rounds)")
    print("arm".ljust(14) + "".join(n.rjust(10) for n in (*KINDS, "total")))
    totals = {a: [sum(x.values()) for x in xs] for a, xs in got.items()}
    for name, xs in got.items():
        print(name.ljust(14) + "".join(f"{statistics.median(x[n] for x in xs):10.1f}"
                                       for n in KINDS) + f"{statistics.median(totals[name]):10.1f}")
    for num, den in (("held", "let go"), ("held", "held, before")):
        if den in totals:
            mid, lo, hi = ratio_ci(totals[num], totals[den])
            print(f"total {num} / {den}: x{mid:.3f} (95% interval {lo:.3f}-{hi:.3f})")


if __name__ == "__main__":
    main()
