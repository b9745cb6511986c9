"""The Spark engine for ``compare --dataset --engine spark`` (an SQL engine, so in ``store/``):
the scan of the collector's Parquet dataset, the filters, the join of navigations with their
main document and the per-contributor, per-cell aggregation run in Spark SQL
(``store/dataset.cells_sql``, the same text DuckDB runs); only one row per (contributor, cell)
comes back to Python, where ``analysis/stratified.py`` computes the statistics as for DuckDB.

``master``: ``local[*]`` by default (Spark in this process's machine), or a cluster URL such as
``spark://host:7077``. pyspark is imported here only, so other commands never start a JVM.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from protolens.store.dataset import DATASET, DatasetError, cells_sql, with_median


def cells(data: Path, mode: str, metric: str, warm: bool, key: str,
          master: str = "local[*]", include_incomplete: bool = False) -> list[dict[str, Any]]:
    """``store.dataset.cells`` computed by Spark."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, never eth0
    from pyspark.errors import PySparkException
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import lit

    root = data / DATASET
    if not any(root.glob("table=navigations/*/*.parquet")):
        raise DatasetError(f"{data}: no collector dataset here (no dataset/table=navigations/)")
    spark = (SparkSession.builder.master(master).appName("protolens-compare")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "8")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.host", "127.0.0.1")
             .getOrCreate())
    try:
        for name in ("navigations", "requests"):
            # every file's columns, as DuckDB's union_by_name: bundles of older schemas lack some
            frame = spark.read.option("mergeSchema", "true").parquet(str(root / f"table={name}"))
            if name == "navigations" and "incomplete" not in frame.columns:
                # bundles before schema 5: complete (record/comparable.py), as DuckDB reads them
                frame = frame.withColumn("incomplete", lit(None).cast("long"))
            frame.createOrReplaceTempView(name)
        rows = spark.sql(cells_sql(mode, metric, "spark", include_incomplete),
                         args=[int(warm), key]).collect()
        return with_median([{**r.asDict(), "vals": list(r["vals"])} for r in rows])
    except PySparkException as exc:
        raise DatasetError(f"{data}: Spark: {exc}") from None
    finally:
        spark.stop()
