"""Uploads on a schedule while the browser runs (adapter). The host process lives as
long as the extension's native port, so a daemon thread (started by ``python -m protolens.host``,
the composition root: ``host/`` sits below ``collector/``) runs ``collector/contribute.py``
every ``PROTOLENS_CONTRIBUTE_INTERVAL_S`` seconds (default 900) while the options page's switch
is on; ``ContributeHost`` answers the ``contribute_settings`` and ``contribute_status`` messages
(docs/MESSAGES.md) with the settings, the new loads waiting and the last outcome.

``collector/contribute.py`` is imported when first needed, not at the host's start: it pulls in
httpx, Starlette, pyarrow and DuckDB, 0.26 s of a 0.32 s host start measured with
``python -X importtime``, and every browser start (every lab load) waits for the host's hello.
Neither the schedule's first tick (an interval away) nor a lab load needs it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protolens.collector.settings import ContributeSettings, load, parse, save
from protolens.paths import data_home, default_db
from protolens.store import StoreError

log = logging.getLogger("protolens.host")
INTERVAL_ENV = "PROTOLENS_CONTRIBUTE_INTERVAL_S"


@dataclass
class ContributeHost:
    db: Path
    home: Path
    ca_cert: Path | None = None
    last_error: str | None = None
    last_run_ms: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, raw: Any) -> dict[str, Any]:
        """Save the options page's settings; an empty token keeps the saved one for the same
        collector (the page never shows the token, so it cannot send it back)."""
        saved = load(self.home)
        if isinstance(raw, dict) and raw.get("token") == "" and saved.token and \
                raw.get("url") == saved.url:
            raw = {**raw, "token": saved.token}
        save(self.home, parse(raw))
        return self.status()

    def status(self) -> dict[str, Any]:
        from protolens.collector.contribute import status
        s = load(self.home)
        try:
            st = status(self.db, s.url or None)
        except StoreError as exc:
            st = {"new_loads": 0, "last": None, "columns": {}}
            self.last_error = str(exc)
        last = st["last"] or {}
        return {"type": "contribute_status", "enabled": s.enabled, "url": s.url,
                "token_set": bool(s.token), "new_loads": st["new_loads"],
                "columns": st["columns"], "last_contribution_ms": last.get("accepted_at_ms"),
                "last_navigations": last.get("navigations"), "last_error": self.last_error,
                "last_run_ms": self.last_run_ms}

    def tick(self, settings: ContributeSettings) -> None:
        if not (settings.enabled and settings.url and settings.token):
            return
        from protolens.collector.contribute import ContributeError, Target, run_once
        with self._lock:
            try:
                run_once(self.db, self.home, Target(settings.url, settings.token, self.ca_cert))
                self.last_error = None
            except (ContributeError, StoreError) as exc:
                self.last_error = str(exc)
                log.warning("contribute: %s", exc)
            self.last_run_ms = time.time() * 1000


def from_env(env: Mapping[str, str]) -> ContributeHost:
    """The host process's contribution source, its schedule started (``host/__main__.py``)."""
    ca = env.get("PROTOLENS_CA_CERT")
    host = ContributeHost(default_db(env), data_home(env), Path(ca) if ca else None)
    start_timer(host, env)
    return host


def start_timer(host: ContributeHost, env: Mapping[str, str]) -> threading.Thread:
    interval = float(env.get(INTERVAL_ENV) or 900)

    def loop() -> None:
        while True:
            time.sleep(interval)
            host.tick(load(host.home))

    thread = threading.Thread(target=loop, name="protolens-contribute", daemon=True)
    thread.start()
    return thread
