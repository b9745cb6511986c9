"""Records are never queued behind dashboard queries: a real host process is sent 2,000
``query`` frames and then one ``record`` frame in one write; the record's ack comes back long
before the last query result (before the fix it came last, after every query), and every
query is still answered. The latency figures are scripts/bench/host_query_lane.py's."""

from __future__ import annotations

import threading
from pathlib import Path

from test_host_process import Host, frame

from scripts.devkit.navrecord_builder import make_record

QUERIES = 2000


def test_record_ack_does_not_wait_for_queries(tmp_path: Path) -> None:
    host = Host(tmp_path)
    for seed in range(20):
        host.send(frame({"type": "record", "schema": 1, "msg_id": f"r{seed}",
                         "record": make_record(6, seed=seed)}))
        assert host.reply()["type"] == "ack"
    burst = b"".join(frame({"type": "query", "schema": 1, "msg_id": f"q{i}",
                            "query": "protocol_counts", "params": {"source": "all"},
                            "cursor": None}) for i in range(QUERIES))
    burst += frame({"type": "record", "schema": 1, "msg_id": "late",
                    "record": make_record(6, seed=999)})
    sender = threading.Thread(target=host.send, args=(burst,))  # read while it writes: the
    sender.start()  # replies would otherwise fill the pipe while the frames still go in
    replies = [host.reply() for _ in range(QUERIES + 1)]
    sender.join()
    ack = next(i for i, r in enumerate(replies) if r.get("msg_id") == "late")
    print(f"the record's ack came back as reply {ack + 1} of {QUERIES + 1}")
    assert replies[ack]["type"] == "ack"
    assert ack < QUERIES // 4  # not behind the queries (it was reply 2,001 of 2,001)
    results = [r for r in replies if r["type"] == "query_result"]
    assert len(results) == QUERIES and {r["msg_id"] for r in results} == \
        {f"q{i}" for i in range(QUERIES)}
    code, _, _ = host.close()
    assert code == 0
