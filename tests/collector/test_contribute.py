"""``protolens contribute`` against a real collector over TLS: dry run sends nothing; an upload
prints the receipt; the next run sends only loads stored since; a wrong token is a one-line
error that changes nothing; ``--forget`` forgets the uploads."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from protolens.collector.settings import ContributeSettings, load, save
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.collector import cli, running_collector, small_store
from scripts.devkit.store_builder import NOW_MS, lab_record


def _count(c_data: Path) -> int:
    conn = sqlite3.connect(f"file:{c_data / 'catalog.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM bundles").fetchone()[0])
    finally:
        conn.close()


def test_contribute_sends_only_what_is_new(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db", n=6)
    with running_collector(tmp_path) as c:
        token = c.token("vol-1")
        env = {"PROTOLENS_DB": str(db), "XDG_DATA_HOME": str(tmp_path / "xdg"),
               "PROTOLENS_CA_CERT": str(c.ca)}

        def run(*args: str, check: bool = True) -> dict[str, object]:
            res = cli("contribute", "--to", c.url, *args, "--json", env=env, check=check)
            return json.loads(res.stdout) if res.returncode == 0 else {"stderr": res.stderr}

        dry = run("--dry-run")
        assert dry["navigations"] == 6 and "origin" in dry["columns"]["navigations"]  # type: ignore[index]
        assert "remote_ip" not in dry["columns"]["requests"]  # type: ignore[index]
        assert _count(c.data) == 0

        bad = cli("contribute", "--to", c.url, "--token", "plc_" + "y" * 43, env=env,
                  check=False)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "401" in bad.stderr
        assert "y" * 43 not in bad.stderr and _count(c.data) == 0

        # the failed run left its bundle pending; the next run (good token) sends that one
        first = run("--token", token)
        assert first["status"] == "stored" and first["rows"]["navigations"] == 6  # type: ignore[index]
        assert run("--token", token)["status"] == "nothing new"

        conn = open_rw(db, time.time() * 1000)
        for i in range(3):
            ingest(conn, parse_record(lab_record(50_000 + i, "camp", "p", "c", "h2", i, 900.0,
                                                 source="experiment")), {}, NOW_MS + 60_000)
        conn.close()
        second = run("--token", token)
        assert second["status"] == "stored" and second["rows"]["navigations"] == 3  # type: ignore[index]
        assert second["checksum"] != first["checksum"] and _count(c.data) == 2

        home = tmp_path / "xdg" / "protolens"
        save(home, ContributeSettings(True, c.url, token))  # the options page's switch is on
        assert run("--forget")["forgotten_uploads"] == 2
        assert load(home) == ContributeSettings()  # leaving switches the schedule off too
        assert run("--dry-run")["navigations"] == 9
    assert cli("collector", "verify", "--data", str(c.data)).returncode == 0


def test_contribute_errors(tmp_path: Path) -> None:
    env = {"PROTOLENS_DB": str(tmp_path / "none.db"), "XDG_DATA_HOME": str(tmp_path / "x")}
    res = cli("contribute", "--to", "https://127.0.0.1:1", "--token", "t", env=env, check=False)
    assert res.returncode == 2 and "no database" in res.stderr
    assert not (tmp_path / "none.db").exists()
    res = cli("contribute", "--to", "ftp://x", "--token", "t", env=env, check=False)
    assert res.returncode == 2 and "https" in res.stderr
    res = cli("contribute", env=env, check=False)
    assert res.returncode == 2 and "--to" in res.stderr


def test_certificate_failure_is_final(tmp_path: Path) -> None:
    """An untrusted certificate is not a network hiccup: one try, no back-off, and the
    message says what to do (it was tried 6 times with back-off)."""
    from protolens.collector.client import UploadError, upload

    body = b"irrelevant: the handshake fails first"
    slept: list[float] = []
    with running_collector(tmp_path) as c:
        try:
            upload(c.url, "plc_" + "z" * 43, body, sleep=slept.append)
        except UploadError as exc:
            message = str(exc)
        else:
            raise AssertionError("an untrusted certificate was accepted")
        assert slept == [] and "certificate is not trusted" in message and "--ca-cert" in message
        assert "z" * 43 not in message
        db = small_store(tmp_path / "s.db")
        res = cli("contribute", "--to", c.url, "--token", "plc_" + "z" * 43,
                  env={"PROTOLENS_DB": str(db), "XDG_DATA_HOME": str(tmp_path / "xdg"),
                       "PROTOLENS_CA_CERT": ""}, check=False)
        assert res.returncode == 2 and "certificate is not trusted" in res.stderr
        assert "gave up after" not in res.stderr


def test_contribute_files_are_the_users_only(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db")
    home = tmp_path / "xdg" / "protolens"
    with running_collector(tmp_path) as c:
        env = {"PROTOLENS_DB": str(db), "XDG_DATA_HOME": str(tmp_path / "xdg"),
               "PROTOLENS_CA_CERT": str(c.ca)}
        res = cli("contribute", "--to", c.url, "--token", "plc_" + "y" * 43, env=env,
                  check=False)  # refused: the bundle stays pending
        assert res.returncode == 2
        save(home, ContributeSettings(False, c.url, "plc_" + "y" * 43))
    modes = {p.name: p.stat().st_mode & 0o777 for p in (home / "contribute").iterdir()}
    assert (home / "contribute").stat().st_mode & 0o777 == 0o700
    assert modes == {"lock": 0o600, "pending.json": 0o600, "pending.tar": 0o600,
                     "settings.json": 0o600}, modes


def test_a_backlog_goes_as_several_bundles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    """More than one bundle's worth waiting (here the budget is made small: 20 kB of tables,
    windows from 8 navigations): each bundle fits, each is accepted before the next is built,
    every navigation arrives once, and all of them go over one TLS connection (the TCP connects
    this process makes are counted: the real ``socket.create_connection`` runs each)."""
    from protolens.collector import contribute

    connects: list[object] = []
    real_connect = socket.create_connection

    def counted(*args: Any, **kwargs: Any) -> socket.socket:
        connects.append(args[0])
        return real_connect(*args, **kwargs)

    monkeypatch.setattr(contribute, "MAX_BUNDLE_BYTES", 20_000)
    monkeypatch.setattr(contribute, "FIRST_WINDOW", 8)
    db = tmp_path / "s.db"
    ingest_all_spread(db, 30)
    with running_collector(tmp_path) as c:
        token = c.token("vol-1")
        target = contribute.Target(c.url, token, c.ca)
        home = tmp_path / "home"
        monkeypatch.setattr(socket, "create_connection", counted)
        receipt = contribute.run_once(db, home, target)
        monkeypatch.setattr(socket, "create_connection", real_connect)
        assert receipt["status"] == "stored" and receipt["bundles_sent"] >= 3, receipt
        assert len(connects) == 1, connects
        assert contribute.run_once(db, home, target)["status"] == "nothing new"
        status = json.loads(cli("collector", "status", "--data", str(c.data), "--json").stdout)
        assert status["navigations_rows"] == 30 and status["bundles"] == receipt["bundles_sent"]
        assert status["refused_duplicates"] == 0
        for tar in (c.data / "dataset").rglob("table=navigations/*/*.parquet"):
            assert tar.stat().st_size < 20_000


def ingest_all_spread(db: Path, n: int) -> None:
    """``n`` loads stored one per second apart (a backlog with distinct ingest times)."""
    conn = open_rw(db, time.time() * 1000)
    for i in range(n):
        ingest(conn, parse_record(lab_record(70_000 + i, "camp", "p", "c", "h2", i, 900.0 + i,
                                             n_requests=20, source="experiment")), {},
               NOW_MS + 1000 * i)
    conn.close()


def test_a_ca_file_that_is_no_certificate_is_a_clear_error(tmp_path: Path) -> None:
    """A saved schedule's CA file replaced by something else: one clear error, nothing sent or
    left pending (no collector is needed to find out)."""
    from protolens.collector import contribute

    db = small_store(tmp_path / "s.db")
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    home = tmp_path / "home"
    with pytest.raises(contribute.ContributeError, match="not a CA certificate to trust"):
        contribute.run_once(db, home, contribute.Target("https://127.0.0.1:9", "plc_" + "x" * 43,
                                                        bad))
    assert not (home / "contribute" / "pending.tar").exists()
