"""A record of a three-host page whose HTTP/3 connection was coalesced: connection 7 (h3) carried
a.test and b.test, connection 8 (h2) carried c.test, and one image came from the memory cache.
As the issue's example (one HTTP/3 connection served two hosts of a three-host test page).
With ``upstream=True`` it is a proxied lab load: the proxy also reported two upstream
connections (ids 1 and 2) to the server, as on the wire."""

from __future__ import annotations

from typing import Any

from scripts.devkit.navrecord_builder import make_record, make_request

LONG = "https://b.test/assets/" + "x" * 90 + "/END.png"


def coalesced_record(upstream: bool = False) -> dict[str, Any]:
    rec = make_record(1, seed=77)
    rec["id"] = "c0a1e5ce-0000-4000-8000-000000000077"
    reqs = [make_request(0, "a.test", 7, "h3", main=True, encoded=20_000),
            make_request(1, "a.test", 7, "h3", encoded=30_000),
            make_request(2, "b.test", 7, "h3", encoded=10_000),
            make_request(3, "c.test", 8, "h2", encoded=40_000),
            make_request(4, "b.test", 7, "h3", encoded=0),
            make_request(5, "c.test", None, None, encoded=0)]
    reqs[4]["url"] = LONG
    reqs[5].update(from_memory_cache=True, status=200, protocol=None, remote_ip=None,
                   remote_port=None)
    for i, r in enumerate(reqs):
        r["start_ms"], r["first_byte_ms"], r["end_ms"] = 10.0 * i, 10.0 * i + 4, 10.0 * i + 9
    total = 100_000
    rec["requests"] = reqs
    rec["connections"] = [
        {"connection_id": 7, "host": "a.test", "family": "h3", "remote_ip": "10.0.0.1",
         "remote_port": 443, "requests": 4, "bytes": 60_000, "share": 0.6, "first_ms": 0.0,
         "last_ms": 49.0, "upstream": False},
        {"connection_id": 8, "host": "c.test", "family": "h2", "remote_ip": "10.0.0.2",
         "remote_port": 443, "requests": 1, "bytes": 40_000, "share": 0.4, "first_ms": 30.0,
         "last_ms": 39.0, "upstream": False}]
    assert sum(c["bytes"] for c in rec["connections"]) == total
    if upstream:
        rec["source"] = "lab"
        rec["connections"] += [
            {"connection_id": i, "host": h, "family": "h2", "remote_ip": "10.9.0.1",
             "remote_port": 443, "requests": n, "bytes": b, "share": b / total,
             "first_ms": 1.0, "last_ms": 45.0, "upstream": True}
            for i, h, n, b in ((1, "a.test", 3, 60_000), (2, "c.test", 1, 40_000))]
    rec["hosts"] = [{"host": "a.test", "connections": 1, "families": ["h3"]},
                    {"host": "b.test", "connections": 1, "families": ["h3"]},
                    {"host": "c.test", "connections": 1, "families": ["h2"]}]
    rec["milestones"] = {"ttfb_ms": 4.0, "fcp_ms": 25.0, "lcp_ms": 41.0, "dcl_ms": 30.0,
                         "load_ms": 59.0, "first_image_ms": 19.0}
    return rec
