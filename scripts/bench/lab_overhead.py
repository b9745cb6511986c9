#!/usr/bin/env python3
"""Benchmark: what a lab load costs beyond the page itself.

Runs a small campaign on the testbed (one small page, h2, `clean`, N repetitions) through the real
CLI path, then prints the per-load overhead (wall time of the load, browser start to record
stored, minus its PLT: median, quartiles, range, n), loads per minute (over the whole campaign,
and from one load's start to the next's), and where the time of a median load went, from the
timestamps each load leaves behind:

    start     the runner starts the load (loads.started_at_ms; Popen follows within ms)
    host      the native host is up (its "serving" log line: Chromium started, the extension's
              service worker connected)
    nav       the page's navigation start (navigations.started_at_ms)
    load      its load event (nav + load_ms)
    last      its last network activity (nav + the latest request end_ms)
    stored    the host committed the record (navigations.ingested_at_ms)
    done      the runner saw it stored (start + wall_ms)
    next      the next load's start (browser stop, ground truth, bookkeeping in between)

Needs root.

Last measured (2026-11-24, 2-core machine, Chromium 156, ifip18-baidu, h2, clean, 10 loads per
run, two rounds alternating the code before the lab's quiet and polling changes and after them):
overhead (wall - PLT) 3,171 / 3,154 ms before, 1,020 / 1,022 ms after; loads per minute 16.2 /
16.2 before, 42.4 / 41.9 after. Where it went: last -> stored 2,180 ms -> 540 ms (the 2 s network
quiet of the recorder -> the lab's 500 ms for testbed pages, and the extension's poll 250 -> 50 ms),
start -> host 818 -> 395 ms (the host imports the contribution code only when it needs it; no
omnibox WebUI renderer), stored -> done 27 -> 12 ms (StoreWatch).

    .venv/bin/python scripts/bench/lab_overhead.py [--reps 10] [--page ifip18-baidu]
        [--conditions clean] [--no-visual] [--no-overlap] [--pair ROUNDS] [--quiet-ms Q]

``--pair R``: R rounds, each a campaign with the next browser started during the page's quiet
(lab run's default on the testbed) and one without (``--no-overlap``), in alternating order;
prints both arms' per-load cost on the campaign's clock (median period between load starts
minus median PLT), and their PLTs (median ratio with a bootstrap 95% interval): the overlap must
not change what is measured.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

SERVING = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) "
                     r"protolens\.host\[\d+\] DEBUG serving")

PHASES = (("start -> host", "start", "host"), ("host -> nav", "host", "nav"),
          ("nav -> load (PLT)", "nav", "load"), ("load -> last", "load", "last"),
          ("last -> stored", "last", "stored"), ("stored -> done", "stored", "done"),
          ("done -> next", "done", "next"))


def host_starts(log: Path) -> list[float]:
    """Epoch ms of every host process's "serving" line, in order (one host per load)."""
    out = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        m = SERVING.match(line)
        if m:
            out.append(datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000)
    return out


def quartiles(xs: list[float]) -> str:
    if len(xs) < 2:
        return f"n={len(xs)}"
    q1, _, q3 = statistics.quantiles(xs, n=4)
    return f"IQR {q1:.0f}-{q3:.0f}, range {min(xs):.0f}-{max(xs):.0f}, n={len(xs)}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--page", default="ifip18-baidu")
    ap.add_argument("--arm", default="h2")
    ap.add_argument("--testbed", default="plb")
    ap.add_argument("--conditions", default="clean", help="testbed profile (default clean)")
    ap.add_argument("--no-visual", action="store_true",
                    help="lab run --no-visual (the visual metrics are on by default)")
    ap.add_argument("--quiet-ms", type=int, default=None,
                    help="lab run --quiet-ms (default: lab run's own for the page)")
    ap.add_argument("--no-overlap", action="store_true",
                    help="lab run --no-overlap (each browser started at its load's turn)")
    ap.add_argument("--pair", type=int, default=0, metavar="ROUNDS",
                    help="alternate overlap and --no-overlap campaigns, ROUNDS each")
    args = ap.parse_args()
    if args.pair:
        paired(args)
        return
    one(args, not args.no_overlap, verbose=True)


def paired(args: argparse.Namespace) -> None:
    plts: dict[bool, list[float]] = {True: [], False: []}
    periods: dict[bool, list[float]] = {True: [], False: []}
    for r in range(args.pair):
        for overlap in ((True, False) if r % 2 == 0 else (False, True)):
            got = one(args, overlap, verbose=False)
            plts[overlap] += got["plts"]
            periods[overlap] += got["periods"]
            print(f"round {r + 1}, {'overlap' if overlap else 'no overlap'}: median PLT "
                  f"{statistics.median(got['plts']):.0f} ms, median period "
                  f"{statistics.median(got['periods']):.0f} ms", flush=True)
    for overlap in (False, True):
        cost = statistics.median(periods[overlap]) - statistics.median(plts[overlap])
        print(f"{'overlap   ' if overlap else 'no overlap'}: {len(plts[overlap])} loads, median "
              f"PLT {statistics.median(plts[overlap]):.0f} ms, per-load cost on the campaign's "
              f"clock (median period - median PLT) {cost:.0f} ms, loads per minute "
              f"{60_000 / statistics.median(periods[overlap]):.1f}")
    lo, hi = ratio_interval(plts[True], plts[False])
    print(f"PLT overlap / no overlap: median ratio "
          f"{statistics.median(plts[True]) / statistics.median(plts[False]):.3f} "
          f"(95% interval {lo:.3f}-{hi:.3f})")


