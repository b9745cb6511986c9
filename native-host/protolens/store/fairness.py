"""Fairness results: per pair, repetition and side of a ``lab fairness`` campaign, the side's
downlink bytes, its share of the bottleneck while both loaded, its throughput, the pair's Jain
index and the 100 ms byte series (IFIP'18 Sec. V-D, Fig. 7). The sides' page loads are ordinary
``loads`` and ``navigations`` rows, joined by ``load_id``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from protolens.store.tx import transaction

COLUMNS = ("campaign", "pair", "repetition", "side", "arm", "load_id", "server_ip", "bytes",
           "share", "mbps", "jain", "contention_ms", "connections", "bin_ms", "series",
           "started_at_ms", "start_ms")


def store_repetition(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Both sides of one repetition, in one transaction."""
    with transaction(conn):
        conn.executemany(
            f"INSERT INTO fairness ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
            [tuple(json.dumps(r[c]) if c == "series" else r.get(c) for c in COLUMNS)
             for r in rows])


def fairness_rows(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Every side of every repetition, with the side's PLT (its navigation, if one was stored)."""
    cur = conn.execute("""
        SELECT f.*, (SELECT n.load_ms FROM navigations n WHERE n.load_id = f.load_id
                     AND f.load_id IS NOT NULL ORDER BY n.started_at_ms LIMIT 1) AS plt_ms
        FROM fairness f WHERE f.campaign = ? ORDER BY f.pair, f.repetition, f.side""",
                       (campaign,))
    names = [d[0] for d in cur.description]
    out = []
    for row in cur:
        item = dict(zip(names, row, strict=True))
        item["series"] = json.loads(item["series"])
        out.append(item)
    return out
