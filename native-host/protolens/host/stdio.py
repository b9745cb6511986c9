"""The stdio adapter: read frames from stdin, dispatch, write replies to stdout, exit on EOF.

Chromium starts the host with the caller's origin as argument (ignored here) and talks over the
process's stdin/stdout. Nothing but frames ever goes to stdout: logging goes to stderr, or to
``PROTOLENS_HOST_LOG`` if set.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from protolens.host.lanes import QueryLane, is_query
from protolens.host.relay import StorePolicies
from protolens.messaging.dispatch import (
    ContributeSource,
    Dispatcher,
    RetryLater,
    encode_reply,
    error_reply,
)
from protolens.messaging.framing import Frame, FrameDecoder
from protolens.messaging.lab import LabContext, LabError, is_epoch_ms, parse_lab
from protolens.messaging.queries import StoreQueries
from protolens.messaging.schema import MESSAGE_SCHEMA
from protolens.paths import default_db
from protolens.record.enums import IngestOutcome
from protolens.record.rows import RecordRows
from protolens.store import SqliteSink, is_transient, open_rw, private_dir, private_file
from protolens.store.logs import LogOutcome, store_log

LAB_ENV = "PROTOLENS_LAB_CONTEXT"
READ_CHUNK = 1 << 16

log = logging.getLogger("protolens.host")


class LazySink:
    """Opens (creating and migrating) the store on the first record, not at start: a ``hello``
    or ``ping`` (e.g. from ``protolens doctor``) never creates a database. If opening fails,
    that record gets a retryable error and the next one tries again. A failure that resending
    cannot cure (``store.is_transient`` false) is raised as is: the record is refused for good."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._sink: SqliteSink | None = None

    def _open(self, now_ms: float) -> SqliteSink:
        if self._sink is None:
            self._sink = SqliteSink(open_rw(self.db, now_ms=now_ms))
            log.debug("opened store %s", self.db)
        return self._sink

    def ingest(self, rows: RecordRows, context: Mapping[str, Any],
               now_ms: float) -> IngestOutcome:
        try:
            return self._open(now_ms).ingest(rows, context, now_ms)
        except Exception as exc:
            if is_transient(exc):
                raise RetryLater(f"{type(exc).__name__}: {exc}") from exc
            raise

    def store_log(self, navigation_id: str, data: bytes, options: dict[str, Any],
                  now_ms: float) -> LogOutcome:
        """The log tap's log (``store/logs.py``), in the same store as the records."""
        try:
            return store_log(self._open(now_ms).conn, navigation_id, data, options, now_ms)
        except Exception as exc:
            if is_transient(exc):
                raise RetryLater(f"{type(exc).__name__}: {exc}") from exc
            raise


def load_lab(env: Mapping[str, str]) -> tuple[LabContext | None, str | None]:
    """The lab context named by ``PROTOLENS_LAB_CONTEXT``, or (None, error text)."""
    name = env.get(LAB_ENV)
    if not name:
        return None, None
    try:
        return parse_lab(json.loads(Path(name).read_text(encoding="utf-8"))), None
    except (OSError, ValueError, LabError) as exc:
        return None, f"lab context {name}: {exc}"


GO_POLL_S = 0.005
"""How often a standby browser's host looks for its go file: 200 stat calls a second, and the
first URL opens within 5 ms of the go (lab/runner.py)."""


GO_JOIN_S = 5.0
"""How long the exit waits for a ``lab_go`` being written. CPython aborts the process
("could not acquire lock for <stdout> at interpreter shutdown") when a daemon thread holds
stdout's buffer lock as it finalizes: the likely cause of one CI run's host exiting -6 right
after it sent ``lab_go`` (tests/host/test_host_exit.py)."""


def lab_go(go_file: Path) -> dict[str, Any]:
    """The ``lab_go`` message for a go file that exists: its ``start_at_ms`` if it gives one
    (JSON ``{"start_at_ms": ...}``), else at once."""
    start: Any = None
    try:
        value = json.loads(go_file.read_text(encoding="utf-8") or "{}")
        start = value.get("start_at_ms") if isinstance(value, dict) else None
    except (OSError, ValueError) as exc:
        log.warning("go file %s: %s; going at once", go_file, exc)
    return {"type": "lab_go", "schema": MESSAGE_SCHEMA,
            "start_at_ms": start if is_epoch_ms(start) else None}


