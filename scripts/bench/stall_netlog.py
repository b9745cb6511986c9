#!/usr/bin/env python3
"""What a stalled load's NetLog says (a diagnosis for stalls.py --netlog, not a test): per
HTTP/2 session, the PRIORITY frames Chromium sent and the streams whose response never ended
(path, content-length, bytes received, when the last DATA came), and when the session last
received anything. A stream with its headers and part of its body, on a session that kept
delivering other streams and then went idle with its windows open, was not written by the
server. The log may be cut short (the browser was stopped): the last events are dropped.

    .venv/bin/python scripts/bench/stall_netlog.py /tmp/stall/keep/BATCH-plain-16.netlog.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any]:
    text = path.read_text().rstrip()
    try:
        return dict(json.loads(text))
    except ValueError:
        # cut short: drop the partial last event and close the array and object
        text = text[: text.rfind("}") + 1].rstrip(",\n ")
        return dict(json.loads(text + "]}"))


def header(headers: list[str], name: str) -> str:
    return next((h.split(": ", 1)[1] for h in headers if h.lower().startswith(name + ": ")), "")


def sessions(log: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Per HTTP2_SESSION source id: host, PRIORITY frames sent, streams and last receive."""
    names = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    t0 = min(int(e["time"]) for e in log["events"])
    out: dict[int, dict[str, Any]] = {}
    for e in log["events"]:
        name, p, sid = names[e["type"]], e.get("params") or {}, e["source"]["id"]
        t = int(e["time"]) - t0
        if name == "HTTP2_SESSION" and "host" in p:
            out[sid] = {"host": p["host"], "priority": 0, "streams": {}, "last_recv": 0}
        s = out.get(sid)
        if s is None:
            continue
        streams = s["streams"]
        if name == "HTTP2_STREAM_SEND_PRIORITY":
            s["priority"] += 1
        elif name == "HTTP2_SESSION_SEND_HEADERS":
            streams[p["stream_id"]] = {"path": header(p.get("headers", []), ":path"),
                                       "length": None, "got": 0, "end": False, "last": t}
        elif name == "HTTP2_SESSION_RECV_HEADERS" and p.get("stream_id") in streams:
            st = streams[p["stream_id"]]
            st["length"] = header(p.get("headers", []), "content-length") or None
            st["end"] = st["end"] or bool(p.get("fin"))
            st["last"] = t
        elif name == "HTTP2_SESSION_RECV_DATA" and p.get("stream_id") in streams:
            st = streams[p["stream_id"]]
            st["got"] += int(p.get("size", 0))
            st["end"] = st["end"] or bool(p.get("fin"))
            st["last"] = s["last_recv"] = t
    return out


def main() -> int:
    if len(sys.argv) != 2:
        print("error: usage: stall_netlog.py NETLOG", file=sys.stderr)
        return 2
    try:
        log = load(Path(sys.argv[1]))
    except (OSError, ValueError) as e:
        print(f"error: {sys.argv[1]}: not a readable NetLog ({e})", file=sys.stderr)
        return 1
    for s in sessions(log).values():
        open_ = {k: v for k, v in s["streams"].items() if not v["end"]}
        print(f"{s['host']}: {len(s['streams'])} streams, {s['priority']} PRIORITY frames sent, "
              f"last DATA at {s['last_recv']} ms, {len(open_)} without an end")
        for sid, st in sorted(open_.items()):
            print(f"  stream {sid} {st['path']}: content-length {st['length']}, {st['got']} "
                  f"bytes, last at {st['last']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
