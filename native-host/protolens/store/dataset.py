"""SQL over a collector's Parquet dataset (issue 11), run by DuckDB (embedded) or handed to Spark
(``analysis/spark.py``): rows for ``compare --dataset`` and the cells of ``collector publish``.

The dataset is Hive-partitioned (``table=<name>/day=<day>/<bundle>.parquet``, see
``collector/layout.py``) and each row carries ``contributor`` and ``bundle``. Navigation ids are
unique only within a bundle, so joins are on (bundle, id). The main document's protocol is taken
with a GROUP BY (``arg_max``), not a correlated subquery, so it scales as a join.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from protolens.collector.layout import table_glob

DATASET_COMPARE_SQL = """
SELECT n.id, n.source, n.origin, n.page, n.campaign,
       coalesce(n.condition, n.network_effective_type) AS condition, n.arm,
       m.family AS main_family, n.warm, n.failed, n.load_ms AS plt_ms, n.ttfb_ms, n.fcp_ms,
       n.lcp_ms, n.first_image_ms, n.contributor, n.bundle
FROM navigations n
LEFT JOIN (SELECT bundle, navigation_id, {argmax}(family, seq) AS family FROM requests
           WHERE is_main_document = 1 GROUP BY bundle, navigation_id) m
  ON m.bundle = n.bundle AND m.navigation_id = n.id
"""
"""``{argmax}``: DuckDB ``arg_max``, Spark ``max_by``. ``condition``: the condition tag, else the
network's effective type (navigator.connection.effectiveType), so real-user data are compared per
network type."""


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
    for name in ("navigations", "requests"):
        glob = table_glob(data, name).replace("'", "''")
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{glob}', "
                    "hive_partitioning = true, union_by_name = true)")
    return con


def compare_rows(data: Path, campaign: str | None = None, source: str | None = None
                 ) -> list[dict[str, Any]]:
    """The rows of ``store.research.compare_rows`` plus ``contributor`` and ``bundle``, from
    every navigation in the dataset, in (bundle, id) order."""
    try:
        con = connect(data)
        try:
            clause, params = where(campaign, source)
            cur = con.execute(DATASET_COMPARE_SQL.format(argmax="arg_max") + clause
                              + " ORDER BY n.bundle, n.id", params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        finally:
            con.close()
    except duckdb.Error as exc:
        raise DatasetError(f"{data}: {exc}") from None
