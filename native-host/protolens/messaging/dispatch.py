"""Pure dispatch of one decoded frame to a reply (docs/MESSAGES.md).

``Dispatcher.handle(payload, now)`` parses the frame's bytes (``inbound``: bounded, text only),
validates the message, hands it to its type's handler (``HANDLERS``, one per ``MESSAGE_TYPES``)
and returns the reply object. A ``record`` message is first tried on the fast path
(``messaging/fast.py``: same acceptance, same rows, no error text); what it declines takes this
reference path. It never raises: every problem, a handler's bug included, becomes
an ``error`` reply naming it, with ``retry`` true only when the store says a resend may pass
(``RetryLater``). ``encode_reply`` keeps replies under
Chromium's 1 MB host -> extension limit.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, Protocol, get_args

from protolens import __version__
from protolens.messaging import inbound
from protolens.messaging.fast import FastRecord, RecordDecoder
from protolens.messaging.framing import MAX_OUTGOING, FrameTooLarge, encode_frame
from protolens.messaging.inbound import well_formed
from protolens.messaging.lab import LabContext
from protolens.messaging.logs import LogMessageError, parse_log_message
from protolens.messaging.policies import PolicySource, policies_reply
from protolens.messaging.queries import QueryError, QuerySource, handle_query
from protolens.messaging.schema import MESSAGE_SCHEMA
from protolens.record import RecordError, parse_record
from protolens.record.enums import IngestOutcome
from protolens.record.rows import RecordRows, record_rows

MAX_MSG_ID = 200
"""Longest ``msg_id`` echoed back (keeps every reply small)."""
MAX_ERROR = 500
"""Longest error text in a reply."""
CONFLICT = "different content, kept the stored one"
"""An ack's ``conflict`` when a resent id carried different content: the stored one is kept
and the ack says so."""
_FAST_RECORD = RecordDecoder(MESSAGE_SCHEMA, MAX_MSG_ID)
"""The ``record`` message's fast path (compiled once, immutable)."""

log = logging.getLogger("protolens.host")


IncomingType = Literal["hello", "record", "ping", "policies", "query", "contribute_settings",
                       "contribute_status", "log", "lab_loaded"]
"""The extension -> host message types (``ExtensionMsg`` in src/messages/protocol.ts)."""
MESSAGE_TYPES: tuple[str, ...] = get_args(IncomingType)


class RetryLater(Exception):
    """Raised by a ``RecordSink`` when storing the same record again may succeed (a locked or
    busy store, a store that cannot be opened yet). Any other exception is final."""


class ContributeSource(Protocol):
    """The host's contribution settings and status (``collector/schedule.py``)."""

    def set(self, raw: Any) -> dict[str, Any]: ...

    def status(self) -> dict[str, Any]: ...


class RecordSink(Protocol):
    """Where validated records go, as their rows; the SQLite store implements it."""

    def ingest(self, rows: RecordRows, context: Mapping[str, Any],
               now_ms: float) -> IngestOutcome:
        """Store a record's ``rows`` with ``context`` stamped: ``stored``, or its id was stored
        before with the same content (``duplicate``) or a different one (``conflict``). Raise
        ``RetryLater`` for a failure that may pass, anything else for one that will not."""
        ...


class LogSink(Protocol):
    """Where the log tap's logs go (``store/logs.py``)."""

    def store_log(self, navigation_id: str, log: bytes, options: dict[str, Any],
                  now_ms: float) -> Literal["stored", "duplicate", "no_navigation"]:
        """Keep ``log`` for a stored navigation. Raise ``RetryLater`` for a failure that may
        pass."""
        ...


class _BadMessage(Exception):
    def __init__(self, error: str, msg_id: str | None = None, retry: bool = False) -> None:
        super().__init__(error)
        self.msg_id = msg_id
        self.retry = retry


def error_reply(error: str, msg_id: str | None = None, retry: bool = False) -> dict[str, Any]:
    """An ``error`` reply; ``retry`` says whether resending the same message may succeed."""
    one_line = " ".join(well_formed(error).split())
    if len(one_line) > MAX_ERROR:
        one_line = one_line[: MAX_ERROR - 3] + "..."
    return {"type": "error", "schema": MESSAGE_SCHEMA, "msg_id": msg_id, "error": one_line,
            "retry": retry}


def decode_message(payload: bytes | bytearray) -> dict[str, Any]:
    """UTF-8 JSON object -> dict, or raise ``_BadMessage`` naming the problem."""
    try:
        return inbound.decode_message(payload)
    except inbound.BadMessage as exc:
        raise _BadMessage(str(exc)) from None


