"""``protolens export --har``: the real CLI on a real SQLite store.

The CDP fixtures' golden records (tests/fixtures/cdp/*.expected.json, recorded from real Chromium)
are ingested, exported, and then (1) validated against the HAR 1.2 JSON schema by the npm package
har-validator (ajv + har-schema; scripts/validate-har.ts), (2) read back field by field to the
stored record (protocol, connection, bytes, byte shares), and (3) parsed by haralyzer, a HAR
consumer from PyPI.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from haralyzer import HarParser

from protolens.record import parse_record
from protolens.store import ingest, open_rw
from tests.cli.run import protolens

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "cdp").glob("*.expected.json"))
TSX = ROOT / "node_modules" / ".bin" / "tsx"


def _records(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text())
    return data if isinstance(data, list) else [data]


def _store(tmp_path: Path, records: list[dict[str, Any]], context: dict[str, Any] | None = None
           ) -> Path:
    db = tmp_path / "p.db"
    conn = open_rw(db, now_ms=0.0)
    for rec in records:
        ingest(conn, parse_record(rec), context or {}, 0.0)
    conn.close()
    return db


def _validate(*files: Path) -> subprocess.CompletedProcess[str]:
    assert shutil.which("node") and TSX.exists(), "scripts/setup.sh installs node and tsx"
    return subprocess.run([str(TSX), "scripts/validate-har.ts", *map(str, files)], cwd=ROOT,
                          text=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict[str, Any], Path]]:
    """Every fixture record ingested into its own store and exported through the CLI."""
    out = []
    for fixture in FIXTURES:
        tmp = tmp_path_factory.mktemp(fixture.name.split(".")[0])
        records = _records(fixture)
        db = _store(tmp, records)
        for rec in records:
            har = tmp / f"{rec['id']}.har"
            protolens("export", "--har", rec["id"], "-o", str(har), db=db)
            out.append((rec, har))
    return out


def test_every_fixture_exported(exported: list[tuple[dict[str, Any], Path]]) -> None:
    assert FIXTURES and len(exported) >= len(FIXTURES)


def test_har_validates_against_the_har_1_2_schema(
        exported: list[tuple[dict[str, Any], Path]], tmp_path: Path) -> None:
    done = _validate(*(har for _, har in exported))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok ") == len(exported)
    # the validator does reject: drop a required field from one export
    broken = json.loads(exported[0][1].read_text())
    del broken["log"]["entries"][0]["timings"]
    bad = tmp_path / "bad.har"
    bad.write_text(json.dumps(broken))
    rejected = _validate(bad)
    assert rejected.returncode == 1 and "timings" in rejected.stdout


def test_round_trip_protocol_connection_bytes(
        exported: list[tuple[dict[str, Any], Path]]) -> None:
    for rec, path in exported:
        log = json.loads(path.read_text())["log"]
        assert [p["id"] for p in log["pages"]] == [rec["id"]]
        page = log["pages"][0]
        assert page["pageTimings"]["onLoad"] == (rec["milestones"]["load_ms"]
                                                 if rec["milestones"]["load_ms"] is not None
                                                 else -1)
        by_id = {e["_protolens"]["request_id"]: e for e in log["entries"]}
        assert len(by_id) == len(log["entries"]) == len(rec["requests"])
        for r in rec["requests"]:
            e = by_id[r["request_id"]]
            # HAR 1.2: time is the sum of the timings but ssl, which connect includes
            known = [v for k, v in e["timings"].items() if v != -1 and k != "ssl"]
            assert e["time"] == pytest.approx(sum(known), abs=1e-6)
            for har, mine in (("dns", "dns_ms"), ("connect", "connect_ms"), ("ssl", "tls_ms"),
                              ("wait", "wait_ms")):
                if r.get("wait_ms") is not None:
                    want = r[mine] if r[mine] is not None else -1
                    assert e["timings"][har] == pytest.approx(want, abs=1e-3), (har, r["url"])
            if r.get("connect_ms") is not None and r.get("end_ms") is not None:
                assert e["time"] == pytest.approx(r["end_ms"] - r["start_ms"], abs=2.0)
            assert e["_protocol"] == r["protocol"]
            assert e["request"]["httpVersion"] == (r["protocol"] or "")
            assert e.get("_socket") == r["connection_id"]
            assert (int(e["connection"]) if "connection" in e else None) == r["connection_id"]
            assert e["response"]["_transferSize"] == r["encoded_bytes"]
            assert e["response"]["content"]["size"] == r["body_bytes"]
            assert e["_alternateProtocolUsage"] == r["alternate_protocol_usage"]
            assert e["pageref"] == rec["id"]
        shares = {c["connection_id"]: c for c in page["_protolens"]["connections"]}
        for c in rec["connections"]:
            got = shares[c["connection_id"]]
            assert (got["bytes"], got["requests"], got["family"]) == (
                c["bytes"], c["requests"], c["family"])
            assert got["share"] == pytest.approx(c["share"], abs=1e-9)
            carried = {r["host"] for r in rec["requests"] if r["connection_id"] ==
                       c["connection_id"]}
            assert set(got["hosts"]) == (carried or {c["host"]})


def test_haralyzer_reads_pages_entries_and_sizes(
        exported: list[tuple[dict[str, Any], Path]]) -> None:
    for rec, path in exported:
        parser = HarParser(json.loads(path.read_text()))
        (page,) = parser.pages
        assert page.page_id == rec["id"]
        assert len(page.entries) == len(rec["requests"])
        assert page.page_size_trans == sum(r["encoded_bytes"] for r in rec["requests"]
                                           if r["encoded_bytes"] > 0)
        versions = sorted(e.response.httpVersion for e in page.entries)
        assert versions == sorted(r["protocol"] or "" for r in rec["requests"])


def _origin_record(detail: str) -> dict[str, Any]:
    rec = _records(FIXTURES[0])[0]
    rec = json.loads(json.dumps(rec))
    rec["page"]["url_detail"] = detail
    for r in rec["requests"]:  # a stored URL that says more than its record's detail allows
        r["url"] = f"https://{r['host']}/secret/path?token=abc#frag"
    return rec


@pytest.mark.parametrize(("detail", "forbidden"), [("origin", "/secret"), ("path", "token")])
def test_url_detail_is_respected(tmp_path: Path, detail: str, forbidden: str) -> None:
    rec = _origin_record(detail)
    db = _store(tmp_path, [rec])
    text = protolens("export", "--har", rec["id"], db=db).stdout
    assert forbidden not in text and "frag" not in text
    urls = {e["request"]["url"] for e in json.loads(text)["log"]["entries"]}
    if detail == "origin":
        assert urls == {f"https://{r['host']}" for r in rec["requests"]}
    else:
        assert all(u.endswith("/secret/path") for u in urls)


def test_campaign_export_has_one_page_per_load(tmp_path: Path) -> None:
    # fixture files reuse ids (00000000-...-1, -2): keep one record per id, as the store does
    recs = list({r["id"]: r for f in FIXTURES for r in _records(f)}.values())
    assert len(recs) >= 2
    db = _store(tmp_path, recs, {"campaign": "har-camp"})
    har = json.loads(protolens("export", "--har", "--campaign", "har-camp", db=db).stdout)
    assert sorted(p["id"] for p in har["log"]["pages"]) == sorted(r["id"] for r in recs)
    assert len(har["log"]["entries"]) == sum(len(r["requests"]) for r in recs)


def test_campaign_pages_carry_their_tags_and_visual_metrics(tmp_path: Path) -> None:
    from scripts.devkit.store_builder import campaign_store

    db = tmp_path / "c.db"
    campaign_store(db, campaign="tags", reps=1)
    out = tmp_path / "c.har"
    protolens("export", "--har", "--campaign", "tags", "-o", str(out), db=db)
    pages = json.loads(out.read_text())["log"]["pages"]
    assert len(pages) == 2 * 2 * 3
    assert {(p["_campaign"], p["_page"], p["_condition"], p["_arm"]) for p in pages} == {
        ("tags", page, cond, arm) for page in ("small", "large") for cond in ("clean", "lossy")
        for arm in ("h1", "h2", "h3")}
    for p in pages:  # the devkit's lab loads: SpeedIndex 0.6 x PLT, first visual change 0.25 x
        onload = p["pageTimings"]["onLoad"]
        assert p["_SpeedIndex"] == pytest.approx(0.6 * onload, abs=0.01)
        assert p["_render"] == pytest.approx(0.25 * onload, abs=0.01)
        assert p["_visualComplete85"] < p["_visualComplete99"] < p["_lastVisualChange"]
    assert _validate(out).returncode == 0
    parsed = HarParser(json.loads(out.read_text()))
    assert len(parsed.pages) == len(pages)


def test_errors_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    rec = _records(FIXTURES[0])[0]
    db = _store(tmp_path, [rec])
    existing = tmp_path / "there.har"
    existing.write_text("keep")
    cases = [
        ("export", "--har", "ffffffff-nope"),
        ("export", "--har", rec["id"], "-o", str(existing)),
        ("export", "--har", rec["id"], "--campaign", "x"),
        ("export", "--har", "--campaign", "no-such-campaign"),
        ("export", "--har", rec["id"], "--preview"),
    ]
    for args in cases:
        done = protolens(*args, db=db, check=False)
        assert done.returncode != 0, args
        assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, args
        assert done.stdout == ""
    assert existing.read_text() == "keep"
