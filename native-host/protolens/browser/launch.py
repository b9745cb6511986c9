"""Adapter: start lab Chromium with the extension and the host in lab mode, wait for the record.

One call = one browser start in a fresh profile. The caller says how to tell the load is stored
(``done``), usually a store query for the load's ``load_id``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protolens.browser.flags import LaunchSpec, command_line
from protolens.browser.profile import register_lab_host, seed_preferences, write_lab_context


@dataclass(frozen=True)
class LoadResult:
    """How one browser start ended."""

    ok: bool
    """True when ``done`` became true before the timeout."""
    reason: str | None
    """Why it failed (timeout, browser exit), else None."""
    wall_s: float
    """Seconds from browser start to done (or to giving up)."""
    argv: list[str]
    """The exact browser command line (with the network prefix)."""
    log: Path
    """Chromium's (and the native host's) stderr."""
    stopped_at: float = 0.0
    """time.monotonic() once every process of the browser had ended (``stop``)."""


def scratch_env(base: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """Chromium writes to ~/.config, ~/.cache, ~/.local even with --user-data-dir (verified)."""
    env = dict(base)
    for var, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"),
                     ("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data")):
        env[var] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    return env


@dataclass
class Running:
    """A lab browser started and not yet stopped (``start_browser``)."""

    proc: subprocess.Popen[bytes]
    argv: list[str]
    log: Path
    started: float
    """time.monotonic() at its start, or at its go for a standby browser."""
    go_file: Path | None = None
    """A standby browser's go file (None: it navigates by itself)."""
    loaded_file: Path | None = None
    """Created by its host when the last URL has loaded (``lab_loaded``), if asked for."""
    idle: bool = False
    """Started under ``SCHED_IDLE`` (a standby beside another one), until it is thawed."""
    frozen: bool = False
    """Stopped (SIGSTOP to its process group) while a page loads beside it."""

    def freeze(self) -> None:
        """Stop every process of a standby browser (``SIGSTOP`` to its group: none runs, none
        forks a child that escapes it) while a page loads beside it; ``thaw`` goes on."""
        if self.go_file is None or self.frozen or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGSTOP)
        self.frozen = True

    def _continue(self) -> None:
        """``SIGCONT`` to a frozen browser's group."""
        if self.frozen:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    def thaw(self) -> None:
        """Let a frozen or idle standby browser go on with its start, at the normal priority."""
        self._continue()
        if self.idle:
            wake_group(self.proc.pid)
            self.idle = False

    @property
    def loaded(self) -> bool:
        """Its last URL fired its load event (False when not asked for)."""
        return self.loaded_file is not None and self.loaded_file.exists()

    def go(self, start_at_ms: float | None = None) -> None:
        """Let a standby browser open its first URL (at ``start_at_ms``, else at once); the
        load's clock (``wall_s``, the timeout) starts now. A frozen or idle standby is thawed
        first (``thaw``): its page before never loaded, or it was never let go on."""
        if self.go_file is None:
            return
        self.thaw()
        part = self.go_file.with_suffix(".part")
        part.write_text(json.dumps({"start_at_ms": start_at_ms}))
        os.replace(part, self.go_file)  # the host never reads half a file
        self.started = time.monotonic()

    def stop(self) -> None:
        """Stop it (a standby browser whose load will not run)."""
        self._continue()  # a stopped process takes SIGTERM only once continued
        stop(self.proc)


