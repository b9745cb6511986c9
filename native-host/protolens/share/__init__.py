"""Sharing data: anonymized Parquet bundles (``export``), their validation
and import into a research store with provenance (``merge``), and DuckDB over the bundles
(``duck``). ``anonymize`` and ``bundle`` are pure; the rest are thin adapters. docs/RESEARCH.md
describes the bundle format.
"""
