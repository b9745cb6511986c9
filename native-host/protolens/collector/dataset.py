"""The collector's files (adapter): staging a bundle's tables in the writer's own folder,
moving them into the Parquet dataset once the catalog has committed them, deleting a
contributor's files. The sweep is in ``sweep.py``, ``verify`` in ``verify.py``.

A file is written to ``DIR/tmp/<writer>/dataset/<path>``, fsynced with its directory, and
renamed to ``DIR/dataset/<path>`` (atomic on POSIX, rename(2)) only after the catalog row that
names it is committed (``store/collector_leases.py``): the dataset never holds a file the
catalog does not name, so DuckDB or Spark reading ``*.parquet`` never sees an unacknowledged
bundle. The fsyncs make each step durable, as SQLite does for its journal
(https://www.sqlite.org/atomiccommit.html section 3.0).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from protolens.collector.layout import dataset_dir, table_file
from protolens.share.bundle import TABLES, Bundle
from protolens.store.collector import CatalogBundle, CatalogFile

EXTRA_COLUMNS = ("contributor", "bundle")
"""Added to every table in the dataset: the token's name and the bundle's checksum."""


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(target: Path, data: bytes, tmp_dir: Path) -> None:
    """``data`` at ``target``, all or nothing, durable when this returns."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=tmp_dir)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


SLICE = 65_536
"""Rows written at a time when staging: the extra columns and the encoder's buffers exist for
one slice, never for a whole table."""


def _dictionary_columns(schema: pa.Schema) -> list[str]:
    """The text columns: dictionary encoding pays off for them (hosts, families, the two
    constant extra columns). For numbers it costs a hash of every value and, measured on the
    collector's bench bundles, made the files larger (900 kB against 804 kB) and the write 13%
    slower; Parquet falls back to plain encoding past a size anyway (parquet-format
    Encodings.md, "Dictionary Encoding")."""
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)]


TEXT = pa.dictionary(pa.int32(), pa.string())


def _constant(value: str, n: int) -> pa.DictionaryArray:
    """``n`` rows of one text, dictionary-encoded: one value and ``n`` zero indices, which the
    writer stores as they are instead of hashing ``n`` copies."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                          pa.array([value], pa.string()))


def _encode(bundle: Bundle, name: str, contributor: str) -> bytes:
    """One table with the dataset's extra columns as Parquet bytes, slice by slice. Text columns
    the collector decoded still dictionary-encoded (``limits.check_members``) are written as
    they are; the file is the same as for plain text (Parquet's String columns, dictionary
    pages), without the Arrow schema pyarrow would otherwise add to say they were dictionaries
    (``store_schema=False``: no reader of the dataset needs it; DuckDB and Spark read Parquet's
    own schema)."""
    table = bundle.tables[name]
    schema = table.schema.append(pa.field("contributor", TEXT)).append(pa.field("bundle", TEXT))
    out = pa.BufferOutputStream()
    with pq.ParquetWriter(out, schema, compression="zstd", store_schema=False,
                          use_dictionary=_dictionary_columns(schema)) as writer:
        for start in range(0, max(table.num_rows, 1), SLICE):
            part = table.slice(start, SLICE)
            n = part.num_rows
            writer.write_table(part.append_column("contributor", _constant(contributor, n))
                               .append_column("bundle", _constant(bundle.checksum, n)),
                               row_group_size=SLICE)
    return bytes(out.getvalue())


def stage_bundle(stage: Path, bundle: Bundle, contributor: str, day: str, nonce: str,
                 sync: bool = True) -> tuple[CatalogFile, ...]:
    """Every table of a validated bundle under ``stage`` (the writer's folder); the catalog's
    file rows, each with the SHA-256 of the bytes written (hashed before they leave memory, so
    the file is not read back). ``nonce`` makes the names this upload's own, so two processes
    storing the same bundle at once never write one file. Durable when this returns, unless
    ``sync`` is False: then ``sync_staged`` must run before the catalog commits them (the
    server encodes while holding a validation place and waits for the disk after)."""
    files = []
    for name in TABLES:
        rel = table_file(name, day, f"{bundle.checksum}-{nonce}")
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = _encode(bundle, name, contributor)
        target.write_bytes(data)
        files.append(CatalogFile(name, str(rel), bundle.tables[name].num_rows,
                                 hashlib.sha256(data).hexdigest()))
    if sync:
        sync_staged(stage, files)
    return tuple(files)


def sync_staged(stage: Path, files: Sequence[CatalogFile]) -> None:
    """Staged files durable: their data, then the directories that name them (fsync(2) of a
    file flushes its dirty pages whichever descriptor wrote them)."""
    for f in files:
        fd = os.open(stage / f.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for parent in dict.fromkeys((stage / f.path).parent for f in files):
        fsync_dir(parent)


def publish(data: Path, stage: Path, files: Sequence[CatalogFile]) -> None:
    """Move committed files from ``stage`` into the dataset. A file already there was moved by a
    sweep that took over from this writer (``sweep.py``)."""
    for f in files:
        target = dataset_dir(data) / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(stage / f.path, target)
        except FileNotFoundError:
            if not target.is_file():
                raise
        fsync_dir(target.parent)


def unstage(stage: Path, files: Sequence[CatalogFile]) -> None:
    for f in files:
        (stage / f.path).unlink(missing_ok=True)


def dataset_files(data: Path) -> list[str]:
    """Every file under the dataset directory, relative, sorted."""
    root = dataset_dir(data)
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def remove_files(data: Path, bundles: Iterable[CatalogBundle]) -> int:
    n = 0
    for b in bundles:
        for f in b.files:
            path = dataset_dir(data) / f.path
            if path.exists():
                path.unlink()
                n += 1
    return n


def disk_bytes(data: Path) -> int:
    return sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
