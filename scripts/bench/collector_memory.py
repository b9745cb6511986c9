#!/usr/bin/env python3
"""Collector peak memory (VmHWM of the real ``protolens collector serve`` process, TLS on
loopback, default limits): 8 concurrent maximum-size uploads (distinct valid bundles just under
``--max-bytes``, each decoding to most of ``--max-uncompressed``), then, in a fresh process, 8
concurrent decompression bombs (4 whose numbers are run-length encoded, 4 whose strings are
dictionary encoded). The goal is a peak under 300 MB for each. For scale it also prints what
decoding one bomb's requests table whole (what the collector did before) takes, in a child
process.

Usage: flock /tmp/protolens-heavy.lock .venv/bin/python scripts/bench/collector_memory.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from protolens.collector.limits import Limits, TooLarge, check_members  # noqa: E402
from protolens.share.bundle import member_files  # noqa: E402
from scripts.devkit import bundle_forge as forge  # noqa: E402
from scripts.devkit.collector import (  # noqa: E402
    Collector,
    bundle_bytes,
    free_port,
    make_ca_and_cert,
    small_store,
    upload_headers,
)


def vm(pid: int, field: str = "VmHWM") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(field)


def burst(c: Collector, token: str, bodies: list[bytes]) -> tuple[list[int], float]:
    def one(body: bytes) -> int:
        return httpx.post(c.url + "/v1/bundles", content=body, verify=c.ctx(), timeout=600,
                          headers=upload_headers(token, body)).status_code

    t = time.perf_counter()
    with ThreadPoolExecutor(len(bodies)) as pool:
        codes = list(pool.map(one, bodies))
    return codes, time.perf_counter() - t


def run(tmp: Path, ca: Path, name: str, bodies: list[bytes]) -> tuple[float, float, list[int],
                                                                      float]:
    data = tmp / name
    data.mkdir()
    c = Collector(data, f"https://127.0.0.1:{free_port()}", ca, tmp / f"{name}.log")
    c.start()
    try:
        assert c.proc is not None
        idle = vm(c.proc.pid)
        codes, wall = burst(c, c.token("bench"), bodies)
        return idle, vm(c.proc.pid), codes, wall
    finally:
        c.stop()


def whole_table_peak(bomb: Path) -> float:
    """VmHWM of a child that decodes the bomb's requests table whole (the former check)."""
    code = ("import io,sys,tarfile,pyarrow.parquet as pq\n"
            "t=tarfile.open(sys.argv[1]);d=t.extractfile('requests.parquet').read()\n"
            "pq.read_table(io.BytesIO(d), read_dictionary=['url','host','mime_type'])\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    out = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip()) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--concurrent", type=int, default=8)
    args = ap.parse_args()
    limits = Limits()
    with tempfile.TemporaryDirectory(prefix="bench-collector-mem-") as name:
        tmp = Path(name)
        ca, _, _ = make_ca_and_cert(tmp)
        base = tmp / "base.tar"
        bundle_bytes(small_store(tmp / "s.db", n=20), base)
        probe = len(forge.scaled(base, tmp / "probe.tar", 200, "probe"))
        copies = int(200 * (limits.max_bytes * 0.97) / probe)
        while True:  # just under --max-bytes, and under --max-uncompressed decoded: accepted
            big = [forge.scaled(base, tmp / "big0.tar", copies, "big0")]
            try:
                check_members(member_files(tmp / "big0.tar"), limits)
                break
            except TooLarge:
                copies = int(copies * 0.95)
        big += [forge.reid(tmp / "big0.tar", tmp / f"big{i}.tar", f"re{i}")
                for i in range(1, args.concurrent)]
        half = args.concurrent // 2
        bombs = [forge.number_bomb(base, tmp / "nb.tar", 3_000_000)] * half
        bombs += [forge.string_bomb(base, tmp / "sb.tar")] * (args.concurrent - half)
        print(f"limits: --max-bytes {limits.max_bytes >> 20} MiB, --max-uncompressed "
              f"{limits.max_uncompressed >> 20} MiB; {args.concurrent} at once")
        print(f"max-size upload: {len(big[0]) / 2**20:.2f} MiB ({copies} copies of 20 "
              f"navigations); bombs: {len(bombs[0]) / 2**20:.2f} MiB (3,000,000 equal request "
              f"rows) and {len(bombs[-1]) / 2**20:.2f} MiB (long mime type, dictionary)")
        for label, bodies in (("max-size uploads", big), ("bombs", bombs)):
            idle, peak, codes, wall = run(tmp, ca, label.split()[0], bodies)
            print(f"{label}: VmHWM {peak:.0f} MB (idle {idle:.0f} MB), answers "
                  f"{sorted(codes)}, {wall:.1f} s")
            if label.startswith("max") and set(codes) != {201}:
                print("  (not all accepted: the peak is not of 8 accepted maximum uploads)")
        print(f"for scale: decoding one number bomb's requests table whole: VmHWM "
              f"{whole_table_peak(tmp / 'nb.tar'):.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
