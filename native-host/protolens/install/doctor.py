"""``protolens doctor``: what is installed where, whether it can work, and the fix for each problem.

``check_manifest`` is pure over a manifest's text; the rest are thin adapters (read a file, run
the wrapper once with a ``ping`` frame, open the store read-only).
"""

from __future__ import annotations

import json
import os
import stat
import struct
import subprocess
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from protolens.install.extension_id import (
    PROTOLENS_EXTENSION_ID,
    extension_id_from_manifest,
    repo_manifest,
)
from protolens.install.locations import BROWSERS, targets
from protolens.install.manifest import HOST_NAME, origin
from protolens.paths import default_db
from protolens.store import DatabaseError


@dataclass(frozen=True)
class Check:
    check: str
    """What was looked at."""
    status: str
    """``ok`` | ``warn`` | ``fail`` | ``absent``."""
    detail: str
    """What was found."""
    fix: str = ""
    """What to run or do, when not ok."""


def check_manifest(text: str, expected_id: str = PROTOLENS_EXTENSION_ID) -> list[str]:
    """Problems with a host manifest's content (empty list: fine, apart from its ``path``)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [f"not valid JSON ({exc})"]
    if not isinstance(data, dict):
        return ["not a JSON object"]
    problems = []
    if data.get("name") != HOST_NAME:
        problems.append(f"name is {data.get('name')!r}, expected {HOST_NAME!r}")
    if data.get("type") != "stdio":
        problems.append(f"type is {data.get('type')!r}, expected 'stdio'")
    origins = data.get("allowed_origins")
    if not isinstance(origins, list) or origin(expected_id) not in origins:
        problems.append(f"allowed_origins {origins!r} lacks {origin(expected_id)} "
                        "(extension ID mismatch)")
    path = data.get("path")
    if not isinstance(path, str) or not os.path.isabs(path):
        problems.append(f"path {path!r} is not absolute (required on Linux and macOS)")
    return problems


def probe_host(command: str, env: Mapping[str, str], timeout_s: float = 15.0) -> str | None:
    """Run the host as the browser would and send one ``ping``; None if ``pong`` came back."""
    ping = json.dumps({"type": "ping", "schema": 1}).encode()
    try:
        done = subprocess.run([command, origin()], input=struct.pack("<I", len(ping)) + ping,
                              capture_output=True, timeout=timeout_s, env=dict(env))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"could not run it: {exc}"
    out = done.stdout
    if len(out) >= 4:
        (n,) = struct.unpack("<I", out[:4])
        try:
            if json.loads(out[4:4 + n]).get("type") == "pong":
                return None
        except ValueError:
            pass
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
    return f"no pong (exit {done.returncode}): {tail[0]}"


def _extension_check() -> Check:
    manifest = repo_manifest()
    if manifest is None:
        return Check("extension id", "warn", "manifest.json not found beside this package; "
                     f"assuming {PROTOLENS_EXTENSION_ID}", "")
    try:
        got = extension_id_from_manifest(manifest.read_text(encoding="utf-8"))
    except ValueError as exc:
        return Check("extension id", "fail", f"{manifest}: {exc}",
                     "restore the key in manifest.json")
    if got != PROTOLENS_EXTENSION_ID:
        return Check("extension id", "fail", f"{manifest} gives {got}, host allows "
                     f"{PROTOLENS_EXTENSION_ID}", "restore manifest.json's key, then reinstall")
    return Check("extension id", "ok", f"{got} (from {manifest})")


def _location_checks(platform: str, env: Mapping[str, str], system: bool,
                     user_data_dir: Path | None, wrappers: list[str]) -> list[Check]:
    checks = []
    scope_flag = " --system" if system else ""
    for t in targets(platform, env, BROWSERS, system, user_data_dir):
        label = f"{t.browser} ({t.scope})"
        if t.kind != "dir":
            continue
        path = Path(t.location) / f"{HOST_NAME}.json"
        fix = (f"protolens install --user-data-dir {user_data_dir}" if user_data_dir
               else f"protolens install --browser {t.browser}{scope_flag}")
        if not path.exists():
            parent = Path(t.location).parent
            note = "" if parent.exists() else f" ({parent} missing: browser not set up here?)"
            checks.append(Check(label, "absent", f"no {path}{note}", fix))
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            checks.append(Check(label, "fail", f"{path}: {exc}", fix))
            continue
        problems = check_manifest(text)
        if not problems:
            wrapper = json.loads(text)["path"]
            if not os.access(wrapper, os.X_OK):
                problems.append(f"path {wrapper} is missing or not executable")
            elif wrapper not in wrappers:
                wrappers.append(wrapper)
        if problems:
            checks.append(Check(label, "fail", f"{path}: {'; '.join(problems)}", fix))
        else:
            checks.append(Check(label, "ok", f"{path}"))
    return checks


def _store_check(env: Mapping[str, str]) -> Check:
    from protolens.store import StoreError, open_ro
    from protolens.store.health import corrupt_hint, quick_check
    from protolens.store.migrate import migration_states
    from protolens.store.queries import navigation_count

    db = default_db(env)
    if not db.exists():
        return Check("store", "ok", f"{db} not created yet (the host creates it on first record)")
    problems = quick_check(db)
    if problems:
        return Check("store", "fail", f"{db}: corrupt (quick_check: {'; '.join(problems)})",
                     corrupt_hint(db))
    try:
        with closing(open_ro(db)) as conn:
            pending = [s.name for s in migration_states(conn) if s.applied_at_ms is None]
            count = None if pending else navigation_count(conn)
    except (StoreError, DatabaseError) as exc:
        return Check("store", "fail", f"{db}: {exc}", f"move {db} aside; the host starts afresh")
    if pending:
        return Check("store", "warn", f"{db}: migrations pending: {', '.join(pending)}",
                     "protolens db migrate (the host also applies them when it starts)")
    return Check("store", "ok", f"{db}: {count} navigations")


def loose_permissions(modes: Mapping[Path, int]) -> list[str]:
    """``path (mode)`` for each path that group or others may read or write (a
    browsing history belongs to its user: the store's directory 0700, its files 0600)."""
    return [f"{p} ({stat.S_IMODE(m):04o})" for p, m in modes.items() if stat.S_IMODE(m) & 0o077]


def _permission_check(env: Mapping[str, str]) -> Check | None:
    db = default_db(env)
    if not db.exists():
        return None
    log = env.get("PROTOLENS_HOST_LOG")
    paths = [db.parent, db, Path(f"{db}-wal"), Path(f"{db}-shm"), *([Path(log)] if log else [])]
    modes = {p: p.stat().st_mode for p in paths if p.exists()}
    loose = loose_permissions(modes)
    if not loose:
        return Check("store permissions", "ok", f"{db.parent}: only its owner can read it")
    loose_dir = stat.S_IMODE(modes[db.parent]) & 0o077
    files = " ".join(str(p) for p, m in modes.items()
                     if p != db.parent and stat.S_IMODE(m) & 0o077)
    fix = "; ".join([*([f"chmod 700 {db.parent}"] if loose_dir else []),
                     *([f"chmod 600 {files}"] if files else [])])
    return Check("store permissions", "warn",
                 f"others can read your browsing history: {', '.join(loose)}", fix)


def diagnose(platform: str, env: Mapping[str, str], user_data_dir: Path | None = None,
             probe: bool = True) -> list[Check]:
    """Every check, in order: extension ID, each manifest location, the host itself, the store."""
    checks = [_extension_check()]
    wrappers: list[str] = []
    if platform == "win32":
        checks.append(Check("registry", "warn", "registry entries are not inspected by doctor",
                            "reg query HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts"))
    else:
        if user_data_dir is not None:
            checks += _location_checks(platform, env, False, user_data_dir, wrappers)
        else:
            checks += _location_checks(platform, env, False, None, wrappers)
            checks += _location_checks(platform, env, True, None, wrappers)
    if not any(c.status == "ok" for c in checks[1:]):
        checks.append(Check("installed", "fail", "the host is registered for no browser",
                            "protolens install"))
    if probe:
        for wrapper in wrappers:
            problem = probe_host(wrapper, env)
            checks.append(Check(f"host {wrapper}", "fail" if problem else "ok",
                                problem or "answers ping with pong",
                                "protolens install (rewrites the wrapper for this Python)"
                                if problem else ""))
    checks.append(_store_check(env))
    perms = _permission_check(env)
    if perms is not None:
        checks.append(perms)
    return checks
