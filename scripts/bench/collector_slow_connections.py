#!/usr/bin/env python3
"""Slow connections against a real ``protolens collector serve`` (TLS on loopback, default
limits: 1,000 connections, 10 s header timeout): N connections (default 2,000) that complete
the TLS handshake and then send one byte of a request header every 5 s, reconnecting when the
collector drops them, as a slowloris client does. Meanwhile a probe times ``GET /v1/health``
(every 0.5 s) and an upload of a small bundle (every 3 s), each on a fresh connection. The same
probes run first without the slow connections; the script prints both side by side (median,
95th percentile, max, how many took over 1 s) and the ratio of the medians.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/collector_slow_connections.py
       [--slow 2000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import ssl
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from scripts.devkit import bundle_forge as forge  # noqa: E402
from scripts.devkit.collector import (  # noqa: E402
    Collector,
    bundle_bytes,
    running_collector,
    small_store,
    upload_headers,
)


class Slow:
    def __init__(self, port: int, ctx: ssl.SSLContext, n: int) -> None:
        self.port, self.ctx, self.n = port, ctx, n
        self.open = self.dropped = self.failed = 0
        self.stop = asyncio.Event()

    async def one(self) -> None:
        header = b"POST /v1/bundles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: x\r\n"
        while not self.stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", self.port, ssl=self.ctx, server_hostname="127.0.0.1")
            except (OSError, ssl.SSLError):
                self.failed += 1
                await asyncio.sleep(1)
                continue
            self.open += 1
            try:
                for byte in header:
                    writer.write(bytes([byte]))
                    await writer.drain()
                    try:
                        await asyncio.wait_for(reader.read(1), 5)  # closed by the collector?
                        break
                    except TimeoutError:
                        pass
                    if self.stop.is_set():
                        break
            except (OSError, ssl.SSLError):
                pass
            self.open -= 1
            self.dropped += 1
            writer.close()

    async def run(self, seconds: float) -> None:
        tasks = [asyncio.create_task(self.one()) for _ in range(self.n)]
        await asyncio.sleep(seconds)
        self.stop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def probe(c: Collector, token: str, bodies: list[bytes], seconds: float
          ) -> tuple[list[float], list[float], list[int]]:
    health: list[float] = []
    uploads: list[float] = []
    codes: list[int] = []
    end = time.monotonic() + seconds
    next_upload = time.monotonic()
    while time.monotonic() < end:
        t = time.perf_counter()
        try:
            httpx.get(c.url + "/v1/health", verify=c.ctx(), timeout=10)
            health.append(time.perf_counter() - t)
        except httpx.HTTPError:
            health.append(float("inf"))
        if time.monotonic() >= next_upload and bodies:
            body = bodies.pop()
            t = time.perf_counter()
            try:
                r = httpx.post(c.url + "/v1/bundles", content=body, verify=c.ctx(), timeout=10,
                               headers=upload_headers(token, body))
                uploads.append(time.perf_counter() - t)
                codes.append(r.status_code)
            except httpx.HTTPError:
                uploads.append(float("inf"))
                codes.append(0)
            next_upload += 3
        time.sleep(0.5)
    return health, uploads, codes


def summary(xs: list[float]) -> str:
    ok = sorted(xs)
    p95 = ok[min(len(ok) - 1, int(0.95 * len(ok)))]
    return (f"n={len(xs)} median {1000 * statistics.median(ok):.0f} ms, p95 "
            f"{1000 * p95:.0f} ms, max {1000 * ok[-1]:.0f} ms, over 1 s: "
            f"{sum(x > 1 for x in xs)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slow", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=30)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="bench-collector-slow-") as name:
        tmp = Path(name)
        base = tmp / "base.tar"
        bundle_bytes(small_store(tmp / "s.db", n=6), base)
        bodies = [forge.reid(base, tmp / f"b{i}.tar", f"u{i}") for i in range(40)]
        with running_collector(tmp) as c:
            token = c.token("bench")
            calm = probe(c, token, bodies, 10)
            slow = Slow(int(c.url.rsplit(":", 1)[1]), c.ctx(), args.slow)
            loop = asyncio.new_event_loop()
            attack = threading.Thread(target=loop.run_until_complete,
                                      args=(slow.run(args.seconds + 10),))
            attack.start()
            time.sleep(10)  # the slow connections pile up first
            held = slow.open
            busy = probe(c, token, bodies, args.seconds)
            held_end = slow.open
            attack.join()
            loop.close()
        print(f"{args.slow} slow connections (1 header byte per 5 s); open at the start and end "
              f"of the probe: {held}, {held_end}; dropped by the collector and reopened: "
              f"{slow.dropped}; connect failures: {slow.failed}")
        for label, i in (("health", 0), ("upload", 1)):
            print(f"{label:>6}: calm   {summary(calm[i])}")
            print(f"{label:>6}: slowed {summary(busy[i])}  (median x"
                  f"{statistics.median(busy[i]) / statistics.median(calm[i]):.2f})")
        print(f"upload answers: calm {sorted(set(calm[2]))}, slowed {sorted(set(busy[2]))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
