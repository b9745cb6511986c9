"""The bundle format: one uncompressed ``.tar`` holding ``manifest.json`` and one Parquet file per
table (Parquet compresses inside). Also accepted: a directory with the same files.

The manifest lists every table's file, row count and SHA-256; the bundle's checksum (its identity
for ``merge``) is the SHA-256 of ``manifest.json``'s bytes, which covers every table through
their checksums. Reading validates checksums, row counts, the Arrow schema of each table and the
value ranges of its columns; any failure is a ``BundleError`` naming the file and the problem.
"""

from __future__ import annotations

import hashlib
import io
import ipaddress
import json
import os
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

FORMAT = "protolens-bundle"
BUNDLE_SCHEMA = 2
"""Version of the bundle's tables and manifest that ``export`` writes. 2 added
``navigations.late_attach``."""
READABLE_SCHEMAS = (1, 2)
"""Versions ``merge`` reads; an older bundle's missing columns are read as nulls."""
MANIFEST = "manifest.json"
MAX_MEMBER = 4 << 30
"""Largest table file accepted (bytes)."""

_S, _I, _F = pa.string(), pa.int64(), pa.float64()
SCHEMAS: dict[str, pa.Schema] = {
    "navigations": pa.schema([
        ("id", _S), ("schema", _I), ("source", _S), ("url", _S), ("origin", _S),
        ("url_detail", _S), ("started_at_ms", _F), ("browser_name", _S),
        ("browser_version", _S), ("extension_version", _S), ("network_effective_type", _S),
        ("network_rtt_ms", _F), ("network_downlink_mbps", _F), ("warm", _I), ("redirects", _S),
        ("aborted", _I), ("error", _S), ("ttfb_ms", _F), ("fcp_ms", _F), ("lcp_ms", _F),
        ("dcl_ms", _F), ("load_ms", _F), ("first_image_ms", _F), ("failed", _I),
        ("failure", _S), ("campaign", _S), ("arm", _S), ("condition", _S),
        ("repetition", _I), ("page", _S), ("server_cc", _S), ("context", _S),
        ("ingested_at_ms", _F), ("late_attach", _S)]),
    "requests": pa.schema([
        ("navigation_id", _S), ("seq", _I), ("request_id", _S), ("url", _S), ("host", _S),
        ("resource_type", _S), ("method", _S), ("status", _I), ("mime_type", _S),
        ("protocol", _S), ("family", _S), ("connection_id", _I), ("connection_reused", _I),
        ("remote_port", _I), ("encoded_bytes", _I), ("body_bytes", _I),
        ("from_disk_cache", _I), ("from_memory_cache", _I), ("from_service_worker", _I),
        ("priority", _S), ("alternate_protocol_usage", _S), ("start_ms", _F),
        ("first_byte_ms", _F), ("end_ms", _F), ("failed", _I), ("failure", _S),
        ("is_main_document", _I)]),
    "connections": pa.schema([
        ("navigation_id", _S), ("connection_id", _I), ("upstream", _I), ("host", _S),
        ("family", _S), ("remote_port", _I), ("requests", _I), ("bytes", _I), ("share", _F),
        ("first_ms", _F), ("last_ms", _F)]),
    "hosts": pa.schema([("navigation_id", _S), ("host", _S), ("connections", _I),
                        ("families", _S)]),
}
"""Every table of a bundle, in insertion order (navigations first)."""
TABLES = tuple(SCHEMAS)
ADDED_IN = {2: {"navigations": ("late_attach",)}}
"""Columns each bundle schema version added (appended at the end of their table)."""
LATE_ATTACH = ("response", "commit")


def schema_of(name: str, version: int) -> pa.Schema:
    """The columns of table ``name`` in bundle schema ``version``."""
    schema = SCHEMAS[name]
    for v, added in ADDED_IN.items():
        if v > version:
            for col in added.get(name, ()):
                schema = schema.remove(schema.get_field_index(col))
    return schema


def upgrade(name: str, table: pa.Table) -> pa.Table:
    """A table of an older bundle schema with the newer columns added as nulls."""
    for field in SCHEMAS[name]:
        if field.name not in table.column_names:
            table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table

_BOOLS = {"navigations": ("warm", "aborted", "failed"),
          "requests": ("connection_reused", "from_disk_cache", "from_memory_cache",
                       "from_service_worker", "failed", "is_main_document"),
          "connections": ("upstream",), "hosts": ()}
_NON_NEGATIVE = {"navigations": ("ttfb_ms", "fcp_ms", "lcp_ms", "dcl_ms", "load_ms",
                                 "first_image_ms", "network_rtt_ms", "network_downlink_mbps"),
                 "requests": ("encoded_bytes", "body_bytes", "seq", "remote_port"),
                 "connections": ("requests", "bytes", "share", "remote_port"),
                 "hosts": ("connections",)}
_REQUIRED = {"navigations": ("id", "schema", "source", "url", "origin", "started_at_ms",
                             "browser_name", "browser_version", "extension_version", "warm",
                             "redirects", "aborted", "failed", "context", "ingested_at_ms"),
             "requests": ("navigation_id", "seq", "request_id", "url", "host", "resource_type",
                          "method", "encoded_bytes", "body_bytes", "start_ms", "failed",
                          "is_main_document"),
             "connections": ("navigation_id", "connection_id", "upstream", "host", "requests",
                             "bytes", "share"),
             "hosts": ("navigation_id", "host", "connections", "families")}
