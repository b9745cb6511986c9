"""The contribution switch end to end in real headless Chromium with the built extension: a real
collector on loopback (TLS from a test CA, which the host trusts through PROTOLENS_CA_CERT), the
host registered for the profile over a store of recorded loads. On the options page the volunteer
types the collector URL and token and turns the switch on; the host's schedule (every second
here) uploads the loads; ``collector status`` shows them and the popup says so. Switched off, a
newly recorded load is not sent."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from protolens.browser.flags import LaunchSpec
from protolens.browser.profile import seed_preferences
from protolens.install.lab import register_lab_host
from protolens.record import parse_record
from protolens.store import ingest, open_rw
from tests.collector.helpers import cli, running_collector, small_store
from tests.e2e.cdp import devtools_browser
from tests.e2e.harness import CHROMIUM, require_dist
from tests.e2e.test_ui_e2e import EXTENSION, Page
from tests.research.store_builder import NOW_MS, lab_record

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


def test_switch_on_uploads_switch_off_stops(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db", n=5)
    with running_collector(tmp_path) as c:
        token = c.token("vol-e2e")
        udd = tmp_path / "profile"
        seed_preferences(udd)
        register_lab_host(udd, {"PROTOLENS_DB": str(db), "XDG_DATA_HOME": str(tmp_path / "xdg"),
                                "PROTOLENS_CA_CERT": str(c.ca),
                                "PROTOLENS_CONTRIBUTE_INTERVAL_S": "1"})
        spec = LaunchSpec(chromium=CHROMIUM, user_data_dir=str(udd),
                          extension_dir=str(require_dist()), arm="h2", origins=[],
                          extra=["--remote-debugging-port=0"])
        with devtools_browser(spec, tmp_path) as (cdp, _):
            options = Page(cdp, f"{EXTENSION}/options.html", 900, 1400)
            options.wait("document.getElementById('contrib-last').textContent === "
                         "'contributing: off'")
            preview = options.js("document.getElementById('contrib-preview').textContent")
            assert "5 new page load(s) would be sent." in preview and "origin" in preview
            assert _status(c.data)["bundles"] == 0

            options.js(f"document.getElementById('contrib-url').value = {json.dumps(c.url)};"
                       f"document.getElementById('contrib-token').value = {json.dumps(token)};"
                       "document.getElementById('contrib-enabled').checked = true;"
                       "document.getElementById('contrib-save').click(); true")
            options.wait("document.getElementById('contrib-status').textContent === 'Saved.'")
            assert _wait(lambda: _status(c.data)["bundles"] == 1, 60), c.log.read_text()
            status = _status(c.data)
            assert status["navigations_rows"] == 5 and status["contributors"] == 1

            popup = Page(cdp, f"{EXTENSION}/popup.html", 400, 600)
            line = popup.wait("document.getElementById('contribution').textContent.includes("
                              "'(5 loads)') && document.getElementById('contribution')"
                              ".textContent")
            assert line.startswith(f"contributing to {c.url} · last ") and line.endswith("0 new")

            options.js("document.getElementById('contrib-enabled').checked = false;"
                       "document.getElementById('contrib-status').textContent = '';"
                       "document.getElementById('contrib-save').click(); true")
            options.wait("document.getElementById('contrib-status').textContent === 'Saved.'")
            conn = open_rw(db)
            ingest(conn, parse_record(lab_record(88_000, "camp", "p", "c", "h2", 0, 900.0,
                                                 source="experiment")), {}, NOW_MS + 60_000)
            conn.close()
            time.sleep(4.0)  # several schedule periods with the switch off
            assert _status(c.data)["bundles"] == 1
        log = c.log.read_text()
    assert token not in log
