#!/usr/bin/env python3
"""``compare --dataset`` at scale: a generated collector dataset (default 1,000,000 navigations x
50 requests from 1,000 contributors, written straight as the collector's Parquet layout), then
the cells of ``compare --source experiment`` computed by DuckDB and by Spark (local mode), each
followed by the same statistics, beside a plain DuckDB GROUP BY over the navigations files (the
limit: no join with the requests, no per-cell value lists). Prints each time and the ratios.

Usage: .venv/bin/python scripts/bench/dataset_compare.py [--navigations 1000000]
       [--requests 50] [--contributors 1000] [--no-spark] [--dir DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from protolens.analysis.observe import Observation  # noqa: E402
from protolens.analysis.stratified import compare_stratified  # noqa: E402
from protolens.collector.layout import dataset_dir, table_glob  # noqa: E402
from protolens.share.bundle import SCHEMAS  # noqa: E402
from protolens.store import dataset  # noqa: E402

DOMAINS = [f"site{i}.example" for i in range(50)]


INCOMPLETE = 0.03
"""The share of generated loads whose record is incomplete."""


def _table(name: str, cols: dict[str, object], n: int) -> pa.Table:
    schema = SCHEMAS[name].append(pa.field("contributor", pa.string())).append(
        pa.field("bundle", pa.string()))
    arrays = [cols.get(f.name, pa.nulls(n, f.type)) for f in schema]
    return pa.Table.from_arrays([a if isinstance(a, pa.Array) else pa.array(a, f.type)
                                 for a, f in zip(arrays, schema, strict=True)], schema=schema)


def _strings(values: np.ndarray) -> pa.Array:
    """Numbers as an Arrow string array (``pa.array`` of a NumPy string array is slow)."""
    return pc.cast(pa.array(values), pa.string())


def generate(data: Path, navs: int, reqs: int, contributors: int, files: int,
             first: int = 0, last: int | None = None) -> None:
    """Files ``first`` to ``last`` of the dataset (all by default): the requests' columns are
    taken from the navigations' with Arrow's ``take``, never through Python strings. File ``f``
    draws from its own seed, so any split of the files gives the same dataset."""
    per_file = navs // files
    domains = pa.array(DOMAINS)
    origins = pa.array([f"https://{d}" for d in DOMAINS])
    arms = pa.array(["h2", "h3"])
    for f in range(first, files if last is None else last):
        rng = np.random.default_rng([1, f])
        g = np.arange(f * per_file, (f + 1) * per_file)
        contrib = g % contributors
        arm_i = (rng.random(per_file) >= 0.5).astype(np.int64)  # 0 h2, 1 h3
        net = np.where(rng.random(per_file) < 0.3, "3g", "4g")
        dom = rng.integers(0, len(DOMAINS), per_file)
        plt = 800 + 5 * contrib + rng.gamma(4, 100, per_file)
        plt = np.where((arm_i == 1) & (net == "3g"), plt - 80, plt)
        ids = pc.binary_join_element_wise("n", _strings(g), "")
        bundle = pc.binary_join_element_wise("b", _strings(contrib * 1000 + f), "")
        origin = origins.take(pa.array(dom))
        nav = _table("navigations", {
            "id": ids, "schema": pa.array(np.ones(per_file, np.int64)),
            "source": pa.array(["experiment"] * per_file), "url": origin,
            "origin": origin, "url_detail": pa.array(["origin"] * per_file),
            "started_at_ms": pa.array(1.76e12 + g * 1000.0),
            "network_effective_type": pa.array(net),
            "warm": pa.array(np.zeros(per_file, np.int64)),
            "failed": pa.array(np.zeros(per_file, np.int64)), "load_ms": pa.array(plt),
            # 3% of the loads' records incomplete (a dialog, a hidden tab, a cap; ProtoLens's
            # choice, not from the papers), from a generator of their own so that every other
            # column is what it was before they were added: the rule that leaves them out
            # (record/comparable.py) works at scale too
            "incomplete": pa.array((np.random.default_rng([2, f]).random(per_file) < INCOMPLETE)
                                   .astype(np.int64)),
            "ttfb_ms": pa.array(plt / 10), "arm": arms.take(pa.array(arm_i)),
            "contributor": pc.binary_join_element_wise("vol-", _strings(contrib), ""),
            "bundle": bundle}, per_file)
        rep = pa.array(np.repeat(np.arange(per_file), reqs))
        seq = np.tile(np.arange(reqs), per_file)
        n = per_file * reqs
        family = np.where(seq == 0, np.repeat(arm_i, reqs), 0)
        req = _table("requests", {
            "navigation_id": ids.take(rep), "seq": pa.array(seq),
            "request_id": _strings(np.arange(reqs)).take(pa.array(seq)),
            "url": origin.take(rep), "host": domains.take(pa.array(dom)).take(rep),
            "family": arms.take(pa.array(family)),
            "encoded_bytes": pa.array(rng.integers(100, 100_000, n)),
            "is_main_document": pa.array((seq == 0).astype(np.int64)),
            "start_ms": pa.array(seq * 10.0), "failed": pa.array(np.zeros(n, np.int64)),
            "bundle": bundle.take(rep)}, n)
        empty = [] if f else [(t, _table(t, {}, 0)) for t in ("connections", "hosts")]
        for name, table in [("navigations", nav), ("requests", req), *empty]:
            out = dataset_dir(data) / f"table={name}" / "day=2025-11-24" / f"part{f}.parquet"
            out.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(table, out, compression="zstd")


def plain_group_by(data: Path) -> tuple[int, float]:
    """The limit ``compare --dataset`` is held to: a DuckDB GROUP BY over the navigations files
    alone (count and median PLT per contributor, origin, network and arm). Groups, seconds."""
    t = time.perf_counter()
    con = duckdb.connect()
    plain = con.execute(
        "SELECT contributor, origin, network_effective_type, arm, count(*), median(load_ms) "
        f"FROM read_parquet('{table_glob(data, 'navigations')}') GROUP BY ALL").fetchall()
    con.close()
    return len(plain), time.perf_counter() - t


def stats(rows: list[dict[str, object]]) -> int:
    obs: dict[str, list[Observation]] = {}
    for r in rows:
        obs.setdefault(str(r["contributor"]), []).extend(
            Observation(str(r["grp"]), str(r["cond"]), str(r["arm"]), float(v))
            for v in r["vals"])  # type: ignore[attr-defined]
    return sum(c.significant for c, _ in compare_stratified(obs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--navigations", type=int, default=1_000_000)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--contributors", type=int, default=1000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--dir", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dataset-", dir=args.dir) as name:
        data = Path(name)
        t = time.perf_counter()
        generate(data, args.navigations, args.requests, args.contributors, args.files)
        size = sum(p.stat().st_size for p in data.rglob("*.parquet"))
        print(f"generated {args.navigations:,} navigations x {args.requests} requests from "
              f"{args.contributors} contributors in {time.perf_counter() - t:.0f} s, "
              f"{size / 1e6:.0f} MB Parquet")
        groups, plain_s = plain_group_by(data)
        print(f"plain DuckDB GROUP BY: {groups:,} groups in {plain_s:.2f} s")
        t = time.perf_counter()
        rows = dataset.cells(data, "experiment", "plt", False, "experiment")
        duck_s = time.perf_counter() - t
        t = time.perf_counter()
        sig = stats(rows)
        stats_s = time.perf_counter() - t
        print(f"DuckDB cells: {len(rows):,} cells in {duck_s:.2f} s; statistics {stats_s:.2f} s "
              f"({sig} significant); total {duck_s + stats_s:.2f} s = "
              f"{(duck_s + stats_s) / plain_s:.1f}x the plain GROUP BY")
        if not args.no_spark:
            from protolens.store import spark

            t = time.perf_counter()
            srows = spark.cells(data, "experiment", "plt", False, "experiment")
            spark_s = time.perf_counter() - t
            same = [(r["contributor"], r["grp"], r["n"], r["median_ms"]) for r in rows] == \
                [(r["contributor"], r["grp"], r["n"], r["median_ms"]) for r in srows]
            print(f"Spark local cells: {len(srows):,} cells in {spark_s:.2f} s (JVM start "
                  f"included), same cells as DuckDB: {same}; total with statistics "
                  f"{spark_s + stats_s:.2f} s = {(spark_s + stats_s) / plain_s:.1f}x the plain "
                  f"GROUP BY, {spark_s / duck_s:.1f}x DuckDB's cells")
    return 0


if __name__ == "__main__":
    sys.exit(main())
