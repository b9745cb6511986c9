"""scripts/bench/stall_netlog.py on a small NetLog written here in Chromium's format
(constants.logEventTypes, events with source ids and params): a stream with part of its body
and no end is reported with its bytes; a finished one is not; a log cut short still reads."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.bench.stall_netlog import load, sessions

TYPES = ["HTTP2_SESSION", "HTTP2_SESSION_SEND_HEADERS", "HTTP2_SESSION_RECV_HEADERS",
         "HTTP2_SESSION_RECV_DATA", "HTTP2_STREAM_SEND_PRIORITY"]


def ev(kind: str, t: int, **params: object) -> dict[str, object]:
    return {"type": TYPES.index(kind), "time": str(t), "source": {"id": 7, "type": 1},
            "phase": 0, "params": params}


def netlog() -> dict[str, object]:
    return {"constants": {"logEventTypes": {k: i for i, k in enumerate(TYPES)}}, "events": [
        ev("HTTP2_SESSION", 100, host="a.test:443"),
        ev("HTTP2_SESSION_SEND_HEADERS", 110, stream_id=1, headers=[":path: /font.ttf"]),
        ev("HTTP2_SESSION_SEND_HEADERS", 111, stream_id=3, headers=[":path: /img.png"]),
        ev("HTTP2_STREAM_SEND_PRIORITY", 120, stream_id=3, parent_stream_id=0),
        ev("HTTP2_SESSION_RECV_HEADERS", 150, stream_id=1, fin=False,
           headers=[":status: 200", "content-length: 33652"]),
        ev("HTTP2_SESSION_RECV_DATA", 160, stream_id=1, size=16384, fin=False),
        ev("HTTP2_SESSION_RECV_HEADERS", 170, stream_id=3, fin=False, headers=[":status: 200"]),
        ev("HTTP2_SESSION_RECV_DATA", 180, stream_id=3, size=900, fin=True),
    ]}


def test_a_stream_without_an_end_is_reported_with_its_bytes(tmp_path: Path) -> None:
    path = tmp_path / "netlog.json"
    path.write_text(json.dumps(netlog()))
    (s,) = sessions(load(path)).values()
    assert (s["host"], s["priority"], s["last_recv"]) == ("a.test:443", 1, 80)
    open_ = {k: v for k, v in s["streams"].items() if not v["end"]}
    assert list(open_) == [1]
    assert (open_[1]["path"], open_[1]["length"], open_[1]["got"]) == ("/font.ttf", "33652", 16384)


def test_a_log_cut_short_drops_its_partial_last_event(tmp_path: Path) -> None:
    text = json.dumps(netlog())
    cut = text[: text.rfind('{"type"')] + '{"type": 3, "ti'
    path = tmp_path / "cut.json"
    path.write_text(cut)
    (s,) = sessions(load(path)).values()
    assert s["streams"][3]["end"] is False  # its fin was in the event cut off
    assert s["streams"][1]["got"] == 16384
