"""SQL over a collector's Parquet dataset, run by DuckDB (embedded) or handed to Spark
(``store/spark.py``): rows for ``compare --dataset`` and the cells of ``collector publish``.

The dataset is Hive-partitioned (``table=<name>/day=<day>/<bundle>.parquet``, see
``collector/layout.py``) and each row carries ``contributor`` and ``bundle``. Navigation ids are
unique only within a bundle, so joins are on (bundle, id). The main document's protocol is taken
with a GROUP BY (``arg_max``), not a correlated subquery, so it scales as a join.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa  # type: ignore[import-untyped]

from protolens.record.columns import VISUAL_MILESTONES
from protolens.record.comparable import comparable_sql
from protolens.store.dataset_layout import DATASET as DATASET
from protolens.store.dataset_layout import table_glob as table_glob

FIRST_COPIES = """(SELECT * FROM (SELECT n0.*, row_number() OVER (PARTITION BY n0.id
                                                     ORDER BY n0.day, n0.bundle) AS copy_rank
                     FROM navigations n0) t0
      WHERE t0.copy_rank = 1)"""
MAIN_FAMILY = """(SELECT r.bundle, r.navigation_id, {argmax}(r.family, r.seq) AS family
           FROM requests r {only}
           WHERE r.is_main_document = 1 GROUP BY r.bundle, r.navigation_id)"""

DATASET_COMPARE_SQL = f"""
SELECT n.id, n.source, n.origin, n.page, n.campaign,
       coalesce(n.condition, n.network_effective_type) AS condition, n.arm,
       m.family AS main_family, n.warm, n.failed, n.incomplete, n.load_ms AS plt_ms, n.ttfb_ms,
       n.fcp_ms, n.lcp_ms, n.first_image_ms, n.contributor, n.bundle,
       n.network_effective_type AS network
FROM {FIRST_COPIES} n
LEFT JOIN {MAIN_FAMILY} m
  ON m.bundle = n.bundle AND m.navigation_id = n.id
"""
"""``{argmax}``: DuckDB ``arg_max``, Spark ``max_by``. One navigation, one vote: a navigation
id (a UUID v4 the extension drew, docs/RECORD.md) met in several bundles counts once, its first
upload's copy (by day, then bundle), whichever contributor sent the others. ``condition``: the
condition tag, else the network's effective type (navigator.connection.effectiveType), so
real-user data are compared per network type. ``{only}``: empty, or a join that keeps the
requests of some navigations only (``UNARMED``)."""

UNARMED = """JOIN (SELECT DISTINCT bundle, id FROM navigations WHERE arm IS NULL OR arm = '') u
             ON u.bundle = r.bundle AND u.id = r.navigation_id"""
"""The navigations without an arm tag: the only ones whose main document's protocol stands in
for the arm in ``compare``'s cells (``coalesce(nullif(arm, ''), main_family)``), so the
requests of tagged experiments (50 rows a load) need not be grouped at all."""


class DatasetError(Exception):
    """No dataset at the path, or unreadable files."""


def where(campaign: str | None, source: str | None) -> tuple[str, list[Any]]:
    if campaign is not None:
        return " WHERE n.campaign = ?", [campaign]
    if source is not None:
        return " WHERE n.source = ?", [source]
    return "", []


def connect(data: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with one view per table over the dataset's files."""
    if not any((data / "dataset").glob("table=navigations/*/*.parquet")):
        raise DatasetError(f"{data}: no collector dataset here (no dataset/table=navigations/)")
    con = duckdb.connect()
    for name in ("navigations", "requests", "connections", "hosts"):
        glob = table_glob(data, name).replace("'", "''")
        files = f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM {files}")
        if name == "navigations" and \
                "incomplete" not in con.sql(f"SELECT * FROM {name} LIMIT 0").columns:
            # bundles before schema 5 have no incomplete flag: complete, as record/comparable.py
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT *, "
                        f"CAST(NULL AS BIGINT) AS incomplete FROM {files}")
    return con


_HOST = "regexp_extract(x.origin, '^[a-z]+://([^:/]+)', 1)"
_CELL_KEYS = {
    "campaign": ("x.page", "x.condition", "x.arm"),
    "passive": (_HOST, "'all'", "x.main_family"),
    "experiment": (f"coalesce(nullif(x.page, ''), {_HOST})",
                   "coalesce(nullif(x.condition, ''), 'all')",
                   "coalesce(nullif(x.arm, ''), x.main_family)"),
}
METRIC_COLUMNS = {"plt": "plt_ms", "ttfb": "ttfb_ms", "fcp": "fcp_ms", "lcp": "lcp_ms",
                  "first_image": "first_image_ms"}
