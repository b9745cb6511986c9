"""A small Parquet writer and reader in pure Python (pure: bytes in, bytes out), so the core
install (recording, ``export``, ``contribute``) writes and checks its bundles without pyarrow,
which alone weighs 160 MB installed. The extras read bundles with pyarrow; what this writes is
plain Parquet that pyarrow, DuckDB and Spark read.

The subset (Apache Parquet format, parquet.thrift and Encodings.md): a flat schema of OPTIONAL
``INT64``, ``DOUBLE`` and ``BYTE_ARRAY`` (annotated ``STRING``) columns; one data page (v1) per
column chunk; definition levels in the RLE/bit-packed hybrid at bit width 1 with a 4-byte length
prefix; values PLAIN; pages GZIP-compressed (``gzip``, mtime 0: the same rows give the same
bytes) or uncompressed. The reader reads that subset (RLE and bit-packed level runs alike) and
says which feature it lacks for anything else (``ParquetError``). Metadata uses Thrift's compact
protocol (thrift/doc/specs/thrift-compact-protocol.md).
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Mapping, Sequence
from typing import Any

MAGIC = b"PAR1"
INT64, DOUBLE, BYTE_ARRAY = 2, 5, 6
TYPES = {"int64": INT64, "float64": DOUBLE, "string": BYTE_ARRAY}
"""Arrow type names of ``record/columns.py`` -> Parquet physical types."""
OPTIONAL, PLAIN, RLE, DATA_PAGE = 1, 0, 3, 0
UNCOMPRESSED, GZIP = 0, 2
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12


class ParquetError(ValueError):
    """Bytes this reader cannot read, in one line."""


# --- Thrift compact protocol ---------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


Field = tuple[int, int, Any]
"""(field id, compact type, value): a value is an int, bytes, a list ``(elem type, items)`` or a
struct (a list of fields)."""


def _struct(fields: Sequence[Field]) -> bytes:
    out = bytearray()
    last = 0
    for fid, ftype, value in fields:
        delta = fid - last
        out += bytes([(delta << 4) | ftype]) if 0 < delta <= 15 else \
            bytes([ftype]) + _varint(_zigzag(fid))
        out += _value(ftype, value)
        last = fid
    out.append(0)
    return bytes(out)


def _value(ftype: int, value: Any) -> bytes:
    if ftype in (_I32, _I64):
        return _varint(_zigzag(int(value)))
    if ftype == _BINARY:
        data = value.encode() if isinstance(value, str) else bytes(value)
        return _varint(len(data)) + data
    if ftype == _STRUCT:
        return _struct(value)
    if ftype == _LIST:
        etype, items = value
        head = bytes([(len(items) << 4) | etype]) if len(items) < 15 else \
            bytes([0xF0 | etype]) + _varint(len(items))
        return head + b"".join(_value(etype, i) for i in items)
    raise ParquetError(f"thrift type {ftype} not written here")


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ParquetError("metadata ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = n = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7
            if shift > 70:
                raise ParquetError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, ftype: int) -> Any:
        if ftype in (1, 2):
            return ftype == 1
        if ftype == 3:
            return self.byte()
        if ftype in (4, _I32, _I64):
            return self.zigzag()
        if ftype == 7:
            self.pos += 8
            return struct.unpack_from("<d", self.data, self.pos - 8)[0]
        if ftype == _BINARY:
            n = self.varint()
            self.pos += n
            return self.data[self.pos - n:self.pos]
        if ftype in (_LIST, 10):
            head = self.byte()
            size, etype = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            return [self.value(etype) for _ in range(size)]
        if ftype == _STRUCT:
            return self.struct()
        raise ParquetError(f"thrift type {ftype} not read here")

    def struct(self) -> dict[int, Any]:
        out: dict[int, Any] = {}
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return out
            delta, ftype = head >> 4, head & 0x0F
            fid = last + delta if delta else self.zigzag()
            out[fid] = self.value(ftype)
            last = fid


# --- writing -------------------------------------------------------------------------------


def _levels(defined: Sequence[bool]) -> bytes:
    """Definition levels (1 = a value, 0 = null) as RLE runs at bit width 1, length-prefixed."""
    out = bytearray()
    i = 0
    while i < len(defined):
        j = i
        while j < len(defined) and defined[j] == defined[i]:
            j += 1
        out += _varint((j - i) << 1) + bytes([1 if defined[i] else 0])
        i = j
    return struct.pack("<I", len(out)) + bytes(out)


def _plain(ptype: int, values: Sequence[Any]) -> bytes:
    if ptype == INT64:
        return struct.pack(f"<{len(values)}q", *values)
    if ptype == DOUBLE:
        return struct.pack(f"<{len(values)}d", *values)
    out = bytearray()
    for v in values:
        data = v.encode()
        out += struct.pack("<I", len(data)) + data
    return bytes(out)


def write(schema: Sequence[tuple[str, str]], batches: Sequence[Mapping[str, Sequence[Any]]],
          compress: bool = True) -> bytes:
    """Parquet bytes of ``schema`` ((name, arrow type) pairs) with one row group per batch (a
    mapping of column name -> values, None for null)."""
    body = bytearray(MAGIC)
    groups = []
    total_rows = 0
    for batch in batches:
        rows = len(batch[schema[0][0]]) if schema else 0
        chunks = []
        size = 0
        for name, arrow in schema:
            ptype = TYPES[arrow]
            values = batch[name]
            if len(values) != rows:
                raise ParquetError(f"column {name}: {len(values)} values for {rows} rows")
            page = _levels([v is not None for v in values]) + _plain(
                ptype, [v for v in values if v is not None])
            packed = gzip.compress(page, mtime=0) if compress else page
            header = _struct([(1, _I32, DATA_PAGE), (2, _I32, len(page)),
                              (3, _I32, len(packed)),
                              (5, _STRUCT, [(1, _I32, rows), (2, _I32, PLAIN), (3, _I32, RLE),
                                            (4, _I32, RLE)])])
            offset = len(body)
            body += header + packed
            meta = [(1, _I32, ptype), (2, _LIST, (_I32, [PLAIN, RLE])),
                    (3, _LIST, (_BINARY, [name])), (4, _I32, GZIP if compress else UNCOMPRESSED),
                    (5, _I64, rows), (6, _I64, len(header) + len(page)),
                    (7, _I64, len(header) + len(packed)), (9, _I64, offset)]
            chunks.append([(2, _I64, offset), (3, _STRUCT, meta)])
            size += len(header) + len(page)
        groups.append([(1, _LIST, (_STRUCT, chunks)), (2, _I64, size), (3, _I64, rows)])
        total_rows += rows
    elements = [[(4, _BINARY, "schema"), (5, _I32, len(schema))]]
    for name, arrow in schema:
        element = [(1, _I32, TYPES[arrow]), (3, _I32, OPTIONAL), (4, _BINARY, name)]
        if arrow == "string":  # ConvertedType UTF8 and LogicalType STRING
            element += [(6, _I32, 0), (10, _STRUCT, [(1, _STRUCT, [])])]
        elements.append(element)
    footer = _struct([(1, _I32, 1), (2, _LIST, (_STRUCT, elements)), (3, _I64, total_rows),
                      (4, _LIST, (_STRUCT, groups)), (6, _BINARY, "protolens parquet_lite")])
    return bytes(body + footer + struct.pack("<I", len(footer)) + MAGIC)


# --- reading -------------------------------------------------------------------------------


def _read_levels(data: bytes, pos: int, count: int) -> tuple[list[bool], int]:
    (length,) = struct.unpack_from("<I", data, pos)
    r = _Reader(data[pos + 4:pos + 4 + length])
    out: list[bool] = []
    while len(out) < count:
        head = r.varint()
        if head & 1:  # bit-packed: (head >> 1) groups of 8 values, LSB first
            for _ in range(head >> 1):
                b = r.byte()
                out += [bool(b >> k & 1) for k in range(8)]
        else:
            out += [bool(r.byte())] * (head >> 1)
    return out[:count], pos + 4 + length


def _read_plain(ptype: int, data: bytes, pos: int, count: int) -> list[Any]:
    if ptype == INT64:
        return list(struct.unpack_from(f"<{count}q", data, pos))
    if ptype == DOUBLE:
        return list(struct.unpack_from(f"<{count}d", data, pos))
    out = []
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, pos)
        out.append(data[pos + 4:pos + 4 + n].decode())
        pos += 4 + n
    return out


def read(data: bytes) -> tuple[list[tuple[str, str]], dict[str, list[Any]]]:
    """(schema as (name, arrow type) pairs, columns) of Parquet bytes in the subset above."""
    if len(data) < 12 or data[:4] != MAGIC or data[-4:] != MAGIC:
        raise ParquetError("not a Parquet file")
    (length,) = struct.unpack_from("<I", data, len(data) - 8)
    meta = _Reader(data[len(data) - 8 - length:len(data) - 8]).struct()
    arrow_of = {v: k for k, v in TYPES.items()}
    schema = []
    for element in meta.get(2, [])[1:]:
        if element.get(5) or element.get(1) not in arrow_of:
            raise ParquetError("nested columns or a physical type other than INT64, DOUBLE, "
                               "BYTE_ARRAY")
        schema.append((element[4].decode(), arrow_of[element[1]]))
    columns: dict[str, list[Any]] = {name: [] for name, _ in schema}
    for group in meta.get(4, []):
        for chunk, (name, arrow) in zip(group[1], schema, strict=True):
            cm = chunk[3]
            codec, remaining, pos = cm[4], cm[5], cm[9]
            if codec not in (UNCOMPRESSED, GZIP):
                raise ParquetError(f"column {name}: compression codec {codec} not read here "
                                   "(install protolens[research] to read any Parquet)")
            while remaining > 0:
                r = _Reader(data, pos)
                header = r.struct()
                if header.get(1) != DATA_PAGE or header[5].get(2) != PLAIN:
                    raise ParquetError(f"column {name}: a page other than a PLAIN data page v1")
                page = data[r.pos:r.pos + header[3]]
                pos = r.pos + header[3]
                if codec == GZIP:
                    page = gzip.decompress(page)
                n = header[5][1]
                defined, at = _read_levels(page, 0, n)
                values = iter(_read_plain(TYPES[arrow], page, at, sum(defined)))
                columns[name] += [next(values) if d else None for d in defined]
                remaining -= n
    return schema, columns
