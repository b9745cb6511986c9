"""What the collector refuses before it decodes anything (pure over bytes).

A Parquet file states, in its footer, how large each column chunk is uncompressed; a small file
can claim gigabytes (a decompression bomb, CWE-409). ``check_members`` reads only the footers of
a bundle's Parquet members and refuses a bundle whose declared uncompressed size or row count is
over the limit, before ``share/bundle.read_bundle`` decompresses anything.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]


@dataclass(frozen=True)
class Limits:
    """The collector's limits (``collector serve`` options)."""

    max_bytes: int = 64 << 20
    """Largest upload (the request body), bytes."""
    max_uncompressed: int = 512 << 20
    """Largest total uncompressed size the Parquet footers may declare, bytes."""
    max_rows: int = 20_000_000
    """Most rows in all tables of one bundle."""


class TooLarge(Exception):
    """Over a limit; the message says which."""


def check_members(files: Mapping[str, bytes], limits: Limits) -> None:
    """Raise ``TooLarge`` if the Parquet members declare more than the limits allow.
    Unreadable footers are left to ``read_bundle``, which names the file."""
    total = rows = 0
    for name, data in files.items():
        if not name.endswith(".parquet"):
            continue
        try:
            meta = pq.ParquetFile(io.BytesIO(data)).metadata
        except (pa.ArrowException, OSError):
            continue
        rows += meta.num_rows
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            total += sum(group.column(c).total_uncompressed_size
                         for c in range(group.num_columns))
        if total > limits.max_uncompressed:
            raise TooLarge(f"{name}: declares more than {limits.max_uncompressed} bytes "
                           "uncompressed (a decompression bomb?)")
        if rows > limits.max_rows:
            raise TooLarge(f"{name}: more than {limits.max_rows} rows in the bundle")
