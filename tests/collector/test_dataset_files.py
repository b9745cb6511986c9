"""What the collector writes into its dataset: every table of the bundle, row for row and value
for value, plus the two extra columns, as plain Parquet text that pyarrow and DuckDB read as
strings. The collector decodes uploads with their text still in dictionaries
(``limits.check_members``) and writes them as they are (``dataset._encode``): the files must be
the same tables as the bundle read the ordinary way (``pq.read_table``)."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from protolens.collector.layout import CATALOG, dataset_dir
from protolens.share.bundle import TABLES, read_bundle
from protolens.store.collector import all_bundles, open_catalog
from scripts.devkit.collector import small_store
from tests.collector.dataset_builder import contribute


def test_dataset_files_hold_the_bundle_as_plain_text(tmp_path: Path) -> None:
    data, db = tmp_path / "data", small_store(tmp_path / "s.db", n=5)
    contribute(data, db, "vol-1")  # export, then the collector's own accept
    plain = read_bundle(db.with_suffix(".tar"))  # pq.read_table: no dictionaries
    conn = open_catalog(data / CATALOG, time.time() * 1000)
    try:
        (stored,) = all_bundles(conn)
    finally:
        conn.close()
    assert sorted(f.table for f in stored.files) == sorted(TABLES)
    for f in stored.files:
        path = dataset_dir(data) / f.path
        got = pq.read_table(path)
        assert not any(pa.types.is_dictionary(t) for t in got.schema.types), f.table
        want = plain.tables[f.table]
        n = want.num_rows
        assert n > 0 and f.rows == n
        want = want.append_column("contributor", pa.array(["vol-1"] * n)).append_column(
            "bundle", pa.array([plain.checksum] * n))
        assert got.equals(want), f.table
        types = dict((r[0], r[1]) for r in duckdb.sql(
            f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall())
        texts = [c.name for c in want.schema if pa.types.is_string(c.type)]
        assert "contributor" in texts and len(texts) > 2
        assert {types[c] for c in texts} == {"VARCHAR"}, f.table
