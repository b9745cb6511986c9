"""A stand-in internet for the wan path's tests and benchmark: a network namespace reached only
through the wan network's NAT, holding a name server for public-looking names (the RFC 2606
``example`` domains, so no real site is named) and caddy serving them over h1, h2 and h3 with a
stand-in CA. Nothing here sends a packet off the machine: the wan network is brought up with
the stand-in's veth as its uplink, and its FORWARD rules drop anything else.

    with standin_internet(tmp_path) as net:
        net.uplink       # the root end of the veth: pass as --uplink
        net.resolver     # the name server: pass as --resolver
        net.ca           # the stand-in CA: pass as --ca
        net.url          # https://www.example.com/page/
        net.access_log   # caddy's JSON log: protocol and client port of every request
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from protolens.certs import _pem, _write_key, make_ca, make_leaf, new_key
from protolens.pages.content import png
from protolens.testbed.caddy import global_options
from scripts.devkit.caddylog import read_entries

NS, HOST_IF, NS_IF = "plinet", "plinet-h", "plinet-n"
HOST_IP, RESOLVER = "198.18.6.1", "198.18.6.53"
HOSTS = {"www.example.com": "198.18.6.2", "img.example.net": "198.18.6.3"}
"""Public-looking names (RFC 2606 reserves the example domains) and their stand-in addresses."""
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>stand-in</title></head><body><h1>stand-in page</h1>
{imgs}
</body></html>
"""
IMAGES = 6
"""Images per page, alternating the two hosts: both carry requests under every arm."""


@dataclass(frozen=True)
class Standin:
    uplink: str
    resolver: str
    ca: Path
    access_log: Path
    root: Path

    @property
    def url(self) -> str:
        return "https://www.example.com/page/"

    def log_entries(self) -> list[dict[str, object]]:
        """caddy's access log so far, one dict per request."""
        if not self.access_log.exists():
            return []
        return read_entries(self.access_log)


def sh(*argv: str, check: bool = True) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=check).stdout


def in_ns(*argv: str) -> list[str]:
    return ["ip", "netns", "exec", NS, *argv]


def _site(root: Path) -> None:
    """The page (on www.example.com, its images on both hosts) and a 2 MB object for rate
    checks, as files under root/www/<host>/."""
    for host in HOSTS:
        (root / "www" / host / "page").mkdir(parents=True, exist_ok=True)
    imgs = []
    for i in range(IMAGES):
        host = list(HOSTS)[i % 2]
        # valid images: Chromium stops reading an image it cannot decode, and the record then
        # says the load was cut short ("stopped")
        (root / "www" / host / "page" / f"{i}.png").write_bytes(png(30_000, f"standin-{i}"))
        imgs.append(f'<img src="https://{host}/page/{i}.png" alt="">')
    (root / "www" / "www.example.com" / "page" / "index.html").write_text(
        PAGE.format(imgs="\n".join(imgs)))
    (root / "www" / "www.example.com" / "big.bin").write_bytes(bytes(range(256)) * 8192)


def _certs(root: Path, hosts: Mapping[str, str]) -> tuple[Path, Path, Path]:
    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = new_key(), new_key()
    ca = make_ca("ProtoLens stand-in internet CA", ca_key, now)
    leaf = make_leaf(list(hosts), key, ca, ca_key, now, 7)
    cert, keyf, ca_p = root / "cert.pem", root / "key.pem", root / "ca.pem"
    cert.write_bytes(_pem(leaf, ca))
    _write_key(keyf, key)
    ca_p.write_bytes(_pem(ca))
    return cert, keyf, ca_p


def _caddyfile(hosts: Mapping[str, str], www: str, cert: Path, key: Path, log: Path) -> str:
    names = ", ".join(f"{h}:443" for h in hosts)
    return global_options() + f"""
{names} {{
	tls {cert} {key}
	root * {www}
	header Cache-Control "no-store"
	file_server
	log {{
		output file {log}
		format json
	}}
}}
"""


def down() -> None:
    sh("ip", "netns", "del", NS, check=False)
    sh("ip", "link", "del", HOST_IF, check=False)


@contextmanager
def standin_internet(root: Path, hosts: Mapping[str, str] = HOSTS,
                     site: Path | None = None) -> Iterator[Standin]:
    """The stand-in namespace with its name server and caddy; removed on exit. By default the
    stand-in page on ``HOSTS``; with ``site``, that directory served on every one of ``hosts``
    (a testbed corpus, as the testbed's caddy serves it: the same page on both paths)."""
    down()
    root.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        sh("ip", "netns", "add", NS)
        sh("ip", "link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF, "netns", NS)
        sh("ip", "addr", "add", f"{HOST_IP}/24", "dev", HOST_IF)
        sh("ethtool", "-K", HOST_IF, "tso", "off", "gso", "off", "gro", "off")
        sh("ip", "link", "set", HOST_IF, "up")
        for ip in (*dict.fromkeys(hosts.values()), RESOLVER):
            sh(*in_ns("ip", "addr", "add", f"{ip}/24", "dev", NS_IF))
        for argv in (["ip", "link", "set", NS_IF, "up"], ["ip", "link", "set", "lo", "up"],
                     ["ethtool", "-K", NS_IF, "tso", "off", "gso", "off", "gro", "off"],
                     ["ip", "route", "add", "default", "via", HOST_IP]):
            sh(*in_ns(*argv))
        if site is None:
            _site(root)
        cert, key, ca = _certs(root, hosts)
        log = root / "access.log"
        www = str(site) if site is not None else f"{root}/www/{{http.request.host}}"
        (root / "Caddyfile").write_text(_caddyfile(hosts, www, cert, key, log))
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": str(root),
               "XDG_CONFIG_HOME": str(root / "cfg"), "XDG_DATA_HOME": str(root / "data")}
        dns = subprocess.Popen(in_ns(sys.executable, str(Path(__file__).with_name(
            "standin_dns.py")), RESOLVER, json.dumps(dict(hosts))), stdout=subprocess.PIPE)
        procs.append(dns)
        assert dns.stdout is not None and dns.stdout.readline().strip() == b"ready"
        procs.append(subprocess.Popen(in_ns("caddy", "run", "--config", str(root / "Caddyfile"),
                                            "--adapter", "caddyfile"), env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_listening()
        yield Standin(HOST_IF, RESOLVER, ca, log, root)
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        down()


def _wait_listening() -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        kinds = {line.split()[0] for line in sh(*in_ns("ss", "-Hlntu", "sport", "=", ":443"))
                 .splitlines() if line.strip()}
        if {"tcp", "udp"} <= kinds:
            return
        time.sleep(0.05)
    raise RuntimeError("stand-in caddy did not listen on 443 (tcp and udp) within 15 s")
