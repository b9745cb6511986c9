"""The real host process answers the dashboard's `query` messages from its store (over pipes)."""

from __future__ import annotations

from pathlib import Path

from test_host_process import Host, frame

from scripts.devkit.navrecord_builder import make_record


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


def test_one_huge_row_does_not_fail_every_query(tmp_path: Path) -> None:
    """Issue 15 item 11: a stored origin over 1 MB made every dashboard query that included
    it fail ("reply exceeds 1 MB"). Now the page stays under the limit, that row comes with its
    long cell cut (and counted in ``truncated``), and paging reaches every other row."""
    host = Host(tmp_path)
    huge = "https://" + "x" * (1_500_000) + ".test"
    for seed in range(6):
        rec = make_record(2, seed=seed)
        if seed == 2:
            rec["page"]["origin"] = rec["page"]["url"] = huge
        host.send(frame({"type": "record", "schema": 1, "msg_id": f"m{seed}", "record": rec}))
        reply = host.reply()
        if reply["type"] != "ack":  # a store that bounds the origin at ingest: nothing to page
            host.close()
            return
    rows, cursor, truncated, pages = [], None, 0, 0
    while True:
        host.send(frame({"type": "query", "schema": 1, "msg_id": "q", "query": "domains",
                         "params": {"source": "all"}, "cursor": cursor, "limit": 5000}))
        reply = host.reply()  # Host.reply asserts each frame is at most 1 MB
        assert reply["type"] == "query_result", reply
        rows += reply["rows"]
        truncated += reply.get("truncated", 0)
        pages += 1
        cursor = reply["next_cursor"]
        if cursor is None:
            break
    origin = reply["columns"].index("origin")
    cut = [r[origin] for r in rows if r[origin].endswith("\u2026")]
    assert truncated == 1 and len(cut) == 1 and huge.startswith(cut[0][:-1])
    assert len(cut[0]) == 4096
    assert len(rows) == 2 and "https://a.test" in {r[origin] for r in rows}
    assert host.close()[0] == 0