def start_browser(spec: LaunchSpec, *, scratch: Path, db: Path, navigate: list[str],
                  context: dict[str, Any], prefix: Sequence[str] = (), url_detail: str = "full",
                  host_env: Mapping[str, str] | None = None, advance: str = "ack",
                  quiet_ms: int | None = None, visual: bool = False, save_log: bool = False,
                  start_at_ms: float | None = None, standby: bool = False,
                  mark_loaded: bool = False, idle: bool = False) -> Running:
    """Start Chromium on a fresh profile under ``scratch``. ``standby``: it attaches and then
    waits for ``Running.go``; ``mark_loaded``: its host marks when the last URL has loaded
    (``Running.loaded``); ``idle``: a standby runs under Linux's ``SCHED_IDLE`` policy until it
    is thawed (``Running.thaw``), only on CPU time no other thread wants (where the normal policy
    can be given back: as root). The other arguments as ``run_load``."""
    scratch.mkdir(parents=True, exist_ok=True)
    udd = scratch / "profile"
    seed_preferences(udd)
    spec = replace(spec, user_data_dir=str(udd))
    argv = command_line(spec)
    # the exact command line travels with the record as a tag: a reader can rerun the load
    context = {**context, "command_line": shlex.join([*prefix, *argv])}
    go_file = (scratch / "go.json").absolute() if standby else None
    loaded_file = (scratch / "loaded").absolute() if mark_loaded else None
    ctx = write_lab_context(scratch / "lab-context.json", navigate=navigate, context=context,
                            url_detail=url_detail, advance=advance, quiet_ms=quiet_ms,
                            visual=visual, save_log=save_log, start_at_ms=start_at_ms,
                            go_file=go_file, loaded_file=loaded_file)
    env = scratch_env(os.environ, scratch / "xdg")
    register_lab_host(udd, {"PROTOLENS_DB": str(db.absolute()), "PROTOLENS_LAB_CONTEXT": str(ctx),
                            **(host_env or {})})
    log = scratch / "chromium.log"
    idle = idle and standby and os.geteuid() == 0 and shutil.which(IDLE[0]) is not None
    with log.open("wb") as out:
        proc = subprocess.Popen([*(IDLE if idle else ()), *prefix, *argv],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
    return Running(proc, [*prefix, *argv], log, time.monotonic(), go_file, loaded_file, idle)


IDLE = ("chrt", "--idle", "0")
"""util-linux's ``chrt``: the command and everything it starts run under ``SCHED_IDLE``
(sched(7): a weight of 3 against nice 0's 1,024, below nice 19's 15), inherited across fork and
exec. Not ``nice``: Chromium, as root, sets its threads' nice values itself (0, -8 for the
display-critical ones, 5 for background ones: measured here on a browser started at nice 19, 50
ms after its start), which undoes a nice level but leaves the policy as it is."""


def wake_group(pgid: int, proc_dir: Path = Path("/proc"), passes: int = 5) -> int:
    """Put every ``SCHED_IDLE`` thread of process group ``pgid`` back under ``SCHED_OTHER``
    (keeping the nice value each has); again until a pass finds none (a thread made during a
    pass may have copied the idle policy), at most ``passes`` times. Returns how many threads
    it changed."""
    changed = 0
    for _ in range(passes):
        found = 0
        for tid in group_threads(pgid, proc_dir):
            with contextlib.suppress(ProcessLookupError):
                if os.sched_getscheduler(tid) == os.SCHED_IDLE:
                    os.sched_setscheduler(tid, os.SCHED_OTHER, os.sched_param(0))
                    found += 1
        changed += found
        if not found:
            break
    return changed


def finish(run: Running, done: Callable[[], bool], timeout_s: float = 60.0,
           poll_s: float = 0.1, on_loaded: Callable[[], None] | None = None) -> LoadResult:
    """Wait until ``done()`` (asked every ``poll_s``) or ``timeout_s`` from the browser's start
    (its go, for a standby browser), then stop it. ``on_loaded`` is called once, as soon as the
    host marked the last URL loaded (lab run starts the next browser then)."""
    reason: str | None = f"timeout: no record stored within {timeout_s:g} s"
    try:
        while time.monotonic() - run.started < timeout_s:
            if on_loaded is not None and run.loaded:
                on_loaded()
                on_loaded = None
            if done():
                reason = None
                break
            if run.proc.poll() is not None:
                reason = f"browser exited with code {run.proc.returncode} before the record"
                break
            time.sleep(poll_s)
    finally:
        wall = time.monotonic() - run.started
        stop(run.proc)
    return LoadResult(ok=reason is None, reason=reason, wall_s=wall, argv=run.argv, log=run.log,
                      stopped_at=time.monotonic())


def run_load(spec: LaunchSpec, *, scratch: Path, db: Path, navigate: list[str],
             context: dict[str, Any], done: Callable[[], bool], timeout_s: float = 60.0,
             prefix: Sequence[str] = (), url_detail: str = "full",
             host_env: Mapping[str, str] | None = None, advance: str = "ack",
             quiet_ms: int | None = None, poll_s: float = 0.1,
             visual: bool = False, save_log: bool = False,
             start_at_ms: float | None = None) -> LoadResult:
    """Start Chromium on a fresh profile under ``scratch``; wait until ``done()`` (asked every
    ``poll_s``) or timeout. ``quiet_ms``: the recorder's network quiet after load (None: its
    default). ``visual``: the extension also captures paint progress (the visual metrics).
    ``save_log``: the extension's log tap sends each record's raw DevTools events (``done``
    should wait for them too: lab/store_watch.py StoreWatch). ``start_at_ms``: the extension opens
    the first URL no earlier than this wall-clock time (epoch ms)."""
    run = start_browser(spec, scratch=scratch, db=db, navigate=navigate, context=context,
                        prefix=prefix, url_detail=url_detail, host_env=host_env,
                        advance=advance, quiet_ms=quiet_ms, visual=visual, save_log=save_log,
                        start_at_ms=start_at_ms)
    return finish(run, done, timeout_s, poll_s)


def stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """Terminate the browser's whole process group (renderers, the network service, the native
    host) and wait until every one of them has ended: a network service that outlived the
    browser process sent its connections' last packets (FIN, RST) up to 17 ms later, into the
    next load's flows once lab run started the next browser beforehand (lab/runner.py)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(grace_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    deadline, killed = time.monotonic() + grace_s, False
    while group_alive(proc.pid):
        if time.monotonic() > deadline:
            if killed:  # unkillable (uninterruptible sleep): give up waiting
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            deadline, killed = time.monotonic() + grace_s, True
        time.sleep(GROUP_POLL_S)


GROUP_POLL_S = 0.005


def _group_members(pgid: int, proc_dir: Path) -> Iterator[str]:
    """The pids (as named under ``proc_dir``) of group ``pgid``'s live processes (a zombie has
    closed its sockets and files already; it counts as ended, whoever reaps it)."""
    for entry in os.scandir(proc_dir):
        if not entry.name.isdigit():
            continue
        try:
            stat = (proc_dir / entry.name / "stat").read_bytes()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses
        fields = stat[stat.rindex(b")") + 2:].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            yield entry.name


def group_alive(pgid: int, proc_dir: Path = Path("/proc")) -> bool:
    """Whether a process of group ``pgid`` still runs."""
    return next(_group_members(pgid, proc_dir), None) is not None


def group_threads(pgid: int, proc_dir: Path = Path("/proc")) -> Iterator[int]:
    """The thread ids of group ``pgid``'s live processes."""
    for pid in _group_members(pgid, proc_dir):
        with contextlib.suppress(OSError):
            yield from (int(t.name) for t in os.scandir(proc_dir / pid / "task"))
