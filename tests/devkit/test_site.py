"""scripts/devkit/site.py: caddy serves the page over h1 and h2, logs each request, stops."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import time
from pathlib import Path

import httpx
import pytest

from scripts.devkit.caddylog import read_entries
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.skipif(shutil.which("caddy") is None, reason="needs caddy")


def _get(client: httpx.Client, port: int, host: str, path: str) -> httpx.Response:
    """GET https://host:port/path, connecting to 127.0.0.1 (what Chromium's resolver rule does)."""
    return client.get(
        f"https://127.0.0.1:{port}{path}",
        headers={"Host": f"{host}:{port}"},
        extensions={"sni_hostname": host},
    )


def _log_entries(log: Path, want: int) -> list[dict[str, object]]:
    deadline = time.monotonic() + 5
    entries: list[dict[str, object]] = []
    while time.monotonic() < deadline:
        entries = read_entries(log)
        if len(entries) >= want:
            break
        time.sleep(0.05)
    return entries


@pytest.mark.parametrize(
    ("http2", "client_proto", "proto"),
    [(False, "HTTP/1.1", "HTTP/1.1"), (True, "HTTP/2", "HTTP/2.0")],
)
def test_page_objects_and_access_log(
    tmp_path: Path, http2: bool, client_proto: str, proto: str
) -> None:
    with serve_site(tmp_path) as site:
        assert site.url == f"https://a.test:{site.port}/page/"
        a_paths = [p for p in site.files if p.startswith("/page/") and p != "/page/"]
        assert len(a_paths) >= 20
        with httpx.Client(
            http1=not http2,
            http2=http2,
            verify=ssl.create_default_context(cafile=site.cert),
        ) as client:
            page = _get(client, site.port, "a.test", "/page/")
            assert page.status_code == 200
            assert page.http_version == client_proto
            # the iframe names b.test on this very port
            assert f"https://b.test:{site.port}/frame/" in page.text
            assert len(page.content) == site.files["/page/"]
            assert page.headers["cache-control"] == "no-store"
            img = _get(client, site.port, "a.test", "/page/img/11.png")
            assert img.content[:8] == b"\x89PNG\r\n\x1a\n"
            assert len(img.content) == site.files["/page/img/11.png"]
            cached = _get(client, site.port, "a.test", "/page/cache/c1.png")
            assert cached.headers["cache-control"] == "max-age=3600"
            frame = _get(client, site.port, "b.test", "/frame/")
            assert "cross-site frame" in frame.text
            old = _get(client, site.port, "a.test", "/old")
            assert old.status_code == 302 and old.headers["location"] == "/page/"
        entries = _log_entries(site.access_log, 5)
    requests: list[dict[str, str]] = [e["request"] for e in entries]  # type: ignore[misc]
    assert [r["proto"] for r in requests] == [proto] * 5
    hosts = [r["host"] for r in requests]
    assert hosts[-2:] == [f"b.test:{site.port}", f"a.test:{site.port}"]
    sizes = [e["size"] for e in entries]
    assert sizes[:2] == [site.files["/page/"], site.files["/page/img/11.png"]]
    ports = {r["remote_port"] for r in requests}
    assert len(ports) == 1  # one client connection: keep-alive (h1) / multiplexed (h2)


def test_stops_on_exit_and_port_is_reusable(tmp_path: Path) -> None:
    with serve_site(tmp_path / "one") as site:
        port = site.port
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # raises if caddy still holds it
    with serve_site(tmp_path / "two", port=port) as again:
        assert again.port == port


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with (
            pytest.raises(RuntimeError, match="caddy exited"),
            serve_site(tmp_path, port=busy.getsockname()[1]),
        ):
            pass


def test_a_log_line_still_being_written_is_read_once_whole(tmp_path: Path) -> None:
    """read_hits and read_entries (every devkit and test reader of caddy's log) poll it while
    caddy writes it: a half-written last line (here the real line, cut in two) is left for the next
    read, not parsed and not a crash."""
    from scripts.devkit.caddylog import read_hits

    with serve_site(tmp_path / "site") as site, \
            httpx.Client(verify=ssl.create_default_context(cafile=site.cert)) as client:
        assert _get(client, site.port, "a.test", "/page/").status_code == 200
        (line,) = _log_entries(site.access_log, 1)
    whole = json.dumps(line).encode() + b"\n"
    log = tmp_path / "access.log"
    log.write_bytes(whole + whole[:len(whole) // 2])
    assert [h.uri for h in read_hits(log)] == ["/page/"]
    assert read_entries(log) == [line]
    with log.open("ab") as f:
        f.write(whole[len(whole) // 2:])
    assert [h.uri for h in read_hits(log)] == ["/page/", "/page/"]
    assert read_entries(log) == [line, line]
    assert [h.uri for h in read_hits(log, len(whole))] == ["/page/"]
