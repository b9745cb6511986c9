"""The contribution switch end to end in real headless Chromium with the built extension: page
loads of the test site (caddy on loopback) recorded by the extension into a store; a real
collector on loopback (TLS from a test CA, which the host trusts through PROTOLENS_CA_CERT); the
host registered for a second profile over that store. On the options page the volunteer types the
collector URL and token and turns the switch on; the host's schedule (every second here) uploads
the loads; ``collector status`` shows them and the popup says so. Switched off, a newly recorded
load is not sent."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from scripts.devkit.cdp import EXTENSION, Page, devtools_browser
from scripts.devkit.collector import cli, running_collector
from scripts.devkit.everyday import extension_spec
from scripts.devkit.harness import load_page
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.e2e


def _status(data: Path) -> dict[str, int]:
    res = cli("collector", "status", "--data", str(data), "--json")
    out: dict[str, int] = json.loads(res.stdout)
    return out


def _wait(pred: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.3)
    return False


def _navigations(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM navigations").fetchone()[0])
    finally:
        conn.close()


def test_switch_on_uploads_switch_off_stops(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    with serve_site(tmp_path / "site") as site, running_collector(tmp_path) as c:
        for arm in ("h1", "h2"):
            load = load_page(arm=arm, url=site.origin() + "/page/", site=site, db=db,
                             scratch=tmp_path / arm, quic_hosts=[])
            assert load.result.ok, load.result.reason
        recorded = _navigations(db)
        assert recorded >= 2
        token = c.token("vol-e2e")
        spec = extension_spec(tmp_path, db=db, env={"XDG_DATA_HOME": str(tmp_path / "xdg"),
                                                    "PROTOLENS_CA_CERT": str(c.ca),
                                                    "PROTOLENS_CONTRIBUTE_INTERVAL_S": "1"})
        with devtools_browser(spec, tmp_path) as (cdp, _):
            options = Page(cdp, f"{EXTENSION}/options.html", 900, 1400)
            options.wait("document.getElementById('contrib-last').textContent === "
                         "'contributing: off'")
            preview = options.js("document.getElementById('contrib-preview').textContent")
            assert f"{recorded} new page load(s) would be sent." in preview
            assert "origin" in preview
            assert _status(c.data)["bundles"] == 0

            options.js(f"document.getElementById('contrib-url').value = {json.dumps(c.url)};"
                       f"document.getElementById('contrib-token').value = {json.dumps(token)};"
                       "document.getElementById('contrib-enabled').checked = true;"
                       "document.getElementById('contrib-save').click(); true")
            options.wait("document.getElementById('contrib-status').textContent === 'Saved.'")
            assert _wait(lambda: _status(c.data)["bundles"] == 1, 60), c.log.read_text()
            status = _status(c.data)
            assert status["navigations_rows"] == recorded and status["contributors"] == 1

            popup = Page(cdp, f"{EXTENSION}/popup.html", 400, 600)
            line = popup.wait("document.getElementById('contribution').textContent.includes("
                              f"'({recorded} loads)') && document.getElementById('contribution')"
                              ".textContent")
            assert line.startswith(f"contributing to {c.url} · last ") and line.endswith("0 new")

            options.js("document.getElementById('contrib-enabled').checked = false;"
                       "document.getElementById('contrib-status').textContent = '';"
                       "document.getElementById('contrib-save').click(); true")
            options.wait("document.getElementById('contrib-status').textContent === 'Saved.'")
            load = load_page(arm="h2", url=site.origin() + "/page/", site=site, db=db,
                             scratch=tmp_path / "after", quic_hosts=[])
            assert load.result.ok, (load.result.reason,
                                    (tmp_path / "after" / "chromium.log").read_text()[-3000:])
            assert _navigations(db) > recorded
            time.sleep(4.0)  # several schedule periods with the switch off
            assert _status(c.data)["bundles"] == 1
            assert _status(c.data)["navigations_rows"] == recorded
        log = c.log.read_text()
    assert token not in log
