"""Sharing data (issue 5, items 3-4): anonymized Parquet bundles (``export``), their validation
and import into a research store with provenance (``merge``), and DuckDB over the bundles
(``duck``). ``anonymize`` and ``bundle`` are pure; the rest are thin adapters. docs/RESEARCH.md
describes the bundle format.
"""
