"""``page.late_attach`` (docs/RECORD.md "Late attach"): optional in the record, validated, stored.

The stored rows come from the real-Chromium late-attach fixtures' goldens
(tests/fixtures/cdp/late-{response,commit}.expected.json).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from protolens.record import RecordError, parse_record
from protolens.store import SqliteSink, open_rw
from scripts.devkit.navrecord_builder import make_record, with_change

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cdp"


def test_a_record_without_late_attach_was_seen_from_its_request() -> None:
    raw = make_record(3)
    assert "late_attach" not in raw["page"]
    assert parse_record(raw).page.late_attach is None


@pytest.mark.parametrize(("value", "parsed"), [(None, None), ("response", "response"),
                                                ("commit", "commit")])
def test_late_attach_is_parsed(value: object, parsed: str | None) -> None:
    assert parse_record(with_change(make_record(3), "page.late_attach", value)).page.late_attach \
        == parsed


@pytest.mark.parametrize("value", ["request", "", True, 1])
def test_other_late_attach_values_are_refused_by_name(value: object) -> None:
    with pytest.raises(RecordError, match=r'^page\.late_attach: expected "response" \| "commit"'):
        parse_record(with_change(make_record(3), "page.late_attach", value))


def test_late_attach_is_stored_per_navigation(tmp_path: Path) -> None:
    sink = SqliteSink(open_rw(tmp_path / "p.db", now_ms=0.0))
    expected = {}
    for name in ("late-response", "late-commit", "h2"):
        for raw in json.loads((FIXTURES / f"{name}.expected.json").read_text()):
            raw["id"] = str(uuid.uuid4())  # every golden numbers its records from 1
            rec = parse_record(raw)
            if not sink.ingest(rec, {"load_id": name}, 0.0):
                raise AssertionError(f"{name}: not stored")
            expected[name] = raw["page"]["late_attach"]
    stored = dict(sink.conn.execute("SELECT load_id, late_attach FROM navigations").fetchall())
    assert expected == {"late-response": "response", "late-commit": "commit", "h2": None}
    assert stored == expected
