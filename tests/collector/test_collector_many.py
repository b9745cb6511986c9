"""Many collector processes on one data directory, nothing lost: one ``serve --workers 4`` and two
separately started ``serve`` processes share ``--data``; 50 volunteers upload 200 bundles at once,
each try to a randomly chosen process (as a load balancer would); meanwhile processes are killed
with ``kill -9`` every 0.3-0.7 s, in turn a worker (which uvicorn's supervisor restarts) and a
single ``serve`` (replaced by a new one started *before* the kill, so start-up sweeps run while
others write), each at least twice before the volunteers' last bundles. Every bundle answered 201 or
200 is in the catalog, ``verify`` is clean, and ``status`` counts what the files hold. Costs about
40 s (bounded: volunteers give up after 60 s).
"""

from __future__ import annotations

import json
import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from protolens.collector.client import Backoff, UploadError, upload
from protolens.collector.dataset import dataset_files
from protolens.collector.layout import CATALOG
from protolens.collector.tags import tag_key
from protolens.collector.tokens import make_token, token_hash
from protolens.share.bundle import read_bundle
from protolens.store.collector import add_token, open_catalog
from scripts.devkit.collector import (
    Collector,
    bundle_bytes,
    cli,
    free_port,
    make_ca_and_cert,
    small_store,
)

VOLUNTEERS, PER_VOLUNTEER, LEASE_S = 50, 4, "3"


def _tokens(data: Path) -> list[str]:
    """What ``collector token add`` does, 50 times without 50 process starts."""
    tokens = [make_token(os.urandom(32)) for _ in range(VOLUNTEERS)]
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    for i, t in enumerate(tokens):
        assert add_token(conn, f"vol-{i}", token_hash(t), time.time() * 1000,
                         tag_key(t).hex())
    conn.close()
    return tokens


def _start(tmp: Path, data: Path, ca: Path, n: int, *args: str) -> Collector:
    c = Collector(data, f"https://127.0.0.1:{free_port()}", ca, tmp / f"serve-{n}.log",
                  args=("--lease", LEASE_S, *args))
    c.start()
    return c


def test_many_processes_one_dataset(tmp_path: Path) -> None:
    ca, _, _ = make_ca_and_cert(tmp_path)
    data = tmp_path / "collector"
    data.mkdir()
    tokens = _tokens(data)
    bodies: list[tuple[int, bytes, str]] = []
    for i in range(VOLUNTEERS * PER_VOLUNTEER):
        tar = tmp_path / f"{i}.tar"
        bundle_bytes(small_store(tmp_path / f"s{i}.db", seed=i + 1, n=4), tar, cid=f"{i:032x}")
        bodies.append((i % VOLUNTEERS, tar.read_bytes(), read_bundle(tar).checksum))
    pool_lock = threading.Lock()
    many = _start(tmp_path, data, ca, 0, "--workers", "4")
    singles = [_start(tmp_path, data, ca, 1), _start(tmp_path, data, ca, 2)]
    procs: list[Collector] = [many, *singles]
    stop = threading.Event()
    acked: dict[str, dict[str, Any]] = {}
    refused: list[str] = []
    retries: list[str] = []
    rnd = random.Random(7)

    def urls() -> list[str]:
        with pool_lock:
            return [many.url] + [c.url for c in singles]

    kills = {"worker": 0, "serve": 0}
    # each volunteer's last bundle waits for the chaos's fourth kill: on a fast run the uploads
    # were all acknowledged after one worker kill (a CI run), and the kills after them test
    # nothing
    enough = threading.Event()

    def volunteer(v: int) -> None:
        mine = bodies[v::VOLUNTEERS]
        for i, (who, body, _) in enumerate(mine):
            if i == len(mine) - 1:
                enough.wait(60)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    receipt = upload(random.choice(urls()), tokens[who], body, ca_cert=ca,
                                     backoff=Backoff(tries=1), sleep=time.sleep, timeout_s=20)
                except UploadError as exc:
                    if "refused the bundle" in str(exc):
                        refused.append(str(exc))
                        return
                    retries.append(str(exc)[:80])
                    time.sleep(random.uniform(0.1, 0.4))
                    continue
                acked[receipt["checksum"]] = receipt
                time.sleep(random.uniform(0.0, 1.0))  # volunteers are not in lockstep
                break

    def chaos() -> None:
        n = 3
        while not stop.wait(rnd.uniform(0.3, 0.7)):
            if kills["worker"] >= 2 and kills["serve"] >= 2:
                enough.set()
            # a worker and a serve process in turn (a serve process when no worker is up)
            if kills["worker"] <= kills["serve"] and (pids := many.workers()):
                os.kill(rnd.choice(pids), signal.SIGKILL)
                kills["worker"] += 1
                continue
            k = rnd.randrange(len(singles))
            fresh = _start(tmp_path, data, ca, n)  # the overlap: up before the old one dies
            n += 1
            with pool_lock:
                old, singles[k] = singles[k], fresh
                procs.append(fresh)
            old.kill9()
            kills["serve"] += 1

    chaos_thread = threading.Thread(target=chaos)
    try:
        chaos_thread.start()
        with ThreadPoolExecutor(VOLUNTEERS) as pool:
            list(pool.map(volunteer, range(VOLUNTEERS)))
        stop.set()
        chaos_thread.join()
        live = [c for c in procs if c.proc is not None and c.proc.poll() is None]
        deadline = time.monotonic() + 20  # killed writers' leases run out; a sweep takes over
        while time.monotonic() < deadline and \
                len([d for d in (data / "tmp").iterdir()]) > 4 + len(live) - 1:
            time.sleep(0.5)
    finally:
        stop.set()
        for c in procs:
            c.stop()
    print(f"kills: {kills}; acknowledged {len(acked)} of {len(bodies)}; {len(retries)} tries "
          f"failed and were sent again, e.g. {sorted(set(retries))[:3]}")
    assert refused == [] and kills["worker"] >= 2 and kills["serve"] >= 2, kills
    assert sorted(acked) == sorted(b[2] for b in bodies)  # every upload got its 201 (or 200)
    res = cli("collector", "verify", "--data", str(data), "--json", check=False)
    report = json.loads(res.stdout)
    assert res.returncode == 0 and report["problems"] == [], report["problems"][:5]
    status = json.loads(cli("collector", "status", "--data", str(data), "--json").stdout)
    files = dataset_files(data)
    rows = {t: sum(pq.read_metadata(data / "dataset" / f).num_rows for f in files
                   if f.startswith(f"table={t}/")) for t in ("navigations", "requests")}
    assert status["bundles"] == len(bodies) == report["bundles"] and len(files) == 4 * len(bodies)
    assert status["navigations_rows"] == rows["navigations"] == 4 * len(bodies)
    assert status["requests_rows"] == rows["requests"]
    conn = open_catalog(data / CATALOG, time.time() * 1000, migrate=False)
    stored = {r[0] for r in conn.execute("SELECT checksum FROM bundles")}
    conn.close()
    assert stored == set(acked)
    assert [p for p in (data / "tmp").rglob("*") if p.is_file()] == []
