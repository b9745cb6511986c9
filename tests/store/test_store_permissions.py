"""Issue 15 item 10: the store (directory 0700; protolens.db, -wal, -shm 0600) and the host log
(0600) are created private by the real host process, even under a permissive umask; ``doctor``
warns about an existing store that others can read."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from protolens.cli import main
from protolens.store import open_rw
from scripts.devkit.navrecord_builder import make_record
from tests.host.test_host_process import Host, frame


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the usual default: files 0644, directories 0755
    try:
        yield
    finally:
        os.umask(old)


def test_host_creates_a_private_store_and_log(tmp_path: Path, permissive_umask: None) -> None:
    log = tmp_path / "host.log"
    host = Host(tmp_path, {"PROTOLENS_HOST_LOG": str(log)})
    host.send(frame({"type": "nope", "schema": 1}))  # logged as a warning
    host.send(frame({"type": "record", "schema": 1, "msg_id": "r", "record": make_record(2)}))
    assert host.reply()["type"] == "error"
    assert host.reply()["type"] == "ack"
    db = host.db
    wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
    assert wal.exists() and shm.exists()  # the host still holds the store open
    assert {p.name: mode(p) for p in (db, wal, shm, log)} == {
        db.name: 0o600, wal.name: 0o600, shm.name: 0o600, log.name: 0o600}
    assert mode(db.parent) == 0o700
    assert host.close()[0] == 0
    assert "unknown message type" in log.read_text()


def doctor(tmp_path: Path, db: Path) -> dict[str, str]:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
           "XDG_DATA_HOME": str(tmp_path / "home/.local/share"), "PROTOLENS_DB": str(db)}
    result = CliRunner().invoke(main, ["doctor", "--no-probe", "--json"], env=env)
    check: dict[str, str] = next(c for c in json.loads(result.stdout)
                                 if c["check"] == "store permissions")
    return check


def test_doctor_warns_about_a_store_others_can_read(tmp_path: Path) -> None:
    db = tmp_path / "store" / "protolens.db"
    open_rw(db, now_ms=0.0).close()
    assert doctor(tmp_path, db)["status"] == "ok"
    db.parent.chmod(0o755)
    db.chmod(0o644)
    check = doctor(tmp_path, db)
    assert check["status"] == "warn"
    assert f"{db.parent} (0755)" in check["detail"] and f"{db} (0644)" in check["detail"]
    assert check["fix"].startswith(f"chmod 700 {db.parent}; chmod 600 {db}")


def test_transient_store_errors_are_told_from_final_ones(tmp_path: Path) -> None:
    """Issue 15 item 2: a record is resent only when the store, not the record, is the problem."""
    import sqlite3

    from protolens.store import StoreError, is_transient

    db = tmp_path / "t.db"
    open_rw(db, now_ms=0.0).execute("CREATE TABLE t (x INTEGER UNIQUE)")
    errors: list[BaseException] = []
    for value in (0, 0, 2**63, "\ud800"):
        conn = open_rw(db, now_ms=0.0)  # a fresh connection each: sqlite3 can report a stale error
        try:
            conn.execute("INSERT INTO t VALUES (?)", (value,))
        except Exception as exc:  # noqa: BLE001 - collected to classify
            errors.append(exc)
        conn.close()
    assert [type(e).__name__ for e in errors] == ["IntegrityError", "OverflowError",
                                                  "UnicodeEncodeError"]
    assert not any(is_transient(e) for e in errors)
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(db, timeout=0.05)
    with pytest.raises(sqlite3.OperationalError) as busy:
        other.execute("INSERT INTO t VALUES (3)")
    assert is_transient(busy.value) and is_transient(StoreError("cannot open"))
    locker.execute("ROLLBACK")


def test_install_then_record_leaves_a_store_doctor_calls_private(tmp_path: Path,
                                                                 permissive_umask: None) -> None:
    """The user install creates the directory the store lives in by default: it must be 0700
    too, or every installed store would draw doctor's warning."""
    home = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home/.config"),
            "XDG_DATA_HOME": str(tmp_path / "home/.local/share"), "PROTOLENS_DB": ""}
    result = CliRunner().invoke(main, ["install", "--browser", "chromium"], env=home)
    assert result.exit_code == 0, result.output
    data = tmp_path / "home/.local/share/protolens"
    assert mode(data) == 0o700 and (data / "org.protolens.host.sh").exists()
    open_rw(data / "protolens.db", now_ms=0.0).close()
    assert doctor(tmp_path, data / "protolens.db")["status"] == "ok"
