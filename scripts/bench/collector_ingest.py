#!/usr/bin/env python3
"""Collector ingest throughput: bundles of N navigations (default 1,000, with K requests each)
uploaded by U concurrent volunteers (default 8, a token each) over HTTPS on loopback to a real
``protolens collector serve`` (TLS, validation, staged files, catalog commit, move into the
dataset), beside writing the same rows with pyarrow directly (the limit: one ``pq.write_table``
per table, no validation, no fsync), on one thread and on as many threads as uploaders. The arms
alternate, R rounds each. Prints bundles/s of each arm per round, the ratios collector/pyarrow
per round, their medians and 95% intervals of the median (bootstrap over rounds, percentile),
and each round's CPU of the collector's worker processes (from /proc): how many cores they kept
busy and the busiest one's share, which shows when the uploaders' kept-alive connections sit
unevenly on the workers (each worker is bound to about one core by its interpreter's lock).
Each uploader sends its share of a round's bundles one after another over one client, as
``contribute`` sends a backlog (one TLS connection, kept alive); ``--fresh-clients``: a new
client, trust store and TLS handshake per bundle, as every upload did before 2026-11-28.

Usage: .venv/bin/python scripts/bench/collector_ingest.py [--bundles 24] [--navigations 1000]
       [--requests 20] [--rounds 7] [--uploaders 8] [--workers 2] [--fresh-clients]
"""

from __future__ import annotations

import argparse
import io
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pyarrow.parquet as pq  # noqa: E402

from protolens.collector.client import open_client, upload  # noqa: E402
from protolens.share.bundle import TABLES, read_bundle  # noqa: E402
from scripts.devkit.bundle_forge import scaled  # noqa: E402
from scripts.devkit.collector import bundle_bytes, running_collector  # noqa: E402
from scripts.devkit.proccpu import cpu_s  # noqa: E402
from scripts.devkit.store_builder import ingest_all, lab_record  # noqa: E402


def median_interval(xs: list[float], reps: int = 4000, seed: int = 7) -> tuple[float, float]:
    """Bootstrap percentile 95% interval of the median of ``xs``."""
    rnd = random.Random(seed)
    meds = sorted(statistics.median(rnd.choices(xs, k=len(xs))) for _ in range(reps))
    return meds[int(0.025 * reps)], meds[int(0.975 * reps) - 1]


