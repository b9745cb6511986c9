"""The fast path of a ``record`` message: frame bytes -> ``RecordRows`` in one
msgspec pass over types generated from the column table (``record/wire.py``), no
``NavigationRecord`` built on the way.

Pure. ``RecordDecoder`` gives the message's ``msg_id`` and rows, or None: then the reference path
(``inbound.decode_message``, ``dispatch``, ``validate.parse_record``) decides, and gives every
error. Whatever this path accepts the reference path accepts with the same rows: the frame
passes the same bounds and text checks first, and ``record/wire.py`` is a subset of
``validate.py`` (``tests/messaging/test_fast_path.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional

import msgspec
from msgspec import Meta

from protolens.messaging import inbound
from protolens.record import wire
from protolens.record.rows import RecordRows


@dataclass(frozen=True)
class FastRecord:
    msg_id: str | None
    """The message's ``msg_id``."""
    rows: RecordRows
    """The validated record's rows."""


class RecordDecoder:
    """Decodes ``{"type": "record", "schema": schema, "msg_id": ..., "record": ...}`` frames."""

    def __init__(self, schema: int, max_msg_id: int) -> None:
        message = msgspec.defstruct("RecordMessage", [
            ("type", Literal["record"]), ("schema", Literal.__getitem__(schema)),
            ("record", wire.Record),
            ("msg_id", Optional[Annotated[str, Meta(max_length=max_msg_id)]], None),  # noqa: UP045
        ], kw_only=True, forbid_unknown_fields=True, module=__name__)
        self._decode = msgspec.json.Decoder(message).decode

    def __call__(self, payload: bytes | bytearray) -> FastRecord | None:
        """The record message in ``payload``, or None if the reference path must read it."""
        try:
            inbound.check_shape(payload)
        except inbound.BadMessage:
            return None
        # msgspec checks UTF-8 only in the strings it keeps, and the reference path finds lone
        # surrogates (docs/MESSAGES.md "Limits"): both cheap here, the first at memory speed
        if not payload.isascii() and not _utf8(payload):
            return None
        if inbound.has_escaped_surrogate(payload):
            return None
        try:
            msg: Any = self._decode(payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        rows = wire.rows(msg.record)
        return None if rows is None else FastRecord(msg.msg_id, rows)


def _utf8(payload: bytes | bytearray) -> bool:
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