DIALECTS = {"duckdb": {"argmax": "arg_max", "values": "list_sort(list(v))"},
            "spark": {"argmax": "max_by", "values": "array_sort(collect_list(v))"}}


def cells_sql(mode: str, metric: str, dialect: str, include_incomplete: bool = False) -> str:
    """Per contributor and cell (group, condition, arm) of ``analysis/observe.py``'s ``mode``:
    n and the sorted values of ``metric`` over the loads a comparison takes (successful, cold or
    warm (the first ``?``), complete unless ``include_incomplete``: ``record/comparable.py``)
    of one campaign or source (the second ``?``). The same text runs on DuckDB and Spark SQL
    (``dialect`` fills in the two functions they name differently). The median is taken from
    the sorted values in Python (``with_median``), the same arithmetic for both engines."""
    group, condition, arm = _CELL_KEYS[mode]
    d = DIALECTS[dialect]
    column = "campaign" if mode == "campaign" else "source"
    return f"""
SELECT contributor, grp, cond, arm, count(*) AS n, {d['values']} AS vals
FROM (SELECT x.contributor, {group} AS grp, {condition} AS cond, {arm} AS arm,
             x.{METRIC_COLUMNS[metric]} AS v
      FROM ({DATASET_COMPARE_SQL.format(argmax=d['argmax'], only=UNARMED)}) x
      WHERE {comparable_sql('x', include_incomplete=include_incomplete)} AND x.{column} = ?) y
WHERE grp IS NOT NULL AND cond IS NOT NULL AND arm IS NOT NULL AND v IS NOT NULL
GROUP BY contributor, grp, cond, arm
ORDER BY contributor, grp, cond, arm"""


def incomplete_loads(data: Path, mode: str, warm: bool, key: str) -> int:
    """How many successful cold (or warm) loads of one campaign or source have an incomplete
    record (each navigation once): what the cells leave out unless ``include_incomplete``. A
    plain scan of the navigations, for the message ``compare`` prints."""
    column = "campaign" if mode == "campaign" else "source"
    rows = _query(data, "SELECT count(DISTINCT n.id) AS n FROM navigations n WHERE "
                        f"{comparable_sql('n', include_incomplete=True)} AND n.incomplete = 1 "
                        f"AND n.{column} = ?", [int(warm), key])
    return int(rows[0]["n"])


