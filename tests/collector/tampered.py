"""Bundles that are wrong in exactly one way, rebuilt from a valid one with correct checksums
(so only the intended defect is there)."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from protolens.share.bundle import TABLES, make_manifest, parquet_bytes, write_tar


def members(tar: Path) -> dict[str, bytes]:
    with tarfile.open(tar) as t:
        return {m.name: t.extractfile(m).read() for m in t}  # type: ignore[union-attr]


def rebuild(src: Path, out: Path, change: Callable[[dict[str, pa.Table]], None],
            manifest_change: Callable[[dict[str, object]], None] | None = None) -> bytes:
    files = members(src)
    manifest = json.loads(files["manifest.json"])
    tables = {t: pq.read_table(io.BytesIO(files[f"{t}.parquet"])) for t in TABLES}
    change(tables)
    data = {t: parquet_bytes(tables[t]) for t in TABLES}
    info = {k: v for k, v in manifest.items() if k not in ("tables", "format", "bundle_schema")}
    new = make_manifest(data, {t: tables[t].num_rows for t in TABLES}, info)
    if manifest_change:
        manifest_change(new)
    write_tar(out, new, data, mtime=0)
    return out.read_bytes()


def set_column(tables: dict[str, pa.Table], table: str, column: str, value: object) -> None:
    t = tables[table]
    i = t.column_names.index(column)
    tables[table] = t.set_column(i, t.schema.field(i), pa.array([value] * t.num_rows,
                                                                t.schema.field(i).type))


def with_path(tables: dict[str, pa.Table]) -> None:
    t = tables["navigations"]
    i = t.column_names.index("url")
    tables["navigations"] = t.set_column(
        i, t.schema.field(i), pc.binary_join_element_wise(t.column("origin"), "/secret/page",
                                                          ""))


def corrupt_member(src: Path, out: Path) -> bytes:
    """A valid bundle with one byte of requests.parquet changed (checksum no longer matches)."""
    files = members(src)
    raw = bytearray(files["requests.parquet"])
    raw[len(raw) // 2] ^= 0xFF
    files["requests.parquet"] = bytes(raw)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out.write_bytes(buf.getvalue())
    return buf.getvalue()


def inflate_requests(tables: dict[str, pa.Table], copies: int = 800) -> None:
    """The requests repeated ``copies`` times with the longest mime type allowed: a few kB of
    Parquet (dictionary + zstd) that decode to megabytes."""
    set_column(tables, "requests", "mime_type", "a" * 255)
    tables["requests"] = pa.concat_tables([tables["requests"]] * copies)
