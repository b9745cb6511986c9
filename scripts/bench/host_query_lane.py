#!/usr/bin/env python3
"""A record's ack latency while the dashboard's queries run, through a real host process
(``python -m protolens.host`` over pipes, its store holding N navigations): alone (a record,
then its ack, R times) beside with 2,000 ``query`` frames sent just before each record. Prints
the medians, their ratio and how long the 2,000 queries took. Queries are answered on a lane
of their own (``host/lanes.py``); before it, the ack waited for every query ahead of it.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/host_query_lane.py
       [--navigations 2000] [--queries 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from protolens.messaging.framing import encode_frame  # noqa: E402
from scripts.devkit.navrecord_builder import make_record  # noqa: E402
from scripts.devkit.store_builder import ingest_all  # noqa: E402


def frame(obj: dict[str, Any]) -> bytes:
    return encode_frame(json.dumps({"schema": 1, **obj}).encode())


class Host:
    def __init__(self, tmp: Path, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "protolens.host", "chrome-extension://bench/"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env={**os.environ, "PROTOLENS_DB": str(db), "XDG_DATA_HOME": str(tmp / "xdg"),
                 "HOME": str(tmp)})

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        (n,) = struct.unpack("<I", self.proc.stdout.read(4))
        out: dict[str, Any] = json.loads(self.proc.stdout.read(n))
        return out

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--navigations", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-lane-") as name:
        tmp = Path(name)
        db = tmp / "p.db"
        ingest_all(db, (make_record(8, seed=s) for s in range(args.navigations)))
        host = Host(tmp, db)
        seed = 10 ** 6
        alone, loaded, spans = [], [], []
        for _ in range(args.rounds * 10):
            seed += 1
            t = time.perf_counter()
            host.send(frame({"type": "record", "msg_id": "r", "record": make_record(8, seed=seed)}))
            assert host.reply()["type"] == "ack"
            alone.append(time.perf_counter() - t)
        query = frame({"type": "query", "msg_id": "q", "query": "domains",
                       "params": {"source": "all"}, "cursor": None})
        for _ in range(args.rounds):
            seed += 1
            record = frame({"type": "record", "msg_id": "late",
                            "record": make_record(8, seed=seed)})
            start = time.perf_counter()
            sent: dict[str, float] = {}

            def write(rec: bytes = record, at: dict[str, float] = sent) -> None:
                host.send(query * args.queries)
                at["record"] = time.perf_counter()
                host.send(rec)

            writer = threading.Thread(target=write)
            writer.start()
            acked = None
            for _ in range(args.queries + 1):
                r = host.reply()
                if r.get("msg_id") == "late":
                    acked = time.perf_counter()
            spans.append(time.perf_counter() - start)
            writer.join()
            assert acked is not None
            loaded.append(acked - sent["record"])
        host.close()
    a, b = statistics.median(alone), statistics.median(loaded)
    print(f"store: {args.navigations} navigations; {args.queries} queries before each record")
    print(f"record ack alone: median {1000 * a:.1f} ms (n={len(alone)}, max "
          f"{1000 * max(alone):.1f} ms)")
    print(f"record ack behind {args.queries} queries: median {1000 * b:.1f} ms (n={len(loaded)},"
          f" max {1000 * max(loaded):.1f} ms); ratio x{b / a:.2f}")
    print(f"the {args.queries} queries took {statistics.median(spans):.1f} s (median of "
          f"{len(spans)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
