"""A fresh lab profile directory: cold cache, no preconnect, host registered in lab mode.

A profile started with ``--user-data-dir=DIR`` finds host manifests in
``DIR/NativeMessagingHosts/`` (docs/ARCHITECTURE.md, verified); its manifest points to a
wrapper that exports the lab's environment, so only that profile records in lab mode
(docs/MESSAGES.md, "Lab mode"). The manifest's and wrapper's text are the installer's
(``install/manifest.py``, pure), the same for a lab profile as for an installed browser.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from protolens.install.manifest import HOST_NAME, manifest_text, posix_wrapper


def seed_preferences(user_data_dir: Path) -> Path:
    """Turn off preconnect/prediction so connection setup is measured (docs/ARCHITECTURE.md)."""
    prefs = user_data_dir / "Default" / "Preferences"
    prefs.parent.mkdir(parents=True, exist_ok=True)
    prefs.write_text(json.dumps({"net": {"network_prediction_options": 2}}))
    return prefs


def write_lab_context(path: Path, *, navigate: list[str], context: dict[str, Any],
                      url_detail: str = "full", advance: str = "ack",
                      quiet_ms: int | None = None, visual: bool = False,
                      save_log: bool = False, start_at_ms: float | None = None,
                      go_file: Path | None = None, loaded_file: Path | None = None) -> Path:
    """The file the host reads (PROTOLENS_LAB_CONTEXT) to answer ``hello`` in lab mode;
    ``quiet_ms`` None leaves the recorder's default quiet after load; ``start_at_ms`` (epoch
    ms) holds the first navigation until then; ``go_file``: until that file exists (a standby
    browser); ``loaded_file``: the host creates it when the last URL has loaded."""
    path.write_text(json.dumps({"record": True, "url_detail": url_detail, "advance": advance,
                                "visual": visual, "context": context, "navigate": navigate,
                                "quiet_ms": quiet_ms, "save_log": save_log,
                                "start_at_ms": start_at_ms,
                                "go_file": None if go_file is None else str(go_file),
                                "loaded_file": None if loaded_file is None else str(loaded_file)},
                               indent=2))
    return path


def register_lab_host(user_data_dir: Path, env: Mapping[str, str],
                      python: str | None = None) -> Path:
    """Write ``DIR/NativeMessagingHosts/org.protolens.host.json`` and its wrapper; return the
    manifest path. ``env`` (e.g. PROTOLENS_DB, PROTOLENS_LAB_CONTEXT) is exported by the wrapper.
    """
    hosts = Path(user_data_dir) / "NativeMessagingHosts"
    hosts.mkdir(parents=True, exist_ok=True)
    wrapper = (hosts / f"{HOST_NAME}.sh").resolve()
    wrapper.write_text(posix_wrapper(python or sys.executable, env), encoding="utf-8")
    wrapper.chmod(0o755)
    manifest = hosts / f"{HOST_NAME}.json"
    manifest.write_text(manifest_text(str(wrapper)), encoding="utf-8")
    return manifest
