#!/usr/bin/env python3
"""Replay figures per DevTools log: requests sent before the main frame's load event, as the raw
events tell it; how many the recorder core's records hold (``protolens.replay``, the node script);
and how many of those agree with the log on protocol, connection id and encoded bytes.

The raw events are read here, in Python, with no recorder code: a second reading beside the replay
test's own (tests/extension/raw-reader.ts), by the same rules (docs/REPLAY.md): per navigation (a
root Document request of the main frame, not a redirect hop) the http(s) request hops of any
session sent from its request to its load, less main-frame requests of another loader sent before
it committed. A count, not a timing: no lock needed.

Usage: .venv/bin/python scripts/bench/replay_corpus.py [DIR ...]
DIR: directories of logs (*.json, *.jsonl, gzipped or not); by default our own fixtures and the
public corpus (PROTOLENS_PUBLIC_LOGS, or shared/devtools-logs above this checkout).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "native-host"))

from protolens.replay.node import replay  # noqa: E402

Hop = dict[str, Any]


def events(data: bytes) -> list[dict[str, Any]]:
    text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8").strip()
    if text.startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def truth(evs: list[dict[str, Any]]) -> list[list[Hop]]:
    """Per navigation with a load event: its request hops before load."""
    root = [e.get("sessionId") is None or e.get("targetType") == "page" for e in evs]
    frame = next((e["params"]["frame"]["id"] for e, r in zip(evs, root, strict=True)
                  if r and e["method"] == "Page.frameNavigated"
                  and not e["params"]["frame"].get("parentId")), None)
    hops: list[Hop] = []
    current: dict[str, Hop] = {}
    navs: list[Hop] = []
    loads: list[float] = []
    commits: dict[str, float] = {}
    clock = 0.0
    for e, is_root in zip(evs, root, strict=True):
        p, m = e.get("params") or {}, e["method"]
        key = f"{'' if is_root else e.get('sessionId')}|{p.get('requestId')}"
        t = p.get("timestamp")
        if isinstance(t, (int, float)) and t < 1e9:  # epoch times are not CDP's clock
            clock = max(clock, t)
        h = current.get(key)
        if m == "Network.requestWillBeSent":
            redirect = h is not None and "redirectResponse" in p
            if h is not None and redirect:
                _response(h, p["redirectResponse"])
                h["bytes"] = round(p["redirectResponse"].get("encodedDataLength") or 0)
            n = h["n"] + 1 if h is not None and redirect else 0
            h = {"id": f"{p['requestId']}:{n}", "n": n, "url": p["request"]["url"],
                 "start": t if isinstance(t, (int, float)) else clock, "root": is_root,
                 "frame": p.get("frameId"), "loader": p.get("loaderId"), "cached": False,
                 "protocol": None, "connection": None, "bytes": None}
            hops.append(h)
            current[key] = h
            if is_root and p.get("type") == "Document" and p.get("frameId") == frame and n == 0:
                navs.append(h)
        elif m == "Network.responseReceived" and h is not None:
            _response(h, p["response"])
        elif m == "Network.requestServedFromCache" and h is not None:
            h["cached"], h["connection"] = True, None
        elif m == "Network.loadingFinished" and h is not None and h["bytes"] is None:
            h["bytes"] = round(p.get("encodedDataLength") or 0)
        elif m == "Page.loadEventFired" and is_root and isinstance(t, (int, float)):
            loads.append(t)
        elif m == "Page.frameNavigated" and is_root and p["frame"]["id"] == frame:
            commits.setdefault(p["frame"].get("loaderId"), clock)
    out = []
    for i, nav in enumerate(navs):
        nxt = navs[i + 1]["start"] if i + 1 < len(navs) else float("inf")
        load = next((x for x in loads if nav["start"] <= x < nxt), None)
        if load is None:
            continue
        committed = commits.get(nav["loader"], float("inf"))
        out.append([h for h in hops if h["url"].startswith(("http://", "https://"))
                    and nav["start"] <= h["start"] <= load
                    and not (h["root"] and h["frame"] == frame and h["loader"] != nav["loader"]
                             and h["start"] < committed)])
    return out


def _response(h: Hop, r: dict[str, Any]) -> None:
    h["protocol"] = r.get("protocol") or None
    c = r.get("connectionId")
    cached = h["cached"] or r.get("fromDiskCache") or r.get("fromPrefetchCache")
    h["connection"] = c if not cached and isinstance(c, (int, float)) and c > 0 else None


def tally(navs: list[list[Hop]], records: list[dict[str, Any]]) -> list[int]:
    """before, recorded, protocol, connection, bytes agreeing, bytes known."""
    t = [0] * 6
    for hops in navs:
        doc = hops[0]
        rec = next((r for r in records if any(q["is_main_document"] and q["request_id"] == doc["id"]
                                               for q in r["requests"])), None)
        entries = {(q["request_id"], q["url"]): q for q in (rec or {}).get("requests", [])}
        for h in hops:
            t[0] += 1
            q = entries.get((h["id"], h["url"]))
            if q is None:
                continue
            t[1] += 1
            t[2] += q["protocol"] == h["protocol"]
            t[3] += q["connection_id"] == h["connection"]
            t[5] += h["bytes"] is not None
            t[4] += h["bytes"] is not None and q["encoded_bytes"] == h["bytes"]
    return t


def default_dirs() -> list[Path]:
    dirs = [ROOT / "tests/fixtures/cdp"]
    env = os.environ.get("PROTOLENS_PUBLIC_LOGS")
    if env:
        return [*dirs, Path(env)]
    for d in (ROOT, *ROOT.parents):
        if (d / "shared/devtools-logs").is_dir():
            return [*dirs, d / "shared/devtools-logs"]
    print("public corpus not found (PROTOLENS_PUBLIC_LOGS, shared/devtools-logs): own fixtures "
          "only", file=sys.stderr)
    return dirs


def main() -> int:
    dirs = [Path(a) for a in sys.argv[1:]] or default_dirs()
    total = [0] * 6
    print(f"{'log':46} {'before':>6} {'recorded':>8} {'':>7} {'protocol':>9} {'conn':>9} "
          f"{'bytes':>9}")

    def row(name: str, t: list[int]) -> str:
        pct = f"{100 * t[1] / t[0]:.1f}%" if t[0] else "-"
        return (f"{name:46} {t[0]:>6} {t[1]:>8} {pct:>7} {f'{t[2]}/{t[1]}':>9} "
                f"{f'{t[3]}/{t[1]}':>9} {f'{t[4]}/{t[5]}':>9}")

    for d in dirs:
        for f in sorted(p for p in d.iterdir() if p.name.endswith((".json", ".jsonl", ".gz"))
                        and ".expected." not in p.name and ".meta." not in p.name):
            data = f.read_bytes()
            navs = truth(events(data))
            if not navs:  # no navigation seen from its request with a load (late-*)
                continue
            t = tally(navs, [raw for raw, _ in replay(data, None, os.environ)])
            total = [a + b for a, b in zip(total, t, strict=True)]
            print(row(f.name, t))
    print(row("total", total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
