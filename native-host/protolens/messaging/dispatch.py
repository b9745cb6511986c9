"""Pure dispatch of one decoded frame to a reply (docs/MESSAGES.md).

``Dispatcher.handle(payload, now)`` parses the frame's bytes, validates the message, calls the
store passed in (``RecordSink``) for records, and returns the reply object. It never raises for
bad input: every problem becomes an ``error`` reply naming it. ``encode_reply`` keeps replies under
Chromium's 1 MB host -> extension limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from protolens import __version__
from protolens.messaging.framing import MAX_OUTGOING, FrameTooLarge, encode_frame
from protolens.messaging.lab import LabContext
from protolens.messaging.policies import PolicySource, policies_reply
from protolens.messaging.queries import QueryError, QuerySource, handle_query
from protolens.record import NavigationRecord, RecordError, parse_record
from protolens.record.enums import IngestOutcome

MESSAGE_SCHEMA = 1
"""The message envelope schema this host speaks."""
MAX_MSG_ID = 200
"""Longest ``msg_id`` echoed back (keeps every reply small)."""
MAX_ERROR = 500
"""Longest error text in a reply."""
CONFLICT = "different content, kept the stored one"
"""An ack's ``conflict`` when a resent id carried different content (issue 15, defect 3)."""

log = logging.getLogger("protolens.host")


class RecordSink(Protocol):
    """Where validated records go; the SQLite store implements it."""

    def ingest(self, record: NavigationRecord, context: Mapping[str, Any],
               now_ms: float) -> IngestOutcome:
        """Store ``record`` with ``context`` stamped: ``stored``, or its id was stored before
        with the same content (``duplicate``) or a different one (``conflict``)."""
        ...


class ContributeSource(Protocol):
    """The host's contribution settings and status (``collector/schedule.py``)."""

    def set(self, raw: Any) -> dict[str, Any]: ...

    def status(self) -> dict[str, Any]: ...


class _BadMessage(Exception):
    def __init__(self, error: str, msg_id: str | None = None, retry: bool = False) -> None:
        super().__init__(error)
        self.msg_id = msg_id
        self.retry = retry


