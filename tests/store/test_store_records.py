"""``store/records.load_record`` gives back the record that was ingested, for every CDP fixture
(recorded from real Chromium) and the coalesced/proxied example: every field of the model, so a
field added to the record but not read back fails here. Policies and the A/B assignment are not
rebuilt (documented in store/records.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from protolens.record import parse_record
from protolens.store import ingest, open_rw
from protolens.store.queries import NotFound
from protolens.store.records import campaign_navigation_ids, load_record
from tests.record.coalesced_record import coalesced_record

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "cdp").glob(
    "*.expected.json"))


def _records() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [coalesced_record(), coalesced_record(upstream=True)]
    out[1]["id"] = "c0a1e5ce-0000-4000-8000-000000000078"
    for f in FIXTURES:
        data = json.loads(f.read_text())
        out.extend(data if isinstance(data, list) else [data])
    return out


@pytest.mark.parametrize("raw", _records(), ids=lambda r: r["id"][-4:])
def test_load_record_returns_what_was_ingested(raw: dict[str, Any], tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=0.0)
    record = parse_record(raw)
    ingest(conn, record, {}, 0.0)
    got = load_record(conn, record.id)
    want = dataclasses.replace(record, policies=(), experiment=None)
    assert dataclasses.replace(got, context=want.context) == want
    assert {k: v for k, v in got.context.items() if k in want.context} == want.context


def test_unknown_id_and_campaign_order(tmp_path: Path) -> None:
    conn = open_rw(tmp_path / "p.db", now_ms=0.0)
    with pytest.raises(NotFound):
        load_record(conn, "nope")
    first, second = coalesced_record(), coalesced_record()
    second["id"] = "c0a1e5ce-0000-4000-8000-000000000079"
    second["page"]["started_at_ms"] = first["page"]["started_at_ms"] - 1000
    for raw in (first, second):
        ingest(conn, parse_record(raw), {"campaign": "ordered"}, 0.0)
    assert campaign_navigation_ids(conn, "ordered") == [second["id"], first["id"]]
    assert campaign_navigation_ids(conn, "other") == []
