"""End to end: the outbox keeps records while the host is unavailable and delivers each once.

Issue 2: "host unavailable during 3 navigations, then available: all 3 stored exactly once".
Real Chromium + the built extension + the host + SQLite. The lab context says ``advance: record``
(docs/MESSAGES.md "Lab mode"), so the extension opens the next URL as soon as the previous record
is queued, not acked. As soon as the first page reaches caddy (hello has happened), the host is
made unavailable: its per-profile wrapper script is replaced by one that exits 1 (every reconnect
fails), then the running host process is killed. Once caddy has seen all three pages' late
requests and the recorder's quiet period has passed, the store must hold none of the records;
then the wrapper is restored and the store must end up with exactly one record per URL.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from protolens.arms import Arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.launch import run_load
from scripts.devkit.caddylog import read_hits
from scripts.devkit.harness import CHROMIUM, require_dist, stored_ids
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.e2e

QUIET_S = 2.0
"""The recorder's network-quiet period after load (src/cdp/navigation.ts)."""
SETTLE_S = QUIET_S + 2.0
"""Quiet period, the adapter's 50 ms poll and the outbox write, with margin."""
STABLE_S = 3.0
"""After the last record arrives, how long the count must stay put (a duplicate would show)."""


def host_pids(context_file: Path) -> list[int]:
    """Native host processes of this load: their environment names its lab context file."""
    needle = f"PROTOLENS_LAB_CONTEXT={context_file}".encode()
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in env:
            pids.append(int(proc.name))
    return pids


@dataclass
class HostOutage:
    """The ``done`` callback of run_load as a small state machine (polled every 0.1 s)."""

    log: Path
    log_offset: int
    db: Path
    load_id: str
    wrapper: Path
    context_file: Path
    pages: int
    phase: str = "wait-first-page"
    saved_wrapper: str = ""
    killed: list[int] = field(default_factory=list)
    stored_while_down: int | None = None
    quiet_from: float = 0.0
    stable_from: float = 0.0
    last_count: int = -1
    trace: list[tuple[float, str]] = field(default_factory=list)

    def _hits(self, prefix: str) -> int:
        return sum(h.uri.startswith(prefix) for h in read_hits(self.log, self.log_offset))

    def _go(self, phase: str) -> None:
        self.phase = phase
        self.trace.append((time.monotonic(), phase))

    def __call__(self) -> bool:
        now = time.monotonic()
        if self.phase == "wait-first-page":
            if self._hits("/page/?n=1") == 0:
                return False
            # reconnects must fail before the running host goes away
            self.saved_wrapper = self.wrapper.read_text()
            self.wrapper.write_text("#!/bin/sh\nexit 1\n")
            self.killed = host_pids(self.context_file)
            for pid in self.killed:
                os.kill(pid, signal.SIGKILL)
            self._go("down")
        elif self.phase == "down":
            if self._hits("/page/data/late.json") >= self.pages:
                self.quiet_from = now
                self._go("settling")
        elif self.phase == "settling":
            if now - self.quiet_from >= SETTLE_S:
                self.stored_while_down = len(stored_ids(self.db, self.load_id))
                self.wrapper.write_text(self.saved_wrapper)
                self._go("up")
        elif self.phase == "up":
            count = len(stored_ids(self.db, self.load_id))
            if count != self.last_count:
                self.last_count, self.stable_from = count, now
            if count >= self.pages and now - self.stable_from >= STABLE_S:
                self._go("done")
                return True
        return False


def test_host_unavailable_for_three_navigations_then_all_stored_once(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    scratch = tmp_path / "load"
    load_id = str(uuid.uuid4())
    with serve_site(tmp_path / "site") as site:
        urls = [f"{site.origin()}/page/?n={i}" for i in (1, 2, 3)]
        outage = HostOutage(
            log=site.access_log, log_offset=site.access_log.stat().st_size, db=db, load_id=load_id,
            wrapper=scratch / "profile" / "NativeMessagingHosts" / "org.protolens.host.sh",
            context_file=scratch / "lab-context.json", pages=len(urls))
        spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="", extension_dir=str(require_dist()),
                          arm=Arm("h2"), origins=[], spki=[site.spki],
                          host_rules="MAP *.test 127.0.0.1")
        result = run_load(spec, scratch=scratch, db=db, navigate=urls, advance="record",
                          context={"load_id": load_id, "arm": "h2"}, timeout_s=120.0, done=outage)
        page_hits = [h.uri for h in read_hits(site.access_log, outage.log_offset)
                     if h.uri.startswith("/page/?n=")]

    assert result.ok, f"{result.reason} in phase {outage.phase}; see {result.log}"
    assert outage.killed, "no native host process of this load was found to kill"
    assert outage.stored_while_down == 0, "records reached the store while the host was down"
    assert sorted(page_hits) == sorted(u.removeprefix(site.origin()) for u in urls)
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT id, url FROM navigations WHERE load_id = ?",
                            (load_id,)).fetchall()
    assert sorted(url for _, url in rows) == sorted(urls), "want exactly one record per URL"
    assert len({rid for rid, _ in rows}) == len(rows) == 3
    up = next(t for t, p in outage.trace if p == "up")
    done = next(t for t, p in outage.trace if p == "done")
    print(f"host down, 3 pages queued; all stored {done - up - STABLE_S:.1f} s after the host "
          f"came back (killed pids {outage.killed})")
