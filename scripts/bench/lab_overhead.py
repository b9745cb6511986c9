#!/usr/bin/env python3
"""Benchmark of issue 4: what a lab load costs beyond the page itself.

Runs a small campaign on the testbed (one small page, h2, `clean`, N repetitions) through the real
CLI path, then prints the median per-load overhead (wall time of the load, browser start to record
stored, minus its PLT) and loads per minute over the whole campaign. Needs root.

    .venv/bin/python scripts/bench/lab_overhead.py [--reps 10] [--page ifip18-baidu]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--page", default="ifip18-baidu")
    ap.add_argument("--testbed", default="plb")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "protolens.cli", "lab", "run", "--pages", args.page,
                        "--arms", "h2", "--conditions", "clean", "--reps", str(args.reps),
                        "--campaign", "bench", "--testbed", args.testbed, "--seed", "1"],
                       env={**os.environ, "PROTOLENS_DB": str(db)}, check=True,
                       stdout=subprocess.DEVNULL)
        elapsed = time.monotonic() - started
        with sqlite3.connect(db) as conn:
            rows = conn.execute("""SELECT l.wall_ms, n.load_ms FROM loads l
                                   JOIN navigations n ON n.load_id = l.load_id
                                   WHERE l.status = 'ok'""").fetchall()
    overhead = [wall - plt for wall, plt in rows if plt is not None]
    plts = [plt for _, plt in rows if plt is not None]
    print(f"page {args.page}, {len(rows)} loads ok of {args.reps}")
    print(f"median PLT: {statistics.median(plts):.0f} ms")
    print(f"median per-load overhead (wall - PLT): {statistics.median(overhead):.0f} ms")
    print(f"loads per minute (whole campaign incl. testbed up/down): "
          f"{len(rows) / elapsed * 60:.1f}")
    print(f"overhead / PLT: {statistics.median(overhead) / statistics.median(plts):.1f}")


if __name__ == "__main__":
    main()
