"""The volunteer's contribution settings from the options page (collector URL, token, the
"contribute my anonymized results" switch): validated here (pure), kept in
``<data home>/contribute/settings.json`` readable by the user only (adapter), where the host's
schedule reads them (``collector/schedule.py``)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from protolens.store.db import private_dir

FILE = "settings.json"


class SettingsError(ValueError):
    """Invalid settings; the message names the field."""


@dataclass(frozen=True)
class ContributeSettings:
    enabled: bool = False
    """The switch: upload on a schedule while the browser runs."""
    url: str = ""
    """The collector, ``https://...``."""
    token: str = ""
    """The contributor token the researcher issued."""


def parse(raw: Any) -> ContributeSettings:
    if not isinstance(raw, dict):
        raise SettingsError("settings: expected an object")
    enabled, url, token = raw.get("enabled", False), raw.get("url", ""), raw.get("token", "")
    if not isinstance(enabled, bool):
        raise SettingsError("enabled: expected true or false")
    if not isinstance(url, str) or len(url) > 500:
        raise SettingsError("url: expected a string")
    if url and not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
        raise SettingsError(f"url: {url[:80]!r} is not an https:// URL")
    if not isinstance(token, str) or len(token) > 200 or any(c.isspace() for c in token):
        raise SettingsError("token: expected the token as issued (no spaces)")
    if enabled and not (url and token):
        raise SettingsError("enabled: give the collector URL and your token first")
    return ContributeSettings(enabled, url, token)


def load(home: Path) -> ContributeSettings:
    try:
        return parse(json.loads((home / "contribute" / FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return ContributeSettings()


def save(home: Path, settings: ContributeSettings) -> None:
    folder = home / "contribute"
    private_dir(home)
    private_dir(folder)
    folder.chmod(0o700)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=folder)  # created 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(asdict(settings), out)
        os.replace(tmp, folder / FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
