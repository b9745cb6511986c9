"""The local test site: caddy serving scripts/devkit/www over HTTPS (h1, h2, h3), a.test and b.test.

Used by the fixture recorder (scripts/record-fixtures) and by the end-to-end tests. Chromium
reaches it with `--host-resolver-rules=MAP *.test 127.0.0.1` and
`--ignore-certificate-errors-spki-list=<site.spki>`; caddy binds 127.0.0.1 only.

    with serve_site(tmp_path) as site:
        site.url        # https://a.test:PORT/page/
        site.files      # {"/page/": 1130, "/page/img/01.png": 2403, ...} (URL path -> bytes)

Objects under /page/ are on a.test, under /frame/ on b.test. Everything is `no-store` except
/page/cache/* (max-age=3600), so a warm reload has cached responses. /old redirects to /page/.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import shutil
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from protolens.testbed.caddy import global_options

WWW = Path(__file__).resolve().parent / "www"
HOSTS = ("a.test", "b.test")
CADDYFILE = """{options}a.test:{port}, b.test:{port} {{
  bind 127.0.0.1
  tls {cert} {key}
  root * {www}/{{http.request.host}}
  redir /old /page/ 302
  @nostore not path /page/cache/*
  header @nostore Cache-Control "no-store"
  header /page/cache/* Cache-Control "max-age=3600"
  file_server
  log {{
    output file {log}
    format json
  }}
}}
"""


@dataclass(frozen=True)
class Site:
    hosts: tuple[str, ...]
    """Host names served (all map to 127.0.0.1 in Chromium via --host-resolver-rules)."""
    port: int
    """The one port, TCP (h1, h2) and UDP (h3)."""
    spki: str
    """base64 sha256 of the certificate's SubjectPublicKeyInfo."""
    access_log: Path
    """caddy's JSON access log, one object per request (protocol, client port, size)."""
    url: str
    """The test page on a.test."""
    files: dict[str, int]
    """URL path -> size in bytes of every object served (index.html as its directory URL)."""
    cert: Path
    """PEM certificate (for clients that verify instead of pinning)."""

    def origin(self, host: str = "a.test") -> str:
        return f"https://{host}:{self.port}"


def free_port() -> int:
    """A port free for both TCP and UDP on 127.0.0.1 (h3 runs on the UDP twin)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
            t.bind(("127.0.0.1", 0))
            port = int(t.getsockname()[1])
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                try:
                    u.bind(("127.0.0.1", port))
                except OSError:
                    continue
                return port
    raise RuntimeError("no free TCP+UDP port on 127.0.0.1")


def make_cert(dest: Path, hosts: Sequence[str] = HOSTS) -> tuple[Path, Path, str]:
    """A self-signed certificate for ``hosts`` in ``dest``: (cert path, key path, SPKI hash for
    ``--ignore-certificate-errors-spki-list``)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ProtoLens test site")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = dest / "cert.pem", dest / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    spki_der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return (
        cert_path,
        key_path,
        base64.b64encode(hashlib.sha256(spki_der).digest()).decode(),
    )


def _copy_www(dest: Path, port: int) -> dict[str, int]:
    shutil.copytree(WWW, dest, ignore=shutil.ignore_patterns("*.tmpl"))
    page = (WWW / "a.test/page/index.html.tmpl").read_text().replace("{PORT}", str(port))
    (dest / "a.test/page/index.html").write_text(page)
    files: dict[str, int] = {}
    for host in HOSTS:
        for path in sorted((dest / host).rglob("*")):
            if path.is_file():
                url = "/" + path.relative_to(dest / host).as_posix()
                if url.endswith("/index.html"):
                    url = url[: -len("index.html")]
                files[url] = path.stat().st_size
    return files


def _wait_ready(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float,
                sni: str = "a.test") -> None:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"caddy exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with (
                socket.create_connection(("127.0.0.1", port), timeout=1) as raw,
                ctx.wrap_socket(raw, server_hostname=sni),
            ):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"caddy did not answer on port {port} within {timeout} s")


@contextmanager
def run_caddy(caddyfile: Path, port: int, home: Path, log: Path, sni: str = "a.test",
              timeout: float = 15) -> Iterator[subprocess.Popen[bytes]]:
    """caddy on ``caddyfile`` with HOME and XDG dirs under ``home``, logging to ``log``; yields
    once a TLS handshake for ``sni`` on ``port`` succeeds; stops it on exit."""
    env = dict(os.environ)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"))
    with log.open("wb") as out:
        proc = subprocess.Popen(["caddy", "run", "--config", str(caddyfile), "--adapter",
                                 "caddyfile"], env=env, stdout=out, stderr=out,
                                cwd=caddyfile.parent)
    try:
        _wait_ready(port, proc, log, timeout, sni)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def serve_site(workdir: Path, port: int | None = None) -> Iterator[Site]:
    """Run caddy for the test site in `workdir` (created if needed); stop it on exit."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = port if port is not None else free_port()
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    www = workdir / "www"
    if www.exists():
        shutil.rmtree(www)
    files = _copy_www(www, port)
    cert, key, spki = make_cert(workdir)
    access_log = workdir / "access.log"
    access_log.touch()
    caddyfile = workdir / "Caddyfile"
    caddyfile.write_text(CADDYFILE.format(options=global_options(), port=port, cert=cert,
                                          key=key, www=www, log=access_log))
    with run_caddy(caddyfile, port, home, workdir / "caddy.stderr"):
        yield Site(
            hosts=HOSTS,
            port=port,
            spki=spki,
            access_log=access_log,
            url=f"https://a.test:{port}/page/",
            files=files,
            cert=cert,
        )


if __name__ == "__main__":  # manual use: serve until Ctrl-C
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as d, serve_site(Path(d)) as s:
        print(s.url, s.spki, s.access_log, sep="\n", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            sys.exit(0)
