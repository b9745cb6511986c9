"""Builds NavigationRecord JSON objects per docs/RECORD.md (schema 1) for the host's tests.

Deterministic from a seed: ``make_record(n_requests=..., seed=...)``. Hosts a.test and b.test,
one connection per host (h2) unless ``family="h1"`` (6 per host, round-robin).
"""

from __future__ import annotations

import copy
import hashlib
import uuid
from typing import Any


def make_request(i: int, host: str, conn_id: int | None, family: str | None = "h2",
                 main: bool = False, encoded: int = 1000) -> dict[str, Any]:
    protocol = {"h1": "http/1.1", "h2": "h2", "h3": "h3", None: None}[family]
    return {
        "request_id": f"{1000 + i}.1:0", "url": f"https://{host}/obj/{i}", "host": host,
        "resource_type": "Document" if main else "Image", "method": "GET", "status": 200,
        "mime_type": "text/html" if main else "image/png", "protocol": protocol,
        "family": family, "connection_id": conn_id, "connection_reused": not main,
        "remote_ip": "127.0.0.1", "remote_port": 443, "encoded_bytes": encoded,
        "body_bytes": max(0, encoded - 200), "from_disk_cache": False,
        "from_memory_cache": False, "from_service_worker": False, "priority": "High",
        "alternate_protocol_usage": None, "start_ms": float(i), "first_byte_ms": i + 5.0,
        "end_ms": i + 10.0, "failed": False, "failure": None, "frame_id": "F1",
        "is_main_document": main,
    }


def make_record(n_requests: int = 5, seed: int = 0, family: str = "h2",
                source: str = "passive") -> dict[str, Any]:
    """A valid record with ``n_requests`` requests; connections and shares consistent."""
    digest = hashlib.sha256(f"{seed}:{n_requests}:{family}:{source}".encode()).digest()
    rid = str(uuid.UUID(bytes=digest[:16], version=4))
    per_host = 6 if family == "h1" else 1
    requests = []
    for i in range(n_requests):
        host = "a.test" if i % 3 != 2 else "b.test"
        base = 10 if host == "a.test" else 20
        conn = base + (i % per_host)
        requests.append(make_request(i, host, conn, family, main=(i == 0),
                                     encoded=1000 + 37 * i + seed))
    conns: dict[int, dict[str, Any]] = {}
    for r in requests:
        c = conns.setdefault(r["connection_id"], {
            "connection_id": r["connection_id"], "host": r["host"], "family": family,
            "remote_ip": "127.0.0.1", "remote_port": 443, "requests": 0, "bytes": 0,
            "share": 0.0, "first_ms": r["start_ms"], "last_ms": r["end_ms"], "upstream": False})
        c["requests"] += 1
        c["bytes"] += r["encoded_bytes"]
        c["last_ms"] = max(c["last_ms"], r["end_ms"])
    total = sum(c["bytes"] for c in conns.values())
    for c in conns.values():
        c["share"] = c["bytes"] / total if total else 0.0
    hosts = sorted({r["host"] for r in requests})
    return {
        "schema": 1, "id": rid, "source": source,
        "page": {
            "url": "https://a.test/page/", "origin": "https://a.test", "url_detail": "full",
            "started_at_ms": 1763812345678.5 + seed,
            "browser": {"name": "Chromium", "version": "156.0.8078.73"},
            "extension_version": "0.1.0",
            "network": {"effective_type": "4g", "rtt_ms": 50, "downlink_mbps": 10},
            "warm": False, "redirects": ["http://a.test/old"], "aborted": False, "error": None,
        },
        "milestones": {"ttfb_ms": 12.3, "fcp_ms": None, "lcp_ms": 99.0, "dcl_ms": 80.1,
                       "load_ms": 130.2 + seed, "first_image_ms": 95.0},
        "requests": requests,
        "connections": list(conns.values()),
        "hosts": [{"host": h, "connections": sum(1 for c in conns.values() if c["host"] == h),
                   "families": [family]} for h in hosts],
        "context": {},
    }


def with_change(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``record`` with ``path`` (``a.b[2].c``) set to ``value``, or deleted when
    ``value`` is the ``DELETE`` sentinel."""
    out = copy.deepcopy(record)
    target: Any = out
    parts = path.replace("[", ".[").split(".")
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    key: Any = int(last[1:-1]) if last.startswith("[") else last
    if value is DELETE:
        del target[key]
    else:
        target[key] = value
    return out


DELETE = object()
