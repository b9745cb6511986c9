"""The collector: an HTTPS service that takes volunteers' bundles, validates them as
``merge`` does (``share/bundle.py``), and keeps them as a Hive-partitioned Parquet dataset with a
catalog (``store/collector.py``).

Pure: ``tokens`` (token format and hashing), ``ratelimit`` (token buckets), ``layout`` (partition
paths), ``limits`` (size and decompression-bomb checks). Adapters: ``dataset`` (the atomic file
writes, verify, delete), ``ingest`` (one upload from bytes to catalog row), ``app`` (the Starlette
application), ``serve`` (uvicorn), ``client`` (the volunteer's side: upload with back-off),
``contribute`` (one contribution run), ``settings`` and ``schedule`` (the extension's switch and
the host's timer), ``publish`` (the open-data table). The SQL (catalog, DuckDB, Spark) is in
``store/``. docs/COLLECTOR.md describes the service.
"""
