"""Adapter: carry out an ``InstallPlan`` on this machine and keep a receipt; undo it from the
receipt. Uninstall removes a file only if it still has the content install wrote, and a directory
only if install created it and it is empty."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.install.plan import InstallPlan


class InstallError(Exception):
    """Install or uninstall could not proceed; the message says what to do."""


@dataclass(frozen=True)
class Action:
    what: str
    """``wrote`` | ``replaced`` | ``unchanged`` | ``removed`` | ``kept`` | ``registered`` ..."""
    where: str
    """Path or registry key."""
    note: str = ""
    """Why, when it matters."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_receipt(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["entries"]
        assert isinstance(entries, list)
        return entries
    except (ValueError, KeyError, AssertionError, TypeError):
        raise InstallError(f"{path}: unreadable install receipt; remove it by hand") from None


def _write_receipt(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "entries": entries}, indent=2) + "\n",
                    encoding="utf-8")


def _mkdirs(directory: Path, created: list[Path]) -> None:
    missing = []
    for d in [directory, *directory.parents]:
        if d.exists():
            break
        missing.append(d)
    directory.mkdir(parents=True, exist_ok=True)
    created += reversed(missing)


def apply_install(plan: InstallPlan) -> list[Action]:
    """Write every planned file, register Windows keys, and record it all in the receipt."""
    receipt = Path(plan.receipt)
    entries = read_receipt(receipt)
    known = {(e.get("kind"), e.get("path") or e.get("key")) for e in entries}
    actions: list[Action] = []
    created: list[Path] = []
    try:
        if plan.private_dir is not None and not Path(plan.private_dir).exists():
            _mkdirs(Path(plan.private_dir), created)
            Path(plan.private_dir).chmod(0o700)  # mkdir's mode is masked by the umask
        for f in plan.files:
            path = Path(f.path)
            _mkdirs(path.parent, created)
            old = path.read_text(encoding="utf-8") if path.exists() else None
            path.write_text(f.content, encoding="utf-8")
            path.chmod(f.mode)
            what = "wrote" if old is None else ("unchanged" if old == f.content else "replaced")
            actions.append(Action(what, str(path)))
            entries = [e for e in entries if not (e.get("kind") == "file"
                                                  and e.get("path") == str(path))]
            entries.append({"kind": "file", "path": str(path), "sha256": _sha(f.content)})
    except PermissionError as exc:
        raise InstallError(f"{exc.filename}: permission denied (system-wide installs need root; "
                           "without --system ProtoLens installs for this user)") from None
    finally:
        for d in created:
            if ("dir", str(d)) not in known:
                entries.append({"kind": "dir", "path": str(d)})
        if entries:
            _write_receipt(receipt, entries)
    if plan.reg_file is not None:
        _reg_import(Path(plan.reg_file))
        for key in plan.registry_keys:
            if ("registry", key) not in known:
                entries.append({"kind": "registry", "key": key})
            actions.append(Action("registered", key))
        _write_receipt(receipt, entries)
    return actions


def _reg_import(reg_file: Path) -> None:  # Windows only; not exercised on Linux CI
    result = subprocess.run(["reg", "import", str(reg_file)], capture_output=True, text=True)
    if result.returncode != 0:
        raise InstallError(f"reg import {reg_file} failed: {result.stderr.strip()}")


def apply_uninstall(receipt: Path) -> list[Action]:
    """Remove what the receipt lists (newest first), then the receipt itself."""
    entries = read_receipt(receipt)
    if not entries:
        raise InstallError(f"nothing to uninstall: no install receipt at {receipt}")
    actions: list[Action] = []
    registry = [e["key"] for e in entries if e.get("kind") == "registry"]
    if registry:
        unreg = receipt.parent / "uninstall.reg"
        _reg_import(unreg)
        actions += [Action("unregistered", k) for k in registry]
    for entry in reversed([e for e in entries if e.get("kind") == "file"]):
        path = Path(entry["path"])
        if not path.exists():
            actions.append(Action("missing", str(path), "already gone"))
        elif _sha(path.read_text(encoding="utf-8", errors="replace")) != entry.get("sha256"):
            actions.append(Action("kept", str(path), "changed since install; remove by hand"))
        else:
            path.unlink()
            actions.append(Action("removed", str(path)))
    receipt.unlink()
    dirs = sorted((Path(e["path"]) for e in entries if e.get("kind") == "dir"),
                  key=lambda p: len(p.parts), reverse=True)
    for d in dirs:
        if d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            actions.append(Action("removed", str(d)))
    return actions
