"""Zips the built extension (dist/) for the Chrome Web Store: manifest.json without the
development ``key`` (the store assigns the published extension its own ID and rejects uploads
that carry a key: https://developer.chrome.com/docs/webstore/publish), files in a fixed order
with fixed times so the same dist/ gives the same zip. Run by scripts/package.sh.

Usage: python scripts/package_extension.py DIST OUT.zip
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

NOT_EXTENSION = "node/"
"""dist/node/: the host's replay script (webpack.config.js), not part of the extension."""

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
"""The earliest time a zip entry can carry: no build time leaks into the archive."""


def store_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest to upload: everything but ``key``."""
    return {k: v for k, v in manifest.items() if k != "key"}


def write_zip(dist: Path, out: Path) -> list[str]:
    """Write ``out`` from ``dist``; return the entry names."""
    if not (dist / "manifest.json").is_file():
        raise SystemExit(f"{dist}: no manifest.json (build the extension first: npm run build)")
    files = (p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file())
    names = sorted(n for n in files if not n.startswith(NOT_EXTENSION))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in names:
            data = (dist / name).read_bytes()
            if name == "manifest.json":
                data = (json.dumps(store_manifest(json.loads(data)), indent=2) + "\n").encode()
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return names


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[-1] if __doc__ else "usage")
    entries = write_zip(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"{sys.argv[2]}: {len(entries)} files, manifest without key")
