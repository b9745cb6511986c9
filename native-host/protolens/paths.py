"""Where ProtoLens keeps its files (XDG base directories), resolved from an environment mapping.

Pure: callers pass ``os.environ`` (or a test dict) in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def data_home(env: Mapping[str, str]) -> Path:
    """``$XDG_DATA_HOME/protolens`` (default ``~/.local/share/protolens``)."""
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".local/share")
    return Path(base) / "protolens"


def default_db(env: Mapping[str, str]) -> Path:
    """The SQLite store: ``PROTOLENS_DB`` if set, else ``<data_home>/protolens.db``."""
    override = env.get("PROTOLENS_DB")
    return Path(override) if override else data_home(env) / "protolens.db"


def extension_dir(env: Mapping[str, str]) -> Path:
    """The built extension: ``PROTOLENS_EXTENSION`` if set, else ``dist/`` of this checkout."""
    override = env.get("PROTOLENS_EXTENSION")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "dist"


def node_binary(env: Mapping[str, str], which: str | None) -> str | None:
    """Node.js for ``protolens replay``: ``PROTOLENS_NODE`` if set, else ``which`` (the ``node``
    on PATH, looked up by the caller), else None."""
    return env.get("PROTOLENS_NODE") or which


def replay_script(env: Mapping[str, str]) -> Path:
    """The recorder core as a node script (webpack.config.js): ``PROTOLENS_REPLAY_JS`` if set,
    else ``dist/node/replay.cjs`` of this checkout."""
    override = env.get("PROTOLENS_REPLAY_JS")
    checkout = Path(__file__).resolve().parents[2]
    return Path(override) if override else checkout / "dist/node/replay.cjs"
