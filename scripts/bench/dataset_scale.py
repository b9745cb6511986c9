#!/usr/bin/env python3
"""``compare --dataset`` at full scale: 10,000,000 navigations x 50 requests from 10,000
contributors (the collector's Parquet layout, generated once into ``--data`` outside the
repository and kept; a stamp file says with which parameters and how long it took). Times, each
in one run: a plain DuckDB GROUP BY over the navigations files (the limit), then what
``compare --dataset --source experiment`` does (``research/compare.run``: the cells, then the
stratified statistics) on DuckDB, then on Spark on a local standalone cluster this script starts
(one master and two workers of one core each, ``spark-class``, loopback only) and stops.
Checks that both engines give the same cells and the same comparisons (verdicts, intervals).

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/dataset_scale.py
       [--data /work/scale-data] [--navigations 10000000] [--contributors 10000] [--no-spark]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "bench"))

import numpy as np  # noqa: E402
from dataset_compare import INCOMPLETE, generate, plain_group_by  # noqa: E402


def _part(args: tuple[Path, int, int, int, int, int, int]) -> None:
    data, navs, reqs, contributors, files, first, last = args
    generate(data, navs, reqs, contributors, files, first, last)


def ensure_data(data: Path, navs: int, reqs: int, contributors: int, files: int,
                procs: int) -> dict[str, object]:
    """The dataset at ``data``, generated unless its stamp names the same parameters."""
    want = {"navigations": navs, "requests": reqs, "contributors": contributors,
            "incomplete": INCOMPLETE,
            "files": files}
    stamp = data / "stamp.json"
    if stamp.is_file():
        got = json.loads(stamp.read_text())
        if {k: got.get(k) for k in want} == want:
            return dict(got)
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    t = time.perf_counter()
    step = -(-files // (procs * 8))
    jobs = [(data, navs, reqs, contributors, files, f, min(f + step, files))
            for f in range(0, files, step)]
    with ProcessPoolExecutor(procs) as pool:
        list(pool.map(_part, jobs))
    size = sum(p.stat().st_size for p in data.rglob("*.parquet"))
    got = {**want, "seconds": round(time.perf_counter() - t, 1), "bytes": size,
           "processes": procs}
    stamp.write_text(json.dumps(got))
    return got


@contextmanager
def spark_cluster(workers: int, memory: str, log: Path) -> Iterator[str]:
    """A standalone Spark cluster on loopback: a master and ``workers`` workers of one core."""
    import pyspark

    # pip's pyspark ships the distribution inside the package; the venv's bin/spark-class
    # searches for SPARK_HOME next to itself and fails, so point it at the package.
    home = Path(pyspark.__file__).resolve().parent
    spark_class = str(home / "bin" / "spark-class")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_MASTER_HOST": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1"}
    port = 7077
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    with log.open("ab") as out:
        try:
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", "0"], env=env, stdout=out, stderr=out))
            time.sleep(4)
            for i in range(workers):
                procs.append(subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host",
                     "127.0.0.1", "--cores", "1", "--memory", memory, "--webui-port", "0",
                     "--work-dir", str(log.parent / f"spark-work-{i}")],
                    env=env, stdout=out, stderr=out))
            time.sleep(6)
            yield url
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()


def timed_compare(data: Path, engine: str, master: str | None
                  ) -> tuple[Any, list[dict[str, Any]], float, float]:
    """``research/compare.run``'s steps for ``--dataset``: cells, then statistics (the cells'
    time includes the count of the incomplete loads they leave out, which the command prints,
    on DuckDB whatever the engine)."""
    from protolens.research.compare import Request, dataset_cells, dataset_rows
    from protolens.store.dataset import incomplete_loads

    r = Request(dataset=data, source="experiment", engine=engine, spark_master=master)
    t = time.perf_counter()
    cells = dataset_cells(r)
    left = incomplete_loads(data, "experiment", False, "experiment")
    cells_s = time.perf_counter() - t
    print(f"{engine}: {left:,} incomplete loads left out", flush=True)
    t = time.perf_counter()
    rows, _ = dataset_rows(r, cells)
    return cells, rows, cells_s, time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/work/scale-data"))
    ap.add_argument("--navigations", type=int, default=10_000_000)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--contributors", type=int, default=10_000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--worker-memory", default="6g")
    args = ap.parse_args()
    if ROOT in args.data.resolve().parents:
        print("error: --data must be outside the repository", file=sys.stderr)
        return 2
    stamp = ensure_data(args.data, args.navigations, args.requests, args.contributors,
                        args.files, args.procs)
    if args.generate_only:
        print(json.dumps(stamp))
        return 0
    print(f"dataset {args.data}: {stamp['navigations']:,} navigations x {stamp['requests']} "
          f"requests from {stamp['contributors']:,} contributors, "
          f"{int(stamp['bytes']) / 1e9:.2f} GB Parquet, generated in {stamp['seconds']} s "
          f"on {stamp['processes']} processes", flush=True)
    groups, plain_s = plain_group_by(args.data)
    print(f"plain DuckDB GROUP BY: {groups:,} groups in {plain_s:.2f} s", flush=True)
    cells, rows, cells_s, stats_s = timed_compare(args.data, "duckdb", None)
    sig = sum(1 for r in rows if r["significant"])
    print(f"DuckDB: {len(cells.counts):,} cells in {cells_s:.2f} s, statistics ({len(rows)} "
          f"comparisons, {sig} significant) {stats_s:.2f} s: compare --dataset "
          f"{cells_s + stats_s:.2f} s (target <= 60 s), {(cells_s + stats_s) / plain_s:.1f}x "
          "the plain GROUP BY", flush=True)
    if args.no_spark:
        return 0
    with spark_cluster(2, args.worker_memory, args.data.parent / "spark-bench.log") as url:
        scells, srows, scells_s, sstats_s = timed_compare(args.data, "spark", url)
    same_cells = all(a[1] == b[1] and np.array_equal(a[0], b[0])
                     for a, b in zip(cells.keys, scells.keys, strict=True)) and \
        np.array_equal(cells.counts, scells.counts) and np.array_equal(cells.values, scells.values)
    print(f"Spark standalone (master + 2 workers of 1 core, {url}): {len(scells.counts):,} "
          "cells in "
          f"{scells_s:.2f} s (JVM start included), statistics {sstats_s:.2f} s: "
          f"{scells_s + sstats_s:.2f} s; same cells as DuckDB: {same_cells}; same comparisons "
          f"and verdicts: {rows == srows}")
    return 0 if same_cells and rows == srows else 1


if __name__ == "__main__":
    sys.exit(main())
