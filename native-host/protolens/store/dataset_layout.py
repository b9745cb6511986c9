"""Where a collector's Parquet dataset lives under its data directory (pure; no DuckDB, so the
collector's server, which writes the files, does not load the engine that reads them)."""

from __future__ import annotations

from pathlib import Path

DATASET = "dataset"
"""The dataset's folder under a collector's data directory (written by ``collector/``)."""


def table_glob(data: Path, table: str) -> str:
    """The files of one table (``dataset/table=<t>/day=<d>/<bundle>-<nonce>.parquet``), for
    DuckDB's or Spark's readers."""
    return str(data / DATASET / f"table={table}" / "*" / "*.parquet")