def wait_go(go_file: Path, send: Callable[[list[dict[str, Any]]], None],
            stop: threading.Event) -> threading.Thread:
    """A thread that sends ``lab_go`` once ``go_file`` exists (docs/MESSAGES.md, "Lab mode")."""
    def loop() -> None:
        while not stop.wait(GO_POLL_S):
            if go_file.exists():
                log.debug("go file %s: going", go_file)
                with contextlib.suppress(OSError, ValueError):  # the port closed meanwhile
                    send([lab_go(go_file)])
                return

    thread = threading.Thread(target=loop, name="lab-go", daemon=True)
    thread.start()
    return thread


def serve(stdin: BinaryIO, stdout: BinaryIO, dispatcher: Dispatcher,
          go_file: Path | None = None) -> int:
    """Serve frames until EOF; return the exit status (0 on a clean end). ``query`` frames are
    answered on their own lane (``host/lanes.py``), everything else here at once. With a
    ``go_file`` (a standby lab browser) ``lab_go`` is sent once it exists."""
    decoder = FrameDecoder()
    fd = stdin.fileno()
    writing = threading.Lock()

    def send(replies: list[dict[str, Any]]) -> None:
        with writing:
            for reply in replies:
                if reply["type"] == "error":
                    log.warning("error reply: %s", reply["error"])
                stdout.write(encode_reply(reply))
            stdout.flush()

    lane = QueryLane(dispatcher, send)
    stop = threading.Event()
    go = wait_go(go_file, send, stop) if go_file is not None else None
    try:
        while True:
            data = os.read(fd, READ_CHUNK)
            if not data:
                if not decoder.idle:
                    log.warning("stdin ended inside a frame; exiting")
                return 0
            for event in decoder.feed(data):
                if not isinstance(event, Frame):
                    send([error_reply(event.error)])
                elif is_query(event.payload):
                    lane.submit(event.payload)
                else:
                    send(dispatcher.handle_all(event.payload, time.time() * 1000))
    finally:
        stop.set()
        lane.close()
        if go is not None:  # a daemon thread still inside stdout's write aborts the exit
            go.join(GO_JOIN_S)


def _marker(lab: LabContext | None) -> Callable[[], None] | None:
    """What ``lab_loaded`` does: create the lab context's ``loaded_file``."""
    if lab is None or lab.loaded_file is None:
        return None
    path = Path(lab.loaded_file)

    def mark() -> None:
        try:
            path.touch()
        except OSError as exc:  # the runner then starts the next browser after this one
            log.warning("lab_loaded: cannot create %s: %s", path, exc)
    return mark


def main(env: Mapping[str, str] | None = None,
         contribute: Callable[[Mapping[str, str]], ContributeSource] | None = None) -> int:
    """Serve; ``contribute`` builds the contribution settings and schedule from the environment
    (``collector/schedule.py``, wired by ``host/__main__.py``)."""
    env = os.environ if env is None else env
    logfile = env.get("PROTOLENS_HOST_LOG")
    if logfile:  # it names pages and errors: the user's alone, like the store
        try:
            private_dir(Path(logfile).parent)
            private_file(Path(logfile))
        except OSError:
            pass  # logging.basicConfig below reports it
    logging.basicConfig(
        level=logging.DEBUG if env.get("PROTOLENS_DEBUG") else logging.WARNING,
        format="%(asctime)s protolens.host[%(process)d] %(levelname)s %(message)s",
        # anything logged must be writable, whatever text reached it
        **({"filename": logfile, "encoding": "utf-8", "errors": "backslashreplace"} if logfile
           else {"stream": sys.stderr}),
    )
    lab, lab_error = load_lab(env)
    db = default_db(env)
    sink = LazySink(db)
    if lab_error:
        log.error("%s", lab_error)
    log.debug("serving; db=%s lab=%s", db, lab is not None)
    source = contribute(env) if contribute is not None else None
    try:
        return serve(sys.stdin.buffer, sys.stdout.buffer,
                     Dispatcher(sink, lab, lab_error, queries=StoreQueries(db),
                                policies=StorePolicies(db, env), contribute=source,
                                logs=sink, on_lab_loaded=_marker(lab)),
                     go_file=Path(lab.go_file) if lab and lab.go_file else None)
    except BrokenPipeError:  # the browser closed the port while we were replying
        return 0
    except KeyboardInterrupt:
        return 130
