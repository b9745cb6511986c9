"""The extension ID Chromium derives from manifest.json's ``key``: the first 128 bits of the
SHA-256 of the DER public key, written in hex with digits 0-f mapped to letters a-p.
(https://developer.chrome.com/docs/extensions/reference/manifest/key)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from pathlib import Path

PROTOLENS_EXTENSION_ID = "ncpedlfcmhdmaokpoalfngkhdlamknob"
"""The ID fixed by the key in the repository's manifest.json."""


def extension_id_from_key(key_b64: str) -> str:
    """Extension ID of a base64 DER SubjectPublicKeyInfo; ValueError if not base64."""
    try:
        der = base64.b64decode("".join(key_b64.split()), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"manifest key is not base64: {exc}") from None
    if not der:
        raise ValueError("manifest key is empty")
    digest = hashlib.sha256(der).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def extension_id_from_manifest(text: str) -> str:
    """Extension ID from the text of a manifest.json; ValueError if it has no usable key."""
    key = json.loads(text).get("key")
    if not isinstance(key, str):
        raise ValueError("manifest.json has no \"key\": the extension ID would not be fixed")
    return extension_id_from_key(key)


def repo_manifest() -> Path | None:
    """manifest.json of the source checkout this package runs from, if there is one."""
    candidate = Path(__file__).resolve().parents[3] / "manifest.json"
    return candidate if candidate.is_file() else None
