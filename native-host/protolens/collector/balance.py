"""Spreading kept-alive connections over a collector's worker processes (the rule is pure; the
board is an adapter).

With ``--workers N`` the processes share one listening socket, and a process that wakes for it
accepts every connection waiting (asyncio's accept loop), so uploaders that connect together
sit unevenly: 8 uploaders on 2 workers were split 3/5 or 2/6 in 9 trials of 10 here. A
connection stays with its process while it is kept alive (``contribute`` sends a backlog over
one), and a worker is bound to about one core by its interpreter's lock, so the busier one sets
the pace: in the ingest bench, runs whose busiest worker had 61-74% of the collector's CPU kept
1.33-1.59 cores busy, balanced runs (51-52%) 1.68-1.74 (scripts/bench/collector_ingest.py).

So each worker publishes how many connections it holds (``Board``: one small file per process
in a folder the supervisor made), and answers an upload with ``Connection: close`` when it
holds at least two more than the least busy of the others (``should_shed``): that client's
next upload connects afresh, and a less busy worker (the one whose event loop is free) tends to
accept it. A single worker has no others and never sheds.

A connection let go counts as gone from the moment it is answered (``Board.leaving``), until the
count drops: without that, a worker answering several uploads together let them all go at once
(5 of 5 on a 3/5 split), was then the idle one when they reconnected, and took them all back: CI
run 65 saw 3/5 for ten rounds of eight uploads. One at a time, the worker keeps the rest busy.
Which worker accepts the one let go is still the kernel's race (the shared socket wakes both):
tests/collector/test_balance.py's case, 12 runs each with two busy loops on the 2 cores, was
balanced after 0-8 rounds of uploads before (median 1; 5 and 8 in two runs) and after 0-4 with
this (24 runs, median 1); yet in another 20 runs under the same load one still sat 3/5 for nine
rounds, the reconnect taken back each time (separate ``SO_REUSEPORT`` sockets per worker would
make it a fair coin; uvicorn's supervisor shares one socket).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from protolens.testbed.procs import alive

FOLDER_PREFIX = "protolens-collector-"
"""A board folder's name: this prefix, the supervisor's pid, a dash and mkdtemp's random part."""
_FOLDER = re.compile(re.escape(FOLDER_PREFIX) + r"(\d+)-[A-Za-z0-9_]+")

MARGIN = 2
"""Connections a worker must hold above the least busy other before it sheds one: at 1, two
workers of an odd total would pass a connection back and forth."""


def should_shed(mine: int, others: Sequence[int]) -> bool:
    """True if a worker holding ``mine`` connections should close the one it just answered."""
    return bool(others) and mine >= min(others) + MARGIN


class Board:
    """This process's connection count in ``folder/<pid>``, and the other live processes'."""

    def __init__(self, folder: Path, pid: int | None = None) -> None:
        self.folder = folder
        self.pid = os.getpid() if pid is None else pid
        self.count = 0
        self.leaving = 0
        """Connections answered with ``Connection: close`` whose loss is not yet counted."""
        self._fd = os.open(folder / str(self.pid), os.O_RDWR | os.O_CREAT, 0o600)
        self.publish(0)

    def publish(self, count: int) -> None:
        """Write ``count`` in place (one fixed-width pwrite: a reader never sees half). A drop
        counts first against the connections let go."""
        if count < self.count:
            self.leaving = max(0, self.leaving - (self.count - count))
        self.count = count
        os.pwrite(self._fd, b"%12d" % count, 0)

    def others(self) -> list[int]:
        """The counts of the other live processes; a file left by a process that has ended (a
        worker the supervisor restarted) is removed."""
        out: list[int] = []
        try:
            names = os.listdir(self.folder)
        except OSError:
            return out
        for name in names:
            if not name.isdigit() or int(name) == self.pid:
                continue
            path = self.folder / name
            if not alive(int(name)):
                with contextlib.suppress(OSError):
                    path.unlink()
                continue
            try:
                out.append(int(path.read_bytes() or b"0"))
            except (OSError, ValueError):
                continue
        return out

    def shed(self) -> bool:
        """Whether to let the connection just answered go; if so it counts as gone already."""
        if not should_shed(self.count - self.leaving, self.others()):
            return False
        self.leaving += 1
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
        with contextlib.suppress(OSError):
            (self.folder / str(self.pid)).unlink()


def make_folder(parent: Path | None = None) -> Path:
    """A new board folder for this supervisor (``serve --workers N``), in the temporary directory
    unless ``parent`` is given, after removing those that supervisors killed with SIGKILL left
    behind (``sweep``)."""
    base = Path(tempfile.gettempdir()) if parent is None else parent
    sweep(base)
    return Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir=base))


def sweep(parent: Path) -> list[Path]:
    """Remove the board folders in ``parent`` whose supervisor has ended and that hold nothing
    but workers' count files (a supervisor stopped cleanly removes its own; one killed with
    SIGKILL cannot). Returns what was removed; anything else is left alone."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for path in entries:
        m = _FOLDER.fullmatch(path.name)
        if m is None or not path.is_dir() or path.is_symlink() or alive(int(m.group(1))):
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        if all(n.isdigit() and (path / n).is_file() and not alive(int(n)) for n in names):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed
