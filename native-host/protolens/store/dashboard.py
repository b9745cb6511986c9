"""SQL for the extension's dashboard (native messaging ``query``, docs/MESSAGES.md): one named,
parameterized query per chart; ``messaging/queries.py`` validates the message and pages the reply.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from protolens.record.comparable import comparable_sql
from protolens.store.compare import MAIN_FAMILY

_DAY = "strftime('%Y-%m-%d', n.started_at_ms / 1000.0, 'unixepoch')"


DASHBOARD: dict[str, tuple[tuple[str, ...], str]] = {
    "protocol_counts": (
        ("family", "navigations", "failed"),
        f"SELECT coalesce({MAIN_FAMILY}, 'unknown') AS family, count(*), sum(n.failed) "
        "FROM navigations n {where} GROUP BY 1 ORDER BY 2 DESC, 1"),
    "plt_by_domain": (
        ("day", "origin", "family", "navigations", "mean_plt_ms", "min_plt_ms", "max_plt_ms"),
        f"SELECT {_DAY} AS day, n.origin, coalesce({MAIN_FAMILY}, 'unknown') AS family, "
        "count(*), avg(n.load_ms), min(n.load_ms), max(n.load_ms) "
        f"FROM navigations n {{where}} AND {comparable_sql('n', warm=False)} "
        "AND n.load_ms IS NOT NULL "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"),
    "domains": (
        ("origin", "navigations", "connections", "bytes", "requests"),
        "SELECT n.origin, count(*), "
        "sum((SELECT count(*) FROM connections c WHERE c.navigation_id = n.id "
        "     AND c.upstream = 0)), "
        "sum((SELECT coalesce(sum(r.encoded_bytes), 0) FROM requests r "
        "     WHERE r.navigation_id = n.id)) AS bytes, "
        "sum((SELECT count(*) FROM requests r WHERE r.navigation_id = n.id)) "
        "FROM navigations n {where} GROUP BY n.origin ORDER BY bytes DESC, n.origin"),
}
"""Dashboard queries: name -> (columns, SQL with a ``{where}`` slot); docs/MESSAGES.md."""


def dashboard_query(conn: sqlite3.Connection, name: str, *, source: str | None,
                    since_ms: float | None, origin: str | None, offset: int, limit: int
                    ) -> tuple[tuple[str, ...], list[list[Any]]]:
    """Rows ``offset`` .. ``offset + limit`` of a dashboard query, in a stable order."""
    columns, sql = DASHBOARD[name]
    clauses = ["n.started_at_ms >= ?"]
    params: list[Any] = [since_ms or 0.0]
    if source is not None:
        clauses.append("n.source = ?")
        params.append(source)
    if origin is not None:
        clauses.append("n.origin = ?")
        params.append(origin)
    text = sql.replace("{where}", "WHERE " + " AND ".join(clauses)) + " LIMIT ? OFFSET ?"
    rows = [list(r) for r in conn.execute(text, [*params, limit, offset])]
    return columns, rows
