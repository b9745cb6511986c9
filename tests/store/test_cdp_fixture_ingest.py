"""Every recorded fixture record (tests/fixtures/cdp/*.expected.json, from real Chromium runs via
the extension's recorder core) is accepted by the host and stored faithfully."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from protolens.messaging.dispatch import Dispatcher
from protolens.store import SqliteSink, open_rw

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "cdp").glob(
    "*.expected.json"))


def test_fixtures_are_present() -> None:
    assert FIXTURES, "tests/fixtures/cdp/*.expected.json missing"


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name.split(".")[0] for f in FIXTURES])
def test_fixture_records_ingest(fixture: Path, tmp_path: Path) -> None:
    data = json.loads(fixture.read_text())
    records: list[dict[str, Any]] = data if isinstance(data, list) else [data]
    sink = SqliteSink(open_rw(tmp_path / "p.db", now_ms=0.0))
    dispatcher = Dispatcher(sink)
    for i, rec in enumerate(records):
        msg = json.dumps({"type": "record", "schema": 1, "msg_id": str(i), "record": rec})
        reply = dispatcher.handle(msg.encode(), 0.0)
        assert reply == {"type": "ack", "schema": 1, "msg_id": str(i), "id": rec["id"],
                         "duplicate": False}, reply
        again = dispatcher.handle(msg.encode(), 0.0)
        assert again["duplicate"] is True
    conn = sink.conn
    for rec in records:
        s = conn.execute("SELECT requests, connections, bytes, plt_ms, main_family "
                         "FROM navigation_summary WHERE id = ?", (rec["id"],)).fetchone()
        assert s["requests"] == len(rec["requests"])
        assert s["connections"] == sum(1 for c in rec["connections"] if not c["upstream"])
        assert s["bytes"] == sum(r["encoded_bytes"] for r in rec["requests"])
        assert s["plt_ms"] == rec["milestones"]["load_ms"]
        main = [r["family"] for r in rec["requests"] if r["is_main_document"]]
        assert s["main_family"] == (main[-1] if main else None)
        shares = {r["connection_id"]: r["share"] for r in conn.execute(
            "SELECT connection_id, share FROM connection_shares "
            "WHERE navigation_id = ? AND upstream = 0", (rec["id"],))}
        for c in rec["connections"]:
            assert shares[c["connection_id"]] == pytest.approx(c["share"], abs=1e-6)
