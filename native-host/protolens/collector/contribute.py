"""The volunteer's contribution run (adapter), shared by ``protolens contribute`` and the host's
schedule (``collector/schedule.py``): what is new since the collector's last accepted upload
becomes one anonymized bundle (``share/export.py``), uploaded with back-off
(``collector/client.py``), recorded in the store (``store/contribute.py``).

The bundle waits in ``<data home>/contribute/pending.tar`` until accepted, so an interrupted run
resends the same bytes (same checksum: the collector stores it once) rather than a second copy of
the same loads. One run at a time per data home (an ``flock``; Chromium may run several hosts).
"""

from __future__ import annotations

import fcntl
import json
import os
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from protolens.collector.client import Backoff, UploadError, open_client, upload
from protolens.collector.settings import ContributeSettings, load, save
from protolens.share import contributor, export
from protolens.share.bundle import SCHEMAS, TABLES, BundleError, read_bundle
from protolens.store import StoreError, open_rw, private_dir
from protolens.store import contribute as state
from protolens.store.bundles import local_ingest_window

PENDING = "pending.tar"
PENDING_INFO = "pending.json"
MAX_BUNDLE_BYTES = 6 << 20
"""A backlog is sent as bundles of at most this many bytes of tables, under the collector's
default ``--max-bytes`` (8 MiB), each after the one before was accepted."""
FIRST_WINDOW = 2000
"""Navigations tried in one bundle before halving to fit ``MAX_BUNDLE_BYTES``."""
COLUMNS = {t: [f.name for f in SCHEMAS[t]] for t in TABLES}
"""What a bundle holds (for previews)."""


class ContributeError(Exception):
    """A run that could not finish; one line, never the token."""


@dataclass(frozen=True)
class Target:
    url: str
    token: str
    ca_cert: Path | None = None
    allow: frozenset[str] = frozenset()


@contextmanager
def _one_at_a_time(home: Path) -> Iterator[None]:
    """The run's lock; the folders are the user's only (0700) and the files 0600, as the host's
    own (``store.private_dir``/``private_file``): they hold what is about to be shared."""
    folder = home / "contribute"
    private_dir(home)
    private_dir(folder)
    folder.chmod(0o700)  # also one an older version made 0755
    fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def status(db: Path, url: str | None) -> dict[str, Any]:
    """New loads waiting for ``url`` (every local load when no collector is set yet), the
    columns, and the last accepted upload (nothing is created)."""
    out: dict[str, Any] = {"new_loads": 0, "last": None, "columns": COLUMNS}
    if not db.is_file():
        return out
    conn = open_rw(db, time.time() * 1000)
    try:
        out["last"] = state.last(conn)
        after = state.high_water(conn, url) if url else -1.0
        out["new_loads"] = local_ingest_window(conn, after)[0]
    finally:
        conn.close()
    return out


def _send(conn: Any, t: Target, tar: Path, info: dict[str, Any],
          sleep: Callable[[float], None], backoff: Backoff, client: httpx.Client
          ) -> dict[str, Any]:
    try:
        receipt = upload(t.url, t.token, tar.read_bytes(), sleep=sleep, backoff=backoff,
                         client=client)
    except UploadError as exc:
        raise ContributeError(f"{exc} (the bundle is kept and sent again next time)") from None
    state.record(conn, t.url, receipt["checksum"], info["upto_ms"], info["navigations"],
                 time.time() * 1000, json.dumps(receipt, sort_keys=True))
    tar.unlink()
    (tar.parent / PENDING_INFO).unlink(missing_ok=True)
    return receipt


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)


def _fitting(conn: Any, t: Target, home: Path, after: float, latest: float
             ) -> tuple[export.Built, float]:
    """The next bundle of the backlog: the navigations stored after ``after``, as many as fit
    ``MAX_BUNDLE_BYTES`` (halving the window until they do; one navigation always goes), and
    the window's end."""
    most = FIRST_WINDOW
    while True:
        upto = state.window_end(conn, after, most) or latest
        built = export.build(conn, allow=t.allow, since_ms=None, now_ms=time.time() * 1000,
                             contributor_id=contributor.ensure_id(home), ingested=(after, upto))
        if sum(map(len, built.files.values())) <= MAX_BUNDLE_BYTES or most == 1:
            return built, upto
        most //= 2


def run_once(db: Path, home: Path, t: Target, *, sleep: Callable[[float], None] = time.sleep,
             backoff: Backoff | None = None) -> dict[str, Any]:
    """Upload what is new (first any pending bundle for this collector); the receipt, or
    ``{"status": "nothing new"}``."""
    if not db.is_file():
        raise ContributeError(f"{db}: no database here (nothing recorded yet?)")
    with _one_at_a_time(home):
        try:
            conn = open_rw(db, time.time() * 1000)
        except StoreError as exc:
            raise ContributeError(str(exc)) from None
        # one client for the run: a backlog's bundles share its TLS connection
        try:
            client = open_client(t.ca_cert)
        except (OSError, ssl.SSLError) as exc:
            conn.close()
            raise ContributeError(f"{t.ca_cert or 'the system trust store'}: not a CA "
                                  f"certificate to trust ({exc})") from None
        try:
            pending = home / "contribute" / PENDING
            if pending.exists():
                try:
                    info = json.loads((pending.parent / PENDING_INFO).read_text())
                except (OSError, ValueError):  # interrupted before its note was written
                    info = {}
                    pending.unlink()
                if info.get("collector") == t.url:
                    return _send(conn, t, pending, info, sleep, backoff or Backoff(), client)
            receipt: dict[str, Any] | None = None
            sent = 0
            while True:  # a backlog goes as several bundles, each accepted before the next
                after = state.high_water(conn, t.url)
                count, latest = local_ingest_window(conn, after)
                if count == 0 or latest is None:
                    break
                built, upto = _fitting(conn, t, home, after, latest)
                now_ms = time.time() * 1000
                export.write(built, pending, now_ms)
                read_bundle(pending)  # what the collector will check, checked here first
                info = {"collector": t.url, "upto_ms": upto,
                        "navigations": built.manifest["tables"]["navigations"]["rows"]}
                _write_private(pending.parent / PENDING_INFO, json.dumps(info))
                receipt = _send(conn, t, pending, info, sleep, backoff or Backoff(), client)
                sent += 1
            if receipt is None:
                return {"status": "nothing new", "last": state.last(conn)}
            return {**receipt, "bundles_sent": sent} if sent > 1 else receipt
        except BundleError as exc:
            raise ContributeError(f"the bundle built here does not validate ({exc})") from None
        finally:
            client.close()
            conn.close()


def forget(db: Path, home: Path) -> dict[str, Any]:
    """Leave: switch the schedule off (and drop the saved token), forget every accepted upload
    and any pending bundle."""
    with _one_at_a_time(home):
        if load(home) != ContributeSettings():
            save(home, ContributeSettings())
        removed = 0
        for name in (PENDING, PENDING_INFO):
            path = home / "contribute" / name
            if path.exists():
                path.unlink()
                removed += 1
        forgotten = 0
        if db.is_file():
            conn = open_rw(db, time.time() * 1000)
            try:
                forgotten = state.forget(conn)
            finally:
                conn.close()
    return {"forgotten_uploads": forgotten, "pending_removed": removed > 0}
