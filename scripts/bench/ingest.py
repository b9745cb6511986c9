#!/usr/bin/env python3
"""Ingest throughput: 100-request NavigationRecords per second through the host's real framing,
validation and dispatch into SQLite, beside a plain ``executemany`` of the same rows into the same
schema (the limit), one transaction per record in both, printed as a ratio (the goal:
at least 0.8). The host path runs twice: as the host runs it (the record fast path,
messaging/fast.py) and on the reference path alone (``Dispatcher(fast_path=False)``: stdlib json,
record/validate.py, the model's dataclasses).

The records go in rounds; each round sends the same slice through every path, in an order that
turns each round, so load from other processes on a shared machine falls on all paths alike. The
ratio is over all records; the range is the rounds' ratios.

Last measured (2026-11-24, 2-core machine, 300 records x 100 requests, 10 rounds):
synchronous=FULL host/plain 0.84 (rounds 0.81-0.86), reference path/plain 0.49;
synchronous=NORMAL host/plain 0.84 (0.75-0.87), reference path/plain 0.45.

Usage: .venv/bin/python scripts/bench/ingest.py [--records 300] [--requests 100] [--rounds 10]
       [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.messaging.dispatch import Dispatcher, encode_reply  # noqa: E402
from protolens.messaging.framing import Frame, FrameDecoder, encode_frame  # noqa: E402
from protolens.record import parse_record  # noqa: E402
from protolens.record.rows import record_rows  # noqa: E402
from protolens.store import SqliteSink, open_rw  # noqa: E402
from protolens.store.ingest import (  # noqa: E402
    INSERT_CONNECTION,
    INSERT_HOST,
    INSERT_NAVIGATION,
    INSERT_REQUEST,
    navigation_row,
)
from scripts.devkit.navrecord_builder import make_record  # noqa: E402

Rows = tuple[Any, list[Any], list[Any], list[Any]]


def host_path(db: Path, sync: str, fast_path: bool) -> Callable[[bytes], float]:
    """Seconds to decode, validate, store and ack every frame of a stream, per call."""
    dispatcher = Dispatcher(SqliteSink(open_rw(db, now_ms=0.0, synchronous=sync)),
                            fast_path=fast_path)
    decoder = FrameDecoder()

    def run(stream: bytes) -> float:
        start = time.perf_counter()
        acks = 0
        for i in range(0, len(stream), 1 << 16):  # the stdio adapter reads 64 KiB at a time
            for event in decoder.feed(stream[i:i + (1 << 16)]):
                assert isinstance(event, Frame), event
                reply = dispatcher.handle(event.payload, 0.0)
                encode_reply(reply)
                acks += reply["type"] == "ack"
        elapsed = time.perf_counter() - start
        assert acks * len(stream) > 0
        return elapsed
    return run


def plain_path(db: Path, sync: str) -> Callable[[list[Rows]], float]:
    """Seconds to insert prepared rows, one transaction per record, per call."""
    conn = open_rw(db, now_ms=0.0, synchronous=sync)

    def run(rows: list[Rows]) -> float:
        start = time.perf_counter()
        for nav, reqs, conns, hosts in rows:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(INSERT_NAVIGATION, nav)
            conn.executemany(INSERT_REQUEST, reqs)
            conn.executemany(INSERT_CONNECTION, conns)
            conn.executemany(INSERT_HOST, hosts)
            conn.execute("COMMIT")
        return time.perf_counter() - start
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=300)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--dir", type=Path, default=None, help="where the bench databases go")
    args = ap.parse_args()
    raws = [make_record(args.requests, seed=i) for i in range(args.records)]
    frames = [encode_frame(json.dumps({"type": "record", "schema": 1, "msg_id": str(i),
                                       "record": r}).encode(), limit=1 << 26)
              for i, r in enumerate(raws)]
    parsed = [record_rows(parse_record(r)) for r in raws]
    rows: list[Rows] = [(navigation_row(p, {}, 0.0), p.requests, p.connections, p.hosts)
                        for p in parsed]
    cut = [len(raws) * k // args.rounds for k in range(args.rounds + 1)]
    slices = [(b"".join(frames[a:b]), rows[a:b]) for a, b in zip(cut, cut[1:], strict=False)]
    frame_kb = sum(map(len, frames)) / len(raws) / 1024
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"{args.records} records x {args.requests} requests, {frame_kb:.1f} KiB per frame, "
              f"{args.rounds} rounds, databases in {tmp}")
        for sync in ("FULL", "NORMAL"):
            fast = host_path(Path(tmp) / f"host-{sync}.db", sync, fast_path=True)
            ref = host_path(Path(tmp) / f"ref-{sync}.db", sync, fast_path=False)
            plain = plain_path(Path(tmp) / f"plain-{sync}.db", sync)
            fast_t, ref_t, plain_t = ([0.0] * args.rounds for _ in range(3))
            runners: list[tuple[list[float], Callable[[Any], float], int]] = [
                (fast_t, fast, 0), (ref_t, ref, 0), (plain_t, plain, 1)]
            for k, piece in enumerate(slices):
                for j in range(len(runners)):
                    times, run, part = runners[(j + k) % len(runners)]
                    times[k] = run(piece[part])
            print(f"synchronous={sync}: records/s host {args.records / sum(fast_t):7.1f}, "
                  f"reference path {args.records / sum(ref_t):7.1f}, plain executemany "
                  f"{args.records / sum(plain_t):7.1f}")
            for label, t in (("host/plain", fast_t), ("reference/plain", ref_t)):
                per_round = [p / h for h, p in zip(t, plain_t, strict=True)]
                print(f"  ratio {label:16s} {sum(plain_t) / sum(t):.2f}  (rounds: median "
                      f"{statistics.median(per_round):.2f}, {min(per_round):.2f}-"
                      f"{max(per_round):.2f})")


if __name__ == "__main__":
    main()
