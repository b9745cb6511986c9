"""Host-wide settings a testbed had to change (root-namespace sysctls, module parameters):
the original value is recorded before the first change, in a file under the run directory that
survives a crash of the process, and restored when the last testbed using it goes down."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALLOWED_CC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
"""Root namespace only; a namespace can select a CC only if it is allowed here
(docs/ARCHITECTURE.md, Packet-level shaping)."""
CUBIC_HYSTART = "/sys/module/tcp_cubic/parameters/hystart"
"""Host-wide: HyStart on (1) or off (0) for every cubic socket on the machine."""


def _path(run_root: Path) -> Path:
    return run_root / "host-settings.json"


def _read(run_root: Path) -> dict[str, Any]:
    p = _path(run_root)
    if p.exists():
        data: dict[str, Any] = json.loads(p.read_text())
        return data
    return {"original": {}, "users": [], "wants": {}}


def _write(run_root: Path, data: dict[str, Any]) -> None:
    run_root.mkdir(parents=True, exist_ok=True)
    tmp = _path(run_root).with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(_path(run_root))


class HostConflict(RuntimeError):
    """Another live testbed needs a different value of the same host-wide setting."""


def change(run_root: Path, testbed: str, path: str, value: str, exclusive: bool = True) -> bool:
    """Write ``value`` to ``path`` (a /proc/sys or /sys file), recording the original first.
    With ``exclusive``, refuse if another testbed needs a different value. Returns False if it
    already had that value."""
    data = _read(run_root)
    wants: dict[str, dict[str, str]] = data.setdefault("wants", {})
    if exclusive:
        others = {u: v for u, v in wants.get(path, {}).items() if u != testbed and v != value}
        if others:
            user, need = next(iter(others.items()))
            raise HostConflict(f"testbed '{user}' needs {path} = {need}, this one needs {value}: "
                               f"it is host-wide, take '{user}' down first")
        wants.setdefault(path, {})[testbed] = value
    current = Path(path).read_text().strip()
    if testbed not in data["users"]:
        data["users"].append(testbed)
    if current == value:
        _write(run_root, data)
        return False
    data["original"].setdefault(path, current)
    _write(run_root, data)
    Path(path).write_text(value + "\n")
    return True


def allow_cc(run_root: Path, testbed: str, cc: str) -> bool:
    allowed = Path(ALLOWED_CC).read_text().split()
    if cc in allowed:
        change(run_root, testbed, ALLOWED_CC, " ".join(allowed), exclusive=False)  # registers
        return False
    return change(run_root, testbed, ALLOWED_CC, " ".join([*allowed, cc]), exclusive=False)


def release(run_root: Path, testbed: str) -> list[str]:
    """Forget ``testbed``; if no testbed is left, restore every original value."""
    if not _path(run_root).exists():
        return []
    data = _read(run_root)
    data["users"] = [u for u in data["users"] if u != testbed]
    for users in data.get("wants", {}).values():
        users.pop(testbed, None)
    if data["users"]:
        _write(run_root, data)
        return []
    restored = []
    for path, value in data["original"].items():
        try:
            Path(path).write_text(value + "\n")
            restored.append(f"{path} = {value}")
        except OSError as e:
            restored.append(f"{path}: could not restore {value!r}: {e.strerror}")
    _path(run_root).unlink()
    return restored


def recorded(run_root: Path) -> dict[str, Any]:
    return _read(run_root)
