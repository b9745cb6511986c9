"""DuckDB over bundles: the second adapter for ``compare`` (the first is SQLite). Tables of one
or more bundles become DuckDB views over their Parquet files and the same ``COMPARE_SQL`` runs on
them, so a researcher can skip ``merge`` and still get the same numbers. The views' columns are
the current bundle schema's (derived from ``record/columns.py``), whatever versions are read."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from protolens.share.bundle import SCHEMAS, TABLES, member_files, read_bundle, schema_of
from protolens.store.research import COMPARE_SQL, compare_where

_DUCK_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "double": "DOUBLE"}


def _select(name: str, present: set[str]) -> str:
    """The current bundle columns of table ``name`` (record/columns.py): those no bundle read
    has (older bundle schemas) as typed NULLs, those export stopped sharing left out."""
    return ", ".join(f.name if f.name in present else
                     f"CAST(NULL AS {_DUCK_TYPES[str(f.type)]}) AS {f.name}"
                     for f in SCHEMAS[name])


def compare_rows(bundles: Sequence[Path], campaign: str | None = None,
                 source: str | None = None) -> list[dict[str, Any]]:
    """``store.research.compare_rows`` over validated bundles (.tar or directories)."""
    with tempfile.TemporaryDirectory(prefix="protolens-duck-") as tmp:
        files: dict[str, list[str]] = {name: [] for name in TABLES}
        present: dict[str, set[str]] = {name: set() for name in TABLES}
        for i, path in enumerate(bundles):
            bundle = read_bundle(path)  # validate first
            for name in TABLES:
                present[name].update(schema_of(name, bundle.manifest["bundle_schema"]).names)
            if path.is_dir():
                for name in TABLES:
                    files[name].append(str(path / f"{name}.parquet"))
                continue
            members = member_files(path)  # the tar's Parquet files, unchanged, for DuckDB
            for name in TABLES:
                target = Path(tmp) / f"{i}-{name}.parquet"
                target.write_bytes(members[f"{name}.parquet"])
                files[name].append(str(target))
        con = duckdb.connect()
        try:
            for name, paths in files.items():
                listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
                con.execute(f"CREATE VIEW {name} AS SELECT {_select(name, present[name])} "
                            f"FROM read_parquet([{listing}], union_by_name = true)")
            where, params = compare_where(campaign, source)
            cur = con.execute(COMPARE_SQL + where + " ORDER BY n.id", params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        finally:
            con.close()
