"""The two halves of an upload's ingest (``stage_file``: validate and encode while holding a
validation place; ``commit_staged``: fsync, catalog commit, move into the dataset), on real
files and a real catalog: nothing reaches the dataset or the catalog before the commit, a refused
commit leaves nothing staged, and what an upload's Parquet carries besides its rows (key-value
metadata) never reaches the dataset. About 2 s."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from protolens.collector import dataset
from protolens.collector.ingest import Receipt, Refusal, Staged, Upload, commit_staged, stage_file
from protolens.collector.layout import CATALOG, dataset_dir
from protolens.collector.limits import Limits
from protolens.collector.writer import Writer
from protolens.share.bundle import TABLES
from protolens.store.collector import all_bundles, open_catalog
from scripts.devkit.collector import bundle_bytes, catalog_with_volunteers, small_store
from tests.collector.tampered import rebuild


def _writer(tmp: Path) -> Writer:
    data = tmp / "collector"
    catalog_with_volunteers(data / CATALOG, time.time() * 1000).close()
    w = Writer(data)
    w.register()
    return w


def _stage(w: Writer, body: bytes, who: str) -> Staged | Receipt:
    path = w.folder / "upload-test.tar"
    path.write_bytes(body)
    return stage_file(path, Upload(who), time.time() * 1000, Limits(), w)


def _staged_files(w: Writer) -> list[Path]:
    return sorted(p for p in w.stage.rglob("*.parquet"))


def test_nothing_is_visible_before_the_commit(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    staged = _stage(w, body, "vol-1")
    assert isinstance(staged, Staged)
    assert len(_staged_files(w)) == len(TABLES)
    assert dataset.dataset_files(w.data) == []
    conn = open_catalog(w.data / CATALOG, time.time() * 1000, migrate=False)
    assert all_bundles(conn) == []
    receipt = commit_staged(w.data, staged, w)
    assert receipt.status == "stored" and _staged_files(w) == []
    assert len(dataset.dataset_files(w.data)) == len(TABLES)
    (stored,) = all_bundles(conn)
    conn.close()
    for f in stored.files:  # the hash taken before the bytes left memory is the file's
        assert dataset.hashlib.sha256((dataset_dir(w.data) / f.path).read_bytes()).hexdigest() \
            == f.sha256
    again = _stage(w, body, "vol-1")
    assert isinstance(again, Receipt) and again.status == "already stored"
    w.release()


def test_a_refused_commit_leaves_nothing_staged(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    first, second = _stage(w, body, "vol-1"), _stage(w, body, "vol-2")
    assert isinstance(first, Staged) and isinstance(second, Staged)
    assert commit_staged(w.data, first, w).status == "stored"
    with pytest.raises(Refusal) as refused:  # the same navigations under another token
        commit_staged(w.data, second, w)
    assert refused.value.status == 409
    assert _staged_files(w) == [] and len(dataset.dataset_files(w.data)) == len(TABLES)
    w.release()


def test_upload_metadata_does_not_reach_the_dataset(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")

    def mark(tables: dict[str, object]) -> None:
        for t in TABLES:
            tables[t] = tables[t].replace_schema_metadata({"planted": "x"})  # type: ignore[attr-defined]

    body = rebuild(tmp_path / "b.tar", tmp_path / "m.tar", mark)
    assert b"planted" in body
    staged = _stage(w, body, "vol-1")
    assert isinstance(staged, Staged)
    assert commit_staged(w.data, staged, w).status == "stored"
    for rel in dataset.dataset_files(w.data):
        meta = pq.read_schema(dataset_dir(w.data) / rel).metadata or {}
        assert b"planted" not in meta
    w.release()
