"""SQL for the research toolkit (issue 5): rows for ``compare`` and ``plot``, reading tables for
``export``, writing bundles for ``merge``, dashboard queries, and the migration that adds
provenance (``bundles`` and a ``bundle`` column on every data table).

The DuckDB adapter (``share/duck.py`` and ``store/duck.py``) runs the same ``COMPARE_SQL`` text
over Parquet files, so ``compare`` gives the same numbers from a merged store and from the bundles
themselves.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from protolens.store.tx import transaction

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


def local_ingest_window(conn: sqlite3.Connection, after_ms: float) -> tuple[int, float | None]:
    """Locally recorded navigations stored after ``after_ms``: their count and the latest
    ``ingested_at_ms`` (``contribute``'s next high-water mark)."""
    count, latest = conn.execute(
        "SELECT count(*), max(ingested_at_ms) FROM navigations WHERE bundle IS NULL "
        "AND ingested_at_ms > ?", (after_ms,)).fetchone()
    return int(count), latest


def known_campaigns(conn: sqlite3.Connection) -> list[str]:
    """Campaign names present in ``navigations`` (for error messages)."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT campaign FROM navigations WHERE campaign IS NOT NULL ORDER BY 1")]


def _dicts(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur]


def _placeholders(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


# --- provenance: the migration ---------------------------------------------------------------

DATA_TABLES = ("navigations", "requests", "connections", "hosts")



# --- export: local rows only (never re-share a merged bundle) --------------------------------

_EXPORT_SQL = {
    "navigations": "SELECT * FROM navigations n WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                   "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                   "ORDER BY n.started_at_ms, n.id",
    "requests": "SELECT t.* FROM requests t JOIN navigations n ON n.id = t.navigation_id "
                "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                "ORDER BY t.navigation_id, t.seq",
    "connections": "SELECT t.* FROM connections t JOIN navigations n ON n.id = t.navigation_id "
                   "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
                   "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? "
                   "ORDER BY t.navigation_id, t.upstream, t.connection_id",
    "hosts": "SELECT t.* FROM hosts t JOIN navigations n ON n.id = t.navigation_id "
             "WHERE n.bundle IS NULL AND n.started_at_ms >= ? "
             "AND n.ingested_at_ms > ? AND n.ingested_at_ms <= ? ORDER BY t.navigation_id, t.host",
}


def export_rows(conn: sqlite3.Connection, table: str, since_ms: float | None,
                batch: int = 50_000, ingested: tuple[float, float] = (-1.0, float("inf")),
                ) -> Iterator[list[dict[str, Any]]]:
    """Every locally recorded row of ``table`` whose navigation started at or after
    ``since_ms`` and was stored in ``ingested`` (after the first time, up to and including the
    second; ``contribute`` sends only what is new), in batches (a large store is never held in
    memory at once)."""
    cur = conn.execute(_EXPORT_SQL[table], (since_ms or 0.0, *ingested))
    names = [d[0] for d in cur.description]
    while rows := cur.fetchmany(batch):
        yield [dict(zip(names, row, strict=True)) for row in rows]


# --- merge ---------------------------------------------------------------------------------

def bundle_imported(conn: sqlite3.Connection, checksum: str) -> bool:
    return conn.execute("SELECT 1 FROM bundles WHERE checksum = ?", (checksum,)).fetchone() \
        is not None


def _existing_ids(conn: sqlite3.Connection, ids: Sequence[str]) -> set[str]:
    found: set[str] = set()
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        found.update(r[0] for r in conn.execute(
            f"SELECT id FROM navigations WHERE id IN ({_placeholders(chunk)})", chunk))
    return found


@dataclass(frozen=True)
class BundleRows:
    """One validated bundle's rows and provenance, ready to import."""

    checksum: str
    manifest: str
    contributor_id: str
    protolens_version: str | None
    exported_at: str | None
    tables: Mapping[str, tuple[Sequence[str], Iterable[Sequence[Any]]]]
    nav_ids: Sequence[str]


def _import_one(conn: sqlite3.Connection, b: BundleRows, now_ms: float
                ) -> tuple[int, int] | None:
    if bundle_imported(conn, b.checksum):
        return None
    skip = _existing_ids(conn, b.nav_ids)
    cur = conn.execute(
        "INSERT INTO bundles (checksum, contributor_id, protolens_version, exported_at, "
        "imported_at_ms, navigations, skipped, manifest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (b.checksum, b.contributor_id, b.protolens_version, b.exported_at, now_ms,
         len(b.nav_ids) - len(skip), len(skip), b.manifest))
    bundle = cur.lastrowid
    for table in DATA_TABLES:
        columns, rows = b.tables[table]
        key = columns.index("id" if table == "navigations" else "navigation_id")
        sql = (f"INSERT INTO {table} ({', '.join(columns)}, bundle) "
               f"VALUES ({_placeholders(columns)}, ?)")
        conn.executemany(sql, ((*row, bundle) for row in rows if row[key] not in skip))
    return len(b.nav_ids) - len(skip), len(skip)


