"""Bundles for DuckDB: the second adapter for ``compare`` (the first is SQLite). Tables of one or
more validated bundles become DuckDB views over their Parquet files (``store/duck.py``) and the
same ``COMPARE_SQL`` runs on them, so a researcher can skip ``merge`` and still get the same
numbers. The views' columns are the current bundle schema's (derived from
``record/columns.py``), whatever versions are read."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protolens.share.bundle import SCHEMAS, TABLES, member_files, read_bundle, schema_of
from protolens.store.duck import compare_over_parquet

_DUCK_TYPES = {"string": "VARCHAR", "int64": "BIGINT", "double": "DOUBLE"}


def _select(name: str, present: set[str]) -> str:
    """The current bundle columns of table ``name`` (record/columns.py): those no bundle read
    has (older bundle schemas) as typed NULLs, those export stopped sharing left out."""
    return ", ".join(f.name if f.name in present else
                     f"CAST(NULL AS {_DUCK_TYPES[str(f.type)]}) AS {f.name}"
                     for f in SCHEMAS[name])


def compare_rows(bundles: Sequence[Path], campaign: str | None = None,
                 source: str | None = None) -> list[dict[str, Any]]:
    """``store.compare.compare_rows`` over validated bundles (.tar or directories)."""
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
        views = {name: (paths, _select(name, present[name])) for name, paths in files.items()}
        return compare_over_parquet(views, campaign, source)
