"""The ``log`` message (docs/MESSAGES.md): a load's raw DevTools events from the extension's log
tap, gzipped JSONL in base64, with the recorder's options. Pure validation at the JSON boundary:
``parse_log_message`` returns what to store or raises ``LogMessageError`` naming the field.

The gzip stream is read through before it is accepted (a cut one is refused, never stored and
acknowledged), with its unpacked size bounded: a small frame cannot unpack into gigabytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from dataclasses import dataclass
from typing import Any

from protolens.record import RecordError
from protolens.record.validate import canonical_id

MAX_LOG_BYTES = 48 << 20
"""Largest gzipped log: its base64 (4/3 as long) fits the 64 MiB extension -> host frame."""
MAX_UNPACKED = 512 << 20
"""Largest log once unpacked (a long load with paint capture: well under 100 MB)."""
MAX_OPTIONS = 8 << 10
"""Largest ``options`` object, as JSON."""
OPTION_KEYS = frozenset({"source", "url_detail", "visual", "quiet_ms", "main_frame_id", "env",
                         "id", "joined"})
"""What the recorder was given (src/replay/replay.ts ReplayOptions); the node script checks
their values when it replays."""
_CHUNK = 1 << 20


class LogMessageError(ValueError):
    """A ``log`` message this host will not store; the text names the field."""


@dataclass(frozen=True)
class LogMessage:
    navigation_id: str
    log: bytes
    """gzipped JSONL"""
    options: dict[str, Any]


def _check_gzip(data: bytes) -> None:
    if data[:2] != b"\x1f\x8b":
        raise LogMessageError("data: not gzip (CompressionStream('gzip') output expected)")
    unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total, rest = 0, data
    try:
        while rest and not unpack.eof:
            total += len(unpack.decompress(rest, _CHUNK))
            rest = unpack.unconsumed_tail
            if total > MAX_UNPACKED:
                raise LogMessageError(f"data: unpacks to more than {MAX_UNPACKED >> 20} MiB")
    except zlib.error as exc:
        raise LogMessageError(f"data: broken gzip ({exc})") from None
    if not unpack.eof:
        raise LogMessageError("data: the gzip stream is cut short")


def parse_log_message(msg: dict[str, Any]) -> LogMessage:
    try:
        nav_id = canonical_id(msg.get("navigation_id"))  # type: ignore[arg-type]
    except (RecordError, TypeError, AttributeError):
        raise LogMessageError("navigation_id: expected the record's UUID") from None
    data = msg.get("data")
    if not isinstance(data, str) or not data:
        raise LogMessageError("data: expected base64 text")
    if len(data) > (MAX_LOG_BYTES + 2) // 3 * 4:
        raise LogMessageError(f"data: more than {MAX_LOG_BYTES >> 20} MiB")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise LogMessageError("data: not base64") from None
    _check_gzip(raw)
    options = msg.get("options", {})
    if not isinstance(options, dict):
        raise LogMessageError("options: expected an object")
    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        raise LogMessageError(f"options: unknown key {unknown[0]!r}")
    if len(json.dumps(options)) > MAX_OPTIONS:
        raise LogMessageError(f"options: more than {MAX_OPTIONS} bytes")
    return LogMessage(nav_id, raw, options)