def import_bundles(conn: sqlite3.Connection, bundles: Sequence[BundleRows], now_ms: float,
                   dry_run: bool = False) -> list[tuple[int, int] | None]:
    """All bundles in ONE transaction (issue 15 item 9: a merge of N bundles is all or
    nothing): each its ``bundles`` row, then every table's rows stamped with it. Navigations
    already present (by id, also from an earlier bundle of the same call) are skipped with
    their child rows. Per bundle: (navigations imported, skipped), or None if it was imported
    before. ``conn`` must be in autocommit mode; any exception rolls everything back, and so
    does ``dry_run``."""
    try:
        with transaction(conn):
            done = [_import_one(conn, b, now_ms) for b in bundles]
            if dry_run:
                raise _RolledBack
    except _RolledBack:
        pass
    return done


class _RolledBack(Exception):
    """Leaves a dry run's transaction through its rollback."""


# --- plots ---------------------------------------------------------------------------------

def plot_navigations(conn: sqlite3.Connection, campaign: str, warm: bool = False
                     ) -> list[dict[str, Any]]:
    """Successful cold (or warm) loads of a campaign: page, condition, arm, repetition, PLT,
    bytes."""
    return _dicts(conn.execute(
        "SELECT id, page, condition, arm, repetition, plt_ms, bytes FROM navigation_summary "
        "WHERE campaign = ? AND failed = 0 AND warm = ? ORDER BY page, condition, arm, "
        "repetition, id", (campaign, int(warm))))


def plot_connection_shares(conn: sqlite3.Connection, campaign: str, warm: bool = False
                           ) -> list[dict[str, Any]]:
    """Each connection's byte share, per successful load of a campaign, as on the wire: the
    proxy's upstream connections where it reported them (an H2-Parallel load shows its N
    connections, issue 6), else the browser's own."""
    return _dicts(conn.execute(
        "SELECT s.navigation_id, n.page, n.condition, n.arm, n.repetition, s.connection_id, "
        "s.bytes, s.share, s.upstream "
        "FROM connection_shares s JOIN navigations n ON n.id = s.navigation_id "
        "WHERE n.campaign = ? AND n.failed = 0 AND n.warm = ? "
        "AND s.upstream = (SELECT max(c.upstream) FROM connections c "
        "                  WHERE c.navigation_id = s.navigation_id) "
        "ORDER BY n.page, n.arm, n.condition, n.repetition, s.navigation_id, s.bytes DESC",
        (campaign, int(warm))))


# --- dashboard (native messaging ``query``) -------------------------------------------------

_MAIN_FAMILY = ("(SELECT r.family FROM requests r WHERE r.navigation_id = n.id "
                "AND r.is_main_document = 1 ORDER BY r.seq DESC LIMIT 1)")
_DAY = "strftime('%Y-%m-%d', n.started_at_ms / 1000.0, 'unixepoch')"

DASHBOARD: dict[str, tuple[tuple[str, ...], str]] = {
    "protocol_counts": (
        ("family", "navigations", "failed"),
        f"SELECT coalesce({_MAIN_FAMILY}, 'unknown') AS family, count(*), sum(n.failed) "
        "FROM navigations n {where} GROUP BY 1 ORDER BY 2 DESC, 1"),
    "plt_by_domain": (
        ("day", "origin", "family", "navigations", "mean_plt_ms", "min_plt_ms", "max_plt_ms"),
        f"SELECT {_DAY} AS day, n.origin, coalesce({_MAIN_FAMILY}, 'unknown') AS family, "
        "count(*), avg(n.load_ms), min(n.load_ms), max(n.load_ms) "
        "FROM navigations n {where} AND n.failed = 0 AND n.load_ms IS NOT NULL "
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


# --- bulk loading (benchmark and test stores) -------------------------------------------

def insert_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                rows: Iterable[Sequence[Any]]) -> None:
    """Insert many rows into one data table in one transaction (``executemany``)."""
    if table not in DATA_TABLES:
        raise ValueError(f"table: not a data table {table!r}")
    conn.execute("BEGIN")
    try:
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                         f"({_placeholders(columns)})", rows)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def campaign_aggregate(conn: sqlite3.Connection, campaign: str) -> list[dict[str, Any]]:
    """Count and mean PLT per page x condition x arm over the same rows ``compare_rows`` reads
    (main document included): the plain-SQL yardstick of scripts/bench/compare.py."""
    return _dicts(conn.execute(
        f"SELECT n.page, n.condition, n.arm, {_MAIN_FAMILY} AS family, count(*) AS n, "
        "avg(n.load_ms) AS mean_plt_ms FROM navigations n WHERE n.campaign = ? "
        "AND n.failed = 0 AND n.warm = 0 GROUP BY 1, 2, 3, 4", (campaign,)))
