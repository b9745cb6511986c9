"""A fresh lab profile directory: cold cache, no preconnect, host registered in lab mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def seed_preferences(user_data_dir: Path) -> Path:
    """Turn off preconnect/prediction so connection setup is measured (docs/ARCHITECTURE.md)."""
    prefs = user_data_dir / "Default" / "Preferences"
    prefs.parent.mkdir(parents=True, exist_ok=True)
    prefs.write_text(json.dumps({"net": {"network_prediction_options": 2}}))
    return prefs


def write_lab_context(path: Path, *, navigate: list[str], context: dict[str, Any],
                      url_detail: str = "full", advance: str = "ack",
                      quiet_ms: int | None = None, visual: bool = False,
                      save_log: bool = False) -> Path:
    """The file the host reads (PROTOLENS_LAB_CONTEXT) to answer ``hello`` in lab mode;
    ``quiet_ms`` None leaves the recorder's default quiet after load."""
    path.write_text(json.dumps({"record": True, "url_detail": url_detail, "advance": advance,
                                "visual": visual, "context": context, "navigate": navigate,
                                "quiet_ms": quiet_ms, "save_log": save_log},
                               indent=2))
    return path
