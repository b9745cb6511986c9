"""Dashboard queries on a lane of their own (adapter): a ``query`` frame is answered by one
background thread, in arrival order, while the stdio loop goes on reading and answering
``record`` frames at once. A dashboard that sends 2,000 queries no longer holds back the acks
of the records that arrive behind them. Replies are matched by ``msg_id`` (docs/MESSAGES.md), so
their order across lanes does not matter; a query sent after a record still sees it (the record
is stored before the next frame is read). Each query opens the store read-only
(``messaging/queries.StoreQueries``), so the lane shares no connection with the loop.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from protolens.messaging.dispatch import Dispatcher, error_reply

log = logging.getLogger("protolens.host")
MAX_QUERY_FRAME = 64 * 1024
"""A query frame is a few hundred bytes; anything larger takes the main loop."""
MAX_WAITING = 10_000
"""Queries waiting at most; past that one is answered "busy, retry" at once."""


def is_query(payload: bytes | bytearray) -> bool:
    """Whether a frame is a ``query`` message (cheap: only small frames naming one are parsed)."""
    if len(payload) > MAX_QUERY_FRAME or b'"query"' not in payload:
        return False
    try:
        value = json.loads(payload)
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict) and value.get("type") == "query"


class QueryLane:
    def __init__(self, dispatcher: Dispatcher, send: Callable[[list[dict[str, Any]]], None]
                 ) -> None:
        self._dispatcher = dispatcher
        self._send = send
        self._waiting: queue.Queue[bytes | bytearray | None] = queue.Queue(MAX_WAITING)
        self._thread = threading.Thread(target=self._run, name="protolens-queries", daemon=True)
        self._thread.start()

    def submit(self, payload: bytes | bytearray) -> None:
        try:
            self._waiting.put_nowait(payload)
        except queue.Full:
            self._send([error_reply("query: the host is busy with earlier queries; ask again",
                                    retry=True)])

    def close(self) -> None:
        """Answer what is waiting, then stop."""
        self._waiting.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (payload := self._waiting.get()) is not None:
            try:
                self._send(self._dispatcher.handle_all(payload, time.time() * 1000))
            except BrokenPipeError:  # the browser closed the port: nobody to answer
                return
