"""``cc.survey``, the work behind ``cc probe`` called as functions: a navigation's probe targets
from a real store, a probe result stored and listed, and the one-line errors (unknown
navigation, nothing to probe, a bad URL, a store that will not take the result). Probe results
are rebuilt from recorded fixtures (tests/cc/fixtures) through the real classifier."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from protolens.cc.classify import classify
from protolens.cc.curl import ProbeError
from protolens.cc.model import QueueTimeline
from protolens.cc.probe import ProbeResult
from protolens.cc.survey import StoreProbeError, check_urls, page_targets, store_probe
from protolens.store import cc as ccstore
from protolens.store import open_ro
from protolens.store.queries import NotFound
from scripts.devkit.navrecord_builder import make_record
from scripts.devkit.store_builder import ingest_all
from tests.cc.test_cc_store import page_store

FIX = Path(__file__).parent / "fixtures"


def fixture_result(name: str, host: str) -> ProbeResult:
    d = json.loads((FIX / f"{name}.json").read_text())
    row, timeline = d["row"], QueueTimeline.from_json(d["timeline"])
    verdict = classify(timeline, row["bytes"], row["mss"], row["rtt_ms"], row["transfer_ms"])
    return ProbeResult(url=row["url"], requested_url=row["url"], host=host,
                       server_ip=row["server_ip"], http_version=row["http_version"],
                       size_bytes=row["bytes"], measured_rtt_ms=row["measured_rtt_ms"],
                       probed_at_ms=1.0e12, wall_ms=row["wall_ms"], timeline=timeline,
                       verdict=verdict, server_cc=row["server_cc"], request_ns=0)


def test_a_navigations_targets_are_its_biggest_hosts_biggest_objects(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    nav = page_store(db)
    assert page_targets(db, nav[:8], 5) == ["https://a.test/_testbed/320k.bin",
                                            "https://b.test/_testbed/40k.bin"]
    assert page_targets(db, nav, 1) == ["https://a.test/_testbed/320k.bin"]
    with pytest.raises(NotFound, match="no navigation with id 'nope'"):
        page_targets(db, "nope", 5)


def test_a_navigation_without_http_objects_has_nothing_to_probe(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    rec = make_record(n_requests=2, seed=5)
    for r in rec["requests"]:
        r["url"] = "data:image/png;base64,AAAA"
    ingest_all(db, [rec])
    with closing(sqlite3.connect(db)) as conn:
        nav = str(conn.execute("SELECT id FROM navigations").fetchone()[0])
    with pytest.raises(ProbeError, match=f"navigation {nav} has no http"):
        page_targets(db, nav, 3)


def test_a_probe_is_stored_with_its_network_and_listed(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    res = fixture_result("reno-160k-500", "x.test")
    store_probe(db, res, "wan")
    with closing(open_ro(db)) as conn:
        (row,) = ccstore.list_probes(conn, "x.test")
        timeline = ccstore.probe_timeline(conn, "x.test")
    assert row["network"] == "wan" and row["label"] == res.verdict.label == "loss-based"
    assert timeline is not None
    with pytest.raises(StoreProbeError, match="cannot store the probe"):
        store_probe(tmp_path / "s.db" / "inside-a-file.db", res, "lab")


def test_urls_that_cannot_be_probed_are_named() -> None:
    check_urls(["https://a.test/x", "http://b.test:8080/y"])
    with pytest.raises(ProbeError, match="not an http"):
        check_urls(["https://a.test/x", "ftp://b.test/y"])
