"""What the collector refuses before it decodes anything (pure over bytes).

A small Parquet file can expand to gigabytes (a decompression bomb, CWE-409) in three ways:
compression (the footer states each column chunk's uncompressed size), run-length encoding (a
million equal numbers take a few bytes; the footer's uncompressed size counts the encoded
runs) and dictionary encoding (a 5 kB string stored once and referenced by 2,000 rows decodes to
10 MB: measured here, the footer then says 5 kB). ``check_members`` refuses a bundle whose
footers declare too much; then counts what the fixed-width columns decode to from the footer
alone (rows x width: nothing decoded), and what the string columns decode to by reading the
file with them still dictionary-encoded (``read_dictionary``) in batches of ``BATCH`` rows, so
what it holds never outgrows what it has counted. It stops at the first limit crossed; what it
read is then validated as it is (``share/bundle.read_bundle``), not decoded a second time.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]


@dataclass(frozen=True)
class Limits:
    """The collector's limits (``collector serve`` options)."""

    max_bytes: int = 8 << 20
    """Largest upload (the request body), bytes."""
    max_uncompressed: int = 64 << 20
    """Largest total size the Parquet members may declare or decode to, bytes."""
    max_rows: int = 20_000_000
    """Most rows in all tables of one bundle."""


class TooLarge(Exception):
    """Over a limit; the message says which."""


BATCH = 65_536
"""Rows per batch when the string columns are measured."""


def _fixed_bytes(schema: pa.Schema, rows: int) -> int:
    """What the fixed-width columns take once decoded: rows x width, plus validity bitmaps."""
    total = 0
    for f in schema:
        if pa.types.is_string(f.type) or pa.types.is_binary(f.type):
            continue
        width = max(1, f.type.bit_width // 8) if hasattr(f.type, "bit_width") else 8
        total += rows * width + rows // 8
    return total


def _read_counted(data: bytes, pf: Any, budget: int) -> tuple[int, Any]:
    """What a Parquet file's columns take once decoded, and the file read with its string columns
    still dictionary-encoded (``read_dictionary``), batch by batch; stops once past ``budget``
    (the table is then None). Dictionary-encoded, a string column holds its distinct values once
    and an index per row, so the batches kept never outgrow what is counted (offsets of 8 bytes
    per row, the characters of every row). ``pf``: the file opened already (its footer)."""
    schema = pf.schema_arrow
    total = _fixed_bytes(schema, pf.metadata.num_rows)
    if total > budget:
        return total, None
    strings = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_binary(f.type)]
    pf = pq.ParquetFile(io.BytesIO(data), read_dictionary=strings)
    batches = []
    # on the calling thread: a collector runs one worker per core already, and pyarrow's pool
    # only added its hand-offs (in process, a bundle's CPU 102 -> 93 ms median over 8 pairs)
    for batch in pf.iter_batches(batch_size=BATCH, use_threads=False):
        for name in strings:
            chunk = batch.column(name)
            if pa.types.is_dictionary(chunk.type):  # each row's characters: how often each
                # dictionary value is used x its length
                used = np.bincount(chunk.indices.drop_null().to_numpy(),
                                   minlength=len(chunk.dictionary))
                lengths = pc.binary_length(chunk.dictionary).fill_null(0).to_numpy()
                total += int(used @ lengths) + 8 * len(chunk)
            else:
                total += chunk.nbytes
        if total > budget:
            return total, None
        batches.append(batch)
    return total, pa.Table.from_batches(batches, schema=pf.schema_arrow) if batches else None


def check_members(files: Mapping[str, bytes], limits: Limits) -> dict[str, Any]:
    """Raise ``TooLarge`` if the Parquet members declare or decode to more than the limits
    allow. Unreadable files are left to ``read_bundle``, which names the problem. Returns the
    tables it decoded to count them (by member name), their text columns still
    dictionary-encoded, so the bundle is decoded once and never to plain text:
    ``read_bundle(..., decoded=...)`` validates them as it would the files, and the collector
    writes them to its dataset as they are (``dataset._encode``)."""
    declared = decoded = rows = 0
    tables: dict[str, Any] = {}
    for name, data in sorted(files.items()):
        if not name.endswith(".parquet"):
            continue
        try:
            pf = pq.ParquetFile(io.BytesIO(data))
            meta = pf.metadata
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
            size, table = _read_counted(data, pf, limits.max_uncompressed - decoded)
        except (pa.ArrowException, OSError):
            continue
        decoded += size
        if decoded > limits.max_uncompressed:
            raise TooLarge(f"{name}: decodes to more than {limits.max_uncompressed} bytes "
                           "(a decompression bomb?)")
        if table is not None:
            tables[name] = table
    return tables
