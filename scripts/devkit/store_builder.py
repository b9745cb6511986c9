"""Small real stores for the research tests: records built by ``make_record`` with lab tags and
chosen milestones, ingested through the host's own ``ingest`` (no mocks)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from protolens.record import parse_record
from protolens.store import ingest, open_rw
from scripts.devkit.navrecord_builder import make_record

NOW_MS = 1_763_900_000_000.0


def lab_record(seed: int, campaign: str, page: str, condition: str, arm: str, rep: int,
               plt_ms: float, n_requests: int = 6, family: str | None = None,
               source: str = "lab", origin_host: str = "a.test") -> dict[str, Any]:
    fam = family or (arm if arm in ("h1", "h2", "h3") else "h2")
    rec = make_record(n_requests=n_requests, seed=seed, family=fam, source=source)
    rec["page"]["url"] = f"https://{origin_host}/{page}/index.html?user=secret#frag"
    rec["page"]["origin"] = f"https://{origin_host}"
    rec["page"]["redirects"] = [f"http://{origin_host}/old?token=abc"]
    rec["requests"][0]["url"] = rec["page"]["url"]
    rec["requests"][0]["host"] = origin_host
    rec["milestones"]["load_ms"] = plt_ms
    rec["milestones"]["ttfb_ms"] = plt_ms / 10
    rec["milestones"]["fcp_ms"] = plt_ms / 3
    rec["milestones"]["first_image_ms"] = plt_ms / 2
    if source != "passive":  # lab loads carry the visual metrics (paint capture is on by default)
        rec["milestones"].update(first_visual_change_ms=plt_ms / 4, speed_index_ms=plt_ms * 0.6,
                                 visual_complete_85_ms=plt_ms * 0.7,
                                 visual_complete_99_ms=plt_ms * 0.8,
                                 last_visual_change_ms=plt_ms * 0.9)
        rec["context"] = {"campaign": campaign, "page": page, "condition": condition,
                          "arm": arm, "repetition": rep, "server_cc": "cubic",
                          "command_line": ["/usr/bin/chromium", "--user-data-dir=/home/alice"],
                          "load_id": f"load-{seed}", "note": "free text from alice"}
    return rec


def ingest_all(db: Path, records: Iterable[dict[str, Any]]) -> int:
    conn = open_rw(db, now_ms=NOW_MS, synchronous="OFF")
    n = 0
    for rec in records:
        # the lab tags come from the lab runner's context (as the host's lab context), never from
        # the record itself (docs/RECORD.md "context")
        n += ingest(conn, parse_record(rec), rec.get("context", {}), NOW_MS)
    conn.close()
    return n


def campaign_store(db: Path, campaign: str = "camp", reps: int = 8, seed: int = 7,
                   shift_ms: float = 1500.0) -> int:
    """Two pages x two conditions x arms h1/h2/h3: under ``lossy`` h2 is ``shift_ms`` slower."""
    rng = np.random.default_rng(seed)
    recs = []
    i = 0
    for page in ("small", "large"):
        for cond in ("clean", "lossy"):
            for arm in ("h1", "h2", "h3"):
                for rep in range(reps):
                    base = 1000.0 if page == "small" else 4000.0
                    plt = base + rng.normal(0, 50)
                    if cond == "lossy" and arm == "h2":
                        plt += shift_ms
                    recs.append(lab_record(10_000 + i, campaign, page, cond, arm, rep, plt,
                                           n_requests=4 if page == "small" else 9))
                    i += 1
    return ingest_all(db, recs)


def dump(db: Path) -> list[str]:
    """Every row of every table (and the schema) as text, for before/after comparisons."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()
