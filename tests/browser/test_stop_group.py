"""``launch.stop`` ends a lab browser's whole process group before it returns (real processes:
a shell that leaves a child behind stands in for Chromium's network service, which outlived the
browser process and sent its connections' last packets after lab run had reset the flow
counters for the next load)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from protolens.browser.launch import group_alive, stop


def test_stop_waits_for_a_child_that_outlives_the_leader(tmp_path: Path) -> None:
    # the leader exits on SIGTERM at once; its child ignores SIGTERM for 0.3 s, then exits
    child = "trap '' TERM; sleep 0.3"
    proc = subprocess.Popen(["sh", "-c", f"sh -c \"{child}\" & wait"],
                            start_new_session=True)
    time.sleep(0.2)
    assert group_alive(proc.pid)
    started = time.monotonic()
    stop(proc, grace_s=5.0)
    assert not group_alive(proc.pid)
    assert time.monotonic() - started >= 0.05  # it waited for the child, not only the leader


def test_an_unkillable_wait_ends_with_sigkill_after_the_grace(tmp_path: Path) -> None:
    proc = subprocess.Popen(["sh", "-c", "trap '' TERM; sh -c \"trap '' TERM; sleep 30\" & wait"],
                            start_new_session=True)
    time.sleep(0.2)
    started = time.monotonic()
    stop(proc, grace_s=0.5)
    assert not group_alive(proc.pid)
    assert time.monotonic() - started < 5


def test_group_alive_reads_proc_and_skips_zombies(tmp_path: Path) -> None:
    proc_dir = tmp_path / "proc"
    for pid, state, pgrp in ((10, "S", 77), (11, "Z", 88), (12, "R", 99)):
        (proc_dir / str(pid)).mkdir(parents=True)
        (proc_dir / str(pid) / "stat").write_text(f"{pid} (a (b) c) {state} 1 {pgrp} 0 0")
    (proc_dir / "self").mkdir()
    assert group_alive(77, proc_dir)
    assert not group_alive(88, proc_dir)  # a zombie: its sockets are closed
    assert not group_alive(55, proc_dir)
