"""Bundles made from a small real one (for the collector's benchmarks and tests): the same
navigations under new ids; a large bundle of many jittered copies (a maximum-size upload that
validates); and decompression bombs (a few hundred kB that decode to gigabytes), each with
correct checksums, so only the intended property is there."""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from protolens.share.bundle import TABLES, make_manifest, write_tar

JITTER = ("start_ms", "first_byte_ms", "end_ms", "encoded_bytes", "body_bytes", "ttfb_ms",
          "fcp_ms", "lcp_ms", "dcl_ms", "load_ms", "first_image_ms", "first_ms", "last_ms",
          "bytes", "network_rtt_ms")
"""Columns given random noise in the copies (their ranges allow +-10%)."""


def tables_of(src: Path) -> tuple[dict[str, object], dict[str, pa.Table]]:
    with tarfile.open(src) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]
    manifest = json.loads(files["manifest.json"])
    return manifest, {t: pq.read_table(io.BytesIO(files[f"{t}.parquet"])) for t in TABLES}


def write(out: Path, manifest: dict[str, object], tables: dict[str, pa.Table],
          row_group: int | None = None) -> bytes:
    data = {}
    for t in TABLES:
        buf = io.BytesIO()
        pq.write_table(tables[t], buf, compression="zstd", row_group_size=row_group)
        data[t] = buf.getvalue()
    info = {k: v for k, v in manifest.items() if k not in ("tables", "format", "bundle_schema")}
    write_tar(out, make_manifest(data, {t: tables[t].num_rows for t in TABLES}, info), data,
              mtime=0)
    return out.read_bytes()


def _ids(table: pa.Table, column: str, salt: str) -> pa.Table:
    i = table.column_names.index(column)
    new = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"{salt}/{v}")) for v in
           table.column(column).to_pylist()]
    return table.set_column(i, table.schema.field(i), pa.array(new, pa.string()))


def reid(src: Path, out: Path, salt: str) -> bytes:
    """The same bundle with every navigation under a new id (a navigation counts once)."""
    manifest, tables = tables_of(src)
    tables = {t: _ids(tb, "id" if t == "navigations" else "navigation_id", salt)
              for t, tb in tables.items()}
    return write(out, manifest, tables)


def _jitter(table: pa.Table, rng: np.random.Generator) -> pa.Table:
    for name in JITTER:
        if name not in table.column_names:
            continue
        i = table.column_names.index(name)
        col = table.column(i)
        noise = pa.array(rng.uniform(0.9, 1.1, len(col)))
        value = pc.multiply(pc.cast(col, pa.float64()), noise)
        if pa.types.is_integer(col.type):
            value = pc.cast(pc.round(value), col.type)
        table = table.set_column(i, table.schema.field(i), value)
    return table


def scaled(src: Path, out: Path, copies: int, salt: str, seed: int = 1) -> bytes:
    """``copies`` jittered copies of every navigation, each under a new id."""
    manifest, tables = tables_of(src)
    rng = np.random.default_rng(seed)
    parts: dict[str, list[pa.Table]] = {t: [] for t in TABLES}
    for k in range(copies):
        for t, tb in tables.items():
            copy = _ids(tb, "id" if t == "navigations" else "navigation_id", f"{salt}/{k}")
            parts[t].append(_jitter(copy, rng))
    return write(out, manifest, {t: pa.concat_tables(p) for t, p in parts.items()})


def number_bomb(src: Path, out: Path, rows: int) -> bytes:
    """The requests repeated to ``rows`` rows of equal values: run-length encoding keeps the
    file small; the footer's uncompressed size counts the runs, not the values."""
    manifest, tables = tables_of(src)
    one = tables["requests"].slice(0, 1)
    chunk = pa.concat_tables([one] * 100_000)
    data = {}
    for t in TABLES:
        buf = io.BytesIO()
        if t == "requests":
            with pq.ParquetWriter(buf, one.schema, compression="zstd") as w:
                for _ in range(rows // len(chunk)):
                    w.write_table(chunk)
        else:
            pq.write_table(tables[t], buf, compression="zstd")
        data[t] = buf.getvalue()
    counts = {t: tables[t].num_rows for t in TABLES}
    counts["requests"] = rows // len(chunk) * len(chunk)
    info = {k: v for k, v in manifest.items() if k not in ("tables", "format", "bundle_schema")}
    write_tar(out, make_manifest(data, counts, info), data, mtime=0)
    return out.read_bytes()


def string_bomb(src: Path, out: Path, copies: int = 4000) -> bytes:
    """The requests repeated with the longest mime type allowed: dictionary encoding stores it
    once; decoded it is 255 bytes per row."""
    manifest, tables = tables_of(src)
    t = tables["requests"]
    i = t.column_names.index("mime_type")
    t = t.set_column(i, t.schema.field(i), pa.array(["a" * 255] * t.num_rows, pa.string()))
    tables["requests"] = pa.concat_tables([t] * copies)
    return write(out, manifest, tables)
