"""Contributor tokens (pure): the format, the hash the catalog keeps instead of the token, and the
``Authorization: Bearer`` header (RFC 6750 section 2.1).

A token is 32 random bytes (``secrets``), so a single SHA-256 is enough to store it: slow hashes
exist to protect low-entropy passwords, not 256-bit random secrets (OWASP Password Storage
Cheat Sheet; GitHub stores its tokens as SHA-256 digests the same way).
"""

from __future__ import annotations

import base64
import hashlib
import re

PREFIX = "plc_"
_TOKEN = re.compile(r"^plc_[A-Za-z0-9_-]{43}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def make_token(random32: bytes) -> str:
    """A token from 32 random bytes (the caller passes ``secrets.token_bytes(32)``)."""
    if len(random32) != 32:
        raise ValueError("a token needs 32 random bytes")
    return PREFIX + base64.urlsafe_b64encode(random32).decode().rstrip("=")


def is_token(text: str) -> bool:
    return bool(_TOKEN.match(text))


def token_hash(token: str) -> str:
    """What the catalog stores: SHA-256 hex of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def valid_name(name: str) -> bool:
    """A contributor pseudonym: letters, digits, ``.``, ``_``, ``-``; at most 64 characters."""
    return bool(_NAME.match(name))


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()
