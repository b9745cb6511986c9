"""Decoding one frame's bytes into a message object, with bounds (docs/MESSAGES.md, "Limits").

Pure. ``decode_message`` refuses, with one line naming the problem (``check_text`` does the last):

- bytes that are not UTF-8, or not one JSON object;
- a frame whose JSON would build more than ``MAX_CONTAINERS`` objects/arrays or
  ``MAX_ELEMENTS`` values: counted on the bytes before parsing (``bytes.count`` runs at memory
  speed), so a 64 MiB ``[{},{},...]`` is refused without building 22 million dicts (it took
  1.69 GB of host memory before: scripts/bench/frame_memory.py). Brackets and commas inside
  strings count too, which only ever over-counts;
- a lone UTF-16 surrogate anywhere (valid JSON, ``"\\ud800"``): such a string
  cannot be encoded as UTF-8, so it could be neither stored nor echoed in a reply.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_CONTAINERS = 200_000
"""Objects + arrays in one message. A record has about 2 per request; a 5,000-request page needs
about 10,000."""
MAX_ELEMENTS = 2_000_000
"""Commas in one message (about the number of values). A request has about 30 fields."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadMessage(ValueError):
    """A frame that is not a message this host can read; the text names the problem."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def check_shape(payload: bytes | bytearray) -> None:
    """Raise ``BadMessage`` if ``payload`` holds more containers or values than a message may."""
    if len(payload) <= min(MAX_CONTAINERS, MAX_ELEMENTS):  # a byte counts once: no limit bites
        return
    containers = payload.count(b"{") + payload.count(b"[")
    if containers > MAX_CONTAINERS:
        raise BadMessage(f"message: {containers} objects and arrays, more than the "
                         f"{MAX_CONTAINERS} a message may hold")
    elements = payload.count(b",")
    if elements > MAX_ELEMENTS:
        raise BadMessage(f"message: {elements} values, more than the {MAX_ELEMENTS} a message "
                         "may hold")


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """The path (``record.page.url``) of the first string (or key) holding a lone surrogate."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):
                return p or "message"
        elif isinstance(v, dict):
            for k, item in v.items():
                if _SURROGATE.search(k):
                    return f"{p or 'message'} (a key)"
                stack.append((item, f"{p}.{k}" if p else k))
        elif isinstance(v, list):
            stack.extend((item, f"{p}[{i}]") for i, item in enumerate(v))
    return None


def has_escaped_surrogate(payload: bytes | bytearray) -> bool:
    """Whether ``payload`` spells a UTF-16 surrogate as an escape (``\\udc00``): the only way a
    UTF-8 frame can carry a lone one (the UTF-8 decoder refuses encoded surrogates)."""
    # the search for a backslash runs at memchr speed; few frames have one
    return b"\\" in payload and _ESCAPED_SURROGATE.search(payload) is not None


def check_text(payload: bytes | bytearray, value: Any) -> None:
    """Raise ``BadMessage`` if the decoded ``value`` of ``payload`` holds a lone surrogate."""
    if not has_escaped_surrogate(payload):
        return
    where = lone_surrogate_path(value)
    if where is not None:
        raise BadMessage(f"{where}: a lone UTF-16 surrogate (\\ud800-\\udfff) is not text "
                         "that can be stored")


def decode_message(payload: bytes | bytearray) -> dict[str, Any]:
    """UTF-8 JSON object -> dict, or raise ``BadMessage`` naming the problem."""
    check_shape(payload)  # before decoding: a refused frame costs no text copy
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadMessage(f"message: not UTF-8 (byte 0x{payload[exc.start]:02x} at offset "
                         f"{exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise BadMessage(f"message: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BadMessage(f"message: expected a JSON object, got {type(value).__name__}")
    return value


def well_formed(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD, so it always encodes as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)
