"""End to end: ``protolens lab run --save-log`` in real Chromium with the built extension, the
host and SQLite; the log the extension's tap stored beside the load's record replays (the real
node script, ``protolens replay --navigation``) to the same record as the one stored.

The page is served over plain HTTP on loopback (``lab run --urls``, no testbed): 12 images, a
``console.log`` and an uncaught exception while it loads (their wall-clock timestamps once ended
records early), and a fetch after its load event. One load, about 10 s with the lock held.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import asdict
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from protolens.cli.output import rounded
from protolens.record import parse_record
from protolens.store import open_ro
from protolens.store.records import load_record
from scripts.devkit.harness import require_dist

pytestmark = pytest.mark.e2e

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6300010000050001a5f645400000000049454e44ae426082")
PAGE = """<!doctype html><html><head><title>tap</title>
<script>console.log("loading");
setTimeout(() => { throw new Error("thrown while loading"); }, 0);</script>
</head><body>%s
<script>addEventListener("load", () => setTimeout(() => fetch("after.json"), 100));</script>
</body></html>"""


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    for i in range(12):
        (root / f"{i}.png").write_bytes(PNG)
    (root / "after.json").write_text("{}")
    (root / "index.html").write_text(PAGE % "".join(f'<img src="{i}.png">' for i in range(12)))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()


def cli(db: Path, *args: str, check: bool = True,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "protolens.cli", *args], text=True,
                          capture_output=True, check=check, timeout=300, cwd=cwd,
                          env={**os.environ, "PROTOLENS_DB": str(db)})


def test_a_saved_log_replays_to_the_stored_record(site: str, tmp_path: Path) -> None:
    require_dist()
    urls = tmp_path / "urls.txt"
    urls.write_text(site + "\n")
    db = tmp_path / "lab.db"
    cli(db, "lab", "run", "--urls", str(urls), "--arms", "h1", "--conditions", "none",
        "--reps", "1", "--campaign", "tap", "--save-log", "--db", str(db))
    conn = open_ro(db)
    ids = [r[0] for r in conn.execute("SELECT id FROM navigations WHERE campaign = 'tap'")]
    assert len(ids) == 1
    logs = conn.execute("SELECT navigation_id, length(log), options "
                        "FROM navigation_logs").fetchall()
    assert [r[0] for r in logs] == ids and logs[0][1] > 1000
    assert json.loads(logs[0][2])["source"] == "lab"
    stored = load_record(conn, ids[0])
    conn.close()
    assert len(stored.requests) >= 14  # the page, 12 images, the fetch after load
    assert stored.milestones.load_ms is not None
    (replayed,) = json.loads(cli(db, "replay", "--navigation", ids[0], "--json").stdout)
    # the host stamps the campaign's tags onto the stored record: the rest is the recorder's
    assert replayed["context"] == {} and stored.context["campaign"] == "tap"
    again = parse_record(replayed)
    # `replay --json` prints floats as every --json does (cli/output.py rounded: ms to the
    # microsecond, shares to 12 significant digits); the store keeps them whole
    def same(part: str) -> bool:
        return bool(rounded(asdict(again)[part]) == rounded(asdict(stored)[part]))
    assert same("requests") and same("connections") and same("hosts") and same("milestones")
    assert same("page") and again.id == stored.id and again.source == stored.source


def test_without_save_log_no_log_is_kept(site: str, tmp_path: Path) -> None:
    """Also a relative ``--db``, as a user types it: the host runs in Chromium's profile folder
    and once stored the record there, so the load timed out and the record was lost."""
    urls = tmp_path / "urls.txt"
    urls.write_text(site + "\n")
    db = tmp_path / "lab.db"
    cli(db, "lab", "run", "--urls", "urls.txt", "--arms", "h1", "--conditions", "none",
        "--reps", "1", "--campaign", "plain", "--no-visual", "--db", "lab.db", "--timeout", "30",
        cwd=tmp_path)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM navigations").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM navigation_logs").fetchone() == (0,)
    done = cli(db, "replay", "--navigation",
               conn.execute("SELECT id FROM navigations").fetchone()[0], check=False)
    assert done.returncode == 2 and "has no stored log" in done.stderr
