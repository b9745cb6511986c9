"""Bundles without pyarrow (the core install): ``share/parquet_lite.py`` writes Parquet that
pyarrow and DuckDB read as the bundle schema, and ``share/bundle_lite.py`` checks a bundle with
the same answers as the pyarrow reader, defect by defect. pyarrow is made absent the way a core
install lacks it: ``bundle.has_pyarrow`` answering False in-process, and a subprocess in which
``import pyarrow`` fails."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from protolens.collector.limits import Limits, check_members
from protolens.share import bundle, export, parquet_lite
from protolens.share.bundle import (
    TABLES,
    BundleError,
    make_manifest,
    member_files,
    read_bundle,
    write_tar,
)
from protolens.store import open_ro
from scripts.devkit.collector import small_store

ROOT = Path(__file__).resolve().parents[2]
SALT = b"s" * 32


def test_parquet_lite_is_read_by_pyarrow_and_duckdb_as_written(tmp_path: Path) -> None:
    schema = [("id", "string"), ("n", "int64"), ("x", "float64")]
    batches = [{"id": ["a", None, "ééé"], "n": [1, None, -(2 ** 62)], "x": [0.5, None, 1e300]},
               {"id": [None] * 20, "n": list(range(20)), "x": [None] * 20}]
    data = parquet_lite.write(schema, batches)
    assert data == parquet_lite.write(schema, batches)  # deterministic bytes
    table = pq.read_table(io.BytesIO(data))
    assert table.schema.equals(pa.schema([("id", pa.string()), ("n", pa.int64()),
                                          ("x", pa.float64())]))
    want = {k: batches[0][k] + batches[1][k] for k, _ in schema}
    assert table.to_pydict() == want
    assert parquet_lite.read(data) == (schema, want)
    (tmp_path / "t.parquet").write_bytes(data)
    got = duckdb.sql(f"SELECT count(*), count(id), sum(n) FROM '{tmp_path / 't.parquet'}'")
    assert got.fetchall() == [(23, 2, 1 - 2 ** 62 + sum(range(20)))]
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    with pytest.raises(parquet_lite.ParquetError, match="compression codec"):
        parquet_lite.read(buf.getvalue())


def _built(db: Path, lite: bool, monkeypatch: pytest.MonkeyPatch) -> export.Built:
    with monkeypatch.context() as m:
        if lite:
            m.setattr(bundle, "has_pyarrow", lambda: False)
            m.setattr(export, "has_pyarrow", lambda: False)
        conn = open_ro(db)
        try:
            return export.build(conn, allow=frozenset({"a.test"}), since_ms=None,
                                now_ms=1.7639e12, contributor_id="ab" * 16, salt=SALT,
                                keep_rows=True)
        finally:
            conn.close()


def test_a_bundle_written_without_pyarrow_holds_the_same_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = small_store(tmp_path / "s.db", n=8)
    arrow, lite = _built(db, False, monkeypatch), _built(db, True, monkeypatch)
    assert arrow.rows == lite.rows and arrow.manifest["tables"].keys() == set(TABLES)
    for name in TABLES:
        a = pq.read_table(io.BytesIO(arrow.files[name]))
        b = pq.read_table(io.BytesIO(lite.files[name]))
        assert b.schema.equals(a.schema) and b.to_pylist() == a.to_pylist(), name
    export.write(lite, tmp_path / "lite.tar", 1.7639e12)
    assert read_bundle(tmp_path / "lite.tar").tables["navigations"].num_rows == 8
    with monkeypatch.context() as m:
        m.setattr(bundle, "has_pyarrow", lambda: False)
        tables = read_bundle(tmp_path / "lite.tar").tables
    assert tables["navigations"]["id"] == pq.read_table(
        io.BytesIO(arrow.files["navigations"])).column("id").to_pylist()


def test_export_and_check_in_a_python_without_pyarrow(tmp_path: Path) -> None:
    db = small_store(tmp_path / "s.db", n=4)
    out = tmp_path / "b.tar"
    code = f"""
import sys
sys.modules["pyarrow"] = None  # import pyarrow now fails, as in a core install
from pathlib import Path
from protolens.share import export
from protolens.share.bundle import read_bundle
from protolens.store import open_ro
built = export.build(open_ro(Path({str(db)!r})), allow=frozenset(), since_ms=None,
                     now_ms=1.7639e12, contributor_id="cd" * 16)
export.write(built, Path({str(out)!r}), 1.7639e12)
print(len(read_bundle(Path({str(out)!r})).tables["requests"]["request_id"]))
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "16"  # 4 loads x 4 requests
    assert read_bundle(out).tables["requests"].num_rows == 16  # and pyarrow reads it too


Change = Callable[[dict[str, list[dict[str, Any]]]], None]


def _set(table: str, column: str, value: Any, row: int = 0) -> Change:
    def change(rows: dict[str, list[dict[str, Any]]]) -> None:
        rows[table][row][column] = value
    return change


DEFECTS: dict[str, Change] = {
    "flag": _set("navigations", "failed", 2),
    "path": _set("navigations", "url", "https://a.test/secret"),
    "negative": _set("requests", "encoded_bytes", -5),
    "missing": _set("navigations", "source", None),
    "long": _set("requests", "mime_type", "a" * 400),
    "infinite": _set("navigations", "load_ms", float("inf")),
    "ip": _set("hosts", "host", "10.0.0.1"),
    "orphan": _set("requests", "navigation_id", "00000000-0000-4000-8000-000000000000"),
    "enum": _set("navigations", "source", "satellite"),
}


@pytest.mark.parametrize("defect", sorted([*DEFECTS, "shares", "duplicate"]))
def test_both_readers_refuse_each_defect_with_the_same_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, defect: str) -> None:
    db = small_store(tmp_path / "s.db", n=4)
    rows = {k: [dict(r) for r in v] for k, v in _built(db, False, monkeypatch).rows.items()}
    if defect == "shares":
        for r in rows["connections"]:
            r["share"] = 0.9
    elif defect == "duplicate":
        rows["navigations"][1]["id"] = rows["navigations"][0]["id"]
    else:
        DEFECTS[defect](rows)
    messages = []
    for lite in (False, True, None):  # None: the collector's path, text kept in dictionaries
        files = {}
        for t in TABLES:
            schema = bundle.lite_schema(t)
            cols = {n: [r.get(n) for r in rows[t]] for n, _ in schema}
            files[t] = parquet_lite.write(schema, [cols]) if lite else bundle.parquet_bytes(
                pa.Table.from_pydict(cols, schema=bundle.schema_of(t)))
        manifest = make_manifest(files, {t: len(rows[t]) for t in TABLES},
                                 {"contributor_id": "ab" * 16})
        out = tmp_path / f"{defect}-{lite}.tar"
        write_tar(out, manifest, files, mtime=0)
        with monkeypatch.context() as m:
            m.setattr(bundle, "has_pyarrow", lambda lite=lite: not lite)
            with pytest.raises(BundleError) as err:
                if lite is None:
                    members = member_files(out)
                    decoded = check_members(members, Limits())
                    assert any(pa.types.is_dictionary(f.type)
                               for t in decoded.values() for f in t.schema)
                    read_bundle(out, members, decoded)
                else:
                    read_bundle(out)
        messages.append(str(err.value).split(": ", 1)[1])
    assert messages[0] == messages[1] == messages[2], messages
    assert json.dumps(messages[0])  # one line of text
