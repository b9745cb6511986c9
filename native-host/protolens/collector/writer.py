"""One collector process's writer (adapter): its lease in the catalog, its own staging folder
``DIR/tmp/<id>``, and the heartbeat thread that renews the lease and sweeps
(``collector/sweep.py``, ``store/collector_leases.py``).

The lease is renewed every fifth of its period, so a writer survives four missed renewals (a
busy catalog, a paused process). One that lost it anyway (swept by another process) takes a new
id and folder; the uploads it had in flight fail their commit and are answered 503, and their
clients send them again.

A lease also names the machine its process runs on (host name, kernel boot, process namespace:
``machine``); a sweep on the same machine deletes the leases of writers whose process has ended
(``kill -9``, a crashed worker) without waiting for them to run out, so their committed files
reach the dataset at the next process's start.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from protolens.collector.layout import CATALOG, TMP
from protolens.collector.sweep import STAGED, Swept, abandon, sweep
from protolens.store import Connection
from protolens.store.collector import catalog_paths, open_catalog
from protolens.store.collector_leases import (
    expire_ended_writers,
    register_writer,
    release_writer,
    renew_writer,
)
from protolens.store.collector_navindex import NavIndex
from protolens.testbed.procs import alive

log = logging.getLogger("protolens.collector")
T = TypeVar("T")


def machine() -> str | None:
    """Where this process runs, as a lease names it (``writers.host``): the host name, the
    kernel's boot and the process namespace, within which a pid names one process; None where
    /proc does not say (then only a lease's running out frees it)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        space = os.readlink("/proc/self/ns/pid")
        if int(Path("/proc/self/stat").read_text().split()[0]) != os.getpid():
            return None  # a /proc of another process namespace: its pids are not ours
    except (OSError, ValueError):
        return None
    return f"{socket.gethostname()} boot {boot} {space}"


@dataclass
class Writer:
    data: Path
    ttl_s: float = 30.0
    id: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)
    _local: threading.local = field(default_factory=threading.local)
    _conns: list[Connection] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _read_lock: threading.Lock = field(default_factory=threading.Lock)
    _reader: Connection | None = None
    navs: NavIndex = field(default_factory=NavIndex)
    """The catalog's navigation keys, read once and then only what was committed since."""

    @property
    def folder(self) -> Path:
        return self.data / TMP / self.id

    @property
    def stage(self) -> Path:
        return self.folder_of(self.id)

    def folder_of(self, writer: str) -> Path:
        """Where writer ``writer`` stages dataset files."""
        return self.data / TMP / writer / STAGED

    def _now_ms(self) -> float:
        return time.time() * 1000

    def catalog(self) -> Connection:
        """This thread's connection to the catalog, opened once and kept until ``release``:
        SQLite checkpoints the WAL into the database and deletes it when the last connection to
        it closes (https://www.sqlite.org/wal.html section 2.2), which an open and close per
        upload paid every time. Autocommit: each write is a ``transaction()`` of its own."""
        conn: Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
            self._local.conn = conn
            with self._lock:
                self._conns.append(conn)
        return conn

    def shared_read(self, fn: Callable[[Connection], T]) -> T:
        """``fn`` run on one connection kept for short reads from any thread (token look-ups
        run on the event loop's changing pool of threads), one caller at a time."""
        with self._read_lock:
            if self._reader is None:
                self._reader = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
                with self._lock:
                    self._conns.append(self._reader)
            return fn(self._reader)

    def register(self) -> None:
        self.id = secrets.token_hex(8)
        conn = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
        try:
            register_writer(conn, self.id, machine() or socket.gethostname(), os.getpid(),
                            self._now_ms(), self.ttl_s * 1000)
        finally:
            conn.close()
        self.stage.mkdir(parents=True, exist_ok=True)

    def renew(self) -> None:
        conn = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
        try:
            kept = renew_writer(conn, self.id, self._now_ms(), self.ttl_s * 1000)
        finally:
            conn.close()
        if not kept:
            log.warning("writer %s lost its lease; taking a new one", self.id)
            self.register()

    def sweep(self) -> Swept:
        conn = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
        try:
            here = machine()
            if here is not None:  # this machine's ended writers: no need to wait for their lease
                expire_ended_writers(conn, here, alive)
            swept = sweep(self.data, conn, self._now_ms())
        finally:
            conn.close()
        if swept.removed or swept.rolled_forward or swept.abandoned:
            log.info("sweep: %d writer folders of ended processes, %d committed files moved "
                     "into place, %d unacknowledged files removed", len(swept.abandoned),
                     len(swept.rolled_forward), len(swept.removed))
        return swept

    def heartbeat(self) -> threading.Thread:
        def loop() -> None:
            beat = 0
            while not self._stop.wait(self.ttl_s / 5):
                beat += 1
                try:
                    self.renew()
                    if beat % 5 == 0:
                        self.sweep()
                except Exception as exc:  # noqa: BLE001 - a lease renewed late beats none
                    log.warning("heartbeat: %s", exc)

        thread = threading.Thread(target=loop, name="collector-lease", daemon=True)
        thread.start()
        return thread

    def release(self) -> None:
        """Clean shutdown: the lease first (nothing more can commit), then the folder, as a
        sweep would treat it."""
        self._stop.set()
        conn = open_catalog(self.data / CATALOG, self._now_ms(), migrate=False)
        try:
            release_writer(conn, self.id)
            abandon(self.data, self.folder, catalog_paths(conn))
        finally:
            conn.close()
        with self._lock:
            conns, self._conns, self._reader = self._conns, [], None
        for kept in conns:
            kept.close()
