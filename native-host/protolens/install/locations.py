"""Where each browser looks for native-messaging host manifests, per OS (pure).

Sources: Chrome's native-messaging doc ("Native messaging host location"), Microsoft Edge's
native-messaging guide, docs/ARCHITECTURE.md (custom ``--user-data-dir``: only
``DIR/NativeMessagingHosts/`` and the system directory). Brave on macOS and Windows reads Google
Chrome's locations (brave/brave-browser#5272, keepassxc#13429), so ProtoLens writes both there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PureWindowsPath

BROWSERS = ("chromium", "chrome", "brave", "edge")
"""Browsers ``protolens install`` knows, in display order."""
PLATFORMS = ("linux", "darwin", "win32")

_LINUX_USER = {  # below $XDG_CONFIG_HOME (default ~/.config), which Chromium honours
    "chromium": ["chromium"], "chrome": ["google-chrome"],
    "brave": ["BraveSoftware/Brave-Browser"], "edge": ["microsoft-edge"],
}
_LINUX_SYSTEM = {
    "chromium": ["/etc/chromium/native-messaging-hosts"],
    "chrome": ["/etc/opt/chrome/native-messaging-hosts"],
    "brave": ["/etc/opt/brave/native-messaging-hosts", "/etc/brave/native-messaging-hosts"],
    "edge": ["/etc/opt/edge/native-messaging-hosts"],
}
_MAC_USER = {  # below ~/Library/Application Support
    "chromium": ["Chromium"], "chrome": ["Google/Chrome"],
    "brave": ["BraveSoftware/Brave-Browser", "Google/Chrome"], "edge": ["Microsoft Edge"],
}
_MAC_SYSTEM = {
    "chromium": ["/Library/Application Support/Chromium/NativeMessagingHosts"],
    "chrome": ["/Library/Google/Chrome/NativeMessagingHosts"],
    "brave": ["/Library/BraveSoftware/Brave-Browser/NativeMessagingHosts",
              "/Library/Google/Chrome/NativeMessagingHosts"],
    "edge": ["/Library/Microsoft/Edge/NativeMessagingHosts"],
}
_WIN_KEYS = {  # below HKEY_CURRENT_USER or HKEY_LOCAL_MACHINE
    "chromium": ["Software\\Chromium\\NativeMessagingHosts"],
    "chrome": ["Software\\Google\\Chrome\\NativeMessagingHosts"],
    "brave": ["Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts",
              "Software\\Google\\Chrome\\NativeMessagingHosts"],
    "edge": ["Software\\Microsoft\\Edge\\NativeMessagingHosts"],
}


@dataclass(frozen=True)
class Target:
    browser: str
    """Browser name from ``BROWSERS``, or ``profile`` for a ``--user-data-dir`` target."""
    scope: str
    """``user`` | ``system`` | ``profile``."""
    kind: str
    """``dir`` (manifest file goes in ``location``) | ``registry`` (key whose default value is
    the manifest's path)."""
    location: str
    """Directory path or registry key (``HKEY_CURRENT_USER\\...``)."""


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or "~").expanduser()


def manifest_dirs(browser: str, platform: str, env: Mapping[str, str], system: bool) -> list[Path]:
    """Manifest directories for ``browser`` on ``platform`` (linux or darwin)."""
    if browser not in BROWSERS:
        raise ValueError(f"unknown browser {browser!r} (known: {', '.join(BROWSERS)})")
    if platform == "linux":
        if system:
            return [Path(p) for p in _LINUX_SYSTEM[browser]]
        config = Path(env.get("XDG_CONFIG_HOME") or _home(env) / ".config")
        return [config / sub / "NativeMessagingHosts" for sub in _LINUX_USER[browser]]
    if platform == "darwin":
        if system:
            return [Path(p) for p in _MAC_SYSTEM[browser]]
        support = _home(env) / "Library" / "Application Support"
        return [support / sub / "NativeMessagingHosts" for sub in _MAC_USER[browser]]
    raise ValueError(f"no manifest directories on platform {platform!r}")


def registry_keys(browser: str, system: bool) -> list[str]:
    """Windows registry keys (one per location) under which ``org.protolens.host`` is created."""
    if browser not in BROWSERS:
        raise ValueError(f"unknown browser {browser!r} (known: {', '.join(BROWSERS)})")
    root = "HKEY_LOCAL_MACHINE" if system else "HKEY_CURRENT_USER"
    return [f"{root}\\{key}" for key in _WIN_KEYS[browser]]


def targets(platform: str, env: Mapping[str, str], browsers: tuple[str, ...] = BROWSERS,
            system: bool = False, user_data_dir: Path | None = None) -> list[Target]:
    """Every place one install writes to, without duplicates (first browser wins)."""
    if platform not in PLATFORMS:
        raise ValueError(f"unsupported platform {platform!r} (supported: {', '.join(PLATFORMS)})")
    if user_data_dir is not None:
        return [Target("profile", "profile", "dir", str(user_data_dir / "NativeMessagingHosts"))]
    scope = "system" if system else "user"
    found: list[Target] = []
    seen: set[str] = set()
    for browser in browsers:
        if platform == "win32":
            places = registry_keys(browser, system)
            kind = "registry"
        else:
            places = [str(p) for p in manifest_dirs(browser, platform, env, system)]
            kind = "dir"
        for place in places:
            if place not in seen:
                seen.add(place)
                found.append(Target(browser, scope, kind, place))
    return found


def support_dir(platform: str, env: Mapping[str, str], system: bool) -> PurePath:
    """Where install puts the wrapper script, the manifest (Windows) and the receipt."""
    if platform == "win32":
        if system:
            return PureWindowsPath(env.get("ProgramData") or "C:\\ProgramData") / "protolens"
        local = env.get("LOCALAPPDATA") or str(PureWindowsPath(env.get("USERPROFILE") or "C:\\")
                                               / "AppData" / "Local")
        return PureWindowsPath(local) / "protolens"
    if system:
        return Path("/usr/local/lib/protolens")
    if platform == "darwin":
        return _home(env) / "Library" / "Application Support" / "protolens"
    data = env.get("XDG_DATA_HOME") or str(_home(env) / ".local" / "share")
    return Path(data) / "protolens"
