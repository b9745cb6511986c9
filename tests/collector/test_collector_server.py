"""The collector as a real HTTPS service on loopback (uvicorn, TLS from a test CA): accepted
bundles land once in the Parquet dataset and the catalog; every refusal writes nothing; the
token never reaches the log; 20 concurrent uploads; verify, status, revoke and delete."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from protolens.collector.dataset import dataset_files
from protolens.share.bundle import read_bundle
from scripts.devkit.collector import (
    Collector,
    bundle_bytes,
    cli,
    running_collector,
    small_store,
    upload_headers,
)
from tests.collector import tampered

CT = "application/x-tar"


def post(c: Collector, body: bytes, token: str | None, ctype: str = CT) -> httpx.Response:
    return httpx.post(c.url + "/v1/bundles", content=body, headers=upload_headers(token, body,
                                                                                   ctype),
                      verify=c.ctx(), timeout=60)


def catalog_rows(c: Collector) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{c.data / 'catalog.db'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT checksum, contributor FROM bundles ORDER BY 1").fetchall()
    finally:
        conn.close()


def nothing_written(c: Collector) -> None:
    assert dataset_files(c.data) == []
    assert catalog_rows(c) == []
    assert [p for p in (c.data / "tmp").rglob("*") if p.is_file()] == []  # the writer's own
    # folder holds no upload and no staged file either


def test_upload_stored_once_then_idempotent(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    checksum = read_bundle(tmp_path / "b.tar").checksum
    with running_collector(tmp_path) as c:
        token = c.token("vol-1")
        first = post(c, body, token)
        assert first.status_code == 201, first.text
        assert first.json()["status"] == "stored" and first.json()["checksum"] == checksum
        assert first.json()["rows"]["navigations"] == 6
        again = post(c, body, token)
        assert again.status_code == 200 and again.json()["status"] == "already stored"
        assert catalog_rows(c) == [(checksum, "vol-1")]
        files = dataset_files(c.data)
        assert len(files) == 4 and all(f"/{checksum}-" in f for f in files)
        assert {f.split("/")[0] for f in files} == {"table=navigations", "table=requests",
                                                    "table=connections", "table=hosts"}
        assert cli("collector", "verify", "--data", str(c.data)).returncode == 0
        status = json.loads(cli("collector", "status", "--data", str(c.data), "--json").stdout)
        assert status["bundles"] == 1 and status["navigations_rows"] == 6
        assert status["contributors"] == 1 and status["disk_bytes"] > 0
        log = c.log.read_text()
    assert token not in log and "stored bundle" in log
    assert "127.0.0.1" not in "".join(line for line in log.splitlines()
                                      if "protolens.collector" in line)
    dump = "\n".join(sqlite3.connect(c.data / "catalog.db").iterdump())
    assert token not in dump and "127.0.0.1" not in dump


def test_every_refusal_writes_nothing(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db")
    good = tmp_path / "good.tar"
    bundle_bytes(db, good)
    cases = {
        "checksum": tampered.corrupt_member(good, tmp_path / "c.tar"),
        "schema": tampered.rebuild(good, tmp_path / "v.tar", lambda t: None,
                                   lambda m: m.update(bundle_schema=99)),
        "path": tampered.rebuild(good, tmp_path / "p.tar", tampered.with_path),
        "ip": tampered.rebuild(good, tmp_path / "i.tar",
                               lambda t: tampered.set_column(t, "requests", "host",
                                                             "203.0.113.7")),
    }
    bomb = tmp_path / "bomb.tar"
    cases["bomb"] = tampered.rebuild(good, bomb, tampered.inflate_requests)
    read_bundle(bomb)  # valid: refused only for what it decodes to (~5 MB)
    assert len(cases["bomb"]) < 200_000
    with running_collector(tmp_path, "--max-bytes", "300000",
                           "--max-uncompressed", str(2 << 20)) as c:
        token = c.token("vol-1")
        c.token("gone")
        revoked = cli("collector", "token", "add", "vol-2", "--data", str(c.data)).stdout.strip()
        assert cli("collector", "token", "revoke", "vol-2", "--data", str(c.data)
                   ).returncode == 0
        body = good.read_bytes()
        expect = [(post(c, body, None), 401, "no token"),
                  (post(c, body, "plc_" + "x" * 43), 401, "unknown token"),
                  (post(c, body, revoked), 403, "revoked"),
                  (post(c, body, token, "application/json"), 415, "content type"),
                  (post(c, b"\0" * 400_000, token), 413, "size limit"),
                  (post(c, cases["checksum"], token), 422, "checksum"),
                  (post(c, cases["schema"], token), 422, "bundle schema 99"),
                  (post(c, cases["path"], token), 422, "not reduced to the origin"),
                  (post(c, cases["ip"], token), 422, "IP address"),
                  (post(c, cases["bomb"], token), 413, "decompression bomb"),
                  (post(c, b"not a tar at all", token), 422, "not a readable bundle")]
        for resp, status, words in expect:
            assert (resp.status_code, words in resp.json()["error"]) == (status, True), \
                resp.text
            nothing_written(c)
        assert post(c, body, token).status_code == 201  # the same server still accepts
        log = c.log.read_text()
    assert token not in log and revoked not in log


def test_rate_limit_429(tmp_path: Path) -> None:
    bodies = [bundle_bytes(small_store(tmp_path / f"s{i}.db", seed=i + 1), tmp_path / f"{i}.tar")
              for i in range(3)]
    with running_collector(tmp_path, "--rate", "1", "--burst", "2") as c:
        token = c.token("vol-1")
        codes = [post(c, b, token).status_code for b in bodies]
        assert codes == [201, 201, 429]
        last = post(c, bodies[2], token)
        assert last.status_code == 429 and int(last.headers["retry-after"]) >= 1
        assert len(catalog_rows(c)) == 2


def test_twenty_concurrent_uploads(tmp_path: Path) -> None:
    bodies = [bundle_bytes(small_store(tmp_path / f"s{i}.db", seed=i + 1), tmp_path / f"{i}.tar",
                           cid=f"{i:032x}") for i in range(20)]
    with running_collector(tmp_path, "--max-uploads", "20") as c:
        tokens = [c.token(f"vol-{i % 4}") for i in range(4)]
        with ThreadPoolExecutor(20) as pool:
            resps = list(pool.map(lambda i: post(c, bodies[i], tokens[i % 4]), range(20)))
        assert sorted(r.status_code for r in resps) == [201] * 20
        with ThreadPoolExecutor(20) as pool:
            again = list(pool.map(lambda i: post(c, bodies[i], tokens[i % 4]), range(20)))
        assert [r.status_code for r in again] == [200] * 20
        rows = catalog_rows(c)
        assert len(rows) == 20 == len({r.json()["checksum"] for r in resps})
        assert len(dataset_files(c.data)) == 80
        assert cli("collector", "verify", "--data", str(c.data)).returncode == 0
        # delete one contributor's bundles on request
        out = cli("collector", "delete", "--contributor", "vol-1", "--data", str(c.data))
        assert "deleted 5 bundles (20 files)" in out.stdout
        assert len(catalog_rows(c)) == 15 and len(dataset_files(c.data)) == 60
        assert all(r[1] != "vol-1" for r in catalog_rows(c))
        assert cli("collector", "verify", "--data", str(c.data)).returncode == 0


def test_verify_finds_changed_missing_and_stray_files(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path) as c:
        assert post(c, body, c.token("vol-1")).status_code == 201
    root = c.data / "dataset"
    files = sorted(root.rglob("*.parquet"))
    files[0].write_bytes(files[0].read_bytes()[:-1] + b"x")
    files[1].unlink()
    (root / "table=hosts" / "stray.parquet").write_bytes(b"x")
    res = cli("collector", "verify", "--data", str(c.data), check=False)
    assert res.returncode == 1
    assert "differs" in res.stdout and "missing" in res.stdout and "not in the catalog" in \
        res.stdout


def test_binds_loopback_by_default_and_cli_errors(tmp_path: Path) -> None:
    res = cli("collector", "status", "--data", str(tmp_path / "none"), check=False)
    assert res.returncode == 2 and res.stderr.startswith("error:") and "Traceback" not in \
        res.stderr
    assert not (tmp_path / "none").exists()
    res = cli("collector", "serve", "--data", str(tmp_path), "--listen", "nope", check=False)
    assert res.returncode == 2 and "HOST:PORT" in res.stderr
    res = cli("collector", "serve", "--data", str(tmp_path), "--listen", "0.0.0.0:8443",
              check=False)  # no certificate: never plain HTTP off loopback
    assert res.returncode == 2 and "plain HTTP only on loopback" in res.stderr
    res = cli("collector", "token", "add", "bad name", "--data", str(tmp_path), check=False)
    assert res.returncode == 2
    from protolens.cli.collector import serve_cmd
    listen = next(p for p in serve_cmd.params if p.name == "listen")
    assert listen.default == "127.0.0.1:8443"
    with running_collector(tmp_path) as c:
        port = c.url.rsplit(":", 1)[1]
        ss = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True,
                            text=True).stdout
        assert [line.split()[3] for line in ss.splitlines()] == [f"127.0.0.1:{port}"]


@pytest.mark.parametrize("scheme", ["http"])
def test_plain_http_client_cannot_talk_to_tls(tmp_path: Path, scheme: str) -> None:
    with running_collector(tmp_path) as c:
        with pytest.raises(httpx.TransportError):
            httpx.get(c.url.replace("https", scheme) + "/v1/health", timeout=5)
        with pytest.raises(httpx.TransportError):  # an untrusted certificate is refused
            httpx.get(c.url + "/v1/health", timeout=5)


def test_start_up_sweeps_what_a_crash_left(tmp_path: Path) -> None:
    body = bundle_bytes(small_store(tmp_path / "s.db"), tmp_path / "b.tar")
    with running_collector(tmp_path) as c:
        assert post(c, body, c.token("vol-1")).status_code == 201
    kept = dataset_files(c.data)
    orphan = c.data / "dataset" / "table=hosts" / "day=2025-11-24" / ("f" * 64 + ".parquet")
    orphan.parent.mkdir(parents=True)
    orphan.write_bytes(b"complete but never acknowledged")
    (c.data / "tmp" / ".part-x").write_bytes(b"half")
    assert cli("collector", "verify", "--data", str(c.data), check=False).returncode == 1
    c.start()
    try:
        live = [p for p in (c.data / "tmp").iterdir()]  # only the new process's own folder
        assert not orphan.exists() and len(live) == 1 and live[0].is_dir()
        assert [p for p in live[0].rglob("*") if p.is_file()] == []
        assert dataset_files(c.data) == kept
        assert cli("collector", "verify", "--data", str(c.data)).returncode == 0
    finally:
        c.stop()


def test_two_tokens_same_navigations(tmp_path: Path) -> None:
    """The same navigations under two tokens (the same bundle, and a re-export with the same
    ids): the second token is refused with 409 that names nobody; ``status`` counts the
    refusals and ``verify`` names them."""
    db = small_store(tmp_path / "s.db")
    body = bundle_bytes(db, tmp_path / "a.tar", cid="0a" * 16)
    again = bundle_bytes(db, tmp_path / "b.tar", cid="0b" * 16)  # same ids, other checksum
    with running_collector(tmp_path) as c:
        first, second = c.token("vol-1"), c.token("vol-2")
        assert post(c, body, first).status_code == 201
        for b in (body, again):
            r = post(c, b, second)
            assert r.status_code == 409 and "vol-1" not in r.text, r.text
            assert "6 of its navigations are stored already" in r.json()["error"]
        assert post(c, body, first).json()["status"] == "already stored"
        status = json.loads(cli("collector", "status", "--data", str(c.data), "--json").stdout)
        assert status["bundles"] == 1 and status["refused_duplicates"] == 2
        out = cli("collector", "verify", "--data", str(c.data)).stdout
        assert out.count("refused: bundle") == 2 and "from vol-2" in out and "by vol-1" in out
