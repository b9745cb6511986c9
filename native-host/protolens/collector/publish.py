"""``collector publish``: the open-data table. Which origins count and under
which registrable domain (pure), and writing the table (CSV or Parquet, atomically).

Only hosts in clear count: an anonymized host (``anon-<hex>``) is a token of one bundle, so it
names nothing and could never reach K contributors. IP literals never reach the dataset
(``share/bundle.py`` refuses them).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from protolens.analysis.observe import domain_of
from protolens.analysis.verdict import ERROR, UNDECIDED, WITHIN, Effect, decide
from protolens.collector.dataset import atomic_write
from protolens.share.anonymize import registrable

COLUMNS = ("domain", "arm", "network", "n", "contributors", "median_plt_ms", "ci_low_ms",
           "ci_high_ms", "note")
MEDIAN_MIN_N = 6
"""Fewest loads for a 95% distribution-free interval of a median: the widest one, between the
smallest and the largest value, holds the median with 1 - 2 / 2^n (Conover, section 3.2), which
reaches 95% at n = 6."""


class PublishError(Exception):
    """A table that must not be published, in one line."""


def judged(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each cell's interval through the one verdict rule (``analysis/verdict.py``): too few loads
    or one contributor -> no interval and a ``note`` saying so; a zero-width interval over more
    than two loads (copies of one load) -> ``PublishError``, nothing written."""
    out = []
    for row in rows:
        n = int(row["n"])
        needs = MEDIAN_MIN_N if n < MEDIAN_MIN_N else None
        v = decide(Effect(row["median_plt_ms"], row["ci_low_ms"], row["ci_high_ms"], n, needs,
                          null=(0.0, math.inf)), unit="in the cell")
        if v.outcome == ERROR:
            raise PublishError(f"{row['domain']} / {row['arm']} / {row['network']}: "
                               f"{v.reason}; nothing published")
        note = v.reason if v.outcome == UNDECIDED else ""
        if int(row["contributors"]) == 1:
            note = f"all {n} loads come from one contributor" + (f"; {note}" if note else "")
        keep = v.outcome == WITHIN and int(row["contributors"]) > 1
        out.append({**row, "ci_low_ms": row["ci_low_ms"] if keep else None,
                    "ci_high_ms": row["ci_high_ms"] if keep else None, "note": note})
    return out


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
            ("ci_low_ms", pa.float64()), ("ci_high_ms", pa.float64()),
            ("note", pa.string())])), buf)
        return buf.getvalue()
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return text.getvalue().encode()


def write(rows: Sequence[dict[str, Any]], out: Path) -> None:
    atomic_write(out, table_bytes(rows, out.suffix.lower()), out.parent)
