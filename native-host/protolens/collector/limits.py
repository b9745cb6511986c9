"""What the collector refuses before it decodes anything (pure over bytes).

A small Parquet file can expand to gigabytes (a decompression bomb, CWE-409) in two ways:
compression (the footer states each column chunk's uncompressed size) and dictionary encoding (a
5 kB string stored once and referenced by 2,000 rows decodes to 10 MB: measured here, the footer
then says 5 kB). ``check_members`` first refuses a bundle whose footers declare too much, then
reads its string columns still dictionary-encoded (``read_dictionary``: the values are never
repeated in memory) and adds up the bytes they would decode to, before
``share/bundle.read_bundle`` decodes anything in full.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]


@dataclass(frozen=True)
class Limits:
    """The collector's limits (``collector serve`` options)."""

    max_bytes: int = 64 << 20
    """Largest upload (the request body), bytes."""
    max_uncompressed: int = 512 << 20
    """Largest total size the Parquet members may declare or decode to, bytes."""
    max_rows: int = 20_000_000
    """Most rows in all tables of one bundle."""


class TooLarge(Exception):
    """Over a limit; the message says which."""


def _decoded_bytes(data: bytes) -> int:
    """What a Parquet file's columns take once decoded, computed without decoding strings."""
    schema = pq.ParquetFile(io.BytesIO(data)).schema_arrow
    strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_binary(f.type)]
    table = pq.read_table(io.BytesIO(data), read_dictionary=strings)
    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pa.types.is_dictionary(chunk.type):
                lengths = pc.binary_length(chunk.dictionary)
                total += (pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0) + 8 * len(chunk)
            else:
                total += chunk.nbytes
    return total


def check_members(files: Mapping[str, bytes], limits: Limits) -> None:
    """Raise ``TooLarge`` if the Parquet members declare or decode to more than the limits
    allow. Unreadable files are left to ``read_bundle``, which names the problem."""
    declared = decoded = rows = 0
    for name, data in sorted(files.items()):
        if not name.endswith(".parquet"):
            continue
        try:
            meta = pq.ParquetFile(io.BytesIO(data)).metadata
        except (pa.ArrowException, OSError):
            continue
        rows += meta.num_rows
        if rows > limits.max_rows:
            raise TooLarge(f"{name}: more than {limits.max_rows} rows in the bundle")
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            declared += sum(group.column(c).total_uncompressed_size
                            for c in range(group.num_columns))
        if declared > limits.max_uncompressed:
            raise TooLarge(f"{name}: declares more than {limits.max_uncompressed} bytes "
                           "uncompressed (a decompression bomb?)")
        try:
            decoded += _decoded_bytes(data)
        except (pa.ArrowException, OSError):
            continue
        if decoded > limits.max_uncompressed:
            raise TooLarge(f"{name}: decodes to more than {limits.max_uncompressed} bytes "
                           "(a decompression bomb?)")
