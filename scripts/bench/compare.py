#!/usr/bin/env python3
"""``compare`` throughput: a generated store of N navigations x K requests (default 100,000 x 50
= 5M request rows), then ``compare`` (SQLite adapter + the rank test's interval and p-value per
cell and arm pair) beside a plain SQL aggregate over the same rows (the limit), printed as a ratio.

Usage: .venv/bin/python scripts/bench/compare.py [--navigations 100000] [--requests 50]
       [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.analysis.compare import compare  # noqa: E402
from protolens.analysis.observe import observations  # noqa: E402
from protolens.store import open_ro  # noqa: E402
from protolens.store.compare import campaign_aggregate, compare_rows  # noqa: E402
from scripts.devkit.synthetic import generate  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--navigations", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--dir", type=Path)
    ap.add_argument("--keep", action="store_true", help="Keep the generated store.")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="bench-compare-", dir=args.dir)
    db = Path(tmp.name) / "bench.db"
    n, k = args.navigations, args.requests

    t = time.perf_counter()
    generate(db, n, k, chunk=20_000)
    gen_s = time.perf_counter() - t
    rows = n * k
    print(f"generate: {n} navigations, {rows} requests in {gen_s:.1f} s "
          f"({rows / gen_s:,.0f} request rows/s), {db.stat().st_size / 1e6:.0f} MB")

    conn = open_ro(db)
    conn.execute("SELECT count(*) FROM requests").fetchone()  # warm the page cache
    t = time.perf_counter()
    agg = campaign_aggregate(conn, "bench")
    sql_s = time.perf_counter() - t

    t = time.perf_counter()
    fetched = compare_rows(conn, campaign="bench")
    fetch_s = time.perf_counter() - t
    t = time.perf_counter()
    result = compare(observations(fetched, "plt", "campaign"))
    stats_s = time.perf_counter() - t
    total = fetch_s + stats_s
    significant = sum(c.significant for c in result)

    print(f"plain SQL aggregate (count, mean per page x condition x arm): {len(agg)} groups "
          f"in {sql_s:.2f} s = {n / sql_s:,.0f} navigations/s")
    print(f"compare: {len(result)} comparisons ({significant} significant) in {total:.2f} s = "
          f"{n / total:,.0f} navigations/s  [fetch {fetch_s:.2f} s, statistics {stats_s:.2f} s]")
    print(f"ratio compare / plain SQL: {total / sql_s:.2f}x the time "
          f"(fetch alone {fetch_s / sql_s:.2f}x)")
    conn.close()
    if args.keep:
        print(f"kept: {db}")
    else:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except sqlite3.Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
