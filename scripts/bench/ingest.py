#!/usr/bin/env python3
"""Ingest throughput: 100-request NavigationRecords per second through the host's real framing,
validation and dispatch into SQLite, beside a plain ``executemany`` of the same rows into the same
schema (the limit), one transaction per record in both, printed as a ratio.

Usage: .venv/bin/python scripts/bench/ingest.py [--records 300] [--requests 100] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

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


def host_path(stream: bytes, db: Path, sync: str) -> float:
    """Seconds to decode, validate, store and ack every frame of ``stream``."""
    dispatcher = Dispatcher(SqliteSink(open_rw(db, now_ms=0.0, synchronous=sync)))
    decoder = FrameDecoder()
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


def plain_path(rows: list[tuple], db: Path, sync: str) -> float:  # type: ignore[type-arg]
    """Seconds to insert the same prepared rows, one transaction per record."""
    conn = open_rw(db, now_ms=0.0, synchronous=sync)
    start = time.perf_counter()
    for nav, reqs, conns, hosts in rows:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(INSERT_NAVIGATION, nav)
        conn.executemany(INSERT_REQUEST, reqs)
        conn.executemany(INSERT_CONNECTION, conns)
        conn.executemany(INSERT_HOST, hosts)
        conn.execute("COMMIT")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=300)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--dir", type=Path, default=None, help="where the bench databases go")
    args = ap.parse_args()
    raws = [make_record(args.requests, seed=i) for i in range(args.records)]
    stream = b"".join(encode_frame(json.dumps({"type": "record", "schema": 1, "msg_id": str(i),
                                               "record": r}).encode(), limit=1 << 26)
                      for i, r in enumerate(raws))
    parsed = [record_rows(parse_record(r)) for r in raws]
    rows = [(navigation_row(p, {}, 0.0), p.requests, p.connections, p.hosts) for p in parsed]
    frame_kb = len(stream) / len(raws) / 1024
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        print(f"{args.records} records x {args.requests} requests, {frame_kb:.1f} KiB per frame, "
              f"databases in {tmp}")
        for sync in ("FULL", "NORMAL"):
            t_host = host_path(stream, Path(tmp) / f"host-{sync}.db", sync)
            t_plain = plain_path(rows, Path(tmp) / f"plain-{sync}.db", sync)
            r_host, r_plain = args.records / t_host, args.records / t_plain
            print(f"synchronous={sync:6s} host path {r_host:8.1f} records/s   plain executemany "
                  f"{r_plain:8.1f} records/s   ratio host/plain {r_host / r_plain:.2f}")


if __name__ == "__main__":
    main()
