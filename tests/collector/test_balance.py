"""Kept-alive uploaders spread over a ``--workers N`` collector (``collector/balance.py``): the
rule, the board of connection counts (real processes), and a real two-worker server whose
connections all landed on one worker (the other stopped with SIGSTOP while they connected)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from protolens.collector.balance import FOLDER_PREFIX, Board, make_folder, should_shed, sweep
from protolens.collector.client import open_client, upload
from scripts.devkit.collector import bundle_bytes, running_collector, small_store


@pytest.mark.parametrize(("mine", "others", "shed"), [
    (5, [3], True), (4, [3], False), (4, [4], False), (8, [0], True), (2, [0], True),
    (1, [0], False), (6, [2, 5], True), (6, [5, 4], True), (6, [5, 5], False), (9, [], False)])
def test_a_worker_sheds_only_two_above_the_least_busy_other(mine: int, others: list[int],
                                                            shed: bool) -> None:
    assert should_shed(mine, others) is shed


def test_the_board_reads_live_processes_and_removes_the_ended(tmp_path: Path) -> None:
    me = Board(tmp_path)
    child = subprocess.Popen(["sleep", "60"])
    try:
        theirs = Board(tmp_path, pid=child.pid)  # what the child's own board would write
        theirs.publish(7)
        (tmp_path / "notes.txt").write_text("not a process")
        me.publish(9)
        assert me.others() == [7] and me.shed()
        theirs.publish(8)
        assert me.others() == [8] and not me.shed()
    finally:
        child.kill()
        child.wait()
    assert me.others() == [] and not (tmp_path / str(child.pid)).exists()
    me.close()
    assert not (tmp_path / str(os.getpid())).exists()


def test_a_worker_lets_go_one_connection_at_a_time_until_its_count_drops(
        tmp_path: Path) -> None:
    me = Board(tmp_path)
    child = subprocess.Popen(["sleep", "60"])
    try:
        Board(tmp_path, pid=child.pid).publish(3)
        me.publish(6)
        # three uploads answered together: 6 and 5 are two above 3, the third sees 4 (not)
        assert [me.shed(), me.shed(), me.shed()] == [True, True, False]
        me.publish(5)  # one of the two has gone: the other still counts as leaving
        assert me.leaving == 1 and not me.shed()
        me.publish(4)
        assert me.leaving == 0 and not me.shed()
        me.publish(5)  # a new connection: two above again
        assert me.shed() and me.leaving == 1
    finally:
        child.kill()
        child.wait()
    me.close()


def _dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_board_folders_left_by_killed_supervisors_are_swept_and_nothing_else(
        tmp_path: Path) -> None:
    dead, dead2 = _dead_pid(), _dead_pid()
    worker = subprocess.Popen(["sleep", "60"])
    try:
        def folder(owner: int, tail: str, *files: str) -> Path:
            d = tmp_path / f"{FOLDER_PREFIX}{owner}-{tail}"
            d.mkdir()
            for f in files:
                (d / f).write_bytes(b"%12d" % 0)
            return d

        left = folder(dead, "a1_b", str(dead2))  # killed supervisor, its workers gone
        empty = folder(dead, "c2")  # killed before its workers started
        live_owner = folder(os.getpid(), "d3", str(dead2))  # a supervisor still running
        live_worker = folder(dead, "e4", str(worker.pid))  # an orphaned worker still serving
        foreign = folder(dead, "f5", str(dead2), "notes.txt")  # something not ours inside
        other = tmp_path / "protolens-collector-abc"  # the old name, no owner: not judged
        other.mkdir()
        assert sorted(sweep(tmp_path)) == sorted([left, empty])
        assert not left.exists() and not empty.exists()
        assert live_owner.exists() and live_worker.exists() and foreign.exists() and other.exists()
        new = make_folder(tmp_path)  # what serve --workers N calls at its start
        assert new.name.startswith(f"{FOLDER_PREFIX}{os.getpid()}-") and new.is_dir()
        assert sweep(tmp_path) == []  # its own folder, and the ones above, stay
    finally:
        worker.kill()
        worker.wait()
    assert sweep(tmp_path) == [live_worker]


def _split(port: str) -> list[int]:
    """Established connections to the collector, per worker process (ss)."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
                         capture_output=True, text=True, check=True).stdout
    return sorted(Counter(re.findall(r"pid=(\d+)", out)).values())


def test_kept_alive_uploaders_piled_on_one_worker_are_spread(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path, "--workers", "2", "--rate", "100000",
                           "--burst", "100000") as c:
        token = c.token("vol-1")
        port = c.url.rsplit(":", 1)[1]
        deadline = time.monotonic() + 30
        while len(c.workers()) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped = c.workers()[0]
        clients = [open_client(c.ca) for _ in range(8)]
        os.kill(stopped, signal.SIGSTOP)  # every connection now goes to the other worker
        try:
            for client in clients:
                assert client.get(c.url + "/v1/health").status_code == 200
        finally:
            os.kill(stopped, signal.SIGCONT)
        assert _split(port) == [8]
        first = upload(c.url, token, body, ca_cert=c.ca, sleep=time.sleep, client=clients[0])
        assert first["status"] == "stored"
        splits, statuses = [], []
        with ThreadPoolExecutor(8) as pool:
            for _ in range(20):  # which worker accepts a reconnect is the kernel's race
                # one upload each (the bundle is stored already), then a health check,
                # which reconnects a client whose upload was answered with Connection: close
                statuses += pool.map(lambda cl: upload(c.url, token, body, ca_cert=c.ca,
                                                       sleep=time.sleep, client=cl)["status"],
                                     clients)
                list(pool.map(lambda cl: cl.get(c.url + "/v1/health"), clients))
                splits.append(_split(port))
                if len(splits[-1]) == 2 and splits[-1][1] - splits[-1][0] <= 1:
                    break
        for client in clients:
            client.close()
    assert statuses and set(statuses) == {"already stored"}
    assert len(splits[-1]) == 2 and splits[-1][1] - splits[-1][0] <= 1, splits