def ratio_interval(a: list[float], b: list[float], reps: int = 4000,
                   seed: int = 7) -> tuple[float, float]:
    """Bootstrap percentile 95% interval of median(a) / median(b)."""
    rnd = random.Random(seed)
    xs = sorted(statistics.median(rnd.choices(a, k=len(a)))
                / statistics.median(rnd.choices(b, k=len(b))) for _ in range(reps))
    return xs[int(0.025 * reps)], xs[int(0.975 * reps) - 1]


def one(args: argparse.Namespace, overlap: bool, verbose: bool) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        db, hostlog = Path(tmp) / "bench.db", Path(tmp) / "host.log"
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "protolens.cli", "lab", "run", "--pages", args.page,
                        "--arms", args.arm, "--conditions", args.conditions, "--reps",
                        str(args.reps), "--campaign", "bench", "--testbed", args.testbed,
                        "--seed", "1", *(["--no-visual"] if args.no_visual else []),
                        *([] if args.quiet_ms is None else ["--quiet-ms", str(args.quiet_ms)]),
                        "--overlap" if overlap else "--no-overlap"],
                       env={**os.environ, "PROTOLENS_DB": str(db), "PROTOLENS_DEBUG": "1",
                            "PROTOLENS_HOST_LOG": str(hostlog)},
                       check=True, stdout=subprocess.DEVNULL)
        elapsed = time.monotonic() - started
        hosts = host_starts(hostlog)
        with sqlite3.connect(db) as conn:
            every = conn.execute("SELECT started_at_ms FROM loads ORDER BY started_at_ms")
            starts = [s for (s,) in every]
            rows = conn.execute("""
                SELECT l.started_at_ms, l.wall_ms, n.started_at_ms, n.load_ms, n.ingested_at_ms,
                       (SELECT max(r.end_ms) FROM requests r WHERE r.navigation_id = n.id)
                FROM loads l JOIN navigations n ON n.load_id = l.load_id
                WHERE l.status = 'ok' ORDER BY l.started_at_ms""").fetchall()
    overhead = [wall - plt for _, wall, _, plt, _, _ in rows if plt is not None]
    plts = [plt for _, _, _, plt, _, _ in rows if plt is not None]
    periods = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    if not verbose:
        return {"plts": plts, "periods": periods}
    print(f"page {args.page}, arm {args.arm}, {args.conditions}, visual metrics "
          f"{'off' if args.no_visual else 'on'}: {len(rows)} loads ok of {args.reps}")
    print(f"median PLT: {statistics.median(plts):.0f} ms")
    print(f"median per-load overhead (wall - PLT): {statistics.median(overhead):.0f} ms "
          f"({quartiles(overhead)})")
    print(f"loads per minute, whole campaign incl. testbed check and browser stops: "
          f"{len(rows) / elapsed * 60:.1f}")
    if periods:
        print(f"loads per minute, one load's start to the next's (median period "
              f"{statistics.median(periods):.0f} ms): {60_000 / statistics.median(periods):.1f}")
        print(f"per-load cost on the campaign's clock (median period - median PLT): "
              f"{statistics.median(periods) - statistics.median(plts):.0f} ms")
    print(f"overhead / PLT: {statistics.median(overhead) / statistics.median(plts):.1f}")
    if len(hosts) != len(starts):
        print(f"(phases skipped: {len(hosts)} host starts logged for {len(starts)} loads)")
        return {"plts": plts, "periods": periods}
    host_of = dict(zip(starts, hosts, strict=True))
    next_of = dict(zip(starts, starts[1:], strict=False))
    marks = [{"start": s, "host": host_of[s], "nav": nav, "load": nav + plt,
              "last": nav + (last if last is not None else plt), "stored": ingested,
              "done": s + wall, "next": next_of.get(s)}
             for s, wall, nav, plt, ingested, last in rows if plt is not None]
    print("where the time went (ms; median, IQR, range):")
    for name, a, b in PHASES:
        xs = [m[b] - m[a] for m in marks if m[a] is not None and m[b] is not None]
        if xs:
            print(f"  {name:<18} {statistics.median(xs):6.0f}  ({quartiles(xs)})")
    return {"plts": plts, "periods": periods}


if __name__ == "__main__":
    main()
