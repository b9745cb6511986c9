"""What one ``protolens install`` writes (pure): files with their contents, registry keys, and
the receipt that lets ``uninstall`` remove exactly those."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath

from protolens.install.extension_id import PROTOLENS_EXTENSION_ID
from protolens.install.locations import BROWSERS, Target, support_dir, targets
from protolens.install.manifest import HOST_NAME, manifest_text, posix_wrapper, windows_wrapper
from protolens.install.windows import host_key, install_reg, uninstall_reg

RECEIPT_NAME = "install-receipt.json"


@dataclass(frozen=True)
class PlannedFile:
    path: PurePath
    """Where the file goes."""
    content: str
    """Its text."""
    mode: int
    """Permission bits."""


@dataclass(frozen=True)
class InstallPlan:
    platform: str
    """``linux`` | ``darwin`` | ``win32``."""
    targets: tuple[Target, ...]
    """Where manifests are registered."""
    files: tuple[PlannedFile, ...]
    """Wrapper first, then each manifest (and on Windows the two .reg files)."""
    registry_keys: tuple[str, ...]
    """Windows keys created (``...\\org.protolens.host``)."""
    receipt: PurePath
    """Receipt path."""
    reg_file: PurePath | None
    """Windows: the .reg file to import; None elsewhere."""
    private_dir: PurePath | None = None
    """Created 0700 if missing: a user install's directory, which is also where the store is
    kept by default (``paths.data_home``; a browsing history belongs to its user)."""


def plan_install(platform: str, env: Mapping[str, str], python: str,
                 browsers: tuple[str, ...] = BROWSERS, system: bool = False,
                 user_data_dir: Path | None = None,
                 extension_id: str = PROTOLENS_EXTENSION_ID,
                 extra_ids: tuple[str, ...] = ()) -> InstallPlan:
    base = support_dir(platform, env, system)
    places = tuple(targets(platform, env, browsers, system, user_data_dir))
    files: list[PlannedFile] = []
    if platform == "win32":
        wrapper = base / f"{HOST_NAME}.bat"
        manifest = base / f"{HOST_NAME}.json"
        keys = tuple(host_key(t.location) for t in places)
        reg = base / "install.reg"
        files += [PlannedFile(wrapper, windows_wrapper(python), 0o755),
                  PlannedFile(manifest, manifest_text(str(wrapper), extension_id, extra_ids),
                              0o644),
                  PlannedFile(reg, install_reg([t.location for t in places], str(manifest)),
                              0o644),
                  PlannedFile(base / "uninstall.reg",
                              uninstall_reg([t.location for t in places]), 0o644)]
        return InstallPlan(platform, places, tuple(files), keys, base / RECEIPT_NAME, reg)
    wrapper = base / f"{HOST_NAME}.sh"
    files.append(PlannedFile(wrapper, posix_wrapper(python), 0o755))
    text = manifest_text(str(wrapper), extension_id, extra_ids)
    for t in places:
        files.append(PlannedFile(PurePath(t.location) / f"{HOST_NAME}.json", text, 0o644))
    return InstallPlan(platform, places, tuple(files), (), base / RECEIPT_NAME, None,
                       None if system else base)