def error_reply(error: str, msg_id: str | None = None, retry: bool = False) -> dict[str, Any]:
    """An ``error`` reply; ``retry`` says whether resending the same message may succeed."""
    one_line = " ".join(error.split())
    if len(one_line) > MAX_ERROR:
        one_line = one_line[: MAX_ERROR - 3] + "..."
    return {"type": "error", "schema": MESSAGE_SCHEMA, "msg_id": msg_id, "error": one_line,
            "retry": retry}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def decode_message(payload: bytes) -> dict[str, Any]:
    """UTF-8 JSON object -> dict, or raise ``_BadMessage`` naming the problem."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _BadMessage(f"message: not UTF-8 (byte 0x{payload[exc.start]:02x} at offset "
                          f"{exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise _BadMessage(f"message: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _BadMessage(f"message: expected a JSON object, got {type(value).__name__}")
    return value


@dataclass
class Dispatcher:
    """Turns messages into replies; ``lab`` is the process's lab context or None."""

    sink: RecordSink
    lab: LabContext | None = None
    lab_error: str | None = None
    """Set when PROTOLENS_LAB_CONTEXT was given but unusable: hello and record then fail."""
    queries: QuerySource | None = None
    """Answers ``query`` messages (dashboard data); None: they get an error reply."""
    policies: PolicySource | None = None
    """Rules and relay for the ``policies`` message; None: that message gets an error reply."""
    contribute: ContributeSource | None = None
    """Answers ``contribute_settings`` and ``contribute_status`` (issue 11)."""

    def handle_all(self, payload: bytes, now_ms: float) -> list[dict[str, Any]]:
        """The replies to one frame: the reply, and after a successful ``hello`` the
        ``policies`` message (docs/MESSAGES.md)."""
        reply = self.handle(payload, now_ms)
        if reply["type"] == "hello" and self.policies is not None:
            return [reply, policies_reply(self.policies.snapshot())]
        return [reply]

    def handle(self, payload: bytes, now_ms: float) -> dict[str, Any]:
        try:
            return self._handle(payload, now_ms)
        except _BadMessage as bad:
            return error_reply(str(bad), bad.msg_id, bad.retry)

    def _handle(self, payload: bytes, now_ms: float) -> dict[str, Any]:
        msg = decode_message(payload)
        msg_id = msg.get("msg_id")
        if msg_id is not None and not (isinstance(msg_id, str) and len(msg_id) <= MAX_MSG_ID):
            raise _BadMessage(f"msg_id: expected a string of at most {MAX_MSG_ID} characters")
        kind = msg.get("type")
        schema = msg.get("schema")
        if not isinstance(kind, str):
            raise _BadMessage("type: expected a string naming the message type", msg_id)
        if schema != MESSAGE_SCHEMA or isinstance(schema, bool):
            raise _BadMessage(f"schema: unsupported message schema {schema!r}, this host speaks "
                              f"{MESSAGE_SCHEMA}", msg_id)
        reply: dict[str, Any]
        if kind == "ping":
            reply = {"type": "pong", "schema": MESSAGE_SCHEMA}
        elif kind == "hello":
            if self.lab_error:
                raise _BadMessage(self.lab_error, msg_id)
            reply = {"type": "hello", "schema": MESSAGE_SCHEMA, "host_version": __version__,
                     "lab": self.lab.to_json() if self.lab else None}
        elif kind == "record":
            reply = self._record(msg, msg_id, now_ms)
        elif kind == "policies":
            if self.policies is None:
                raise _BadMessage("policies: this host has no policy store", msg_id)
            want = msg.get("want_relay", False)
            if not isinstance(want, bool):
                raise _BadMessage("want_relay: expected a boolean", msg_id)
            reply = policies_reply(self.policies.snapshot(want_relay=want))
        elif kind == "query":
            if self.queries is None:
                raise _BadMessage("query: this host has no store to query", msg_id)
            try:
                reply = {**handle_query(msg, self.queries), "schema": MESSAGE_SCHEMA}
            except QueryError as exc:
                raise _BadMessage(str(exc), msg_id) from None
        elif kind in ("contribute_settings", "contribute_status"):
            reply = self._contribute(kind, msg, msg_id)
        else:
            raise _BadMessage(f"type: unknown message type {kind[:40]!r}", msg_id)
        if msg_id is not None:
            reply["msg_id"] = msg_id
        return reply

    def _contribute(self, kind: str, msg: dict[str, Any], msg_id: str | None
                    ) -> dict[str, Any]:
        if self.contribute is None:
            raise _BadMessage(f"{kind}: this host does not contribute", msg_id)
        try:
            if kind == "contribute_settings":
                return {**self.contribute.set(msg.get("settings")), "schema": MESSAGE_SCHEMA}
            return {**self.contribute.status(), "schema": MESSAGE_SCHEMA}
        except ValueError as exc:
            raise _BadMessage(str(exc), msg_id) from None
        except OSError as exc:
            raise _BadMessage(f"{kind}: {exc}", msg_id, retry=True) from None

    def _record(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        if self.lab_error:
            raise _BadMessage(self.lab_error, msg_id, retry=True)
        if "record" not in msg:
            raise _BadMessage("record: missing from the record message", msg_id)
        try:
            record = parse_record(msg["record"])
        except RecordError as exc:
            raise _BadMessage(str(exc), msg_id) from None
        context = self.lab.context if self.lab else {}
        try:
            outcome = self.sink.ingest(record, context, now_ms)
        except Exception as exc:  # the host must keep serving; the extension keeps the record
            log.exception("store failed for record %s", record.id)
            raise _BadMessage(f"store: {type(exc).__name__}: {exc}", msg_id, retry=True) from None
        reply = {"type": "ack", "schema": MESSAGE_SCHEMA, "id": record.id,
                 "duplicate": outcome != "stored"}
        if outcome != "stored":
            reply["same_content"] = outcome == "duplicate"
        if outcome == "conflict":
            reply["conflict"] = CONFLICT
        return reply


def encode_reply(reply: Mapping[str, Any]) -> bytes:
    """Frame a reply; one that would exceed 1 MB becomes an error reply instead."""
    body = json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    try:
        return encode_frame(body, MAX_OUTGOING)
    except FrameTooLarge as exc:
        small = error_reply(f"reply: {exc}", reply.get("msg_id"))
        return encode_frame(json.dumps(small, separators=(",", ":")).encode("utf-8"))
