"""Statistics over stored page loads (pure): ``compare`` turns observation rows into per-cell, per-
pair comparisons with bootstrap confidence intervals and Mann-Whitney U tests.

Adapters that produce the rows live in ``store/compare.py`` (SQLite) and ``share/duck.py`` and
``store/duck.py`` (DuckDB over Parquet bundles).
"""
