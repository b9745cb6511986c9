"""A process's CPU time from /proc, for the benches (user + system, its own threads, not its
children's): one reading of ``/proc/PID/stat`` instead of one per bench."""

from __future__ import annotations

import os
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
"""Clock ticks per second, the unit of ``/proc/PID/stat``'s times."""


def stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (which may hold spaces and
    parentheses): index 0 is the state, 2 the process group, 11 utime, 12 stime. Raises
    OSError once the process has gone."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_ticks(pid: int) -> int:
    """User + system CPU of ``pid`` in clock ticks; OSError once it has gone."""
    fields = stat_fields(pid)
    return int(fields[11]) + int(fields[12])


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid``; 0 once it has gone."""
    try:
        return cpu_ticks(pid) / TICK
    except OSError:
        return 0.0
