"""The log tap's logs in the store (``store/logs.py``): kept only for a stored navigation, deleted
with it, and never in anything that leaves the machine: the export bundle, HAR, and the bundle
``contribute`` uploads. Real SQLite, the real commands; the log holds a marker stored verbatim
(gzip level 0), so its absence from each output means something."""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import tarfile
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from protolens.collector.contribute import PENDING, ContributeError, Target, run_once
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from protolens.store.logs import load_log, store_log
from scripts.devkit.navrecord_builder import make_record
from tests.cli.run import protolens

MARKER = "LOGTAP-MARKER-7f3e9a"
NOW_MS = 1_763_900_000_000.0


def _store(tmp_path: Path, n: int = 2) -> tuple[Path, list[str]]:
    db = tmp_path / "p.db"
    conn = open_rw(db, NOW_MS)
    ids = []
    for seed in range(n):
        rec = make_record(4, seed=seed)
        ingest(conn, parse_record(rec), {}, NOW_MS)
        log = gzip.compress(json.dumps({"method": "Page.loadEventFired", "params": {
            "timestamp": 1.0, "note": MARKER}}).encode() + b"\n", compresslevel=0)
        assert store_log(conn, rec["id"], log, {"main_frame_id": MARKER}, NOW_MS) == "stored"
        ids.append(rec["id"])
    conn.close()
    assert MARKER.encode() in db.read_bytes()  # the marker is there to be found
    return db, ids


def _bundle_text(data: bytes) -> str:
    """Every member name and every value of every Parquet table of a bundle tar, as text."""
    out = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for m in tar.getmembers():
            out.append(m.name)
            body = tar.extractfile(m)
            raw = body.read() if body else b""
            assert MARKER.encode() not in raw
            if m.name.endswith(".parquet"):
                table = pq.read_table(io.BytesIO(raw))
                out += table.column_names
                out.append(json.dumps(table.to_pylist(), default=str))
            else:
                out.append(raw.decode("utf-8", "replace"))
    return "\n".join(out)


def test_a_log_needs_its_navigation_and_goes_with_it(tmp_path: Path) -> None:
    db, ids = _store(tmp_path)
    conn = open_rw(db, NOW_MS)
    assert store_log(conn, "00000000-0000-4000-8000-00000000abcd", b"\x1f\x8b", {}, NOW_MS) \
        == "no_navigation"
    assert store_log(conn, ids[0], gzip.compress(b"other"), {}, NOW_MS) == "duplicate"
    stored = load_log(conn, ids[0])
    assert stored is not None and MARKER.encode() in gzip.decompress(stored.log)
    conn.close()
    done = json.loads(protolens("db", "forget", "--site", "a.test", "--json", db=db).stdout)
    assert {"table": "navigation_logs", "deleted": 2} in done
    left = sqlite3.connect(db).execute("SELECT count(*) FROM navigation_logs").fetchone()
    assert left == (0,)


def test_a_deleted_navigation_takes_its_log(tmp_path: Path) -> None:
    db, ids = _store(tmp_path)
    conn = open_rw(db, NOW_MS)  # foreign keys on: a plain DELETE cascades
    conn.execute("DELETE FROM navigations WHERE id = ?", (ids[0],))
    assert load_log(conn, ids[0]) is None and load_log(conn, ids[1]) is not None


def test_export_bundle_has_no_log(tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    out = tmp_path / "bundle.tar"
    protolens("export", "-o", str(out), db=db)
    text = _bundle_text(out.read_bytes())
    assert "navigations" in text  # the bundle was read
    assert MARKER not in text and "navigation_logs" not in text


def test_har_export_has_no_log(tmp_path: Path) -> None:
    db, ids = _store(tmp_path)
    out = tmp_path / "one.har"
    protolens("export", "--har", ids[0], "-o", str(out), db=db)
    har = out.read_text()
    assert json.loads(har)["log"]["entries"] and MARKER not in har


def test_the_contributed_bundle_has_no_log(tmp_path: Path) -> None:
    db, _ = _store(tmp_path)
    home = tmp_path / "home"
    # no collector listens on port 9 of loopback: the upload fails and the bundle it would
    # have sent stays in pending.tar (collector/contribute.py), built by the real run
    with pytest.raises(ContributeError):
        run_once(db, home, Target("https://127.0.0.1:9", "plc_test"), sleep=lambda s: None)
    text = _bundle_text((home / "contribute" / PENDING).read_bytes())
    assert "navigations" in text and MARKER not in text and "navigation_logs" not in text
