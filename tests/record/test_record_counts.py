"""Counts that contradict the arrays (record/counts.py): a browser connection claiming more
requests than the record holds, or a host more connections than the browser opened, is refused
with one line on both paths (the fast path declines it, the reference path names it), and
nothing is stored; counts within the arrays are stored as sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protolens.messaging.dispatch import Dispatcher
from protolens.record import parse_record
from protolens.record.reader import RecordError
from protolens.store import SqliteSink, open_rw
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0


@pytest.mark.parametrize(("where", "value", "words"), [
    (("connections", 0, "requests"), 10 ** 6, "connections[0].requests: 1000000, more than "
                                               "the 5 requests"),
    (("hosts", 0, "connections"), 40, "hosts[0].connections: 40, more than the"),
])
@pytest.mark.parametrize("fast", [True, False])
def test_contradicting_counts_refused(tmp_path: Path, where: tuple[str, int, str], value: int,
                                      words: str, fast: bool) -> None:
    rec = make_record(5)
    table, i, field = where
    rec[table][i][field] = value
    with pytest.raises(RecordError, match=words.replace("[", r"\[").replace("]", r"\]")):
        parse_record(rec)
    conn = open_rw(tmp_path / "p.db", now_ms=NOW)
    d = Dispatcher(SqliteSink(conn), fast_path=fast)
    reply = d.handle(json.dumps({"type": "record", "schema": 1, "msg_id": "m",
                                 "record": rec}).encode(), NOW)
    assert reply["type"] == "error" and words in reply["error"] and not reply["retry"]
    assert conn.execute("SELECT count(*) FROM navigations").fetchone()[0] == 0
    rec[table][i][field] = 1  # within the arrays: stored as sent
    assert d.handle(json.dumps({"type": "record", "schema": 1, "record": rec}).encode(),
                    NOW)["type"] == "ack"
