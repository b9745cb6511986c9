"""The bundle format: one uncompressed ``.tar`` holding ``manifest.json`` and one Parquet file per
table (Parquet compresses inside). Also accepted: a directory with the same files.

The manifest lists every table's file, row count and SHA-256; the bundle's checksum (its identity
for ``merge``) is the SHA-256 of ``manifest.json``'s bytes, which covers every table through
their checksums. Reading validates checksums, row counts, the Arrow schema of each table and the
value ranges of its columns (all derived from ``record/columns.py``, the ranges the host checks at
ingest; the value checks are in ``bundle_values.py``); any failure is a ``BundleError`` naming
the file and the problem.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protolens.record import columns
from protolens.share.bundle_rules import HOST_COLUMNS as HOST_COLUMNS
from protolens.share.bundle_rules import TABLES as TABLES
from protolens.share.bundle_rules import BundleError as BundleError
from protolens.share.bundle_rules import ip_literal as ip_literal
from protolens.share.bundle_rules import lite_schema as lite_schema
from protolens.share.bundle_rules import out_of_range as out_of_range
from protolens.share.bundle_values import check_values, plain

# pyarrow (160 MB installed) belongs to the extras: the core install writes and checks its own
# bundles with share/parquet_lite.py and share/bundle_lite.py, so every use below imports it
# where it is needed.

FORMAT = "protolens-bundle"
BUNDLE_SCHEMA = columns.BUNDLE_SCHEMA
"""Version of the bundle's tables and manifest that ``export`` writes (record/columns.py)."""
READABLE_SCHEMAS = tuple(range(1, BUNDLE_SCHEMA + 1))
"""Versions ``merge`` reads; an older bundle's missing columns are read as nulls, and columns
export no longer shares (``remote_port`` before 3) are dropped on reading."""
MANIFEST = "manifest.json"
MAX_MEMBER = 4 << 30
"""Largest table file accepted (bytes)."""



def has_pyarrow() -> bool:
    try:
        import pyarrow  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


def schema_of(name: str, version: int = BUNDLE_SCHEMA) -> Any:
    """The Arrow schema of table ``name`` in bundle schema ``version``, from the column table."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64()}
    return pa.schema([(n, types[t]) for n, t in lite_schema(name, version)])


@dataclass(frozen=True)
class LiteField:
    """A column's name and Arrow type name, where pyarrow is not installed."""

    name: str
    type: str


class _Schemas(Mapping[str, Any]):
    """Every table of a bundle as export writes it: the Arrow schema with pyarrow installed, the
    columns as ``LiteField`` without it (both iterate fields that have ``.name``)."""

    def __getitem__(self, name: str) -> Any:
        if name not in TABLES:
            raise KeyError(name)
        if has_pyarrow():
            return schema_of(name)
        return tuple(LiteField(n, t) for n, t in lite_schema(name))

    def __iter__(self) -> Any:
        return iter(TABLES)

    def __len__(self) -> int:
        return len(TABLES)


SCHEMAS: Mapping[str, Any] = _Schemas()
"""Every table of a bundle as export writes it."""


def upgrade(name: str, table: Any) -> Any:
    """A table of any readable bundle schema in the current one: newer columns added as nulls,
    columns export stopped sharing dropped."""
    import pyarrow as pa

    schema = SCHEMAS[name]
    if value_schema(table.schema).equals(schema):  # the current schema already
        return table.replace_schema_metadata(None)
    out, fields = [], []
    for field in schema:
        column = table.column(field.name) if field.name in table.column_names \
            else pa.nulls(table.num_rows, field.type)
        out.append(column)
        fields.append(field.with_type(column.type))  # a dictionary-encoded column stays so
    return pa.Table.from_arrays(out, schema=pa.schema(fields))


def value_schema(schema: Any) -> Any:
    """``schema`` with its dictionary-encoded columns as their value type: the schema
    ``pq.read_table`` gives for a file that ``read_dictionary`` reads with dictionaries."""
    import pyarrow as pa

    return pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
                      for f in schema], metadata=schema.metadata)


@dataclass(frozen=True)
class Bundle:
    """A read and validated bundle."""

    path: Path
    manifest: dict[str, Any]
    checksum: str
    """SHA-256 of manifest.json: the bundle's identity."""
    tables: dict[str, Any]
    """pyarrow Tables; without pyarrow (the core install), each table's columns as lists."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_table(name: str, rows: Sequence[Mapping[str, Any]]) -> Any:
    """Rows (dicts) -> an Arrow table with the bundle schema of ``name``."""
    import pyarrow as pa

    schema = SCHEMAS[name]
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(cols, schema=schema)


def parquet_bytes(table: Any) -> bytes:
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def make_manifest(files: Mapping[str, bytes], rows: Mapping[str, int],
                  info: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest for table files (name -> Parquet bytes) and ``info`` (version, times...)."""
    return {"format": FORMAT, "bundle_schema": BUNDLE_SCHEMA, **info,
            "tables": {name: {"file": f"{name}.parquet", "rows": rows[name],
                              "sha256": sha256(files[name])} for name in TABLES}}


def manifest_bytes(manifest: Mapping[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()


def write_tar(out: Path, manifest: Mapping[str, Any], files: Mapping[str, bytes],
              mtime: float) -> str:
    """Write the bundle atomically (temp file + rename); return its checksum."""
    head = manifest_bytes(manifest)
    members = [(MANIFEST, head)] + [(f"{n}.parquet", files[n]) for n in TABLES]
    fd, tmp = tempfile.mkstemp(prefix=".bundle-", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w",
                                                      format=tarfile.PAX_FORMAT) as tar:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), int(mtime), 0o644
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return sha256(head)


def member_files(path: Path) -> dict[str, bytes]:
    """The bundle's files by name (from the tar, or the directory); nothing validated yet."""
    wanted = {MANIFEST, *(f"{n}.parquet" for n in TABLES)}
    out: dict[str, bytes] = {}
    if path.is_dir():
        for name in wanted:
            if (path / name).is_file():
                out[name] = (path / name).read_bytes()
        return out
    try:
        with tarfile.open(path, mode="r:") as tar:
            for member in tar:
                if member.name not in wanted or not member.isfile():
                    raise BundleError(f"{path}: unexpected member {member.name!r} "
                                      "(not a ProtoLens bundle)")
                if member.name in out:
                    raise BundleError(f"{path}: {member.name} appears twice")
                if member.size > MAX_MEMBER:
                    raise BundleError(f"{path}: {member.name} is too large")
                fobj = tar.extractfile(member)
                out[member.name] = fobj.read() if fobj else b""
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise BundleError(f"{path}: not a readable bundle ({exc})") from None
    return out


def _check_manifest(path: Path, manifest: Any) -> dict[str, Any]:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BundleError(f"{path}: manifest.json is not a ProtoLens bundle manifest")
    version = manifest.get("bundle_schema")
    if isinstance(version, bool) or version not in READABLE_SCHEMAS:
        raise BundleError(f"{path}: bundle schema {version!r} is not supported (this ProtoLens "
                          f"reads {', '.join(map(str, READABLE_SCHEMAS))})")
    cid = manifest.get("contributor_id")
    if not (isinstance(cid, str) and len(cid) == 32 and all(c in "0123456789abcdef"
                                                            for c in cid)):
        raise BundleError(f"{path}: manifest contributor_id must be 32 hex digits")
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or set(tables) != set(TABLES):
        raise BundleError(f"{path}: manifest must list the tables {', '.join(TABLES)}")
    return manifest


def read_bundle(path: Path, files: Mapping[str, bytes] | None = None,
                decoded: Mapping[str, Any] | None = None) -> Bundle:
    """Read and validate a bundle (.tar or directory); raise ``BundleError`` on any problem.
    Without pyarrow (the core install) ``share/bundle_lite.py`` reads and checks it alike.
    ``files``: its members, if read already (``member_files``); ``decoded``: Arrow tables already
    decoded from some of them (by member name, as ``pq.read_table`` gives them or with text
    columns dictionary-encoded, which they then keep), validated here exactly as the ones this
    reads itself."""
    if not path.exists():
        raise BundleError(f"{path}: no such file")
    if files is None:
        files = member_files(path)
    if MANIFEST not in files:
        raise BundleError(f"{path}: no manifest.json (not a ProtoLens bundle)")
    head = files[MANIFEST]
    try:
        manifest = _check_manifest(path, json.loads(head))
    except ValueError:
        raise BundleError(f"{path}: manifest.json is not valid JSON") from None
    checked: dict[str, bytes] = {}
    for name in TABLES:
        entry = manifest["tables"][name]
        fname = f"{name}.parquet"
        if not isinstance(entry, dict) or entry.get("file") != fname:
            raise BundleError(f"{path}: manifest entry for {name} must name {fname}")
        data = files.get(fname)
        if data is None:
            raise BundleError(f"{path}: {fname} is missing")
        if sha256(data) != entry.get("sha256"):
            raise BundleError(f"{path}: {fname} does not match its checksum in the manifest "
                              "(corrupt or tampered with)")
        checked[name] = data
    if not has_pyarrow():
        from protolens.share.bundle_lite import read_tables

        return Bundle(path, manifest, sha256(head), read_tables(path, manifest, checked))
    return Bundle(path, manifest, sha256(head),
                  _arrow_tables(path, manifest, checked, decoded or {}))


def _arrow_tables(path: Path, manifest: Mapping[str, Any], files: Mapping[str, bytes],
                  decoded: Mapping[str, Any]) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables: dict[str, Any] = {}
    for name in TABLES:
        entry = manifest["tables"][name]
        fname = f"{name}.parquet"
        try:
            table = decoded.get(fname)
            if table is None:
                table = pq.read_table(io.BytesIO(files[name]))
        except (pa.ArrowException, OSError) as exc:
            raise BundleError(f"{path}: {fname}: unreadable Parquet ({exc})") from None
        version = manifest["bundle_schema"]
        if not value_schema(table.schema).equals(schema_of(name, version)):
            raise BundleError(f"{path}: {fname}: columns or types differ from bundle schema "
                              f"{version}")
        if table.num_rows != entry.get("rows"):
            raise BundleError(f"{path}: {fname} has {table.num_rows} rows, the manifest says "
                              f"{entry.get('rows')!r}")
        nav_ids = plain(tables["navigations"].column("id")).combine_chunks() \
            if "navigations" in tables else None
        table = upgrade(name, table)
        check_values(path, name, table, nav_ids)
        tables[name] = table
    return tables
