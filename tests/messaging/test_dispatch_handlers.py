"""The host's message dispatch is one handler map, complete for the message types the
extension sends (``ExtensionMsg`` in src/messages/protocol.ts), as the TypeScript side checks its
own with ``satisfies Record<Msg["type"], ...>`` (issue 12, section 5)."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

from protolens.messaging.dispatch import HANDLERS, MESSAGE_TYPES, Dispatcher

ROOT = Path(__file__).resolve().parents[2]


def extension_message_types() -> set[str]:
    text = (ROOT / "src/messages/protocol.ts").read_text()
    union = text[text.index("export type ExtensionMsg ="):text.index("export type HostMsg =")]
    return set(re.findall(r'type: "([a-z_]+)"', union))


def test_handler_map_matches_the_typescript_union() -> None:
    sent = extension_message_types()
    assert len(sent) >= 5  # the parse found the union
    assert set(MESSAGE_TYPES) == sent
    assert set(HANDLERS) == sent


class NoSink:
    def ingest(self, *args: object) -> bool:
        raise AssertionError("no record expected")


def test_every_type_is_dispatched_to_its_handler_never_unknown() -> None:
    d = Dispatcher(NoSink())
    for kind in MESSAGE_TYPES:
        reply = d.handle(json.dumps({"type": kind, "schema": 1, "msg_id": "x"}).encode(), 0.0)
        assert "unknown message type" not in reply.get("error", ""), (kind, reply)
    unknown = d.handle(b'{"type":"record2","schema":1}', 0.0)
    assert unknown["error"] == "type: unknown message type 'record2'"


def test_a_handler_that_raises_costs_one_reply_not_the_host() -> None:
    class Broken:
        def snapshot(self, want_relay: bool = False) -> object:
            raise RuntimeError("boom \ud800")

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.texts: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.texts.append(self.format(record))

    # the host's log is read here, not propagated to pytest's report: its lone surrogate cannot
    # cross pytest-xdist's channel (the host's own log file writes it backslash-escaped)
    host_log, kept = logging.getLogger("protolens.host"), Kept()
    host_log.addHandler(kept)
    host_log.propagate = False
    try:
        d = Dispatcher(NoSink(), policies=Broken())  # type: ignore[arg-type]
        reply = d.handle(b'{"type":"policies","schema":1,"msg_id":"p"}', 0.0)
    finally:
        host_log.removeHandler(kept)
        host_log.propagate = True
    assert reply["type"] == "error" and reply["msg_id"] == "p" and reply["retry"] is False
    assert "RuntimeError: boom \ufffd" in reply["error"]  # the surrogate made writable
    assert d.handle(b'{"type":"ping","schema":1}', 0.0)["type"] == "pong"
    assert any("policies message failed" in t and "RuntimeError: boom" in t
               for t in kept.texts), kept.texts  # the host's log has the failure
