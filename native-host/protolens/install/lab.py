"""Per-profile registration for lab Chromium (docs/MESSAGES.md, "Lab mode").

A profile started with ``--user-data-dir=DIR`` finds host manifests in
``DIR/NativeMessagingHosts/`` (docs/ARCHITECTURE.md, verified); its manifest points to a
wrapper that exports the lab's environment, so only that profile records in lab mode.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from protolens.install.manifest import HOST_NAME, manifest_text, posix_wrapper


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
