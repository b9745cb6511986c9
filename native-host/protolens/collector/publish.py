"""``collector publish`` (issue 11, item 4): the open-data table. Which origins count and under
which registrable domain (pure), and writing the table (CSV or Parquet, atomically).

Only hosts in clear count: an anonymized host (``anon-<hex>``) is a token of one bundle, so it
names nothing and could never reach K contributors. IP literals never reach the dataset
(``share/bundle.py`` refuses them).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from protolens.analysis.observe import domain_of
from protolens.collector.dataset import atomic_write
from protolens.share.anonymize import registrable

COLUMNS = ("domain", "arm", "network", "n", "contributors", "median_plt_ms", "ci_low_ms",
           "ci_high_ms")


def domain_map(origins: Iterable[str]) -> dict[str, str]:
    """origin -> registrable domain, for origins whose host is in clear."""
    out = {}
    for origin in origins:
        host = domain_of(origin)
        if host.startswith("anon-"):
            continue
        found = registrable(host)
        if found:
            out[origin] = found
    return out


def table_bytes(rows: Sequence[dict[str, Any]], suffix: str) -> bytes:
    if suffix == ".parquet":
        buf = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(list(rows), schema=pa.schema([
            ("domain", pa.string()), ("arm", pa.string()), ("network", pa.string()),
            ("n", pa.int64()), ("contributors", pa.int64()), ("median_plt_ms", pa.float64()),
            ("ci_low_ms", pa.float64()), ("ci_high_ms", pa.float64())])), buf)
        return buf.getvalue()
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue().encode()


def write(rows: Sequence[dict[str, Any]], out: Path) -> None:
    atomic_write(out, table_bytes(rows, out.suffix.lower()), out.parent)
