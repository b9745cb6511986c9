"""Running the collector (adapter): migrate the catalog, then uvicorn on the given address,
HTTPS when a certificate is given, with ``workers`` processes (uvicorn's supervisor restarts a
worker that dies). Each process holds its own writer lease and sweeps at start and then
periodically (``writer.py``), so any number of ``serve`` processes may share one data directory.
With several workers, they publish their connection counts in a folder made here and removed
at exit, to spread kept-alive uploaders over them (``balance.py``).
uvicorn's access log is off: it would record client addresses, which the collector never keeps.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import resource
import shutil
import time
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import uvicorn
from starlette.applications import Starlette
from uvicorn.supervisors import Multiprocess

from protolens.collector.app import make_app
from protolens.collector.balance import make_folder
from protolens.collector.connguard import GuardedH11Protocol
from protolens.collector.layout import CATALOG
from protolens.collector.settings_serve import ENV, Settings
from protolens.store.collector import open_catalog

ALLOC_DECAY_MS = 250
"""How long jemalloc keeps the pages a validation freed before it gives them back to the
system. Measured on the bench bundles (1,000 navigations, one worker, 40 uploads): at 0 every
upload faults its pages in afresh, 74-78 ms of collector CPU per bundle; at 250 ms the next
upload on the same thread reuses them, 67 ms (100 ms: 71.5; 1 s: 64-67.5). The memory peak of 8
concurrent maximum-size uploads moved within the bench's run-to-run spread (0: 296 and 303 MB;
250 ms: 301 and 314; 100 ms: 300 and 308); at the default 10 s one burst's pages would add to
the next's."""


def worker_app() -> Starlette:
    """The application of one worker process (uvicorn's factory)."""
    # jemalloc: a lower peak than the default mimalloc (scripts/bench/collector_memory.py); a
    # pyarrow built without jemalloc keeps its default
    with contextlib.suppress(NotImplementedError):
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(ALLOC_DECAY_MS)
    return make_app(Settings.from_json(os.environ[ENV]))


def _descriptors(wanted: int) -> None:
    """Raise the soft descriptor limit towards the connection cap (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted + 256
    if soft != resource.RLIM_INFINITY and soft < target:
        new = target if hard == resource.RLIM_INFINITY else min(target, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


def run(settings: Settings, host: str, port: int, cert: Path | None, key: Path | None,
        workers: int = 1) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings.data.mkdir(parents=True, exist_ok=True)
    open_catalog(settings.data / CATALOG, time.time() * 1000).close()  # migrations, once
    _descriptors(settings.connections.max_connections)
    board = str(make_folder()) if workers > 1 else None
    os.environ[ENV] = dataclasses.replace(settings, board=board).to_json()
    config = uvicorn.Config("protolens.collector.serve:worker_app", factory=True, host=host,
                            port=port, workers=workers, http=GuardedH11Protocol,
                            access_log=False, server_header=False, proxy_headers=False,
                            log_config=None, lifespan="on",
                            timeout_keep_alive=int(max(1, settings.connections.idle_timeout_s)),
                            ssl_certfile=str(cert) if cert else None,
                            ssl_keyfile=str(key) if key else None)
    if board is not None:  # workers > 1
        try:
            Multiprocess(config, sockets=[config.bind_socket()]).run()
        finally:
            shutil.rmtree(board, ignore_errors=True)
    else:
        uvicorn.Server(config).run()
