"""DuckDB over bundles: the second adapter for ``compare`` (the first is SQLite). Tables of one
or more bundles become DuckDB views over their Parquet files and the same ``COMPARE_SQL`` runs on
them, so a researcher can skip ``merge`` and still get the same numbers."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from protolens.share.bundle import TABLES, member_files, read_bundle
from protolens.store.research import COMPARE_SQL, compare_where


def compare_rows(bundles: Sequence[Path], campaign: str | None = None,
                 source: str | None = None) -> list[dict[str, Any]]:
    """``store.research.compare_rows`` over validated bundles (.tar or directories)."""
    with tempfile.TemporaryDirectory(prefix="protolens-duck-") as tmp:
        files: dict[str, list[str]] = {name: [] for name in TABLES}
        for i, path in enumerate(bundles):
            read_bundle(path)  # validate first
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
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet([{listing}], "
                            "union_by_name = true)")
            where, params = compare_where(campaign, source)
            cur = con.execute(COMPARE_SQL + where + " ORDER BY n.id", params)
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        finally:
            con.close()
