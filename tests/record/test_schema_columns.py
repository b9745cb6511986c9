"""The column table (record/columns.py) against what really exists: the migrated store, the rows
ingest writes, the bundle export writes, the anonymizer's rules (issue 12, section 1)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from protolens.record import columns, parse_record
from protolens.share import export
from protolens.share.anonymize import _RULES
from protolens.share.bundle import BUNDLE_SCHEMA, SCHEMAS, TABLES
from protolens.store import ingest, open_ro, open_rw
from scripts.devkit.navrecord_builder import make_record

NOW = 1_763_812_400_000.0
ARROW = {"TEXT": pa.string(), "INTEGER": pa.int64(), "REAL": pa.float64()}


def _store(tmp: Path) -> Path:
    db = tmp / "p.db"
    conn = open_rw(db, now_ms=NOW)
    rec = make_record(7)
    rec["page"]["late_attach"] = "response"
    rec["policies"] = [{"host": "a.test", "rule": "a.test", "arm": "no-h3", "mechanism": "relay",
                        "rule_ids": ["X1"]}]
    ingest(conn, parse_record(rec), {"campaign": "c", "arm": "h2", "condition": "wifi",
                                     "repetition": 2, "page": "p", "server_cc": "cubic",
                                     "command_line": ["chromium"], "load_id": "l1"}, NOW)
    conn.close()
    return db


def test_every_migrated_table_equals_the_column_table(tmp_path: Path) -> None:
    conn = open_ro(_store(tmp_path))
    for table, cols in columns.TABLES.items():
        info = [(r[1], r[2], bool(r[3])) for r in conn.execute(f"PRAGMA table_info({table})")]
        assert info == [(c.name, c.sql, c.required) for c in cols], table


def test_every_column_has_an_export_action_with_a_rule() -> None:
    for cols in columns.TABLES.values():
        for c in cols:
            assert c.export in columns.ACTIONS, f"{c.table}.{c.name}: no export action"
            if c.export in ("pseudonymize", "coarsen"):
                assert c.how in _RULES, f"{c.table}.{c.name}: no anonymizer rule {c.how!r}"
            else:
                assert c.how == "", f"{c.table}.{c.name}: {c.export} takes no rule"
            # a column that is not dropped is in the bundle, and one that is dropped is not
            assert c.in_bundle(BUNDLE_SCHEMA) == (c.export != "drop"), c.name


def test_ingest_writes_every_record_field_where_the_table_says(tmp_path: Path) -> None:
    raw = make_record(4)
    raw["page"]["late_attach"] = "commit"
    rec = parse_record(raw)
    db = tmp_path / "p.db"
    conn = open_rw(db, now_ms=NOW)
    ingest(conn, rec, {}, NOW)
    for table, prefix, objects in (("navigations", None, [rec]),
                                   ("requests", "requests", rec.requests),
                                   ("connections", "connections", rec.connections)):
        fields = [c for c in columns.TABLES[table] if c.field]
        order = "seq" if table == "requests" else "rowid"
        rows = conn.execute(f"SELECT {', '.join(c.name for c in fields)} FROM {table} "
                            f"ORDER BY {order}").fetchall()
        assert len(rows) == len(objects)
        for row, obj in zip(rows, objects, strict=True):
            for c, stored in zip(fields, row, strict=True):
                value: Any = obj if prefix else rec
                for part in c.field.split(".")[(1 if prefix else 0):]:  # type: ignore[union-attr]
                    value = getattr(value, part)
                if c.name == "redirects":
                    value = json.dumps(list(value))
                assert stored == value, f"{table}.{c.name}"


def test_the_bundle_schema_is_the_store_without_dropped_columns(tmp_path: Path) -> None:
    db = _store(tmp_path)
    out = tmp_path / "b.tar"
    built = export.build(open_ro(db), allow=frozenset(), since_ms=None, now_ms=NOW,
                         contributor_id="ab" * 16, keep_rows=True)
    export.write(built, out, NOW)
    conn = open_ro(db)
    with tarfile.open(out) as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar}  # type: ignore[union-attr]
    for table in TABLES:
        kept = {c.name for c in columns.TABLES[table] if c.export != "drop"}
        store = [(r[1], ARROW[r[2]]) for r in conn.execute(f"PRAGMA table_info({table})")
                 if r[1] in kept]
        expected = pa.schema(store)
        assert SCHEMAS[table].equals(expected), table
        assert pq.read_table(io.BytesIO(files[f"{table}.parquet"])).schema.equals(expected)
        assert all(list(row) == expected.names for row in built.rows[table]), table