def _msg_id(msg: Mapping[str, Any]) -> str | None:
    msg_id = msg.get("msg_id")
    if msg_id is not None and not (isinstance(msg_id, str) and len(msg_id) <= MAX_MSG_ID
                                   and well_formed(msg_id) == msg_id):
        raise _BadMessage(f"msg_id: expected a string of at most {MAX_MSG_ID} characters of "
                          "well-formed text")
    return msg_id


Handler = Callable[["Dispatcher", dict[str, Any], "str | None", float], dict[str, Any]]


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
    """Answers ``contribute_settings`` and ``contribute_status`` (docs/COLLECTOR.md)."""
    logs: LogSink | None = None
    """Keeps ``log`` messages (the extension's log tap); None: they get an error reply."""
    on_lab_loaded: Callable[[], None] | None = None
    """Called on ``lab_loaded`` (the host adapter creates the lab context's ``loaded_file``)."""
    fast_path: bool = True
    """Try ``record`` messages on the fast path first; False: the reference path only (the
    tests and scripts/bench/ingest.py compare the two)."""

    def handle_all(self, payload: bytes | bytearray, now_ms: float) -> list[dict[str, Any]]:
        """The replies to one frame: the reply, and after a successful ``hello`` the
        ``policies`` message (docs/MESSAGES.md)."""
        reply = self.handle(payload, now_ms)
        if reply["type"] == "hello" and self.policies is not None:
            try:
                return [reply, policies_reply(self.policies.snapshot())]
            except Exception as exc:  # the hello stands; the extension asks again later
                log.exception("policies after hello failed")
                return [reply, error_reply(f"policies: {type(exc).__name__}: {exc}")]
        return [reply]

    def handle(self, payload: bytes | bytearray, now_ms: float) -> dict[str, Any]:
        """The reply to one frame. Never raises: every message is answered."""
        try:
            fast = self._fast(payload)
            if fast is not None:
                return self._store(fast.rows, fast.msg_id, now_ms)
            return self._handle(payload, now_ms)
        except _BadMessage as bad:
            return error_reply(str(bad), bad.msg_id, bad.retry)

    def _fast(self, payload: bytes | bytearray) -> FastRecord | None:
        if self.lab_error or not self.fast_path:  # the reference path answers it
            return None
        try:
            return _FAST_RECORD(payload)
        except Exception:  # a bug there costs the fast path, never the reply
            log.exception("record fast path failed; reading the frame on the reference path")
            return None

    def _handle(self, payload: bytes | bytearray, now_ms: float) -> dict[str, Any]:
        msg = decode_message(payload)
        msg_id = _msg_id(msg)
        try:
            inbound.check_text(payload, msg)
        except inbound.BadMessage as exc:
            raise _BadMessage(str(exc), msg_id) from None
        kind = msg.get("type")
        schema = msg.get("schema")
        if not isinstance(kind, str):
            raise _BadMessage("type: expected a string naming the message type", msg_id)
        if schema != MESSAGE_SCHEMA or isinstance(schema, bool):
            raise _BadMessage(f"schema: unsupported message schema {schema!r}, this host speaks "
                              f"{MESSAGE_SCHEMA}", msg_id)
        handler = HANDLERS.get(kind)
        if handler is None:
            raise _BadMessage(f"type: unknown message type {kind[:40]!r}", msg_id)
        try:
            reply = handler(self, msg, msg_id, now_ms)
        except _BadMessage:
            raise
        except Exception as exc:  # a bug must cost one reply, never the host
            log.exception("%s message failed", kind)
            raise _BadMessage(f"{kind}: host error {type(exc).__name__}: {exc}", msg_id) from None
        if msg_id is not None:
            reply["msg_id"] = msg_id
        return reply

    def _contribute(self, msg: dict[str, Any], msg_id: str | None, now_ms: float
                    ) -> dict[str, Any]:
        kind = str(msg.get("type"))
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

    def _ping(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        return {"type": "pong", "schema": MESSAGE_SCHEMA}

    def _hello(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        if self.lab_error:
            raise _BadMessage(self.lab_error, msg_id)
        return {"type": "hello", "schema": MESSAGE_SCHEMA, "host_version": __version__,
                "lab": self.lab.to_json() if self.lab else None}

    def _lab_loaded(self, msg: dict[str, Any], msg_id: str | None, now_ms: float
                    ) -> dict[str, Any]:
        """The lab tab's last URL fired its load event: mark it for ``lab run``, which starts
        the next load's browser while this page's quiet runs (lab/runner.py)."""
        if self.lab is None:
            raise _BadMessage("lab_loaded: this host is not in lab mode", msg_id)
        if self.on_lab_loaded is not None:
            self.on_lab_loaded()
        return {"type": "lab_loaded", "schema": MESSAGE_SCHEMA}

    def _policies(self, msg: dict[str, Any], msg_id: str | None, now_ms: float
                  ) -> dict[str, Any]:
        if self.policies is None:
            raise _BadMessage("policies: this host has no policy store", msg_id)
        want = msg.get("want_relay", False)
        if not isinstance(want, bool):
            raise _BadMessage("want_relay: expected a boolean", msg_id)
        return policies_reply(self.policies.snapshot(want_relay=want))

    def _query(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        if self.queries is None:
            raise _BadMessage("query: this host has no store to query", msg_id)
        try:
            return {**handle_query(msg, self.queries), "schema": MESSAGE_SCHEMA}
        except QueryError as exc:
            raise _BadMessage(str(exc), msg_id) from None

    def _record(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        if self.lab_error:  # the lab runner may still fix its context file: worth a resend
            raise _BadMessage(self.lab_error, msg_id, retry=True)
        if "record" not in msg:
            raise _BadMessage("record: missing from the record message", msg_id)
        try:
            rows = record_rows(parse_record(msg["record"]))
        except RecordError as exc:
            raise _BadMessage(str(exc), msg_id) from None
        return self._store(rows, msg_id, now_ms)

    def _log(self, msg: dict[str, Any], msg_id: str | None, now_ms: float) -> dict[str, Any]:
        if self.logs is None:
            raise _BadMessage("log: this host keeps no logs", msg_id)
        try:
            got = parse_log_message(msg)
        except LogMessageError as exc:
            raise _BadMessage(str(exc), msg_id) from None
        try:
            outcome = self.logs.store_log(got.navigation_id, got.log, got.options, now_ms)
        except RetryLater as exc:
            raise _BadMessage(f"store: {exc}", msg_id, retry=True) from None
        if outcome == "no_navigation":  # the log follows its record's ack: forgotten since
            raise _BadMessage(f"navigation_id: {got.navigation_id} is not a stored navigation",
                              msg_id)
        return {"type": "log_stored", "schema": MESSAGE_SCHEMA, "navigation_id": got.navigation_id,
                "bytes": len(got.log), "duplicate": outcome == "duplicate"}

    def _store(self, rows: RecordRows, msg_id: str | None, now_ms: float) -> dict[str, Any]:
        """Hand a valid record to the sink; the ack (with ``msg_id`` if given) once it is
        stored."""
        context = self.lab.context if self.lab else {}
        try:
            outcome = self.sink.ingest(rows, context, now_ms)
        except RetryLater as exc:  # the extension keeps the record and resends it
            log.warning("store busy for record %s: %s", rows.id, exc)
            raise _BadMessage(f"store: {exc}", msg_id, retry=True) from None
        except Exception as exc:  # resending the same record cannot help
            log.warning("store refused record %s: %s: %s", rows.id, type(exc).__name__, exc)
            raise _BadMessage(f"store: cannot store this record: {type(exc).__name__}: {exc}",
                              msg_id) from None
        reply: dict[str, Any] = {"type": "ack", "schema": MESSAGE_SCHEMA, "id": rows.id,
                                 "duplicate": outcome != "stored"}
        if outcome != "stored":
            reply["same_content"] = outcome == "duplicate"
        if outcome == "conflict":
            reply["conflict"] = CONFLICT
        if msg_id is not None:
            reply["msg_id"] = msg_id
        return reply


HANDLERS: Mapping[str, Handler] = MappingProxyType({
    "ping": Dispatcher._ping,
    "hello": Dispatcher._hello,
    "record": Dispatcher._record,
    "policies": Dispatcher._policies,
    "query": Dispatcher._query,
    "contribute_settings": Dispatcher._contribute,
    "contribute_status": Dispatcher._contribute,
    "log": Dispatcher._log,
    "lab_loaded": Dispatcher._lab_loaded,
})
"""One handler per message type; checked complete against ``MESSAGE_TYPES`` below and, in the
tests, against the TypeScript union (as ``satisfies Record<Msg["type"], ...>`` does there)."""
if set(HANDLERS) != set(MESSAGE_TYPES):
    raise TypeError(f"dispatch: handlers for {sorted(HANDLERS)} but message types "
                    f"{sorted(MESSAGE_TYPES)}")


def encode_reply(reply: Mapping[str, Any]) -> bytes:
    """Frame a reply; one that would exceed 1 MB becomes an error reply instead. Always valid
    UTF-8: a lone surrogate that reached a reply becomes U+FFFD (it cannot be
    encoded as UTF-8)."""
    text = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:
        body = well_formed(text).encode("utf-8")
    try:
        return encode_frame(body, MAX_OUTGOING)
    except FrameTooLarge as exc:
        small = error_reply(f"reply: {exc}", reply.get("msg_id"))
        return encode_frame(json.dumps(small, separators=(",", ":")).encode("utf-8"))
