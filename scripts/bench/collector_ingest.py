#!/usr/bin/env python3
"""Collector ingest throughput: bundles of N navigations (default 1,000, with K requests each)
uploaded one after the other over HTTPS on loopback to a real ``protolens collector serve``
(TLS, validation, atomic writes, catalog), beside writing the same rows with pyarrow directly
(the limit: one ``pq.write_table`` per table, no validation, no fsync). Prints bundles/s, rows/s,
and the ratio, for each of R rounds (median and spread).

Usage: .venv/bin/python scripts/bench/collector_ingest.py [--bundles 10] [--navigations 1000]
       [--requests 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pyarrow.parquet as pq  # noqa: E402

from protolens.collector.client import upload  # noqa: E402
from protolens.share.bundle import TABLES, read_bundle  # noqa: E402
from scripts.devkit.bundle_forge import reid  # noqa: E402
from scripts.devkit.collector import bundle_bytes, running_collector  # noqa: E402
from scripts.devkit.store_builder import ingest_all, lab_record  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundles", type=int, default=10)
    ap.add_argument("--navigations", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-collector-") as name:
        tmp = Path(name)
        db = tmp / "s.db"
        ingest_all(db, (lab_record(i, "bench", f"p{i % 20}", "c", ("h1", "h2", "h3")[i % 3],
                                   i, 1000.0 + i, n_requests=args.requests)
                        for i in range(args.navigations)))
        paths = [tmp / f"b{i}.tar" for i in range(args.bundles * args.rounds)]
        bundle_bytes(db, tmp / "base.tar")
        # a navigation is stored once: each bundle carries the loads under ids of its own
        bodies = [reid(tmp / "base.tar", p, f"b{i}") for i, p in enumerate(paths)]
        rows = sum(read_bundle(paths[0]).manifest["tables"][t]["rows"] for t in TABLES)
        print(f"{args.bundles} bundles per round x {args.rounds} rounds; each bundle "
              f"{args.navigations} navigations, {rows} rows, {len(bodies[0]) / 1e6:.2f} MB")
        ratios, served, direct = [], [], []
        with running_collector(tmp) as c:
            token = c.token("bench")
            for r in range(args.rounds):
                batch = bodies[r * args.bundles:(r + 1) * args.bundles]
                t = time.perf_counter()
                for body in batch:
                    upload(c.url, token, body, ca_cert=c.ca, sleep=time.sleep)
                s_collector = time.perf_counter() - t
                tables = [read_bundle(p).tables
                          for p in paths[r * args.bundles:(r + 1) * args.bundles]]
                out = tmp / f"direct{r}"
                out.mkdir()
                t = time.perf_counter()
                for i, tabs in enumerate(tables):
                    for name_, table in tabs.items():
                        buf = io.BytesIO()
                        pq.write_table(table, buf, compression="zstd")
                        (out / f"{i}-{name_}.parquet").write_bytes(buf.getvalue())
                s_direct = time.perf_counter() - t
                served.append(args.bundles / s_collector)
                direct.append(args.bundles / s_direct)
                ratios.append(s_collector / s_direct)
                print(f"round {r + 1}: collector {served[-1]:.1f} bundles/s "
                      f"({served[-1] * rows:,.0f} rows/s); pyarrow direct {direct[-1]:.1f} "
                      f"bundles/s ({direct[-1] * rows:,.0f} rows/s); ratio {ratios[-1]:.1f}x")
    print(f"median over {args.rounds} rounds: collector {statistics.median(served):.1f} "
          f"bundles/s ({statistics.median(served) * rows:,.0f} rows/s), pyarrow "
          f"{statistics.median(direct):.1f} bundles/s; collector takes "
          f"{statistics.median(ratios):.1f}x the time (range {min(ratios):.1f}-"
          f"{max(ratios):.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
