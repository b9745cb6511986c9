"""Synthetic stores of any size, inserted directly with ``executemany`` in large transactions
(for the paging test and scripts/bench/compare.py). Rows follow docs/SCHEMA.md; values are drawn
from a seeded generator, so a store is reproducible."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from protolens.store import open_rw
from protolens.store.bundles import insert_rows

NAV_COLUMNS = ("id", "schema", "source", "url", "origin", "url_detail", "started_at_ms",
               "browser_name", "browser_version", "extension_version", "warm", "redirects",
               "aborted", "failed", "ttfb_ms", "load_ms", "campaign", "page", "condition",
               "arm", "repetition", "context", "ingested_at_ms")
REQ_COLUMNS = ("navigation_id", "seq", "request_id", "url", "host", "resource_type", "method",
               "family", "connection_id", "encoded_bytes", "body_bytes", "from_disk_cache",
               "from_memory_cache", "from_service_worker", "start_ms", "failed",
               "is_main_document")
CONN_COLUMNS = ("navigation_id", "connection_id", "upstream", "host", "family", "requests",
                "bytes", "share")
ARMS = ("h1", "h2", "h3")
T0 = 1_760_000_000_000.0


def _nav_id(g: int, rng_bytes: bytes) -> str:
    """Time-ordered ids (UUIDv7-like: index first) so the B-tree inserts append."""
    return str(uuid.UUID(bytes=g.to_bytes(6, "big") + rng_bytes[6:], version=4))


def generate(db: Path, navigations: int, requests_per_nav: int, *, seed: int = 1,
             pages: int = 100, conditions: int = 2, origins: int | None = None,
             origin_len: int = 0, source: str = "lab", chunk: int = 20_000) -> None:
    """A store with ``navigations`` loads of campaign ``bench`` (pages x conditions x h1/h2/h3,
    h2 slower under the odd conditions), each with ``requests_per_nav`` requests."""
    rng = np.random.default_rng(seed)
    conn = open_rw(db, now_ms=T0, synchronous="OFF")
    for start in range(0, navigations, chunk):
        n = min(chunk, navigations - start)
        navs, reqs, conns = _chunk(rng, start, n, requests_per_nav, pages, conditions,
                                   origins, origin_len, source)
        insert_rows(conn, "navigations", NAV_COLUMNS, navs)
        insert_rows(conn, "requests", REQ_COLUMNS, reqs)
        insert_rows(conn, "connections", CONN_COLUMNS, conns)
    conn.close()


def _chunk(rng: np.random.Generator, start: int, n: int, k: int, pages: int, conditions: int,
           origins: int | None, origin_len: int, source: str
           ) -> tuple[list[tuple[Any, ...]], Iterator[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ids = [_nav_id(start + i, rng.bytes(16)) for i in range(n)]
    plt = rng.lognormal(7.5, 0.35, n)
    sizes = rng.integers(200, 60_000, size=(n, k))
    navs: list[tuple[Any, ...]] = []
    conns: list[tuple[Any, ...]] = []
    pad = "x" * origin_len
    for i in range(n):
        g = start + i
        arm = ARMS[g % 3]
        cond = (g // 3) % conditions
        page = (g // (3 * conditions)) % pages
        slow = 1.4 if (arm == "h2" and cond % 2) else 1.0
        host = f"site{(g if origins is None else g % origins)}{pad}.example"
        origin = f"https://{host}"
        navs.append((ids[i], 1, source, origin + "/", origin, "path", T0 + g * 1000.0,
                     "Chromium", "156", "0.1.0", 0, "[]", 0, 0, float(plt[i] / 10),
                     float(plt[i] * slow), "bench" if source == "lab" else None,
                     f"p{page}", f"c{cond}", arm, g // (3 * conditions * pages), "{}",
                     T0 + g * 1000.0))
        total = int(sizes[i].sum())
        nconn = 6 if arm == "h1" else 1
        for c in range(nconn):
            b = int(sizes[i][c::nconn].sum())
            conns.append((ids[i], c, 0, host, arm, len(range(c, k, nconn)), b,
                          b / total if total else 0.0))

    def requests() -> Iterator[tuple[Any, ...]]:
        for i in range(n):
            arm = ARMS[(start + i) % 3]
            nconn = 6 if arm == "h1" else 1
            nid = ids[i]
            host = navs[i][4][8:]
            for s in range(k):
                b = int(sizes[i][s])
                yield (nid, s, f"{s}.1:0", f"https://{host}/o/{s}", host,
                       "Document" if s == 0 else "Image", "GET", arm, s % nconn, b, b - 100,
                       0, 0, 0, float(s), 0, 1 if s == 0 else 0)

    return navs, requests(), conns
