"""The lab runner's ``done``: the host's commit of a load's record is seen through the store's
files, and the store is opened only when they changed (or a while went by)."""

from __future__ import annotations

from pathlib import Path

import pytest

from protolens.lab import store_watch
from protolens.lab.store_watch import StoreWatch
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.store_builder import NOW_MS, lab_record


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_records_commit_is_seen_and_the_store_asked_only_when_it_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, clock, asked = tmp_path / "lab.db", Clock(), []

    def counted(path: Path, load_id: str) -> list[str]:
        asked.append(load_id)
        return real(path, load_id)

    real = store_watch.stored_navigation_ids
    monkeypatch.setattr(store_watch, "stored_navigation_ids", counted)
    watch = StoreWatch(db, "load-1", 1, clock)
    assert not watch()  # no store yet: the host creates it with the first record
    assert not watch() and len(asked) == 1  # nothing changed: not asked again
    conn = open_rw(db, now_ms=NOW_MS)  # the host's connection, WAL, held open as the host does
    rec = lab_record(1, "camp", "p", "clean", "h2", 0, 100.0)
    ingest(conn, parse_record(rec), {**rec["context"], "load_id": "load-2"}, NOW_MS)
    assert not watch() and len(asked) == 2  # the store changed: asked, another load's record
    clock.t += 0.1
    assert not watch() and len(asked) == 2
    clock.t += StoreWatch.RECHECK_S  # unchanged, but asked again after a while
    assert not watch() and len(asked) == 3
    ingest(conn, parse_record(lab_record(2, "camp", "p", "clean", "h2", 0, 100.0)),
           {**rec["context"], "load_id": "load-1"}, NOW_MS)
    assert watch() and len(asked) == 4
    conn.close()


def test_with_logs_it_waits_for_the_log_after_the_record_a_while_at_most(tmp_path: Path) -> None:
    import gzip

    from protolens.store.logs import store_log

    db, clock = tmp_path / "lab.db", Clock()
    conn = open_rw(db, now_ms=NOW_MS)
    rec = lab_record(1, "camp", "p", "clean", "h2", 0, 100.0)
    ingest(conn, parse_record(rec), {**rec["context"], "load_id": "load-1"}, NOW_MS)
    watch = StoreWatch(db, "load-1", 1, clock, logs=True)
    assert not watch()  # the record is stored, its log not yet
    store_log(conn, rec["id"], gzip.compress(b"{}\n"), {}, NOW_MS)
    clock.t += StoreWatch.RECHECK_S
    assert watch()  # the log came
    late = StoreWatch(db, "load-2", 1, clock, logs=True)
    rec2 = lab_record(2, "camp", "p", "clean", "h2", 0, 100.0)
    ingest(conn, parse_record(rec2), {**rec2["context"], "load_id": "load-2"}, NOW_MS)
    assert not late()
    clock.t += StoreWatch.LOG_WAIT_S - 0.01
    assert not late()
    clock.t += StoreWatch.RECHECK_S  # no log for it: done without it (asked again)
    assert late()
    assert StoreWatch(db, "load-2", 1, clock, logs=False)()  # without logs: the record suffices
    conn.close()
