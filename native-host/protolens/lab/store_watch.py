"""When a lab load is done (adapter): the host has stored its records (and their logs), seen
through the store's files, the store opened only when they changed. ``runner.py`` polls it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from protolens.store import DatabaseError, StoreError, open_ro
from protolens.store import lab as labstore


class StoreWatch:
    """``done`` for a load: has the host stored ``expect`` records of it? Asked every 20 ms, it
    opens the store only when the store's files changed (the host's commit appends to the WAL)
    or 250 ms went by (a commit seen half-written), not ten times a second while the page loads
    beside it on the same cores: a record stored was seen 60 ms later (median), now 10-20 ms
    (scripts/bench/lab_overhead.py, stored -> done)."""

    POLL_S = 0.02
    RECHECK_S = 0.25
    LOG_WAIT_S = 5.0
    """With ``logs``: how long after the records it waits for their logs (the extension sends a
    log after its record's ack); past it the load is done without them."""

    def __init__(self, db: Path, load_id: str, expect: int, clock: Callable[[], float],
                 logs: bool = False) -> None:
        self.db, self.load_id, self.expect, self.clock = db, load_id, expect, clock
        self.logs = logs
        self.seen: tuple[tuple[int, int] | None, ...] | None = None
        self.asked = -self.RECHECK_S
        self.records_at: float | None = None

    def __call__(self) -> bool:
        files = tuple(_stamp(self.db.with_name(self.db.name + tail)) for tail in ("", "-wal"))
        now = self.clock()
        if files == self.seen and now - self.asked < self.RECHECK_S:
            return False
        self.seen, self.asked = files, now
        if self.records_at is None:
            if len(stored_navigation_ids(self.db, self.load_id)) < self.expect:
                return False
            self.records_at = now
        return (not self.logs or now - self.records_at >= self.LOG_WAIT_S
                or stored_log_count(self.db, self.load_id) >= self.expect)


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def stored_navigation_ids(db: Path, load_id: str) -> list[str]:
    """Ids of the records the host has stored for a load so far; none while the store or its
    schema does not exist yet (the host creates both on its first record)."""
    if not db.exists():
        return []
    try:
        with closing(open_ro(db)) as conn:
            return labstore.navigation_ids(conn, load_id)
    except (StoreError, DatabaseError):
        return []


def stored_log_count(db: Path, load_id: str) -> int:
    """How many of a load's records have their log stored (``store/logs.py``)."""
    try:
        with closing(open_ro(db)) as conn:
            return labstore.log_count(conn, load_id)
    except (StoreError, DatabaseError):
        return 0
