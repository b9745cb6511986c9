"""SQL for the research toolkit (issue 5): rows for ``compare`` and ``plot``, reading tables for
``export``, writing bundles for ``merge``, dashboard queries, and the migration that adds
provenance (``bundles`` and a ``bundle`` column on every data table).

The DuckDB adapter (``share/duck.py``) runs the same ``COMPARE_SQL`` text over Parquet files, so
``compare`` gives the same numbers from a merged store and from the bundles themselves.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

COMPARE_COLUMNS = ("id", "source", "origin", "page", "campaign", "condition", "arm",
                   "main_family", "warm", "failed", "plt_ms", "ttfb_ms", "fcp_ms", "lcp_ms",
                   "first_image_ms")
"""What ``analysis.observe.observations`` reads from each navigation."""

COMPARE_SQL = """
SELECT n.id, n.source, n.origin, n.page, n.campaign, n.condition, n.arm,
       (SELECT r.family FROM requests r
         WHERE r.navigation_id = n.id AND r.is_main_document = 1
         ORDER BY r.seq DESC LIMIT 1) AS main_family,
       n.warm, n.failed, n.load_ms AS plt_ms, n.ttfb_ms, n.fcp_ms, n.lcp_ms, n.first_image_ms
FROM navigations n
"""
"""Portable between SQLite and DuckDB (same text; the WHERE clause is appended)."""


def compare_where(campaign: str | None, source: str | None) -> tuple[str, list[Any]]:
    """The WHERE clause (with ``?`` parameters) selecting a campaign or a source."""
    if campaign is not None:
        return " WHERE n.campaign = ?", [campaign]
    if source is not None:
        return " WHERE n.source = ?", [source]
    return "", []


def compare_rows(conn: sqlite3.Connection, campaign: str | None = None,
                 source: str | None = None) -> list[dict[str, Any]]:
    """Navigation rows for ``compare`` of one campaign or one source, in id order."""
    where, params = compare_where(campaign, source)
    cur = conn.execute(COMPARE_SQL + where + " ORDER BY n.id", params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def known_campaigns(conn: sqlite3.Connection) -> list[str]:
    """Campaign names present in ``navigations`` (for error messages)."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT campaign FROM navigations WHERE campaign IS NOT NULL ORDER BY 1")]


def _dicts(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)
