"""A standby lab browser waits beside a page without running (lab/runner.py): started under
``SCHED_IDLE`` (``launch.IDLE``), stopped (``Running.freeze``) while a page loads, continued at
the normal priority (``Running.thaw``) when the page has loaded. Real processes stand in for
Chromium: a Python process with threads, in a process group of its own, which resets its own
nice value as Chromium does (the reason the idle policy is used, not ``nice``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.launch import (
    IDLE,
    Running,
    group_threads,
    start_browser,
    stop,
    wake_group,
)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="giving the normal policy back "
                                "needs root (CAP_SYS_NICE)")

# three threads and a child process with three of its own; each of those threads sets its nice
# value to 0, as Chromium does with its own (the idle policy must survive it)
WORKER = """
import os, subprocess, sys, threading, time
def spin():
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 0)
    while True:
        time.sleep(0.01)
for _ in range(3):
    threading.Thread(target=spin, daemon=True).start()
if sys.argv[1:] != ["child"]:
    subprocess.Popen([sys.executable, sys.argv[0], "child"], stdout=subprocess.DEVNULL)
    print("up", flush=True)
time.sleep(60)
"""


def _start(tmp_path: Path, idle: bool) -> Running:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    proc = subprocess.Popen([*(IDLE if idle else ()), sys.executable, str(script)],
                            stdout=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    deadline = time.monotonic() + 5
    while len(_policies(proc.pid)) < 8 and time.monotonic() < deadline:  # 2 x (main + 3)
        time.sleep(0.02)
    return Running(proc, [], tmp_path / "log", time.monotonic(), go_file=tmp_path / "go.json",
                   idle=idle)


def _policies(pgid: int) -> list[int]:
    out = []
    for tid in group_threads(pgid):
        with contextlib.suppress(ProcessLookupError):
            out.append(os.sched_getscheduler(tid))
    return out


def _states(pgid: int) -> set[str]:
    states = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid:
                states.add(fields[0])
    return states


def test_an_idle_standby_gets_the_normal_policy_back_in_every_thread(tmp_path: Path) -> None:
    run = _start(tmp_path, idle=True)
    try:
        before = _policies(run.proc.pid)
        assert len(before) >= 8 and set(before) == {os.SCHED_IDLE}, before
        run.thaw()
        after = _policies(run.proc.pid)
        assert set(after) == {os.SCHED_OTHER} and len(after) == len(before), after
        assert not run.idle
        assert wake_group(run.proc.pid) == 0  # nothing left to change
    finally:
        stop(run.proc, grace_s=2)


def test_a_frozen_standby_does_not_run_until_thawed_and_its_go_thaws_it(tmp_path: Path
                                                                        ) -> None:
    run = _start(tmp_path, idle=False)
    try:
        run.freeze()
        time.sleep(0.1)
        assert _states(run.proc.pid) == {"T"}  # every process of the group stopped
        run.thaw()
        time.sleep(0.1)
        assert "T" not in _states(run.proc.pid)
        run.freeze()
        run.go()  # a standby let go while frozen (its page before never loaded) runs again
        time.sleep(0.1)
        assert "T" not in _states(run.proc.pid) and not run.frozen
        assert (tmp_path / "go.json").exists()
    finally:
        stop(run.proc, grace_s=2)


def test_a_frozen_standby_stops_at_once(tmp_path: Path) -> None:
    run = _start(tmp_path, idle=True)
    run.freeze()
    started = time.monotonic()
    run.stop()  # SIGTERM waits in a stopped process: it is continued first
    assert time.monotonic() - started < 1.5  # not the 2 s grace then SIGKILL
    assert run.proc.poll() is not None


@pytest.mark.parametrize("chrt", [True, False])
def test_start_browser_runs_a_standby_idle_only_where_chrt_is(tmp_path: Path, chrt: bool,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """``start_browser`` as ``lab run`` calls it for the standby two loads ahead, with a stand-in
    for Chromium (a shell script that sleeps, whatever its flags). Where util-linux's ``chrt`` is
    found it runs under ``SCHED_IDLE`` until thawed; on a machine without it (``shutil.which``
    made to find none) it starts at the normal policy, ``Running.idle`` is False, and freezing,
    thawing and its go work the same."""
    found = shutil.which
    if not chrt:
        monkeypatch.setattr(shutil, "which",
                            lambda name, *a, **k: None if name == IDLE[0] else found(name, *a, **k))
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    spec = LaunchSpec(chromium=str(fake), user_data_dir="", extension_dir=str(tmp_path / "ext"),
                      arm=Arm("h2"), origins=[])
    run = start_browser(spec, scratch=tmp_path / "load", db=tmp_path / "store.db",
                        navigate=["https://a.test/"], context={"load_id": "x", "arm": "h2"},
                        standby=True, idle=True)
    try:
        deadline = time.monotonic() + 5
        while not _policies(run.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert run.idle is chrt
        want = os.SCHED_IDLE if chrt else os.SCHED_OTHER
        assert set(_policies(run.proc.pid)) == {want}
        run.freeze()
        time.sleep(0.1)
        assert _states(run.proc.pid) == {"T"}
        run.go()
        time.sleep(0.1)
        assert "T" not in _states(run.proc.pid) and not run.idle
        assert set(_policies(run.proc.pid)) == {os.SCHED_OTHER}
        assert (tmp_path / "load" / "go.json").exists()
    finally:
        run.stop()
    assert run.proc.poll() is not None
