"""Helpers for the collector tests: a throwaway CA and server certificate (``cryptography``), a
real ``protolens collector serve`` subprocess on loopback with TLS, and bundles exported from
small real stores."""

from __future__ import annotations

import datetime
import ipaddress
import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from protolens.collector.client import manifest_of
from protolens.collector.tags import HEADER, tag, tag_key
from protolens.share import export
from protolens.store import open_ro
from protolens.store.collector import add_token, open_catalog
from scripts.devkit.store_builder import ingest_all, lab_record

NOW = 1_763_950_000_000.0


def make_ca_and_cert(out: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, cert.pem, key.pem): a CA and a certificate for 127.0.0.1 and localhost."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "protolens test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = out / "ca.pem", out / "cert.pem", out / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(*args: str, env: dict[str, str] | None = None, check: bool = True,
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "protolens.cli", *args], text=True,
                          capture_output=True, check=check, timeout=300,
                          env={**os.environ, **(env or {})})


@dataclass
class Collector:
    data: Path
    url: str
    ca: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    args: tuple[str, ...] = ()

    def start(self) -> None:
        port = self.url.rsplit(":", 1)[1]
        cert, key = self.ca.parent / "cert.pem", self.ca.parent / "key.pem"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "protolens.cli", "collector", "serve", "--data",
                 str(self.data), "--listen", f"127.0.0.1:{port}", "--tls-cert", str(cert),
                 "--tls-key", str(key), *self.args], stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url + "/v1/health", verify=self.ctx(), timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"collector did not start: {self.log.read_text()}")

    def ctx(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def workers(self) -> list[int]:
        """The worker processes of a ``--workers N`` collector (uvicorn's spawned children)."""
        assert self.proc is not None
        pid = self.proc.pid
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return []
        out = []
        for kid in kids:
            try:
                cmd = Path(f"/proc/{kid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in cmd and b"resource_tracker" not in cmd:
                out.append(int(kid))
        return out

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def token(self, name: str) -> str:
        return cli("collector", "token", "add", name, "--data", str(self.data)).stdout.strip()


@contextmanager
def running_collector(tmp: Path, *args: str) -> Iterator[Collector]:
    ca, _, _ = make_ca_and_cert(tmp)
    c = Collector(tmp / "collector", f"https://127.0.0.1:{free_port()}", ca,
                  tmp / "collector.log", args=args)
    c.data.mkdir()
    c.start()
    try:
        yield c
    finally:
        c.stop()


def catalog_with_volunteers(path: Path, now_ms: float = 0.0) -> sqlite3.Connection:
    """A collector catalog at ``path`` with the tokens ``vol-1`` and ``vol-2`` (secret: the name
    16 times); the caller closes the connection."""
    conn = open_catalog(path, now_ms)
    for name in ("vol-1", "vol-2"):
        add_token(conn, name, name * 16, 0.0)
    return conn


def small_store(db: Path, seed: int = 1, n: int = 6) -> Path:
    recs = [lab_record(seed * 1000 + i, "camp", "p", "c", "h2" if i % 2 else "h3", i,
                       1000.0 + 10 * i, n_requests=4, source="experiment") for i in range(n)]
    ingest_all(db, recs)
    return db


def bundle_bytes(db: Path, out: Path, cid: str = "ab" * 16) -> bytes:
    conn = open_ro(db)
    try:
        built = export.build(conn, allow=frozenset(), since_ms=None, now_ms=NOW,
                             contributor_id=cid)
    finally:
        conn.close()
    export.write(built, out, NOW)
    return out.read_bytes()


def upload_headers(token: str | None, body: bytes, ctype: str = "application/x-tar"
                   ) -> dict[str, str]:
    """What ``contribute`` sends with ``body``: the token and the bundle's tag."""
    headers = {"Content-Type": ctype}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
        manifest = manifest_of(body)
        if manifest is not None:
            headers[HEADER] = tag(tag_key(token), manifest)
    return headers
