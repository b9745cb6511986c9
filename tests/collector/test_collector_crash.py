"""``kill -9`` of the collector while uploads are under way: the clients retry (the same bytes)
against the restarted collector; every acknowledged bundle is stored exactly once, no partial or
unacknowledged file is left in the dataset, ``collector verify`` is clean, and the restarted
collector takes the killed process's staging folder over at its start (the same machine, a
process that has ended: ``collector/writer.py``), committed files rolled forward, before it
answers a retry."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from protolens.collector.client import Backoff, upload
from protolens.collector.dataset import dataset_files
from protolens.share.bundle import read_bundle
from scripts.devkit.collector import bundle_bytes, cli, running_collector, small_store


def staged_files(root: Path) -> list[str]:
    """Files under ``root``, read while the sweep removes folders (os.walk skips a folder gone
    between its listing and its reading; Path.rglob raised FileNotFoundError in a run)."""
    return [os.path.join(d, f) for d, _, names in os.walk(root) for f in names]


def test_kill9_during_uploads(tmp_path: Path) -> None:
    paths = [tmp_path / f"{i}.tar" for i in range(30)]
    bodies = [bundle_bytes(small_store(tmp_path / f"s{i}.db", seed=i + 1, n=40), p,
                           cid=f"{i:032x}") for i, p in enumerate(paths)]
    sums = [read_bundle(p).checksum for p in paths]
    with running_collector(tmp_path, "--lease", "2") as c:
        token = c.token("vol-1")
        acked = threading.Event()

        def send(i: int) -> dict[str, Any]:
            receipt = upload(c.url, token, bodies[i], ca_cert=c.ca, sleep=time.sleep,
                             backoff=Backoff(tries=40, first_s=0.1, max_s=0.5))
            acked.set()
            return receipt

        with ThreadPoolExecutor(10) as pool:
            futures = [pool.submit(send, i) for i in range(30)]
            assert acked.wait(60)
            c.kill9()  # uploads still in flight: answered ones, half-written ones, queued ones
            in_flight = sum(not f.done() for f in futures)
            for rel in dataset_files(c.data):  # no partial file, even before the restart
                pq.read_metadata(c.data / "dataset" / rel)
            time.sleep(0.5)
            c.start()
            receipts = [f.result(timeout=120) for f in futures]
        assert in_flight > 0, in_flight
        print(f"in flight at kill -9: {in_flight} of 30")
        assert sorted(r["checksum"] for r in receipts) == sorted(sums)
        conn = sqlite3.connect(f"file:{c.data / 'catalog.db'}?mode=ro", uri=True)
        stored = [r[0] for r in conn.execute("SELECT checksum FROM bundles")]
        named = {r[0] for r in conn.execute("SELECT path FROM bundle_files")}
        conn.close()
        assert sorted(stored) == sorted(sums)  # each exactly once
        assert len(named) == 4 * 30
        # A bundle the killed process had committed but not yet renamed into the dataset (once
        # in CI: 117 of 120 files) is acknowledged; its files wait, fsynced, in that process's
        # folder. The restarted collector, on the same machine, sees that process has ended and
        # rolls them forward at its start, before it answers a retry (writer.py, sweep.py):
        files = dataset_files(c.data)
        assert set(files) == named and all(f.endswith(".parquet") for f in files), \
            named - set(files)
        assert cli("collector", "verify", "--data", str(c.data)).returncode == 0
        assert staged_files(c.data / "tmp") == []  # and the killed process's folder with them
