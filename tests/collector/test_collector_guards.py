"""The collector's guards, through the real server (TLS on loopback): bundle tags must verify
(and ``verify`` re-checks them); past ``--max-uploads`` an upload gets 503 with Retry-After while
health checks go on; failed authentication is limited per source with one log line per burst;
a header that trickles in is cut at ``--header-timeout``; past ``--max-connections`` the oldest
idle connection makes room; a body that stalls gets 408."""

from __future__ import annotations

import json
import socket
import sqlite3
import ssl
import time
from pathlib import Path

import httpx

from protolens.collector.tags import HEADER, tag, tag_key
from protolens.collector.tokens import make_token, token_hash
from protolens.store.collector import add_token, open_catalog
from scripts.devkit.collector import (
    Collector,
    bundle_bytes,
    cli,
    running_collector,
    small_store,
    upload_headers,
)


def post(c: Collector, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(c.url + "/v1/bundles", content=body, headers=headers, verify=c.ctx(),
                      timeout=60)


def tls(c: Collector) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", int(c.url.rsplit(":", 1)[1])), timeout=10)
    return c.ctx().wrap_socket(raw, server_hostname="127.0.0.1")


def read_reply(s: ssl.SSLSocket) -> str:
    """One response: the header, then as many body bytes as Content-Length says."""
    s.settimeout(15)
    data = b""
    while b"\r\n\r\n" not in data and (chunk := s.recv(4096)):
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(rest) < length and (chunk := s.recv(4096)):
        rest += chunk
    return (head + b"\r\n\r\n" + rest).decode()


def closed_within(s: ssl.SSLSocket, seconds: float) -> bool:
    s.settimeout(seconds)
    try:
        return s.recv(1) == b""
    except TimeoutError:
        return False
    except (ConnectionError, ssl.SSLError):
        return True


def test_bundle_tags(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path) as c:
        token, other = c.token("vol-1"), c.token("vol-2")
        untagged = upload_headers(token, body)
        del untagged[HEADER]
        forged = {**untagged, HEADER: upload_headers(other, body)[HEADER]}  # another key
        for headers in (untagged, forged):
            r = post(c, body, headers)
            assert r.status_code == 401 and "tag does not verify" in r.json()["error"]
        old = make_token(bytes(range(32)))  # a token from before tags: no key in the catalog
        conn = open_catalog(c.data / "catalog.db", time.time() * 1000)
        add_token(conn, "vol-old", token_hash(old), 0.0)
        conn.close()
        r = post(c, body, upload_headers(old, body))
        assert r.status_code == 401 and "issued before bundle tags" in r.json()["error"]
        assert post(c, body, upload_headers(token, body)).status_code == 201
    assert cli("collector", "verify", "--data", str(c.data)).returncode == 0
    db = sqlite3.connect(c.data / "catalog.db")
    db.execute("UPDATE bundles SET tag = ?", (tag(tag_key(other), b"another manifest"),))
    db.commit()
    db.close()
    res = cli("collector", "verify", "--data", str(c.data), check=False)
    assert res.returncode == 1 and "tag does not verify under vol-1's key" in res.stdout


def test_upload_cap_503_and_health(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path, "--max-uploads", "1") as c:
        token = c.token("vol-1")
        slow = tls(c)  # holds the only upload place: header and half the body sent
        head = "".join(f"{k}: {v}\r\n" for k, v in upload_headers(token, body).items())
        slow.sendall(f"POST /v1/bundles HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                     f"{head}\r\n".encode() + body[:len(body) // 2])
        time.sleep(2)  # its token looked up and its place taken (milliseconds, even under load)
        busy = post(c, body, upload_headers(token, body))
        assert busy.status_code == 503 and busy.headers["retry-after"] == "5"
        assert httpx.get(c.url + "/v1/health", verify=c.ctx(), timeout=5).status_code == 200
        slow.sendall(body[len(body) // 2:])
        reply = read_reply(slow)
        assert reply.startswith("HTTP/1.1 201"), reply
        slow.close()


def test_failed_authentication_is_limited_with_a_line_per_burst(tmp_path: Path) -> None:
    body = b"x"
    with running_collector(tmp_path) as c:
        guess = {"Content-Type": "application/x-tar"}
        codes = []
        for i in range(30):
            guess["Authorization"] = f"Bearer plc_{i:043d}"
            codes.append(post(c, body, guess).status_code)
        assert codes[:20] == [401] * 20 and set(codes[20:]) == {429}, codes
        last = post(c, body, guess)
        assert int(last.headers["retry-after"]) >= 1
        log = c.log.read_text()
    assert log.count("failed authentication over the limit") == 1
    assert "unknown token" not in log  # no line per try


def test_slow_header_is_cut(tmp_path: Path) -> None:
    with running_collector(tmp_path, "--header-timeout", "1") as c:
        s = tls(c)
        start = time.monotonic()
        closed = False
        for ch in b"POST /v1/bundles HTTP/1.1\r\nHost: x\r\n":  # one byte every 0.2 s
            try:
                s.sendall(bytes([ch]))
            except (ConnectionError, ssl.SSLError):
                closed = True
                break
            if closed_within(s, 0.2):
                closed = True
                break
        assert closed and time.monotonic() - start < 5
        assert httpx.get(c.url + "/v1/health", verify=c.ctx(), timeout=5).status_code == 200


def test_connection_cap_makes_room_for_health(tmp_path: Path) -> None:
    with running_collector(tmp_path, "--max-connections", "16") as c:
        idle = [tls(c) for _ in range(40)]
        time.sleep(0.5)
        r = httpx.get(c.url + "/v1/health", verify=c.ctx(), timeout=5)
        assert r.status_code == 200 and r.json() == {"ok": True}
        gone = sum(closed_within(s, 0.05) for s in idle)
        assert gone >= 40 + 1 - 16, gone  # the oldest made room, the newest stayed
        assert not closed_within(idle[-1], 0.05)
        for s in idle:
            s.close()


def test_stalled_body_408(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path, "--body-timeout", "1") as c:
        token = c.token("vol-1")
        s = tls(c)
        head = "".join(f"{k}: {v}\r\n" for k, v in upload_headers(token, body).items())
        s.sendall(f"POST /v1/bundles HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
                  f"{head}\r\n".encode() + body[:100])
        reply = read_reply(s)
        assert reply.startswith("HTTP/1.1 408") and "stalled" in reply
        status = json.loads(cli("collector", "status", "--data", str(c.data), "--json").stdout)
        assert status["bundles"] == 0
