"""An exported HAR opens in Chrome DevTools: Chromium's own bundled DevTools frontend
(devtools://devtools/bundled/devtools_app.html) parses it with the code its Network panel runs
for *Import HAR file* (``models/har/har.js``: ``HARFormat.HARRoot`` then
``Importer.requestsFromHARLog``), in real headless Chromium.

The HAR comes from ``protolens export --har`` on a real store holding the CDP fixtures' golden
records (recorded from real Chromium, h1, h2 and h3). Each imported request must carry the
recorded URL, protocol, status, bytes on the wire (``_transferSize``), body size, priority and
resource type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.cdp import Cdp, Page, devtools_browser
from scripts.devkit.everyday import extension_spec
from scripts.devkit.harness import ROOT
from tests.cli.run import protolens

pytestmark = pytest.mark.e2e
DEVTOOLS = "devtools://devtools/bundled/devtools_app.html"
IMPORT = """import('./models/har/har.js').then((H) => {
  const root = new H.HARFormat.HARRoot(JSON.parse(globalThis.__har));
  return H.Importer.Importer.requestsFromHARLog(root.log).map((r) => [r.url(), r.protocol,
    r.statusCode, r.transferSize, r.resourceSize, r.priority(), r.resourceType().name()]);
})"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cdp]:
    tmp = tmp_path_factory.mktemp("har-devtools")
    spec = extension_spec(tmp)
    with devtools_browser(spec, tmp) as (cdp, _):
        yield cdp


@pytest.mark.parametrize("scenario", ["h1", "h2", "h3"])
def test_devtools_imports_the_exported_har(browser: Cdp, tmp_path: Path, scenario: str) -> None:
    golden = json.loads((ROOT / f"tests/fixtures/cdp/{scenario}.expected.json").read_text())
    rec: dict[str, Any] = golden[0]
    db = tmp_path / "p.db"
    conn = open_rw(db, now_ms=0.0)
    ingest(conn, parse_record(rec), {}, 0.0)
    conn.close()
    har = protolens("export", "--har", rec["id"], db=db).stdout

    page = Page(browser, DEVTOOLS, 1000, 700)
    page.wait("document.readyState === 'complete' && location.protocol === 'devtools:'")
    page.js(f"globalThis.__har = {json.dumps(har)}; true")
    imported = page.js(IMPORT)
    assert len(imported) == len(rec["requests"])
    got = sorted(map(tuple, imported))
    want = sorted((r["url"], r["protocol"] or "", r["status"] or 0, r["encoded_bytes"],
                   r["body_bytes"], r["priority"], r["resource_type"].lower())
                  for r in rec["requests"])
    assert got == want
    family = {"h1": "http/1.1", "h2": "h2", "h3": "h3"}[scenario]
    assert any(row[1] == family for row in imported)
