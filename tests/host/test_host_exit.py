"""The host's stdio loop does not return while its ``lab_go`` thread is still writing.

One CI run's host exited -6 (SIGABRT) after answering every frame, right after it had sent
``lab_go`` and stdin ended (its stderr was not kept). The likely cause: CPython aborts a process
whose daemon thread holds stdout's buffer lock while the interpreter finalizes ("could not
acquire lock for <_io.BufferedWriter name='<stdout>'> at interpreter shutdown"), and the lab-go
thread was the one writer not waited for. Here the write is made slow (a real pipe for stdin, a
writer that sleeps inside ``write``) and stdin ends while the thread is in there."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

from protolens.host.stdio import serve
from protolens.messaging.dispatch import Dispatcher

WRITE_S = 0.4


class SlowOut(io.BytesIO):
    """stdout whose ``write`` takes a while and says when it began."""

    def __init__(self) -> None:
        super().__init__()
        self.writing = threading.Event()

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writing.set()
        time.sleep(WRITE_S)
        return super().write(data)


class NoSink:
    def ingest(self, *_: object) -> None:
        raise AssertionError("no record is sent in this test")


def test_serve_returns_only_after_the_lab_go_thread_wrote(tmp_path: Path) -> None:
    go = tmp_path / "go.json"
    go.write_text('{"start_at_ms": 1800000000000}')
    out = SlowOut()
    read_end, write_end = os.pipe()

    def end_stdin_while_writing() -> None:
        assert out.writing.wait(10)
        os.close(write_end)

    ender = threading.Thread(target=end_stdin_while_writing)
    ender.start()
    with os.fdopen(read_end, "rb", buffering=0) as stdin:
        started = time.monotonic()
        code = serve(stdin, out, Dispatcher(NoSink(), None, None), go_file=go)  # type: ignore[arg-type]
        took = time.monotonic() - started
    ender.join()
    assert code == 0
    assert not [t for t in threading.enumerate() if t.name == "lab-go"]
    assert b'"lab_go"' in out.getvalue()  # the whole frame went out before the return
    assert took >= WRITE_S * 0.9
