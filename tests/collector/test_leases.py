"""Several writers on one data directory, in process, on a real SQLite catalog: a sweep never
touches a live writer's folder; a writer whose lease ran out and was swept cannot commit; a
commit whose files were not yet moved is rolled forward by the sweep; navigation ids are stored
once across tokens (refused, counted, named); near-duplicates are flagged."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from protolens.collector import dataset
from protolens.collector.ingest import Refusal, Upload, accept, accept_file
from protolens.collector.layout import CATALOG
from protolens.collector.limits import Limits
from protolens.collector.navkeys import nav_keys
from protolens.collector.sweep import sweep
from protolens.collector.writer import Writer, machine
from protolens.share.bundle import read_bundle
from protolens.store.collector import CatalogBundle, CatalogFile, catalog_paths, open_catalog
from protolens.store.collector_leases import LeaseLost, commit_bundle
from protolens.testbed.procs import alive
from scripts.devkit.collector import bundle_bytes, catalog_with_volunteers, cli, small_store
from scripts.devkit.store_builder import ingest_all, lab_record

HOUR_MS = 3_600_000.0


def _data(tmp: Path) -> Path:
    data = tmp / "collector"
    catalog_with_volunteers(data / CATALOG, time.time() * 1000).close()
    return data


def _upload(w: Writer, body: bytes) -> Path:
    path = w.folder / "upload-test.tar"
    path.write_bytes(body)
    return path


def _sweep(data: Path, now_ms: float) -> object:
    conn = open_catalog(data / CATALOG, now_ms, migrate=False)
    try:
        return sweep(data, conn, now_ms)
    finally:
        conn.close()


def _verify(data: Path) -> dict[str, object]:
    res = cli("collector", "verify", "--data", str(data), "--json", check=False)
    out: dict[str, object] = json.loads(res.stdout)
    out["rc"] = res.returncode
    return out


def test_live_writer_folder_survives_another_writers_sweep(tmp_path: Path) -> None:
    data = _data(tmp_path)
    a, b = Writer(data, ttl_s=30), Writer(data, ttl_s=30)
    a.register()
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    staged = dataset.stage_bundle(a.stage, read_bundle(tmp_path / "b.tar"), "vol-1",
                                  "2025-11-24", "n0")
    upload = _upload(a, body)
    b.register()  # a second process starting: its start-up sweep
    b.sweep()
    assert upload.read_bytes() == body and all((a.stage / f.path).is_file() for f in staged)
    receipt = accept_file(data, upload, Upload("vol-1"), time.time() * 1000, Limits(), a)
    assert receipt.status == "stored" and _verify(data)["rc"] == 0
    a.release()
    b.release()
    assert [p for p in (data / "tmp").rglob("*") if p.is_file()] == []


def test_swept_writer_cannot_commit(tmp_path: Path) -> None:
    data = _data(tmp_path)
    a = Writer(data, ttl_s=30)
    a.register()
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    bundle = read_bundle(tmp_path / "b.tar")
    files = dataset.stage_bundle(a.stage, bundle, "vol-1", "2025-11-24", "n1")
    _sweep(data, time.time() * 1000 + HOUR_MS)  # a's lease ran out: another process swept it
    assert not a.folder.exists()
    entry = CatalogBundle(bundle.checksum, "vol-1", "ab" * 16, 0.0, "2025-11-24", len(body),
                          files)
    conn = open_catalog(data / CATALOG, 0.0, migrate=False)
    with pytest.raises(LeaseLost):
        commit_bundle(conn, a.id, entry, 4, None, None,
                      nav_keys(bundle.tables["navigations"], "vol-1"))
    assert catalog_paths(conn) == set()
    conn.close()
    a.register()  # a new lease, a new folder: the same upload then goes through
    receipt = accept_file(data, _upload(a, body), Upload("vol-1"), time.time() * 1000,
                          Limits(), a)
    assert receipt.status == "stored" and _verify(data)["rc"] == 0


def _committed_not_moved(tmp: Path, data: Path, w: Writer, nonce: str) -> list[CatalogFile]:
    """A bundle ``w`` staged and committed (acknowledged) but has not moved into the dataset:
    what a writer killed between the two leaves."""
    body = bundle_bytes(small_store(tmp / "s.db"), tmp / "b.tar")
    bundle = read_bundle(tmp / "b.tar")
    files = dataset.stage_bundle(w.stage, bundle, "vol-1", "2025-11-24", nonce)
    conn = open_catalog(data / CATALOG, 0.0, migrate=False)
    commit_bundle(conn, w.id, CatalogBundle(bundle.checksum, "vol-1", "ab" * 16, 0.0,
                                            "2025-11-24", len(body), files), 4, None, None,
                  nav_keys(bundle.tables["navigations"], "vol-1"))
    conn.close()
    return files


def test_committed_files_of_a_dead_writer_are_rolled_forward(tmp_path: Path) -> None:
    data = _data(tmp_path)
    a = Writer(data, ttl_s=30)
    a.register()
    files = _committed_not_moved(tmp_path, data, a, "n2")  # killed here
    assert dataset.dataset_files(data) == [] and _verify(data)["rc"] == 0  # in flight
    _sweep(data, time.time() * 1000)  # lease still live: nothing moves
    assert dataset.dataset_files(data) == []
    swept = _sweep(data, time.time() * 1000 + HOUR_MS)
    assert sorted(swept.rolled_forward) == sorted(f.path for f in files)  # type: ignore[attr-defined]
    assert dataset.dataset_files(data) == sorted(f.path for f in files)
    assert _verify(data)["rc"] == 0 and not a.folder.exists()


def test_an_ended_writer_of_this_machine_is_taken_over_at_once(tmp_path: Path) -> None:
    """A process killed with ``kill -9`` (here: its lease row given the pid of a process that
    has ended) need not wait for its lease (an hour here) to run out: the next sweep on the same
    machine rolls its committed files forward. Not while its process runs, nor for a lease
    registered on another machine (its pid says nothing here), nor where /proc does not say
    which machine this is."""
    data = _data(tmp_path)
    a, b = Writer(data, ttl_s=3600), Writer(data, ttl_s=3600)
    a.register()
    b.register()
    files = _committed_not_moved(tmp_path, data, a, "n3")
    conn = open_catalog(data / CATALOG, 0.0, migrate=False)
    ended = subprocess.Popen(["true"])
    ended.wait()
    assert machine() is not None and alive(os.getpid()) and not alive(ended.pid)
    zombie = subprocess.Popen(["true"])  # ended, not yet reaped (a crashed worker, briefly)
    deadline = time.monotonic() + 5
    while alive(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert Path(f"/proc/{zombie.pid}").exists() and not alive(zombie.pid)
    zombie.wait()
    b.sweep()  # a runs (this process): nothing moves
    assert dataset.dataset_files(data) == [] and a.folder.exists()
    conn.execute("UPDATE writers SET pid = ?, host = 'elsewhere' WHERE id = ?", (ended.pid, a.id))
    b.sweep()  # another machine's pid: its lease decides
    assert dataset.dataset_files(data) == [] and a.folder.exists()
    conn.execute("UPDATE writers SET host = ? WHERE id = ?", (machine(), a.id))
    conn.close()
    with pytest.MonkeyPatch.context() as mp:  # no /proc to say which machine this is
        mp.setattr("protolens.collector.writer.machine", lambda: None)
        b.sweep()
    assert dataset.dataset_files(data) == [] and a.folder.exists()
    swept = b.sweep()  # this machine's, ended: taken over now
    assert sorted(swept.rolled_forward) == sorted(f.path for f in files)
    assert dataset.dataset_files(data) == sorted(f.path for f in files)
    assert _verify(data)["rc"] == 0 and not a.folder.exists() and b.folder.exists()
    b.release()


def test_one_navigation_one_vote(tmp_path: Path) -> None:
    data = _data(tmp_path)
    db = small_store(tmp_path / "s.db")
    first = bundle_bytes(db, tmp_path / "1.tar", cid="01" * 16)
    again = bundle_bytes(db, tmp_path / "2.tar", cid="02" * 16)  # same ids, another checksum
    now = time.time() * 1000
    assert accept(data, first, "vol-1", now, Limits()).status == "stored"
    assert accept(data, first, "vol-1", now, Limits()).status == "already stored"
    for body, who in ((first, "vol-2"), (again, "vol-2"), (again, "vol-1")):
        with pytest.raises(Refusal) as err:
            accept(data, body, who, now, Limits())
        assert err.value.status == 409 and "vol-1" not in str(err.value)
    status = json.loads(cli("collector", "status", "--data", str(data), "--json").stdout)
    assert status["bundles"] == 1 and status["refused_duplicates"] == 3
    out = _verify(data)
    assert out["rc"] == 0 and len(out["refused_duplicates"]) == 3  # type: ignore[arg-type]
    text = cli("collector", "verify", "--data", str(data)).stdout
    assert text.count("refused: bundle") == 3 and "by vol-1" in text


def test_near_duplicates_flagged(tmp_path: Path) -> None:
    one = lab_record(501, "c", "p", "x", "h2", 0, 1234.0, source="experiment")
    two = lab_record(502, "c", "p", "x", "h2", 1, 1234.0, source="experiment")
    two["milestones"] = dict(one["milestones"])  # the same load under a new id
    other = lab_record(503, "c", "p", "x", "h2", 2, 1500.0, source="experiment")
    ingest_all(tmp_path / "d.db", [one, two, other])
    data = _data(tmp_path)
    body = bundle_bytes(tmp_path / "d.db", tmp_path / "d.tar")
    assert accept(data, body, "vol-1", time.time() * 1000, Limits()).status == "stored"
    status = json.loads(cli("collector", "status", "--data", str(data), "--json").stdout)
    assert status["near_duplicates"] == 1
    flagged = _verify(data)["near_duplicates"]
    assert [f["navigation_id"] for f in flagged] == [two["id"]]  # type: ignore[index,union-attr]
