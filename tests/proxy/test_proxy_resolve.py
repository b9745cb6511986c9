"""The lab proxy on real sites (``proxy/server.py`` ``_hosts_for``): with ``resolve`` a host
outside the lab map is served at its first usable address, an address the relay must not reach
(loopback) stays out and ``decide`` refuses it; without ``resolve`` nothing is added. Name
resolution is the system's (getaddrinfo), for ``localhost`` and numeric hosts only: no test
sends a query off the machine."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import pytest

from protolens.certs import ensure_ca
from protolens.proxy.core import Refuse, Tunnel, decide
from protolens.proxy.server import Config, _hosts_for


def config(tmp_path: Path, resolve: bool) -> Config:
    ca = ensure_ca(tmp_path, datetime.datetime.now(datetime.UTC))
    return Config(token="t", hosts={"a.test": "10.0.0.1"}, ca=ca, upstream_ca=None,
                  resolve=resolve)


@pytest.mark.parametrize(("target", "served"), [
    ("198.18.6.2:443", "198.18.6.2"),
    ("127.0.0.1:443", None),
    ("localhost:443", None),
    ("a.test:443", "10.0.0.1"),
])
def test_resolve_serves_usable_addresses_only(tmp_path: Path, target: str,
                                              served: str | None) -> None:
    hosts = asyncio.run(_hosts_for(config(tmp_path, True), target))
    d = decide(target, authorized=True, hosts=hosts, rules=[])
    if served is None:
        assert isinstance(d, Refuse) and d.status == 403
    else:
        assert isinstance(d, Tunnel) and d.ip == served


def test_without_resolve_only_the_map_is_served(tmp_path: Path) -> None:
    cfg = config(tmp_path, False)
    assert asyncio.run(_hosts_for(cfg, "198.18.6.2:443")) == cfg.hosts
