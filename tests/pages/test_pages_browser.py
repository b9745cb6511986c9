"""End to end: Debian Chromium loads corpus pages served by caddy on a.test, b.test and c.test.

Checks what only a browser can: every object of the manifest was fetched and finished before the
page's load event, every image decoded (naturalWidth > 0), every font was accepted (FontFace
status "loaded"), every script ran, every stylesheet parsed, every iframe loaded. A probe page on
a.test frames the corpus page (same origin) and writes what it saw into its DOM on its own load
event, which waits for the frame's; ``--dump-dom`` prints that DOM.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from protolens.browser.launch import scratch_env
from protolens.pages import HOSTS, INDEX, ensure_corpus
from protolens.testbed.caddy import global_options
from scripts.devkit.site import free_port, make_cert, run_caddy

pytestmark = pytest.mark.e2e

PAGES = ["ifip18-twitter", "ifip18-instagram", "conext-192x40k", "student-small"]
"""Iframes, fonts, scripts, styles, three hosts, tiny images, every image format."""

CHROMIUM = "/usr/bin/chromium"

CADDYFILE = """{options}{sites} {{
  bind 127.0.0.1
  tls {cert} {key}
  root * {root}
  header Cache-Control "no-store"
  file_server
}}
"""

PROBE = """<!doctype html>
<html><head><meta charset="utf-8"><title>probe</title><link rel="icon" href="data:,"></head>
<body><iframe id="page" width="800" height="600"></iframe><pre id="out"></pre>
<script>
var name = new URLSearchParams(location.search).get("p");
var frame = document.getElementById("page");
frame.src = "/" + name + "/";
window.addEventListener("load", function () {
  var w = frame.contentWindow, d = frame.contentDocument, out = {};
  var nav = w.performance.getEntriesByType("navigation")[0];
  out.load = nav.loadEventStart;
  out.resources = w.performance.getEntriesByType("resource").map(function (e) {
    return [e.name, e.responseEnd]; });
  out.fonts = []; d.fonts.forEach(function (f) { out.fonts.push([f.family, f.status]); });
  out.scripts = w.__protolens || 0;
  out.images = Array.prototype.map.call(d.images, function (i) {
    return [i.src, i.complete, i.naturalWidth]; });
  out.sheets = Array.prototype.map.call(d.styleSheets, function (s) {
    return [s.href, s.cssRules.length]; });
  out.frames = Array.prototype.map.call(d.querySelectorAll("iframe"), function (f) {
    return [f.src, f.contentDocument.body ? f.contentDocument.body.textContent.trim() : null]; });
  document.getElementById("out").textContent = JSON.stringify(out);
});
</script></body></html>
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int, str]]:
    if not (shutil.which("caddy") and Path(CHROMIUM).exists()):
        pytest.skip("needs caddy and /usr/bin/chromium")
    work = tmp_path_factory.mktemp("pages-e2e")
    root = work / "root"
    ensure_corpus(root, PAGES)
    (root / "probe").mkdir()
    (root / "probe" / INDEX).write_text(PROBE)
    cert, key, spki = make_cert(work, HOSTS)
    port = free_port()
    caddyfile = work / "Caddyfile"
    caddyfile.write_text(CADDYFILE.format(options=global_options(("h1", "h2")),
                                          sites=", ".join(f"{h}:{port}" for h in HOSTS),
                                          cert=cert, key=key, root=root))
    with run_caddy(caddyfile, port, work / "home", work / "caddy.log", sni=HOSTS[0]):
        yield root, port, spki


def _probe(served: tuple[Path, int, str], name: str, tmp_path: Path) -> dict[str, object]:
    _, port, spki = served
    args = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-quic", f"--user-data-dir={tmp_path / 'profile'}",
            f"--host-resolver-rules=MAP *.test 127.0.0.1:{port}",
            f"--ignore-certificate-errors-spki-list={spki}",
            "--dump-dom", f"https://a.test/probe/?p={name}"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=90,
                         env=scratch_env(os.environ, tmp_path / "scratch"))
    found = re.search(r'<pre id="out">(.*?)</pre>', out.stdout, re.S)
    assert found and found.group(1), out.stdout[-2000:] + out.stderr[-2000:]
    result: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return result


@pytest.mark.parametrize("name", PAGES)
def test_browser_loads_every_object_before_onload(served: tuple[Path, int, str], name: str,
                                                  tmp_path: Path) -> None:
    root = served[0]
    manifest = json.loads((root / name / "manifest.json").read_text())
    objs = [o for o in manifest["objects"] if o["path"] != INDEX]
    seen = _probe(served, name, tmp_path)
    load = seen["load"]
    assert isinstance(load, float | int) and load > 0
    ends = dict(seen["resources"])  # type: ignore[arg-type]
    for o in objs:
        # port-less URLs as in the page: the resolver rule maps *.test:443 to caddy's port
        assert o["url"] in ends, f"{o['path']} was not fetched"
        assert 0 < ends[o["url"]] <= load, f"{o['path']} finished after the load event"
    kinds = {t: [o for o in objs if o["type"] == t] for t in ("image", "css", "js", "other",
                                                               "html")}
    images = seen["images"]
    assert isinstance(images, list) and len(images) == len(kinds["image"])
    assert all(complete and width > 0 for _, complete, width in images), "an image did not decode"
    assert sorted(seen["fonts"]) == sorted(  # type: ignore[type-var]
        [["pl-" + o["path"][:-4], "loaded"] for o in kinds["other"]])
    assert seen["scripts"] == len(kinds["js"])
    sheets = seen["sheets"]
    assert isinstance(sheets, list) and len(sheets) == len(kinds["css"]) + bool(kinds["other"])
    assert all(rules >= 2 for _, rules in sheets)
    frames = seen["frames"]
    assert isinstance(frames, list) and len(frames) == len(kinds["html"])
    assert all(text and text.startswith("html-") for _, text in frames)
