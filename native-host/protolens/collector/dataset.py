"""The collector's files (adapter): atomic writes into the Parquet dataset, the start-up sweep,
``verify`` and deleting a contributor's files.

A file is written to ``DIR/tmp``, fsynced, renamed into place and its directory fsynced (the
rename is atomic on POSIX, rename(2); the fsyncs make it durable, as SQLite does for its journal:
https://www.sqlite.org/atomiccommit.html section 3.0). The catalog row is committed only after
every file of the bundle is in place, and that commit is the acknowledgement: a crash before it
leaves at most complete files that no catalog row names, which ``sweep`` removes at start-up and
the client's retry writes again.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

from protolens.collector.layout import TMP, dataset_dir, table_file
from protolens.share.bundle import TABLES, Bundle
from protolens.store.collector import CatalogBundle, CatalogFile

EXTRA_COLUMNS = ("contributor", "bundle")
"""Added to every table in the dataset: the token's name and the bundle's checksum."""


def _fsync_dir(path: Path) -> None:
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
    _fsync_dir(target.parent)


def dataset_table(bundle: Bundle, name: str, contributor: str) -> pa.Table:
    """A bundle's table with the dataset's extra columns."""
    table = bundle.tables[name]
    n = table.num_rows
    return (table.append_column("contributor", pa.array([contributor] * n, pa.string()))
            .append_column("bundle", pa.array([bundle.checksum] * n, pa.string())))


def write_bundle(data: Path, bundle: Bundle, contributor: str, day: str
                 ) -> tuple[CatalogFile, ...]:
    """Every table of a validated bundle into the dataset; the catalog's file rows."""
    files = []
    for name in TABLES:
        buf = io.BytesIO()
        pq.write_table(dataset_table(bundle, name, contributor), buf, compression="zstd")
        body = buf.getvalue()
        rel = table_file(name, day, bundle.checksum)
        atomic_write(dataset_dir(data) / rel, body, data / TMP)
        files.append(CatalogFile(name, str(rel), bundle.tables[name].num_rows,
                                 hashlib.sha256(body).hexdigest()))
    return tuple(files)


def dataset_files(data: Path) -> list[str]:
    """Every file under the dataset directory, relative, sorted."""
    root = dataset_dir(data)
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def sweep(data: Path, catalogued: set[str]) -> list[str]:
    """Remove what a crash left: temporary files, and dataset files no catalog row names (never
    acknowledged). Returns the dataset files removed."""
    tmp = data / TMP
    if tmp.is_dir():
        for p in tmp.iterdir():
            p.unlink(missing_ok=True)
    removed = [rel for rel in dataset_files(data) if rel not in catalogued]
    for rel in removed:
        (dataset_dir(data) / rel).unlink(missing_ok=True)
    return removed


def verify(data: Path, bundles: Iterable[CatalogBundle]) -> list[str]:
    """Problems: a catalogued file missing, changed (SHA-256) or with other row counts; a file
    in the dataset that no catalog row names. Empty when all is well."""
    problems: list[str] = []
    named: set[str] = set()
    root = dataset_dir(data)
    for b in bundles:
        for f in b.files:
            named.add(f.path)
            path = root / f.path
            if not path.is_file():
                problems.append(f"{f.path}: missing (bundle {b.checksum})")
                continue
            body = path.read_bytes()
            if hashlib.sha256(body).hexdigest() != f.sha256:
                problems.append(f"{f.path}: content differs from the catalog's SHA-256")
                continue
            rows = pq.ParquetFile(io.BytesIO(body)).metadata.num_rows
            if rows != f.rows:
                problems.append(f"{f.path}: {rows} rows, the catalog says {f.rows}")
    problems += [f"{rel}: not in the catalog" for rel in dataset_files(data) if rel not in named]
    return problems


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
