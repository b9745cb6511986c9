"""Running the collector (adapter): sweep what a crash left, then uvicorn on the given address,
HTTPS when a certificate is given. uvicorn's access log is off: it would record client
addresses, which the collector never keeps (issue 11)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import uvicorn

from protolens.collector.app import Settings, make_app
from protolens.collector.dataset import sweep
from protolens.collector.layout import CATALOG
from protolens.store.collector import catalog_paths, open_catalog


def startup_sweep(data: Path) -> list[str]:
    data.mkdir(parents=True, exist_ok=True)
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    try:
        return sweep(data, catalog_paths(conn))
    finally:
        conn.close()


def run(settings: Settings, host: str, port: int, cert: Path | None, key: Path | None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    removed = startup_sweep(settings.data)
    if removed:
        logging.getLogger("protolens.collector").info(
            "removed %d unacknowledged files left by an interrupted upload", len(removed))
    config = uvicorn.Config(make_app(settings), host=host, port=port, access_log=False,
                            server_header=False, proxy_headers=False, log_config=None,
                            ssl_certfile=str(cert) if cert else None,
                            ssl_keyfile=str(key) if key else None)
    uvicorn.Server(config).run()