_EPOCH_MS = (946_684_800_000.0, 4_102_444_800_000.0)  # 2000-01-01 .. 2100-01-01


class BundleError(Exception):
    """A bundle that cannot be imported: unreadable, corrupt, tampered with, or out of range."""


@dataclass(frozen=True)
class Bundle:
    """A read and validated bundle."""

    path: Path
    manifest: dict[str, Any]
    checksum: str
    """SHA-256 of manifest.json: the bundle's identity."""
    tables: dict[str, pa.Table]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def to_table(name: str, rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows (dicts) -> an Arrow table with the bundle schema of ``name``."""
    schema = SCHEMAS[name]
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.Table.from_pydict(cols, schema=schema)


def parquet_bytes(table: pa.Table) -> bytes:
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


_HOST_COLUMNS = {"navigations": ("origin", "url"), "requests": ("host", "url"),
                 "connections": ("host",), "hosts": ("host",)}


def _ip_literal(value: str) -> bool:
    """``203.0.113.7``, ``[2001:db8::1]:443`` or ``https://10.0.0.1:8443`` names an IP."""
    host = value.split("://", 1)[-1].split("/", 1)[0]
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _check_values(path: Path, name: str, table: pa.Table, nav_ids: pa.Array | None) -> None:
    def bad(column: str, what: str) -> BundleError:
        return BundleError(f"{path}: {name}.{column}: {what}")

    if table.num_rows == 0:  # pyarrow's all() of nothing is null, not true
        return

    for col in _REQUIRED[name]:
        if table.column(col).null_count:
            raise bad(col, "missing values")
    for col in _BOOLS[name]:
        values = table.column(col).drop_null()
        if len(values) and not pc.all(pc.is_in(values, pa.array([0, 1]))).as_py():
            raise bad(col, "values other than 0 and 1")
    for col in _NON_NEGATIVE[name]:
        mm = pc.min_max(table.column(col)).as_py()
        if mm["min"] is not None and mm["min"] < 0:
            raise bad(col, f"negative value {mm['min']}")
    for col in _HOST_COLUMNS[name]:  # anonymized hosts are tokens or allowlisted names
        if any(_ip_literal(v) for v in pc.unique(table.column(col).drop_null()).to_pylist()):
            raise bad(col, "an IP address (not an anonymized bundle)")
    if "family" in table.column_names:
        fam = table.column("family").drop_null()
        if len(fam) and not pc.all(pc.is_in(fam, pa.array(["h1", "h2", "h3"]))).as_py():
            raise bad("family", "values other than h1, h2, h3")
    if name == "connections":
        mm = pc.min_max(table.column("share")).as_py()
        if mm["max"] is not None and mm["max"] > 1:
            raise bad("share", f"value {mm['max']} above 1")
    if name == "navigations":
        ids = table.column("id")
        if pc.count_distinct(ids).as_py() != len(ids):
            raise bad("id", "duplicate ids")
        if not pc.all(pc.is_in(table.column("source"),
                               pa.array(["passive", "lab", "experiment"]))).as_py():
            raise bad("source", "values other than passive, lab, experiment")
        if not pc.all(pc.equal(table.column("url_detail"), "origin")).as_py() or \
                not pc.all(pc.equal(table.column("url"), table.column("origin"))).as_py():
            raise bad("url", "not reduced to the origin (not an anonymized bundle)")
        late = table.column("late_attach").drop_null()
        if len(late) and not pc.all(pc.is_in(late, pa.array(LATE_ATTACH))).as_py():
            raise bad("late_attach", f"values other than {', '.join(LATE_ATTACH)}")
        for col in ("started_at_ms", "ingested_at_ms"):
            mm = pc.min_max(table.column(col)).as_py()
            if mm["min"] is not None and not (_EPOCH_MS[0] <= mm["min"] and
                                              mm["max"] <= _EPOCH_MS[1]):
                raise bad(col, "outside the years 2000-2100")
    elif nav_ids is not None and \
            not pc.all(pc.is_in(table.column("navigation_id"), nav_ids)).as_py():
        raise bad("navigation_id", "refers to a navigation not in the bundle")


def read_bundle(path: Path) -> Bundle:
    """Read and validate a bundle (.tar or directory); raise ``BundleError`` on any problem."""
    if not path.exists():
        raise BundleError(f"{path}: no such file")
    files = member_files(path)
    if MANIFEST not in files:
        raise BundleError(f"{path}: no manifest.json (not a ProtoLens bundle)")
    head = files[MANIFEST]
    try:
        manifest = _check_manifest(path, json.loads(head))
    except ValueError:
        raise BundleError(f"{path}: manifest.json is not valid JSON") from None
    tables: dict[str, pa.Table] = {}
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
        try:
            table = pq.read_table(io.BytesIO(data))
        except (pa.ArrowException, OSError) as exc:
            raise BundleError(f"{path}: {fname}: unreadable Parquet ({exc})") from None
        version = manifest["bundle_schema"]
        if not table.schema.equals(schema_of(name, version)):
            raise BundleError(f"{path}: {fname}: columns or types differ from bundle schema "
                              f"{version}")
        if table.num_rows != entry.get("rows"):
            raise BundleError(f"{path}: {fname} has {table.num_rows} rows, the manifest says "
                              f"{entry.get('rows')!r}")
        nav_ids = tables["navigations"].column("id").combine_chunks() \
            if "navigations" in tables else None
        table = upgrade(name, table)
        _check_values(path, name, table, nav_ids)
        tables[name] = table
    return Bundle(path, manifest, sha256(head), tables)