def with_median(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cells with ``median_ms`` (the middle value, or the mean of the two middle ones)."""
    for r in rows:
        r["median_ms"] = statistics.median(r["vals"])
    return rows


def cells(data: Path, mode: str, metric: str, warm: bool, key: str,
          include_incomplete: bool = False) -> list[dict[str, Any]]:
    """``cells_sql`` run by DuckDB (``key``: the campaign or the source)."""
    return with_median(_query(data, cells_sql(mode, metric, "duckdb", include_incomplete),
                              [int(warm), key]))


def cells_arrow(data: Path, mode: str, metric: str, warm: bool, key: str,
                include_incomplete: bool = False) -> pa.Table:
    """``cells`` as an Arrow table (no median): no Python object per cell or per load."""
    try:
        con = connect(data)
        try:
            return con.sql(cells_sql(mode, metric, "duckdb", include_incomplete),
                           params=[int(warm), key]).to_arrow_table()
        finally:
            con.close()
    except duckdb.Error as exc:
        raise DatasetError(f"{data}: {exc}") from None


def _query(data: Path, sql: str, params: list[Any],
           tables: dict[str, pa.Table] | None = None) -> list[dict[str, Any]]:
    """``sql`` over the dataset at ``data`` (plus ``tables``, registered under their names),
    as dicts; a DuckDB error becomes a one-line DatasetError."""
    try:
        con = connect(data)
        try:
            for name, table in (tables or {}).items():
                con.register(name, table)
            cur = con.execute(sql, params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        finally:
            con.close()
    except duckdb.Error as exc:
        raise DatasetError(f"{data}: {exc}") from None


def compare_rows(data: Path, campaign: str | None = None, source: str | None = None
                 ) -> list[dict[str, Any]]:
    """The rows of ``store.compare.compare_rows`` plus ``contributor`` and ``bundle``, from
    every navigation in the dataset, in (bundle, id) order."""
    clause, params = where(campaign, source)
    return _query(data, DATASET_COMPARE_SQL.format(argmax="arg_max", only="") + clause
                  + " ORDER BY n.bundle, n.id", params)


STORE_ROWS_SQL = f"""
SELECT n.id, n.source, n.origin, n.page, n.campaign, n.condition, n.arm,
       m.family AS main_family, n.warm, n.failed, {{optional}}, n.load_ms AS plt_ms, n.ttfb_ms,
       n.fcp_ms, n.lcp_ms, n.first_image_ms, n.contributor
FROM {FIRST_COPIES} n
LEFT JOIN {MAIN_FAMILY} m ON m.bundle = n.bundle AND m.navigation_id = n.id
"""
"""``store.compare.COMPARE_SQL``'s columns over the dataset: the condition tag as it is (no
network type in its place), each navigation once (``DATASET_COMPARE_SQL``)."""

_OPTIONAL = {c: "DOUBLE" for c in VISUAL_MILESTONES}
"""Columns that bundles of older schemas lack: the visual milestones (schema 4). (The incomplete
flag, schema 5, is in the navigations view whatever the files hold: ``connect``.)"""


def _or_null(data: Path, columns: dict[str, str]) -> str:
    """``n.<column>`` for each column some file of the dataset holds, a typed NULL for the
    others (``columns``: name -> DuckDB type)."""
    have = {r["column_name"] for r in _query(data, "DESCRIBE navigations", [])}
    return ", ".join(f"n.{c}" if c in have else f"CAST(NULL AS {t}) AS {c}"
                     for c, t in columns.items())


def store_rows(data: Path, campaign: str | None = None, source: str | None = None
               ) -> list[dict[str, Any]]:
    """The rows of ``store.compare.compare_rows`` (every column of it, the optional ones null
    where no file has them) plus ``contributor``, from the dataset's navigations of one campaign
    or source, in (bundle, id) order: what ``compare --baseline-dataset`` reads."""
    clause, params = where(campaign, source)
    sql = STORE_ROWS_SQL.format(argmax="arg_max", only="",
                                optional="n.incomplete, " + _or_null(data, _OPTIONAL))
    return _query(data, sql + clause + " ORDER BY n.bundle, n.id", params)


def clear_campaigns(data: Path) -> list[str]:
    """The campaign names the dataset carries in clear (share/tags.py: the others are
    ``anon-`` pseudonyms), for error messages."""
    return [r["campaign"] for r in _query(
        data, "SELECT DISTINCT campaign FROM navigations WHERE campaign IS NOT NULL "
              "AND campaign NOT LIKE 'anon-%' ORDER BY 1", [])]


_SUMMARY = """
WITH r AS (SELECT bundle, navigation_id, sum(encoded_bytes) AS bytes FROM requests
           GROUP BY ALL),
     c AS (SELECT bundle, navigation_id, count(*) AS connections FROM connections
           WHERE upstream = 0 GROUP BY ALL)
SELECT n.bundle || ':' || n.id AS id, n.page, n.condition, n.arm, n.repetition,
       n.load_ms AS plt_ms, n.ttfb_ms, n.fcp_ms, n.lcp_ms, n.first_image_ms, {visual},
       coalesce(c.connections, 0) AS connections, coalesce(r.bytes, 0) AS bytes, n.warm,
       n.failed, n.incomplete, n.started_at_ms
