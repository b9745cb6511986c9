"""Pure framing of Chrome native messaging: 4-byte little-endian length, then that many bytes.

Feed bytes to a ``FrameDecoder`` as they arrive; it yields complete ``Frame`` payloads and
``FrameError`` events, never raising on garbage. An oversize frame (over 64 MiB, Chromium's
extension -> host limit) is reported once and its bytes are discarded as they stream in, never
buffered. ``encode_frame`` refuses to build a reply over 1 MB (Chromium's host -> extension limit).
See https://developer.chrome.com/docs/extensions/develop/concepts/native-messaging#native-messaging-host-protocol
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAX_INCOMING = 64 * 1024 * 1024
"""Largest frame the extension may send (64 MiB)."""
MAX_OUTGOING = 1024 * 1024
"""Largest frame the host may send (1 MB)."""

_HEADER = struct.Struct("<I")


class FrameTooLarge(ValueError):
    """A reply that would exceed ``MAX_OUTGOING`` bytes."""


@dataclass(frozen=True)
class Frame:
    payload: bytes | bytearray
    """The frame's body, not yet decoded (the decoder's own buffer, handed over uncopied: a
    64 MiB frame is held once, not twice)."""


@dataclass(frozen=True)
class FrameError:
    error: str
    """One line naming the problem with the frame."""


FrameEvent = Frame | FrameError


def encode_frame(payload: bytes, limit: int = MAX_OUTGOING) -> bytes:
    """Length-prefix ``payload``; raise ``FrameTooLarge`` if it exceeds ``limit``."""
    if len(payload) > limit:
        raise FrameTooLarge(f"frame of {len(payload)} bytes exceeds the {limit}-byte limit")
    return _HEADER.pack(len(payload)) + payload


class FrameDecoder:
    """Incremental decoder: ``feed(data)`` returns the events completed by ``data``."""

    def __init__(self, limit: int = MAX_INCOMING) -> None:
        self._limit = limit
        self._buf = bytearray()
        self._need: int | None = None  # body length of the frame being read
        self._discard = 0  # bytes of an oversize frame still to skip

    @property
    def idle(self) -> bool:
        """True between frames: the stream may end here cleanly."""
        return not self._buf and self._need is None and self._discard == 0

    def feed(self, data: bytes) -> list[FrameEvent]:
        events: list[FrameEvent] = []
        view = memoryview(data)
        while view:
            if self._discard:
                skip = min(self._discard, len(view))
                self._discard -= skip
                view = view[skip:]
                continue
            if self._need is None:
                take = min(4 - len(self._buf), len(view))
                self._buf += view[:take]
                view = view[take:]
                if len(self._buf) < 4:
                    break
                (length,) = _HEADER.unpack(self._buf)
                self._buf.clear()
                if length == 0:
                    events.append(FrameError("frame: length 0, a message must be a JSON object"))
                elif length > self._limit:
                    events.append(FrameError(
                        f"frame: length {length} exceeds the {self._limit}-byte limit, skipped"))
                    self._discard = length
                else:
                    self._need = length
                continue
            take = min(self._need - len(self._buf), len(view))
            self._buf += view[:take]
            view = view[take:]
            if len(self._buf) == self._need:
                events.append(Frame(self._buf))
                self._buf = bytearray()
                self._need = None
        return events