def _direct(tables: dict[str, object], out: Path, i: int) -> None:
    for name, table in tables.items():
        buf = io.BytesIO()
        pq.write_table(table, buf, compression="zstd")
        (out / f"{i}-{name}.parquet").write_bytes(buf.getvalue())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundles", type=int, default=24, help="bundles per round")
    ap.add_argument("--navigations", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--uploaders", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2, help="collector serve --workers")
    ap.add_argument("--fresh-clients", action="store_true",
                    help="a new HTTPS client (and TLS handshake) for every bundle")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-collector-") as name:
        tmp = Path(name)
        db = tmp / "s.db"
        ingest_all(db, (lab_record(i, "bench", f"p{i % 20}", "c", ("h1", "h2", "h3")[i % 3],
                                   i, 1000.0 + i, n_requests=args.requests)
                        for i in range(args.navigations)))
        paths = [tmp / f"b{i}.tar" for i in range(args.bundles * args.rounds)]
        bundle_bytes(db, tmp / "base.tar")
        # a navigation is stored once: each bundle carries the loads under ids of its own, with
        # timings jittered (+-10%), so no bundle is a contributor's near-duplicate of another
        bodies = [scaled(tmp / "base.tar", p, 1, f"b{i}", seed=i) for i, p in enumerate(paths)]
        rows = sum(read_bundle(paths[0]).manifest["tables"][t]["rows"] for t in TABLES)
        print(f"{args.bundles} bundles per round x {args.rounds} rounds, {args.uploaders} "
              f"uploaders, collector --workers {args.workers}; each bundle {args.navigations} "
              f"navigations, {rows} rows, {len(bodies[0]) / 1e6:.2f} MB")
        ratios, ratios_t, served, direct, threaded = [], [], [], [], []
        busy: list[float] = []
        top: list[float] = []
        with running_collector(tmp, "--workers", str(args.workers), "--rate", "100000",
                               "--burst", "100000") as c, \
                ThreadPoolExecutor(args.uploaders) as pool:
            tokens = [c.token(f"vol-{u}") for u in range(args.uploaders)]
            clients = [] if args.fresh_clients else [open_client(c.ca)
                                                     for _ in range(args.uploaders)]

            def volunteer(u: int, batch: list[bytes]) -> None:
                """Uploader ``u`` sends bundles u, u + U, u + 2U, ... of the round in turn."""
                for body in batch[u::args.uploaders]:
                    upload(c.url, tokens[u], body, ca_cert=c.ca, sleep=time.sleep,
                           client=clients[u] if clients else None)

            deadline = time.monotonic() + 30  # uvicorn spawns the workers one by one
            while args.workers > 1 and len(c.workers()) < args.workers and \
                    time.monotonic() < deadline:
                time.sleep(0.1)
            workers = c.workers() or ([c.proc.pid] if c.proc else [])
            for r in range(args.rounds):
                batch = bodies[r * args.bundles:(r + 1) * args.bundles]
                before = [cpu_s(w) for w in workers]
                t = time.perf_counter()
                list(pool.map(volunteer, range(args.uploaders), [batch] * args.uploaders))
                s_collector = time.perf_counter() - t
                used = [cpu_s(w) - b for w, b in zip(workers, before, strict=True)]
                busy.append(sum(used) / s_collector)
                top.append(max(used) / max(sum(used), 1e-9))
                tables = [read_bundle(p).tables
                          for p in paths[r * args.bundles:(r + 1) * args.bundles]]
                out = tmp / f"direct{r}"
                out.mkdir()
                t = time.perf_counter()
                for i, tabs in enumerate(tables):
                    _direct(tabs, out, i)
                s_one = time.perf_counter() - t
                t = time.perf_counter()
                list(pool.map(_direct, tables, [out] * len(tables), range(len(tables))))
                s_many = time.perf_counter() - t
                served.append(args.bundles / s_collector)
                direct.append(args.bundles / s_one)
                threaded.append(args.bundles / s_many)
                ratios.append(served[-1] / direct[-1])
                ratios_t.append(served[-1] / threaded[-1])
                print(f"round {r + 1}: collector {served[-1]:.1f} bundles/s "
                      f"({served[-1] * rows:,.0f} rows/s); pyarrow {direct[-1]:.1f} bundles/s "
                      f"on 1 thread, {threaded[-1]:.1f} on {args.uploaders}; collector/pyarrow "
                      f"{ratios[-1]:.2f} (1 thread), {ratios_t[-1]:.2f} ({args.uploaders}); "
                      f"workers busy {busy[-1]:.2f} cores, the busiest {top[-1]:.0%} of it",
                      flush=True)
            for client in clients:
                client.close()
    lo, hi = median_interval(ratios)
    lo_t, hi_t = median_interval(ratios_t)
    print(f"median over {args.rounds} rounds: collector {statistics.median(served):.1f} "
          f"bundles/s ({statistics.median(served) * rows:,.0f} rows/s), pyarrow "
          f"{statistics.median(direct):.1f} bundles/s on 1 thread, "
          f"{statistics.median(threaded):.1f} on {args.uploaders}")
    print(f"collector/pyarrow (1 thread) {statistics.median(ratios):.2f} (95% interval "
          f"{lo:.2f}-{hi:.2f}); collector/pyarrow ({args.uploaders} threads) "
          f"{statistics.median(ratios_t):.2f} ({lo_t:.2f}-{hi_t:.2f}); target >= 0.5")
    print(f"collector workers: {statistics.median(busy):.2f} cores busy, the busiest worker "
          f"{statistics.median(top):.0%} of that (medians over rounds; {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