FROM navigations n
LEFT JOIN r ON r.bundle = n.bundle AND r.navigation_id = n.id
LEFT JOIN c ON c.bundle = n.bundle AND c.navigation_id = n.id
WHERE n.campaign = ?
"""


def _summary(data: Path) -> str:
    """``_SUMMARY`` with the visual milestones the dataset's files hold (typed NULLs for those no
    file has: bundles before schema 4 lack them)."""
    return _SUMMARY.format(visual=_or_null(data, {c: "DOUBLE" for c in VISUAL_MILESTONES}))


def campaign_navigations(data: Path, campaign: str) -> list[dict[str, Any]]:
    """``store.lab.campaign_navigations`` over the dataset (ids are ``bundle:id``)."""
    rows = _query(data, _summary(data) + " ORDER BY n.started_at_ms, id", [campaign])
    hosts: dict[str, dict[str, int]] = {}
    for h in _query(data, "SELECT h.bundle || ':' || h.navigation_id AS id, h.host, "
                          "h.connections FROM hosts h JOIN navigations n ON n.bundle = h.bundle "
                          "AND n.id = h.navigation_id WHERE n.campaign = ?", [campaign]):
        hosts.setdefault(h["id"], {})[h["host"]] = int(h["connections"])
    for row in rows:
        row["hosts"] = hosts.get(row["id"], {})
    return rows


def plot_navigations(data: Path, campaign: str, warm: bool = False) -> list[dict[str, Any]]:
    """``store.compare.plot_navigations`` over the dataset."""
    return _query(data, "SELECT id, page, condition, arm, repetition, plt_ms, bytes FROM ("
                  + _summary(data) + f") s WHERE {comparable_sql('s')} ORDER BY page, condition, "
                  "arm, repetition, id", [campaign, int(warm)])


def plot_connection_shares(data: Path, campaign: str, warm: bool = False
                           ) -> list[dict[str, Any]]:
    """``store.compare.plot_connection_shares`` over the dataset (upstream connections where
    the proxy reported them, else the browser's)."""
    return _query(data, """
        WITH s AS (
            SELECT bundle, navigation_id, connection_id, bytes, upstream,
                   CASE WHEN sum(bytes) OVER w > 0 THEN bytes / sum(bytes) OVER w ELSE 0.0 END
                       AS share,
                   max(upstream) OVER (PARTITION BY bundle, navigation_id) AS top
            FROM connections WINDOW w AS (PARTITION BY bundle, navigation_id, upstream))
        SELECT s.bundle || ':' || s.navigation_id AS navigation_id, n.page, n.condition, n.arm,
               n.repetition, s.connection_id, s.bytes, s.share, s.upstream
        FROM s JOIN navigations n ON n.bundle = s.bundle AND n.id = s.navigation_id
        WHERE n.campaign = ? AND {comparable} AND s.upstream = s.top
        ORDER BY n.page, n.arm, n.condition, n.repetition, s.navigation_id, s.bytes DESC"""
                  .replace("{comparable}", comparable_sql("n")),
                  [campaign, int(warm)])


# --- collector publish ---------------------------------------------------------------------

_REAL_USERS = ("WHERE n.source IN ('passive', 'experiment') AND "
               f"{comparable_sql('n', warm=False)} AND n.load_ms IS NOT NULL")


def published_origins(data: Path) -> list[str]:
    """Origins of the loads ``publish`` aggregates (real users' loads a cold comparison takes:
    ``record/comparable.py``)."""
    return [r["origin"] for r in _query(
        data, f"SELECT DISTINCT n.origin FROM navigations n {_REAL_USERS} ORDER BY 1", [])]


PUBLISH_SQL = """
WITH base AS (
    SELECT d.domain, coalesce(x.arm, x.main_family, 'unknown') AS arm,
           coalesce(x.network, 'unknown') AS network, x.contributor, x.plt_ms AS plt
    FROM ({compare}) x JOIN domains d ON d.origin = x.origin
    WHERE x.source IN ('passive', 'experiment') AND {comparable}
      AND x.plt_ms IS NOT NULL),
cells AS (
    SELECT domain, arm, network, count(*) AS n, count(DISTINCT contributor) AS contributors,
           median(plt) AS median_plt_ms,
           greatest(1, floor(count(*) / 2.0 - 0.98 * sqrt(count(*))))::BIGINT AS lo_rank,
           least(count(*), ceil(1 + count(*) / 2.0 + 0.98 * sqrt(count(*))))::BIGINT AS hi_rank
    FROM base GROUP BY domain, arm, network HAVING count(DISTINCT contributor) >= ?),
ranked AS (
    SELECT b.domain, b.arm, b.network, b.plt,
           row_number() OVER (PARTITION BY b.domain, b.arm, b.network ORDER BY b.plt) AS rn
    FROM base b SEMI JOIN cells c USING (domain, arm, network))
SELECT c.domain, c.arm, c.network, c.n, c.contributors, c.median_plt_ms,
       min(CASE WHEN r.rn = c.lo_rank THEN r.plt END) AS ci_low_ms,
       min(CASE WHEN r.rn = c.hi_rank THEN r.plt END) AS ci_high_ms
FROM cells c JOIN ranked r USING (domain, arm, network)
GROUP BY c.domain, c.arm, c.network, c.n, c.contributors, c.median_plt_ms
ORDER BY c.domain, c.arm, c.network
"""
"""Per registrable domain, arm and network type: n, contributors, median PLT and its
distribution-free 95% interval, the order statistics at ranks n/2 -+ 1.96 sqrt(n)/2 (Conover,
*Practical Nonparametric Statistics*, 3rd ed., section 3.2); only cells with at least K
contributors."""


def publish_cells(data: Path, domains: dict[str, str], min_contributors: int
                  ) -> list[dict[str, Any]]:
    """``PUBLISH_SQL`` with ``domains`` (origin -> registrable domain; origins not in it are
    left out)."""
    table = pa.table({"origin": list(domains), "domain": list(domains.values())})
    sql = PUBLISH_SQL.format(compare=DATASET_COMPARE_SQL.format(argmax="arg_max", only=""),
                             comparable=comparable_sql("x", warm=False))
    return _query(data, sql, [min_contributors], {"domains": table})
