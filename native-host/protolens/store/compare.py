"""SQL for the analysis readers: the rows ``compare`` and ``plot`` read from a store, and the
plain aggregate ``scripts/bench/compare.py`` measures against. ``COMPARE_SQL`` is portable: the
DuckDB engine (``store/duck.py``, ``store/dataset.py``) runs the same text over Parquet files, so
``compare`` gives the same numbers from a merged store and from bundles.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from protolens.record.comparable import comparable_sql
from protolens.store.rows import dicts

VISUAL_COLUMNS = ("speed_index_ms", "first_visual_change_ms", "visual_complete_85_ms",
                  "visual_complete_99_ms", "last_visual_change_ms")
"""The visual milestones (``record/columns.py`` VISUAL_MILESTONES), read like PLT."""
COMPARE_COLUMNS = ("id", "source", "origin", "page", "campaign", "condition", "arm",
                   "main_family", "warm", "failed", "incomplete",
                   "plt_ms", "ttfb_ms", "fcp_ms", "lcp_ms",
                   "first_image_ms", *VISUAL_COLUMNS)
"""What ``analysis.observe.observations`` reads from each navigation."""


COMPARE_SQL = """
SELECT n.id, n.source, n.origin, n.page, n.campaign, n.condition, n.arm,
       (SELECT r.family FROM requests r
         WHERE r.navigation_id = n.id AND r.is_main_document = 1
         ORDER BY r.seq DESC LIMIT 1) AS main_family,
       n.warm, n.failed, n.incomplete, n.load_ms AS plt_ms, n.ttfb_ms, n.fcp_ms, n.lcp_ms,
       n.first_image_ms,
       n.speed_index_ms, n.first_visual_change_ms, n.visual_complete_85_ms,
       n.visual_complete_99_ms, n.last_visual_change_ms
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


PLOT_METRICS = {"plt": "s.plt_ms", "ttfb": "s.ttfb_ms", "fcp": "s.fcp_ms", "lcp": "s.lcp_ms",
                "first_image": "s.first_image_ms",
                **{c.removesuffix("_ms"): f"n.{c}" for c in VISUAL_COLUMNS}}
"""What ``plot --metric`` may draw, and where each is read (``analysis.observe.METRICS``)."""


def plot_navigations(conn: sqlite3.Connection, campaign: str, warm: bool = False,
                     metric: str = "plt") -> list[dict[str, Any]]:
    """The loads a comparison takes (``record/comparable.py``: successful, cold or warm,
    complete) of a campaign: page, condition, arm, repetition, PLT,
    ``metric`` (as ``<metric>_ms``, when not PLT), bytes."""
    extra = "" if metric == "plt" else f"{PLOT_METRICS[metric]} AS {metric}_ms, "
    return dicts(conn.execute(
        f"SELECT s.id, s.page, s.condition, s.arm, s.repetition, s.plt_ms, {extra}s.bytes "
        "FROM navigation_summary s JOIN navigations n ON n.id = s.id "
        f"WHERE s.campaign = ? AND {comparable_sql('n')} ORDER BY s.page, s.condition, "
        "s.arm, s.repetition, s.id", (campaign, int(warm))))


def plot_connection_shares(conn: sqlite3.Connection, campaign: str, warm: bool = False
                           ) -> list[dict[str, Any]]:
    """Each connection's byte share, per load of a campaign a comparison takes, as on the wire: the
    proxy's upstream connections where it reported them (an H2-Parallel load shows its N
    connections), else the browser's own."""
    return dicts(conn.execute(
        "SELECT s.navigation_id, n.page, n.condition, n.arm, n.repetition, s.connection_id, "
        "s.bytes, s.share, s.upstream "
        "FROM connection_shares s JOIN navigations n ON n.id = s.navigation_id "
        f"WHERE n.campaign = ? AND {comparable_sql('n')} "
        "AND s.upstream = (SELECT max(c.upstream) FROM connections c "
        "                  WHERE c.navigation_id = s.navigation_id) "
        "ORDER BY n.page, n.arm, n.condition, n.repetition, s.navigation_id, s.bytes DESC",
        (campaign, int(warm))))


MAIN_FAMILY = ("(SELECT r.family FROM requests r WHERE r.navigation_id = n.id "
                "AND r.is_main_document = 1 ORDER BY r.seq DESC LIMIT 1)")


def campaign_aggregate(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Count and mean PLT per page x condition x arm over the same rows ``compare_rows`` reads
    (main document included): the plain-SQL yardstick of scripts/bench/compare.py."""
    return dicts(conn.execute(
        f"SELECT n.page, n.condition, n.arm, {MAIN_FAMILY} AS family, count(*) AS n, "
        "avg(n.load_ms) AS mean_plt_ms FROM navigations n WHERE n.campaign = ? "
        "AND n.failed = 0 AND n.warm = 0 GROUP BY 1, 2, 3, 4", (campaign,)))
