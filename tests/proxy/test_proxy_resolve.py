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


def test_an_every_host_arm_covers_hosts_no_rule_names() -> None:
    from protolens.policy.file import from_stored
    from protolens.proxy.core import Intercept, with_every_host

    rules = from_stored([{"domain": "img.example.net", "arm": "h1"}])
    hosts = {"www.example.com": "198.18.6.2", "img.example.net": "198.18.6.3",
             "198.18.6.4": "198.18.6.4"}

    def arm_of(target: str, every: str | None) -> str | None:
        d = decide(target, authorized=True, hosts=hosts,
                   rules=with_every_host(rules, target, every))
        return str(d.arm) if isinstance(d, Intercept) else None

    assert arm_of("www.example.com:443", "h2-parallel:2") == "h2-parallel:2"
    assert arm_of("img.example.net:443", "h2-parallel:2") == "h1"  # a rule names it: it wins
    assert arm_of("www.example.com:443", None) is None  # tunnelled
    assert arm_of("198.18.6.4:443", "h2-parallel:2") is None  # no rule can name an address


def test_real_sites_configure_an_every_host_arm_and_record_it_per_host() -> None:
    from protolens.arms import parse_lab_arm
    from protolens.lab.proxied import applied, every_host_rules, load_rules

    arm = parse_lab_arm("h2-parallel:2")
    assert load_rules(arm, ["www.example.com"], (), real_sites=True) == ([], "h2-parallel:2")
    assert load_rules(arm, ["a.test"], (), real_sites=False) == (
        [{"domain": "a.test", "arm": "h2-parallel:2"}], None)
    policy = [{"domain": "img.example.net", "arm": "h1"}]
    assert load_rules(parse_lab_arm("policy"), ["x.example"], policy, True) == (policy, None)
    hosts = ["www.example.com", "img.example.net", "198.18.6.4"]
    got = applied(arm, hosts, every_host_rules(hosts, "h2-parallel:2"))
    assert {h: e.mechanism for h, e in got.items()} == {
        "www.example.com": "proxy", "img.example.net": "proxy", "198.18.6.4": "proxy-tunnel"}
