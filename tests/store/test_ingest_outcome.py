"""What storing a record did (issue 15, defect 3): stored, a duplicate with the same content, or
a conflict (same id, other content; the stored record is kept), against a real SQLite store."""

from __future__ import annotations

import copy
from pathlib import Path

from protolens.record import parse_record
from protolens.store import SqliteSink, open_rw
from protolens.store.policy import store_upstream
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0


def test_stored_then_duplicate_then_conflict(tmp_path: Path) -> None:
    sink = SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW))
    raw = make_record(5)
    assert sink.ingest(parse_record(raw), {"campaign": "c"}, NOW) == "stored"
    # another process's lab context and a later clock do not make it other content
    assert sink.ingest(parse_record(raw), {"campaign": "d"}, NOW + 5) == "duplicate"
    for path, value in (("requests", 3), ("connections", 0), ("hosts", 0)):
        changed = copy.deepcopy(raw)
        if path == "requests":
            changed["requests"][value]["body_bytes"] += 1
        elif path == "connections":
            changed["connections"][value]["last_ms"] += 1
        else:
            changed["hosts"][value]["connections"] += 1
        assert sink.ingest(parse_record(changed), {}, NOW) == "conflict", path
    page = copy.deepcopy(raw)
    page["page"]["late_attach"] = "commit"
    assert sink.ingest(parse_record(page), {}, NOW) == "conflict"
    fewer = copy.deepcopy(raw)
    fewer["requests"].pop()
    assert sink.ingest(parse_record(fewer), {}, NOW) == "conflict"
    stored = sink.conn.execute("SELECT count(*), sum(body_bytes) FROM requests").fetchone()
    assert tuple(stored) == (5, sum(r["body_bytes"] for r in raw["requests"]))


def test_the_lab_runners_upstream_connections_do_not_make_a_resend_a_conflict(
        tmp_path: Path) -> None:
    sink = SqliteSink(open_rw(tmp_path / "p.db", now_ms=NOW))
    rec = parse_record(make_record(5))
    assert sink.ingest(rec, {}, NOW) == "stored"
    store_upstream(sink.conn, rec.id, [{"id": 51000, "host": "a.test", "family": "h2",
                                        "requests": 3, "bytes": 3000}], rec.page.started_at_ms)
    assert sink.ingest(rec, {}, NOW) == "duplicate"
