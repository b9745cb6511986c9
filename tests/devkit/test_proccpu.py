"""The benches' CPU reading (scripts/devkit/proccpu.py) against the kernel's own accounting for
this process (os.times, the same utime + stime) and a process that has ended."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from scripts.devkit.proccpu import TICK, cpu_s, cpu_ticks, stat_fields


def test_this_processs_cpu_is_what_os_times_says() -> None:
    end = time.process_time() + 0.3
    while time.process_time() < end:  # burn 0.3 s of CPU so the reading has something to show
        pass
    t = os.times()
    got = cpu_s(os.getpid())
    # os.times counts the same ticks (plus children, which this process has not waited for)
    assert abs(got - (t.user + t.system)) <= 2 / TICK, (got, t)
    assert got >= 0.3
    assert cpu_ticks(os.getpid()) >= round(0.3 * TICK)
    assert int(stat_fields(os.getpid())[2]) == os.getpgid(0)


def test_a_command_name_with_spaces_and_parentheses_is_read_past(tmp_path: Path) -> None:
    odd = tmp_path / "a) 1 (b"  # the kernel's command name is the executable's file name
    shutil.copy("/bin/sleep", odd)
    p = subprocess.Popen([str(odd), "30"])
    try:
        time.sleep(0.2)
        assert Path(f"/proc/{p.pid}/comm").read_text().strip() == odd.name
        fields = stat_fields(p.pid)
        assert fields[0] in "RSD" and int(fields[2]) == os.getpgid(p.pid)
    finally:
        p.kill()
        p.wait()


def test_a_process_that_has_gone_reads_zero_or_raises() -> None:
    p = subprocess.Popen(["true"])
    p.wait()
    assert cpu_s(p.pid) == 0.0
    with pytest.raises(OSError):
        cpu_ticks(p.pid)
