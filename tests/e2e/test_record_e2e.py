"""End to end: real Chromium + the built extension + the host + SQLite, checked against caddy.

Three cold loads of the test site (scripts/devkit/site.py: a.test page with 23 objects, /old ->
/page/ redirect, cross-site iframe on b.test) under h1, h2 and h3 (QUIC forced for a.test only).
The record in the store must agree with caddy's access log, an independent witness of each
request's protocol and client port, and with the page's own loadEventEnd (reported to caddy by
the page). The loads are lab loads (scripts/devkit/harness.py): their records end after the test
site's network quiet (harness.py SITE_QUIET_MS), which must still take in the page's request 300
ms after load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from scripts.devkit.caddylog import Hit, read_hits
from scripts.devkit.harness import Load, load_page, stored_ids
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.e2e

ARMS = ("h1", "h2", "h3")


def family(raw: str) -> str:
    raw = raw.lower()
    if raw.startswith("http/1"):
        return "h1"
    if raw == "h2":
        return "h2"
    return "h3"


def cli(db: Path, *args: str) -> Any:
    out = subprocess.run([sys.executable, "-m", "protolens.cli", *args, "--json"],
                         env={**os.environ, "PROTOLENS_DB": str(db)},
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def loads(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path, dict[str, Load]]]:
    work = tmp_path_factory.mktemp("e2e")
    db = work / "store.db"
    with serve_site(work / "site") as site:
        done: dict[str, Load] = {}
        for arm in ARMS:
            done[arm] = load_page(arm=arm, url=site.origin() + "/old", site=site, db=db,
                                  scratch=work / arm, quic_hosts=["a.test"])
        yield site, db, done


def navigation(db: Path, load: Load) -> dict[str, Any]:
    assert load.result.ok, f"{load.arm}: {load.result.reason}; see {load.result.log}"
    nav_id = next(n["id"] for n in cli(db, "navigations", "--last", "50")
                  if n["id"] in _ids(db, load))
    return dict(cli(db, "show", nav_id), _summary=next(
        n for n in cli(db, "navigations", "--last", "50") if n["id"] == nav_id))


def _ids(db: Path, load: Load) -> list[str]:
    return stored_ids(db, load.load_id)


def hits_for(site: Any, loads: dict[str, Load], arm: str) -> list[Hit]:
    """caddy's log lines written during this arm's load (loads run one after another)."""
    later = [ld.log_offset for ld in loads.values() if ld.log_offset > loads[arm].log_offset]
    return read_hits(site.access_log, loads[arm].log_offset, min(later, default=None))


@pytest.mark.parametrize("arm", ARMS)
def test_each_request_protocol_matches_caddy(loads: Any, arm: str) -> None:
    site, db, done = loads
    nav = navigation(db, done[arm])
    hits = {(h.host, h.uri): h for h in hits_for(site, done, arm)}
    network = [r for r in nav["requests"] if r.get("protocol")
               and urlsplit(r["url"]).hostname in ("a.test", "b.test")]
    assert len(network) >= 25, f"only {len(network)} network requests recorded"
    matched = 0
    for req in network:
        parts = urlsplit(req["url"])
        key = (parts.hostname, parts.path + (f"?{parts.query}" if parts.query else ""))
        hit = hits.get(key)
        assert hit is not None, f"{key} recorded but not in caddy's log"
        assert family(req["protocol"]) == hit.family, key
        matched += 1
    assert matched == len(network)
    expected = {"h1": {"h1"}, "h2": {"h2"}, "h3": {"h3", "h2"}}[arm]
    assert {h.family for h in hits.values()} == expected
    if arm == "h3":
        assert {h.family for h in hits.values() if h.host == "a.test"} == {"h3"}


@pytest.mark.parametrize("arm", ARMS)
def test_connections_per_host_match_caddy_client_ports(loads: Any, arm: str) -> None:
    site, db, done = loads
    nav = navigation(db, done[arm])
    recorded: dict[str, set[Any]] = defaultdict(set)
    for conn in nav["connections"]:
        recorded[conn["host"]].add(conn["connection_id"])
    ports: dict[str, set[int]] = defaultdict(set)
    for hit in hits_for(site, done, arm):
        ports[hit.host].add(hit.client_port)
    for host in ("a.test", "b.test"):
        n = len(recorded[host])
        assert n == len(ports[host]), f"{host}: {n} recorded, caddy saw ports {ports[host]}"
        if arm == "h1":
            assert 2 <= n <= 6, f"{host}: {n} h1 connections"
        else:
            assert n == 1, f"{host}: {n} connections under {arm}"


@pytest.mark.parametrize("arm", ARMS)
def test_connection_shares_sum_to_one(loads: Any, arm: str) -> None:
    _, db, done = loads
    nav = navigation(db, done[arm])
    total = sum(c["share"] for c in nav["connections"])
    assert abs(total - 1.0) <= 0.001
    byte_sum = sum(c["bytes"] for c in nav["connections"])
    for conn in nav["connections"]:
        assert abs(conn["share"] - conn["bytes"] / byte_sum) < 1e-6


@pytest.mark.parametrize("arm", ARMS)
def test_encoded_bytes_cover_the_file_within_2kb(loads: Any, arm: str) -> None:
    site, db, done = loads
    nav = navigation(db, done[arm])
    checked = 0
    for req in nav["requests"]:
        path = urlsplit(req["url"]).path
        if req.get("status") != 200 or path not in site.files:
            continue
        size = site.files[path]
        assert size <= req["encoded_bytes"] <= size + 2048, (path, size, req["encoded_bytes"])
        checked += 1
    assert checked >= 25


@pytest.mark.parametrize("arm", ARMS)
def test_plt_matches_the_pages_own_load_event_end(loads: Any, arm: str) -> None:
    site, db, done = loads
    nav = navigation(db, done[arm])
    beacons = [h for h in hits_for(site, done, arm) if h.uri.startswith("/page/data/late.json?")]
    assert len(beacons) == 1
    led = float(parse_qs(urlsplit(beacons[0].uri).query)["led"][0])
    assert led > 0
    assert abs(nav["_summary"]["plt_ms"] - led) <= 5.0, (nav["_summary"]["plt_ms"], led)


@pytest.mark.parametrize("arm", ARMS)
def test_the_request_300_ms_after_load_is_in_the_record(loads: Any, arm: str) -> None:
    site, db, done = loads
    nav = navigation(db, done[arm])
    late = [r for r in nav["requests"] if urlsplit(r["url"]).path == "/page/data/late.json"]
    assert len(late) == 1, [r["url"] for r in nav["requests"]]
    req, plt = late[0], nav["_summary"]["plt_ms"]
    assert req["status"] == 200 and req["end_ms"] is not None, req
    # sent by a timer the load handler set (js/app4.js): after the load event, as caddy saw it
    assert req["start_ms"] >= plt + 250, (req["start_ms"], plt)
    assert [h for h in hits_for(site, done, arm) if h.uri == urlsplit(req["url"]).path + "?"
            + urlsplit(req["url"]).query]


@pytest.mark.parametrize("arm", ARMS)
def test_lcp_is_recorded_and_not_before_fcp(loads: Any, arm: str) -> None:
    _, db, done = loads
    nav = navigation(db, done[arm])
    lcp, fcp = nav["lcp_ms"], nav["fcp_ms"]
    assert fcp is not None and lcp is not None, (fcp, lcp)
    assert fcp <= lcp <= 30_000, (fcp, lcp)
