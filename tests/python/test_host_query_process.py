"""The real host process answers the dashboard's `query` messages from its store (over pipes)."""

from __future__ import annotations

from pathlib import Path

from navrecord_builder import make_record
from test_host_process import Host, frame


def test_host_answers_protocol_counts_for_what_it_stored(tmp_path: Path) -> None:
    host = Host(tmp_path)
    families = ["h2", "h2", "h1"]
    for seed, family in enumerate(families):
        rec = make_record(4, seed=seed, family=family)
        host.send(frame({"type": "record", "schema": 1, "msg_id": f"m{seed}", "record": rec}))
        assert host.reply()["type"] == "ack"
    host.send(frame({"type": "query", "schema": 1, "msg_id": "q1", "query": "protocol_counts",
                     "params": {"source": "all"}, "cursor": None}))
    reply = host.reply()
    assert reply["type"] == "query_result", reply
    assert reply["msg_id"] == "q1"
    got = {row[reply["columns"].index("family")]: row[reply["columns"].index("navigations")]
           for row in reply["rows"]}
    assert got == {"h2": 2, "h1": 1}
    code, _, _ = host.close()
    assert code == 0
