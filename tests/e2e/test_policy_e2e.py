"""End to end, everyday-browser policies (issue 6, item 3): real Chromium + the built extension +
the host (which starts the relay) + SQLite, checked against caddy's access log.

Recording is switched on through lab mode (the only non-UI way), but the policies take the
everyday path: the host's ``policies`` message, the extension's chrome.proxy PAC to the host's
CONNECT relay (credential answered by webRequest.onAuthRequired), and CDP
``Network.emulateNetworkConditionsByRule`` from the extension. No lab proxy is involved.

- a page on a.test forced onto QUIC (``--origin-to-force-quic-on``) stays on HTTP/2 with a
  ``no-h3`` rule for a.test, and is on HTTP/3 without it (caddy's log says so for every request);
- a rule adding 300 ms latency to a.test delays a.test's responses but not b.test's (the iframe),
  against a control load, and the record carries the rule ids Chromium applied.
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protolens.arms import parse_lab_arm
from protolens.browser.flags import LaunchSpec
from protolens.browser.launch import run_load
from scripts.devkit.caddylog import Hit, read_hits
from scripts.devkit.harness import CHROMIUM, require_dist, stored_ids
from scripts.devkit.site import serve_site

pytestmark = pytest.mark.e2e


def policy(db: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "protolens.cli", "policy", *args],
                   env={**os.environ, "PROTOLENS_DB": str(db)}, check=True,
                   capture_output=True, text=True)


def load(site: Any, db: Path, scratch: Path, arm: str) -> tuple[str, list[Hit]]:
    """One cold load of the a.test page; returns its navigation id and caddy's hits for it."""
    load_id = str(uuid.uuid4())
    start = site.access_log.stat().st_size
    spec = LaunchSpec(chromium=CHROMIUM, user_data_dir="", extension_dir=str(require_dist()),
                      arm=parse_lab_arm(arm), origins=[f"a.test:{site.port}"], spki=[site.spki],
                      host_rules="MAP *.test 127.0.0.1")
    result = run_load(spec, scratch=scratch, db=db, navigate=[site.url],
                      context={"load_id": load_id}, timeout_s=60,
                      done=lambda: len(stored_ids(db, load_id)) >= 1,
                      host_env={"PROTOLENS_RELAY_HOSTS": "a.test=127.0.0.1,b.test=127.0.0.1"})
    assert result.ok, f"{arm}: {result.reason}; see {result.log}"
    (nav,) = stored_ids(db, load_id)
    return nav, read_hits(site.access_log, start)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    work = tmp_path_factory.mktemp("policy-e2e")
    db = work / "store.db"
    with serve_site(work / "site") as site:
        out: dict[str, Any] = {}
        out["quic"] = load(site, db, work / "quic", "h3")
        policy(db, "add", "a.test", "no-h3")
        out["no-h3"] = load(site, db, work / "no-h3", "h3")
        policy(db, "remove", "a.test")
        out["control"] = load(site, db, work / "control", "h2")
        policy(db, "add", "a.test", "default", "--latency-ms", "300")
        out["slow"] = load(site, db, work / "slow", "h2")
        yield db, out


def rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return list(conn.execute(sql, args))


def families(hits: list[Hit], host: str) -> set[str]:
    return {h.family for h in hits if h.host == host}


def test_control_load_uses_h3_for_a_test(runs: Any) -> None:
    db, out = runs
    nav, hits = out["quic"]
    assert families(hits, "a.test") == {"h3"}
    assert {r[0] for r in rows(db, "SELECT family FROM requests WHERE navigation_id = ? AND "
                                   "host = 'a.test' AND family IS NOT NULL", nav)} == {"h3"}
    assert rows(db, "SELECT * FROM navigation_policies WHERE navigation_id = ?", nav) == []


def test_no_h3_rule_keeps_a_test_on_h2_through_the_relay(runs: Any) -> None:
    db, out = runs
    nav, hits = out["no-h3"]
    assert hits and families(hits, "a.test") == {"h2"}, "caddy saw a.test over " + str(
        families(hits, "a.test"))
    recorded = {r[0] for r in rows(db, "SELECT family FROM requests WHERE navigation_id = ? AND "
                                       "host = 'a.test' AND family IS NOT NULL", nav)}
    assert recorded == {"h2"}
    applied = {r[0]: r[1:] for r in rows(
        db, "SELECT host, rule, arm, mechanism FROM navigation_policies WHERE navigation_id = ?",
        nav)}
    assert applied["a.test"] == ("a.test", "no-h3", "relay")
    assert applied["b.test"] == (None, "default", "none")


def durations(db: Path, nav: str, host: str) -> dict[str, float]:
    """URL path -> end_ms - start_ms of the host's requests (the beacon, whose query varies,
    excluded). CDP latency emulation holds the response back in the browser: the recorder's
    first_byte_ms (the network stack's header time) moves little, the end of the request by the
    full latency (measured: main document 73 -> 323 ms with a 300 ms rule)."""
    return {r[0].split("://", 1)[1].split("/", 1)[1]: r[1] for r in rows(
        db, "SELECT url, end_ms - start_ms FROM requests WHERE navigation_id = ? AND host = ? "
            "AND end_ms IS NOT NULL AND url NOT LIKE '%?%'", nav, host)}


def delay(db: Path, control: str, slow: str, host: str) -> float:
    """Median over the host's URLs of (duration in the slow load - in the control load)."""
    c, s = durations(db, control, host), durations(db, slow, host)
    both = sorted(set(c) & set(s))
    assert len(both) >= 5, f"{host}: too few URLs in both loads ({both})"
    return statistics.median(s[u] - c[u] for u in both)


def test_latency_rule_delays_only_a_test_and_records_rule_ids(runs: Any) -> None:
    db, out = runs
    control, slow = out["control"][0], out["slow"][0]
    da, db_ = delay(db, control, slow, "a.test"), delay(db, control, slow, "b.test")
    print(f"median extra duration per URL: a.test {da:+.1f} ms, b.test {db_:+.1f} ms")
    assert da >= 250
    assert db_ < 100
    ((rule, arm, mech, ids),) = rows(
        db, "SELECT rule, arm, mechanism, rule_ids FROM navigation_policies "
            "WHERE navigation_id = ? AND host = 'a.test'", slow)
    assert (rule, arm, mech) == ("a.test", "default", "none+cdp-throttling")
    assert json.loads(ids), "no CDP rule id reported as applied to a.test's requests"
    ((b_ids,),) = rows(db, "SELECT rule_ids FROM navigation_policies WHERE navigation_id = ? "
                           "AND host = 'b.test'", slow)
    assert json.loads(b_ids) == []
