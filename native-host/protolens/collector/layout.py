"""Where the collector keeps things under its data directory (pure).

```
DIR/catalog.db                                   the catalog (store/collector.py)
DIR/dataset/table=<name>/day=<YYYY-MM-DD>/<checksum>.parquet
DIR/tmp/                                         uploads and files being written
```

The day is the UTC day the bundle was received, as OONI partitions its measurements by the day
they were collected (ooni/pipeline "bucket_date"): a bundle's files never move, and an analysis
can prune by day with Hive partitioning (DuckDB ``hive_partitioning``, Spark partition
discovery).
"""

from __future__ import annotations

import time
from pathlib import Path, PurePosixPath

from protolens.store.dataset_layout import DATASET, table_glob

__all__ = ["CATALOG", "DATASET", "TMP", "dataset_dir", "table_file", "table_glob", "utc_day"]

CATALOG = "catalog.db"
TMP = "tmp"


def utc_day(now_ms: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(now_ms / 1000))


def table_file(table: str, day: str, checksum: str) -> PurePosixPath:
    """A bundle's file for one table, relative to the dataset directory."""
    return PurePosixPath(f"table={table}") / f"day={day}" / f"{checksum}.parquet"


def dataset_dir(data: Path) -> Path:
    return data / DATASET
