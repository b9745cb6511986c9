"""Adapter: start lab Chromium with the extension and the host in lab mode, wait for the record.

One call = one browser start in a fresh profile. The caller says how to tell the load is stored
(``done``), usually a store query for the load's ``load_id``.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
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


def scratch_env(base: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """Chromium writes to ~/.config, ~/.cache, ~/.local even with --user-data-dir (verified)."""
    env = dict(base)
    for var, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"),
                     ("XDG_CACHE_HOME", "cache"), ("XDG_DATA_HOME", "data")):
        env[var] = str(scratch / sub)
        (scratch / sub).mkdir(parents=True, exist_ok=True)
    return env


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
    should wait for them too: lab/runner.py StoreWatch). ``start_at_ms``: the extension opens
    the first URL no earlier than this wall-clock time (epoch ms)."""
    scratch.mkdir(parents=True, exist_ok=True)
    udd = scratch / "profile"
    seed_preferences(udd)
    spec = replace(spec, user_data_dir=str(udd))
    argv = command_line(spec)
    # the exact command line travels with the record as a tag: a reader can rerun the load
    context = {**context, "command_line": shlex.join([*prefix, *argv])}
    ctx = write_lab_context(scratch / "lab-context.json", navigate=navigate, context=context,
                            url_detail=url_detail, advance=advance, quiet_ms=quiet_ms,
                            visual=visual, save_log=save_log, start_at_ms=start_at_ms)
    env = scratch_env(os.environ, scratch / "xdg")
    register_lab_host(udd, {"PROTOLENS_DB": str(db.absolute()), "PROTOLENS_LAB_CONTEXT": str(ctx),
                            **(host_env or {})})
    log = scratch / "chromium.log"
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen([*prefix, *argv], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
        reason: str | None = f"timeout: no record stored within {timeout_s:g} s"
        try:
            while time.monotonic() - started < timeout_s:
                if done():
                    reason = None
                    break
                if proc.poll() is not None:
                    reason = f"browser exited with code {proc.returncode} before the record"
                    break
                time.sleep(poll_s)
        finally:
            wall = time.monotonic() - started
            stop(proc)
    return LoadResult(ok=reason is None, reason=reason, wall_s=wall, argv=[*prefix, *argv], log=log)


def stop(proc: subprocess.Popen[bytes], grace_s: float = 5.0) -> None:
    """Terminate the browser's whole process group (renderers, the native host)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
