"""Runs lab loads of the test site in real Chromium with the built extension (tests only)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.arms import parse_lab_arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.launch import LoadResult, run_load
from protolens.lab.store_watch import stored_navigation_ids

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
CHROMIUM = "/usr/bin/chromium"


def require_dist() -> Path:
    if not (DIST / "manifest.json").exists():
        raise RuntimeError("dist/ is not built: run scripts/setup.sh (npm run build) first")
    return DIST


def stored_ids(db: Path, load_id: str) -> list[str]:
    return stored_navigation_ids(db, load_id)


SITE_QUIET_MS = 500
"""The network quiet after load that ends a record of a test site's page here. The test site
requests data/late.json 300 ms after its load event (scripts/devkit/site.py, js/app4.js), which
the corpus pages' lab quiet (``runner.LAB_QUIET_MS``, 200 ms) would leave out, so its loads keep
the 500 ms they were built with: Chromium's own idle network (``networkIdle``: 500 ms without a
request in flight, blink ``IdlenessDetector::kNetworkQuietWindow``)."""


@dataclass
class Load:
    arm: str
    load_id: str
    result: LoadResult
    log_offset: int
    """Where this load's requests start in caddy's access log."""


def load_page(*, arm: str, url: str, site: Any, db: Path, scratch: Path, quic_hosts: list[str],
              timeout_s: float = 60.0, expect: int = 1, quiet_ms: int | None = SITE_QUIET_MS,
              visual: bool = False) -> Load:
    """One cold load of ``url`` under ``arm``; waits for ``expect`` stored records. Records end
    after ``SITE_QUIET_MS`` of network quiet unless ``quiet_ms`` says otherwise.
    ``visual``: the extension captures paint progress too (the visual metrics)."""
    load_id = str(uuid.uuid4())
    offset = site.access_log.stat().st_size
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="", extension_dir=str(require_dist()),
                      arm=parse_lab_arm(arm), origins=[f"{h}:{site.port}" for h in quic_hosts],
                      spki=[site.spki], host_rules="MAP *.test 127.0.0.1")
    result = run_load(spec, scratch=scratch, db=db, navigate=[url],
                      context={"load_id": load_id, "arm": arm}, timeout_s=timeout_s,
                      done=lambda: len(stored_ids(db, load_id)) >= expect, quiet_ms=quiet_ms,
                      visual=visual)
    return Load(arm=arm, load_id=load_id, result=result, log_offset=offset)
