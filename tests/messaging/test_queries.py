"""The ``query`` message: dashboard data paged well under the 1 MB host -> extension limit,
every row exactly once, and one-line errors for bad requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from protolens.messaging.dispatch import Dispatcher, encode_reply
from protolens.messaging.framing import MAX_OUTGOING
from protolens.messaging.queries import StoreQueries
from protolens.store import open_ro
from protolens.store.dashboard import dashboard_query
from scripts.devkit.synthetic import generate


class _NoSink:
    def ingest(self, *args: Any) -> bool:
        raise AssertionError("no records in these tests")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("q") / "big.db"
    # 6,000 distinct long origins: the unpaged domain list alone is several MB of JSON
    generate(db, 6_000, 2, origin_len=700, source="passive", chunk=6_000)
    return db


def _ask(d: Dispatcher, **msg: Any) -> tuple[dict[str, Any], int]:
    payload = json.dumps({"type": "query", "schema": 1, "msg_id": "q", **msg}).encode()
    reply = d.handle(payload, 0.0)
    return reply, len(encode_reply(reply))


@pytest.mark.parametrize("name", ["domains", "plt_by_domain"])
def test_a_large_store_is_paged_under_1_mb_per_reply(big: Path, name: str) -> None:
    d = Dispatcher(_NoSink(), queries=StoreQueries(big))
    full = dashboard_query(open_ro(big), name, source="passive", since_ms=None, origin=None,
                           offset=0, limit=10**9)[1]
    assert len(json.dumps(full)) > 3 * MAX_OUTGOING  # would not fit in one reply
    got: list[Any] = []
    cursor = None
    pages = 0
    while True:
        reply, size = _ask(d, query=name, cursor=cursor, limit=5000)
        assert reply["type"] == "query_result", reply
        assert size < MAX_OUTGOING // 2
        got.extend(reply["rows"])
        pages += 1
        cursor = reply["next_cursor"]
        if cursor is None:
            break
    assert pages > 3
    assert got == json.loads(json.dumps(full))


def test_protocol_counts_and_filters(big: Path) -> None:
    d = Dispatcher(_NoSink(), queries=StoreQueries(big))
    reply, _ = _ask(d, query="protocol_counts", params={"source": "all"})
    assert reply["columns"] == ["family", "navigations", "failed"]
    assert {r[0]: r[1] for r in reply["rows"]} == {"h1": 2000, "h2": 2000, "h3": 2000}
    assert reply["next_cursor"] is None and reply["msg_id"] == "q" and reply["schema"] == 1
    lab, _ = _ask(d, query="protocol_counts", params={"source": "lab"})
    assert lab["rows"] == []
    one = dashboard_query(open_ro(big), "domains", source=None, since_ms=None, origin=None,
                          offset=7, limit=1)[1][0]
    only, _ = _ask(d, query="domains", params={"origin": one[0]})
    assert only["rows"] == [one]
    late, _ = _ask(d, query="domains", params={"since_ms": 1_760_000_000_000 + 5_990_000})
    assert len(late["rows"]) == 10


def test_no_store_yet_gives_no_rows(tmp_path: Path) -> None:
    d = Dispatcher(_NoSink(), queries=StoreQueries(tmp_path / "none.db"))
    reply, _ = _ask(d, query="domains")
    assert reply["rows"] == [] and reply["next_cursor"] is None
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize("msg,error", [
    ({"query": "everything"}, "query: expected one of protocol_counts"),
    ({"query": "domains", "cursor": "abc"}, "cursor: expected"),
    ({"query": "domains", "cursor": 5}, "cursor: expected"),
    ({"query": "domains", "limit": 0}, "limit: expected an integer from 1 to 5000"),
    ({"query": "domains", "limit": True}, "limit: expected"),
    ({"query": "domains", "params": []}, "params: expected an object"),
    ({"query": "domains", "params": {"sql": "drop"}}, "params: unknown field 'sql'"),
    ({"query": "domains", "params": {"source": "x"}}, "params.source"),
    ({"query": "domains", "params": {"since_ms": "yesterday"}}, "params.since_ms"),
])
def test_bad_queries_get_error_replies(tmp_path: Path, msg: dict[str, Any], error: str) -> None:
    d = Dispatcher(_NoSink(), queries=StoreQueries(tmp_path / "none.db"))
    reply, _ = _ask(d, **msg)
    assert reply["type"] == "error" and reply["msg_id"] == "q"
    assert reply["error"].startswith(error), reply["error"]
    assert reply["retry"] is False


def test_a_host_without_queries_says_so() -> None:
    reply, _ = _ask(Dispatcher(_NoSink()), query="domains")
    assert reply["type"] == "error" and "no store to query" in reply["error"]


def test_a_file_that_is_not_a_store_is_an_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 100)
    reply, _ = _ask(Dispatcher(_NoSink(), queries=StoreQueries(junk)), query="domains")
    assert reply["type"] == "error" and reply["error"].startswith("store:")


def test_the_plt_chart_takes_the_loads_compare_takes(tmp_path: Path) -> None:
    """The dashboard's PLT per protocol is a comparison a user reads: the one rule
    (record/comparable.py), as ``compare`` has it. A warm load (its objects from the cache), one
    that waited on a dialog (incomplete) and a failed one are left out; until 2026-11-30 the chart
    averaged all but the failed one."""
    from scripts.devkit.navrecord_builder import make_record
    from scripts.devkit.store_builder import ingest_all

    def rec(seed: int, plt: float, **page: object) -> dict[str, Any]:
        r = make_record(n_requests=3, seed=seed)
        r["milestones"]["load_ms"] = plt
        r["page"].update(page)
        return r

    db = tmp_path / "s.db"
    ingest_all(db, [rec(1, 100.0), rec(2, 140.0), rec(3, 10.0, warm=True),
                    rec(4, 5000.0, incomplete=True, incomplete_reasons=["dialog"]),
                    rec(5, 70.0, aborted=True, error="net::ERR_ABORTED")])
    reply, _ = _ask(Dispatcher(_NoSink(), queries=StoreQueries(db)), query="plt_by_domain")
    (row,) = reply["rows"]
    cols = dict(zip(reply["columns"], row, strict=True))
    assert cols["navigations"] == 2 and cols["mean_plt_ms"] == pytest.approx(120.0), cols
