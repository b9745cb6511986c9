"""Bundle tags (pure): an HMAC-SHA256 (RFC 2104) over a bundle's manifest under a key that the
collector issues with the token.

The key is derived from the token (HMAC-SHA256 keyed by the token over a fixed label, the
"expand" step of HKDF, RFC 5869 section 2.3, with one block): the volunteer needs nothing but
the token, and the collector, which keeps only the token's hash, keeps the key from the moment it
issues the token. The manifest lists every table's SHA-256, so the tag covers the whole bundle.

What a tag proves: the bundle was made by someone holding that token, and has not changed since
(in transit or in the dataset: ``collector verify`` re-checks it). It does not prove that the
measurements are honest: a token holder can tag any numbers it likes.
"""

from __future__ import annotations

import hashlib
import hmac

HEADER = "ProtoLens-Bundle-Tag"
"""The request header that carries the tag (hex)."""
_LABEL = b"protolens bundle tag key v1\x01"


def tag_key(token: str) -> bytes:
    """The 32-byte key of a token's bundle tags."""
    return hmac.new(token.encode(), _LABEL, hashlib.sha256).digest()


def tag(key: bytes, manifest: bytes) -> str:
    return hmac.new(key, manifest, hashlib.sha256).hexdigest()


def verifies(key: bytes, manifest: bytes, given: str) -> bool:
    """Constant-time comparison (``hmac.compare_digest``)."""
    return hmac.compare_digest(tag(key, manifest), given.strip().lower())
